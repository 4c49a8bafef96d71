#!/usr/bin/env python3
"""A compiler launcher that reuses object files across the lab's release builds (test_build.py).

    CMAKE_CUDA_COMPILER_LAUNCHER=compile_cache.py CMAKE_CXX_COMPILER_LAUNCHER=compile_cache.py \
    COMPILE_CACHE_DIR=DIR cmake ...
    compile_cache.py --seed BUILD_DIR          (COMPILE_CACHE_DIR=DIR: store BUILD_DIR's objects)

CMake runs `compile_cache.py COMPILER ARGS...` for every compilation. Every release of the worklog
is a tree of its own that shares most of its files with the others (the harness, the earlier steps'
solutions), so most compilations repeat one done for another tree: the same command, the same
source, the same headers. This reuses their objects, as ccache does in its "direct mode":

- the key is the command line and the text of the source file and of any response file it names
  (--options-file), with the tree's root and the build folder's written as placeholders (a tree's
  root is the folder above the source that holds CMakePresets.json; the build folder is the one
  above the working directory that holds CMakeCache.txt), so that two trees give the same key; the
  flags that only name the dependency file (-MD, -MT x, -MF x) are left out of it, as CMake leaves
  them out of compile_commands.json;
- a key can have several entries: the headers a compilation read (its -MF dependency file, which
  CMake asks for), each with the SHA-256 of its text when it lies in the tree. An entry is used
  only when every such header has that text in this tree too; then its object and dependency
  file (paths put back) are written where the compiler would have written them;
- otherwise the compiler runs, and its result is stored as a new entry.

Headers outside the tree (the CUDA Toolkit's, the system's) are taken as unchanged during a test.

Several builds may use one cache at once (lab.build builds two releases at a time): a compilation
holds a lock on its key while it looks up and compiles, so that the first build to need an object
compiles it and the others wait for it and reuse it. COMPILE_CACHE_JOBS=N caps the compilers
running at once over all of them. COMPILE_CACHE_DIR/log has a line per compilation: hit or miss,
the source, and for a miss the compiler's CPU seconds.

--seed BUILD_DIR stores the objects an existing build compiled (the one CTest runs lab.build from),
read from its compile_commands.json (CMAKE_EXPORT_COMPILE_COMMANDS) and the dependency file beside
each object (OBJECT.d, which CMake has the compiler write), under the key the launcher computes for
the same compilation in another tree. An object older than its source, a header it read, or its
target's flags (flags.make, else compile_commands.json) is left out: it may not be what the command
makes now. A release's file that differs from the build's, or a flag that does (the releases build
for sm_90 alone; the build may be for more), simply misses. Python standard library only; the
tests that use it check that a second build of the same tree is all hits (test_build.py).
"""
import contextlib
import fcntl
import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "common"))
import exit_codes  # noqa: E402  (common/exit_codes.py: the codes of common/exit_codes.hpp)

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


def key_arguments(args):
    """The arguments that make the object: all but -MD, -MT x and -MF x, which name the dependency
    file and its target."""
    kept, skip = [], False
    for arg in args:
        if skip:
            skip = False
        elif arg in ("-MT", "-MF"):
            skip = True
        elif arg != "-MD":
            kept.append(arg)
    return kept


def cache_folder(cache, compiler, cwd, args, source, paths):
    """The folder of a compilation's entries: named by its key (the module docstring)."""
    key_parts = [compiler, paths.hide(str(cwd)), *(paths.hide(a) for a in key_arguments(args)),
                 sha256(source.read_bytes())]
    response = option_value(args, "--options-file")
    if response:
        key_parts.append(paths.hide((Path(cwd) / response).read_text(encoding="utf-8", errors="replace")))
    return Path(cache) / sha256("\0".join(key_parts).encode())[:40]


def store(folder, object_path, depfile_text, paths, cwd):
    """Stores one entry: the object and its dependency file, with the digest of each header in the
    tree or the build folder. Raises OSError."""
    headers = {}
    for dep in dependency_paths(depfile_text):
        dep_path = Path(dep) if Path(dep).is_absolute() else Path(cwd) / dep
        hidden = paths.hide(str(dep_path))
        if hidden != str(dep_path):  # in the tree or the build folder: its text must match
            headers[hidden] = sha256(dep_path.read_bytes())
    folder.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=folder, prefix=".new-"))
    shutil.copyfile(object_path, staging / "object")
    (staging / "entry.json").write_text(json.dumps({"headers": headers, "depfile": paths.hide(depfile_text)}),
                                        encoding="utf-8")
    target = folder / sha256(json.dumps(headers, sort_keys=True).encode())[:16]
    if target.exists():
        shutil.rmtree(staging)  # the same entry, stored before
    else:
        os.replace(staging, target)


def note(cache, word, source, seconds=None):
    """One line per compilation in COMPILE_CACHE_DIR/log: hit or miss, the source, and for a miss
    the compiler's CPU seconds (its user and system time)."""
    try:
        with open(Path(cache) / "log", "a", encoding="utf-8") as f:
            f.write(f"{word} {source}" + (f" {seconds:.1f}" if seconds is not None else "") + "\n")
    except OSError:
        pass


def main(argv):
    if len(argv) < 2 or (argv[1] == "--seed" and (len(argv) != 3 or not os.environ.get("COMPILE_CACHE_DIR"))):
        print("compile_cache.py: error: usage: compile_cache.py COMPILER ARGS..., or COMPILE_CACHE_DIR=DIR "
              "compile_cache.py --seed BUILD_DIR", file=sys.stderr)
        return exit_codes.EXIT_BAD_ARGUMENT
    cache = os.environ.get("COMPILE_CACHE_DIR")
    if argv[1] == "--seed":
        try:
            stored, left_out = seed(cache, argv[2])
        except (OSError, ValueError) as e:
            print(f"compile_cache.py: error: cannot seed from {argv[2]}: {e}", file=sys.stderr)
            return exit_codes.EXIT_BAD_ARGUMENT
        print(f"compile_cache.py: {stored} object(s) of {argv[2]} stored, {left_out} left out")
        return 0
    compiler, args = argv[1], argv[2:]
    output, depfile = option_value(args, "-o"), option_value(args, "-MF")
    sources = [a for a in args if a.endswith((".cu", ".cpp", ".cc", ".c")) and Path(a).is_file()]
    if not cache or not output or not depfile or len(sources) != 1:
        return subprocess.call([compiler, *args])  # not a compilation this can cache
    cwd = Path.cwd()
    source = Path(sources[0]) if Path(sources[0]).is_absolute() else cwd / sources[0]
    paths = Paths(find_upwards(source.parent, "CMakePresets.json"), find_upwards(cwd, "CMakeCache.txt"))
    folder = cache_folder(cache, compiler, cwd, args, source, paths)

    # Builds that share the cache at the same time (lab.build builds two releases at once): the
    # first to need an object compiles it, the others wait for it and reuse it.
    with locked(Path(cache) / "locks" / folder.name):
        if reuse(folder, cwd, output, depfile, paths):
            note(cache, "hit", paths.hide(str(source)))
            return 0
        with compile_slot(cache):
            before = os.times()
            code = subprocess.call([compiler, *args])
            after = os.times()
        note(cache, "miss", paths.hide(str(source)),
             after.children_user + after.children_system - before.children_user - before.children_system)
        if code != 0:
            return code
        try:
            store(folder, cwd / output, (cwd / depfile).read_text(encoding="utf-8"), paths, cwd)
        except OSError:
            pass  # a cache that cannot be written costs time, not correctness
    return 0


def reuse(folder, cwd, output, depfile, paths):
    """Writes a stored entry's object and dependency file where the compiler would have, if one
    matches (every header it read has its text in this tree too); False when none does."""
    for entry in sorted(folder.glob("*/entry.json")) if folder.is_dir() else []:
        try:
            record = json.loads(entry.read_text(encoding="utf-8"))
            if all((Path(paths.show(dep)).is_file() and sha256(Path(paths.show(dep)).read_bytes()) == digest)
                   for dep, digest in record["headers"].items()):
                (cwd / output).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(entry.parent / "object", cwd / output)
                (cwd / depfile).write_text(paths.show(record["depfile"]), encoding="utf-8")
                return True
        except (OSError, ValueError, KeyError):
            continue
    return False


@contextlib.contextmanager
def locked(path):
    """Holds an exclusive lock on the file `path` (made if need be) while the block runs."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextlib.contextmanager
def compile_slot(cache):
    """With COMPILE_CACHE_JOBS=N, at most N compilations run at once across every build using this
    cache (each build asks for its own -j: two builds at once on a small machine would otherwise
    run twice as many compilers as it has memory for); without it, no limit."""
    try:
        slots = int(os.environ.get("COMPILE_CACHE_JOBS", "0"))
    except ValueError:
        slots = 0
    if slots <= 0:
        yield
        return
    folder = Path(cache) / "slots"
    folder.mkdir(parents=True, exist_ok=True)
    while True:
        for index in range(slots):
            handle = open(folder / str(index), "a")
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                handle.close()
                continue
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)
                handle.close()
            return
        time.sleep(0.2)


def flags_file(cwd, output):
    """The file whose change makes CMake recompile `output`: its target's flags.make (Makefiles),
    else None."""
    for folder in (Path(cwd) / output).parents:
        if folder.name.endswith(".dir"):
            return folder / "flags.make" if (folder / "flags.make").is_file() else None
    return None


def seed(cache, build_dir):
    """Stores the up-to-date objects of the build in build_dir (the module docstring); returns
    (stored, left out). Raises OSError when build_dir has no compile_commands.json."""
    listing = Path(build_dir) / "compile_commands.json"
    entries = json.loads(listing.read_text(encoding="utf-8"))
    stored = left_out = 0
    for entry in entries:
        try:
            words = shlex.split(entry["command"]) if "command" in entry else list(entry["arguments"])
            compiler, args, cwd = words[0], words[1:], Path(entry["directory"])
            output = option_value(args, "-o")
            source = Path(entry["file"]) if Path(entry["file"]).is_absolute() else cwd / entry["file"]
            obj, depfile = cwd / output, cwd / (output + ".d")
            depfile_text = depfile.read_text(encoding="utf-8")
            made = obj.stat().st_mtime_ns
            flags = flags_file(cwd, output) or listing
            inputs = [source, flags] + [Path(d) if Path(d).is_absolute() else cwd / d
                                        for d in dependency_paths(depfile_text)]
            if any(path.stat().st_mtime_ns > made for path in inputs):
                left_out += 1  # built before its source, a header or its flags changed
                continue
            paths = Paths(find_upwards(source.parent, "CMakePresets.json"), find_upwards(cwd, "CMakeCache.txt"))
            store(cache_folder(cache, compiler, cwd, args, source, paths), obj, depfile_text, paths, cwd)
            stored += 1
        except (OSError, KeyError, TypeError, ValueError, IndexError):
            left_out += 1  # an entry without an object or a dependency file beside it (not yet built)
    return stored, left_out


if __name__ == "__main__":
    sys.exit(main(sys.argv))
