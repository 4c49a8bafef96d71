#!/usr/bin/env python3
"""Every link and repository path the READMEs name exists, README.md defines its terms first, and no
page types a measured figure or a count by hand.

    python3 docs/check_docs.py [--root DIR]

The files read: README.md, every directory's README.md one level down (a new step's too), the other
pages beside a step's code, docs/*.md (docs/routes.md, say) and the steps' notes pages, docs/notes/*.md.
In each:

- every Markdown link and image, `[text](target)`, whose target is not a web address (http, https,
  mailto): the file or folder must exist, relative to the Markdown file; an anchor (`#part`) must name
  a heading of the file it points into (GitHub's slugs: lower case, punctuation dropped, spaces to
  hyphens), or of the same file when the target is only `#part`;
- every repository path written in code (inline `code` or a fenced block): a word with a slash whose
  first component is a file or folder of the repository root, or of the Markdown file's own folder
  (so `plots/results/shapes.csv`, `common/hopper.cuh`), or a step's
  folder name (`13_swap_ab/kernel.cu`); it must exist. Paths under `build/` are what a build writes
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

The lessons stay short and their sources editable (lesson_limits): a step's README.md at most
SHORT_LESSON_LINES lines for 01-06 and LESSON_LINES for every later step, README.md at most
FRONT_PAGE_LINES, at most CELL_LIMIT inline cells over all the pages read, and no line with more
than CELLS_PER_LINE cells.

Two rules wait for the device's re-measurement, so by default they only list what they find (on
stdout, after the problems, each line starting "listed:"); --strict makes them problems:

- no figure measured on earlier code of its step: the filler marks each one (plots/readme/codes.py,
  docs/figures.md), and the check finds the marks;
- no table or sentence of two cards: no paragraph whose cells quote rows of two or more GPUs (named
  or not), and no generated table whose rows are of two or more GPUs.

Exit codes (common/exit_codes.hpp): 0 every link and path resolves (and, with --strict, nothing is
listed); 1 some do not (each printed as FILE:LINE: what); 2 bad arguments. Python standard library
only.
"""
import argparse
import json
import os
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from figure_rules import (CELL, CODE_SPAN, COMMENT, FENCE, GENERATED, LADDER_FIRST_SCREEN, LINK, NOT_MEASURED,  # noqa: E402
                          PENDING_REWRITE, ROOT, BlockCards, CellCards, _blank, built_steps_folder, earlier_figures,
                          ladder_problems, mixed_cards, published_numbers, shared_folder_mentions, split_lines,
                          test_list_problems, two_card_figures, typed_counts, typed_figures, variant_problems)
import exit_codes  # noqa: E402  (common/exit_codes.py: the codes of common/exit_codes.hpp)
from run import registrations  # noqa: E402,F401  (plots/run/registrations.py: what a built step registers)

HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
WEB = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)  # http:, https:, mailto:
STEP_DIR = re.compile(r"^\d\d_[a-z0-9_]+$")
PLACEHOLDER = re.compile(r"[<>*…{}$]|\bNN_|\.\.\.")
EXEMPT_ROOTS = {"build"}  # what a build writes
EXEMPT_PATHS = {"lab/released.json"}  # what lab/lab.py release writes into a student copy
GLOSSARY = "docs/glossary.md"
SHORT_LESSON_LINES = 120  # steps 01-06: one idea on CUDA cores or WMMA
LESSON_LINES = 200  # every later step
FRONT_PAGE_LINES = 300  # README.md
CELL_LIMIT = 500  # inline cells over every page read: prose points to tables more than it quotes
CELLS_PER_LINE = 2  # more, and a line cannot be edited by hand


def markdown_files(root):
    """README.md, every */README.md, a step's other pages (NN_name/*.md), docs/*.md and the steps' notes
    pages (docs/notes/*.md) under root, in that order."""
    root = Path(root)
    beside = sorted(p for p in root.glob("[0-9][0-9]_*/*.md") if p.name != "README.md")
    files = [root / "README.md", *sorted(root.glob("*/README.md")), *beside, *sorted((root / "docs").glob("*.md")),
             *sorted((root / "docs" / "notes").glob("*.md"))]
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


def strict_findings(root):
    """What --strict fails on, as lines: figures of earlier code, tables and sentences of two cards."""
    root = Path(root).resolve()
    cards = CellCards(root)
    blocks = BlockCards(cards)
    found = []
    for md in markdown_files(root):
        found += earlier_figures(md, root) + two_card_figures(md, root, cards, blocks)
    return found


def lesson_limits(root):
    """FILE[:LINE]: what, for each lesson over its length, each line with too many cells, and the
    pages' cells over CELL_LIMIT."""
    root = Path(root)
    found, cells = [], 0
    for md in markdown_files(root):
        name = md.relative_to(root).as_posix()
        lines = md.read_text(encoding="utf-8").splitlines()
        limit = None
        if name == "README.md":
            limit = FRONT_PAGE_LINES
        elif STEP_DIR.match(md.parent.name) and md.name == "README.md" and md.parent.parent == root:
            limit = SHORT_LESSON_LINES if int(md.parent.name[:2]) <= 6 else LESSON_LINES
        if limit is not None and len(lines) > limit:
            found.append(f"{name}: {len(lines)} lines, over the {limit} a lesson may have (docs/contributing.md)")
        for number, line in enumerate(lines, 1):
            count = len(CELL.findall(line))
            cells += count
            if count > CELLS_PER_LINE:
                found.append(f"{name}:{number}: {count} cells on one line (at most {CELLS_PER_LINE})")
    if cells > CELL_LIMIT:
        found.append(f"{cells} inline cells over the pages, over the {CELL_LIMIT} allowed: point to a table instead")
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
    found += lesson_limits(root)
    return found


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to read (default: this one)")
    parser.add_argument("--bin-dir", type=Path, help="the built step executables, asked for their variants "
                        f"(default: ${registrations.BIN_DIR_VARIABLE}, else ROOT/build/bin when there is one)")
    parser.add_argument("--strict", action="store_true", help="fail on figures measured on earlier code and on "
                        "tables or sentences of two cards (listed otherwise)")
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return exit_codes.EXIT_OK if e.code == 0 else exit_codes.EXIT_BAD_ARGUMENT
    bin_dir = built_steps_folder(args.root, args.bin_dir)
    if bin_dir is None:
        print(f"check_docs: the steps' variants were not checked: no built steps in "
              f"{registrations.bin_dir(args.root)} (build them, or give --bin-dir)", file=sys.stderr)
    found = check(args.root, bin_dir)
    listed = strict_findings(args.root)
    if args.strict:
        found += listed
    for line in found:
        print(line)
    if not args.strict:
        for line in listed:
            print(f"listed: {line}")
        if listed:
            print(f"check_docs: {len(listed)} line(s) listed: figures measured on earlier code, or of two cards in one "
                  "table or sentence (--strict fails on them)", file=sys.stderr)
    if found:
        print(f"check_docs: {len(found)} broken link(s), path(s) or term(s)", file=sys.stderr)
        return exit_codes.EXIT_CHECK_FAILED
    print(f"check_docs: every link and path of {len(markdown_files(args.root))} Markdown files resolves, "
          "README.md defines its terms before use, no page types a measured figure or a count by hand, and "
          "every paragraph that quotes two GPUs names them")
    return exit_codes.EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
