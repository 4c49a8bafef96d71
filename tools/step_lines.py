#!/usr/bin/env python3
"""Code lines per step: what each step's folder holds, what library code it introduces, and what it
adds against the step before it (tools/README.md: step_lines).

A code line is a line of C++ or CUDA that is neither blank nor only a comment. A step's code is the
files of its folder plus the library files that say, in their first lines, that they hold its idea
("(step NN's idea"); a route of the library ("A route of the Hopper library") and the harness count
for no step. What a step builds on is the previous step's code and the library files of earlier
steps' ideas that it includes (directly or through other library files). What a step adds is the
lines of each file of its code that a diff of that file against what the previous step builds on
marks as new or changed, summed over its files (as `diff -u 10_persistent_clusters/kernel.cu
common/sm90/stream_k_kernel.cuh` shows a library file's new lines). --check fails (exit 1) where a step adds more than --max-added lines, a
file of a step folder is longer than --max-file lines, or a source file outside a step's folder
includes a file of a step folder (or one step's file another step's); --allow-adds STEP and
--allow-include FILE name the known exceptions, each of which must still be one.

    python3 tools/step_lines.py [--root DIR] [--check] [--max-added 400] [--max-file 500]
                                [--allow-adds STEP]... [--allow-include FILE]...
"""
import argparse
import difflib
import pathlib
import re
import sys

SOURCES = {".cu", ".cuh", ".hpp", ".cpp", ".h", ".inc"}
IDEA = re.compile(r"\((?:part of )?step (\d\d)'s idea")


def code_lines(path):
    """The code lines of a file, stripped, trailing comments dropped."""
    lines, in_block = [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        text = line.strip()
        if in_block:
            in_block = "*/" not in text
            continue
        if text.startswith("/*"):
            in_block = "*/" not in text
            continue
        if not text or text.startswith("//"):
            continue
        lines.append(re.sub(r"\s+//.*$", "", text))
    return lines


def library_ideas(root):
    """Step number → the library files that hold that step's idea."""
    ideas = {}
    for path in sorted((root / "common").rglob("*")):
        if path.suffix not in SOURCES or not path.is_file() or "tests" in path.relative_to(root).parts:
            continue
        head = " ".join(path.read_text(encoding="utf-8").splitlines()[:4])
        match = IDEA.search(head)
        if match:
            ideas.setdefault(match.group(1), []).append(path)
    return ideas


INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
STEP_FOLDER = re.compile(r"(?:^|/)(\d\d_[a-z0-9_]+)/")


def step_includes(root):
    """(file, line number, included path) of every #include of a file in a step folder, from a file
    that is not in that step's own folder (a step's kernel.cu including its own header is fine)."""
    found = []
    for path in sorted(root.rglob("*")):
        if path.suffix not in SOURCES or not path.is_file() or "build" in path.relative_to(root).parts[:1]:
            continue
        relative = path.relative_to(root).as_posix()
        own = relative.split("/")[0] if re.match(r"\d\d_", relative) else None
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            match = INCLUDE.match(line)
            if not match:
                continue
            step = STEP_FOLDER.search(match.group(1))
            if step and step.group(1) != own:
                found.append((relative, number, match.group(1)))
    return found


def included_ideas(root, paths, ideas):
    """The idea files (of any step) that the files `paths` include, directly or through other files
    of common/, in the order first reached."""
    idea_files = {path for files in ideas.values() for path in files}
    found, seen, queue = [], set(), list(paths)
    while queue:
        path = queue.pop(0)
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            match = INCLUDE.match(line)
            target = root / "common" / match.group(1) if match else None
            if target is None or not target.is_file() or target in seen:
                continue
            seen.add(target)
            queue.append(target)
            if target in idea_files:
                found.append(target)
    return found


def added_lines(base, path):
    """The code lines of `path` that a diff against the lines `base` marks as new or changed."""
    lines = code_lines(path)
    matcher = difflib.SequenceMatcher(None, base, lines, autojunk=False)
    return sum(j2 - j1 for tag, _, _, j1, j2 in matcher.get_opcodes() if tag in ("replace", "insert"))


def rows(root):
    ideas = library_ideas(root)
    previous = []
    for step in sorted(p for p in root.iterdir() if p.is_dir() and re.match(r"\d\d_", p.name)):
        own = [p for p in sorted(step.iterdir()) if p.suffix in SOURCES]
        library = ideas.get(step.name[:2], [])
        added = sum(added_lines(previous, path) for path in own + library)
        longest = max(((len(p.read_text(encoding="utf-8").splitlines()), p) for p in step.iterdir() if p.is_file()),
                      default=(0, None))
        yield {"step": step.name, "folder": sum(len(code_lines(p)) for p in own),
               "library": sum(len(code_lines(p)) for p in library), "adds": added,
               "longest_file": longest, "library_files": [str(p.relative_to(root)) for p in library]}
        # What the next step builds on: this step's code and the earlier ideas it includes.
        built_on = own + library + [p for p in included_ideas(root, own + library, ideas) if p not in library]
        previous = [line for path in built_on for line in code_lines(path)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=pathlib.Path, default=pathlib.Path(__file__).resolve().parent.parent)
    parser.add_argument("--check", action="store_true", help="fail where a step is over the limits")
    parser.add_argument("--max-added", type=int, default=400)
    parser.add_argument("--max-file", type=int, default=500)
    parser.add_argument("--allow-adds", action="append", default=[], metavar="STEP",
                        help="a step known to add more than --max-added lines (it must still do)")
    parser.add_argument("--allow-include", action="append", default=[], metavar="FILE",
                        help="a file known to include a step's file (it must still do)")
    args = parser.parse_args()
    over = []
    print(f"{'step':26} {'folder':>6} {'library':>7} {'adds':>5}  longest file; library files of its idea")
    for row in rows(args.root):
        length, path = row["longest_file"]
        name = f"{path.name} {length}" if path else "-"
        print(f"{row['step']:26} {row['folder']:6} {row['library']:7} {row['adds']:5}  {name}; "
              f"{', '.join(row['library_files']) or '-'}")
        if row["adds"] > args.max_added and row["step"] not in args.allow_adds:
            over.append(f"{row['step']} adds {row['adds']} code lines (at most {args.max_added})")
        elif row["step"] in args.allow_adds and row["adds"] <= args.max_added:
            over.append(f"{row['step']} adds {row['adds']} code lines now: take it off --allow-adds")
        if length > args.max_file:
            over.append(f"{row['step']}/{path.name} has {length} lines (at most {args.max_file})")
    including = set()
    for file, number, included in step_includes(args.root):
        including.add(file)
        if file not in args.allow_include:
            over.append(f"{file}:{number} includes {included}, a step's file")
    for file in args.allow_include:
        if file not in including:
            over.append(f"{file} includes no step's file now: take it off --allow-include")
    for line in over:
        print(f"over the limits: {line}", file=sys.stderr)
    return 1 if args.check and over else 0


if __name__ == "__main__":
    sys.exit(main())
