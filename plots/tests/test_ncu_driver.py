"""Tests of plots/profiling/ncu_profile.py as a program, with a fake ncu and fake step executables: what it runs, writes and says, where it finds ncu, and how it stops.

Run from anywhere:  python3 -m unittest discover -s plots/tests -v
"""
import contextlib
import io
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from support import PLOTS, FIXTURES, PNG_SIGNATURE  # noqa: E402  (first: it sets the import path)
from profiling import ncu_profile  # noqa: E402
from profiling import profile_csv  # noqa: E402
from run import run_worklog  # noqa: E402
import python_without_matplotlib  # noqa: E402

from test_ncu_profile import HAVE_MATPLOTLIB  # noqa: E402


# The profiling run of a fake ncu, this file's and test_cublas_pick.py's (`args`: ncu's arguments):
# runs the program after its options, as ncu does, passing its output on; then, as ncu would say
# them, no access to the counters (FAKE_NCU_NO_PERMISSION) or the program's failure. What follows
# it writes the fake's "report".
FAKE_NCU_RUN = """program = next(i for i, a in enumerate(args) if os.path.isfile(a) and os.access(a, os.X_OK))
run = subprocess.run(args[program:], capture_output=True, text=True)
print("==PROF== Connected to process 4242 (" + args[program] + ")")
sys.stdout.write(run.stdout)
sys.stderr.write(run.stderr)
if os.environ.get("FAKE_NCU_NO_PERMISSION"):
    print("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU "
          "Performance Counters on the target device 0.")
    sys.exit(0)
if run.returncode != 0:
    print("==ERROR== The application returned an error code (%d)." % run.returncode)
    sys.exit(run.returncode)
"""

# Stands in for ncu: logs its arguments; answers --import (prints the fixture the report names);
# refuses, as ncu does, a run that asks for a metric in FAKE_NCU_UNKNOWN (comma-separated base
# names); otherwise runs the program after its options, as ncu does, and writes a "report" naming
# the fixture that stands for what was profiled.
FAKE_NCU = """#!PYTHON
import os, re, subprocess, sys
args = sys.argv[1:]
with open(os.environ["FAKE_NCU_LOG"], "a") as log:
    log.write("ncu " + " ".join(args) + "\\n")
if "--import" in args:
    with open(args[args.index("--import") + 1]) as report:
        sys.stdout.write(open(report.read()).read())
    sys.exit(0)
for unknown in filter(None, os.environ.get("FAKE_NCU_UNKNOWN", "").split(",")):
    for metric in args[args.index("--metrics") + 1].split(","):
        if metric.split(".")[0] == unknown:
            print("==ERROR== Failed to find metric regex:^" + metric.replace(".", "\\\\.") + "$")
            sys.exit(1)
""" + FAKE_NCU_RUN + """target = args[args.index("--profile", program) + 1]
fp16 = "precision fp16" in run.stdout
fixture = {"cublas": "ncu_raw_cublas_fp16.csv", "step": "ncu_details_05_wmma.csv" if fp16
           else "ncu_raw_04_outer_product.csv"}[target]
with open(args[args.index("--export") + 1], "w") as report:
    report.write(os.path.join(os.environ["FAKE_NCU_FIXTURES"], fixture))
print("==PROF== Disconnected from process 4242")
"""

# Stands in for a step executable in --profile mode: logs its arguments, then either fails with
# its one-line message and CODE, or says what it profiled (a variant: under its own name), as
# profile_run.cpp does.
FAKE_STEP = """#!/bin/sh
echo "STEP $*" >> "LOG"
case " $* " in *" --profile cublas "*) what="cuBLAS" ;; *) what="the step's kernel" ;; esac
if [ CODE -ne 0 ]; then echo "STEP: error: MESSAGE" >&2; exit CODE; fi
name=STEP
case " $* " in *" --variant "*) name="STEP/${*##*--variant }" ;; esac  # a variant says its own name
echo "$name: profiled $what once, precision PRECISION, 64x64x64"
"""


class FakeNcuTest(unittest.TestCase):
    """Tests of a tool against a fake ncu (fake_ncu: its script; this file's FAKE_NCU unless a
    subclass names another) in a fresh folder: self.bin for fake steps, self.out for the tool's
    output (not made yet), self.ncu; calls() reads the log the fakes write. No tests of its own:
    DriverTest's and test_cublas_pick.py's are."""
    fake_ncu = FAKE_NCU

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)
        self.bin = self.root / "bin"
        self.bin.mkdir()
        self.out = self.root / "out"
        self.ncu = self.root / "ncu"
        self.ncu.write_text(self.fake_ncu.replace("PYTHON", sys.executable))
        self.ncu.chmod(0o755)

    def tearDown(self):
        self.tmp.cleanup()

    def calls(self):
        return (self.root / "calls.log").read_text().splitlines()


class DriverTest(FakeNcuTest):
    def add_step(self, step, precision="fp32", code=0, message=""):
        """A fake step executable, listed last in the build's list of steps."""
        script = (FAKE_STEP.replace("STEP", step).replace("LOG", str(self.root / "calls.log"))
                  .replace("PRECISION", precision).replace("CODE", str(code)).replace("MESSAGE", message))
        (self.bin / step).write_text(script)
        (self.bin / step).chmod(0o755)
        with open(self.bin / run_worklog.STEP_LIST, "a", encoding="utf-8") as step_list:
            step_list.write(step + "\n")

    def run_driver(self, *extra, python=sys.executable, base_env=os.environ, **env):
        environment = {**base_env, "FAKE_NCU_LOG": str(self.root / "calls.log"),
                       "FAKE_NCU_FIXTURES": str(FIXTURES), **env}
        command = [str(python), str(PLOTS / "profiling" / "ncu_profile.py"), "--bin-dir", str(self.bin), "--out",
                   str(self.out), "--size", "64", "--ncu", str(self.ncu), *map(str, extra)]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, env=environment)
        return done.returncode, done.stdout, done.stderr

    def test_variants_alone_into_variant_profile(self):
        self.add_step("07_async_pipeline", "fp16")
        self.add_step("08_mma_ldmatrix", "fp16")
        code, stdout, stderr = self.run_driver("--variants", "07_async_pipeline/no_padding,08_mma_ldmatrix")
        self.assertEqual(code, 0, stderr)
        self.assertIn("[1] 07_async_pipeline/no_padding 64x64x64\n", stdout)
        self.assertNotIn("cuBLAS", stdout)  # no cuBLAS profile, no profile.csv, no chart
        self.assertFalse((self.out / "profile.csv").exists())
        rows = profile_csv.load_profile(self.out / ncu_profile.VARIANT_PROFILE)
        self.assertEqual([r["step"] for r in rows], ["07_async_pipeline/no_padding", "08_mma_ldmatrix"])
        self.assertIn("07_async_pipeline --m 64 --n 64 --k 64 --profile step --variant no_padding", self.calls())
        self.assertIn("08_mma_ldmatrix --m 64 --n 64 --k 64 --profile step", self.calls())
        self.assertTrue((self.out / "ncu" / "07_async_pipeline_no_padding.ncu-rep").is_file())
        code, _, stderr = self.run_driver("--variants", "99_nothing/x")
        self.assertEqual(code, 2)
        self.assertIn("no step executable", stderr)

    def test_every_step_then_cublas_per_precision(self):
        self.add_step("01_naive")
        self.add_step("04_outer_product")
        self.add_step("05_wmma", "fp16")
        self.add_step("09_wgmma_tma", "fp16", 4,
                      "09_wgmma_tma needs compute capability 9.0 exactly; NVIDIA A100 is 8.0")
        code, stdout, stderr = self.run_driver()
        self.assertEqual(code, 0, stderr)
        self.assertIn("ncu_profile: skipping 09_wgmma_tma: 09_wgmma_tma needs compute capability 9.0 "
                      "exactly; NVIDIA A100 is 8.0\n", stdout)
        self.assertIn("[5] cuBLAS fp32 (through 01_naive) 64x64x64\n", stdout)
        self.assertIn("[6] cuBLAS fp16 (through 05_wmma) 64x64x64\n", stdout)
        # The fake's cuBLAS report holds two kernels (GEMM and split-K reduction) for either precision.
        self.assertTrue(stdout.splitlines()[-1].startswith("ncu_profile: 7 kernel(s) profiled in "), stdout)
        rows = profile_csv.load_profile(self.out / "profile.csv")
        self.assertEqual([(r["step"], r["precision"]) for r in rows],
                         [("01_naive", "fp32"), ("04_outer_product", "fp32"), ("05_wmma", "fp16"),
                          ("cuBLAS", "fp32"), ("cuBLAS", "fp32"), ("cuBLAS", "fp16"), ("cuBLAS", "fp16")])
        self.assertEqual(rows[0]["m"], 64)
        profiles = [c for c in self.calls() if c.startswith("ncu ") and "--export" in c]
        self.assertEqual(len(profiles), 6)
        for call in profiles:
            self.assertIn("--profile-from-start off --clock-control none", call)
            self.assertIn("--metrics gpu__time_duration.sum,dram__bytes_read.sum,", call)
        self.assertIn("01_naive --m 64 --n 64 --k 64 --profile cublas", self.calls())  # the steps' own log
        self.assertIn("05_wmma --m 64 --n 64 --k 64 --profile cublas", self.calls())
        self.assertTrue((self.out / "ncu" / "01_naive.ncu-rep").is_file())
        self.assertTrue((self.out / "ncu" / "cuBLAS_05_wmma.ncu-rep").is_file())
        if HAVE_MATPLOTLIB:
            self.assertEqual((self.out / "roofline_measured.png").read_bytes()[:8], PNG_SIGNATURE)
            self.assertFalse((self.out / "table.md").exists())  # no worklog.csv to merge with

    def test_without_matplotlib_profile_csv_and_one_line(self):
        """Run by a Python without matplotlib, on a machine without a package index: profile.csv is
        written, and one line says how to draw the chart (as the worklog driver does)."""
        self.add_step("01_naive")
        python = python_without_matplotlib.make(self.root / "bare")
        (self.root / "no-wheels").mkdir()
        venv = self.root / "build" / "plots-venv"
        code, stdout, stderr = self.run_driver(
            "--venv", venv, python=python,
            base_env=python_without_matplotlib.offline_pip_environment(self.root / "no-wheels"))
        self.assertEqual(code, 0, stderr)
        self.assertRegex(stdout, rf"ncu_profile: matplotlib is not installed for {python}: installing ")
        self.assertEqual(len(stderr.splitlines()), 1, stderr)
        self.assertRegex(stderr, r"^ncu_profile: charts not drawn, for want of matplotlib: pip install failed: "
                                 rf".* The CSVs are in {self.out}. For the charts, install matplotlib "
                                 rf"\({python} -m pip install -r .*requirements.txt\) and run {python} "
                                 rf".*make_plots.py --out {self.out} --profile {self.out}/profile.csv\n$")
        self.assertEqual(sorted(p.name for p in self.out.iterdir()), ["ncu", "profile.csv"])

    def test_manifest_order_missing_executable_and_table_merge(self):
        for step in ("01_naive", "02_block_tiling"):
            self.add_step(step)
        (self.bin / run_worklog.STEP_LIST).write_text("02_block_tiling\n01_naive\n03_thread_coarsening\n")
        self.out.mkdir()
        (self.out / "worklog.csv").write_text((FIXTURES / "worklog.csv").read_text(encoding="utf-8"))
        code, stdout, stderr = self.run_driver("--publish", self.root / "published")
        self.assertEqual(code, 0, stderr)
        self.assertIn("03_thread_coarsening not found; skipping 03_thread_coarsening", stderr)
        self.assertEqual([r["step"] for r in profile_csv.load_profile(self.out / "profile.csv")],
                         ["02_block_tiling", "01_naive", "cuBLAS", "cuBLAS"])
        published = sorted(p.name for p in (self.root / "published").iterdir())
        if HAVE_MATPLOTLIB:
            self.assertEqual(published, ["profile.csv", "roofline_measured.png", "table.md"])
            # The fixture's 64³ profile does not match the worklog's 4096³ rows: "—" there.
            self.assertIn("limited by (measured)", (self.out / "table.md").read_text(encoding="utf-8"))
        else:
            self.assertEqual(published, ["profile.csv"])

    def test_metrics_this_ncu_does_not_know_are_dropped(self):
        self.add_step("01_naive")
        self.add_step("02_block_tiling")
        code, stdout, stderr = self.run_driver(
            FAKE_NCU_UNKNOWN="sm__pipe_tensor_cycles_active,smsp__sass_inst_executed_op_shared_st")
        self.assertEqual(code, 0, stderr)
        self.assertIn("ncu_profile: note: this ncu does not know sm__pipe_tensor_cycles_active"
                      ".avg.pct_of_peak_sustained_elapsed; asking again without it\n", stdout)
        self.assertIn("ncu_profile: note: this ncu does not know smsp__sass_inst_executed_op_shared_st.sum; "
                      "asking again without it (n/a in profile.csv: shared_st_instructions)\n", stdout)
        profiles = [c for c in self.calls() if c.startswith("ncu ") and "--export" in c]
        self.assertEqual(len(profiles), 3 + 2)  # 01 three times, then 02 and cuBLAS FP32 once each
        self.assertIn("sm__pipe_tensor_op_hmma_cycles_active", profiles[-1])
        self.assertNotIn("smsp__sass_inst_executed_op_shared_st", profiles[-1])
        self.assertEqual(len(profile_csv.load_profile(self.out / "profile.csv")), 4)

    def test_no_counter_access_exits_7(self):
        self.add_step("01_naive")
        code, stdout, stderr = self.run_driver(FAKE_NCU_NO_PERMISSION="1")
        self.assertEqual(code, 7)  # exit_no_counter_access
        self.assertEqual(stderr.splitlines(), [
            "ncu_profile: error: ncu cannot read the GPU's performance counters (ERR_NVGPUCTRPERM): run as "
            "root, or let users profile (https://developer.nvidia.com/ERR_NVGPUCTRPERM)"])
        self.assertFalse((self.out / "profile.csv").exists())

    def test_no_device_exits_77(self):
        self.add_step("01_naive", code=77, message="no CUDA device found (0 devices)")
        self.add_step("02_block_tiling")
        code, _, stderr = self.run_driver()
        self.assertEqual(code, 77)  # exit_no_device
        self.assertEqual(stderr, "ncu_profile: error: no CUDA device; profiling needs an NVIDIA GPU "
                                 "(01_naive: no CUDA device found (0 devices))\n")
        self.assertEqual(sum(c.startswith("ncu ") and "--export" in c for c in self.calls()), 1)
        self.assertFalse(self.out.exists())  # nothing profiled, nothing left behind

    def test_a_failed_step_is_reported_and_the_rest_written(self):
        self.add_step("01_naive", code=5, message="CUDA error at kernel.cu:10: cudaErrorIllegalAddress")
        self.add_step("02_block_tiling")
        code, _, stderr = self.run_driver()
        self.assertEqual(code, 1)  # exit_check_failed
        self.assertIn("ncu_profile: 01_naive: profile failed: CUDA error at kernel.cu:10: "
                      "cudaErrorIllegalAddress\n", stderr)
        self.assertEqual([r["step"] for r in profile_csv.load_profile(self.out / "profile.csv")],
                         ["02_block_tiling", "cuBLAS", "cuBLAS"])

    def test_ncu_not_found_exits_6(self):
        self.add_step("01_naive")
        code, stdout, stderr = self.run_driver("--ncu", self.root / "no_ncu")
        self.assertEqual(code, 6)  # exit_tool_missing
        self.assertEqual(stderr, f"ncu_profile: error: --ncu {self.root / 'no_ncu'}: no such executable\n")

    def test_no_steps_exits_2(self):
        (self.bin / "01_naive").write_text("not listed")
        code, _, stderr = self.run_driver()
        self.assertEqual(code, 2)  # exit_bad_argument
        step_list = self.bin / run_worklog.STEP_LIST
        self.assertEqual(stderr, f"ncu_profile: error: cannot read the list of steps {step_list} (No such file "
                                 "or directory): --bin-dir must be the build's bin folder, where the build writes it\n")
        (self.bin / run_worklog.STEP_LIST).write_text("# the steps\n02_block_tiling\n")
        code, _, stderr = self.run_driver()
        self.assertEqual(code, 2)  # exit_bad_argument
        self.assertEqual(stderr.splitlines()[-1], f"ncu_profile: error: no step executables in {self.bin}")

    def test_bad_arguments_exit_2(self):
        for bad in (["--size", "0"], ["--timeout", "x"], ["--peak-fp32", "-1"]):
            with self.subTest(bad=bad), contextlib.redirect_stderr(io.StringIO()):
                with self.assertRaises(SystemExit) as caught:
                    ncu_profile.parse_args(["--bin-dir", "b", "--out", "o", *bad])
                self.assertEqual(caught.exception.code, 2)


class FindNcuTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)
        self.saved = dict(os.environ)
        for name in ("CUDA_HOME", "CUDA_PATH"):
            os.environ.pop(name, None)

    def tearDown(self):
        os.environ.clear()
        os.environ.update(self.saved)
        self.tmp.cleanup()

    def executable(self, path):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("#!/bin/sh\n")
        path.chmod(0o755)
        return path

    def test_beside_nvcc_through_its_link(self):
        nvcc = self.executable(self.root / "cuda" / "bin" / "nvcc")
        ncu = self.executable(self.root / "cuda" / "bin" / "ncu")
        (self.root / "path").mkdir()
        (self.root / "path" / "nvcc").symlink_to(nvcc)
        os.environ["PATH"] = str(self.root / "path")
        self.assertEqual(ncu_profile.find_ncu(None), str(ncu))

    def test_cuda_home(self):
        ncu = self.executable(self.root / "toolkit" / "bin" / "ncu")
        os.environ["PATH"] = str(self.root / "empty")
        os.environ["CUDA_HOME"] = str(self.root / "toolkit")
        self.assertEqual(ncu_profile.find_ncu(None), str(ncu))

    def test_not_found(self):
        if Path("/usr/local/cuda/bin/ncu").is_file():
            self.skipTest("this machine has /usr/local/cuda/bin/ncu")
        os.environ["PATH"] = str(self.root / "empty")
        with self.assertRaises(ncu_profile.Stop) as caught:
            ncu_profile.find_ncu(None)
        self.assertEqual(caught.exception.code, ncu_profile.exit_codes.EXIT_TOOL_MISSING)
        self.assertIn("Nsight Compute (ncu) not found", str(caught.exception))


class StepOutputTest(unittest.TestCase):
    """read_outcome() on what ncu and a step print, including ncu's progress on the same line."""

    def test_precision_after_progress_dots(self):
        output = ('==PROF== Profiling "naive_gemm": 0%....50%....100% - 12 passes01_naive: profiled the '
                  "step's kernel once, precision fp32, 4096x4096x4096\n")
        self.assertEqual(ncu_profile.read_outcome(output, 0, "01_naive").precision, "fp32")

    def test_exit_code_of_ncu_when_it_does_not_report_the_step_s(self):
        # The step said it failed, and ncu passed its exit code on without a line about it.
        outcome = ncu_profile.read_outcome("09_wgmma_tma: error: needs compute capability 9.0\n", 4,
                                           "09_wgmma_tma")
        self.assertEqual(outcome.skipped, "needs compute capability 9.0")
        with self.assertRaises(ncu_profile.Stop):
            ncu_profile.read_outcome("01_naive: error: no CUDA device found (0 devices)\n", 77, "01_naive")

    def test_ncu_error_without_the_step_line(self):
        outcome = ncu_profile.read_outcome("==ERROR== Failed to find metric sm__bogus.sum\n", 1, "01_naive")
        self.assertEqual(outcome.error, "==ERROR== Failed to find metric sm__bogus.sum")


if __name__ == "__main__":
    unittest.main()
