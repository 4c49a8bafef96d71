"""release and check: the student copy, LAB.md, the leak check of solution lines, levels, regions
in headers, and the command line; on small trees made here. test_leaks.py has the rest of the leak
check: renamed copies, repeat regions, and this repository's own steps.

Run from anywhere:  python3 -m unittest discover -s lab/tests -v
"""
import contextlib
import io
import json
import subprocess
import unittest

from lab_test_support import TemporaryFolderTest, write_tree

import lab  # noqa: E402  (after lab_test_support, which puts lab/ on the path)
from labkit import release  # noqa: E402
from labkit.rubric import load_rubric  # noqa: E402
from labkit.steps import UsageError, later_steps, registrations, repository_files  # noqa: E402

KERNEL_WITH_REGION = """\
// a kernel
void f(float* c, const float* a) {
  float acc = 0.0f;
  // LAB BEGIN row_sum
  for (int i = 0; i < 8; ++i) acc += a[i] * 2.0f;
  // LAB END
  *c = acc;
}
"""
# Its task, in the course's file of the step (labkit/tasks.py).
ALPHA_TASKS = ("lab/tasks/01_alpha.md", "# 01_alpha\n\n## row_sum\n\nSum the row of A into acc.\n")


def run_lab(*argv):
    """lab.main(argv): (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = lab.main([str(a) for a in argv])
        except SystemExit as e:  # argparse errors
            code = e.code
    return code, out.getvalue(), err.getvalue()


SMALL_CMAKE = """# top
add_worklog_step(01_alpha)
add_worklog_step(02_beta HOPPER
                 FALLBACK 01_alpha)  # a call on two lines, with a comment
"""


def small_tree(root):
    """A worklog-shaped tree with the things a copy must leave out."""
    write_tree(root, {
        "CMakeLists.txt": SMALL_CMAKE,
        "README.md": "# worklog\n",
        "01_alpha/kernel.cu": KERNEL_WITH_REGION,
        ALPHA_TASKS[0]: ALPHA_TASKS[1],
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

    def test_copy_leaves_out_git_build_trees_earlier_copies_the_kit_tests_and_later_steps(self):
        out = self.tmp / "copy"
        release.release(self.source, ["01_alpha"], out, self.rubric)
        files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
        self.assertEqual(files, ["01_alpha/README.md", "01_alpha/kernel.cu", "CMakeLists.txt",
                                 "LAB.md", "README.md", "common/harness.hpp", "lab/handouts/01_alpha.md",
                                 "lab/released.json",
                                 "lab/tasks/01_alpha.md"])
        record = json.loads((out / "lab/released.json").read_text())
        self.assertEqual((record["steps"], record["withheld"]), (["01_alpha"], ["02_beta"]))
        # The later step is out of the build's list of steps too, its two lines and comment with it.
        self.assertEqual((out / "CMakeLists.txt").read_text(), "# top\nadd_worklog_step(01_alpha)\n")
        self.assertIn("`02_beta`", (out / "LAB.md").read_text())

    def test_lab_md_gives_each_steps_performance_shape(self):
        self.rubric["performance"]["sizes"] = {"02": [16, 4096, 4096]}
        out = self.tmp / "copy"
        release.release(self.source, ["01_alpha"], out, self.rubric)
        self.assertIn("your speed at 4096×4096×4096 against", (out / "LAB.md").read_text())
        both = self.tmp / "both"
        release.release(self.source, ["01_alpha", "02_beta"], both, self.rubric)
        self.assertIn("your speed at 4096×4096×4096 but 02_beta at 16×4096×4096 against", (both / "LAB.md").read_text())

    def test_a_later_step_kept_on_request(self):
        out = self.tmp / "copy"
        plan = release.release(self.source, ["01_alpha"], out, self.rubric, keep=["02_beta"])
        self.assertEqual(plan.withheld, [])
        self.assertEqual((out / "02_beta/kernel.cu").read_bytes(), (self.source / "02_beta/kernel.cu").read_bytes())
        self.assertEqual((out / "CMakeLists.txt").read_text(), SMALL_CMAKE)

    def test_a_kept_step_needs_its_fallback(self):
        write_tree(self.source, {"03_gamma/kernel.cu": "void h() {}\n",
                                 "CMakeLists.txt": SMALL_CMAKE + "add_worklog_step(03_gamma FALLBACK 02_beta)\n"})
        with self.assertRaisesRegex(UsageError, "03_gamma hands shapes to 02_beta \\(FALLBACK\\), which this copy "
                                                "leaves out"):
            release.Plan(self.source, ["01_alpha"], self.rubric, keep=["03_gamma"])

    def test_registrations_are_read_from_any_cmake_file(self):
        write_tree(self.source, {"CMakeLists.txt": "include(cmake/steps.cmake)\n",
                                 "cmake/steps.cmake": "function(add_worklog_step step)\nendfunction()\n"
                                                      "# add_worklog_step(<directory> [HOPPER])\n" + SMALL_CMAKE})
        found = registrations(self.source)
        self.assertEqual(sorted(found), ["01_alpha", "02_beta"])
        self.assertEqual((found["02_beta"].path.as_posix(), found["02_beta"].hopper, found["02_beta"].fallback),
                         ("cmake/steps.cmake", True, "01_alpha"))
        self.assertEqual(later_steps(self.source, ["01_alpha"]), ["02_beta"])

    def test_region_becomes_todo_and_the_rest_is_unchanged(self):
        out = self.tmp / "copy"
        release.release(self.source, ["01_alpha"], out, self.rubric)
        kernel = (out / "01_alpha/kernel.cu").read_text()
        self.assertEqual(kernel, KERNEL_WITH_REGION.replace(
            "  // LAB BEGIN row_sum\n  for (int i = 0; i < 8; ++i) acc += a[i] * 2.0f;\n"
            "  // LAB END\n", "  // TODO: Sum the row of A into acc.\n"))
        for same in ("common/harness.hpp", "README.md"):
            self.assertEqual((out / same).read_bytes(), (self.source / same).read_bytes(), same)

    def test_git_tree_copies_what_git_lists(self):
        source = self.tmp / "gitsource"
        write_tree(source, {"01_alpha/kernel.cu": KERNEL_WITH_REGION, ALPHA_TASKS[0]: ALPHA_TASKS[1],
                            ".gitignore": "ignored.txt\n",
                            "ignored.txt": "local notes\n", "untracked.md": "new\n", "tracked.md": "old\n"})
        try:
            subprocess.run(["git", "init", "-q", str(source)], check=True, capture_output=True)
            subprocess.run(["git", "-C", str(source), "add", "tracked.md", ".gitignore", "01_alpha"], check=True,
                           capture_output=True)
        except (OSError, subprocess.CalledProcessError):
            self.skipTest("git is not available")
        listed = [p.as_posix() for p in repository_files(source)]
        self.assertEqual(listed, [".gitignore", "01_alpha/kernel.cu", "lab/tasks/01_alpha.md", "tracked.md",
                                  "untracked.md"])

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
        write_tree(self.source, {ALPHA_TASKS[0]: ALPHA_TASKS[1].replace(
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
        self.assertIn("01_alpha: 1 region(s), 1 solution line(s) (lines per level: easy 1, medium 1, hard 1); "
                      "its release leaves out 02_beta; 1 LEAK(S)", out)
        self.assertIn("02_beta: no LAB regions", out)


LEVELED_KERNEL = """\
void f(float* c, const float* a) {
  float acc = 0.0f;
  // LAB BEGIN reduction [hard]
  for (int i = 0; i < 8; ++i) {
    // LAB BEGIN add_term
    acc += a[i] * 3.0f;
    // LAB END
  }
  acc = scale_by_the_step_factor(acc, 2.5f);
  // LAB END
  *c = acc;
}
"""
LEVELED_TASKS = "## reduction\n\nWrite the reduction.\n\n## add_term\n\nAdd a[i] to acc.\n"


class LevelReleaseTest(SmallTreeTest):
    def test_a_release_at_the_hard_level_blanks_the_whole_idea(self):
        write_tree(self.source, {"01_alpha/kernel.cu": LEVELED_KERNEL, ALPHA_TASKS[0]: LEVELED_TASKS})
        out = self.tmp / "hard"
        code, printed, err = run_lab("release", "--source", self.source, "--steps", "01", "--level", "hard",
                                     "--out", out)
        self.assertEqual((code, err), (0, ""))
        self.assertIn("(level hard)", printed)
        kernel = (out / "01_alpha/kernel.cu").read_text()
        self.assertIn("  // TODO: Write the reduction.\n  *c = acc;", kernel)
        self.assertNotIn("scale_by", kernel)
        guide = (out / "LAB.md").read_text()
        self.assertIn("- line 3: Write the reduction.", guide)
        self.assertIn("level **hard**", guide)
        easy = (self.tmp / "easy")
        release.release(self.source, ["01_alpha"], easy, load_rubric())
        self.assertIn("acc = scale_by_the_step_factor(acc, 2.5f);", (easy / "01_alpha/kernel.cu").read_text())
        self.assertNotIn("// LAB", (easy / "01_alpha/kernel.cu").read_text())

    def test_check_reports_lines_per_level_and_leaks_at_each(self):
        # The hard region's own line in the harness: a leak only for a release at the hard level.
        write_tree(self.source, {"01_alpha/kernel.cu": LEVELED_KERNEL, ALPHA_TASKS[0]: LEVELED_TASKS,
                                 "common/util.cuh": "acc = scale_by_the_step_factor(acc, 2.5f);\n"})
        code, out, _ = run_lab("check", "--source", self.source)
        self.assertEqual(code, 1)
        self.assertIn("01_alpha: 2 region(s), 4 solution line(s) (lines per level: easy 1, medium 1, hard 4); "
                      "its release leaves out 02_beta; 1 LEAK(S) at level hard", out)
        self.assertIn("  common/util.cuh:1: acc = scale_by_the_step_factor(acc, 2.5f);  (solution line "
                      "01_alpha/kernel.cu:9)", out)
        self.assertEqual(release.Plan(self.source, ["01_alpha"], load_rubric()).leaks(), [])  # easy: clean
        with self.assertRaises(release.LeakError):
            release.release(self.source, ["01_alpha"], self.tmp / "copy", load_rubric(), level="hard")

    def test_a_release_records_the_level_the_removed_folders_and_the_handout(self):
        out = self.tmp / "copy"
        release.release(self.source, ["01_alpha"], out, load_rubric())
        record = json.loads((out / "lab/released.json").read_text())
        self.assertEqual((record["level"], record["removed"]), ("easy", ["lab/tests", "plots/tests", "lab/course"]))
        handout = record["handout"]["01_alpha/kernel.cu"]
        self.assertEqual(handout["lines"], (out / "01_alpha/kernel.cu").read_text().splitlines())
        self.assertEqual(handout["todos"], [[4, 1]])


class HeaderRegionTest(TemporaryFolderTest):
    """A step's regions may be in a header of its folder (11's schedule in split_k_schedule.cuh, which
    13 and 14 include): released, listed in LAB.md and recorded like a kernel.cu's, and a later step
    repeating its code is told to go out with it."""

    def setUp(self):
        super().setUp()
        self.source = self.tmp / "source"
        write_tree(self.source, {
            "CMakeLists.txt": "add_worklog_step(01_alpha)\nadd_worklog_step(02_beta)\n",
            "01_alpha/kernel.cu": '#include "schedule.cuh"\nvoid f() {}\n',
            "01_alpha/schedule.cuh": "inline long long first_of(int u, int q, int rem) {\n"
                                     "  // LAB BEGIN first_of\n"
                                     "  return (long long)u * q + (u < rem ? u : rem);\n"
                                     "  // LAB END\n}\n",
            "02_beta/kernel.cu": "long long g(int u, int q, int rem) {\n"
                                 "  // LAB BEGIN deal\n"
                                 "  if (q < 0) return 0;\n"
                                 "  return (long long)u * q + (u < rem ? u : rem);\n"
                                 "  // LAB END\n}\n",
            "lab/tasks/01_alpha.md": "## first_of\n\nReturn the first iteration of unit u.\n",
            "lab/tasks/02_beta.md": "## deal\n\nDeal the iterations.\n",
        })

    def test_a_region_in_a_header_is_handed_out_and_recorded(self):
        out = self.tmp / "copy"
        release.release(self.source, ["01_alpha"], out, load_rubric())
        self.assertIn("  // TODO: Return the first iteration of unit u.", (out / "01_alpha/schedule.cuh").read_text())
        guide = (out / "LAB.md").read_text()
        self.assertIn("fill in each `TODO` of [`01_alpha/schedule.cuh`](01_alpha/schedule.cuh):", guide)
        self.assertIn("Only these files are graded: `01_alpha/schedule.cuh`.", guide)
        record = json.loads((out / "lab/released.json").read_text())
        self.assertEqual(list(record["handout"]), ["01_alpha/schedule.cuh"])

    def test_a_later_step_repeating_the_header_goes_out_with_its_step(self):
        code, out, _ = run_lab("check", "--source", self.source)
        self.assertEqual(code, 0, out)
        self.assertRegex(out, r"02_beta: 1 region\(s\).*; hand it out with 01_alpha, whose code its solution repeats")
        self.assertIn("  01_alpha/schedule.cuh:3:", out)


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
            (["--steps", "02"], 2, "02_beta has no LAB regions in 02_beta/"),
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


if __name__ == "__main__":
    unittest.main()
