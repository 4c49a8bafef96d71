"""The leak check beyond solution lines: renamed copies (token sequences, names normalized), repeat
regions (blanked only with a step they repeat), and releases of this repository's own steps.
test_release.py has the copy, LAB.md, levels and the command line.

Run from anywhere:  python3 -m unittest discover -s lab/tests -v
"""
import json
import subprocess
import sys
import unittest

from lab_test_support import REPOSITORY, TemporaryFolderTest, write_tree
from test_release import SMALL_CMAKE, run_lab  # the small tree's CMake list; lab.main in this process

import lab  # noqa: E402  (after lab_test_support, which puts lab/ on the path)
from labkit import grading, integrity, markers, release, tokens  # noqa: E402
from labkit.rubric import load_rubric  # noqa: E402
from labkit.steps import discover_steps, regions_of  # noqa: E402



# A region like 09's producer, and a copy of it with every name changed, spaced and commented
# otherwise, split over other lines, with another loop header: the token check finds it.
KERNEL_WITH_PRODUCER = """\
void produce(int s, int k0, int row0, int col0) {
  // LAB BEGIN arm_and_copy
  mbarrier_arrive_expect_bytes(&full[s], C::stage_bytes);
  tma_load_2d(a_tile(s), a_map, &full[s], k0, row0);
#pragma unroll
  for (int j = 0; j < block_tile_n / swizzle_halves; ++j)
    tma_load_2d(b_tile(s) + j * C::b_box_bytes, b_map, &full[s], col0 + j * swizzle_halves, k0);
  // LAB END
}
"""
PRODUCER_TASKS = ("lab/tasks/01_alpha.md", "## arm_and_copy\n\nArm full[s], then copy A's box and B's boxes.\n")
RENAMED_COPY = """\
void fill(int stage, int kofs, int first_row, int first_col) {
  arrive_and_expect(&ready[stage], bytes_per_stage);   /* the same code, other names */
  copy_box(tile_of_a(stage),
           map_a, &ready[stage], kofs, first_row);
  for (unsigned box = 0; box != boxes; box++)
     copy_box(tile_of_b(stage) + box * box_size, map_b, &ready[stage], first_col + box * width, kofs);
}
"""
# The same shapes of statement with the names in other places: not a copy.
SAME_SHAPE = """\
void other(int s, int k0, int row0) {
  arrive_and_expect(&ready[k0], bytes_per_stage);
  copy_box(tile_of_a(row0), map_a, &ready[s], k0, row0);
}
"""


class TokenLeakTest(TemporaryFolderTest):
    def setUp(self):
        super().setUp()
        self.source = self.tmp / "source"
        write_tree(self.source, {"01_alpha/kernel.cu": KERNEL_WITH_PRODUCER, "02_beta/kernel.cu": "void g() {}\n",
                                 PRODUCER_TASKS[0]: PRODUCER_TASKS[1], "CMakeLists.txt": SMALL_CMAKE})

    def leaks(self, keep=()):
        return release.Plan(self.source, ["01_alpha"], load_rubric(), keep=keep).leaks()

    def test_a_renamed_copy_is_a_leak(self):
        write_tree(self.source, {"common/pipeline.cuh": "// helpers\n\n" + RENAMED_COPY})
        leaks = self.leaks()
        self.assertTrue(leaks)
        self.assertTrue(all(leak.startswith("common/pipeline.cuh:") for leak in leaks), leaks)
        self.assertIn("common/pipeline.cuh:4: arrive_and_expect(&ready[stage], bytes_per_stage);", leaks[0])
        self.assertIn("(the code of solution line 01_alpha/kernel.cu:3, names aside)", leaks[0])
        # The exact-line check alone sees nothing of it.
        files = release.Plan(self.source, ["01_alpha"], load_rubric()).text_files()
        regions = release.Plan(self.source, ["01_alpha"], load_rubric()).regions
        self.assertEqual(release.find_leaks(release.solution_fingerprints(regions), files), [])

    def test_a_readme_excerpt_of_a_region_is_hidden_and_others_kept(self):
        """A lesson's code excerpt (plots/readme/filler.py) that quotes a removed region would hand out
        its answer: the copy's README says the code is the student's instead; an excerpt of code
        outside every region stays."""
        answer = "  tma_load_2d(a_tile(s), a_map, &full[s], k0, row0);\n"
        readme = ("# 01_alpha\n\n<!-- BEGIN generated: excerpt/producer file=kernel.cu -->\n```cuda\n" + answer +
                  "```\n<!-- END generated: excerpt/producer -->\n\n<!-- BEGIN generated: excerpt/other file=kernel.cu -->\n"
                  "```cuda\nvoid g() {}\n```\n<!-- END generated: excerpt/other -->\n")
        self.assertIn(answer.strip(), KERNEL_WITH_PRODUCER)
        write_tree(self.source, {"01_alpha/README.md": readme})
        plan = release.Plan(self.source, ["01_alpha"], load_rubric())
        text = plan.replaced()["01_alpha/README.md"]
        self.assertNotIn(answer.strip(), text)
        self.assertIn("this code is yours to write", text)
        self.assertIn("void g() {}", text)
        self.assertEqual(plan.leaks(), [])

    def test_an_excerpt_of_a_region_in_a_step_not_handed_out_is_hidden_too(self):
        """Every step README of the copy is read for excerpts, not only the handed-out steps': a kept
        later step's lesson that quotes the answer (10's excerpt of its producer, with 09 handed out)
        says the code is the student's; without --keep the step and its README are left out."""
        answer = "  tma_load_2d(a_tile(s), a_map, &full[s], k0, row0);\n"
        readme = ("# 02_beta\n\n<!-- BEGIN generated: excerpt/producer file=../01_alpha/kernel.cu -->\n```cuda\n" +
                  answer + "```\n<!-- END generated: excerpt/producer -->\n")
        write_tree(self.source, {"02_beta/README.md": readme})
        plan = release.Plan(self.source, ["01_alpha"], load_rubric(), keep=["02_beta"])
        text = plan.replaced()["02_beta/README.md"]
        self.assertNotIn(answer.strip(), text)
        self.assertIn("this code is yours to write", text)
        self.assertEqual(plan.leaks(), [])
        self.assertNotIn("02_beta/README.md", release.Plan(self.source, ["01_alpha"], load_rubric()).replaced())

    def test_a_later_step_kept_with_a_renamed_copy_is_refused(self):
        write_tree(self.source, {"02_beta/kernel.cu": RENAMED_COPY})
        self.assertEqual(self.leaks(), [])  # left out by default
        leaks = self.leaks(keep=["02_beta"])
        self.assertTrue(leaks and all(leak.startswith("02_beta/kernel.cu:") for leak in leaks), leaks)
        with self.assertRaises(release.LeakError):
            release.release(self.source, ["01_alpha"], self.tmp / "copy", load_rubric(), keep=["02_beta"])
        self.assertFalse((self.tmp / "copy").exists())

    def test_the_command_line_says_how_to_leave_the_kept_step_out(self):
        write_tree(self.source, {"02_beta/kernel.cu": RENAMED_COPY})
        code, _, err = run_lab("release", "--source", self.source, "--steps", "01", "--keep", "02",
                               "--out", self.tmp / "copy")
        self.assertEqual(code, 1)
        self.assertIn("  02_beta/kernel.cu:2: arrive_and_expect(&ready[stage], bytes_per_stage);", err)
        self.assertIn("nothing was written (leave 02_beta out (no --keep), hand it out too, or move the LAB "
                      "markers", err)

    def test_the_same_shape_with_names_in_other_places_is_not(self):
        write_tree(self.source, {"common/other.cuh": SAME_SHAPE})
        self.assertEqual(self.leaks(), [])

    def test_tokens(self):
        code = ('x = 0x1fu + 2.5f; C::y(a->b); s += "//x"; // comment\n/* a\nb */ #pragma unroll\n'
                "for (int i = 0; i < n; ++i) c = '/';\n")
        found = [(t.kind, t.text, t.line) for t in tokens.tokenize(code, "k.cu")]
        self.assertEqual([text for _, text, _ in found],
                         ["x", "=", "0x1fu", "+", "2.5f", ";", "y", "(", "a", "->", "b", ")", ";", "s", "+=", "", ";",
                          "c", "=", "", ";"])  # no qualifier, pragma, loop header or comment; strings alike
        self.assertEqual(found[-4][2], 4)
        self.assertEqual(tokens.normalized(tokens.tokenize("a[i] = b[i] + a[j] * 2;", "k.cu")),
                         ("n0", "[", "n1", "]", "=", "n2", "[", "n1", "]", "+", "n0", "[", "n3", "]", "*", "#4", ";"))


# A later step whose code repeats 01_alpha's solution (the RENAMED_COPY), marked as such, beside a
# region of its own.
REPEATING_KERNEL = """\
void fill(int stage, int kofs, int first_row, int first_col) {
  // LAB BEGIN arm_and_copy [repeats 01]
  arrive_and_expect(&ready[stage], bytes_per_stage);
  copy_box(tile_of_a(stage), map_a, &ready[stage], kofs, first_row);
  for (unsigned box = 0; box != boxes; box++)
    copy_box(tile_of_b(stage) + box * box_size, map_b, &ready[stage], first_col + box * width, kofs);
  // LAB END
  // LAB BEGIN count
  ++filled[stage];
  // LAB END
}
"""
REPEATING_TASKS = ("lab/tasks/02_beta.md", "## arm_and_copy\n\nAs in 01: arm, then copy A's box and B's boxes.\n\n"
                                           "## count\n\nCount the stage.\n")


class RepeatRegionReleaseTest(TemporaryFolderTest):
    """A joint release of a step and a later one that repeats its solution: the repeat region is
    blanked with it, and left as it is in the later step's release alone (markers.py)."""

    def setUp(self):
        super().setUp()
        self.source = self.tmp / "source"
        write_tree(self.source, {"01_alpha/kernel.cu": KERNEL_WITH_PRODUCER, "02_beta/kernel.cu": REPEATING_KERNEL,
                                 PRODUCER_TASKS[0]: PRODUCER_TASKS[1], REPEATING_TASKS[0]: REPEATING_TASKS[1],
                                 "CMakeLists.txt": SMALL_CMAKE})

    def plan(self, steps, level="easy"):
        return release.Plan(self.source, steps, load_rubric(), level=level)

    def test_together_the_repeated_code_is_a_todo_and_nothing_leaks(self):
        plan = self.plan(["01_alpha", "02_beta"])
        self.assertEqual(plan.leaks(), [])
        beta = plan.replaced()["02_beta/kernel.cu"]
        self.assertIn("  // TODO: As in 01: arm, then copy A's box and B's boxes.\n", beta)
        self.assertNotIn("copy_box", beta)
        self.assertIn("ask again for code you write in `01_alpha`", plan.guide)

    def test_without_the_marker_the_joint_release_leaks_as_before(self):
        """The leak check is as strict as it was: the same code, not marked, is found."""
        unmarked = REPEATING_KERNEL.replace("  // LAB BEGIN arm_and_copy [repeats 01]\n", "").replace(
            "kofs);\n  // LAB END\n", "kofs);\n", 1)
        write_tree(self.source, {"02_beta/kernel.cu": unmarked, REPEATING_TASKS[0]: "## count\n\nCount the stage.\n"})
        leaks = self.plan(["01_alpha", "02_beta"]).leaks()
        self.assertTrue(leaks and all(leak.startswith("02_beta/kernel.cu:") for leak in leaks), leaks)

    def test_alone_the_later_step_keeps_the_repeated_code(self):
        plan = self.plan(["02_beta"], level="hard")
        beta = plan.replaced()["02_beta/kernel.cu"]
        self.assertIn("arrive_and_expect(&ready[stage], bytes_per_stage);", beta)
        self.assertNotIn("LAB", beta)
        self.assertEqual([r.instruction[0] for r in plan.regions], ["Count the stage."])
        self.assertEqual(plan.leaks(), [])  # 01_alpha's solution is in the copy anyway: not handed out
        self.assertNotIn("ask again", plan.guide)

    def test_check_counts_the_repeat_regions_apart_and_tries_every_step_together(self):
        code, out, err = run_lab("check", "--source", self.source)
        self.assertEqual((code, err), (0, ""), out)
        self.assertIn("02_beta: 1 region(s), 1 solution line(s) (lines per level: easy 1, medium 1, hard 1); 1 more "
                      "region(s) repeat the solution of 01_alpha, blanked only where one of them is handed out too "
                      "(then lines per level: easy 5, medium 5, hard 5)", out)
        self.assertIn("all 2 lab steps together (--steps all): leaks nothing at level easy, medium, hard", out)

    def test_the_grader_compares_with_the_handout_of_the_steps_handed_out(self):
        """Graded alone, the repeated code is given and may not change; graded as handed out with
        01_alpha (--handed-out), it was a TODO and may."""
        rewritten = REPEATING_KERNEL.replace("box != boxes; box++", "box < boxes; ++box")
        alone = grading.handout_of(self.source, "02_beta", "easy", self_check=False)["02_beta/kernel.cu"]
        self.assertIn("lines are added, changed or removed here", integrity.changed_outside_todos(*alone, rewritten))
        together = grading.handout_of(self.source, "02_beta", "easy", False, ["01_alpha", "02_beta"])
        self.assertEqual(integrity.changed_outside_todos(*together["02_beta/kernel.cu"], rewritten), "")

    def test_a_repeat_of_no_earlier_step_is_refused_with_its_line(self):
        rows = [("02_beta/kernel.cu", REPEATING_KERNEL.replace("repeats 01]", "repeats 07]"),
                 "02_beta/kernel.cu:2: repeats '07': no such step in"),
                ("01_alpha/kernel.cu", KERNEL_WITH_PRODUCER.replace("LAB BEGIN arm_and_copy",
                                                                    "LAB BEGIN arm_and_copy [repeats 02_beta]"),
                 "01_alpha/kernel.cu:2: repeats '02_beta': 02_beta is not before 01_alpha")]
        for path, text, message in rows:
            with self.subTest(path):
                small = self.tmp / path.split("/")[0]
                write_tree(small, {"01_alpha/kernel.cu": KERNEL_WITH_PRODUCER, "02_beta/kernel.cu": REPEATING_KERNEL,
                                   PRODUCER_TASKS[0]: PRODUCER_TASKS[1], REPEATING_TASKS[0]: REPEATING_TASKS[1],
                                   "CMakeLists.txt": SMALL_CMAKE, path: text})
                code, _, err = run_lab("release", "--source", small, "--steps", "all", "--out", self.tmp / "c")
                self.assertEqual(code, 1)
                self.assertIn(message, err)
                self.assertFalse((self.tmp / "c").exists())


class RepositoryReleaseTest(TemporaryFolderTest):
    """Releasing this repository's steps: what the leak check finds, and a release of 09 on disk."""

    def test_each_step_alone_leaks_nothing_into_later_steps_or_other_files(self):
        """Later steps are left out; a leak may only be in an earlier step's kernel, whose code the
        step's solution repeats (then `lab.py check` says to hand the two out together)."""
        rubric = load_rubric()
        steps = [s for s in discover_steps(REPOSITORY) if regions_of(REPOSITORY, s)]
        for step in steps:
            with self.subTest(step=step):
                leaks = release.Plan(REPOSITORY, [step], rubric).leaks()
                earlier = [s for s in steps if s < step]
                self.assertEqual([leak for leak in leaks if not release.leaked_steps([leak], earlier)], [])

    def test_steps_handed_out_together_leak_nothing_but_through_their_own_kernels(self):
        """Handed out together, a later step is in the copy with its regions blanked; where its
        remaining code repeats an earlier step's solution the check says so, and it is never in
        the harness, the documentation or LAB.md."""
        steps = [s for s in discover_steps(REPOSITORY) if regions_of(REPOSITORY, s)]
        leaks = release.Plan(REPOSITORY, steps, load_rubric()).leaks()
        self.assertEqual([leak for leak in leaks if not release.leaked_steps([leak], steps)], [])

    def test_every_step_together_leaks_nothing_into_a_step_that_marks_its_repeats(self):
        """The joint release of every lab step (--steps all), at every level: a step with repeat
        regions (08, 11 and 13 mark the code they repeat of 07, 09 and 10) shows no earlier
        solution. What is left is in steps that mark none (lab.py check's last line lists it), and
        never in the harness, the documentation or LAB.md."""
        steps = [s for s in discover_steps(REPOSITORY) if regions_of(REPOSITORY, s)]
        marking = [s for s in steps if any(r.repeats for r in markers.all_regions(regions_of(REPOSITORY, s)))]
        self.assertTrue({"08_mma_ldmatrix", "11_split_k", "13_swap_ab"} <= set(marking), marking)
        unmarked = [s for s in steps if s not in marking]
        for level, leaks in lab.joint_release_leaks(REPOSITORY, steps, load_rubric()):
            with self.subTest(level=level):
                self.assertEqual([leak for leak in leaks if not release.leaked_steps([leak], unmarked)], [])

    def test_the_hopper_steps_together_leak_nothing_and_ask_for_the_repeated_code(self):
        """09, 10, 11 and 13 at once, at every level: 11's and 13's producers (09's and 10's) are TODOs too;
        07 and 08 at the hard level: 08's copy of 07's pipeline is."""
        hopper = ["09_wgmma_tma", "10_persistent_clusters", "11_split_k", "13_swap_ab"]
        for steps, level, repeated in ((hopper, "easy", 4), (hopper, "hard", 10),
                                       (["07_async_pipeline", "08_mma_ldmatrix"], "hard", 3)):
            with self.subTest(steps=steps, level=level):
                plan = release.Plan(REPOSITORY, steps, load_rubric(), level=level)
                self.assertEqual(plan.leaks(), [])
                self.assertEqual(len([r for r in plan.regions if r.repeats]), repeated)
        code, out, err = run_lab("release", "--steps", "09,10,11,13", "--out", self.tmp / "hopper")
        self.assertEqual((code, err), (0, ""), out)
        eleventh = (self.tmp / "hopper" / "common" / "sm90" / "stream_k_kernel.cuh").read_text()  # 11's kernel
        self.assertIn("// TODO: As in 10 (09's, with a cluster): arm full[stage]", eleventh)
        self.assertNotIn("mbarrier_arrive_expect_bytes(", eleventh)

    def test_keeping_10_with_09_is_refused_for_its_renamed_producer(self):
        """The issue's leak: 10's producer is 09's solution with other names. Kept on request, the
        token check finds it, lines that the exact-line check alone does not see among them."""
        plan = release.Plan(REPOSITORY, ["09_wgmma_tma"], load_rubric(), keep=["10_persistent_clusters"])
        leaks = plan.leaks()
        self.assertTrue(leaks)
        self.assertTrue(all(leak.startswith("10_persistent_clusters/kernel.cu:") for leak in leaks), leaks)
        by_line = {leak.split(": ", 1)[0] for leak in
                   release.find_leaks(release.solution_fingerprints(plan.regions), plan.text_files())}
        self.assertTrue({leak.split(": ", 1)[0] for leak in leaks} - by_line, leaks)

    def test_check_of_the_repository_reaches_every_step_and_passes(self):
        """A line per lab step, to the last. 13 and 14 call 12's and 13's launchers through the headers
        those steps declare and repeat none of their code, so check hands each out alone; a joint
        release that cannot be made (a step's FALLBACK left out) would be no answer either."""
        code, out, err = run_lab("check")
        self.assertEqual(code, 0, out + err)
        lab_steps = [s for s in discover_steps(REPOSITORY) if regions_of(REPOSITORY, s)]
        said = [line.split(":", 1)[0] for line in out.splitlines() if not line.startswith((" ", "all "))]
        self.assertEqual(said, lab_steps)
        # lab/README.md promises it: a release of every step together leaks nothing, at any level.
        self.assertIn(f"all {len(lab_steps)} lab steps together (--steps all): leaks nothing at level easy, medium, hard",
                      out)
        self.assertIn("11_split_k: 4 region(s)", out)  # publish, add_later_partials (hard); the store and the plan
        self.assertIn("12_stream_k: 2 region(s)", out)  # the shared fixup's 2 (hard) in stream_k_schedule.cuh
        self.assertNotRegex(out, r"(12_stream_k|13_swap_ab|14_pad_unaligned): .*hand it out with")

    def test_release_of_09_holds_none_of_its_solution(self):
        copy = self.tmp / "copy"
        code, out, err = run_lab("release", "--steps", "09", "--out", copy)
        self.assertEqual((code, err), (0, ""))
        later = [s for s in discover_steps(REPOSITORY) if s > "09_wgmma_tma"]
        self.assertIn("left out, as later steps: " + ", ".join(later), out)
        self.assertFalse((copy / ".git").exists())
        self.assertFalse((copy / "lab" / "tests").exists())
        self.assertFalse((copy / "10_persistent_clusters").exists())
        self.assertNotIn("add_worklog_step(10_", (copy / "CMakeLists.txt").read_text())
        self.assertEqual(json.loads((copy / "lab" / "released.json").read_text())["withheld"], later)
        kernel = (copy / "09_wgmma_tma" / "kernel.cu").read_text()
        self.assertIn("// TODO: ", kernel)
        self.assertNotIn("LAB BEGIN", kernel)
        self.assertIn("watchdog", (copy / "LAB.md").read_text())  # a Hopper step
        # Read back independently: no line, and no renamed copy, of 09's solution in any file (the
        # solution of the level handed out: the easy one keeps the code of the hard regions).
        regions = markers.blanked_regions(regions_of(REPOSITORY, "09_wgmma_tma"), "easy")
        written = sorted(p.relative_to(copy) for p in copy.rglob("*") if p.is_file())
        self.assertEqual(release.all_leaks(regions, release.text_files(copy, written)), [])
        hard = self.tmp / "hard"
        code, out, err = run_lab("release", "--steps", "09", "--level", "hard", "--out", hard)
        self.assertEqual((code, err), (0, ""))
        every = markers.blanked_regions(regions_of(REPOSITORY, "09_wgmma_tma"), "hard")
        self.assertGreater(sum(len(r.solution) for r in every), sum(len(r.solution) for r in regions))
        written_hard = sorted(p.relative_to(hard) for p in hard.rglob("*") if p.is_file())
        self.assertEqual(release.all_leaks(every, release.text_files(hard, written_hard)), [])
        # What was left out did hold it.
        tenth = (REPOSITORY / "10_persistent_clusters" / "kernel.cu").read_text()
        self.assertTrue(release.all_leaks(regions, [("10_persistent_clusters/kernel.cu", tenth)]))
        # The harness and the exit codes travel with the copy, and its lab.py runs there.
        for same in ("common/run_step.cpp", "common/exit_codes.hpp", "common/exit_codes.py"):
            self.assertEqual((copy / same).read_bytes(), (REPOSITORY / same).read_bytes(), same)
        done = subprocess.run([sys.executable, str(copy / "lab" / "lab.py"), "check"], capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertIn("09_wgmma_tma: no LAB regions (handed out in this copy", done.stdout)


if __name__ == "__main__":
    unittest.main()
