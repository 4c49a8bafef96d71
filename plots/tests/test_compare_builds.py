"""Tests for plots/run/compare_builds.py, with fake step programs (shell scripts), so no GPU.

Run from anywhere:  python3 -m unittest discover -s plots/tests -p 'test_compare_builds.py' -v
"""
import contextlib
import csv
import io
import os
import sys
import tempfile
import unittest
from pathlib import Path

PLOTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PLOTS))
sys.path.insert(0, str(PLOTS.parent / "common"))

from run import compare_builds  # noqa: E402
import exit_codes  # noqa: E402

HEADER = ("timestamp,gpu,sm_count,compute_capability,cuda_runtime,cuda_driver,step,adds,precision,m,n,k,alpha,"
          "beta,ms,tflops,cublas_ms,cublas_tflops,pct_cublas,max_abs_err,err_over_tol,global_bytes,status,"
          "bad_count,first_bad_row,first_bad_col,expected,obtained")

# Stands in for a step program: logs that it ran, then writes one row per shape of --shapes with
# PCT % of cuBLAS (the shape 7x7x7 at PCT7 instead) and MS milliseconds; the shape 9x9x9 fails its
# check (its row says FAIL, and the program exits 1), and NODEVICE exits 77 at once. With --no-check
# every row says UNCHECKED.
FAKE_STEP = """#!/bin/sh
echo "NAME $*" >> "LOG"
[ "NODEVICE" = yes ] && { echo "NAME: error: no NVIDIA driver found" >&2; exit 77; }
while [ $# -gt 0 ]; do
  case "$1" in
    --shapes) shapes="$2"; shift ;;
    --csv) csv="$2"; shift ;;
    --no-check) unchecked=yes ;;
  esac
  shift
done
code=0
[ -s "$csv" ] || echo "HEADER" > "$csv"
grep -v '^#' "$shapes" | while IFS=x read m n k; do
  [ -z "$m" ] && continue
  pct=PCT; status=PASS
  [ "$m" = 7 ] && pct=PCT7
  [ "$m" = 9 ] && status=FAIL
  [ "$unchecked" = yes ] && status=UNCHECKED
  echo "2026-11-26T10:00:00Z,NVIDIA H100,132,9.0,13.0,13.0,NAME,fake,fp16,$m,$n,$k,1,0,MS,1,0.01,1,$pct,0,0.1,1,$status,,,,," >> "$csv"
done
grep -q '^9x9x9' "$shapes" && { echo "NAME: error: check failed" >&2; exit 1; }
exit $code
"""


def write_fake(folder, name, log, pct, pct7, ms, no_device=False):
    folder.mkdir(parents=True, exist_ok=True)
    text = (FAKE_STEP.replace("NAME", name).replace("LOG", str(log)).replace("HEADER", HEADER)
            .replace("PCT7", str(pct7)).replace("PCT", str(pct)).replace("MS", str(ms))
            .replace('"NODEVICE"', '"yes"' if no_device else '"no"'))
    path = folder / name
    path.write_text(text)
    path.chmod(0o755)


class CompareBuildsTest(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp())
        self.log = self.tmp / "log.txt"
        self.shapes = self.tmp / "shapes.txt"
        self.shapes.write_text("# two shapes\n64x64x64\n7x7x7\n")

    def run_tool(self, *extra):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = compare_builds.main(["--before", str(self.tmp / "old"), "--after", str(self.tmp / "new"),
                                        "--steps", "12_stream_k", "--shapes", str(self.shapes), *extra])
        return code, out.getvalue(), err.getvalue()

    def test_a_drop_beyond_the_threshold_is_a_loss_and_processes_alternate(self):
        write_fake(self.tmp / "old", "12_stream_k", self.log, pct=80, pct7=90, ms=0.05)
        write_fake(self.tmp / "new", "12_stream_k", self.log, pct=79.5, pct7=85, ms=0.06)
        code, out, err = self.run_tool("--processes", "2", "--out", str(self.tmp / "rows.csv"))
        self.assertEqual(code, exit_codes.EXIT_OK, err)
        self.assertIn("| 12_stream_k | 64x64x64 | 80.0 | 79.5 | -0.6% | 50.0 | 60.0 | +20.0% |", out)
        self.assertIn("| 12_stream_k | 7x7x7 | 90.0 | 85.0 | -5.6% |", out)
        # -0.6% is inside the default 1%; -5.6% is not.
        self.assertIn("losses over 1% of cuBLAS's share: 1", out)
        self.assertIn("12_stream_k 7x7x7: 90.0% -> 85.0% of cuBLAS (-5.6%)", out)
        runs = [line.split()[0] for line in self.log.read_text().splitlines()]
        self.assertEqual(len(runs), 8)  # 2 rounds × 2 shapes × 2 builds: one shape a process, the builds in turn
        with (self.tmp / "rows.csv").open() as f:
            rows = list(csv.DictReader(f))
        self.assertEqual([(r["build"], r["run"], r["m"]) for r in rows],
                         [(build, run, m) for run in ("1", "2") for m in ("64", "7") for build in ("before", "after")])
        self.assertIn("--iters", self.log.read_text())

    def test_no_check_reaches_both_builds_and_their_unchecked_rows_count(self):
        write_fake(self.tmp / "old", "12_stream_k", self.log, pct=80, pct7=90, ms=0.05)
        write_fake(self.tmp / "new", "12_stream_k", self.log, pct=70, pct7=90, ms=0.06)
        code, out, err = self.run_tool("--no-check", "--processes", "1")
        self.assertEqual(code, exit_codes.EXIT_OK, err)
        runs = self.log.read_text().splitlines()
        self.assertEqual(len(runs), 4)
        self.assertTrue(all(run.endswith("--no-check") for run in runs), runs)
        self.assertIn("| 12_stream_k | 64x64x64 | 80.0 | 70.0 | -12.5% |", out)
        self.assertIn("12_stream_k 64x64x64: 80.0% -> 70.0%", out)

    def test_a_failed_check_is_reported_and_its_shape_left_out(self):
        self.shapes.write_text("64x64x64\n9x9x9\n")
        write_fake(self.tmp / "old", "12_stream_k", self.log, pct=80, pct7=80, ms=0.05)
        write_fake(self.tmp / "new", "12_stream_k", self.log, pct=81, pct7=80, ms=0.05)
        code, out, err = self.run_tool("--processes", "1")
        self.assertEqual(code, exit_codes.EXIT_CHECK_FAILED)
        self.assertIn("before 12_stream_k 9x9x9 (process 1) failed: 12_stream_k: error: check failed", err)
        self.assertNotIn("9x9x9", out)
        self.assertIn("| 12_stream_k | 64x64x64 | 80.0 | 81.0 | +1.2% |", out)
        self.assertIn("losses over 1% of cuBLAS's share: none", out)

    def test_no_device_stops_with_77(self):
        write_fake(self.tmp / "old", "12_stream_k", self.log, pct=80, pct7=80, ms=0.05, no_device=True)
        write_fake(self.tmp / "new", "12_stream_k", self.log, pct=80, pct7=80, ms=0.05, no_device=True)
        code, _, err = self.run_tool()
        self.assertEqual(code, exit_codes.EXIT_NO_DEVICE)
        self.assertIn("no CUDA device", err)
        self.assertEqual(len(self.log.read_text().splitlines()), 1)

    def test_bad_arguments_exit_2(self):
        write_fake(self.tmp / "old", "12_stream_k", self.log, pct=80, pct7=80, ms=0.05)
        for extra in (["--processes", "0"], ["--steps", "13_swap_ab"], ["--shapes", str(self.tmp / "bad.txt")]):
            (self.tmp / "bad.txt").write_text("64x64\n")
            with self.subTest(extra=extra), contextlib.redirect_stderr(io.StringIO()) as err:
                with self.assertRaises(SystemExit) as stop:
                    compare_builds.main(["--before", str(self.tmp / "old"), "--after", str(self.tmp / "old"),
                                         "--steps", "12_stream_k", "--shapes", str(self.shapes), *extra])
                self.assertEqual(stop.exception.code, exit_codes.EXIT_BAD_ARGUMENT)
                self.assertIn("error:", err.getvalue())


if __name__ == "__main__":
    unittest.main()
