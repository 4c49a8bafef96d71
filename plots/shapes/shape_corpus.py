"""The shape corpus (plots/shape_corpus.csv): reading it, with one-line errors that name the file and
the line, the plain shape list the step executables and the peers read (--shapes FILE), and the tile
and wave arithmetic that the charts mark. Standard library only.

The corpus is a CSV a person edits: after comment lines ('#') and blank lines, the header
`category,m,n,k,label`, then one shape a line. The category is a lower-case word (square, skinny,
llm, unaligned, conv, square_off_grid, small, gemv_dot are the ones the tables name, CATEGORY_NAMES;
the charts draw square and llm; any other is tabulated under its own name); the label is optional
(an llm row's label names its layer: one row of the heat map; a conv row's, its network's layer).
"""
import csv
import math
import re
from dataclasses import dataclass
from pathlib import Path

from report.results_csv import InputError

CORPUS = Path(__file__).resolve().parents[1] / "shape_corpus.csv"
HEADER = ("category", "m", "n", "k", "label")
CATEGORY = re.compile(r"^[a-z][a-z0-9_]*$")
INT_MAX = 2 ** 31 - 1  # what the step executables accept for --m, --n, --k
# How the tables name the categories they know; another category is shown as written.
CATEGORY_NAMES = {"square": "squares", "skinny": "skinny, long K", "llm": "LLM layers", "unaligned": "unaligned",
                  "conv": "convolutions as GEMMs", "square_off_grid": "squares off the 128 grid",
                  "small": "small, sides ≤ 512", "gemv_dot": "GEMV and dot", "inline": "given on the command line"}
# The category of the shapes that run_worklog.py --shapes takes inline (1x4096x4096,4097x4097x4097):
# they come from no corpus, so they have no category of their own.
INLINE_CATEGORY = "inline"
SHAPE = re.compile(r"([0-9]+)x([0-9]+)x([0-9]+)")

# The unit of work that each step schedules, for the wave marks of the square chart: a tile of C of
# tile_m × tile_n that one scheduling unit computes, and how many such units run at once per SM.
# From the steps' kernel.cu: 04 runs two 128×128 blocks per SM; 08 and 09 one 128×256 block per SM;
# 10 one block per SM too, but paired into clusters that take a 256×256 tile each (half a unit per SM).
WAVE_TILES = {
    "04_outer_product": (128, 128, 2),
    "08_mma_ldmatrix": (128, 256, 1),
    "09_wgmma_tma": (128, 256, 1),
    "10_persistent_clusters": (256, 256, 0.5),
}


@dataclass(frozen=True)
class Entry:
    """One line of the corpus."""
    category: str
    m: int
    n: int
    k: int
    label: str
    line: int

    @property
    def shape(self):
        return self.m, self.n, self.k


def parse(text, name):
    """The entries of corpus text; `name` names it in the errors ("<name>:<line>: …")."""
    entries, seen, header_seen = [], {}, False
    for number, line in enumerate(text.splitlines(), 1):
        where = f"{name}:{number}"
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = [field.strip() for field in next(csv.reader([line]))]
        if not header_seen:
            if tuple(fields) != HEADER:
                raise InputError(f"{where}: expected the header line '{','.join(HEADER)}', got {line.strip()!r}")
            header_seen = True
            continue
        if len(fields) == 4:
            fields.append("")
        if len(fields) != 5:
            raise InputError(f"{where}: expected 5 fields ({','.join(HEADER)}; the label may be empty), "
                             f"got {len(fields)}")
        category, label = fields[0], fields[4]
        if not CATEGORY.match(category):
            raise InputError(f"{where}: the category must be a lower-case word (a-z, 0-9, _), got {category!r}")
        sizes = []
        for column, text_value in zip("mnk", fields[1:4]):
            if not re.fullmatch(r"[0-9]+", text_value):
                raise InputError(f"{where}: {column} must be a positive integer, got {text_value!r}")
            value = int(text_value)
            if not 1 <= value <= INT_MAX:
                raise InputError(f"{where}: {column} must be between 1 and {INT_MAX}, got {value}")
            sizes.append(value)
        key = (category, *sizes, label)
        if key in seen:
            raise InputError(f"{where}: repeats line {seen[key]} ({category} {'x'.join(map(str, sizes))})")
        seen[key] = number
        entries.append(Entry(category, *sizes, label, number))
    if not header_seen:
        raise InputError(f"{name}: empty corpus (no header line '{','.join(HEADER)}')")
    if not entries:
        raise InputError(f"{name}: no shapes listed")
    return entries


def load(path=CORPUS):
    """The entries of the corpus file at path (InputError for an unreadable or malformed one)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"{path}: cannot read: {e}") from None
    return parse(text, str(path))


def is_inline_list(text):
    """Whether a --shapes value is a list of shapes rather than a file: it starts with a number and
    an 'x' and names no folder. A file whose name starts so is read as ./NAME."""
    return "/" not in text and re.match(r"\s*[0-9]+\s*x", text) is not None


def parse_inline(text):
    """The entries of an inline list of shapes, "MxNxK,MxNxK,...", each under INLINE_CATEGORY with
    its place in the list as its line. Raises InputError naming the item that is not a shape or
    repeats one."""
    entries, seen = [], {}
    for number, item in enumerate(text.split(","), 1):
        item = item.strip()
        match = SHAPE.fullmatch(item)
        if not match or not all(1 <= int(v) <= INT_MAX for v in match.groups()):
            raise InputError(f"shape {number} of the list, {item!r}: expected MxNxK, three integers from 1 to "
                             f"{INT_MAX} (a file whose name starts with a number: ./NAME)")
        shape = tuple(int(v) for v in match.groups())
        if shape in seen:
            raise InputError(f"shape {number} of the list repeats shape {seen[shape]} ({item})")
        seen[shape] = number
        entries.append(Entry(INLINE_CATEGORY, *shape, "", number))
    return entries


def unique_shapes(entries):
    """Each (m, n, k) once, in the order of first appearance: what is measured."""
    return list(dict.fromkeys(entry.shape for entry in entries))


def shape_text(shape):
    return "x".join(map(str, shape))


def shape_list_text(shapes):
    """The list that `--shapes FILE` reads (step executables and peers.py): one MxNxK a line."""
    return "# written by plots/run/run_worklog.py from the shape corpus\n" + "".join(f"{shape_text(s)}\n" for s in shapes)


def parse_shape_list(text, name):
    """The shapes of a --shapes file, as the step executables read it (common/cli.cpp): one MxNxK a
    line, text after '#' ignored. Raises InputError, "<name>:<line>: …"."""
    shapes = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        match = SHAPE.fullmatch(line)
        if not match or not all(1 <= int(v) <= INT_MAX for v in match.groups()):
            raise InputError(f"{name}:{number}: expected MxNxK, three positive integers (got {line!r})")
        shapes.append(tuple(int(v) for v in match.groups()))
    if not shapes:
        raise InputError(f"{name}: no shapes listed")
    return shapes


def tiles(m, n, tile_m, tile_n):
    return math.ceil(m / tile_m) * math.ceil(n / tile_n)


def waves(m, n, tile, sm_count):
    """How many rounds of the GPU's scheduling units a grid of this step's tiles takes (WAVE_TILES:
    (tile_m, tile_n, units per SM)); 2.2 means two full rounds and a fifth of a third."""
    tile_m, tile_n, per_sm = tile
    return tiles(m, n, tile_m, tile_n) / (sm_count * per_sm)


def wave_starts(low, high, tile, sm_count):
    """The square sizes N in [low, high] at which an N×N C needs one more round than N − 1 does:
    [(N, rounds from N on)], the wave boundaries the square chart marks."""
    starts, previous = [], math.ceil(waves(low - 1, low - 1, tile, sm_count)) if low > 1 else 0
    for n in range(low, high + 1):
        rounds = math.ceil(waves(n, n, tile, sm_count))
        if rounds > previous:
            starts.append((n, rounds))
        previous = rounds
    return starts
