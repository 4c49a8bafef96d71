"""The grader's runs without a GPU: the cases, running with timeouts, reading what the step
executables and the sanitizer tests say (fake executables stand in for them), and the timing.
test_grading.py has the builds, whole gradings of a fake tree and the command line.

Run from anywhere:  python3 -m unittest discover -s lab/tests -v
The standard-case listing test uses the real gpu_tests when LAB_GPU_TESTS names it (CTest does).
"""
import contextlib
import io
import os
import re
import shutil
import subprocess
import tempfile
import time
import unittest
from pathlib import Path

from lab_test_support import REPOSITORY, TemporaryFolderTest, executable, rubric_with

from labkit import exit_codes, grading  # noqa: E402  (after lab_test_support, which puts lab/ on the path)
from labkit.cases import Case, parse_cases  # noqa: E402
from labkit.rubric import load_rubric  # noqa: E402
from labkit.steps import UsageError  # noqa: E402

# Stands in for a step executable; what it does depends on --m (see the test that uses it).
FAKE_STEP = """#!/bin/sh
m=""; csv=""
while [ $# -gt 0 ]; do
  case "$1" in --m) m="$2"; shift ;; --csv) csv="$2"; shift ;; esac
  shift
done
case "$m" in
  31) # The verdict in the CSV row's check columns, as common/report.cpp writes it; the message on
      # stderr is for people, and the grader does not parse it.
      printf 'status,bad_count,first_bad_row,first_bad_col,expected,obtained\nFAIL,7,2,3,1.5,0\n' > "$csv"
      echo "02_fake: error: check failed (people read this line; the grader reads the CSV)" >&2; exit 1 ;;
  127) echo "02_fake: error: CUDA error at kernel.cu:12: an illegal memory access was encountered" >&2; exit 5 ;;
  4097) kill -SEGV $$ ;;
  65) sleep 30 & sleep 30 ;;
  *) exit 0 ;;
esac
"""


class FakeBuild:
    """What the grader uses of a Build: its folder, and its executables (here, not built)."""

    def __init__(self, executables=None, directory=None):
        self.executables, self.directory = executables or {}, directory

    def executable(self, target):
        return self.executables[target]


class CasesTest(unittest.TestCase):
    def test_listing_format(self):
        cases = parse_cases("1 1 1 1 0 random\n31 33 17 0.75 -0.5 random\n127 129 67 -1.25 0 nan\n", "x", "standard")
        self.assertEqual(cases[1], Case(31, 33, 17, 0.75, -0.5, "random", "standard"))
        self.assertEqual(cases[2].arguments(), ["--m", "127", "--n", "129", "--k", "67", "--alpha", "-1.25",
                                                "--beta", "0.0", "--initial-c", "nan"])

    def test_strided_cases_carry_their_leading_dimensions(self):
        case = parse_cases("127 129 67 1 0.5 random 72 136 132\n", "x", "standard")[0]
        self.assertEqual(case.strides, (72, 136, 132))
        self.assertEqual(case.arguments()[6:12], ["--lda", "72", "--ldb", "136", "--ldc", "132"])
        self.assertEqual(case.as_record()["ldc"], 132)
        with self.assertRaises(UsageError):
            parse_cases("127 129 67 1 0.5 random 66 136 132\n", "x", "standard")  # lda < K

    def test_instructor_file_with_comments_and_default_initial_c(self):
        text = "# hidden cases\n\n333 222 111 2 0.5   # tall-ish\n1000 1 1000 1 0 nan\n"
        cases = parse_cases(text, "hidden.txt", "instructor")
        self.assertEqual([(c.m, c.initial_c, c.source) for c in cases],
                         [(333, "random", "instructor"), (1000, "nan", "instructor")])

    def test_bad_lines_are_named_with_file_and_line(self):
        rows = [("1 2 3 1\n", "hidden.txt:1: expected 'M N K alpha beta [random|nan [lda ldb ldc]]'"),
                ("# ok\n1 2 x 1 0\n", "hidden.txt:2: M, N and K must be integers"),
                ("0 2 3 1 0\n", "hidden.txt:1: M, N and K must be between 1 and 2147483647"),
                ("1 2 3 one 0\n", "hidden.txt:1: alpha and beta must be numbers"),
                ("1 2 3 1 inf\n", "hidden.txt:1: alpha and beta must be finite FP32 values"),
                ("1 2 3 1 0 zeros\n", "hidden.txt:1: the initial C is 'random' or 'nan'"),
                ("1 2 3 1 0.5 nan\n", "hidden.txt:1: a NaN initial C needs beta 0")]
        for text, message in rows:
            with self.subTest(text=text):
                with self.assertRaises(UsageError) as caught:
                    parse_cases(text, "hidden.txt", "instructor")
                self.assertTrue(str(caught.exception).startswith(message), caught.exception)

    @unittest.skipUnless(os.environ.get("LAB_GPU_TESTS"), "LAB_GPU_TESTS (the built gpu_tests) not given")
    def test_standard_cases_come_from_gpu_tests_without_a_gpu(self):
        listing = subprocess.run([os.environ["LAB_GPU_TESTS"], "--list-cases"], capture_output=True, text=True,
                                 env=dict(os.environ, CUDA_VISIBLE_DEVICES=""), check=True)
        cases = parse_cases(listing.stdout, "gpu_tests --list-cases", "standard")
        self.assertGreaterEqual(len(cases), 30)
        self.assertEqual(len(cases) % 3, 0)  # every shape with three (alpha, beta) settings
        self.assertIn(Case(127, 129, 67, 0.75, -0.5, "random"), cases)
        self.assertIn(Case(1, 1, 1, -1.25, 0.0, "nan"), cases)


CSV_VERDICT = {"status": "FAIL", "bad_count": "12", "first_bad_row": "4", "first_bad_col": "0", "expected": "-0.25",
               "obtained": "nan"}


def harness_csv_header():
    """The CSV header that common/report.cpp writes: its string literals after fputs("timestamp."""
    source = (REPOSITORY / "common" / "report.cpp").read_text(encoding="utf-8")
    block = source[re.search(r'std::fputs\(\s*"timestamp', source).start():]
    block = block[:block.index("csv);")]
    return "".join(re.findall(r'"([^"]*)"', block)).replace("\\n", "").split(",")


class CaseResultTest(unittest.TestCase):
    def test_each_way_a_case_ends(self):
        wrong = "02_x: error: check failed: the words may change\n"
        rows = [
            (grading.Outcome(0, "", ""), ("pass", "")),
            (grading.Outcome(1, "", wrong), ("fail", "check failed: the words may change")),  # no CSV row
            (grading.Outcome(5, "", "02_x: error: CUDA error at k.cu:3: unspecified launch failure\n"),
             ("error", "CUDA error: CUDA error at k.cu:3: unspecified launch failure")),
            (grading.Outcome(5, "", "09_x: watchdog: a producer thread (block 3, thread 0) waited over 2000000000 "
                                    "cycles on empty[1] for its phase of parity 0: the stage was never released\n"
                                    "09_x: error: CUDA error at run_step.cpp:40: unspecified launch failure\n"),
             ("error", "stopped by the watchdog: a producer thread (block 3, thread 0) waited over 2000000000 cycles "
                       "on empty[1] for its phase of parity 0: the stage was never released")),
            (grading.Outcome(-11, "", ""), ("crash", "killed by SIGSEGV")),
            (grading.Outcome(-6, "", "terminate called\n"), ("crash", "killed by SIGABRT after: terminate called")),
            (grading.Outcome(3, "", "02_x: error: 9x9x9 needs 1 bytes\n"),
             ("crash", "exit code 3: 9x9x9 needs 1 bytes")),
            (grading.Outcome(None, "", "", timed_out=True),
             ("timeout", "stopped after 60 s: the kernel hangs or is far too slow")),
        ]
        for outcome, expected in rows:
            with self.subTest(outcome=outcome):
                self.assertEqual(grading.case_result(outcome, 60), expected)

    def test_a_wrong_result_is_read_from_the_csv_row_not_the_message(self):
        outcome = grading.Outcome(1, "", "02_x: error: check failed: 99 element(s) in other words\n")
        self.assertEqual(grading.case_result(outcome, 60, CSV_VERDICT),
                         ("fail", "12 wrong element(s); first at (row 4, col 0): expected -0.25, got nan"))
        # A row of an executable that predates the check columns: the message it is, then.
        self.assertEqual(grading.case_result(outcome, 60, {"status": "FAIL"}),
                         ("fail", "check failed: 99 element(s) in other words"))

    def test_the_verdict_columns_as_the_harness_writes_them(self):
        """The header that common/report.cpp writes has the columns check_verdict reads, in this order
        (the grader reads them by name; the timing columns follow them)."""
        header = harness_csv_header()
        verdict = ["bad_count", "first_bad_row", "first_bad_col", "expected", "obtained"]
        self.assertIn("bad_count", header)
        start = header.index("bad_count")
        self.assertEqual(header[start:start + 5], verdict)
        self.assertEqual(grading.check_verdict({"bad_count": "0", "first_bad_row": ""}), "")
        self.assertEqual(grading.check_verdict(None), "")


class RunTest(unittest.TestCase):
    def test_timeout_kills_everything_the_command_started(self):
        start = time.monotonic()
        outcome = grading.run(["sh", "-c", "echo started; sleep 30 & sleep 30"], timeout=0.5)
        self.assertTrue(outcome.timed_out)
        self.assertIn("started", outcome.stdout)
        self.assertLess(time.monotonic() - start, 10)

    def test_missing_program_is_an_outcome_not_an_exception(self):
        outcome = grading.run(["/nonexistent/step"], timeout=5)
        self.assertEqual(outcome.code, 127)
        self.assertIn("cannot run /nonexistent/step", outcome.stderr)


class RunCasesTest(TemporaryFolderTest):
    def setUp(self):
        super().setUp()
        self.build = FakeBuild({"02_fake": executable(self.tmp / "02_fake", FAKE_STEP),
                                "04_fake": executable(self.tmp / "04_fake", FAKE_STEP)})

    def grader(self, jobs):
        return grading.Grader(self.tmp, self.tmp, ["02_fake", "04_fake"], rubric_with(case=1), [], self.tmp, jobs)

    def test_every_outcome_is_recorded_and_grading_goes_on(self):
        cases = [Case(1, 1, 1, 1.0, 0.0), Case(31, 33, 17, 0.75, -0.5), Case(127, 129, 67, 1.0, 0.0),
                 Case(4097, 3, 65, 1.0, 0.0)]
        with contextlib.redirect_stderr(io.StringIO()):
            results, hung = self.grader(jobs=4).run_cases(self.build, {"02_fake": cases, "04_fake": cases[:1]})
        self.assertEqual(hung, set())
        self.assertEqual([(r["status"], r["detail"]) for r in results["02_fake"]], [
            ("pass", ""),
            ("fail", "7 wrong element(s); first at (row 2, col 3): expected 1.5, got 0"),
            ("error", "CUDA error: CUDA error at kernel.cu:12: an illegal memory access was encountered"),
            ("crash", "killed by SIGSEGV"),
        ])
        self.assertEqual(results["02_fake"][1]["m"], 31)
        self.assertEqual([r["status"] for r in results["04_fake"]], ["pass"])

    def test_after_a_timeout_the_steps_other_cases_are_not_run(self):
        cases = [Case(1, 1, 1, 1.0, 0.0), Case(65, 67, 129, 1.0, 0.0), Case(1, 1, 1, 2.0, 0.0)]
        start = time.monotonic()
        with contextlib.redirect_stderr(io.StringIO()):
            results, hung = self.grader(jobs=1).run_cases(self.build, {"02_fake": cases, "04_fake": cases[:1]})
        self.assertLess(time.monotonic() - start, 15)
        self.assertEqual(hung, {"02_fake"})
        self.assertEqual([r["status"] for r in results["02_fake"]], ["pass", "timeout", "not run"])
        self.assertEqual(results["02_fake"][2]["detail"], "an earlier case of this step timed out")
        self.assertEqual([r["status"] for r in results["04_fake"]], ["pass"])  # the next step still runs


class SanitizerTest(unittest.TestCase):
    """The project's sanitize.* tests, found through CTest and run by the grader: a fake project."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = Path(tempfile.mkdtemp())
        source, cls.build_dir = cls.tmp / "src", cls.tmp / "build"
        source.mkdir()
        tests = {
            "sanitize.memcheck.02_fake.67x53x64.beta0.5": "echo '========= ERROR SUMMARY: 0 errors'",
            "sanitize.racecheck.02_fake.67x53x64.beta0.5":
                "echo '========= Error: Race reported between Write access at 0x70 in k and Read access at 0x90 in k';"
                "echo '========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)'; exit 1",
            "sanitize.memcheck.02_fake.129x127x131.beta0": "sleep 30",
            "sanitize.memcheck.02_fake.136x264x200.beta0":
                "echo 'SKIPPED: this GPU cannot run the step (unsupported GPU)'",
            "sanitize.initcheck.02_fake.67x53x64.beta0": "exit 1",   # a tool the rubric does not name
            "sanitize.memcheck.04_fake.67x53x64.beta0": "echo 'SKIPPED: compute-sanitizer not found'",
            "gpu.02_fake": "exit 1",
        }
        lines = ["cmake_minimum_required(VERSION 3.25)", "project(fake NONE)", "enable_testing()"]
        lines += [f'add_test(NAME {name} COMMAND sh -c "{command}")' for name, command in tests.items()]
        (source / "CMakeLists.txt").write_text("\n".join(lines) + "\n")
        subprocess.run(["cmake", "-S", source, "-B", cls.build_dir], check=True, capture_output=True)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def grader(self):
        return grading.Grader(self.tmp, self.tmp, ["02_fake"], rubric_with(sanitizer=1), [], self.tmp, 4)

    def test_runs_for_the_rubric_tools_each_with_its_result(self):
        with contextlib.redirect_stderr(io.StringIO()):
            runs = self.grader().run_sanitizer(FakeBuild(directory=self.build_dir), ["02_fake"])["02_fake"]
        by_name = {r["run"]: (r["status"], r["detail"]) for r in runs}
        self.assertEqual(by_name, {
            "memcheck 67x53x64 beta=0.5": ("pass", ""),
            "racecheck 67x53x64 beta=0.5": ("fail", "Error: Race reported between Write access at 0x70 in k and Read "
                                                    "access at 0x90 in k; RACECHECK SUMMARY: 1 hazard displayed "
                                                    "(1 error, 0 warnings)"),
            "memcheck 129x127x131 beta=0": ("timeout", "stopped after 1 s"),
            "memcheck 136x264x200 beta=0": ("fail", "the step refused this GPU (this GPU cannot run the step "
                                                    "(unsupported GPU))"),
        })

    def test_skipped_sanitizer_stops_grading_as_a_machine_problem(self):
        grader = grading.Grader(self.tmp, self.tmp, ["04_fake"], rubric_with(sanitizer=5), [], self.tmp, 2)
        with contextlib.redirect_stderr(io.StringIO()), self.assertRaises(grading.GradingError) as caught:
            grader.run_sanitizer(FakeBuild(directory=self.build_dir), ["04_fake"])
        self.assertEqual(caught.exception.exit_code, exit_codes.EXIT_CANNOT_GRADE)
        self.assertIn("compute-sanitizer not found", str(caught.exception))


class PerformanceTest(TemporaryFolderTest):
    def fake(self, name, tflops, cublas, status="PASS", code=0):
        """Appends one CSV row like the harness (only the columns the grader reads), then exits."""
        script = f"""#!/bin/sh
while [ $# -gt 0 ]; do case "$1" in --csv) csv="$2"; shift ;; esac; shift; done
count=$(cat "{self.tmp}/{name}.count" 2>/dev/null || echo 0); count=$((count + 1))
echo $count > "{self.tmp}/{name}.count"
this_run=$(echo {tflops} | cut -d, -f$count)
printf 'gpu,tflops,cublas_tflops,status\\nFake GPU,%s,%s,{status}\\n' "$this_run" {cublas} > "$csv"
exit {code}
"""
        return executable(self.tmp / name, script)

    def test_best_of_alternating_rounds_against_reference_and_cublas(self):
        sub, ref = self.fake("sub", "7.5,8.0", 50.0), self.fake("ref", "8.25,8.2", 51.0)
        perf, gpu = grading.measure_step(sub, ref, load_rubric(), self.tmp, timeout=10)
        self.assertEqual(gpu, "Fake GPU")
        self.assertEqual((perf["submission_tflops"], perf["reference_tflops"], perf["cublas_tflops"]),
                         (8.0, 8.25, 51.0))
        self.assertEqual(perf["submission_check"], "PASS")
        self.assertEqual((self.tmp / "sub.count").read_text().strip(), "2")  # the rubric's 2 rounds each

    def test_wrong_result_at_the_performance_size(self):
        sub, ref = self.fake("sub", "9,9", 50.0, status="FAIL", code=1), self.fake("ref", "8,8", 50.0)
        perf, _ = grading.measure_step(sub, ref, load_rubric(), self.tmp, timeout=10)
        self.assertEqual(perf["submission_check"], "FAIL")
        self.assertIn("failed the check", perf["note"])

    def test_crash_at_the_performance_size(self):
        crash = executable(self.tmp / "crash", "#!/bin/sh\necho 'x: error: CUDA error: out of resources' >&2\nexit 5\n")
        perf, _ = grading.measure_step(crash, self.fake("ref", "8,8", 50.0), load_rubric(), self.tmp, timeout=10)
        self.assertEqual(perf["submission_check"], "FAIL")
        self.assertIn("submission: the run at 4096×4096×4096 failed (error: CUDA error: CUDA error: out of resources)",
                      perf["note"])

    def test_at_the_steps_own_size(self):
        """measure_step times at the size it is given (the step's, rubric.performance_size), both runs."""
        script = f"""#!/bin/sh
echo "$@" >> "{self.tmp}/arguments"
while [ $# -gt 0 ]; do case "$1" in --csv) csv="$2"; shift ;; esac; shift; done
printf 'gpu,tflops,cublas_tflops,status\\nFake GPU,8,50,PASS\\n' > "$csv"
"""
        sub, ref = executable(self.tmp / "sub", script), executable(self.tmp / "ref", script)
        perf, _ = grading.measure_step(sub, ref, load_rubric(), self.tmp, timeout=10, busy=lambda: [],
                                       size=[16, 4096, 4096])
        self.assertEqual(perf["size"], [16, 4096, 4096])
        runs = (self.tmp / "arguments").read_text().splitlines()
        self.assertEqual(len(runs), 4)  # 2 rounds of each
        self.assertTrue(all(run.startswith("--m 16 --n 4096 --k 4096 ") for run in runs), runs)
        perf, _ = grading.measure_step(sub, ref, load_rubric(), self.tmp, timeout=10, busy=lambda: [])
        self.assertEqual(perf["size"], [4096, 4096, 4096])  # without one: the rubric's size

    def test_without_a_reference_solution(self):
        perf, _ = grading.measure_step(self.fake("sub", "8,8", 50.0), None, load_rubric(), self.tmp, timeout=10)
        self.assertEqual((perf["submission_tflops"], perf["reference_tflops"]), (8.0, None))

    def test_the_ratio_is_of_shares_of_cublas_within_each_run(self):
        """A run whose clocks are low is low for cuBLAS too: its share of cuBLAS, not its TFLOP/s, counts."""
        rubric = load_rubric()
        rubric["performance"]["rounds"] = 3
        # The submission's runs: 40, 20 (a slow process: cuBLAS at half too), 40 TFLOP/s against cuBLAS 100, 50, 100.
        sub = self.fake_pairs("sub", [(40, 100), (20, 50), (40, 100)])
        ref = self.fake_pairs("ref", [(50, 100), (50, 100), (25, 50)])
        perf, _ = grading.measure_step(sub, ref, rubric, self.tmp, timeout=10, busy=lambda: [])
        self.assertAlmostEqual(perf["ratio"], 0.4 / 0.5)
        self.assertEqual([(r["who"], r["round"]) for r in perf["runs"]],
                         [("submission", 1), ("reference", 1), ("submission", 2), ("reference", 2),
                          ("submission", 3), ("reference", 3)])  # alternating
        self.assertEqual(perf["other_processes"], [])

    def test_other_processes_on_the_gpu_are_recorded(self):
        sub, ref = self.fake("sub", "8,8", 50.0), self.fake("ref", "8,8", 50.0)
        seen = iter([[], ["4242 python3 (1200 MiB)"], [], []])
        perf, _ = grading.measure_step(sub, ref, load_rubric(), self.tmp, timeout=10, busy=lambda: next(seen))
        self.assertEqual(perf["other_processes"], ["4242 python3 (1200 MiB)"])

    def fake_pairs(self, name, pairs):
        """A step executable whose n-th run writes the n-th (TFLOP/s, cuBLAS TFLOP/s)."""
        tflops = ",".join(str(a) for a, _ in pairs)
        cublas = ",".join(str(b) for _, b in pairs)
        script = f"""#!/bin/sh
while [ $# -gt 0 ]; do case "$1" in --csv) csv="$2"; shift ;; esac; shift; done
count=$(cat "{self.tmp}/{name}.count" 2>/dev/null || echo 0); count=$((count + 1))
echo $count > "{self.tmp}/{name}.count"
printf 'gpu,tflops,cublas_tflops,status\\nFake GPU,%s,%s,PASS\\n' $(echo {tflops} | cut -d, -f$count) \
  $(echo {cublas} | cut -d, -f$count) > "$csv"
"""
        return executable(self.tmp / name, script)


if __name__ == "__main__":
    unittest.main()
