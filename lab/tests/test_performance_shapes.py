"""The rubric's performance shapes run the LAB regions of the steps they time.

The grader times each step at one shape (lab/rubric.json: performance.sizes, else performance.size).
Where that shape sends the work down a path without the student's code (13 hands M > 128 to 12; 14
copies nothing when every row is aligned; 11 and 12 split no tile at 4096³ on 132 SMs), the student's
region never runs and the step's performance points come for nothing. So, for each step:

- 01 to 08 run every region at every shape: an unaligned shape runs the same kernel template as an
  aligned one (07's and 08's element-wise copies, 04's scalar loads), with the same regions;
- 09 to 16: lab_routes (common/tests/lab_routes/, built with the tests; CTest names it in
  LAB_ROUTES) works out on the CPU, from each step's own launch logic and plans, which path the
  shape takes and whether each LAB region runs there. Every region must run, but those of NOT_TIMED,
  which no shape runs together with the others. For 15 the regions must also matter: the model's
  pick must differ from the entry a blank choice runs and from the one a blank model of the work
  picks. 16's region (a swapped entry's work) runs where 16's model asks for it, which it does only
  for an entry that 16's calibration prices. A step after 08 that lab_routes does not know fails:
  teach it the new step's routes.

lab_routes counts resident workers as one per SM, clusters of two on pairs (132 SMs: an H100 SXM or
an H200, the GPUs of the committed figures). test_the_model_is_the_one_the_gpu_ran checks that
against 15's tile_model.csv, which an H100 wrote.

Run from anywhere:  python3 -m unittest discover -s lab/tests -v  (LAB_ROUTES=build/common/tests/lab_routes)
"""
import copy
import csv
import json
import os
import subprocess
import unittest

from lab_test_support import REPOSITORY, TemporaryFolderTest, executable, write_tree

from labkit import markers  # noqa: E402  (after lab_test_support, which puts lab/ on the path)
from labkit.rubric import load_rubric, performance_size  # noqa: E402
from labkit.steps import discover_steps, regions_of  # noqa: E402

ROUTES = os.environ.get("LAB_ROUTES")
SKIP = "LAB_ROUTES (the built common/tests/lab_routes) not given"

# Steps whose every LAB region runs whatever the shape (this module's docstring says why).
EVERY_SHAPE = {f"{n:02d}" for n in range(1, 9)}
# Regions that the performance shape of their step does not run, and why that is the best one shape
# can do; correctness cases run them (gpu_tests' standard cases, which the grader runs for every step).
NOT_TIMED = {
    "14_pad_unaligned": {
        "in_place_products": "the in-place route (few rows, B unaligned) copies nothing, so no shape runs it "
                             "together with the copy and the hand-off",
        "in_place_pipeline": "as the in-place products",
    },
}
TILE_MODEL = REPOSITORY / "plots" / "results" / "tile_model.csv"


def why_not(route):
    """What lab_routes says of a route where a region of the model does not run: nothing, or that the
    model runs but its step's calibration prices no entry (15's choice skips an entry without prices
    before it asks the entry for its work)."""
    if route.get("model") and route.get("priced_entries") == 0:
        return (": the model prices no entry of the menu, so it asks none for its work (the step's "
                "prices, common/sm90/tile_prices_<step>.csv, are empty: run its calibrate tool on a GPU)")
    return ""


def shape_text(size):
    return "x".join(str(v) for v in size)


def lab_routes(shapes, routes=ROUTES):
    """lab_routes' answer for `shapes`: {(M, N, K): {step: route}}."""
    done = subprocess.run([routes, *sorted({shape_text(s) for s in shapes})], capture_output=True, text=True,
                          timeout=120)
    if done.returncode != 0:
        raise AssertionError(f"lab_routes failed (exit code {done.returncode}): {done.stderr.strip()}")
    return {tuple(s["shape"]): s["steps"] for s in json.loads(done.stdout)["shapes"]}


def performance_shape_problems(rubric, root=REPOSITORY, routes=ROUTES):
    """What is wrong with the performance shapes of `rubric` for the lab steps of tree `root`: one
    line per problem, [] when every step's shape runs its regions."""
    steps = [s for s in discover_steps(root) if regions_of(root, s)]
    checked = [s for s in steps if s[:2] not in EVERY_SHAPE]
    answers = lab_routes([performance_size(rubric, s) for s in checked], routes) if checked else {}
    problems = []
    for step in checked:
        size = performance_size(rubric, step)
        where = f"{step} at {shape_text(size)}"
        route = answers[tuple(size)].get(step)
        if route is None:
            problems.append(f"{where}: lab_routes does not know {step}: add its routes to common/tests/lab_routes/")
            continue
        names = [r.name for r in markers.all_regions(regions_of(root, step))]
        if [r["name"] for r in route["regions"]] != names:
            problems.append(f"{where}: lab_routes names the LAB regions {', '.join(r['name'] for r in route['regions'])}; "
                            f"the step's files mark {', '.join(names)}: update common/tests/lab_routes/step_{step[:2]}.cu")
        for region in route["regions"]:
            if not region["runs"] and region["name"] not in NOT_TIMED.get(step, {}):
                problems.append(f"{where}: the route is {route['route']}, where the region "
                                f"\"{region['name']}\" does not run{why_not(route)}")
        if step.startswith("15_") and route["route"] == "the menu":
            for blank in ("pick_without_the_choice", "pick_without_the_terms"):
                if route["pick"] == route[blank]:
                    problems.append(f"{where}: the model picks {route['pick']}, as it does {blank.replace('_', ' ')}: "
                                    "a student's choice would not change the speed")
    return problems


class RegionNamesTest(TemporaryFolderTest):
    def test_lab_routes_names_the_regions_as_their_markers_do(self):
        """lab_routes reports each region by its marker's name; another list (a region renamed, added or
        gone without lab_routes knowing) is a problem, named."""
        write_tree(self.tmp, {"09_x/kernel.cu": "// LAB BEGIN copy\nx;\n// LAB END\n// LAB BEGIN wait\ny;\n// LAB END\n",
                              "lab/tasks/09_x.md": "## copy\n\nCopy.\n\n## wait\n\nWait.\n"})
        answer = {"shapes": [{"shape": [64, 64, 64], "steps": {"09_x": {"route": "tma", "regions": [
            {"name": "copy", "runs": True}, {"name": "arrive", "runs": True}]}}}]}
        routes = executable(self.tmp / "routes", f"#!/bin/sh\ncat <<'EOF'\n{json.dumps(answer)}\nEOF\n")
        problems = performance_shape_problems({"performance": {"size": [64, 64, 64]}}, self.tmp, str(routes))
        self.assertEqual(problems, ["09_x at 64x64x64: lab_routes names the LAB regions copy, arrive; the step's "
                                    "files mark copy, wait: update common/tests/lab_routes/step_09.cu"])
        answer["shapes"][0]["steps"]["09_x"]["regions"][1]["name"] = "wait"
        routes.write_text(f"#!/bin/sh\ncat <<'EOF'\n{json.dumps(answer)}\nEOF\n")
        self.assertEqual(performance_shape_problems({"performance": {"size": [64, 64, 64]}}, self.tmp, str(routes)), [])


@unittest.skipUnless(ROUTES, SKIP)
class PerformanceShapesTest(unittest.TestCase):
    def test_the_rubrics_shapes_run_every_region(self):
        self.assertEqual(performance_shape_problems(load_rubric()), [])

    def test_4096_cubed_skips_the_regions_of_11_12_13_14_and_15(self):
        """The old rubric (every step at 4096³) gave 11 to 15 their performance points for nothing."""
        rubric = load_rubric()
        for step in ("11_split_k", "12_stream_k", "13_swap_ab", "14_pad_unaligned", "15_tile_per_shape"):
            with self.subTest(step=step):
                changed = copy.deepcopy(rubric)
                changed["performance"]["sizes"][step] = [4096, 4096, 4096]
                problems = performance_shape_problems(changed)
                self.assertTrue(problems, step)
                self.assertTrue(all(p.startswith(f"{step} at 4096x4096x4096: ") for p in problems), problems)
        old = copy.deepcopy(rubric)
        del old["performance"]["sizes"]  # a rubric recorded before per-step sizes (and before step 16)
        problems = [p for p in performance_shape_problems(old) if p[:2] < "16"]
        self.assertEqual({p[:2] for p in problems}, {"11", "12", "13", "14", "15"}, problems)
        self.assertIn("11_split_k at 4096x4096x4096: the route is tma, where the region \"publish\" does not run",
                      problems)
        self.assertIn("12_stream_k at 4096x4096x4096: the route is tma, where the region \"share\" does not run",
                      problems)
        self.assertIn("13_swap_ab at 4096x4096x4096: the route is 12, where the region \"store_transposed\" does "
                      "not run", problems)
        self.assertIn("14_pad_unaligned at 4096x4096x4096: the route is swap_step, where the region \"pad_copy\" does "
                      "not run", problems)
        self.assertIn("15_tile_per_shape at 4096x4096x4096: the model picks menu_128x256_c2, as it does pick without "
                      "the choice: a student's choice would not change the speed", problems)

    def test_other_shapes_that_skip_a_region(self):
        rows = [
            ("11_split_k", [1024, 1024, 1024], "\"add_later_partials\" does not run"),  # whole tiles
            ("12_stream_k", [1024, 1024, 1024], "\"share\" does not run"),  # whole tiles
            ("12_stream_k", [4097, 4097, 4097], "the route is 08"),  # rows TMA cannot describe
            ("13_swap_ab", [129, 4096, 4096], "the route is 12"),  # one row above swap_ab::max_m
            ("13_swap_ab", [16, 4097, 4096], "the route is 08"),
            ("14_pad_unaligned", [16, 4097, 4096], "the route is in_place"),  # few rows read in place: no copy
            ("15_tile_per_shape", [16, 4096, 4096], "the route is 13's few rows"),  # few rows go to 13
            ("15_tile_per_shape", [3072, 3072, 3072], "as it does pick without the terms"),
            ("16_both_orientations", [16, 4096, 4096], "the route is 13's few rows"),  # 13's launcher: no model
            ("16_both_orientations", [300, 4097, 2100], "the route is 14's padding"),  # 14's swap kernel writes C
        ]
        for step, size, message in rows:
            with self.subTest(step=step, size=size):
                rubric = load_rubric()
                rubric["performance"]["sizes"][step] = size
                problems = performance_shape_problems(rubric)
                self.assertTrue(any(message in p for p in problems), problems)

    def test_09_and_10_at_an_unaligned_default_size(self):
        rubric = load_rubric()
        rubric["performance"]["size"] = [4097, 4097, 4097]
        problems = performance_shape_problems(rubric)
        for step in ("09_wgmma_tma", "10_persistent_clusters"):
            self.assertTrue(any(p.startswith(f"{step} at 4097x4097x4097: the route is 08") for p in problems), problems)
        self.assertFalse([p for p in problems if p[:2] in EVERY_SHAPE])

    def test_11s_and_12s_shape_splits_tiles_as_their_readmes_draw_them(self):
        steps = lab_routes([[3072, 3072, 3072]])[(3072, 3072, 3072)]
        # 144 cluster tiles on 66 clusters: 2 whole waves, the last 12 tiles in 5 parts each, fixed up by
        # the unit holding slice 0 in 11 and shared by the 5 units in 12.
        for step, fixup in (("11_split_k", "alone"), ("12_stream_k", "shared")):
            with self.subTest(step=step):
                route = steps[step]
                self.assertEqual((route["tiles"], route["whole_tiles"], route["split_tiles"],
                                  route["parts_per_split_tile"], route["fixup"]), (144, 132, 12, 5, fixup))

    def test_16s_model_runs_on_the_menu_and_where_14_hands_the_padded_problem_back(self):
        """16's model (and so its region, where an entry is priced) runs on the menu's route, and on 14's
        padding where 14 hands the padded problem to 16's launcher (staged C, or 13's route: M above
        few_rows); not on few rows, nor where 14's swap kernel writes C itself. The menu is 15's nine
        entries and 13's six swapped tiles."""
        rows = [([1024, 1024, 1024], "the menu", True), ([16, 4096, 4096], "13's few rows", False),
                ([4097, 4097, 4097], "14's padding", True), ([300, 4097, 2100], "14's padding", False)]
        answers = lab_routes([size for size, _, _ in rows])
        for size, path, model in rows:
            with self.subTest(size=size):
                route = answers[tuple(size)]["16_both_orientations"]
                self.assertEqual((route["route"], route["model"]), (path, model))
                self.assertEqual((route["menu_entries"], route["swapped_entries"]), (15, 6))
                if not model:
                    self.assertEqual(route["regions"], [{"name": "swapped_work", "runs": False}])

    @unittest.skipUnless(TILE_MODEL.is_file(), "no plots/results/tile_model.csv")
    def test_the_model_is_the_one_the_gpu_ran(self):
        """lab_routes' plans of 15's entries (one worker per SM, clusters of two) give the terms, the
        predictions and the pick that 15's calibrate tool recorded (tile_model.csv; a fixup "shared" is one
        too, its parts summing together)."""
        with open(TILE_MODEL, newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
        answers = lab_routes([[int(r["m"]), int(r["n"]), int(r["k"])] for r in rows])
        compared = 0
        for row in rows:
            route = answers[(int(row["m"]), int(row["n"]), int(row["k"]))]["15_tile_per_shape"]
            if route["route"] != "the menu":
                continue  # a shape the menu does not take (small, tiny K): the tool explained it all the same
            entry = next(e for e in route["entries"] if e["entry"] == row["entry"])
            with self.subTest(shape=(row["m"], row["n"], row["k"]), entry=row["entry"]):
                self.assertEqual((entry["slices"], entry["segments"], entry["fixup"], entry["unaligned_slices"] > 0),
                                 (int(row["slices"]), int(row["segments"]), row["fixup"] in ("yes", "shared"),
                                  row["off_lines"] == "yes"))
                self.assertAlmostEqual(entry["model_us"], float(row["model_us"]), delta=0.06)  # the CSV's 0.1 µs
                self.assertEqual(route["pick"] == row["entry"], row["picked"] == "yes")
            compared += 1
        self.assertGreater(compared, 0)

    def test_bad_command_lines(self):
        for argv in (["3072x3072"], [], ["--sms", "x", "64x64x64"], ["0x64x64"]):
            with self.subTest(argv=argv):
                done = subprocess.run([ROUTES, *argv], capture_output=True, text=True, timeout=60)
                self.assertEqual(done.returncode, 2, done.stderr)
                self.assertTrue(done.stderr.startswith("lab_routes: error: "), done.stderr)
                self.assertEqual(done.stdout, "")


if __name__ == "__main__":
    unittest.main()
