"""The course: every lab step's handout (lab/course/<step>.md, or the template), the instructor's key,
no answer text in any release, and the integrity check on a reformatted and a planted-bug 02.

Run from anywhere:  python3 -m unittest discover -s lab/tests -v
"""
import shutil
import subprocess
import unittest

from lab_test_support import REPOSITORY, TemporaryFolderTest, write_tree

import lab  # noqa: E402  (after lab_test_support, which puts lab/ on the path)
from labkit import course, grading, integrity, markers, release, report  # noqa: E402
from labkit.markers import MarkerError  # noqa: E402
from labkit.rubric import load_rubric  # noqa: E402
from labkit.steps import discover_steps, regions_of  # noqa: E402

FIRST_COURSE = ["01_naive", "02_block_tiling", "03_thread_coarsening", "04_outer_product", "05_wmma",
                "06_multiwarp_wmma"]


def lab_steps():
    return [s for s in discover_steps(REPOSITORY) if regions_of(REPOSITORY, s)]


class CourseFileTest(unittest.TestCase):
    def test_the_first_course_has_a_course_file_with_every_part(self):
        for step in FIRST_COURSE:
            with self.subTest(step=step):
                found = course.load_course(REPOSITORY, step)
                self.assertIsNotNone(found, f"lab/course/{step}.md is missing")
                self.assertTrue(3 <= len(found.questions) <= 5)
                self.assertTrue(found.predictions)
                for item in found.predictions:
                    self.assertTrue(any(c.startswith(f"build/bin/{step}") for c in item.commands()))

    def test_every_answer_cites_figures_that_resolve(self):
        for step in lab_steps():
            with self.subTest(step=step):
                text = course.key_markdown(REPOSITORY, [step])
                self.assertNotIn("{{figure", text)

    def test_a_malformed_course_file_is_named_with_its_line(self):
        good = ("## Time\n\n1 h\n\n## Objectives\n\n- a\n\n## Read first\n\n- b\n\n## Task\n\nc\n\n"
                + "".join(f"## Question: q{i}\n\nwhy?\n\n### Answer\n\nbecause.\n\n" for i in range(3))
                + "## Predict, then measure: p\n\n```sh\nbuild/bin/01_x --m 1\n```\n\n### Answer\n\nso.\n")
        self.assertEqual(len(course.parse_course(good, "c.md", "01_x").questions), 3)
        with self.assertRaisesRegex(MarkerError, r"c\.md:\d+: .*needs its text"):
            course.parse_course(good.replace("### Answer\n\nbecause.\n\n", "", 1), "c.md", "01_x")
        with self.assertRaisesRegex(MarkerError, "2 question"):
            course.parse_course(good.replace("## Question: q0\n\nwhy?\n\n### Answer\n\nbecause.\n\n", ""), "c.md")
        with self.assertRaisesRegex(MarkerError, "no ```sh block"):
            course.parse_course(good, "c.md", "02_y")
        with self.assertRaisesRegex(MarkerError, "unknown section 'Hints'"):
            course.parse_course(good + "## Hints\n\nx\n", "c.md")


class ReleaseAndKeyTest(TemporaryFolderTest):
    def release(self, steps):
        """The release of `steps` and its key. (The leak check is release's own tests' concern: here a
        release is made even where a later change to the tree would refuse it.)"""
        out = self.tmp / ("handout-" + "-".join(steps))
        steps = [next(s for s in discover_steps(REPOSITORY) if s[:2] == step[:2]) for step in steps]
        release.release(REPOSITORY, steps, out, load_rubric(), leak_check=False)
        return out, course.key_markdown(REPOSITORY, steps)

    def test_no_answer_text_in_a_release_and_every_answer_in_the_key(self):
        """Each lab step alone: its handout is written, the key holds its answers, and no sentence of
        an answer (the course file's, or a README's fold) is in any file of the release."""
        for step in lab_steps():
            with self.subTest(step=step):
                out, key = self.release([step])
                handout = (out / course.HANDOUTS / f"{step}.md").read_text(encoding="utf-8")
                self.assertIn("## What is graded", handout)
                self.assertIn("## Predict, then measure", handout)
                self.assertFalse((out / course.FOLDER).exists())
                answers = [s for a in course.answer_texts(REPOSITORY, [step]) for s in course.sentences(a)]
                flat_key = " ".join(key.replace("*", "").replace("`", "").split())
                for sentence in answers:
                    self.assertIn(sentence, " ".join(course.sentences(flat_key, 0)) + flat_key)
                texts = []
                for path in out.rglob("*"):
                    if path.is_file():
                        try:
                            texts.append(" ".join(path.read_text(encoding="utf-8").replace("*", "").replace("`", "")
                                                  .split()))
                        except UnicodeDecodeError:
                            continue
                everything = "\n".join(texts)
                leaked = [s for s in answers if s in everything]
                self.assertEqual(leaked, [])
                # And the handout holds no answer, the key holds the handout's questions.
                for item in (course.load_course(REPOSITORY, step) or course.Course("")).items:
                    question = course.resolve_figures(item.text[0], REPOSITORY, "")
                    self.assertIn(question, key)
                    self.assertNotIn("{{figure", handout)
                shutil.rmtree(out)

    def test_a_readme_fold_is_replaced_by_a_line(self):
        text = "# x\n\n## Predict, then measure\n\nGuess.\n\n<details>\n<summary>The answer</summary>\n\n42.\n\n</details>\n"
        stripped, answers = course.split_readme(text)
        self.assertEqual(answers, [("Predict, then measure", "42.")])
        self.assertNotIn("42", stripped)
        self.assertIn(course.IN_THE_KEY.strip(), stripped)

    def test_the_key_is_refused_inside_the_release(self):
        import contextlib
        import io
        with contextlib.redirect_stderr(io.StringIO()) as err:
            code = lab.main(["release", "--steps", "01", "--out", str(self.tmp / "h"), "--key",
                             str(self.tmp / "h" / "k")])
        self.assertEqual(code, 2)
        self.assertIn("the key must not go to the students", err.getvalue())

    def test_handout_of_02_names_what_is_graded_from_the_rubric(self):
        out, _ = self.release(["02"])
        text = (out / course.HANDOUTS / "02_block_tiling.md").read_text(encoding="utf-8")
        self.assertIn("out of 100 points", text)
        self.assertIn("**correctness**, 50", text)
        self.assertIn("at 4096×4096×4096", text)
        self.assertIn("build/bin/02_block_tiling --m 4096 --n 4096 --k 4096", text)
        self.assertIn("lab/handouts/02_block_tiling.md", (out / "LAB.md").read_text(encoding="utf-8"))


@unittest.skipIf(integrity.clang_format_tool() is None, "clang-format is not installed")
class FormattingTest(TemporaryFolderTest):
    """02's kernel, as a student would hand it in: the solution reformatted in another style, and the
    solution with a planted bug inside a TODO and a line changed outside."""

    def setUp(self):
        super().setUp()
        self.path = "02_block_tiling/kernel.cu"
        self.solution = (REPOSITORY / self.path).read_text(encoding="utf-8")
        self.handout = grading.handout_of(REPOSITORY, "02_block_tiling", markers.DEFAULT_LEVEL, False)[self.path]
        self.tool = integrity.clang_format_tool()

    def reformat(self, text, style="{BasedOnStyle: LLVM, ColumnLimit: 80}"):
        return subprocess.run([self.tool, f"--style={style}", "--assume-filename=kernel.cu"], input=text,
                              capture_output=True, text=True, check=True).stdout

    def grader(self, texts, rubric=None):
        g = grading.Grader(self.tmp, REPOSITORY, ["02_block_tiling"], rubric or load_rubric(), [], self.tmp / "w", 1)
        problem = g.check_todos_only("02_block_tiling", texts, {self.path: self.handout})
        return problem, g.integrity["02_block_tiling"][0]

    def test_a_reformatted_correct_file_passes(self):
        reformatted = self.reformat(self.solution)
        self.assertNotEqual(reformatted, self.solution)
        self.assertTrue(integrity.changed_outside_todos(*self.handout, reformatted))  # as written: a difference
        problem, record = self.grader({self.path: reformatted})
        self.assertEqual((problem, record["status"]), ("", "pass"))
        self.assertIn("reformatted", record["detail"])

    def test_a_planted_bug_inside_the_todo_passes_integrity(self):
        # The bug the device check plants in 04, here in 02: the last k of each slice skipped.
        bug = self.solution.replace("for (int i = 0; i < tile; ++i)", "for (int i = 0; i < tile - 1; ++i)")
        self.assertNotEqual(bug, self.solution)
        problem, record = self.grader({self.path: self.reformat(bug)})
        self.assertEqual((problem, record["status"]), ("", "pass"))  # correctness, on a GPU, finds it

    def test_a_line_changed_outside_costs_its_price_and_is_named(self):
        changed = self.reformat(self.solution.replace("constexpr int tile = 32;", "constexpr int tile = 16;"))
        problem, record = self.grader({self.path: changed})
        self.assertEqual((problem, record["status"]), ("", "changed"))
        self.assertEqual(len(record["changed_lines"]), 1)
        line = record["changed_lines"][0]["line"]
        self.assertIn("constexpr int tile = 32;", self.handout[0][line - 1])
        self.assertIn(f"line {line} ('constexpr int tile = 32;", record["detail"])

    def test_too_many_changed_lines_refuse_the_step(self):
        rubric = load_rubric()
        rubric["integrity"]["refuse_above_lines"] = 1
        changed = self.solution.replace("constexpr int tile = 32;", "constexpr int tile = 16;").replace(
            "  // Write back.\n", "  // Write it back.\n  int unused = 0;\n")
        problem, record = self.grader({self.path: changed}, rubric)
        self.assertEqual(record["status"], "fail")
        self.assertIn("more than the rubric's 1: refused", problem)

    def test_without_clang_format_the_comparison_is_as_written(self):
        import os
        reformatted = self.reformat(self.solution)
        saved = os.environ.get("LAB_CLANG_FORMAT")
        os.environ["LAB_CLANG_FORMAT"] = "none"
        try:
            problem, record = self.grader({self.path: reformatted})
        finally:
            if saved is None:
                del os.environ["LAB_CLANG_FORMAT"]
            else:
                os.environ["LAB_CLANG_FORMAT"] = saved
        self.assertEqual(record["status"], "fail")
        self.assertIn("clang-format is not installed: compared as written", problem)


if __name__ == "__main__":
    unittest.main()
