"""The rules of docs/check_docs.py about what a page may say of measurements: no measured figure
or count typed by hand outside the generated blocks and cells, README.md's ladder complete, every
variant and test named, and a paragraph that quotes two GPUs naming both (check_docs.py's docstring
gives each rule); with the text primitives the link check shares. Python standard library only.
"""
import json
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "common"))
sys.path.insert(0, str(ROOT / "plots"))
from run import registrations  # noqa: E402  (plots/run/registrations.py: what a built step registers)

FENCE = re.compile(r"^\s*(```|~~~)")
LINK = re.compile(r"!?\[((?:[^\[\]]|\[[^\]]*\])*)\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)


def split_lines(text):
    """(line number, line, inside a fenced block) for every line but the fences themselves."""
    inside = False
    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            inside = not inside
            continue
        yield number, line, inside


# ---- Measured figures, counts, the ladder, variants, tests ----------------------------------------

# A block's BEGIN line may carry its options after the name (plots/readme/filler.py); its END line names it alone.
GENERATED = re.compile(r"<!-- BEGIN generated: (\S+)(?: \S+)* -->.*?<!-- END generated: \1 -->", re.DOTALL)
CELL = re.compile(r"<!-- cell: .*? -->.*?<!-- /cell -->")
FIGURE = re.compile(r"(?<![\w.\-/·×])(\d[\d,]*(?:\.\d+)?)\s?(%|TFLOP/s|µs|GB\b)")
NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
COUNT = re.compile(r"(?<![\w.\-/])(\d[\d,]*)\s+(?:more\s+|standard\s+|GPU\s+)?(tests|test cases|cases|variants)\b")
PUBLISHED = "docs/published_figures.md"
# Figures that measure nothing (thresholds, targets), by file: the figure and where it is set.
NOT_MEASURED = {
    "lab/README.md": {"90%": "the rubric's full_at (lab/rubric.json)", "25%": "the rubric's zero_at (lab/rubric.json)"},
    "docs/running.md": {"2%": "the clock's tolerated fall (common/harness_timing.hpp: Timings::clock_fall_tolerance)"},
}
# Step READMEs being rewritten: the figure, count, variant and ../shared/ rules skip them until then.
# Empty while every step's README follows them; take a step out as soon as its README does.
PENDING_REWRITE = set()
LADDER = "ladder"           # README.md's generated block of one row per step
LADDER_FIRST_SCREEN = 25    # ... which starts within its first lines
STEP_LINE = re.compile(r"^\s*add_worklog_step\(\s*(\d\d_[a-z0-9_]+)", re.MULTILINE)
TEST_NAME = re.compile(r"add_test\(\s*NAME\s+(\S+)")
TESTING_PAGE = "docs/testing.md"


def _blank(match):
    """A match replaced by spaces, its line breaks kept (line numbers stay right)."""
    return re.sub(r"[^\n]", " ", match.group(0))


def prose_blocks(text):
    """[(first line number, [lines])]: the paragraphs, list items and tables of a Markdown text,
    its generated blocks, cells, comments and fenced code left out (line numbers kept)."""
    text = GENERATED.sub(_blank, text)
    text = CELL.sub(_blank, text)
    text = COMMENT.sub(_blank, text)
    blocks, current = [], None
    for number, line, fenced in split_lines(text):
        if fenced or not line.strip():
            current = None
            continue
        if current is None:
            current = (number, [])
            blocks.append(current)
        current[1].append(line)
    return blocks


def published_numbers(root):
    path = Path(root) / PUBLISHED
    return set(NUMBER.findall(path.read_text(encoding="utf-8"))) if path.is_file() else set()


def relative_name(md, root):
    try:
        return Path(md).resolve().relative_to(Path(root).resolve()).as_posix()
    except ValueError:
        return Path(md).name


def pending(name):
    return name.split("/")[0] in PENDING_REWRITE


def typed_figures(md, root, published=None):
    """FILE:LINE: what, for each measured figure typed by hand: a number followed by %, TFLOP/s, µs
    or GB outside a generated block or cell, unless its paragraph links published_figures.md and
    the number is one of that page's, or it is worked out in place (right after "=" or "≈", as in
    "8/40 = 20%"), or NOT_MEASURED names it."""
    name = relative_name(md, root)
    if name == PUBLISHED or pending(name):
        return []
    published = published_numbers(root) if published is None else published
    allowed = NOT_MEASURED.get(name, {})
    found = []
    for first, lines in prose_blocks(Path(md).read_text(encoding="utf-8")):
        cites = any(m.group(2).split("#")[0].endswith("published_figures.md")
                    for line in lines for m in LINK.finditer(line))
        for offset, line in enumerate(lines):
            bare = CODE_SPAN.sub(_blank, line)
            for m in FIGURE.finditer(bare):
                figure = m.group(0)
                if figure.replace(" ", "") in allowed or figure in allowed:
                    continue
                if re.search(r"[=≈]\s*$", bare[:m.start()]):
                    continue  # arithmetic shown on the page
                if cites and m.group(1) in published:
                    continue
                found.append(f"{name}:{first + offset}: figure '{figure}' typed by hand: quote it as a cell of "
                             "plots/results (plots/readme/filler.py), or, if others published it, from "
                             f"{PUBLISHED} with a link to it in the same paragraph")
    return found


def typed_counts(md, root):
    """FILE:LINE: what, for each count of tests or variants written in prose ("376 tests")."""
    name = relative_name(md, root)
    if pending(name):
        return []
    found = []
    for first, lines in prose_blocks(Path(md).read_text(encoding="utf-8")):
        for offset, line in enumerate(lines):
            for m in COUNT.finditer(CODE_SPAN.sub(_blank, line)):
                found.append(f"{name}:{first + offset}: '{m.group(0)}': a count of {m.group(2)} goes stale; "
                             "the build counts them (ctest -N, the step's --variant list)")
    return found


def shared_folder_mentions(md, root):
    """A clone has no ../shared/ (the tutorials beside a course checkout): a page must not send a
    reader there."""
    name = relative_name(md, root)
    if pending(name):
        return []
    text = COMMENT.sub(_blank, Path(md).read_text(encoding="utf-8"))
    return [f"{name}:{text.count(chr(10), 0, m.start()) + 1}: '../shared/' is not in a clone: give the "
            "tutorial's title and public address instead" for m in re.finditer(r"\.\./shared/", text)]


def registered_steps(root):
    path = Path(root) / "CMakeLists.txt"
    return STEP_LINE.findall(path.read_text(encoding="utf-8")) if path.is_file() else []


def ladder_problems(root, withheld=frozenset()):
    """README.md's ladder: a generated block on its first screen with a row for every step that
    CMakeLists.txt builds (a student copy's README keeps the rows of the steps it leaves out)."""
    readme, steps = Path(root) / "README.md", registered_steps(root)
    if not readme.is_file() or not steps:
        return []
    text = readme.read_text(encoding="utf-8")
    block = next((m for m in GENERATED.finditer(text) if m.group(1) == LADDER), None)
    if block is None:
        return [f"README.md: no generated block '{LADDER}' (the ladder, one row per step)"]
    found = []
    line = text.count("\n", 0, block.start()) + 1
    if line > LADDER_FIRST_SCREEN:
        found.append(f"README.md:{line}: the ladder starts on line {line}: it belongs on the first screen "
                     f"(by line {LADDER_FIRST_SCREEN})")
    rows = set(re.findall(r"^\|\s*\[(\d\d_[a-z0-9_]+)\]", block.group(0), re.MULTILINE))
    for step in steps:
        if step not in rows:
            found.append(f"README.md:{line}: the ladder has no row for {step} (run the worklog with it and "
                         "publish, or python3 plots/readme/filler.py --write)")
    return found


def variant_problems(root, withheld=frozenset(), bin_dir=None):
    """Every variant a step registers, as its executable in bin_dir lists them (--list-variants), is
    named, in code, in its README; a step that cannot be asked is a problem too. None: not checked."""
    if bin_dir is None:
        return []
    found = []
    for kernel in sorted(Path(root).glob("[0-9][0-9]_*/kernel.cu")):
        step = kernel.parent.name
        readme = kernel.parent / "README.md"
        if step in withheld or pending(step) or not readme.is_file():
            continue
        try:
            registered = registrations.read(bin_dir, step).variants
        except registrations.RegistrationError as e:
            found.append(f"{step}/README.md: its variants cannot be checked: {e}")
            continue
        text = readme.read_text(encoding="utf-8")
        spans = " ".join(m.group(2) for m in CODE_SPAN.finditer(text))
        for variant in registered:
            if not re.search(r"(?<![\w-])" + re.escape(variant) + r"(?![\w-])", spans):
                found.append(f"{step}/README.md: the variant `{variant}` (`{step} --list-variants` lists it) is not "
                             "named in the README")
    return found


def built_steps_folder(root, given=None):
    """The folder of the built steps whose variants the check asks for: `given` (--bin-dir), else
    $WORKLOG_BIN_DIR, else root/build/bin when a build is there; None when there is none to ask (a
    checkout never built), the one case in which the variants are not checked."""
    if given is not None or os.environ.get(registrations.BIN_DIR_VARIABLE):
        return Path(given) if given is not None else registrations.bin_dir(root)
    folder = registrations.bin_dir(root)
    return folder if any(folder.glob("[0-9][0-9]_*")) else None


def test_list_problems(root):
    """Every test that common/tests/CMakeLists.txt registers has its line on docs/testing.md:
    `gpu.${step}` as `gpu.<step>`; a name that is only a variable (the sanitizer tests') is left out."""
    cmake, page = Path(root) / "common" / "tests" / "CMakeLists.txt", Path(root) / TESTING_PAGE
    if not cmake.is_file() or not page.is_file():
        return []
    spans = {m.group(2).strip() for m in CODE_SPAN.finditer(page.read_text(encoding="utf-8"))}
    found = []
    for name in dict.fromkeys(TEST_NAME.findall(cmake.read_text(encoding="utf-8"))):
        shown = re.sub(r"\$\{(\w+)\}", r"<\1>", name)
        if re.fullmatch(r"<\w+>", shown):
            continue
        if shown not in spans:
            found.append(f"{TESTING_PAGE}: the test `{shown}` (common/tests/CMakeLists.txt) has no line here")
    return found


# ---- One card per paragraph ----------------------------------------------------------------------

# The results come from more than one GPU, each row naming its own (the `gpu` column of every results
# CSV). A reader can only weigh a figure knowing the card it was measured on, so a paragraph (or table,
# or list) whose cells quote rows of two GPUs must name both cards.
CELL_PARTS = re.compile(r"<!-- cell: (.*?) -->(.*?)<!-- /cell -->")


def card_names(gpu):
    """The words that name a GPU in prose: its full name, without "NVIDIA ", and its first word
    with a digit ("NVIDIA H100 80GB HBM3": "H100")."""
    short = gpu[len("NVIDIA "):] if gpu.startswith("NVIDIA ") else gpu
    model = next((w for w in short.split() if any(c.isdigit() for c in w)), short)
    return {gpu, short, model}


def names_card(text, gpu):
    return any(re.search(r"(?<![\w-])" + re.escape(name) + r"(?![\w-])", text) for name in card_names(gpu))


class CellCards:
    """The GPUs of the rows that a cell selects, read as plots/readme/filler.py reads cells, from
    the checkout's plots/results: {spec: set of `gpu` values}. A cell that cannot be read (no such
    CSV, column or row) gives none; `readme/filler.py --check` is the check that says why."""

    def __init__(self, root):
        self.root = Path(root)
        self.blocks = self.results = None
        self.cache = {}

    def __call__(self, spec):
        if spec not in self.cache:
            self.cache[spec] = self._gpus(spec)
        return self.cache[spec]

    def _gpus(self, spec):
        if self.blocks is None:
            sys.path.insert(0, str(ROOT / "plots"))
            try:
                from readme import filler  # noqa: E402  (standard library only, as this checker)
            except ImportError:  # a copy without plots/: no results, so no cell has a card
                self.blocks = False
            else:
                self.blocks = filler
                self.results = filler.Results(self.root / "plots" / "results", self.root)
        if not self.blocks:
            return set()
        try:
            file, _, selectors = self.blocks.parse_cell_spec(spec)
            rows = self.blocks.select(self.results.rows(file), file, selectors)
        except (self.blocks.Missing, OSError):
            return set()
        return {str(r["gpu"]) for r in rows if r.get("gpu")}


LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s")


def paragraphs(text):
    """[(first line number, text)]: the paragraphs, list items and tables of a Markdown text (lines
    up to a blank one), cells kept, generated blocks, comments and fenced code left out. A table or
    a list is read with the paragraph that introduces it (one that ends with a colon): its caption."""
    text = GENERATED.sub(_blank, text)
    text = COMMENT.sub(lambda m: m.group(0) if m.group(0).startswith("<!-- cell:") or m.group(0) == "<!-- /cell -->"
                       else _blank(m), text)
    found, current = [], None
    for number, line, fenced in split_lines(text):
        if fenced or not line.strip():
            current = None
            continue
        if current is None:
            captioned = (found and found[-1][2] and (line.lstrip().startswith("|") or LIST_ITEM.match(line))
                         and found[-1][3] == number - 2)
            if captioned:
                current = found[-1]
            else:
                current = [number, "", False, number]
                found.append(current)
        current[1] += line + "\n"
        current[3] = number
        current[2] = CELL_PARTS.sub("", line).rstrip().endswith(":")
    return [(first, text) for first, text, _, _ in found]


def mixed_cards(md, root, cards):
    """FILE:LINE: what, for each paragraph whose cells quote rows of two or more GPUs and that does
    not name each of them (in its words or in a cell's text)."""
    name = relative_name(md, root)
    found = []
    for first, text in paragraphs(Path(md).read_text(encoding="utf-8")):
        gpus = {}
        for m in CELL_PARTS.finditer(text):
            for gpu in sorted(cards(m.group(1))):
                gpus.setdefault(gpu, first + text.count("\n", 0, m.start()))
        if len(gpus) < 2:
            continue
        prose = CELL_PARTS.sub(lambda m: m.group(2), text)
        unnamed = [gpu for gpu in sorted(gpus) if not names_card(prose, gpu)]
        if unnamed:
            quoted = ", ".join(f"{gpu} (line {line})" for gpu, line in sorted(gpus.items(), key=lambda g: g[1]))
            words = " or ".join(f"'{sorted(card_names(gpu), key=len)[0]}'" for gpu in unnamed)
            found.append(f"{name}:{first}: the paragraph's cells quote rows of {len(gpus)} GPUs, {quoted}, and it "
                         f"never says {words}: name the card of each figure (a sentence joins two cards' figures "
                         "only to compare the cards), or quote one card's rows")
    return found


# ---- The strict rules: figures of today's code, one card to a table or sentence -------------------

EARLIER = re.compile(r"<sup>\[‡ (\d{4}-\d\d-\d\d|undated)\]\([^)]*#measured-on-earlier-code\)</sup>")


def earlier_figures(md, root):
    """FILE:LINE: what, for each figure the filler marked as measured on earlier code of its step
    (plots/readme/codes.py): the mark is in the page's generated text, which `filler.py --check` keeps
    equal to what the results give."""
    name = relative_name(md, root)
    found = []
    for number, line in enumerate(Path(md).read_text(encoding="utf-8").splitlines(), 1):
        dates = EARLIER.findall(line)
        if dates:
            found.append(f"{name}:{number}: {len(dates)} figure(s) measured on earlier code of their step "
                         f"({', '.join(sorted(set(dates)))}): re-measure them on today's build (docs/figures.md)")
    return found


class BlockCards:
    """The GPUs of the rows each generated table block shows, read as plots/readme/filler.py renders
    it: {(name, options): set of `gpu` values}; none for a block that cannot be read."""

    def __init__(self, cells):
        self.cells = cells  # a CellCards: it loads the filler and the results once
        self.cache = {}

    def __call__(self, name, options):
        key = (name, options)
        if key not in self.cache:
            self.cells("")  # loads the filler, if it can be
            filler = self.cells.blocks
            gpus = set()
            if filler:
                try:
                    gpus = {str(r["gpu"]) for r in filler.block_sources(name, self.cells.results, options)
                            if isinstance(r, dict) and r.get("gpu")}
                except (filler.Missing, filler.BlockError, OSError, KeyError):
                    gpus = set()
            self.cache[key] = gpus
        return self.cache[key]


BLOCK_LINE = re.compile(r"^<!-- BEGIN generated: (\S+)((?: \S+)*) -->$")


def two_card_figures(md, root, cards, blocks):
    """FILE:LINE: what, for each paragraph whose cells quote rows of two or more GPUs (named or not)
    and each generated table whose rows are of two or more GPUs: a table or a sentence sets one card's
    figures only."""
    name = relative_name(md, root)
    text = Path(md).read_text(encoding="utf-8")
    found = []
    for first, paragraph in paragraphs(text):
        gpus = set()
        for m in CELL_PARTS.finditer(paragraph):
            gpus |= cards(m.group(1))
        if len(gpus) > 1:
            found.append(f"{name}:{first}: a paragraph quotes figures of {len(gpus)} cards ({', '.join(sorted(gpus))}): "
                         "quote one card's rows")
    for number, line in enumerate(text.splitlines(), 1):
        begin = BLOCK_LINE.match(line.strip())
        if begin:
            gpus = blocks(begin.group(1), begin.group(2).strip())
            if len(gpus) > 1:
                found.append(f"{name}:{number}: the table {begin.group(1)} shows rows of {len(gpus)} cards "
                             f"({', '.join(sorted(gpus))}): one card to a table")
    return found
