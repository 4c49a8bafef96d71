"""The LAB marker parser, and the markers of the steps in this repository.

Run from anywhere:  python3 -m unittest discover -s lab/tests -v
"""
import unittest

from lab_test_support import REPOSITORY

from labkit.markers import (LEVELS, MarkerError, all_regions, blanked_regions, parse_regions,  # noqa: E402
                            released_lines, student_version)
from labkit.steps import check_repeats, discover_steps, regions_of, step_sources  # noqa: E402

GOOD = """\
__global__ void k(float* c) {
  float acc = 0.0f;
  // LAB BEGIN: Add the products to acc,
  // LAB: one per k.
  for (int i = 0; i < 4; ++i) acc += 1.0f;  // the solution
  // LAB END
  *c = acc;
  if (true) {
    // LAB BEGIN: Store twice.
    *c = acc;
    *c = acc;
    // LAB END
  }
}
"""


def error_of(text):
    try:
        parse_regions(text, "s/kernel.cu")
    except MarkerError as e:
        return str(e)
    return None


class ParseTest(unittest.TestCase):
    def test_regions_instructions_and_solutions(self):
        regions = parse_regions(GOOD, "s/kernel.cu")
        self.assertEqual([(r.begin_line, r.end_line) for r in regions], [(3, 6), (9, 12)])
        self.assertEqual(regions[0].instruction, ["Add the products to acc,", "one per k."])
        self.assertEqual(regions[0].solution, ["  for (int i = 0; i < 4; ++i) acc += 1.0f;  // the solution"])
        self.assertEqual(regions[1].indent, "    ")
        self.assertEqual(len(regions[1].solution), 2)

    def test_no_markers_is_no_regions(self):
        self.assertEqual(parse_regions("int x;\n// a LABEL is not a marker\n", "f"), [])

    def test_each_malformed_marker_is_named_with_file_and_line(self):
        cases = {
            "nested, same level": ("// LAB BEGIN: a\nx;\n// LAB BEGIN: b\ny;\n// LAB END\n// LAB END\n",
                                   "s/kernel.cu:3: a easy region inside the easy region opened at line 1"),
            "nested, harder inside": ("// LAB BEGIN [medium]: a\nx;\n// LAB BEGIN [hard]: b\ny;\n// LAB END\n"
                                      "// LAB END\n", "s/kernel.cu:3: a hard region inside the medium region"),
            "unknown level": ("// LAB BEGIN [tricky]: a\nx;\n// LAB END\n", "s/kernel.cu:1: unknown level 'tricky'"),
            "empty level": ("// LAB BEGIN []: a\nx;\n// LAB END\n", "s/kernel.cu:1: unknown level ''"),
            "end without begin": ("x;\n// LAB END\n", "s/kernel.cu:2: LAB END without a LAB BEGIN"),
            "begin never closed": ("x;\n  // LAB BEGIN: a\ny;\n", "s/kernel.cu:2: LAB BEGIN is never closed"),
            "second end": ("// LAB BEGIN: a\nx;\n// LAB END\n// LAB END\n", "s/kernel.cu:4: LAB END without"),
            "no instruction": ("// LAB BEGIN:   \nx;\n// LAB END\n", "s/kernel.cu:1: LAB BEGIN needs an instruction"),
            "misspelled begin": ("// LAB BEGN: a\nx;\n// LAB END\n", "s/kernel.cu:1: not a LAB marker"),
            "no space": ("//LAB BEGIN: a\nx;\n// LAB END\n", "s/kernel.cu:1: not a LAB marker"),
            "marker after code": ("// LAB BEGIN: a\nx;  // LAB END\n", "s/kernel.cu:2: not a LAB marker"),
            "stray continuation": ("x;\n// LAB: more\n", "s/kernel.cu:2: a '// LAB:' line continues"),
            "continuation after code": ("// LAB BEGIN: a\nx;\n// LAB: more\n// LAB END\n",
                                        "s/kernel.cu:3: a '// LAB:' line continues"),
            "empty region": ("// LAB BEGIN: a\n\n// LAB END\n", "s/kernel.cu:3: the region opened at line 1 is empty"),
            "repeats nothing": ("// LAB BEGIN [hard, repeats]: a\nx;\n// LAB END\n",
                                "s/kernel.cu:1: 'repeats': 'repeats' names the earlier steps"),
            "repeats twice": ("// LAB BEGIN [repeats 09, repeats 10]: a\nx;\n// LAB END\n",
                              "s/kernel.cu:1: 'repeats 10': 'repeats' names the earlier steps"),
            "two levels": ("// LAB BEGIN [hard, easy]: a\nx;\n// LAB END\n", "s/kernel.cu:1: unknown level 'easy'"),
            "repeats inside the same level": ("// LAB BEGIN [hard]: a\nx;\n// LAB BEGIN [hard, repeats 09]: b\ny;\n"
                                              "// LAB END\n// LAB END\n",
                                              "s/kernel.cu:3: a hard region inside the hard region"),
        }
        for name, (text, expected) in cases.items():
            with self.subTest(name):
                message = error_of(text)
                self.assertIsNotNone(message, "accepted")
                self.assertTrue(message.startswith(expected), message)


# A hard region (the step's idea) holding two easy ones (its finer pieces), and an easy region
# beside it.
LEVELED = """\
void k(float* c) {
  float acc = 0.0f;
  // LAB BEGIN [hard]: Write the loop over k.
  // LAB: Accumulate into acc.
  for (int i = 0; i < 4; ++i) {
    // LAB BEGIN: Load x.
    float x = load(i);
    // LAB END
    // LAB BEGIN: Add x to acc.
    acc += x;
    // LAB END
  }
  // LAB END
  // LAB BEGIN: Store acc.
  *c = acc;
  // LAB END
}
"""


class LevelTest(unittest.TestCase):
    def test_nested_regions_and_their_levels(self):
        regions = parse_regions(LEVELED, "s/kernel.cu")
        self.assertEqual([(r.begin_line, r.end_line, r.level) for r in regions], [(3, 13, "hard"), (14, 16, "easy")])
        self.assertEqual([(r.begin_line, r.level) for r in regions[0].inner], [(6, "easy"), (9, "easy")])
        self.assertEqual(len(all_regions(regions)), 4)
        # The hard region's solution is its code, without the markers of the regions inside it.
        self.assertEqual([line.strip() for line in regions[0].solution],
                         ["for (int i = 0; i < 4; ++i) {", "float x = load(i);", "acc += x;", "}"])

    def test_a_release_at_each_level(self):
        easy, _ = student_version(LEVELED, "s/kernel.cu", "easy")
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
        hard, blanked = student_version(LEVELED, "s/kernel.cu", "hard")
        self.assertEqual(hard, """\
void k(float* c) {
  float acc = 0.0f;
  // TODO: Write the loop over k.
  //       Accumulate into acc.
  // TODO: Store acc.
}
""")
        self.assertEqual([r.begin_line for r in blanked], [3, 14])
        # medium: no medium region, so the same as easy.
        self.assertEqual(student_version(LEVELED, "s/kernel.cu", "medium")[0], easy)

    def test_a_harder_level_asks_for_at_least_as_many_lines(self):
        regions = parse_regions(LEVELED, "s/kernel.cu")
        lines = [sum(len(r.solution) for r in blanked_regions(regions, level)) for level in LEVELS]
        self.assertEqual(lines, [3, 3, 5])
        self.assertEqual(lines, sorted(lines))

    def test_where_each_todo_lands(self):
        _, todos = released_lines(LEVELED, "s/kernel.cu", "easy")
        self.assertEqual([(line, region.instruction[0]) for line, region in todos],
                         [(4, "Load x."), (5, "Add x to acc."), (7, "Store acc.")])
        _, todos = released_lines(LEVELED, "s/kernel.cu", "hard")
        self.assertEqual([line for line, _ in todos], [3, 5])

    def test_an_unknown_level_is_refused(self):
        with self.assertRaisesRegex(ValueError, "unknown level 'expert'"):
            student_version(LEVELED, "s/kernel.cu", "expert")


# A later step's code that repeats an earlier step's solution (09's), as repeat regions: a hard one
# (the wait and the copies) holding an easy one (the copies), beside a region of the step's own.
REPEATING = """\
void produce(int s) {
  // LAB BEGIN [hard, repeats 09]: As in 09: wait, then copy.
  wait(s);
  // LAB BEGIN [repeats 09_wgmma_tma]: As in 09: copy.
  copy(s);
  // LAB END
  // LAB END
  // LAB BEGIN: Count the slice.
  ++slices;
  // LAB END
}
"""


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
        alone, _ = student_version(REPEATING, "11_x/kernel.cu", "hard", ["11_x"])
        self.assertEqual(alone, "void produce(int s) {\n  wait(s);\n  copy(s);\n  // TODO: Count the slice.\n}\n")
        together, blanked = student_version(REPEATING, "11_x/kernel.cu", "easy", ["09_wgmma_tma", "11_x"])
        self.assertEqual(together, "void produce(int s) {\n  wait(s);\n  // TODO: As in 09: copy.\n"
                                   "  // TODO: Count the slice.\n}\n")
        self.assertEqual([r.repeats for r in blanked], [("09_wgmma_tma",), ()])


class StudentVersionTest(unittest.TestCase):
    def test_regions_become_todos_at_their_indentation(self):
        text, regions = student_version(GOOD, "s/kernel.cu")
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
        """In every source file of every step (kernel.cu and its headers), at every level."""
        for step in discover_steps(REPOSITORY):
            for path in step_sources(REPOSITORY, step):
                with self.subTest(path):
                    source = (REPOSITORY / path).read_text(encoding="utf-8")
                    for level in LEVELS:
                        text, blanked = student_version(source, path, level)
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
                     for step in ("08_mma_ldmatrix", "11_stream_k", "12_swap_ab")}
        self.assertEqual(repeating,
                         {"08_mma_ldmatrix": {"07"}, "11_stream_k": {"09", "10"}, "12_swap_ab": {"09", "10"}})

    def test_the_original_six_steps_have_regions(self):
        for step in ("01_naive", "02_block_tiling", "03_thread_coarsening", "04_outer_product", "05_wmma",
                     "06_multiwarp_wmma"):
            with self.subTest(step):
                self.assertGreaterEqual(len(regions_of(REPOSITORY, step)), 1)

    def test_the_later_steps_ask_for_their_idea_at_the_hard_level(self):
        """Issue 30, item 3: from 07 on, hard regions hold the step's idea (07's pipeline loop, 08's swizzle
        and fragment addresses, 09's and 10's barrier protocol, 11's fixup in schedule.cuh, 13's padded
        hand-off), and the hard level asks for more than the easy one. (12's two regions are its idea.)"""
        for step in ("07_async_pipeline", "08_mma_ldmatrix", "09_wgmma_tma", "10_persistent_clusters", "11_stream_k",
                     "13_pad_unaligned"):
            with self.subTest(step):
                regions = regions_of(REPOSITORY, step)
                self.assertIn("hard", {r.level for r in all_regions(regions)})
                lines = {level: sum(len(r.solution) for r in blanked_regions(regions, level)) for level in LEVELS}
                self.assertGreater(lines["hard"], lines["easy"])
        fixup = [r for r in all_regions(regions_of(REPOSITORY, "11_stream_k")) if r.path.endswith("schedule.cuh")]
        self.assertTrue(fixup and all(r.level == "hard" for r in fixup))


if __name__ == "__main__":
    unittest.main()
