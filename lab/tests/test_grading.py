"""The grader's builds and whole gradings without a GPU: compiler errors, the submission's files
and the scratch tree, gradings of a fake tree (a fake CTest project and fake executables stand in
for the real ones), and the command line's refusals. test_grading_runs.py has the runs: cases,
timeouts, the sanitizer's and the timing's results.

Run from anywhere:  python3 -m unittest discover -s lab/tests -v
"""
import contextlib
import io
import json
import os
import subprocess
import sys
import time
import unittest

from lab_test_support import LAB, REPOSITORY, TemporaryFolderTest, rubric_with, write_tree

import lab  # noqa: E402  (after lab_test_support, which puts lab/ on the path)
from labkit import exit_codes, grading, report  # noqa: E402
from labkit.cases import parse_cases  # noqa: E402


def run_lab(*argv, env=None):
    """lab.py as a separate process (it probes the GPU): (exit code, stdout, stderr)."""
    done = subprocess.run([sys.executable, str(LAB / "lab.py"), *map(str, argv)], capture_output=True, text=True,
                          env=env)
    return done.returncode, done.stdout, done.stderr



NVCC_FAILURE = """[ 62%] Built target worklog_harness
[ 75%] Building CUDA object CMakeFiles/03_thread_coarsening_kernel.dir/03_thread_coarsening/kernel.cu.o
{tree}/03_thread_coarsening/kernel.cu(70): error: identifier "acc2" is undefined
      acc2[0][0] += 1.0f;
      ^

{tree}/03_thread_coarsening/kernel.cu(71): error: expected a ";"

2 errors detected in the compilation of "{tree}/03_thread_coarsening/kernel.cu".
gmake[3]: *** [CMakeFiles/03_thread_coarsening_kernel.dir/build.make:77: x.o] Error 2
gmake: *** [Makefile:189: 03_thread_coarsening] Error 2
"""
LINK_FAILURE = """[ 90%] Linking CXX executable bin/02_block_tiling
/usr/bin/ld: CMakeFiles/02_block_tiling_kernel.dir/02_block_tiling/kernel.cu.o: in function `launch':
kernel.cu:(.text+0x1b): undefined reference to `helper(float*)'
collect2: error: ld returned 1 exit status
gmake[2]: *** [CMakeFiles/02_block_tiling.dir/build.make:99: bin/02_block_tiling] Error 1
"""
PTXAS_FAILURE = """[ 50%] Building CUDA object x.o
ptxas error   : Entry function '_Z4gemm' uses too much shared data (0x20000 bytes, 0xc000 max)
gmake[2]: *** [x.o] Error 255
"""


class CompilerErrorTest(unittest.TestCase):
    def test_first_error_with_its_source_line_and_relative_path(self):
        tree = "/work/grade/submission-tree"
        self.assertEqual(grading.first_compiler_error(NVCC_FAILURE.format(tree=tree), tree),
                         '03_thread_coarsening/kernel.cu(70): error: identifier "acc2" is undefined\n'
                         "      acc2[0][0] += 1.0f;\n      ^")

    def test_linker_and_ptxas_errors(self):
        self.assertEqual(grading.first_compiler_error(LINK_FAILURE, "/t"),
                         "kernel.cu:(.text+0x1b): undefined reference to `helper(float*)'")
        self.assertTrue(grading.first_compiler_error(PTXAS_FAILURE, "/t").startswith("ptxas error   : Entry function"))

    def test_nothing_recognized(self):
        self.assertEqual(grading.first_compiler_error("gmake: *** [all] Error 2\n", "/t"), "")


class SubmissionFilesTest(TemporaryFolderTest):
    def test_kernel_directly_or_one_folder_down_or_missing_or_ambiguous(self):
        sub = self.tmp / "sub"
        (sub / "02_x").mkdir(parents=True)
        (sub / "02_x" / "kernel.cu").write_text("a")
        (sub / "alice-lab" / "04_y").mkdir(parents=True)
        (sub / "alice-lab" / "04_y" / "kernel.cu").write_text("b")
        (sub / "alice-lab" / "build" / "04_y").mkdir(parents=True)
        (sub / "alice-lab" / "build" / "CMakeCache.txt").write_text("")
        (sub / "alice-lab" / "build" / "04_y" / "kernel.cu").write_text("copy in a build tree")
        for folder in ("a", "b"):
            (sub / folder / "05_z").mkdir(parents=True)
            (sub / folder / "05_z" / "kernel.cu").write_text(folder)
        self.assertEqual(grading.find_submission_kernel(sub, "02_x"), (sub / "02_x" / "kernel.cu", ""))
        self.assertEqual(grading.find_submission_kernel(sub, "04_y"), (sub / "alice-lab" / "04_y" / "kernel.cu", ""))
        self.assertEqual(grading.find_submission_kernel(sub, "03_w"), (None, "the submission has no 03_w/kernel.cu"))
        path, problem = grading.find_submission_kernel(sub, "05_z")
        self.assertIsNone(path)
        self.assertIn("the submission has 2 files 05_z/kernel.cu", problem)

    def test_sync_tree_rewrites_only_what_changed_and_removes_the_rest(self):
        reference, tree = self.tmp / "ref", self.tmp / "tree"
        for path, text in {"common/h.hpp": "h", "02_x/kernel.cu": "solution", "CMakeLists.txt": "c"}.items():
            (reference / path).parent.mkdir(parents=True, exist_ok=True)
            (reference / path).write_text(text)
        grading.sync_tree(reference, tree, {"02_x/kernel.cu": "student v1"})
        (tree / "stale.txt").write_text("from an earlier grading")
        untouched = (tree / "common/h.hpp").stat().st_mtime_ns
        time.sleep(0.02)
        grading.sync_tree(reference, tree, {"02_x/kernel.cu": "student v2"})
        self.assertEqual((tree / "02_x/kernel.cu").read_text(), "student v2")
        self.assertEqual((tree / "common/h.hpp").stat().st_mtime_ns, untouched)
        self.assertFalse((tree / "stale.txt").exists())


# A whole grading without a GPU: a fake worklog tree whose "kernels" are shell scripts, "compiled"
# by a syntax check and a copy, with a fake gpu_tests and one sanitize test per step.
FAKE_PROJECT = """cmake_minimum_required(VERSION 3.25)
project(fake_worklog NONE)
enable_testing()
foreach(target 02_fake 04_fake 05_fake gpu_tests)
  set(source ${CMAKE_SOURCE_DIR}/${target}/kernel.cu)
  set(binary ${CMAKE_BINARY_DIR}/bin/${target})
  add_custom_command(OUTPUT ${binary} DEPENDS ${source}
                     COMMAND sh -n ${source}
                     COMMAND ${CMAKE_COMMAND} -E copy ${source} ${binary}
                     COMMAND chmod +x ${binary})
  add_custom_target(${target} DEPENDS ${binary})
  add_custom_target(${target}_kernel COMMAND sh -n ${source})  # the object library of a real step
  add_test(NAME sanitize.memcheck.${target}.67x53x64.beta0.5 COMMAND ${binary} --m 67 --n 53 --k 64 --beta 0.5)
endforeach()
"""
FAKE_GPU_TESTS = """#!/bin/sh
printf '1 1 1 1 0 random\\n31 33 17 0.75 -0.5 random\\n127 129 67 -1.25 0 nan\\n'
"""


def fake_kernel(tflops, ignores_beta=False, body=None):
    """A step executable: right unless it ignores beta (then every case with beta != 0 fails). Its
    LAB region (inside here-documents, which the shell skips) holds what a student writes: `body`
    instead, when given."""
    wrong = ('if [ "$beta" != 0 ] && [ "$beta" != 0.0 ]; then echo "x: error: check failed: 9 element(s) '
             'outside the error bound; first at (row 0, col 0): expected 1, obtained 2" >&2; exit 1; fi')
    wrong = wrong if ignores_beta else ""
    row = f"""[ -n "$csv" ] && printf 'gpu,tflops,cublas_tflops,status\\nFake GPU,{tflops},50,PASS\\n' > "$csv\""""
    body = body if body is not None else wrong + "\n" + row
    return f"""#!/bin/sh
beta=0; csv=""
while [ $# -gt 0 ]; do case "$1" in --beta) beta="$2"; shift ;; --csv) csv="$2"; shift ;; esac; shift; done
: <<'MARK'
// LAB BEGIN check_and_write
MARK
{body}
: <<'MARK'
// LAB END
MARK
exit 0
"""


FAKE_TASKS = "## check_and_write\n\nCheck beta and write the CSV row.\n"


class EndToEndWithFakesTest(TemporaryFolderTest):
    def setUp(self):
        super().setUp()
        self.reference, self.submission = self.tmp / "reference", self.tmp / "submission"
        files = {"CMakeLists.txt": FAKE_PROJECT, "gpu_tests/kernel.cu": FAKE_GPU_TESTS,
                 "02_fake/kernel.cu": fake_kernel(10), "04_fake/kernel.cu": fake_kernel(20),
                 "05_fake/kernel.cu": fake_kernel(30)}
        for step in ("02_fake", "04_fake", "05_fake"):  # each region's task (labkit/tasks.py)
            files[f"lab/tasks/{step}.md"] = FAKE_TASKS
        write_tree(self.reference, files)
        # Only kernels are taken: the submission's CMakeLists.txt would break the build if it were used.
        submitted = {"CMakeLists.txt": "this is not CMake\n", "02_fake/kernel.cu": fake_kernel(9.5),
                     "04_fake/kernel.cu": fake_kernel(20, ignores_beta=True),
                     "05_fake/kernel.cu": fake_kernel(30, body="if then fi")}
        write_tree(self.submission, submitted)

    def test_grade_and_score(self):
        rubric = rubric_with(case=10, sanitizer=10, performance=10, build=120)
        rubric["performance"]["sizes"] = {"02": [512, 256, 128]}
        grader = grading.Grader(self.submission, self.reference, ["02_fake", "04_fake", "05_fake"], rubric,
                                parse_cases("64 64 64 2 0\n", "hidden.txt", "instructor"), self.tmp / "work", 2)
        with contextlib.redirect_stderr(io.StringIO()):
            record = grader.grade(self.tmp / "out" / "logs")
        steps = {s["step"]: s for s in record["steps"]}
        self.assertEqual(record["gpu"], "Fake GPU")
        self.assertEqual([c["status"] for c in steps["02_fake"]["cases"]], ["pass"] * 4)
        self.assertEqual([c["source"] for c in steps["02_fake"]["cases"]], ["standard"] * 3 + ["instructor"])
        self.assertEqual(steps["02_fake"]["sanitizer"], [{"run": "memcheck 67x53x64 beta=0.5", "status": "pass",
                                                          "detail": ""}])
        self.assertEqual((steps["02_fake"]["performance"]["submission_tflops"],
                          steps["02_fake"]["performance"]["reference_tflops"]), (9.5, 10.0))
        self.assertEqual(steps["02_fake"]["performance"]["size"], [512, 256, 128])  # its own size
        self.assertEqual(steps["04_fake"]["performance"]["size"], [4096, 4096, 4096])  # the default
        # The planted bug loses exactly the cases with beta != 0, and its own sanitizer run.
        self.assertEqual([c["status"] for c in steps["04_fake"]["cases"]], ["pass", "fail", "pass", "pass"])
        self.assertEqual(steps["04_fake"]["sanitizer"][0]["status"], "fail")
        self.assertFalse(steps["05_fake"]["compile"]["ok"])
        self.assertRegex(steps["05_fake"]["compile"]["error"], r"^05_fake/kernel\.cu\b.*[Ee]rror")  # sh -n's message
        self.assertNotIn(str(self.tmp), steps["05_fake"]["compile"]["error"])
        self.assertEqual({c["status"] for c in steps["05_fake"]["cases"]}, {"not run"})

        out = self.tmp / "out"
        with contextlib.redirect_stdout(io.StringIO()):
            lab.write_outputs(record, out)
        results = {t["name"]: t["score"] for t in json.loads((out / "results.json").read_text())["tests"]}
        self.assertEqual(results["02_fake: performance"], 30)  # 95% of the reference
        self.assertEqual(results["04_fake: correctness, standard cases"], 25)  # 2 of 3 standard cases: 37.5 · 2/3
        self.assertEqual((results["04_fake: builds"], results["04_fake: host tests"]), (4, 2))  # the checks
        self.assertEqual(results["04_fake: performance"], 0)
        self.assertEqual(results["05_fake: correctness, standard cases"], 0)
        self.assertTrue((out / "logs" / "reference-build.log").is_file())
        self.assertIn("performance 30 at 4096×4096×4096 but 02_fake at 512×256×128", (out / "report.md").read_text())


    def test_grade_without_a_gpu(self):
        """--no-gpu: integrity, build and host tests; no case, sanitizer or timing run; scored as such."""
        grader = grading.Grader(self.submission, self.reference, ["02_fake", "04_fake", "05_fake"],
                                rubric_with(case=10, build=120), [], self.tmp / "work", 2, use_gpu=False)
        with contextlib.redirect_stderr(io.StringIO()):
            record = grader.grade(self.tmp / "out" / "logs")
        self.assertEqual(record["mode"], "no-gpu")
        steps = {s["step"]: s for s in record["steps"]}
        self.assertEqual(steps["02_fake"]["host_tests"], [{"test": "02_fake --help", "status": "pass", "detail": ""}])
        self.assertEqual(steps["02_fake"]["cases"], [])
        self.assertEqual([c["status"] for c in steps["02_fake"]["integrity"]], ["pass", "not run"])  # no object here
        self.assertFalse(steps["05_fake"]["compile"]["ok"])
        out = self.tmp / "out"
        with contextlib.redirect_stdout(io.StringIO()):
            lab.write_outputs(record, out)
        results = json.loads((out / "results.json").read_text())
        # The checks are points (02 and 04: build 4, integrity 4, host tests 2; 05 does not build: its
        # integrity only), the GPU parts pending: no score of their own, never "0 of 0".
        self.assertEqual(results["score"], 24)
        self.assertIn("270 more pending", results["output"])  # 90 a step
        tests = {t["name"]: t for t in results["tests"]}
        self.assertNotIn("score", tests["02_fake: correctness"])
        self.assertEqual(tests["02_fake: correctness"]["output"],
                         report.PENDING.format(points=50) + "\n" + report.NOT_RUN_WITHOUT_GPU)
        self.assertIn("| 02_fake | 10 / 10 | pending (50) | pending (10) | pending (30) | **10 / 10** |",
                      (out / "report.md").read_text())
        self.assertEqual(tests["02_fake: builds"]["status"], "passed")
        self.assertEqual(tests["02_fake: host tests (no GPU)"]["status"], "passed")
        self.assertEqual(tests["05_fake: builds"]["status"], "failed")
        self.assertEqual(tests["02_fake: integrity, only the TODOs changed"]["status"], "passed")

    def test_a_line_changed_outside_its_todo_costs_the_rubrics_price_and_is_named(self):
        write_tree(self.submission, {"02_fake/kernel.cu": fake_kernel(9.5).replace("exit 0\n", "exit 0  # mine\n")})
        grader = grading.Grader(self.submission, self.reference, ["02_fake"], rubric_with(case=10, build=120), [],
                                self.tmp / "work", 2, use_gpu=False)
        with contextlib.redirect_stderr(io.StringIO()):
            record = grader.grade(self.tmp / "out" / "logs")
        step = record["steps"][0]
        self.assertTrue(step["compile"]["ok"])  # built and graded, not refused
        self.assertEqual(step["integrity"][0]["status"], "changed")
        self.assertEqual([c["line"] for c in step["integrity"][0]["changed_lines"]], [7])
        scored = report.score_record(record)[0]
        penalty = next(p for p in scored.parts if "changed outside the TODOs" in p.name)
        self.assertEqual(penalty.score, -5)
        self.assertIn("line 7 ('exit 0') is now 'exit 0  # mine'", penalty.output)
        self.assertEqual(scored.score, 4 + 0 + 2 - 5)  # builds, integrity lost, host tests, the price of a line

    def test_a_kernel_changed_outside_its_todo_is_refused_before_it_is_built(self):
        write_tree(self.submission, {"02_fake/kernel.cu": fake_kernel(9.5).replace("exit 0\n", "exit 0  # mine\n")})
        rubric = rubric_with(case=10, build=120)
        rubric["integrity"]["refuse_above_lines"] = 0  # no line may change: the step is refused
        grader = grading.Grader(self.submission, self.reference, ["02_fake"], rubric, [],
                                self.tmp / "work", 2, use_gpu=False)
        with contextlib.redirect_stderr(io.StringIO()):
            record = grader.grade(self.tmp / "out" / "logs")
        step = record["steps"][0]
        self.assertEqual(step["compile"]["reason"], "refused")
        self.assertTrue(step["integrity"][0]["detail"].startswith(
            "line 7 of 02_fake/kernel.cu as handed out ('exit 0'): lines are added, changed or removed here, outside the "
            "TODOs"), step["integrity"][0]["detail"])
        self.assertFalse((self.tmp / "work" / "submission-build" / "bin" / "02_fake").exists())


class GradeCommandLineTest(TemporaryFolderTest):
    def test_no_gpu_is_exit_77_with_one_line(self):
        code, _, err = run_lab("grade", "--submission", REPOSITORY, "--steps", "02", "--out", self.tmp / "g",
                               env=dict(os.environ, CUDA_VISIBLE_DEVICES=""))
        self.assertEqual(code, exit_codes.EXIT_NO_DEVICE, err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertIn("grading runs the kernels, so it needs a CUDA GPU (--no-gpu grades", err)
        self.assertFalse((self.tmp / "g").exists())

    def test_collect_needs_gradings(self):
        (self.tmp / "empty").mkdir()
        code, _, err = run_lab("collect", "--grades", self.tmp / "empty", "--out", self.tmp / "class.csv")
        self.assertEqual(code, exit_codes.EXIT_BAD_ARGUMENT, err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertIn("holds no grading", err)
        code, _, err = run_lab("collect", "--grades", self.tmp / "nowhere", "--out", self.tmp / "class.csv")
        self.assertEqual((code, len(err.strip().splitlines())), (exit_codes.EXIT_BAD_ARGUMENT, 1), err)

    def test_a_step_without_regions_is_not_graded_unless_it_was_handed_out(self):
        reference = self.tmp / "reference"
        write_tree(reference, {"02_beta/kernel.cu": "void g() {}\n", "03_gamma/kernel.cu": "void h() {}\n",
                               "lab/released.json": '{"steps": ["03_gamma"]}'})
        no_gpu = dict(os.environ, CUDA_VISIBLE_DEVICES="")
        code, _, err = run_lab("grade", "--submission", reference, "--reference", reference, "--steps", "02",
                               "--out", self.tmp / "g", env=no_gpu)
        self.assertEqual(code, 2, err)
        self.assertIn("02_beta has no LAB regions", err)
        # A student's own copy: 03 was handed out, so it is graded (here as far as the missing GPU allows).
        code, _, err = run_lab("grade", "--submission", reference, "--reference", reference, "--steps", "all",
                               "--out", self.tmp / "g", env=no_gpu)
        self.assertEqual(code, 77, err)

    def test_bad_input_is_exit_2_before_anything_is_built(self):
        hidden = self.tmp / "hidden.txt"
        hidden.write_text("64 64 64 1 0\n64 64 x 1 0\n")
        rubric = self.tmp / "rubric.json"
        rubric.write_text('{"performance": {"full_at": 0.2}}')
        misnamed = self.tmp / "misnamed.json"
        misnamed.write_text('{"performance": {"sizes": {"12_streamk": [3072, 3072, 3072]}}}')
        rows = [
            (["--steps", "99"], "no step '99'"),
            (["--steps", "02", "--cases", hidden], f"{hidden}:2: M, N and K must be integers"),
            (["--steps", "02", "--rubric", rubric], "performance.zero_at (0.25) must be below full_at (0.2)"),
            (["--steps", "02", "--rubric", misnamed], "'12_streamk' is not a step of this tree (step 12 is 12_stream_k)"),
            (["--steps", "02", "--submission", self.tmp / "nowhere"], "not a folder"),
            (["--steps", "12", "--handed-out", "09,10"], "--handed-out 09,10: the graded steps must be among"),
            (["--steps", "12", "--handed-out", "09,99"], "no step '99'"),
        ]
        for args, message in rows:
            with self.subTest(args=args):
                if "--submission" not in args:
                    args = ["--submission", REPOSITORY] + args
                code, _, err = run_lab("grade", *args, "--out", self.tmp / "g")
                self.assertEqual(code, 2, err)
                self.assertEqual(len(err.strip().splitlines()), 1, err)
                self.assertIn(message, err)


if __name__ == "__main__":
    unittest.main()
