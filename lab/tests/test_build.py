"""Slow: real builds with CMake and nvcc, no GPU needed.

- a release of every step configures and compiles: each TODO skeleton is valid code (written
  without the leak check, which refuses some steps together: test_release.py covers it);
- a release of 09 alone, which leaves 10 out of the copy and of its CMakeLists.txt, configures;
- the grader's submission build: a step that compiles, one that does not (its first error is
  reported, the other step still builds), and one that the submission lacks.

CTest runs this as the test lab.build (LAB_BUILD_TESTS=1); without that variable it is skipped, so
that `python3 -m unittest discover -s lab/tests` stays quick. Builds for sm_90 only, to be short.
"""
import contextlib
import io
import os
import shutil
import tempfile
import unittest
from pathlib import Path

from lab_test_support import REPOSITORY

from labkit import grading, release  # noqa: E402
from labkit.rubric import load_rubric  # noqa: E402
from labkit.steps import discover_steps, regions_of  # noqa: E402

ONE_ARCHITECTURE = ["-DCMAKE_CUDA_ARCHITECTURES=90", "-DWORKLOG_TESTS=OFF"]


@unittest.skipUnless(os.environ.get("LAB_BUILD_TESTS") == "1", "slow build tests: set LAB_BUILD_TESTS=1")
class BuildTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = Path(tempfile.mkdtemp(prefix="lab-build-test-"))
        cls.steps = [s for s in discover_steps(REPOSITORY) if regions_of(REPOSITORY, s)]
        cls.copy = cls.tmp / "copy"
        release.release(REPOSITORY, cls.steps, cls.copy, load_rubric(), leak_check=False)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def test_release_of_every_step_configures_and_compiles(self):
        build = grading.Build(self.copy, self.tmp / "copy-build", self.tmp / "logs", os.cpu_count() or 2)
        configured = build.configure("copy", 1800, ONE_ARCHITECTURE)
        self.assertEqual(configured.code, 0, configured.output[-3000:])
        built = build.build("copy-build", self.steps, 3600)
        self.assertEqual(built.code, 0, grading.first_compiler_error(built.output, self.copy) or built.output[-3000:])
        for step in self.steps:
            self.assertTrue(build.executable(step).is_file(), step)

    def test_release_of_09_configures_without_the_steps_it_leaves_out(self):
        copy = self.tmp / "copy-09"
        plan = release.release(REPOSITORY, ["09_wgmma_tma"], copy, load_rubric())
        self.assertEqual(plan.withheld, [s for s in discover_steps(REPOSITORY) if s > "09_wgmma_tma"])
        build = grading.Build(copy, self.tmp / "copy-09-build", self.tmp / "logs", os.cpu_count() or 2)
        configured = build.configure("copy-09", 1800, ONE_ARCHITECTURE)
        self.assertEqual(configured.code, 0, configured.output[-3000:])
        steps = (self.tmp / "copy-09-build" / "bin" / "worklog_steps.txt")
        generated = steps.read_text() if steps.is_file() else ""
        self.assertNotIn("10_persistent_clusters", generated)

    def test_submission_build_step_by_step(self):
        submission = self.tmp / "submission"
        shutil.copytree(self.copy, submission)
        broken = submission / "03_thread_coarsening" / "kernel.cu"
        broken.write_text(broken.read_text().replace("// TODO: ", "acc2[0][0] += 1.0f;  // TODO: ", 1))
        (submission / "04_outer_product" / "kernel.cu").unlink()
        steps = ["02_block_tiling", "03_thread_coarsening", "04_outer_product"]
        grader = grading.Grader(submission, REPOSITORY, steps, load_rubric(), [], self.tmp / "work", jobs=2)
        with contextlib.redirect_stderr(io.StringIO()):
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
        tree = self.tmp / "work" / "submission-tree"
        self.assertEqual((tree / "02_block_tiling" / "kernel.cu").read_bytes(),
                         (submission / "02_block_tiling" / "kernel.cu").read_bytes())
        self.assertEqual((tree / "04_outer_product" / "kernel.cu").read_bytes(),
                         (REPOSITORY / "04_outer_product" / "kernel.cu").read_bytes())
        self.assertEqual((tree / "common" / "run_step.cpp").read_bytes(),
                         (REPOSITORY / "common" / "run_step.cpp").read_bytes())


if __name__ == "__main__":
    unittest.main()
