"""Integrity: a submission may differ from its handout only in the TODOs (integrity.py), and the
record of the handout a release writes for a student's self-grade. (The symbol check runs on objects
nvcc compiles: test_build.py.)

Run from anywhere:  python3 -m unittest discover -s lab/tests -v
"""
import json
import unittest

from lab_test_support import TemporaryFolderTest, write_tree

from labkit import grading, integrity, release  # noqa: E402
from labkit.tasks import parse_tasks  # noqa: E402
from labkit.rubric import load_rubric  # noqa: E402

SOLUTION = """\
#include "step.hpp"
namespace {
__global__ void k(float* c, const float* a) {
  float acc = 0.0f;
  // LAB BEGIN row_sum
  for (int i = 0; i < 8; ++i) acc += a[i];
  // LAB END
  c[0] = acc;
  // LAB BEGIN scale [hard]
  c[1] = acc * 2.0f;
  // LAB END
}
}  // namespace
"""
# The regions' tasks (labkit/tasks.py): the second is two lines.
TASKS_FILE = "## row_sum\n\nSum the row of A into acc.\n\n## scale\n\nScale and store.\nUse alpha.\n"
TASKS = parse_tasks(TASKS_FILE, "lab/tasks/01_x.md")


def handout(level="easy"):
    return integrity.handout_todos(SOLUTION, "01_x/kernel.cu", level, tasks=TASKS)


def submission(*replacements):
    """The handout with each TODO block replaced by the given lines (a list per TODO)."""
    lines, todos = handout()
    out, previous = [], 1
    for (first, count), new in zip(todos, replacements):
        out += lines[previous - 1:first - 1] + new
        previous = first + count
    return "\n".join(out + lines[previous - 1:]) + "\n"


class TodosOnlyTest(unittest.TestCase):
    def check(self, text, level="easy"):
        return integrity.changed_outside_todos(*handout(level), text)

    def test_the_handout_itself_and_the_solution_pass(self):
        lines, _ = handout()
        self.assertEqual(self.check("\n".join(lines) + "\n"), "")
        self.assertEqual(self.check(SOLUTION), "")  # markers and solution in place of the TODOs
        self.assertEqual(self.check(SOLUTION, "hard"), "")

    def test_any_lines_in_place_of_a_todo(self):
        self.assertEqual(self.check(submission(["  for (int i = 0; i < 8; ++i) {", "    acc += a[i];", "  }"],
                                               ["  c[1] = 2 * acc;  // mine"])), "")
        self.assertEqual(self.check(submission([], [])), "")  # nothing written: not refused (it scores 0)

    def test_trailing_spaces_and_line_endings_are_not_changes(self):
        text = submission(["  acc = 1;"], ["  c[1] = acc;"]).replace("\n", "  \r\n")
        self.assertEqual(self.check(text), "")

    def test_a_line_added_changed_or_removed_outside_the_todos_is_named(self):
        base = submission(["  acc = 1;"], ["  c[1] = acc;"])
        rows = [
            (base.replace("  c[0] = acc;\n", "  c[0] = acc + 1;\n"), "line 6 of the handout's file"),
            (base.replace("  c[0] = acc;\n", ""), "line 6 of the handout's file"),
            (base.replace('#include "step.hpp"\n', '#include "step.hpp"\n#include <cublas_v2.h>\n'),
             "line 2 of the handout's file ('namespace {'): lines are added, changed or removed here, outside the "
             "TODOs"),
            (base.replace("}  // namespace\n", "}  // namespace\nint helper() { return 1; }\n"),
             "line 9 of the handout's file"),
            (base.replace("namespace {", "namespace{"), "line 2 of the handout's file"),
        ]
        for text, expected in rows:
            with self.subTest(expected=expected):
                self.assertIn(expected, self.check(text))

    def test_a_file_without_todos_must_be_the_same(self):
        lines = ["int a;", "int b;"]
        self.assertEqual(integrity.changed_outside_todos(lines, [], "int a;\nint b;\n"), "")
        self.assertIn("line 2", integrity.changed_outside_todos(lines, [], "int a;\nint c;\n"))
        self.assertEqual(integrity.changed_outside_todos(lines, [], "int a;\nint b;\nint c;\n"),
                         "lines were added to the handout's file, which has no TODO")

    def test_at_the_hard_level_the_hard_region_is_one_todo(self):
        lines, todos = handout("hard")
        self.assertEqual([count for _, count in todos], [1, 2])  # the hard TODO has two instruction lines
        text = "\n".join(lines).replace("  // TODO: Scale and store.\n  //       Use alpha.", "  c[1] = acc;")
        self.assertEqual(integrity.changed_outside_todos(lines, todos, text), "")


class HandoutRecordTest(TemporaryFolderTest):
    def test_a_release_records_its_handout_and_self_grading_reads_it(self):
        source = self.tmp / "source"
        write_tree(source, {"01_x/kernel.cu": SOLUTION, "lab/tasks/01_x.md": TASKS_FILE,
                            "CMakeLists.txt": "add_worklog_step(01_x)\n"})
        copy = self.tmp / "copy"
        release.release(source, ["01_x"], copy, load_rubric(), level="hard")
        record = json.loads((copy / "lab" / "released.json").read_text())
        self.assertEqual((record["level"], record["removed"]), ("hard", ["lab/tests", "plots/tests", "lab/course"]))
        handouts = grading.handout_of(copy, "01_x", "easy", self_check=True)  # the level is the record's
        lines, todos = handouts["01_x/kernel.cu"]
        self.assertEqual((lines, todos), (list(handout("hard")[0]), [tuple(t) for t in handout("hard")[1]]))
        self.assertEqual(lines, (copy / "01_x" / "kernel.cu").read_text().splitlines())
        # The instructor's grading makes the same handout from the solution.
        self.assertEqual(grading.handout_of(source, "01_x", "hard", self_check=False),
                         {"01_x/kernel.cu": handout("hard")})
        self.assertIsNone(grading.handout_of(source, "01_x", "easy", self_check=True))  # no record there


if __name__ == "__main__":
    unittest.main()
