#!/usr/bin/env python3
"""Every link and repository path the READMEs name exists, README.md defines its terms first, and no
page types a measured figure or a count by hand.

    python3 docs/check_docs.py [--root DIR]

The files read: README.md, every directory's README.md one level down (a new step's too), the other
pages beside a step's code (14_tile_per_shape/routes.md) and docs/*.md. In each:

- every Markdown link and image, `[text](target)`, whose target is not a web address (http, https,
  mailto): the file or folder must exist, relative to the Markdown file; an anchor (`#part`) must name
  a heading of the file it points into (GitHub's slugs: lower case, punctuation dropped, spaces to
  hyphens), or of the same file when the target is only `#part`;
- every repository path written in code (inline `code` or a fenced block): a word with a slash whose
  first component is a file or folder of the repository root, or of the Markdown file's own folder
  (so `plots/results/shapes.csv`, `common/hopper.cuh`), or a step's
  folder name (`12_swap_ab/kernel.cu`); it must exist. Paths under `build/` are what a build writes
  and are not checked, nor are words with placeholders (`<step>`, `*`, `…`, `NN_name`) or paths that
  leave the repository (`../elsewhere/`).

In a student copy made by `lab/lab.py release` (which records in lab/released.json the steps it
leaves out, and the kit's folders it removes, lab/tests), links and paths into those are not
checked: the copy leaves them out on purpose.

README.md must also meet no term before its definition: for every glossary entry it links,
`[term](docs/glossary.md#anchor)` (the term being the text of its first such link, a plural's "s"
dropped), the first time the term occurs in README.md (whole words, in any case, with "s", "es",
"d", "ed" or "ing" after), that occurrence must be the text of a link to that glossary entry.

Measured figures live in plots/results and reach a page only as generated blocks and quoted cells
(plots/readme/filler.py). So, outside those, comments and code:

- a number followed by %, TFLOP/s, µs or GB is a problem, unless its paragraph (or table, or list
  item) links docs/published_figures.md and the number is on that page (a figure others published),
  or it follows "=" or "≈" (worked out in place: "8/40 = 20%"), or NOT_MEASURED names it for that
  file (a threshold, with where it is set);
- a number followed by "tests", "cases" or "variants" is a problem: the build counts them;
- "../shared/" is a problem: a clone has no such folder.

The READMEs of the steps in PENDING_REWRITE are not read for these three. And:

- README.md's generated block "ladder" starts by line LADDER_FIRST_SCREEN and has a row for every
  add_worklog_step() of CMakeLists.txt;
- each step's README names, in code, every variant the step registers, as its built executable lists
  them (`--list-variants`, read by plots/run/registrations.py from --bin-dir, default $WORKLOG_BIN_DIR,
  else build/bin; without a build there, this one rule is skipped, saying so on stderr);
- every test that common/tests/CMakeLists.txt registers (add_test(NAME ...), `gpu.${step}` read as
  `gpu.<step>`) is named, in code, on docs/testing.md.

Figures come from more than one GPU (the `gpu` column of every results CSV). A paragraph (or a list
or table, read with the paragraph ending in a colon that introduces it) whose cells select rows of
two or more GPUs must name each of them: by its full name, without "NVIDIA ", or by its model
("H100"), in its words or in a cell's text (a cell may quote the `gpu` column itself). A paragraph
that quotes one card need not name it: its README's generated blocks do. (That the two cards' figures
meet in one sentence only to compare the cards is the writer's to keep: the check cannot tell.)

Exit codes (common/exit_codes.hpp): 0 every link and path resolves; 1 some do not (each printed as
FILE:LINE: what); 2 bad arguments. Python standard library only.
"""
import argparse
import json
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "common"))
sys.path.insert(0, str(ROOT / "plots"))
import exit_codes  # noqa: E402  (common/exit_codes.py: the codes of common/exit_codes.hpp)
from run import registrations  # noqa: E402  (plots/run/registrations.py: what a built step registers)

FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
LINK = re.compile(r"!?\[((?:[^\[\]]|\[[^\]]*\])*)\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
WEB = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)  # http:, https:, mailto:
STEP_DIR = re.compile(r"^\d\d_[a-z0-9_]+$")
PLACEHOLDER = re.compile(r"[<>*…{}$]|\bNN_|\.\.\.")
EXEMPT_ROOTS = {"build"}  # what a build writes
EXEMPT_PATHS = {"lab/released.json"}  # what lab/lab.py release writes into a student copy
GLOSSARY = "docs/glossary.md"


def markdown_files(root):
    """README.md, every */README.md, a step's other pages (NN_name/*.md) and docs/*.md under root, in that order."""
    root = Path(root)
    beside = sorted(p for p in root.glob("[0-9][0-9]_*/*.md") if p.name != "README.md")
    files = [root / "README.md", *sorted(root.glob("*/README.md")), *beside, *sorted((root / "docs").glob("*.md"))]
    return [f for f in files if f.is_file()]


def withheld_steps(root):
    """What a student copy leaves out (lab/released.json): the later steps ("withheld") and the
    kit's own folders ("removed", such as lab/tests); none in the repository."""
    record = Path(root) / "lab" / "released.json"
    if not record.is_file():
        return set()
    try:
        released = json.loads(record.read_text(encoding="utf-8"))
        return set(released.get("withheld", [])) | set(released.get("removed", []))
    except (ValueError, AttributeError, TypeError):
        return set()


def left_out(relative, withheld):
    """Whether a path relative to the root is in, or under, something the student copy leaves out."""
    relative = Path(relative).as_posix()
    return any(relative == w or relative.startswith(w + "/") for w in withheld)


def slug(heading):
    """GitHub's anchor for a heading's text: markup dropped, lower case, punctuation removed."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text stays
    text = text.replace("`", "").replace("*", "").lower().strip()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def split_lines(text):
    """(line number, line, inside a fenced block) for every line but the fences themselves."""
    inside = False
    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            inside = not inside
            continue
        yield number, line, inside


def anchors(path, cache={}):
    path = Path(path).resolve()
    if path not in cache:
        seen, found = {}, set()
        for _, line, fenced in split_lines(path.read_text(encoding="utf-8")):
            m = None if fenced else HEADING.match(line)
            if m:
                base = slug(m.group(2))
                count = seen.get(base, 0)
                seen[base] = count + 1
                found.add(base if count == 0 else f"{base}-{count}")
        cache[path] = found
    return cache[path]


def inside_repository(target, root):
    try:
        target.resolve().relative_to(Path(root).resolve())
        return True
    except ValueError:
        return False


def check_link(md, root, target, withheld):
    """What is wrong with one link target of Markdown file md, or None."""
    if WEB.match(target):
        return None
    path_part, _, anchor = target.partition("#")
    resolved = md if path_part == "" else (md.parent / path_part)
    relative = Path(root).resolve()
    if path_part and inside_repository(resolved, root):
        if left_out(resolved.resolve().relative_to(relative), withheld):
            return None
    if not resolved.exists():
        return f"link to {target}: no such file or folder"
    if anchor and resolved.is_file() and resolved.suffix == ".md" and anchor not in anchors(resolved):
        return f"link to {target}: {resolved.name} has no heading with the anchor #{anchor}"
    return None


def path_words(code):
    """The words of a piece of code that may be repository paths (they hold a slash)."""
    for word in code.split():
        word = word.strip("\"'`,;:()[]")
        if word.endswith("."):
            word = word[:-1]
        if "/" in word and not WEB.match(word) and not PLACEHOLDER.search(word) and not word.startswith("-"):
            yield word.split("#")[0]


def check_path(md, root, word, withheld):
    """What is wrong with one path named in code, or None when it exists or is not a repository path."""
    root = Path(root)
    parts = Path(word).parts
    if (not parts or word.startswith(("/", "~", "..")) or parts[0] in EXEMPT_ROOTS or word in EXEMPT_PATHS
            or "=" in word):
        return None
    if left_out(word, withheld):
        return None
    for base in (root, md.parent):
        if (base / parts[0]).exists():
            return None if (base / word).exists() else f"path {word}: no such file or folder"
    if STEP_DIR.match(parts[0]) and parts[0] not in withheld:
        return f"path {word}: no step folder {parts[0]}"
    return None


def problems_in(md, root, withheld=frozenset()):
    """FILE:LINE: what, for every broken link and path of one Markdown file."""
    md = Path(md)
    try:
        shown = md.resolve().relative_to(Path(root).resolve())
    except ValueError:
        shown = md
    found = []
    text = md.read_text(encoding="utf-8")
    text = COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), text)  # keep the line numbers
    for number, line, fenced in split_lines(text):
        if fenced:
            words = list(path_words(line))
        else:
            words = [w for m in CODE_SPAN.finditer(line) for w in path_words(m.group(2))]
            for m in LINK.finditer(CODE_SPAN.sub(lambda c: "x" * len(c.group(0)), line)):
                problem = check_link(md, root, m.group(2), withheld)
                if problem:
                    found.append(f"{shown}:{number}: {problem}")
        for word in words:
            problem = check_path(md, root, word, withheld)
            if problem:
                found.append(f"{shown}:{number}: {problem}")
    return found


# ---- Terms defined before use -------------------------------------------------------------------

def term_pattern(term):
    words = [re.escape(w) for w in term.replace("`", "").split()]
    return re.compile(r"(?<![\w.\-/])" + r"[\s\-]+".join(words) + r"(?:s|es|d|ed|ing)?(?![\w\-])", re.IGNORECASE)


def checked_terms(text):
    """[(term, anchor)]: every glossary entry that README.md's text links, the term being the text of
    its first link there, a plural's "s" dropped ("[tiles](docs/glossary.md#tile)" checks "tile")."""
    terms = {}
    for link in LINK.finditer(text):
        target = link.group(2)
        if target.startswith(GLOSSARY + "#"):
            term = link.group(1).replace("`", "").strip()
            if len(term) > 3 and term.endswith("s") and not term.endswith("ss"):
                term = term[:-1]
            terms.setdefault(target.partition("#")[2], term)
    return [(term, anchor) for anchor, term in terms.items()]


def undefined_terms(text):
    """For README.md's text: "LINE: what" for each checked term whose first use is not its link."""
    text = GENERATED.sub(_blank, text)  # a generated table cannot carry links (line breaks kept)
    text = COMMENT.sub(lambda c: " " * len(c.group(0)), text)  # comments (cells, markers) are not read
    links = [(m.start(1), m.end(1), m.group(2)) for m in LINK.finditer(text)]
    found = []
    for term, anchor in checked_terms(text):
        first = term_pattern(term).search(text)
        line = text.count("\n", 0, first.start()) + 1 if first else None
        if not first:
            found.append(f"{term}: the text of its glossary link cannot be found as a term")
        elif not any(a <= first.start() and first.end() <= b and t == f"{GLOSSARY}#{anchor}" for a, b, t in links):
            found.append(f"{line}: the first use of \"{term}\" ({first.group(0)!r}) is not a link to "
                         f"{GLOSSARY}#{anchor}")
    return found


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


def check(root, bin_dir=None):
    """Every problem of the checkout at root, as lines to print; the variants are checked against the
    built steps in bin_dir (None: not checked)."""
    root = Path(root).resolve()
    withheld = withheld_steps(root)
    found = []
    for md in markdown_files(root):
        found += problems_in(md, root, withheld)
    readme = root / "README.md"
    if readme.is_file() and (root / GLOSSARY).is_file():
        found += [f"README.md:{p}" for p in undefined_terms(readme.read_text(encoding="utf-8"))]
    published = published_numbers(root)
    cards = CellCards(root)
    for md in markdown_files(root):
        found += typed_figures(md, root, published) + typed_counts(md, root) + shared_folder_mentions(md, root)
        found += mixed_cards(md, root, cards)
    found += ladder_problems(root, withheld) + variant_problems(root, withheld, bin_dir) + test_list_problems(root)
    return found


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to read (default: this one)")
    parser.add_argument("--bin-dir", type=Path, help="the built step executables, asked for their variants "
                        f"(default: ${registrations.BIN_DIR_VARIABLE}, else ROOT/build/bin when there is one)")
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return exit_codes.EXIT_OK if e.code == 0 else exit_codes.EXIT_BAD_ARGUMENT
    bin_dir = built_steps_folder(args.root, args.bin_dir)
    if bin_dir is None:
        print(f"check_docs: the steps' variants were not checked: no built steps in "
              f"{registrations.bin_dir(args.root)} (build them, or give --bin-dir)", file=sys.stderr)
    found = check(args.root, bin_dir)
    for line in found:
        print(line)
    if found:
        print(f"check_docs: {len(found)} broken link(s), path(s) or term(s)", file=sys.stderr)
        return exit_codes.EXIT_CHECK_FAILED
    print(f"check_docs: every link and path of {len(markdown_files(args.root))} Markdown files resolves, "
          "README.md defines its terms before use, no page types a measured figure or a count by hand, and "
          "every paragraph that quotes two GPUs names them")
    return exit_codes.EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
