"""Tests for plots/run/record_variants.py, with fake step executables (shell scripts), so no GPU, and a
fake checkout whose steps' READMEs hold the variant tables; and for the variants block of
plots/readme/filler.py over what it writes.

Run from anywhere:  python3 -m unittest discover -s plots/tests -v
"""
import contextlib
import csv
import io
import json
import os
import sys
import tempfile
import unittest
from pathlib import Path

PLOTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PLOTS))

from readme import filler  # noqa: E402
from run import record_variants  # noqa: E402
from report import results_csv  # noqa: E402

# Stands in for a step executable: logs its arguments; TFLOP/s is 100 + N / 1000, plus 1 for a
# variant; the variant named FAIL fails its check (exit 1), and NODEVICE says there is no GPU.
# --list-variants prints its registration (REGISTERED's, written beside it as STEP.json).
FAKE_STEP = """#!/bin/sh
if [ "$1" = "--list-variants" ]; then cat "$0.json"; exit 0; fi
echo "STEP $*" >> "LOG"
variant=""
while [ $# -gt 0 ]; do
  case "$1" in
    --n) n="$2"; shift ;;
    --csv) csv="$2"; shift ;;
    --variant) variant="$2"; shift ;;
  esac
  shift
done
case "$variant" in
  FAIL) echo "STEP: error: 3 element(s) off cuBLAS" >&2; exit 1 ;;
  NODEVICE) echo "STEP: error: no NVIDIA driver found" >&2; exit 77 ;;
esac
tflops=$((100 + n / 1000))
[ -n "$variant" ] && tflops=$((tflops + 1))
[ -s "$csv" ] || echo "HEADER" > "$csv"
echo "2026-11-24T10:00:00Z,NVIDIA H200,132,9.0,13.0,13.0,STEP,fake,fp16,$n,$n,$n,1,0,0.5,$tflops,0.4,200,80.5,0,0.1,1000,PASS" >> "$csv"
"""

# The fake checkout's steps: what each registers (its .adds, then its variants and their descriptions).
REGISTERED = {"07_async_pipeline": ("x", {"k64": "y", "FAIL": "fails", "NODEVICE": "n"}),
              "08_mma_ldmatrix": ("w", {})}


def write_checkout(root, tables):
    """A checkout at root: CMakeLists.txt listing REGISTERED's steps, each with a README whose
    variants block takes its rows from tables ({step: rows=...})."""
    root = Path(root)
    (root / "CMakeLists.txt").write_text("".join(f"add_worklog_step({step})\n" for step in REGISTERED))
    for step in REGISTERED:
        (root / step).mkdir(exist_ok=True)
        readme = f"# {step}\n"
        if step in tables:
            name = f"variants/{step}"
            readme += f"\n<!-- BEGIN generated: {name} rows={tables[step]} -->\n<!-- END generated: {name} -->\n"
        (root / step / "README.md").write_text(readme)


class RecordVariantsTest(unittest.TestCase):
    def setUp(self):
        temporary = tempfile.TemporaryDirectory()
        self.addCleanup(temporary.cleanup)
        self.folder = Path(temporary.name)
        self.bin = self.folder / "bin"
        self.bin.mkdir()
        self.log = self.folder / "calls.log"
        for step in ("07_async_pipeline", "08_mma_ldmatrix"):
            script = self.bin / step
            script.write_text(FAKE_STEP.replace("STEP", step).replace("LOG", str(self.log))
                              .replace("HEADER", ",".join(results_csv.COLUMNS)))
            os.chmod(script, 0o755)
            adds, variants = REGISTERED[step]
            (self.bin / f"{step}.json").write_text(json.dumps({"step": step, "adds": adds, "variants": [
                {"name": name, "description": what} for name, what in variants.items()]}))
        self.checkout = self.folder / "checkout"
        self.checkout.mkdir()
        write_checkout(self.checkout, {"07_async_pipeline": "07_async_pipeline,k64",
                                       "08_mma_ldmatrix": "07_async_pipeline,08_mma_ldmatrix"})

    def record(self, *arguments):
        out = self.folder / "rows.csv"
        stdout, stderr = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            code = record_variants.main(["--bin-dir", str(self.bin), "--root", str(self.checkout), "--out", str(out),
                                         *arguments])
        rows = []
        if out.exists():
            with out.open(encoding="utf-8") as f:
                rows = list(csv.DictReader(f))
        return code, rows, stderr.getvalue()

    def test_every_row_once_per_process_and_size_processes_in_turn(self):
        code, rows, _ = self.record("--tables", "07_async_pipeline,08_mma_ldmatrix", "--sizes", "64,128",
                                    "--processes", "2")
        self.assertEqual(code, 0)
        calls = self.log.read_text().splitlines()
        # 3 distinct rows (07's step shared by both tables) × 2 sizes × 2 processes, process 1 first.
        self.assertEqual(len(calls), 12)
        self.assertTrue(all("--n 64" in c for c in calls[:3]) and all("--n 128" in c for c in calls[3:6]))
        self.assertEqual([r["run"] for r in rows if r["metric"] == "tflops"], ["1"] * 6 + ["2"] * 6)
        self.assertEqual({r["metric"] for r in rows}, {"ms", "tflops", "cublas_tflops", "pct_cublas"})
        k64 = [r for r in rows if r["variant"] == "k64" and r["n"] == "128" and r["metric"] == "tflops"]
        self.assertEqual([r["value"] for r in k64], ["101", "101"])
        first = rows[0]
        self.assertEqual((first["experiment"], first["date"], first["gpu"]),
                         ("technique_variants", "2026-11-24", "NVIDIA H200"))

    def test_the_tables_are_the_variants_blocks_of_the_steps_readmes(self):
        self.assertEqual(filler.variant_tables(self.checkout),
                         {"07_async_pipeline": [("07_async_pipeline", ""), ("07_async_pipeline", "k64")],
                          "08_mma_ldmatrix": [("07_async_pipeline", ""), ("08_mma_ldmatrix", "")]})

    def test_a_failed_run_writes_no_row_the_others_go_on(self):
        write_checkout(self.checkout, {"07_async_pipeline": "07_async_pipeline,k64,FAIL"})
        code, rows, stderr = self.record("--tables", "07_async_pipeline", "--sizes", "64", "--processes", "1")
        self.assertEqual(code, 1)
        self.assertIn("07_async_pipeline/FAIL 64³ failed: 3 element(s) off cuBLAS", stderr)
        self.assertEqual(sorted({r["variant"] for r in rows}), ["", "k64"])

    def test_no_device_stops_at_once_and_writes_nothing(self):
        write_checkout(self.checkout, {"07_async_pipeline": "NODEVICE,07_async_pipeline,k64"})
        code, rows, stderr = self.record("--tables", "07_async_pipeline", "--sizes", "64")
        self.assertEqual(code, 77)
        self.assertEqual(rows, [])
        self.assertFalse((self.folder / "rows.csv").exists())
        self.assertEqual(len(self.log.read_text().splitlines()), 1)
        self.assertIn("no CUDA device", stderr)

    def test_unknown_table_is_a_bad_argument(self):
        with contextlib.redirect_stderr(io.StringIO()), self.assertRaises(SystemExit) as stop:
            record_variants.main(["--bin-dir", str(self.bin), "--root", str(self.checkout), "--out", "x.csv",
                                  "--tables", "99_nothing"])
        self.assertEqual(stop.exception.code, 2)
        with contextlib.redirect_stderr(io.StringIO()), self.assertRaises(SystemExit) as stop:
            # 08's README has no variants block here: no table of that name.
            write_checkout(self.checkout, {"07_async_pipeline": "07_async_pipeline"})
            record_variants.main(["--bin-dir", str(self.bin), "--root", str(self.checkout), "--out", "x.csv",
                                  "--tables", "08_mma_ldmatrix"])
        self.assertEqual(stop.exception.code, 2)

    def test_the_variants_block_shows_the_range_over_the_processes(self):
        code, rows, _ = self.record("--tables", "07_async_pipeline", "--sizes", "4096,8192", "--processes", "3")
        self.assertEqual(code, 0)
        # Make the processes differ: process 3 of the step is slower.
        for r in rows:
            if r["variant"] == "" and r["run"] == "3" and r["metric"] == "tflops":
                r["value"] = "90"
        with (self.folder / "experiments.csv").open("w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=record_variants.COLUMNS, lineterminator="\n")
            writer.writeheader()
            writer.writerows(rows)
        # What changes is what the fake step registers: the step's .adds, the variant's description.
        results = filler.Results(self.folder, self.checkout, self.bin)
        text = filler.render_block("variants/07_async_pipeline", results,
                                          "experiment=technique_variants rows=07_async_pipeline,k64")
        self.assertIn("each row in 3 processes of its own", text)
        self.assertIn("| (the step) | x | 90.0–104.0 | 80.5% | 90.0–108.0 | 80.5% |", text)
        self.assertIn("| `k64` | y | 105.0 | 80.5% | 109.0 | 80.5% |", text)


if __name__ == "__main__":
    unittest.main()
