"""release and check: the student copy, LAB.md, and the leak check; on small trees made here and on
this repository's own steps.

Run from anywhere:  python3 -m unittest discover -s lab/tests -v
"""
import contextlib
import io
import json
import subprocess
import unittest

from lab_test_support import REPOSITORY, TemporaryFolderTest, write_tree

import lab  # noqa: E402  (after lab_test_support, which puts lab/ on the path)
from labkit import release  # noqa: E402
from labkit.rubric import load_rubric  # noqa: E402
from labkit.steps import discover_steps, regions_of, repository_files  # noqa: E402

KERNEL_WITH_REGION = """\
// a kernel
void f(float* c, const float* a) {
  float acc = 0.0f;
  // LAB BEGIN: Sum the row of A into acc.
  for (int i = 0; i < 8; ++i) acc += a[i] * 2.0f;
  // LAB END
  *c = acc;
}
"""


def run_lab(*argv):
    """lab.main(argv): (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = lab.main([str(a) for a in argv])
        except SystemExit as e:  # argparse errors
            code = e.code
    return code, out.getvalue(), err.getvalue()


def small_tree(root):
    """A worklog-shaped tree with the things a copy must leave out."""
    write_tree(root, {
        "CMakeLists.txt": "# top\n",
        "README.md": "# worklog\n",
        "01_alpha/kernel.cu": KERNEL_WITH_REGION,
        "01_alpha/README.md": "# 01_alpha — the first idea\n",
        "02_beta/kernel.cu": "void g() {}\n",
        "common/harness.hpp": "#pragma once\n",
        "lab/tests/test_x.py": "# the kit's tests stay with the solutions\n",
        ".git/config": "[core]\n",
        "build-debug/CMakeCache.txt": "CMAKE_HOME_DIRECTORY:INTERNAL=/x\n",
        "build-debug/bin/01_alpha": "binary\n",
        "old-copy/lab/released.json": "{\"steps\": [\"01_alpha\"]}\n",
        "old-copy/01_alpha/kernel.cu": "old\n",
        "plots/__pycache__/m.cpython-311.pyc": "cache\n",
    })


class SmallTreeTest(TemporaryFolderTest):
    """self.source: a small_tree() in self.tmp."""

    def setUp(self):
        super().setUp()
        self.source = self.tmp / "source"
        small_tree(self.source)


class CopyTest(SmallTreeTest):
    def setUp(self):
        super().setUp()
        self.rubric = load_rubric()

    def test_copy_leaves_out_git_build_trees_earlier_copies_and_the_kit_tests(self):
        out = self.tmp / "copy"
        release.release(self.source, ["01_alpha"], out, self.rubric)
        files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
        self.assertEqual(files, ["01_alpha/README.md", "01_alpha/kernel.cu", "02_beta/kernel.cu", "CMakeLists.txt",
                                 "LAB.md", "README.md", "common/harness.hpp", "lab/released.json"])
        self.assertEqual(json.loads((out / "lab/released.json").read_text())["steps"], ["01_alpha"])

    def test_region_becomes_todo_and_the_rest_is_unchanged(self):
        out = self.tmp / "copy"
        release.release(self.source, ["01_alpha"], out, self.rubric)
        kernel = (out / "01_alpha/kernel.cu").read_text()
        self.assertEqual(kernel, KERNEL_WITH_REGION.replace(
            "  // LAB BEGIN: Sum the row of A into acc.\n  for (int i = 0; i < 8; ++i) acc += a[i] * 2.0f;\n"
            "  // LAB END\n", "  // TODO: Sum the row of A into acc.\n"))
        for same in ("02_beta/kernel.cu", "common/harness.hpp", "README.md"):
            self.assertEqual((out / same).read_bytes(), (self.source / same).read_bytes(), same)

    def test_git_tree_copies_what_git_lists(self):
        source = self.tmp / "gitsource"
        write_tree(source, {"01_alpha/kernel.cu": KERNEL_WITH_REGION, ".gitignore": "ignored.txt\n",
                            "ignored.txt": "local notes\n", "untracked.md": "new\n", "tracked.md": "old\n"})
        try:
            subprocess.run(["git", "init", "-q", str(source)], check=True, capture_output=True)
            subprocess.run(["git", "-C", str(source), "add", "tracked.md", ".gitignore", "01_alpha"], check=True,
                           capture_output=True)
        except (OSError, subprocess.CalledProcessError):
            self.skipTest("git is not available")
        listed = [p.as_posix() for p in repository_files(source)]
        self.assertEqual(listed, [".gitignore", "01_alpha/kernel.cu", "tracked.md", "untracked.md"])

    def test_copy_inside_the_tree_does_not_copy_itself(self):
        out = self.source / "handout"
        release.release(self.source, ["01_alpha"], out, self.rubric)
        self.assertFalse((out / "handout").exists())

    def test_lab_md_points_at_each_todo(self):
        out = self.tmp / "copy"
        release.release(self.source, ["01_alpha"], out, self.rubric)
        guide = (out / "LAB.md").read_text()
        self.assertIn("### 01_alpha — the first idea", guide)
        self.assertIn("- line 4: Sum the row of A into acc.", guide)
        self.assertEqual((out / "01_alpha/kernel.cu").read_text().splitlines()[3].strip(),
                         "// TODO: Sum the row of A into acc.")
        self.assertIn("python3 lab/lab.py grade --submission . --steps 01 --out my-grade", guide)
        self.assertIn("ctest --test-dir build", guide)
        self.assertIn("-L sanitize", guide)


class LeakTest(SmallTreeTest):
    def test_solution_line_elsewhere_in_the_tree_is_a_leak_and_nothing_is_written(self):
        write_tree(self.source, {"common/notes.md": "Hint:\n    for (int i = 0; i < 8; ++i) acc += a[i] * 2.0f;\n"})
        out = self.tmp / "copy"
        with self.assertRaises(release.LeakError) as caught:
            release.release(self.source, ["01_alpha"], out, load_rubric())
        self.assertEqual(len(caught.exception.leaks), 1)
        self.assertTrue(caught.exception.leaks[0].startswith("common/notes.md:2: "), caught.exception.leaks)
        self.assertIn("01_alpha/kernel.cu:5", caught.exception.leaks[0])
        self.assertFalse(out.exists())
        self.assertEqual([p.name for p in self.tmp.iterdir()], ["source"])  # no partial copy left behind

    def test_instruction_quoting_the_solution_is_a_leak(self):
        write_tree(self.source, {"01_alpha/kernel.cu": KERNEL_WITH_REGION.replace(
            "Sum the row of A into acc.", "write: for (int i = 0; i < 8; ++i) acc += a[i] * 2.0f;")})
        leaks = release.Plan(self.source, ["01_alpha"], load_rubric()).leaks()
        self.assertTrue(any(leak.startswith("01_alpha/kernel.cu:4: // TODO: write:") for leak in leaks), leaks)
        self.assertTrue(any(leak.startswith("LAB.md:") for leak in leaks), leaks)

    def test_same_code_with_another_comment_or_spacing_is_a_leak(self):
        write_tree(self.source, {"common/copy.cu": "for (int i = 0;  i < 8; ++i)   acc += a[i] * 2.0f; // mine\n"})
        self.assertEqual(len(release.Plan(self.source, ["01_alpha"], load_rubric()).leaks()), 1)

    def test_trivial_lines_are_not_leaks(self):
        kernel = KERNEL_WITH_REGION.replace(
            "  for (int i", "#pragma unroll\n  __syncthreads();\n  }\n  if constexpr (size > 1) {\n  for (int i")
        write_tree(self.source, {"01_alpha/kernel.cu": kernel,
                                 "common/other.cu": "#pragma unroll\n__syncthreads();\n}\nif constexpr (size > 1) {\n"
                                                    "if constexpr (size > 1)\n"})
        self.assertEqual(release.Plan(self.source, ["01_alpha"], load_rubric()).leaks(), [])

    def test_check_command_reports_the_leak_and_fails(self):
        write_tree(self.source, {"common/notes.md": "for (int i = 0; i < 8; ++i) acc += a[i] * 2.0f;\n"})
        code, out, _ = run_lab("check", "--source", self.source)
        self.assertEqual(code, 1)
        self.assertIn("01_alpha: 1 region(s), 1 solution line(s), 1 LEAK(S)", out)
        self.assertIn("02_beta: no LAB regions", out)


class CommandLineTest(SmallTreeTest):
    def test_release_writes_and_reports(self):
        code, out, err = run_lab("release", "--source", self.source, "--steps", "01", "--out", self.tmp / "c")
        self.assertEqual((code, err), (0, ""))
        self.assertIn("1 region(s) replaced by TODOs in 01_alpha", out)

    def test_bad_input_is_one_line_and_its_exit_code(self):
        (self.tmp / "full").mkdir()
        (self.tmp / "full" / "x").write_text("x")
        rows = [
            (["--steps", "07"], 2, "no step '07' in"),
            (["--steps", "02"], 2, "02_beta has no LAB regions in 02_beta/kernel.cu"),
            (["--steps", "01", "--out", self.tmp / "full"], 2, "exists and is not an empty folder"),
            (["--steps", "01", "--rubric", self.tmp / "none.json"], 2, "not a file"),
        ]
        for args, expected_code, expected_message in rows:
            with self.subTest(args=args):
                if "--out" not in args:
                    args = args + ["--out", self.tmp / "new"]
                code, out, err = run_lab("release", "--source", self.source, *args)
                self.assertEqual(code, expected_code)
                self.assertEqual(len(err.strip().splitlines()), 1, err)
                self.assertIn(expected_message, err)
                self.assertFalse((self.tmp / "new").exists())

    def test_malformed_marker_is_exit_1_with_file_and_line(self):
        write_tree(self.source, {"01_alpha/kernel.cu": KERNEL_WITH_REGION.replace("  // LAB END\n", "")})
        code, _, err = run_lab("release", "--source", self.source, "--steps", "01", "--out", self.tmp / "c")
        self.assertEqual(code, 1)
        self.assertIn("01_alpha/kernel.cu:4: LAB BEGIN is never closed by a // LAB END", err)


class RepositoryReleaseTest(TemporaryFolderTest):
    """Releasing this repository's steps, each alone and all together, leaks no solution line."""

    def test_each_step_alone_and_all_together(self):
        rubric = load_rubric()
        steps = [s for s in discover_steps(REPOSITORY) if regions_of(REPOSITORY, s)]
        for chosen in [[s] for s in steps] + [steps]:
            with self.subTest(steps=chosen):
                self.assertEqual(release.Plan(REPOSITORY, chosen, rubric).leaks(), [])

    def test_release_of_every_step_on_disk(self):
        copy = self.tmp / "copy"
        code, _, err = run_lab("release", "--steps", "all", "--out", copy)
        self.assertEqual(code, 0, err)
        self.assertFalse((copy / ".git").exists())
        self.assertFalse((copy / "lab" / "tests").exists())
        self.assertFalse(any((p / "CMakeCache.txt").exists() for p in copy.rglob("*") if p.is_dir()))
        for step in json.loads((copy / "lab" / "released.json").read_text())["steps"]:
            kernel = (copy / step / "kernel.cu").read_text()
            self.assertIn("// TODO: ", kernel)
            self.assertNotIn("LAB BEGIN", kernel)
        self.assertEqual((copy / "common" / "run_step.cpp").read_bytes(),
                         (REPOSITORY / "common" / "run_step.cpp").read_bytes())


if __name__ == "__main__":
    unittest.main()
