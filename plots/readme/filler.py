#!/usr/bin/env python3
"""The measured figures of README.md, the steps' READMEs (and pages beside them) and docs/*.md,
written from the committed results CSVs of plots/results.

    python3 plots/readme/filler.py [--results plots/results] [--root DIR] [--bin-dir DIR] --check | --write [FILE...]

A table is a generated block: two marker lines, the filler's text between them.

    <!-- BEGIN generated: NAME [KEY=VALUE...] -->
    <!-- written by plots/readme/filler.py from plots/results/X.csv; do not edit -->
    (the table)
    <!-- END generated: NAME -->

NAME is a table of readme/tables.py, alone (`sweep`) or with its argument (`measured/04_outer_product`);
a table with choices takes them as KEY=VALUE words after NAME (no spaces in a VALUE; lists joined by
commas), so a step's choices live in its own README. A table spec names a CSV (or a view of
readme/views.py), the rows, the columns, their headers and formats, and the caption
(readme/table.py); a new table is a new spec, no code. A number that prose keeps is a cell, on one
line and never at the start of one (a line that starts with an HTML comment ends a paragraph):

    ... at <!-- cell: sweep.csv step=04_outer_product n=2049 column=pct_cublas format=.1f -->59.5<!-- /cell -->%

After `cell:` come the CSV (in the results folder), then KEY=VALUE words: column= the column (or a
quantity of readme/formats.py's DERIVED) to quote, required; agg= min, max, median, geomean
(geometric mean), range ("a–b"), list ("a, b") or one (the text every row has: a card, a day)
when the selectors match several rows; scale= a
divisor applied first; format= a Python format spec (`.1f`) or a name of formats.FORMATS (default
auto). Every other KEY=VALUE selects rows by that column: as a number when both are numbers, else
as text; `a|b` either, an empty VALUE an empty cell. Without agg= the selectors must match one row.
A ratio of two rows: over.KEY=VALUE words select the row that divides (the other selectors kept,
those named replaced), so that `column=l2_bytes step=06_multiwarp_wmma over.step=05_wmma format=.1f`
is 06's L2 bytes over 05's; both sides one row each.
A block `excerpt/NAME file=PATH` quotes code: the lines of PATH (relative to the README, as a link
is) between `// EXCERPT BEGIN NAME` and `// EXCERPT END NAME`, dedented, its LAB markers left out, in
a fenced block under a link to the file and the lines' numbers, so that a lesson shows its code and
the code cannot drift from it. --write fills blocks and cells, --check says which differ. What a step registers (what it adds, its
variants' descriptions) is asked of its built executable (`--list-variants`; --bin-dir, default
$WORKLOG_BIN_DIR or build/bin).

Exit codes (common/exit_codes.hpp, through common/exit_codes.py): 0 exit_ok, every block and cell is
current (--check) or written (--write); 1 exit_check_failed, --check found some that differ; 2
exit_bad_argument, a marker or cell that cannot be read, an unknown table, a missing CSV or row
(nothing written), or bad arguments. Needs only the Python standard library.
"""
import argparse
import difflib
import re
import sys
import textwrap
from collections import namedtuple
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parents[2] / "common")]
import exit_codes  # noqa: E402  (common/exit_codes.py: the codes of common/exit_codes.hpp)
from readme import codes, table, views  # noqa: E402
from readme.formats import Missing, select, value_of  # noqa: E402
from readme.results import CHECKOUT, RESULTS, Results  # noqa: E402,F401
from readme.tables import REQUIRED, TABLES  # noqa: E402
from readme.views import variant_tables  # noqa: E402,F401  (record_variants.py asks the filler)
from run import registrations  # noqa: E402

BEGIN = re.compile(r"<!-- BEGIN generated: (\S+)((?: \S+)*) -->")
END = re.compile(r"<!-- END generated: (\S+) -->")
ANY_MARKER = re.compile(r"<!--\s*(BEGIN|END)\b", re.IGNORECASE)  # what a mistyped marker still starts with
CELL = re.compile(r"<!-- cell: (.*?) -->(.*?)<!-- /cell -->")
ANY_CELL = re.compile(r"<!--\s*/?cell\b", re.IGNORECASE)
FENCE = re.compile(r"^\s*(```|~~~)")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
NOTE = "<!-- written by plots/readme/filler.py from {}; do not edit -->"
EXCERPT = {"argument": "name", "options": {"file": REQUIRED}}  # a block quoting code (render_excerpt)
EXCERPT_MARK = re.compile(r"^\s*// EXCERPT (BEGIN|END) (\S+)\s*$")
LAB_MARK = re.compile(r"^\s*// LAB (BEGIN|END)\b")


class BlockError(Exception):
    """A README or a result the blocks cannot use, said in one line ("FILE:LINE: what")."""


# ---- Cells ----------------------------------------------------------------------------------------

CELL_OPTIONS = {"column", "agg", "scale", "format"}
AGGREGATES = (*table.AGGREGATES, "range", "list", "one")  # table.combine's: the reductions, the two texts, the one value


def key_values(words, what="word"):
    """{KEY: VALUE} of KEY=VALUE words; Missing for a word that is not one or a key given twice."""
    given = {}
    for word in words:
        key, equals, value = word.partition("=")
        if not equals or not key:
            raise Missing(f"'{word}' is not KEY=VALUE")
        if key in given:
            raise Missing(f"'{key}=' given twice")
        given[key] = value
    return given


def parse_cell_spec(spec):
    """`FILE KEY=VALUE...` -> (file, options, selectors). Raises Missing for what cannot be read."""
    words = spec.split()
    if not words or "=" in words[0]:
        raise Missing("a cell starts with the CSV file it quotes, e.g. 'cell: worklog.csv ...'")
    file = words[0]
    if not file.endswith(".csv") or "/" in file:
        raise Missing(f"'{file}' is not the name of a CSV in the results folder")
    given = key_values(words[1:])
    options = {k: v for k, v in given.items() if k in CELL_OPTIONS}
    selectors = {k: v for k, v in given.items() if k not in CELL_OPTIONS and not k.startswith("over.")}
    over = {k[len("over."):]: v for k, v in given.items() if k.startswith("over.")}
    if over:
        if "" in over:
            raise Missing("over. needs a column after it, as in over.step=STEP")
        if options.get("agg"):
            raise Missing("a ratio (over.) takes one row each side, not agg=")
        options["over"] = over
    if not options.get("column"):
        raise Missing("a cell needs column=")
    if options.get("agg", "") not in ("",) + AGGREGATES:
        raise Missing(f"agg= must be one of {', '.join(AGGREGATES)}")
    if "scale" in options:
        try:
            options["scale"] = float(options["scale"])
        except ValueError:
            raise Missing(f"scale= must be a number, not {options['scale']!r}") from None
        if not options["scale"]:
            raise Missing("scale= must not be 0")
    return file, options, selectors


def sources_of(rows):
    """The CSV rows behind rows: a view's row names them in `_sources`; a CSV's row is its own."""
    return [source for r in rows for source in (r.get("_sources", [r]) if isinstance(r, dict) else [])]


def earlier_mark(rows, results, readme):
    """The mark for a figure made from rows when any of them measured earlier code of its step (""
    when none did): codes.mark with the earliest such date."""
    date = codes.earliest(sources_of(rows), results.codes())
    return codes.mark(date, readme or Path(results.root) / "README.md", results.root) if date else ""


def render_cell(spec, results, readme=None):
    """The text a cell shows; readme: the page it is on (for the mark's link)."""
    file, options, selectors = parse_cell_spec(spec)
    rows = select(results.rows(file) or [], file, selectors)
    agg, where = options.get("agg"), f"{file} " + " ".join(f"{k}={v}" for k, v in selectors.items())
    if not rows or (len(rows) != 1 and not agg):
        raise Missing(f"{where}: {'no row' if not rows else f'{len(rows)} rows'} (expected one)")
    values = [value_of(r, options["column"], file) for r in rows]
    if "over" in options:
        below = {**selectors, **options["over"]}
        divisors = select(results.rows(file) or [], file, below)
        if len(divisors) != 1:
            raise Missing(f"{file} " + " ".join(f"{k}={v}" for k, v in below.items()) +
                          f": {'no row' if not divisors else f'{len(divisors)} rows'} to divide by (expected one)")
        divisor = value_of(divisors[0], options["column"], file)
        if not isinstance(values[0], (int, float)) or not isinstance(divisor, (int, float)) or not divisor:
            raise Missing(f"{where}: a ratio needs a number on each side, and a divisor that is not 0")
        values = [values[0] / divisor]
        rows = rows + divisors
    if agg == "one":  # the one value every row has (a card, a day): rows that disagree are an error
        if len(set(map(str, values))) != 1:
            raise Missing(f"{where}: agg=one, but the rows' '{options['column']}' differ: "
                          f"{', '.join(sorted(set(map(str, values))))}")
        return str(values[0]) + earlier_mark(rows, results, readme)
    if agg and any(v is None or isinstance(v, str) for v in values):
        raise Missing(f"{where}: agg={agg} needs a number in every row's '{options['column']}'")
    return (table.combine(values, agg, options.get("format", "auto"), options.get("scale", 1.0))
            + earlier_mark(rows, results, readme))


# ---- Blocks ---------------------------------------------------------------------------------------

def spec_of(name):
    """(table spec, argument) for a block name; Missing for an unknown one."""
    base, slash, argument = name.partition("/")
    spec = EXCERPT if base == "excerpt" else TABLES.get(base)
    if spec is None or bool(slash) != bool(spec.get("argument")):
        known = ", ".join(sorted(b + (f"/{s['argument']}" if s.get("argument") else "") for b, s in TABLES.items()))
        raise Missing(f"unknown block '{name}' (known: {known})")
    if slash and not argument:
        raise Missing(f"block '{name}' needs its {spec['argument']}")
    return spec, (argument if slash else None)


def block_options(spec, words):
    """{KEY: VALUE} of a BEGIN line's words after the name, defaults filled in; Missing for a word
    that is not KEY=VALUE, a key given twice or unknown, and a required key left out."""
    given, known = key_values(words.split()), spec.get("options", {})
    for key in given:
        if key not in known:
            raise Missing(f"unknown option '{key}=' (this block's options: "
                          f"{', '.join(f'{k}=' for k in known) or 'none'})")
    missing = [k for k, default in known.items() if default is REQUIRED and k not in given]
    if missing:
        raise Missing(f"needs {', '.join(f'{k}=' for k in missing)} on its BEGIN line")
    return {k: given.get(k, default) for k, default in known.items()}


def render_block(name, results, options="", readme=None):
    """The text between a block's BEGIN and END lines (options: the KEY=VALUE words after its name):
    the note line, then the table between blank lines. A table row made from rows that measured
    earlier code of their step has the mark after its first cell; a table the reports write (a
    `markdown` spec) a line under it that names those steps."""
    spec, argument = spec_of(name)
    values = block_options(spec, options)
    if argument:
        values[spec["argument"]] = argument
    if "markdown" in spec:
        body = views.MARKDOWN[spec["markdown"]](results)
        body = body.rstrip() + earlier_note(spec["sources"], results, readme)
    else:
        source = spec["csv"]
        rows = views.VIEWS[source[5:]](results, **values) if source.startswith("view:") else results.rows(source)
        body = table.render(spec, rows or [], values, lambda mine: earlier_mark(mine, results, readme))
    sources = ", ".join(f"plots/results/{table._fill(s, values)}" for s in spec["sources"])
    return f"{NOTE.format(sources)}\n\n{body.rstrip()}\n\n"


def block_sources(name, results, options=""):
    """The CSV rows a table block shows (none for an excerpt): what a check of its cards reads."""
    spec, argument = spec_of(name)
    if spec is EXCERPT:
        return []
    values = block_options(spec, options)
    if argument:
        values[spec["argument"]] = argument
    if "markdown" in spec:
        return [r for source in spec["sources"] for r in results.rows(source) or []]
    source = spec["csv"]
    rows = views.VIEWS[source[5:]](results, **values) if source.startswith("view:") else results.rows(source)
    return sources_of(table.chosen_rows(spec, rows or [], values))


def earlier_note(sources, results, readme):
    """The line under a table the reports write: which steps of its CSVs measured earlier code, each
    with its earliest date, after the mark ("" when none did)."""
    found = {}
    for source in sources:
        for row in results.rows(source) or []:
            date = codes.earlier(row, results.codes())
            if date is not None:
                step = codes.row_step(row)[0]
                found[step] = min(found.get(step, date), date)
    if not found:
        return ""
    first = min(found.values())
    steps = ", ".join(f"{step} ({date})" for step, date in sorted(found.items()))
    return (f"\n\n{codes.mark(first, readme or Path(results.root) / 'README.md', results.root)} Measured on earlier "
            f"code of {steps}.")


def render_excerpt(name, options, readme):
    """An excerpt block's text: the lines between NAME's EXCERPT markers of the file the options name
    (relative to the README), in a fenced block under a link to them."""
    values = block_options(EXCERPT, options)
    relative = values["file"]
    source = Path(readme).parent / relative
    try:
        lines = source.read_text(encoding="utf-8").splitlines()
    except OSError:
        raise Missing(f"no file {relative} beside the README") from None
    marks = {"BEGIN": [], "END": []}
    for number, line in enumerate(lines):
        mark = EXCERPT_MARK.match(line)
        if mark and mark.group(2) == name:
            marks[mark.group(1)].append(number)
    if len(marks["BEGIN"]) != 1 or len(marks["END"]) != 1 or marks["END"][0] < marks["BEGIN"][0]:
        raise Missing(f"{relative} needs one '// EXCERPT BEGIN {name}' and, after it, one '// EXCERPT END {name}'")
    first, last = marks["BEGIN"][0] + 1, marks["END"][0]  # the quoted lines: [first, last), 0-based
    code = [line for line in lines[first:last] if not LAB_MARK.match(line)]
    if not any(line.strip() for line in code):
        raise Missing(f"the excerpt {name} of {relative} holds no code")
    body = textwrap.dedent("\n".join(code)).strip("\n")
    shown = Path(relative).name
    return (f"{NOTE.format(relative)}\n\n[`{shown}`]({relative}), lines {first + 1}–{last}:\n\n"
            f"```cuda\n{body}\n```\n\n")


# ---- Finding blocks and cells in a README -------------------------------------------------------

# kind: block or cell; start, end: offsets of the text; options: a block's KEY=VALUE words ("" for a cell).
Found = namedtuple("Found", "kind name line start end options", defaults=("",))


def _masked(line):
    """The line with its code spans blanked (same length), so that markers shown as code are not read."""
    return CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line)


def find(text, path="README.md"):
    """The generated blocks and quoted cells of a README, in order, as Found (the offsets of the text
    that the writer replaces). Raises BlockError ("path:line: ...") for an unbalanced, nested,
    mistyped or unknown marker and for a cell that cannot be read; code (fenced, or in backticks)
    is not read."""
    found, open_block, fenced, offset = [], None, False, 0
    for number, line in enumerate(text.splitlines(keepends=True), 1):
        where = f"{path}:{number}"
        start_of_line, offset = offset, offset + len(line)
        bare = line.rstrip("\r\n")
        if FENCE.match(bare):
            fenced = not fenced
            continue
        if fenced:
            continue
        masked = _masked(bare)
        begin, end = BEGIN.fullmatch(masked.strip()), END.fullmatch(masked.strip())
        if begin:
            if open_block:
                raise BlockError(f"{where}: BEGIN generated: {begin.group(1)} inside the block "
                                 f"'{open_block.name}' opened on line {open_block.line}")
            try:
                spec = spec_of(begin.group(1))[0]
            except Missing as e:
                raise BlockError(f"{where}: {e}") from None
            try:
                block_options(spec, begin.group(2))
            except Missing as e:
                raise BlockError(f"{where}: block '{begin.group(1)}': {e}") from None
            open_block = Found("block", begin.group(1), number, offset, None, begin.group(2).strip())
            continue
        if end:
            if not open_block:
                raise BlockError(f"{where}: END generated: {end.group(1)} without a BEGIN")
            if end.group(1) != open_block.name:
                raise BlockError(f"{where}: END generated: {end.group(1)} closes BEGIN generated: "
                                 f"{open_block.name} (line {open_block.line})")
            found.append(open_block._replace(end=start_of_line))
            open_block = None
            continue
        if ANY_MARKER.search(masked):
            raise BlockError(f"{where}: not a marker: a line of its own, exactly "
                             "'<!-- BEGIN generated: NAME -->' (or '<!-- BEGIN generated: NAME KEY=VALUE... -->') "
                             "or '<!-- END generated: NAME -->'")
        if open_block:
            continue  # the block's text is the writer's
        cells = list(CELL.finditer(masked))
        if len(ANY_CELL.findall(masked)) != 2 * len(cells):
            raise BlockError(f"{where}: a cell is '<!-- cell: FILE KEY=VALUE... -->TEXT<!-- /cell -->', all on "
                             "one line")
        for cell in cells:
            if not masked[:cell.start()].strip():
                raise BlockError(f"{where}: a cell must not start a line (Markdown would end the paragraph "
                                 "there): put a word before it")
            try:
                parse_cell_spec(cell.group(1))
            except Missing as e:
                raise BlockError(f"{where}: {e}") from None
            found.append(Found("cell", cell.group(1), number, start_of_line + cell.start(2),
                               start_of_line + cell.end(2)))
    if open_block:
        raise BlockError(f"{path}:{open_block.line}: BEGIN generated: {open_block.name} has no END")
    return found


def render(found, results, path="README.md"):
    """The text a block or cell should hold; BlockError ("path:line: ...") when the results lack it."""
    try:
        if found.kind == "block" and found.name.startswith("excerpt/"):
            return render_excerpt(found.name.partition("/")[2], found.options, path)
        return (render_block(found.name, results, found.options, path) if found.kind == "block"
                else render_cell(found.name, results, path))
    except Missing as e:
        what = f"block '{found.name}'" if found.kind == "block" else f"cell '{found.name}'"
        raise BlockError(f"{path}:{found.line}: {what}: {e}") from None


def rewritten(text, results, path="README.md"):
    """The README's text with every block and cell as the results give it."""
    pieces, at = [], 0
    for f in find(text, path):
        pieces += [text[at:f.start], render(f, results, path)]
        at = f.end
    return "".join(pieces) + text[at:]


Difference = namedtuple("Difference", "path line kind name committed expected")


def check(text, results, path="README.md"):
    """The blocks and cells whose text differs from what the results give, as Differences."""
    return [Difference(path, f.line, f.kind, f.name, text[f.start:f.end], expected)
            for f in find(text, path) for expected in [render(f, results, path)] if text[f.start:f.end] != expected]


def rewrite(path, results):
    """Rewrite one README in place; returns whether it changed."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    new = rewritten(text, results, str(path))
    if new != text:
        path.write_text(new, encoding="utf-8")
    return new != text


def readmes(root):
    """README.md, every directory's README.md (one level down), a step's other pages beside its code
    (NN_name/*.md), the pages of docs/ and the steps' notes pages (docs/notes/*.md) under root."""
    root = Path(root)
    beside = sorted(p for p in root.glob("[0-9][0-9]_*/*.md") if p.name != "README.md")
    return [p for p in [root / "README.md", *sorted(root.glob("*/README.md")), *beside, *sorted(root.glob("docs/*.md")),
                        *sorted(root.glob("docs/notes/*.md"))]
            if p.is_file()]


def _relative(path, root):
    try:
        return Path(path).resolve().relative_to(root)
    except (TypeError, ValueError):
        return path


def describe(difference, root=None):
    """A difference in a few lines: where, and a diff of the block or the two cell texts."""
    path = Path(difference.path)
    shown = _relative(path, root)
    if difference.kind == "cell":
        return (f"{shown}:{difference.line}: cell '{difference.name}' reads {difference.committed!r}; "
                f"the results give {difference.expected!r}")
    diff = difflib.unified_diff(difference.committed.splitlines(), difference.expected.splitlines(),
                                "committed", "from the results", lineterm="", n=0)
    return f"{shown}:{difference.line}: block '{difference.name}' differs:\n" + "\n".join(
        "    " + line for line in list(diff)[2:])


def check_all(files, results):
    """(Differences, texts) over the files; BlockError at the first that cannot be read."""
    differences, texts = [], {}
    for path in files:
        texts[path] = Path(path).read_text(encoding="utf-8")
        differences += check(texts[path], results, str(path))
    return differences, texts


def write_all(files, results):
    """Rewrite the files, all or none: every one is rendered before the first is written. Returns
    the paths that changed."""
    new = {}
    for path in files:
        text = Path(path).read_text(encoding="utf-8")
        new[path] = (text, rewritten(text, results, str(path)))
    changed = [path for path, (old, text) in new.items() if old != text]
    for path in changed:
        Path(path).write_text(new[path][1], encoding="utf-8")
    return changed


def refresh(results_dir, who, bin_dir=None):
    """After `who --publish DIR`: when DIR is a checkout's plots/results (its READMEs at DIR/../..),
    rewrite their blocks and cells from DIR, the steps' registrations asked of the executables in
    bin_dir. Says what it did in lines starting "<who>:"; returns False when the READMEs could not be
    rewritten (they are then left as they were)."""
    folder = Path(results_dir).resolve()
    root = folder.parent.parent
    if folder.name != "results" or folder.parent.name != "plots" or not (root / "README.md").is_file():
        return True
    try:
        changed = write_all(readmes(root), Results(folder, root, bin_dir))
    except BlockError as e:
        print(f"{who}: warning: the READMEs' measured figures were not rewritten: {e}", file=sys.stderr, flush=True)
        return False
    for path in changed:
        print(path, flush=True)
    print(f"{who}: {len(changed)} README(s) rewritten from {folder}" if changed
          else f"{who}: the READMEs' measured figures already match {folder}", flush=True)
    return True


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, default=RESULTS, help="the results folder (default: plots/results)")
    parser.add_argument("--root", type=Path, help="the checkout whose READMEs to read (default: RESULTS/../..)")
    parser.add_argument("--bin-dir", type=Path, help="the built step executables, whose registrations the READMEs "
                        f"quote (default: ${registrations.BIN_DIR_VARIABLE}, else ROOT/build/bin)")
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--check", action="store_true", help="exit 1, saying where, when a block or cell is stale")
    what.add_argument("--write", action="store_true", help="rewrite every block and cell from the results")
    parser.add_argument("files", nargs="*", type=Path, help="the READMEs (default: README.md, */README.md and docs/*.md)")
    args = parser.parse_args(argv)
    root = (args.root or args.results.resolve().parent.parent).resolve()
    files = args.files or readmes(root)
    results = Results(args.results, root, args.bin_dir)
    try:
        if args.write:
            for path in write_all(files, results):
                print(path)
            return exit_codes.EXIT_OK
        differences, _ = check_all(files, results)
    except (BlockError, OSError) as e:
        print(f"readme/filler.py: error: {e}", file=sys.stderr)
        return exit_codes.EXIT_BAD_ARGUMENT
    for difference in differences:
        print(describe(difference, root), file=sys.stderr)
    if differences:
        print(f"readme/filler.py: {len(differences)} block(s) or cell(s) differ from {args.results}; rewrite them "
              f"with: python3 {_relative(Path(__file__), root)} "
              f"--results {args.results} --write", file=sys.stderr)
        return exit_codes.EXIT_CHECK_FAILED
    return exit_codes.EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
