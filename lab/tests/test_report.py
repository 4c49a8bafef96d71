"""Scoring, report.md and results.json on grading records in fixtures/ (hand-written in the shape
that grade writes to grading.json), and the rubric file.

Run from anywhere:  python3 -m unittest discover -s lab/tests -v
"""
import contextlib
import io
import json
import unittest

from lab_test_support import FIXTURES, TemporaryFolderTest

import lab  # noqa: E402  (after lab_test_support, which puts lab/ on the path)
from labkit import report  # noqa: E402
from labkit.rubric import check_sizes, load_rubric, performance_fraction, performance_size, sizes_text  # noqa: E402
from labkit.steps import UsageError  # noqa: E402

GRADESCOPE_VISIBILITY = {"hidden", "after_due_date", "after_published", "visible"}


def load(name):
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def parts_by_name(scores):
    return {p.name: p for s in scores for p in s.parts}


class RubricArithmeticTest(unittest.TestCase):
    def test_performance_is_full_from_90_percent_and_zero_at_25(self):
        rubric = load_rubric()
        for ratio, expected in [(2.0, 1.0), (0.9, 1.0), (0.575, 0.5), (0.25, 0.0), (0.1, 0.0), (0.38, 0.2)]:
            with self.subTest(ratio=ratio):
                self.assertAlmostEqual(performance_fraction(ratio, rubric), expected)

    def test_mixed_record_step_by_step(self):
        record = load("grading_mixed.json")
        scores = report.score_record(record)
        self.assertEqual({s.step: (s.score, s.max_score) for s in scores}, {
            # 4 standard cases (3 pass) and 2 hidden (both pass): 60·5/6; sanitizer 3 of 4 clean;
            # no performance points because a case fails.
            "02_block_tiling": (57.5, 100),
            "03_thread_coarsening": (0, 100),  # did not compile
            # every case passes, sanitizer clean, 60% of the reference: 30·(0.6 − 0.25)/0.65.
            "04_outer_product": (86.15, 100),
            "05_wmma": (10, 100),  # 1 of 6 cases before a timeout; sanitizer and performance not run
            # one hidden case fails: 50 for correctness, 6 of 8 sanitizer runs clean, no performance.
            "06_multiwarp_wmma": (57.5, 100),
        })
        parts = parts_by_name(scores)
        self.assertEqual(parts["02_block_tiling: correctness, standard cases"].max_score, 40)
        self.assertEqual(parts["02_block_tiling: correctness, standard cases"].score, 30)
        self.assertEqual(parts["02_block_tiling: correctness, instructor cases"].max_score, 20)
        self.assertEqual(parts["04_outer_product: performance"].score, 16.15)
        self.assertIn("1 correctness case(s) fail", parts["02_block_tiling: performance"].output)
        self.assertIn("a case timed out", parts["05_wmma: compute-sanitizer"].output)
        self.assertIn("identifier \"acc2\" is undefined", parts["03_thread_coarsening: compute-sanitizer"].output)

    def test_reference_against_itself_is_full_marks(self):
        record = load("grading_full_marks.json")
        results = report.gradescope_results(record, report.score_record(record))
        self.assertEqual(results["score"], 200)
        self.assertTrue(all(t["score"] == t["max_score"] for t in results["tests"]))

    def test_sanitizer_points_need_a_passing_case_unless_the_rubric_says_otherwise(self):
        record = load("grading_mixed.json")
        step = next(s for s in record["steps"] if s["step"] == "04_outer_product")
        failing = dict(step, cases=[dict(c, status="fail") for c in step["cases"]])
        self.assertEqual(parts_by_name([report.score_step(failing, record["rubric"])])
                         ["04_outer_product: compute-sanitizer"].score, 0)
        lenient = json.loads(json.dumps(record["rubric"]))
        lenient["sanitizer"]["requires_a_passing_case"] = False
        self.assertEqual(parts_by_name([report.score_step(failing, lenient)])
                         ["04_outer_product: compute-sanitizer"].score, 10)

    def test_failed_check_at_the_performance_size_gets_no_performance_points(self):
        record = load("grading_full_marks.json")
        step = dict(record["steps"][0])
        step["performance"] = dict(step["performance"], submission_check="FAIL",
                                   note="the submission's result at this size failed the check against cuBLAS")
        part = parts_by_name([report.score_step(step, record["rubric"])])["02_block_tiling: performance"]
        self.assertEqual(part.score, 0)
        self.assertIn("failed the check", part.output)

    def test_self_check_leaves_performance_to_the_instructor(self):
        record = load("grading_self_check.json")
        scores = report.score_record(record)
        self.assertEqual((scores[0].score, scores[0].max_score), (70, 70))
        perf = parts_by_name(scores)["02_block_tiling: performance (scored by the instructor's grading)"]
        self.assertEqual(perf.max_score, 0)
        self.assertIn("of cuBLAS", perf.output)


class GradescopeFormatTest(unittest.TestCase):
    def setUp(self):
        self.record = load("grading_mixed.json")
        self.results = report.gradescope_results(self.record, report.score_record(self.record))

    def test_shape(self):
        self.assertIsInstance(self.results["score"], (int, float))
        self.assertIsInstance(self.results["tests"], list)
        for test in self.results["tests"]:
            self.assertEqual(set(test), {"name", "score", "max_score", "output", "visibility"})
            self.assertIsInstance(test["name"], str)
            self.assertIsInstance(test["output"], str)
            self.assertIsInstance(test["score"], (int, float))
            self.assertIsInstance(test["max_score"], (int, float))
            self.assertLessEqual(test["score"], test["max_score"])
            self.assertIn(test["visibility"], GRADESCOPE_VISIBILITY)
        json.dumps(self.results)  # serializable as it is

    def test_total_is_the_sum_of_the_tests(self):
        self.assertAlmostEqual(self.results["score"], 211.15)
        self.assertAlmostEqual(sum(t["score"] for t in self.results["tests"]), self.results["score"])
        self.assertEqual(sum(t["max_score"] for t in self.results["tests"]), 500)

    def test_instructor_cases_keep_their_shapes_hidden(self):
        hidden = [t for t in self.results["tests"] if "instructor cases" in t["name"]]
        self.assertEqual(len(hidden), 5)  # one per step
        for test in hidden:
            self.assertEqual(test["visibility"], "after_published")
            self.assertNotIn("333", test["output"])
            self.assertNotIn("1000", test["output"])

    def test_failing_standard_case_names_its_first_wrong_element(self):
        test = next(t for t in self.results["tests"] if t["name"] == "02_block_tiling: correctness, standard cases")
        self.assertIn("3 of 4 standard cases pass", test["output"])
        self.assertIn("31×33×17, α = 0.75, β = -0.5: FAIL (1023 wrong element(s); first at (row 0, col 31)",
                      test["output"])


class MarkdownReportTest(unittest.TestCase):
    def setUp(self):
        record = load("grading_mixed.json")
        self.text = report.markdown_report(record, report.score_record(record))

    def test_summary_table_and_total(self):
        self.assertIn("**Total: 211.15 of 500**", self.text)
        self.assertIn("| 04_outer_product | 60 / 60 | 10 / 10 | 16.15 / 30 | **86.15 / 100** | reached |", self.text)
        self.assertIn("| 02_block_tiling | 50 / 60 | 7.5 / 10 | 0 / 30 | **57.5 / 100** | **below** |", self.text)
        self.assertIn("GPU: NVIDIA H100 80GB HBM3", self.text)

    def test_every_case_with_its_result(self):
        self.assertIn("| 2 | standard | 31×33×17, α = 0.75, β = -0.5 | **FAIL** | 1023 wrong element(s); first at "
                      "(row 0, col 31): expected 1.2345678, got 0 |", self.text)
        self.assertIn("| 6 | instructor | 1000×1×1000, α = 1, β = 0, C = NaN | **ERROR** | CUDA error:", self.text)
        self.assertIn("| 2 | standard | 31×33×17, α = 0.75, β = -0.5 | **TIMEOUT** |", self.text)

    def test_speed_against_reference_and_cublas(self):
        self.assertIn("| submission | 24.00 | 60.0% | 46.9% |", self.text)
        self.assertIn("| reference solution | 40.00 | 100.0% | 78.1% |", self.text)
        self.assertIn("| cuBLAS | 51.20 | 128.0% | 100.0% |", self.text)

    def test_compile_error_is_shown(self):
        self.assertIn("**Did not compile.** The compiler's first error:", self.text)
        self.assertIn('03_thread_coarsening/kernel.cu(73): error: identifier "acc2" is undefined', self.text)

    def test_missing_kernel_is_not_built_rather_than_a_compile_error(self):
        record = load("grading_mixed.json")
        record["steps"][1]["compile"] = {"ok": False, "reason": "no kernel",
                                         "error": "the submission has no 03_thread_coarsening/kernel.cu"}
        scores = report.score_record(record)
        self.assertIn("**Not built:** nothing to compile.", report.markdown_report(record, scores))
        self.assertEqual(parts_by_name(scores)["03_thread_coarsening: compute-sanitizer"].output,
                         "not built:\nthe submission has no 03_thread_coarsening/kernel.cu")


class FairTimingAndIntegrityScoreTest(unittest.TestCase):
    def test_the_ratio_of_shares_of_cublas_is_what_is_scored(self):
        record = load("grading_mixed.json")
        step = dict(record["steps"][2], performance=dict(record["steps"][2]["performance"], ratio=0.9,
                                                         other_processes=["4242 python3 (1200 MiB)"]))
        part = parts_by_name([report.score_step(step, record["rubric"])])["04_outer_product: performance"]
        self.assertEqual(part.score, 30)  # 0.9 of the reference by shares of cuBLAS (24/40 = 0.6 by TFLOP/s)
        self.assertIn("scored ratio (median share of cuBLAS in each run, submission over reference): 90.0%",
                      part.output)
        self.assertIn("other processes used the GPU while it was timed (4242 python3 (1200 MiB))", part.output)

    def test_a_refused_step_scores_nothing_and_says_why(self):
        record = load("grading_full_marks.json")
        step = dict(record["steps"][0], compile={"ok": False, "reason": "refused",
                                                 "error": "line 12 of the handout's file is changed"},
                    integrity=[{"check": "only the TODOs changed", "status": "fail",
                                "detail": "line 12 of the handout's file is changed"}],
                    cases=[dict(c, status="not run", detail="refused") for c in record["steps"][0]["cases"]])
        scored = report.score_step(step, record["rubric"])
        self.assertEqual(scored.score, 0)
        parts = parts_by_name([scored])
        self.assertEqual(parts["02_block_tiling: integrity, only the TODOs changed"].status, "failed")
        self.assertIn("refused:", parts["02_block_tiling: performance"].output)
        self.assertIn("**Refused** (integrity", report.markdown_report(dict(record, steps=[step]), [scored]))
        results = report.gradescope_results(dict(record, steps=[step]), [scored])
        self.assertIn({"name": "02_block_tiling: integrity, only the TODOs changed", "score": 0.0, "max_score": 0.0,
                       "output": "FAIL: line 12 of the handout's file is changed", "visibility": "visible",
                       "status": "failed"}, results["tests"])


class ClassTableTest(unittest.TestCase):
    def test_a_row_per_grading_with_each_steps_parts(self):
        rows = [report.class_row("alice", load("grading_mixed.json")),
                report.class_row("bob", load("grading_full_marks.json"))]
        columns = report.class_columns(rows)
        self.assertEqual(columns[:len(report.FIXED_COLUMNS)], report.FIXED_COLUMNS)
        alice = rows[0]
        self.assertEqual((alice["total"], alice["max_total"], alice["mode"]), (211.15, 500, "gpu"))
        self.assertEqual((alice["04_outer_product"], alice["04_outer_product performance"]), (86.15, 16.15))
        self.assertEqual(alice["03_thread_coarsening status"], "did not compile")
        self.assertEqual(alice["02_block_tiling status"], "5/6 cases")
        self.assertEqual(alice["04_outer_product tflops"], "24.00")
        self.assertEqual(rows[1]["total"], 200)
        self.assertIn("06_multiwarp_wmma sanitizer", columns)


class RubricFileTest(TemporaryFolderTest):
    def rubric_file(self, text):
        path = self.tmp / "rubric.json"
        path.write_text(text, encoding="utf-8")
        return path

    def test_defaults(self):
        rubric = load_rubric()
        self.assertEqual((rubric["correctness"]["points"], rubric["sanitizer"]["points"],
                          rubric["performance"]["points"]), (50, 10, 30))
        # The checks a grading without a GPU can score (build, integrity, host tests): 100 in all.
        self.assertEqual(rubric["checks"], {"build": 4, "integrity": 4, "host_tests": 2})
        self.assertEqual(rubric["integrity"], {"per_changed_line": 5, "refuse_above_lines": 10})
        self.assertEqual(rubric["performance"]["size"], [4096, 4096, 4096])
        self.assertEqual((rubric["performance"]["full_at"], rubric["performance"]["zero_at"]), (0.9, 0.25))

    def test_a_file_changes_only_what_it_names(self):
        rubric = load_rubric(self.rubric_file('{"performance": {"points": 40, "size": [2048, 2048, 2048]}}'))
        self.assertEqual(rubric["performance"]["points"], 40)
        self.assertEqual(rubric["performance"]["full_at"], 0.9)
        self.assertEqual(rubric["correctness"]["points"], 50)

    def test_each_step_is_timed_at_its_own_size_or_the_default(self):
        rubric = load_rubric()
        self.assertEqual(performance_size(rubric, "04_outer_product"), [4096, 4096, 4096])
        self.assertEqual(performance_size(rubric, "12_stream_k"), [3072, 3072, 3072])
        self.assertEqual(performance_size(rubric, "13_swap_ab"), [16, 4096, 4096])
        self.assertEqual(performance_size(rubric, "14_pad_unaligned"), [4097, 4097, 4097])
        self.assertEqual(performance_size(rubric, "15_tile_per_shape"), [1024, 1024, 1024])
        self.assertEqual(performance_size(rubric, "16_both_orientations"), [1024, 1024, 1024])

    def test_a_file_with_size_alone_keeps_the_steps_own_sizes(self):
        """A rubric file written before sizes existed changes the default size, not the steps' own."""
        rubric = load_rubric(self.rubric_file('{"performance": {"size": [2048, 2048, 2048]}}'))
        self.assertEqual(performance_size(rubric, "04_outer_product"), [2048, 2048, 2048])
        self.assertEqual(performance_size(rubric, "12_stream_k"), [3072, 3072, 3072])

    def test_a_file_names_a_step_by_number_or_name_and_replaces_only_that_one(self):
        rubric = load_rubric(self.rubric_file('{"performance": {"sizes": {"12": [1024, 1024, 8192], '
                                              '"04_outer_product": [2048, 2048, 2048]}}}'))
        self.assertEqual(performance_size(rubric, "12_stream_k"), [1024, 1024, 8192])
        self.assertEqual(performance_size(rubric, "04_outer_product"), [2048, 2048, 2048])
        self.assertEqual(performance_size(rubric, "13_swap_ab"), [16, 4096, 4096])
        self.assertNotIn("12_stream_k", rubric["performance"]["sizes"])  # "12" took its place

    def test_a_recorded_rubric_without_sizes_times_every_step_at_size(self):
        record = load("grading_mixed.json")
        self.assertNotIn("sizes", record["rubric"]["performance"])
        self.assertEqual(performance_size(record["rubric"], "12_stream_k"), [4096, 4096, 4096])
        text = report.markdown_report(record, report.score_record(record))
        self.assertIn("performance 30 at 4096×4096×4096 (full points from 90%", text)

    def test_the_report_and_lab_md_say_each_steps_size(self):
        rubric = load_rubric()
        self.assertEqual(sizes_text(rubric, ["02_block_tiling", "04_outer_product"]), "at 4096×4096×4096")
        self.assertEqual(sizes_text(rubric, ["13_swap_ab"]), "at 16×4096×4096")
        self.assertEqual(sizes_text(rubric, ["04_outer_product", "12_stream_k", "14_pad_unaligned"]),
                         "at 4096×4096×4096 but 12_stream_k at 3072×3072×3072 and 14_pad_unaligned at 4097×4097×4097")
        self.assertEqual(sizes_text(rubric, ["12_stream_k", "13_swap_ab"]),
                         "with 12_stream_k at 3072×3072×3072 and 13_swap_ab at 16×4096×4096")
        record = load("grading_mixed.json")
        record["rubric"] = rubric
        record["steps"][0]["performance"]["size"] = [1000, 1000, 1000]  # as that grading timed it
        text = report.markdown_report(record, report.score_record(record))
        self.assertIn(f"performance 30 at 4096×4096×4096 but {record['steps'][0]['step']} at 1000×1000×1000 (full",
                      text)
        self.assertIn("### Performance at 1000×1000×1000", text)

    def test_a_size_must_name_the_trees_step_by_its_name(self):
        steps = ["10_persistent_clusters", "12_stream_k"]
        check_sizes(load_rubric(), steps, "rubric.json")
        check_sizes(load_rubric(), ["02_block_tiling"], "rubric.json")  # a student's copy: later steps left out
        rubric = load_rubric(self.rubric_file('{"performance": {"sizes": {"12_stream": [64, 64, 64]}}}'))
        with self.assertRaises(UsageError) as caught:
            check_sizes(rubric, steps, "rubric.json")
        self.assertIn("'12_stream' is not a step of this tree (step 12 is 12_stream_k)", str(caught.exception))

    def test_bad_rubrics(self):
        rows = [
            ('{"performance": {"sizes": [4096, 4096, 4096]}}', "performance: 'sizes' must be an object"),
            ('{"performance": {"sizes": {"stream_k": [64, 64, 64]}}}', "'stream_k' is not a step"),
            ('{"performance": {"sizes": {"12": [64, 64]}}}', "performance.sizes.12 must be [M, N, K]"),
            ('{"performance": {"sizes": {"12": [64, 0, 64]}}}', "performance.sizes.12 must be [M, N, K]"),
            ('{"performance": {"sizes": {"12": [64, 64, 64], "12_stream_k": [64, 64, 64]}}}',
             "performance.sizes names step 12 twice"),
            ('{"speed": {}}', "unknown rubric key 'speed'"),
            ('{"performance": {"fast_at": 1}}', "unknown rubric key 'fast_at'"),
            ('{"performance": {"zero_at": 0.9, "full_at": 0.5}}', "must be below full_at"),
            ('{"performance": {"size": [4096, 4096]}}', "performance.size must be [M, N, K]"),
            ('{"sanitizer": {"tools": ["valgrind"]}}', "sanitizer.tools must be"),
            ('{"correctness": {"points": -1}}', "correctness.points must be a number at least 0"),
            ('{"performance": {"rounds": 0}}', "performance.rounds must be an integer at least 1"),
            ('{"instructor_cases_visibility": "secret"}', "instructor_cases_visibility must be one of"),
            ('{"pass_mark": -1}', "pass_mark must be a number at least 0"),
            ('{"correctness": ', "not valid JSON"),
        ]
        for text, message in rows:
            with self.subTest(text=text):
                with self.assertRaises(UsageError) as caught:
                    load_rubric(self.rubric_file(text))
                self.assertIn(message, str(caught.exception))


class WriteOutputsTest(TemporaryFolderTest):
    def test_three_files_from_one_record(self):
        with contextlib.redirect_stdout(io.StringIO()):
            lab.write_outputs(load("grading_mixed.json"), self.tmp)
        self.assertEqual(sorted(p.name for p in self.tmp.iterdir()), ["grading.json", "report.md", "results.json"])
        self.assertEqual(json.loads((self.tmp / "results.json").read_text())["score"], 211.15)
        self.assertEqual(json.loads((self.tmp / "grading.json").read_text()), load("grading_mixed.json"))


if __name__ == "__main__":
    unittest.main()
