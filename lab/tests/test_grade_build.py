"""Slow: the grader's builds, for real, with CMake and nvcc and no GPU (CUDA_VISIBLE_DEVICES empty).

- the grader's submission build: a step that compiles, one that does not (its first error is
  reported, the other step still builds), and one that the submission lacks;
- the no-GPU grade (`lab.py grade --no-gpu`) of the reference's own kernel (everything passes) and
  of a kernel with a line added outside its TODO (built, the line named and priced); then `lab.py collect` over those gradings;
- the symbol check on objects nvcc compiles: a launcher that calls cuBLAS, one that calls a harness
  function.

CTest runs this as the test lab.grade_build (LAB_BUILD_TESTS=1), beside lab.build (test_build.py:
the releases); without that variable it is skipped. Its builds are for sm_90 only, through the
compile cache, seeded from CTest's own build (build_support.py).
"""
import contextlib
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path
from unittest import mock

from build_support import COMMAND_TIMEOUT, ONE_ARCHITECTURE, build_environment, close_cache, enabled, open_cache
from lab_test_support import LAB, REPOSITORY

import lab  # noqa: E402
from labkit import exit_codes, grading, release  # noqa: E402
from labkit.rubric import load_rubric  # noqa: E402

CACHE = None  # one compile cache for every build of this module


def setUpModule():
    global CACHE
    if enabled():
        CACHE = open_cache("lab.grade_build")


def tearDownModule():
    close_cache(CACHE)


@unittest.skipUnless(enabled(), "slow build tests: set LAB_BUILD_TESTS=1")
class GradeBuildTest(unittest.TestCase):
    """The grader's builds, for real, without a GPU."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = Path(tempfile.mkdtemp(prefix="lab-grade-build-test-"))
        cls.env = build_environment(CACHE)
        cls.work = cls.tmp / "work"

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def grade(self, *args):
        """lab.py grade --no-gpu as a process, in this class's environment: (exit code, output)."""
        done = subprocess.run([sys.executable, str(LAB / "lab.py"), "grade", "--no-gpu", "--work", str(self.work),
                               *map(str, args)], capture_output=True, text=True, env=self.env, timeout=COMMAND_TIMEOUT)
        return done.returncode, done.stdout + done.stderr

    def test_submission_build_step_by_step(self):
        steps = ["02_block_tiling", "03_thread_coarsening", "04_outer_product"]
        submission = self.tmp / "submission"
        release.release(REPOSITORY, steps, submission, load_rubric(), leak_check=False)
        broken = submission / "03_thread_coarsening" / "kernel.cu"
        broken.write_text(broken.read_text().replace("// TODO: ", "acc2[0][0] += 1.0f;  // TODO: ", 1))
        (submission / "04_outer_product" / "kernel.cu").unlink()
        grader = grading.Grader(submission, REPOSITORY, steps, load_rubric(), [], self.tmp / "work-steps", jobs=2,
                                use_gpu=False)
        with contextlib.redirect_stderr(io.StringIO()), mock.patch.dict(os.environ, self.env):
            build, compiled = grader.build_submission(self.tmp / "logs", ONE_ARCHITECTURE)
        self.assertTrue(compiled["02_block_tiling"]["ok"])
        self.assertTrue(build.executable("02_block_tiling").is_file())
        error = compiled["03_thread_coarsening"]["error"]
        self.assertEqual(compiled["03_thread_coarsening"]["reason"], "compiler")
        self.assertRegex(error, r'^03_thread_coarsening/kernel\.cu\(\d+\): error: identifier "acc2" is undefined')
        self.assertNotIn(str(self.tmp), error)
        self.assertEqual(compiled["04_outer_product"], {"ok": False, "reason": "no kernel",
                                                        "error": "the submission has no 04_outer_product/kernel.cu"})
        # Only the chosen kernels come from the submission: the rest of the scratch tree is the reference's.
        tree = self.tmp / "work-steps" / "submission-tree"
        self.assertEqual((tree / "02_block_tiling" / "kernel.cu").read_bytes(),
                         (submission / "02_block_tiling" / "kernel.cu").read_bytes())
        self.assertEqual((tree / "04_outer_product" / "kernel.cu").read_bytes(),
                         (REPOSITORY / "04_outer_product" / "kernel.cu").read_bytes())
        self.assertEqual((tree / "common" / "run_step.cpp").read_bytes(),
                         (REPOSITORY / "common" / "run_step.cpp").read_bytes())

    def test_no_gpu_grade_integrity_and_collect(self):
        grades = self.tmp / "grades"
        # 1. The reference's own kernel: only the TODOs changed (the solution is in them), it calls no
        #    foreign kernel, it builds, and its host tests pass.
        started = time.monotonic()
        code, output = self.grade("--submission", REPOSITORY, "--steps", "04", "--out", grades / "reference")
        first = time.monotonic() - started
        self.assertEqual(code, exit_codes.EXIT_OK, output[-4000:])
        results = json.loads((grades / "reference" / "results.json").read_text())
        statuses = {t["name"]: t.get("status") for t in results["tests"]}
        self.assertEqual(statuses["04_outer_product: integrity, only the TODOs changed"], "passed")
        self.assertEqual(statuses["04_outer_product: integrity, no kernel but the step's own"], "passed")
        self.assertEqual(statuses["04_outer_product: builds"], "passed")
        self.assertEqual(statuses["04_outer_product: host tests (no GPU)"], "passed")
        correctness = next(t for t in results["tests"] if t["name"] == "04_outer_product: correctness")
        self.assertIn("not run: graded without a GPU", correctness["output"])
        self.assertIn("Not run: graded without a GPU", (grades / "reference" / "report.md").read_text())

        source = (REPOSITORY / "04_outer_product" / "kernel.cu").read_text(encoding="utf-8")
        # 2. A line added outside the region: built, the line named and its price taken (the rubric's
        #    integrity.per_changed_line), not refused.
        outside = self.tmp / "outside" / "04_outer_product" / "kernel.cu"
        outside.parent.mkdir(parents=True)
        first_code = next(i for i, line in enumerate(source.splitlines()) if line.startswith("namespace worklog"))
        lines = source.splitlines()
        lines.insert(first_code + 1, "static int helper_outside_the_todo = 1;")
        outside.write_text("\n".join(lines) + "\n", encoding="utf-8")
        code, output = self.grade("--submission", outside.parents[1], "--steps", "04", "--out", grades / "outside")
        self.assertEqual(code, exit_codes.EXIT_OK, output[-4000:])
        outside_report = (grades / "outside" / "report.md").read_text()
        record = json.loads((grades / "outside" / "grading.json").read_text())["steps"][0]
        self.assertTrue(record["compile"]["ok"])
        self.assertEqual(record["integrity"][0]["status"], "changed")
        self.assertIn("'static int helper_outside_the_todo = 1;' is added", record["integrity"][0]["detail"])
        outside_results = json.loads((grades / "outside" / "results.json").read_text())
        self.assertIn("04_outer_product: integrity, 1 line(s) changed outside the TODOs",
                      [t["name"] for t in outside_results["tests"]])

        # 4. collect: one row per grading.
        table = self.tmp / "class.csv"
        code, out = lab.main(["collect", "--grades", str(grades), "--out", str(table)]), None
        self.assertEqual(code, exit_codes.EXIT_OK)
        with table.open(encoding="utf-8") as f:
            rows = {row["submission"]: row for row in csv.DictReader(f)}
        self.assertEqual(sorted(rows), ["outside", "reference"])
        self.assertEqual(rows["reference"]["04_outer_product status"], "built, host tests pass, no GPU run")
        self.assertEqual(rows["outside"]["refused_steps"], "")
        self.assertEqual(rows["outside"]["04_outer_product checks"], "1.0")  # build 4 + host tests 2, less 5 a line
        print(f"\nlab.grade_build: a no-GPU grade of one step took {first:.0f} s with an empty --work folder "
              f"(the reference's kernel and a scratch tree built)", file=sys.stderr)


@unittest.skipUnless(enabled(), "slow build tests: set LAB_BUILD_TESTS=1")
class SymbolCheckTest(unittest.TestCase):
    """integrity.foreign_calls on objects nvcc compiles here: a launcher that calls cuBLAS, one that
    calls a harness function its reference does not, and the reference itself."""

    def test_foreign_calls_are_found_in_real_objects(self):
        nvcc = os.environ.get("CUDACXX") or shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
        if not Path(nvcc).is_file():
            self.skipTest("nvcc not found")
        from labkit import integrity
        kernel = "__global__ void k(float* c) { c[threadIdx.x] = 1.0f; }\n"
        sources = {
            "reference": kernel + "void launch(float* c) { k<<<1, 32>>>(c); }\n",
            "cublas": "#include <cublas_v2.h>\n" + kernel
                      + "void launch(float* c) { cublasHandle_t h; cublasCreate(&h); k<<<1, 32>>>(c); }\n",
            "harness": "namespace worklog { void cublas_gemm_for_the_check(float*); }\n" + kernel
                       + "void launch(float* c) { worklog::cublas_gemm_for_the_check(c); }\n",
        }
        with tempfile.TemporaryDirectory() as tmp:
            objects = {}
            for name, text in sources.items():
                (Path(tmp) / f"{name}.cu").write_text(text)
                objects[name] = Path(tmp) / f"{name}.o"
                done = subprocess.run([nvcc, "-c", "-arch=sm_90", str(Path(tmp) / f"{name}.cu"), "-o", str(objects[name])],
                                      capture_output=True, text=True, timeout=600)
                self.assertEqual(done.returncode, 0, done.stderr)
            self.assertEqual(integrity.foreign_calls(objects["reference"], objects["reference"]), [])
            found = integrity.foreign_calls(objects["cublas"], objects["reference"])
            self.assertTrue(found and found[0].startswith("cublasCreate_v2 (a library"), found)
            found = integrity.foreign_calls(objects["harness"], objects["reference"])
            self.assertTrue(found and "worklog::cublas_gemm_for_the_check" in found[0], found)
            # In a student's copy there is no reference object: foreign libraries only.
            self.assertTrue(integrity.foreign_calls(objects["cublas"], None))
            self.assertEqual(integrity.foreign_calls(objects["harness"], None), [])


if __name__ == "__main__":
    unittest.main()
