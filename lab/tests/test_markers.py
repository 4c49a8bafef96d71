"""The LAB marker parser, the regions' tasks (lab/tasks/<step>.md), and the markers and tasks of the
steps in this repository.

Run from anywhere:  python3 -m unittest discover -s lab/tests -v
"""
import unittest

from lab_test_support import REPOSITORY, TemporaryFolderTest, write_tree

from labkit.markers import (LEVELS, MarkerError, all_regions, blanked_regions, parse_regions,  # noqa: E402
                            released_lines, student_version)
from labkit.steps import check_repeats, discover_steps, region_files, regions_of, step_sources  # noqa: E402
from labkit.tasks import load_tasks, parse_tasks, tasks_path  # noqa: E402

GOOD = """\
__global__ void k(float* c) {
  float acc = 0.0f;
  // LAB BEGIN products
  for (int i = 0; i < 4; ++i) acc += 1.0f;  // the solution
  // LAB END
  *c = acc;
  if (true) {
    // LAB BEGIN store_twice
    *c = acc;
    *c = acc;
    // LAB END
  }
}
"""
GOOD_TASKS = parse_tasks("# s: the tasks\n\nWhat each region asks for.\n\n## products\n\nAdd the products to acc,\n"
                         "one per k.\n\n## store_twice\n\nStore twice.\n", "lab/tasks/s.md")


def error_of(text, tasks=None):
    try:
        parse_regions(text, "s/kernel.cu", tasks)
    except MarkerError as e:
        return str(e)
    return None


class ParseTest(unittest.TestCase):
    def test_regions_names_tasks_and_solutions(self):
        regions = parse_regions(GOOD, "s/kernel.cu", GOOD_TASKS)
        self.assertEqual([(r.begin_line, r.end_line, r.name) for r in regions],
                         [(3, 5, "products"), (8, 11, "store_twice")])
        self.assertEqual(regions[0].instruction, ["Add the products to acc,", "one per k."])
        self.assertEqual(regions[0].solution, ["  for (int i = 0; i < 4; ++i) acc += 1.0f;  // the solution"])
        self.assertEqual(regions[1].indent, "    ")
        self.assertEqual(len(regions[1].solution), 2)

    def test_without_the_tasks_the_regions_have_names_only(self):
        regions = parse_regions(GOOD, "s/kernel.cu")
        self.assertEqual([(r.name, r.instruction) for r in regions], [("products", []), ("store_twice", [])])
        with self.assertRaisesRegex(MarkerError, "s/kernel.cu:3: the region 'products' was read without its task"):
            regions[0].todo_lines()

    def test_no_markers_is_no_regions(self):
        self.assertEqual(parse_regions("int x;\n// a LABEL is not a marker\n", "f"), [])

    def test_each_malformed_marker_is_named_with_file_and_line(self):
        cases = {
            "nested, same level": ("// LAB BEGIN a\nx;\n// LAB BEGIN b\ny;\n// LAB END\n// LAB END\n",
                                   "s/kernel.cu:3: a easy region inside the easy region opened at line 1"),
            "nested, harder inside": ("// LAB BEGIN a [medium]\nx;\n// LAB BEGIN b [hard]\ny;\n// LAB END\n"
                                      "// LAB END\n", "s/kernel.cu:3: a hard region inside the medium region"),
            "unknown level": ("// LAB BEGIN a [tricky]\nx;\n// LAB END\n", "s/kernel.cu:1: unknown level 'tricky'"),
            "empty level": ("// LAB BEGIN a []\nx;\n// LAB END\n", "s/kernel.cu:1: unknown level ''"),
            "end without begin": ("x;\n// LAB END\n", "s/kernel.cu:2: LAB END without a LAB BEGIN"),
            "begin never closed": ("x;\n  // LAB BEGIN a\ny;\n", "s/kernel.cu:2: LAB BEGIN is never closed"),
            "second end": ("// LAB BEGIN a\nx;\n// LAB END\n// LAB END\n", "s/kernel.cu:4: LAB END without"),
            "no name": ("// LAB BEGIN\nx;\n// LAB END\n", "s/kernel.cu:1: not a LAB marker"),
            "a name that is no name": ("// LAB BEGIN Sum-it\nx;\n// LAB END\n", "s/kernel.cu:1: not a LAB marker"),
            "level before the name": ("// LAB BEGIN [hard] a\nx;\n// LAB END\n", "s/kernel.cu:1: not a LAB marker"),
            "misspelled begin": ("// LAB BEGN a\nx;\n// LAB END\n", "s/kernel.cu:1: not a LAB marker"),
            "no space": ("//LAB BEGIN a\nx;\n// LAB END\n", "s/kernel.cu:1: not a LAB marker"),
            "marker after code": ("// LAB BEGIN a\nx;  // LAB END\n", "s/kernel.cu:2: not a LAB marker"),
            "an instruction on the BEGIN line": ("// LAB BEGIN: Sum it.\nx;\n// LAB END\n",
                                                 "s/kernel.cu:1: an instruction in the kernel"),
            "an instruction after a level": ("// LAB BEGIN [hard]: Sum it.\nx;\n// LAB END\n",
                                             "s/kernel.cu:1: an instruction in the kernel"),
            "an instruction line": ("// LAB BEGIN a\n// LAB: and more\nx;\n// LAB END\n",
                                    "s/kernel.cu:2: an instruction in the kernel"),
            "a name twice": ("// LAB BEGIN a\nx;\n// LAB END\n// LAB BEGIN a\ny;\n// LAB END\n",
                             "s/kernel.cu:4: the region name 'a' is used twice (also at line 1)"),
            "empty region": ("// LAB BEGIN a\n\n// LAB END\n", "s/kernel.cu:3: the region opened at line 1 is empty"),
            "repeats nothing": ("// LAB BEGIN a [hard, repeats]\nx;\n// LAB END\n",
                                "s/kernel.cu:1: 'repeats': 'repeats' names the earlier steps"),
            "repeats twice": ("// LAB BEGIN a [repeats 09, repeats 10]\nx;\n// LAB END\n",
                              "s/kernel.cu:1: 'repeats 10': 'repeats' names the earlier steps"),
            "two levels": ("// LAB BEGIN a [hard, easy]\nx;\n// LAB END\n", "s/kernel.cu:1: unknown level 'easy'"),
            "repeats inside the same level": ("// LAB BEGIN a [hard]\nx;\n// LAB BEGIN b [hard, repeats 09]\ny;\n"
                                              "// LAB END\n// LAB END\n",
                                              "s/kernel.cu:3: a hard region inside the hard region"),
        }
        for name, (text, expected) in cases.items():
            with self.subTest(name):
                message = error_of(text)
                self.assertIsNotNone(message, "accepted")
                self.assertTrue(message.startswith(expected), message)

    def test_a_region_without_a_task_is_named(self):
        message = error_of(GOOD, parse_tasks("## products\n\nAdd them.\n", "lab/tasks/s.md"))
        self.assertEqual(message, "s/kernel.cu:8: the region 'store_twice' has no task in lab/tasks/s.md (a "
                                  "'## store_twice' heading and the paragraph that says what to write)")


class TasksTest(TemporaryFolderTest):
    def error_of(self, text):
        with self.assertRaises(MarkerError) as caught:
            parse_tasks(text, "lab/tasks/s.md")
        return str(caught.exception)

    def test_each_task_is_its_paragraph_line_by_line(self):
        self.assertEqual(GOOD_TASKS.texts, {"products": ["Add the products to acc,", "one per k."],
                                            "store_twice": ["Store twice."]})
        self.assertEqual(GOOD_TASKS.lines, {"products": 5, "store_twice": 10})
        self.assertEqual(parse_tasks("", "x").texts, {})

    def test_each_malformed_task_is_named_with_file_and_line(self):
        cases = {
            "empty": ("## a\n\n## b\n\nB.\n", "lab/tasks/s.md:1: the task 'a' is empty"),
            "empty last": ("## a\n\nA.\n\n## b\n", "lab/tasks/s.md:5: the task 'b' is empty"),
            "two paragraphs": ("## a\n\nA.\n\nMore.\n", "lab/tasks/s.md:5: the task 'a' has a second paragraph"),
            "twice": ("## a\n\nA.\n\n## a\n\nB.\n", "lab/tasks/s.md:5: the task 'a' is given twice (also at line 1)"),
            "not a name": ("## Sum it\n\nA.\n", "lab/tasks/s.md:1: '## Sum it' is not a task heading"),
            "no name": ("## \n\nA.\n", "lab/tasks/s.md:1: '##' is not a task heading"),
            "another heading among the tasks": ("## a\n\nA.\n\n### hints\n", "lab/tasks/s.md:5: a heading among"),
        }
        for name, (text, expected) in cases.items():
            with self.subTest(name):
                self.assertEqual(self.error_of(text)[:len(expected)], expected)

    def test_a_steps_regions_and_tasks_match(self):
        """region_files gives each region its task; a name used twice in the step's files, or a task
        whose region is gone, is refused."""
        write_tree(self.tmp, {"01_s/kernel.cu": GOOD, "01_s/util.cuh": "// LAB BEGIN other\ny;\n// LAB END\n",
                              "lab/tasks/01_s.md": "## products\n\nP.\n\n## store_twice\n\nS.\n\n## other\n\nO.\n"})
        self.assertEqual(tasks_path("01_s").as_posix(), "lab/tasks/01_s.md")
        found = region_files(self.tmp, "01_s")
        self.assertEqual({path: [(r.name, r.instruction) for r in regions] for path, regions in found.items()},
                         {"01_s/kernel.cu": [("products", ["P."]), ("store_twice", ["S."])],
                          "01_s/util.cuh": [("other", ["O."])]})
        write_tree(self.tmp, {"01_s/util.cuh": "// LAB BEGIN products\ny;\n// LAB END\n"})
        with self.assertRaisesRegex(MarkerError, "01_s/util.cuh:1: the region name 'products' is used twice in 01_s "
                                                 "\\(also at 01_s/kernel.cu:3\\)"):
            region_files(self.tmp, "01_s")
        write_tree(self.tmp, {"01_s/util.cuh": "y;\n"})
        with self.assertRaisesRegex(MarkerError, "lab/tasks/01_s.md:9: no region of 01_s is named 'other'"):
            region_files(self.tmp, "01_s")
        # A step without regions (handed out, in a student copy) keeps its tasks for reading.
        write_tree(self.tmp, {"01_s/kernel.cu": "x;\n"})
        self.assertEqual(region_files(self.tmp, "01_s"), {})
        self.assertEqual(load_tasks(self.tmp, "02_none").texts, {})


# A hard region (the step's idea) holding two easy ones (its finer pieces), and an easy region
# beside it.
LEVELED = """\
void k(float* c) {
  float acc = 0.0f;
  // LAB BEGIN loop [hard]
  for (int i = 0; i < 4; ++i) {
    // LAB BEGIN load_x
    float x = load(i);
    // LAB END
    // LAB BEGIN add_x
    acc += x;
    // LAB END
  }
  // LAB END
  // LAB BEGIN store
  *c = acc;
  // LAB END
}
"""
LEVELED_TASKS = parse_tasks("## loop\n\nWrite the loop over k.\nAccumulate into acc.\n\n## load_x\n\nLoad x.\n\n"
                            "## add_x\n\nAdd x to acc.\n\n## store\n\nStore acc.\n", "lab/tasks/s.md")


class LevelTest(unittest.TestCase):
    def test_nested_regions_and_their_levels(self):
        regions = parse_regions(LEVELED, "s/kernel.cu")
        self.assertEqual([(r.begin_line, r.end_line, r.level) for r in regions], [(3, 12, "hard"), (13, 15, "easy")])
        self.assertEqual([(r.begin_line, r.level) for r in regions[0].inner], [(5, "easy"), (8, "easy")])
        self.assertEqual(len(all_regions(regions)), 4)
        # The hard region's solution is its code, without the markers of the regions inside it.
        self.assertEqual([line.strip() for line in regions[0].solution],
                         ["for (int i = 0; i < 4; ++i) {", "float x = load(i);", "acc += x;", "}"])

    def test_a_release_at_each_level(self):
        easy, _ = student_version(LEVELED, "s/kernel.cu", "easy", tasks=LEVELED_TASKS)
        self.assertEqual(easy, """\
void k(float* c) {
  float acc = 0.0f;
  for (int i = 0; i < 4; ++i) {
    // TODO: Load x.
    // TODO: Add x to acc.
  }
  // TODO: Store acc.
}
""")
        hard, blanked = student_version(LEVELED, "s/kernel.cu", "hard", tasks=LEVELED_TASKS)
        self.assertEqual(hard, """\
void k(float* c) {
  float acc = 0.0f;
  // TODO: Write the loop over k.
  //       Accumulate into acc.
  // TODO: Store acc.
}
""")
        self.assertEqual([r.begin_line for r in blanked], [3, 13])
        # medium: no medium region, so the same as easy.
        self.assertEqual(student_version(LEVELED, "s/kernel.cu", "medium", tasks=LEVELED_TASKS)[0], easy)

    def test_a_harder_level_asks_for_at_least_as_many_lines(self):
        regions = parse_regions(LEVELED, "s/kernel.cu")
        lines = [sum(len(r.solution) for r in blanked_regions(regions, level)) for level in LEVELS]
        self.assertEqual(lines, [3, 3, 5])
        self.assertEqual(lines, sorted(lines))

    def test_where_each_todo_lands(self):
        _, todos = released_lines(LEVELED, "s/kernel.cu", "easy", tasks=LEVELED_TASKS)
        self.assertEqual([(line, region.instruction[0]) for line, region in todos],
                         [(4, "Load x."), (5, "Add x to acc."), (7, "Store acc.")])
        _, todos = released_lines(LEVELED, "s/kernel.cu", "hard", tasks=LEVELED_TASKS)
        self.assertEqual([line for line, _ in todos], [3, 5])

    def test_an_unknown_level_is_refused(self):
        with self.assertRaisesRegex(ValueError, "unknown level 'expert'"):
            student_version(LEVELED, "s/kernel.cu", "expert", tasks=LEVELED_TASKS)


# A later step's code that repeats an earlier step's solution (09's), as repeat regions: a hard one
# (the wait and the copies) holding an easy one (the copies), beside a region of the step's own.
REPEATING = """\
void produce(int s) {
  // LAB BEGIN wait_and_copy [hard, repeats 09]
  wait(s);
  // LAB BEGIN copy [repeats 09_wgmma_tma]
  copy(s);
  // LAB END
  // LAB END
  // LAB BEGIN count
  ++slices;
  // LAB END
}
"""
REPEATING_TASKS = parse_tasks("## wait_and_copy\n\nAs in 09: wait, then copy.\n\n## copy\n\nAs in 09: copy.\n\n"
                              "## count\n\nCount the slice.\n", "lab/tasks/11_x.md")


class RepeatRegionTest(unittest.TestCase):
    def test_parsed_with_their_level_and_the_steps_they_repeat(self):
        regions = parse_regions(REPEATING, "11_x/kernel.cu")
        self.assertEqual([(r.level, r.repeats) for r in all_regions(regions)],
                         [("hard", ("09",)), ("easy", ("09_wgmma_tma",)), ("easy", ())])

    def test_blanked_only_where_a_step_they_repeat_is_handed_out_too(self):
        regions = parse_regions(REPEATING, "11_x/kernel.cu")
        alone = {level: [r.begin_line for r in blanked_regions(regions, level, ["11_x"])] for level in LEVELS}
        self.assertEqual(alone, {"easy": [8], "medium": [8], "hard": [8]})  # the repeated code stays
        self.assertEqual(blanked_regions(regions, "hard"), blanked_regions(regions, "hard", ["11_x"]))
        together = ["09_wgmma_tma", "11_x"]
        self.assertEqual([r.begin_line for r in blanked_regions(regions, "easy", together)], [4, 8])
        self.assertEqual([r.begin_line for r in blanked_regions(regions, "hard", together)], [2, 8])
        self.assertEqual([r.begin_line for r in blanked_regions(regions, "easy", ["10_y", "11_x"])], [8])

    def test_the_release_of_the_later_step_alone_and_with_the_earlier_one(self):
        alone, _ = student_version(REPEATING, "11_x/kernel.cu", "hard", ["11_x"], REPEATING_TASKS)
        self.assertEqual(alone, "void produce(int s) {\n  wait(s);\n  copy(s);\n  // TODO: Count the slice.\n}\n")
        together, blanked = student_version(REPEATING, "11_x/kernel.cu", "easy", ["09_wgmma_tma", "11_x"],
                                            REPEATING_TASKS)
        self.assertEqual(together, "void produce(int s) {\n  wait(s);\n  // TODO: As in 09: copy.\n"
                                   "  // TODO: Count the slice.\n}\n")
        self.assertEqual([r.repeats for r in blanked], [("09_wgmma_tma",), ()])


class StudentVersionTest(unittest.TestCase):
    def test_regions_become_todos_at_their_indentation(self):
        text, regions = student_version(GOOD, "s/kernel.cu", tasks=GOOD_TASKS)
        self.assertEqual(len(regions), 2)
        self.assertEqual(text, """\
__global__ void k(float* c) {
  float acc = 0.0f;
  // TODO: Add the products to acc,
  //       one per k.
  *c = acc;
  if (true) {
    // TODO: Store twice.
  }
}
""")

    def test_text_outside_regions_is_kept_byte_for_byte(self):
        plain = "a\n\tb  \n\nc"  # no trailing newline, tabs, trailing spaces
        self.assertEqual(student_version(plain, "f")[0], plain)


class RepositoryStepsTest(unittest.TestCase):
    """Every step with regions parses, and its student version keeps no solution line."""

    def test_steps_are_found_from_the_directories(self):
        steps = discover_steps(REPOSITORY)
        self.assertTrue(all(s[:2].isdigit() and s[2] == "_" for s in steps))
        self.assertEqual(steps, sorted(steps))
        self.assertIn("01_naive", steps)

    def test_each_step_regions(self):
        """In every source file of every step (kernel.cu and its headers), at every level, each region
        with its task (region_files checks that every task has its region too)."""
        for step in discover_steps(REPOSITORY):
            region_files(REPOSITORY, step)
            tasks = load_tasks(REPOSITORY, step)
            for path in step_sources(REPOSITORY, step):
                with self.subTest(path):
                    source = (REPOSITORY / path).read_text(encoding="utf-8")
                    for level in LEVELS:
                        text, blanked = student_version(source, path, level, tasks=tasks)
                        self.assertNotIn("LAB BEGIN", text)
                        self.assertNotIn("// LAB", text)
                        self.assertEqual(text.count("// TODO: "), len(blanked))

    def test_repeat_regions_name_earlier_steps(self):
        """A repeat region names steps of the tree that come before its own (check_repeats), and
        handed out with them it is blanked; with none of them, never."""
        for step in discover_steps(REPOSITORY):
            with self.subTest(step):
                check_repeats(REPOSITORY, step)
                for region in (r for r in all_regions(regions_of(REPOSITORY, step)) if r.repeats):
                    self.assertNotIn(region, blanked_regions(regions_of(REPOSITORY, step), "hard", [step]))
        repeating = {step: {w for r in all_regions(regions_of(REPOSITORY, step)) for w in r.repeats}
                     for step in ("08_mma_ldmatrix", "11_split_k", "13_swap_ab")}
        self.assertEqual(repeating,
                         {"08_mma_ldmatrix": {"07"}, "11_split_k": {"09", "10"}, "13_swap_ab": {"09", "10"}})

    def test_the_kernels_hold_markers_and_no_task_text(self):
        """Issue 48: what a student is asked lives in lab/tasks/, and a kernel holds only the markers."""
        for step in discover_steps(REPOSITORY):
            for path in step_sources(REPOSITORY, step):
                with self.subTest(path):
                    for number, line in enumerate((REPOSITORY / path).read_text(encoding="utf-8").splitlines(), 1):
                        if "// LAB" in line:
                            self.assertRegex(line, r"^\s*// LAB (BEGIN [a-z][a-z0-9_]*( \[[a-z0-9_ ,]+\])?|END)$",
                                             f"{path}:{number}")
            tasks = load_tasks(REPOSITORY, step)
            self.assertEqual(bool(tasks.texts), bool(regions_of(REPOSITORY, step)), step)

    def test_the_original_six_steps_have_regions(self):
        for step in ("01_naive", "02_block_tiling", "03_thread_coarsening", "04_outer_product", "05_wmma",
                     "06_multiwarp_wmma"):
            with self.subTest(step):
                self.assertGreaterEqual(len(regions_of(REPOSITORY, step)), 1)

    def test_the_later_steps_ask_for_their_idea_at_the_hard_level(self):
        """Issue 30, item 3: from 07 on, hard regions hold the step's idea (07's pipeline loop, 08's swizzle
        and fragment addresses, 09's and 10's barrier protocol, 11's and 12's fixups in split_k_schedule.cuh
        and stream_k_schedule.cuh, 14's padded hand-off), and the hard level asks for more than the easy
        one. (13's two regions are its idea.)"""
        for step in ("07_async_pipeline", "08_mma_ldmatrix", "09_wgmma_tma", "10_persistent_clusters", "11_split_k",
                     "12_stream_k", "14_pad_unaligned"):
            with self.subTest(step):
                regions = regions_of(REPOSITORY, step)
                self.assertIn("hard", {r.level for r in all_regions(regions)})
                lines = {level: sum(len(r.solution) for r in blanked_regions(regions, level)) for level in LEVELS}
                self.assertGreater(lines["hard"], lines["easy"])
        for step in ("11_split_k", "12_stream_k"):
            fixup = [r for r in all_regions(regions_of(REPOSITORY, step)) if r.path.endswith("schedule.cuh")]
            self.assertTrue(fixup and all(r.level == "hard" for r in fixup), step)


if __name__ == "__main__":
    unittest.main()
