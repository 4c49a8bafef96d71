#!/usr/bin/env python3
"""A compiler launcher that reuses object files across the lab's release builds (test_build.py).

    CMAKE_CUDA_COMPILER_LAUNCHER=compile_cache.py CMAKE_CXX_COMPILER_LAUNCHER=compile_cache.py \
    COMPILE_CACHE_DIR=DIR cmake ...

CMake runs `compile_cache.py COMPILER ARGS...` for every compilation. Every release of the worklog
is a tree of its own that shares most of its files with the others (the harness, the earlier steps'
solutions), so most compilations repeat one done for another tree: the same command, the same
source, the same headers. This reuses their objects, as ccache does in its "direct mode":

- the key is the command line and the text of the source file and of any response file it names
  (--options-file), with the tree's root and the build folder's written as placeholders (a tree's
  root is the folder above the source that holds CMakePresets.json; the build folder is the one
  above the working directory that holds CMakeCache.txt), so that two trees give the same key;
- a key can have several entries: the headers a compilation read (its -MF dependency file, which
  CMake asks for), each with the SHA-256 of its text when it lies in the tree. An entry is used
  only when every such header has that text in this tree too; then its object and dependency
  file (paths put back) are written where the compiler would have written them;
- otherwise the compiler runs, and its result is stored as a new entry.

Headers outside the tree (the CUDA Toolkit's, the system's) are taken as unchanged during a test.
Python standard library only; the test that uses it checks that a second build of the same tree
is all hits (test_build.py).
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

TREE, BUILD = "@TREE@", "@BUILD@"


def find_upwards(start, marker):
    for folder in [Path(start), *Path(start).parents]:
        if (folder / marker).exists():
            return folder
    return None


def option_value(args, *names):
    for index, arg in enumerate(args[:-1]):
        if arg in names:
            return args[index + 1]
    return None


class Paths:
    """Turns the tree's and the build folder's absolute paths into placeholders and back."""

    def __init__(self, tree, build):
        self.pairs = [(str(p), name) for p, name in ((build, BUILD), (tree, TREE)) if p is not None]

    def hide(self, text):
        for path, name in self.pairs:  # the build folder first: it may lie inside the tree
            text = text.replace(path, name)
        return text

    def show(self, text):
        for path, name in self.pairs:
            text = text.replace(name, path)
        return text


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def dependency_paths(depfile_text):
    """The files a Makefile-style dependency file lists after its first colon."""
    body = depfile_text.replace("\\\n", " ")
    _, _, deps = body.partition(":")
    return [d for d in deps.replace("\\ ", "\0").split() if d]


def note(cache, word, source):
    """One line per compilation in COMPILE_CACHE_DIR/log: hit or miss, and the source."""
    try:
        with open(Path(cache) / "log", "a", encoding="utf-8") as f:
            f.write(f"{word} {source}\n")
    except OSError:
        pass


def main(argv):
    if len(argv) < 2:
        print("compile_cache.py: error: usage: compile_cache.py COMPILER ARGS...", file=sys.stderr)
        return 2
    compiler, args = argv[1], argv[2:]
    cache = os.environ.get("COMPILE_CACHE_DIR")
    output, depfile = option_value(args, "-o"), option_value(args, "-MF")
    sources = [a for a in args if a.endswith((".cu", ".cpp", ".cc", ".c")) and Path(a).is_file()]
    if not cache or not output or not depfile or len(sources) != 1:
        return subprocess.call([compiler, *args])  # not a compilation this can cache
    cwd = Path.cwd()
    source = Path(sources[0]) if Path(sources[0]).is_absolute() else cwd / sources[0]
    paths = Paths(find_upwards(source.parent, "CMakePresets.json"), find_upwards(cwd, "CMakeCache.txt"))

    key_parts = [compiler, paths.hide(str(cwd)), *(paths.hide(a) for a in args), sha256(source.read_bytes())]
    response = option_value(args, "--options-file")
    if response:
        key_parts.append(paths.hide((cwd / response).read_text(encoding="utf-8", errors="replace")))
    folder = Path(cache) / sha256("\0".join(key_parts).encode())[:40]

    for entry in sorted(folder.glob("*/entry.json")) if folder.is_dir() else []:
        try:
            record = json.loads(entry.read_text(encoding="utf-8"))
            if all((Path(paths.show(dep)).is_file() and sha256(Path(paths.show(dep)).read_bytes()) == digest)
                   for dep, digest in record["headers"].items()):
                (cwd / output).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(entry.parent / "object", cwd / output)
                (cwd / depfile).write_text(paths.show(record["depfile"]), encoding="utf-8")
                note(cache, "hit", paths.hide(str(source)))
                return 0
        except (OSError, ValueError, KeyError):
            continue

    code = subprocess.call([compiler, *args])
    note(cache, "miss", paths.hide(str(source)))
    if code != 0:
        return code
    try:
        depfile_text = (cwd / depfile).read_text(encoding="utf-8")
        headers = {}
        for dep in dependency_paths(depfile_text):
            dep_path = Path(dep) if Path(dep).is_absolute() else cwd / dep
            hidden = paths.hide(str(dep_path))
            if hidden != str(dep_path):  # in the tree or the build folder: its text must match
                headers[hidden] = sha256(dep_path.read_bytes())
        folder.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(dir=folder, prefix=".new-"))
        shutil.copyfile(cwd / output, staging / "object")
        (staging / "entry.json").write_text(json.dumps({"headers": headers, "depfile": paths.hide(depfile_text)}),
                                            encoding="utf-8")
        os.replace(staging, folder / sha256(json.dumps(headers, sort_keys=True).encode())[:16])
    except OSError:
        pass  # a cache that cannot be written costs time, not correctness
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
