#!/usr/bin/env python3
"""Renumber steps: make room for a new step by moving every step numbered FROM and above up by SHIFT.

    python3 tools/renumber_steps.py --from 12 [--shift 1] [--root DIR] [--write]

What it can do without judgment, it does (with --write; without it, it only says what it would):

- moves every tracked path that holds a moved step's name (`13_swap_ab/`, `lab/tasks/13_swap_ab.md`,
  `docs/notes/13_swap_ab.md`) to the new name, with `git mv`;
- in every tracked text file, rewrites the moved steps' names (`13_swap_ab`, and names that start
  with one, such as `15_tile_per_shape_calibrate` and `13_swap_ab/narrow_tiles`), the possessive of
  a moved number ("13's") and "step 13" / "steps 13" / "Step 13".

The rest needs a reader, so it lists it and changes nothing there: a moved number elsewhere in
prose or in a comment ("12 and 13", "11–15", "from 12 on"), in code (`prices_of_step(14)`), and in
a path (`tile_prices_14.csv`, `calibrate_14.cu`). The listing's lines are FILE:LINE: text.

Exit codes: 0 done (or, without --write, the plan printed); 2 bad arguments, a step folder that would
collide with an existing one, or a tree that is not a git checkout. Python standard library only.
"""
import argparse
import re
import subprocess
import sys
from pathlib import Path

STEP_DIR = re.compile(r"^(\d\d)_([a-z0-9_]+)$")
TEXT_SUFFIXES = {".md", ".cu", ".cuh", ".hpp", ".cpp", ".h", ".py", ".cmake", ".txt", ".csv", ".json", ".sh",
                 ".yml", ".yaml", ".toml", ".map", ""}
DATA_SUFFIXES = {".csv", ".json", ".txt"}


def steps(root):
    """{number: name} of the step folders at root (01_naive: 1 -> "naive")."""
    found = {}
    for path in sorted(Path(root).iterdir()):
        match = STEP_DIR.match(path.name)
        if path.is_dir() and match:
            found[int(match.group(1))] = match.group(2)
    return found


def mapping(root, first, shift):
    """{old folder name: new folder name} of the steps numbered first and above."""
    known = steps(root)
    moved = {f"{n:02d}_{name}": f"{n + shift:02d}_{name}" for n, name in known.items() if n >= first}
    kept = {f"{n:02d}_{name}" for n, name in known.items() if n < first}
    clash = [new for new in moved.values() if new in kept]
    if clash:
        raise ValueError(f"the new names {', '.join(clash)} are kept steps' folders")
    if any(n + shift > 99 for n in known if n >= first):
        raise ValueError("a step would be numbered above 99")
    return moved


def patterns(moved, numbers):
    """The three rewrites: a moved step's name (or a name that starts with one), a moved number's
    possessive ("13's"), and "step 13" / "steps 13"."""
    names = sorted(moved, key=len, reverse=True)
    number_words = "|".join(f"{n:02d}|{n}" for n in sorted(numbers, reverse=True))
    return [
        (re.compile(r"(?<![A-Za-z0-9])(" + "|".join(map(re.escape, names)) + r")(?![A-Za-z0-9])"),
         lambda m: moved[m.group(1)]),
        (re.compile(r"(?<![\w./-])(?<!CUDA )(" + number_words + r")(['’]s)\b"),
         lambda m: f"{shifted(m.group(1), numbers)}{m.group(2)}"),
        (re.compile(r"\b([Ss]teps?) (" + number_words + r")\b(?![.,]\d)"),
         lambda m: f"{m.group(1)} {shifted(m.group(2), numbers)}"),
    ]


def rewrite(text, moved, numbers):
    """(new text, replacements, the spans of the old text they replaced)."""
    if not moved:
        return text, 0, []
    spans = []
    for pattern, _ in patterns(moved, numbers):
        spans += [(m.start(), m.end(), m) for m in pattern.finditer(text)]
    chosen, at = [], -1
    for start, end, match in sorted(spans, key=lambda s: (s[0], -s[1])):
        if start >= at:
            chosen.append((start, end, match))
            at = end
    pieces, at = [], 0
    by_pattern = patterns(moved, numbers)
    for start, end, match in chosen:
        function = next(f for p, f in by_pattern if p.pattern == match.re.pattern)
        pieces += [text[at:start], function(match)]
        at = end
    return "".join(pieces) + text[at:], len(chosen), [(s, e) for s, e, _ in chosen]


def shifted(word, numbers):
    """A moved number written as it was: two digits stay two ("09" -> "10"), one stays bare."""
    new = numbers[int(word)]
    return f"{new:02d}" if len(word) == 2 else str(new)


CELL = re.compile(r"<!-- cell: .*?<!-- /cell -->")
BLOCK = re.compile(r"<!-- BEGIN generated: .*?<!-- END generated: \S+ -->", re.DOTALL)


def review(text, numbers, replaced):
    """(line number, line) of the lines of the old text that still name a moved number as a bare
    word outside what was rewritten, cells and generated blocks: the reader's; a number that ends a
    sentence ("from 12.") counts. Numbers in a product ("12 × 12") are left out; a range of step
    numbers ("09–12", "11-14", "09 to 15") is listed when it holds a moved number."""
    masked = list(text)
    for start, end in replaced + [m.span() for m in CELL.finditer(text)] + [m.span() for m in BLOCK.finditer(text)]:
        masked[start:end] = [c if c == "\n" else " " for c in text[start:end]]
    masked = "".join(masked)
    words = "|".join(f"{n:02d}|{n}" for n in numbers)
    pattern = re.compile(r"(?<![\w.#/×–-])(?<!× )(?<!– )(" + words + r")(?![\w%×³–-]|\.\d| ×| –)")
    first = min(numbers)
    lines, found = text.splitlines(), []
    for i, line in enumerate(masked.splitlines(), 1):
        spans = any(int(b) >= first and int(a) <= 99 for a, b in RANGE.findall(line))
        if pattern.search(line) or spans:
            found.append((i, lines[i - 1]))
    return found


# A range of two-digit step numbers: "09–12", "11-14", "09 to 15" (the second end at least the first).
RANGE = re.compile(r"(?<![\w.])(\d\d)(?:\s?[–-]\s?| to )(\d\d)(?![\w.%×³]|\.\d)")


def tracked(root):
    try:
        listing = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True, timeout=60)
    except (OSError, subprocess.CalledProcessError) as e:
        raise ValueError(f"{root} is not a git checkout: {e}") from None
    return [p for p in listing.stdout.decode().split("\0") if p]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--from", dest="first", type=int, required=True, help="the first step number that moves")
    parser.add_argument("--shift", type=int, default=1, help="how far the steps move up (default 1)")
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--write", action="store_true", help="move and rewrite (default: say what would change)")
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return 0 if e.code == 0 else 2
    root = args.root.resolve()
    try:
        if args.shift < 1 or args.first < 1:
            raise ValueError("--from and --shift must be at least 1")
        moved = mapping(root, args.first, args.shift)
        files = tracked(root)
    except ValueError as e:
        print(f"renumber_steps: error: {e}", file=sys.stderr)
        return 2
    numbers = {int(old[:2]): int(new[:2]) for old, new in moved.items()}
    for old, new in sorted(moved.items()):
        print(f"step: {old} -> {new}")
    changed, listed = 0, []
    for relative in files:
        path = root / relative
        if path.suffix not in TEXT_SUFFIXES or not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        new, count, replaced = rewrite(text, moved, numbers)
        if count:
            changed += 1
            print(f"rewrite: {relative}: {count} replacement(s)")
            if args.write:
                path.write_text(new, encoding="utf-8")
        if path.suffix not in DATA_SUFFIXES:  # in data, a bare number is a measurement
            listed += [f"{relative}:{i}: {line.strip()}" for i, line in review(text, numbers, replaced)]
    renames = []
    for relative in files:
        new_relative = re.sub(r"(?<![A-Za-z0-9])(" + "|".join(map(re.escape, moved)) + r")(?![A-Za-z0-9])",
                              lambda m: moved[m.group(1)], relative) if moved else relative
        if new_relative != relative:
            renames.append((relative, new_relative))
        elif re.search(r"_(" + "|".join(f"{n:02d}|{n}" for n in numbers) + r")\.\w+$", relative):
            listed.append(f"{relative}: a path with a moved number")
    for old, new in renames:
        print(f"move: {old} -> {new}")
        if args.write:
            (root / new).parent.mkdir(parents=True, exist_ok=True)
            subprocess.run(["git", "mv", old, new], cwd=root, check=True, timeout=60)
            folder = (root / old).parent
            while folder != root and folder.is_dir() and not any(folder.iterdir()):
                folder.rmdir()  # a moved step's folder, once empty
                folder = folder.parent
    for line in listed:
        print(f"review: {line}")
    print(f"renumber_steps: {len(moved)} step(s), {changed} file(s) rewritten, {len(renames)} path(s) moved, "
          f"{len(listed)} line(s) to review" + ("" if args.write else " (nothing written: --write)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
