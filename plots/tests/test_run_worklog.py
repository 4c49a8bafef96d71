"""Tests for plots/run_worklog.py, using fake step executables (small shell scripts), so no GPU.

Run from anywhere:  python3 -m unittest discover -s plots/tests -v
"""
import contextlib
import io
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

PLOTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PLOTS))

import run_worklog  # noqa: E402

# Stands in for a step executable: logs its arguments, appends one CSV row (header first when
# the file is new or empty, like the real steps), prints a result line, exits with CODE.
FAKE_STEP = """#!/bin/sh
echo "STEP $*" >> "LOG"
while [ $# -gt 0 ]; do
  case "$1" in
    --n) n="$2"; shift ;;
    --csv) csv="$2"; shift ;;
  esac
  shift
done
[ -s "$csv" ] || echo "HEADER" > "$csv"
echo "2026-11-21T10:00:00Z,NVIDIA H100 80GB HBM3,132,9.0,13.0,13.0,STEP,fake step,PREC,$n,$n,$n,\
1,0,1.0,2.0,0.5,4.0,50.0,0.0,0.1,1000000,STATUS" >> "$csv"
echo "fake STEP $n"
exit CODE
"""


def make_bin_dir(root, codes):
    """Write a fake executable for each step in codes (step -> exit code); return the folder."""
    bin_dir = root / "bin"
    bin_dir.mkdir()
    for step, code in codes.items():
        script = (FAKE_STEP.replace("STEP", step).replace("LOG", str(root / "calls.log"))
                  .replace("HEADER", ",".join(run_worklog.make_plots.COLUMNS))
                  .replace("PREC", "fp16" if step >= "05" else "fp32")
                  .replace("STATUS", "FAIL" if code == 1 else "PASS").replace("CODE", str(code)))
        (bin_dir / step).write_text(script)
        (bin_dir / step).chmod(0o755)
    return bin_dir


def run_driver(*argv):
    """Run run_worklog.py as a command (its children write to the real stdout)."""
    done = subprocess.run([sys.executable, str(PLOTS / "run_worklog.py"), *map(str, argv)],
                          capture_output=True, text=True, timeout=60)
    return done.returncode, done.stdout, done.stderr


def data_rows(csv_file):
    return csv_file.read_text().splitlines()[1:]


class ArgumentTest(unittest.TestCase):
    def parse(self, *extra):
        return run_worklog.parse_args(["--bin-dir", "b", "--out", "o", *extra])

    def test_defaults(self):
        args = self.parse()
        self.assertEqual(args.size, 4096)
        self.assertEqual(args.sweep_sizes[:4], [128, 129, 256, 257])
        self.assertEqual(len(args.sweep_sizes), 16)
        self.assertFalse(args.no_sweep)
        self.assertIsNone(args.publish)

    def test_sweep_sizes_list(self):
        self.assertEqual(self.parse("--sweep-sizes", "256,257,512").sweep_sizes, [256, 257, 512])

    def test_bad_values_exit_2(self):
        required = ["--bin-dir", "b", "--out", "o"]
        for bad in (required + ["--sweep-sizes", "256,x"], required + ["--size", "0"],
                    required + ["--iters", "-1"], ["--out", "o"]):
            with self.subTest(bad=bad), contextlib.redirect_stderr(io.StringIO()):
                with self.assertRaises(SystemExit) as caught:
                    run_worklog.parse_args(bad)
                self.assertEqual(caught.exception.code, 2)

    def test_plan_main_runs_then_sweep(self):
        args = self.parse("--iters", "5", "--warmup", "0")
        runs = run_worklog.plan_runs(args, list(run_worklog.STEPS))
        self.assertEqual(len(runs), 6 + 2 * 16)
        self.assertEqual(runs[0], ("01_naive", 4096, ["--warmup", "0", "--iters", "5"],
                                   Path("o/worklog.csv")))
        self.assertEqual(runs[6], ("04_outer_product", 128, ["--warmup", "2", "--iters", "10"],
                                   Path("o/sweep.csv")))
        self.assertEqual(runs[-1][:2], ("06_multiwarp_wmma", 4097))

    def test_plan_without_sweep_or_fp16_steps(self):
        self.assertEqual(len(run_worklog.plan_runs(self.parse("--no-sweep"), list(run_worklog.STEPS))), 6)
        fp32_only = run_worklog.plan_runs(self.parse(), list(run_worklog.STEPS[:4]))
        self.assertEqual(len(fp32_only), 4 + 16)

    def test_no_executables_is_an_error(self):
        with tempfile.TemporaryDirectory() as tmp:
            err = io.StringIO()
            with contextlib.redirect_stderr(err):
                code = run_worklog.main(["--bin-dir", tmp, "--out", str(Path(tmp) / "out")])
            self.assertEqual(code, 2)
            self.assertIn("run_worklog: error: no step executables in", err.getvalue())


class FakeStepsTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)
        self.out = self.root / "out"

    def tearDown(self):
        self.tmp.cleanup()

    def calls(self):
        return (self.root / "calls.log").read_text().splitlines()

    def test_full_run_with_publish(self):
        bin_dir = make_bin_dir(self.root, {step: 0 for step in run_worklog.STEPS})
        self.out.mkdir()
        (self.out / "worklog.csv").write_text("stale rows from an older run\n")
        code, stdout, _ = run_driver("--bin-dir", bin_dir, "--out", self.out, "--size", 64,
                                     "--sweep-sizes", "128,129", "--publish", self.root / "pub")
        self.assertEqual(code, 0, stdout)
        self.assertIn("[1/10] 01_naive 64x64x64\n", stdout)
        self.assertIn("[10/10] 06_multiwarp_wmma 129x129x129\n", stdout)
        self.assertIn("fake 01_naive 64\n", stdout)  # the step's own output is forwarded
        self.assertIn("run_worklog: done in", stdout)
        self.assertEqual(len(data_rows(self.out / "worklog.csv")), 6)
        self.assertEqual(len(data_rows(self.out / "sweep.csv")), 4)
        self.assertIn("04_outer_product --m 128 --n 128 --k 128 --warmup 2 --iters 10 --csv", self.calls()[6])
        self.assertEqual(sorted(p.name for p in (self.root / "pub").iterdir()),
                         sorted(run_worklog.PUBLISHED))
        self.assertEqual(sorted(p.name for p in self.root.iterdir()), ["bin", "calls.log", "out", "pub"])

    def test_failed_verification_keeps_going_and_exits_1(self):
        codes = {step: 0 for step in run_worklog.STEPS if step != "05_wmma"}
        codes["03_thread_coarsening"] = 1
        bin_dir = make_bin_dir(self.root, codes)
        code, stdout, stderr = run_driver("--bin-dir", bin_dir, "--out", self.out, "--size", 64,
                                          "--no-sweep", "--iters", 3)
        self.assertEqual(code, 1)
        self.assertIn("05_wmma not found; skipping", stderr)
        self.assertIn("03_thread_coarsening FAILED verification; continuing", stderr)
        self.assertIn("[5/5] 06_multiwarp_wmma 64x64x64", stdout)
        self.assertIn("--iters 3 --csv", self.calls()[0])
        self.assertIn("| — | — | — | — | FAIL |", (self.out / "table.md").read_text())
        self.assertFalse((self.out / "sweep.csv").exists())
        self.assertFalse((self.out / "sweep.png").exists())

    def test_no_cuda_device_stops_with_77(self):
        bin_dir = make_bin_dir(self.root, {"01_naive": 0, "02_block_tiling": 77, "03_thread_coarsening": 0})
        code, _, stderr = run_driver("--bin-dir", bin_dir, "--out", self.out, "--no-sweep")
        self.assertEqual(code, 77)
        self.assertIn("run_worklog: no CUDA device; the worklog needs an NVIDIA GPU", stderr)
        self.assertEqual(len(self.calls()), 2)  # 03 never ran
        self.assertFalse((self.out / "table.md").exists())

    def test_other_exit_code_stops_with_1(self):
        bin_dir = make_bin_dir(self.root, {"01_naive": 3, "02_block_tiling": 0})
        code, _, stderr = run_driver("--bin-dir", bin_dir, "--out", self.out, "--no-sweep")
        self.assertEqual(code, 1)
        self.assertIn("01_naive exited with code 3 (matrices do not fit in device memory); stopping", stderr)
        self.assertEqual(len(self.calls()), 1)


if __name__ == "__main__":
    unittest.main()
