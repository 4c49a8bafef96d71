"""compile_cache.py, the compiler launcher of lab.build, with a fake compiler (a script that writes its
object and dependency file and counts its runs): a second tree that compiles the same file hits; a
changed header misses; two trees compiling it at the same moment compile it once; the objects of an existing build seed the cache, unless they are older than
what they were made from. Quick: no nvcc, no CMake.

Run from anywhere:  python3 -m unittest discover -s lab/tests -v
"""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from lab_test_support import TemporaryFolderTest, executable, write_tree

SCRIPT = Path(__file__).resolve().with_name("compile_cache.py")

# A compiler as CMake runs one: `cc [-MD -MT obj -MF dep] -I... -c SOURCE -o OBJECT`; it writes the
# object (the source's text and a header's) and the dependency file, and counts its runs.
FAKE_COMPILER = """#!/bin/sh
out=""; dep=""; src=""
while [ $# -gt 0 ]; do
  case "$1" in
    -o) out="$2"; shift ;;
    -MF) dep="$2"; shift ;;
    -MT) shift ;;
    *.cu) src="$1" ;;
  esac
  shift
done
root=$(dirname "$(dirname "$src")")
echo run >> "$COUNT"
sleep "${SLOW:-0}"
cat "$src" "$root/common/util.cuh" > "$out"
[ -n "$dep" ] && printf '%s: %s \\\\\\n  %s\\n' "$out" "$src" "$root/common/util.cuh" > "$dep"
exit 0
"""


class CompileCacheTest(TemporaryFolderTest):
    def setUp(self):
        super().setUp()
        self.compiler = executable(self.tmp / "cc", FAKE_COMPILER)
        self.count = self.tmp / "runs"
        self.cache = self.tmp / "cache"
        self.env = dict(os.environ, COUNT=str(self.count), COMPILE_CACHE_DIR=str(self.cache))

    def tree(self, name, util="int u;\n"):
        """A tree (CMakePresets.json at its root) with a source and a header, and its build folder."""
        root = self.tmp / name
        write_tree(root, {"CMakePresets.json": "{}\n", "01_x/kernel.cu": "int k;\n", "common/util.cuh": util,
                          "build/CMakeCache.txt": "\n"})
        (root / "build" / "obj").mkdir()
        return root

    def compile(self, root, depfile=True):
        """The launcher, as CMake runs it in the build folder: (exit code, the compiler's runs so far)."""
        flags = ["-MD", "-MT", "obj/kernel.cu.o", "-MF", "obj/kernel.cu.o.d"] if depfile else []
        done = subprocess.run([sys.executable, str(SCRIPT), str(self.compiler), *flags, f"-I{root}/common", "-c",
                               str(root / "01_x" / "kernel.cu"), "-o", "obj/kernel.cu.o"],
                              cwd=root / "build", env=self.env, capture_output=True, text=True)
        runs = len(self.count.read_text().split()) if self.count.exists() else 0
        return done.returncode, runs

    def test_another_tree_with_the_same_files_hits(self):
        first, second = self.tree("a"), self.tree("b")
        self.assertEqual(self.compile(first), (0, 1))
        self.assertEqual(self.compile(second), (0, 1))  # the object and dependency file put back
        self.assertEqual((second / "build/obj/kernel.cu.o").read_text(), "int k;\nint u;\n")
        self.assertIn(f"{second}/01_x/kernel.cu", (second / "build/obj/kernel.cu.o.d").read_text())
        third = self.tree("c", util="int changed;\n")
        self.assertEqual(self.compile(third), (0, 2))  # a header of the tree differs: compiled

    def test_two_builds_at_once_compile_a_file_once(self):
        """Two trees compile the same file at the same moment (lab.build builds two releases at a
        time): one compiles, the other waits for it and reuses its object; the log says which, with
        the compiler's CPU seconds for the one compiled."""
        self.env.update(SLOW="1", COMPILE_CACHE_JOBS="1")
        trees = [self.tree("a"), self.tree("b")]
        flags = ["-MD", "-MT", "obj/kernel.cu.o", "-MF", "obj/kernel.cu.o.d"]
        running = [subprocess.Popen([sys.executable, str(SCRIPT), str(self.compiler), *flags, f"-I{root}/common",
                                     "-c", str(root / "01_x" / "kernel.cu"), "-o", "obj/kernel.cu.o"],
                                    cwd=root / "build", env=self.env) for root in trees]
        self.assertEqual([process.wait() for process in running], [0, 0])
        self.assertEqual(len(self.count.read_text().split()), 1)
        for root in trees:
            self.assertEqual((root / "build/obj/kernel.cu.o").read_text(), "int k;\nint u;\n")
        log = sorted(line.split()[0] for line in (self.cache / "log").read_text().splitlines())
        self.assertEqual(log, ["hit", "miss"])
        self.assertRegex((self.cache / "log").read_text(), r"(?m)^miss @TREE@/01_x/kernel\.cu \d+\.\d$")

    def configure(self, root):
        """compile_commands.json of root's build, as CMake writes it when it configures, before the
        build (without the dependency flags)."""
        build = root / "build"
        (build / "compile_commands.json").write_text(json.dumps([{
            "directory": str(build), "file": str(root / "01_x/kernel.cu"), "output": "obj/kernel.cu.o",
            "command": f"{self.compiler} -I{root}/common -c {root}/01_x/kernel.cu -o obj/kernel.cu.o"}]))

    def seed_build(self, root):
        """The launcher's --seed of root's build: (exit code, what it printed)."""
        done = subprocess.run([sys.executable, str(SCRIPT), "--seed", str(root / "build")], env=self.env,
                              capture_output=True, text=True)
        return done.returncode, done.stdout + done.stderr

    def test_a_builds_objects_seed_the_cache(self):
        built = self.tree("built")
        self.configure(built)
        self.compile(built)  # the build's own compilation (through the launcher here, only to make it)
        self.cache.rename(self.tmp / "unused")  # a fresh cache: only the seed may fill it
        self.assertEqual(self.seed_build(built), (0, f"compile_cache.py: 1 object(s) of {built / 'build'} stored, "
                                                    "0 left out\n"))
        release = self.tree("release")
        self.assertEqual(self.compile(release), (0, 1))  # a hit: the compiler ran once, for the build

    def test_an_object_older_than_its_header_or_its_flags_is_left_out(self):
        built = self.tree("built")
        self.configure(built)
        self.compile(built)
        self.cache.rename(self.tmp / "unused")
        later = time.time() + 5
        os.utime(built / "common/util.cuh", (later, later))  # edited since the build
        self.assertEqual(self.seed_build(built)[1], f"compile_cache.py: 0 object(s) of {built / 'build'} stored, "
                                                    "1 left out\n")
        self.assertEqual(self.compile(self.tree("release")), (0, 2))
        os.utime(built / "common/util.cuh", (time.time() - 5, time.time() - 5))
        self.configure(built)  # configured again since the build (its flags may have changed): not taken
        self.assertEqual(self.seed_build(built)[1], f"compile_cache.py: 0 object(s) of {built / 'build'} stored, "
                                                    "1 left out\n")

    def test_bad_usage_is_one_line_and_exit_code_2(self):
        for argv in (["--seed"], ["--seed", str(self.tmp / "nowhere")]):
            with self.subTest(argv=argv):
                done = subprocess.run([sys.executable, str(SCRIPT), *argv], env=self.env, capture_output=True,
                                      text=True)
                self.assertEqual(done.returncode, 2)
                self.assertEqual(len(done.stderr.strip().splitlines()), 1, done.stderr)
                self.assertTrue(done.stderr.startswith("compile_cache.py: error: "), done.stderr)
