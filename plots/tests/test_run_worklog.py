"""Tests for plots/run/run_worklog.py and plots/run/plots_env.py, using fake step executables (small
shell scripts) and the list of steps the build would write, so no GPU.

Run from anywhere:  python3 -m unittest discover -s plots/tests -v
"""
import contextlib
import io
import os
import subprocess
import sys
import tempfile
import unittest
import zipfile
from pathlib import Path
from unittest import mock

PLOTS = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
sys.path.insert(0, str(PLOTS))

from run import plots_env  # noqa: E402
import python_without_matplotlib  # noqa: E402
from report import results_csv  # noqa: E402
from run import run_worklog  # noqa: E402

SIX_STEPS = ("01_naive", "02_block_tiling", "03_thread_coarsening", "04_outer_product",
             "05_wmma", "06_multiwarp_wmma")
# What the fake steps measure by default: TFLOP/s growing with the step number, as in the worklog.
TFLOPS = {step: 4.0 * number for number, step in enumerate(SIX_STEPS, 1)}

# Stands in for a step executable: logs its arguments; on exit codes 0 and 1 (the ones after
# which a real step has measured) appends one CSV row (header first when the file is new or
# empty; a --variant's rows under "STEP/VARIANT", as a real step names them) and prints a result
# line; on any other code prints a one-line error as a real step does; then exits with CODE.
FAKE_STEP = """#!/bin/sh
echo "STEP $*" >> "LOG"
shapes=""
name=STEP
while [ $# -gt 0 ]; do
  case "$1" in
    --n) n="$2"; shift ;;
    --csv) csv="$2"; shift ;;
    --shapes) shapes="$2"; shift ;;
    --variant) name="STEP/$2"; shift ;;
  esac
  shift
done
row() {
  echo "2026-11-21T10:00:00Z,NVIDIA H100 80GB HBM3,132,9.0,13.0,13.0,$name,fake step,PREC,$1,$2,$3,\
1,0,1.0,TFLOPS,0.5,4.0,50.0,0.0,0.1,1000000,STATUS" >> "$csv"
}
case CODE in
  0|1)
    [ -s "$csv" ] || echo "HEADER" > "$csv"
    if [ -n "$shapes" ]; then
      grep -v '^#' "$shapes" | tr 'x' ' ' | while read m n k; do row $m $n $k; done
      echo "fake STEP shapes"
    else
      row $n $n $n
      echo "fake STEP $n"
    fi ;;
  4) echo "STEP: error: STEP needs compute capability 9.0 exactly; NVIDIA A100-SXM4-80GB is 8.0" >&2 ;;
  *) echo "STEP: error: fake failure" >&2 ;;
esac
exit CODE
"""


def make_bin_dir(root, codes, listed=None, tflops=None, precisions=None):
    """A bin folder as the build leaves it: a fake executable for each step in codes (step -> exit
    code) and worklog_steps.txt naming `listed` (default: the steps of codes, in that order).
    tflops and precisions (step -> value) override what a fake step reports."""
    bin_dir = root / "bin"
    bin_dir.mkdir()
    tflops, precisions = tflops or {}, precisions or {}
    for step, code in codes.items():
        script = (FAKE_STEP.replace("STEP", step).replace("LOG", str(root / "calls.log"))
                  .replace("HEADER", ",".join(results_csv.COLUMNS))
                  .replace("PREC", precisions.get(step, "fp16" if step >= "05" else "fp32"))
                  .replace("TFLOPS", str(tflops.get(step, TFLOPS.get(step, 2.0))))
                  .replace("STATUS", "FAIL" if code == 1 else "PASS").replace("CODE", str(code)))
        (bin_dir / step).write_text(script)
        (bin_dir / step).chmod(0o755)
    steps = list(codes) if listed is None else listed
    (bin_dir / run_worklog.STEP_LIST).write_text("# written by the tests\n" + "\n".join(steps) + "\n")
    return bin_dir


# Stands in for the Python that runs plots/shapes/peers.py: torch.matmul measures every shape at 2 TFLOP/s
# (about 4% of the fake steps' cuBLAS); Triton is not available. Logs its arguments to LOG.
FAKE_PEER_PYTHON = """#!/bin/sh
echo "PEER $*" >> "LOG"
shift
while [ $# -gt 0 ]; do
  case "$1" in
    --engine) engine="$2"; shift ;;
    --shapes) shapes="$2"; shift ;;
    --csv) csv="$2"; shift ;;
  esac
  shift
done
if [ "$engine" = triton ]; then
  echo "peers: Triton not available: Triton is not installed for fake (no module named 'triton')" >&2
  exit 6
fi
[ -s "$csv" ] || echo "HEADER" > "$csv"
grep -v '^#' "$shapes" | tr 'x' ' ' | while read m n k; do
  echo "2026-11-21T10:00:00Z,NVIDIA H100 80GB HBM3,132,9.0,13.0,13.0,torch.matmul,\
\\"PyTorch 9.9: torch.mm(a, b, out_dtype=torch.float32); against cuBLAS 13.1.0 (PyTorch's)\\",fp16,$m,$n,$k,\
1,0,1.0,2.0,0.04,50.0,4.0,0.0,0.1,0,PASS" >> "$csv"
done
echo "fake peer $engine"
"""


def make_peer_python(root):
    """A fake Python for --peer-python (FAKE_PEER_PYTHON), logging to root/peers.log."""
    path = root / "peer-python"
    path.write_text(FAKE_PEER_PYTHON.replace("LOG", str(root / "peers.log"))
                    .replace("HEADER", ",".join(results_csv.COLUMNS)))
    path.chmod(0o755)
    return path


def run_driver(*argv, python=sys.executable, env=None, peers=None):
    """Run run_worklog.py as a command (its children write to the real stdout). peers: the
    --peer-python to give (default: none, so this Python runs plots/shapes/peers.py)."""
    extra = [] if peers is None else ["--peer-python", peers]
    done = subprocess.run([str(python), str(PLOTS / "run" / "run_worklog.py"), *map(str, argv), *map(str, extra)],
                          capture_output=True, text=True, timeout=120, env=env)
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
        self.assertIsNone(args.venv)

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

    def test_argument_errors_name_the_bad_argument(self):
        for argv, message in ((["--bogus"], "unrecognized arguments: --bogus"),
                              (["--bin-dir", "b", "--bogus"], "unrecognized arguments: --bogus"),
                              (["--bin-dir", "b", "--out", "o", "--size", "x"], "argument --size: not an integer"),
                              (["--bin-dir", "b"], "the following arguments are required: --out"),
                              ([], "the following arguments are required: --bin-dir, --out")):
            with self.subTest(argv=argv), contextlib.redirect_stderr(io.StringIO()) as err:
                with self.assertRaises(SystemExit) as caught:
                    run_worklog.parse_args(argv)
                self.assertEqual(caught.exception.code, 2)
                self.assertIn(f": error: {message}", err.getvalue())
                self.assertIn(" [-h] --bin-dir BIN_DIR --out OUT [--size SIZE]", err.getvalue())

    def test_shapes_inline_or_a_file(self):
        listed = self.parse("--shapes", "1x4096x4096, 4097x4097x4097").shapes
        self.assertEqual([(e.category, e.shape, e.line) for e in listed],
                         [("inline", (1, 4096, 4096), 1), ("inline", (4097, 4097, 4097), 2)])
        self.assertEqual(self.parse("--shapes", "64x64x64").shapes[0].shape, (64, 64, 64))  # one shape is a list too
        self.assertEqual(self.parse("--shapes", "./64x64x64.csv").shapes, Path("64x64x64.csv"))  # a file so named
        self.assertEqual(self.parse("--shapes", "my_corpus.csv").shapes, Path("my_corpus.csv"))
        self.assertEqual(self.parse("--shapes").shapes, run_worklog.shape_corpus.CORPUS)

    def test_bad_inline_shapes_exit_2_naming_the_shape(self):
        for value, message in (("1x4096x4096,4097x4097", "shape 2 of the list, '4097x4097': expected MxNxK, "
                                                         "three integers from 1 to 2147483647"),
                               ("1x2x3,", "shape 2 of the list, '': expected MxNxK"),
                               ("0x64x64", "shape 1 of the list, '0x64x64': expected MxNxK"),
                               ("1x2x2147483648", "shape 1 of the list, '1x2x2147483648': expected MxNxK"),
                               ("64x64x64,8x8x8,64x64x64", "shape 3 of the list repeats shape 1 (64x64x64)")):
            with self.subTest(value=value), contextlib.redirect_stderr(io.StringIO()) as err:
                with self.assertRaises(SystemExit) as caught:
                    self.parse("--shapes", value)
                self.assertEqual(caught.exception.code, 2)
                self.assertIn(f": error: argument --shapes: {message}", err.getvalue())
                self.assertEqual(err.getvalue().count("error:"), 1)

    def test_steps_without_shapes_but_not_with_publish(self):
        self.assertEqual(self.parse("--steps", "04,10").steps, ["04", "10"])
        for argv, message in ((["--steps", "04", "--publish", "plots/results"],
                               "--steps with --publish: the published worklog holds every step; run them all to "
                               "publish"),
                              (["--steps", ","], "--steps: give at least one step")):
            with self.subTest(argv=argv), contextlib.redirect_stderr(io.StringIO()) as err:
                with self.assertRaises(SystemExit) as caught:
                    self.parse(*argv)
                self.assertEqual(caught.exception.code, 2)
                self.assertIn(f": error: {message}\n", err.getvalue())
        # With --shapes, the steps' shapes run may be published (it is a choice of steps already).
        self.assertEqual(self.parse("--steps", "10", "--shapes", "--publish", "p").steps, ["10"])

    def test_main_runs_then_sweep_runs(self):
        args = self.parse("--iters", "5", "--warmup", "0")
        runs = run_worklog.main_runs(args, list(SIX_STEPS), Path("o"))
        self.assertEqual(len(runs), 6)
        self.assertEqual(runs[0], ("01_naive", 4096, ["--timing", "cold", "--warmup", "0", "--iters", "5"],
                                   Path("o/worklog.csv")))
        sweep = run_worklog.sweep_runs(args, ["04_outer_product", "06_multiwarp_wmma"], Path("o"))
        self.assertEqual(len(sweep), 2 * 16)
        self.assertEqual(sweep[0], ("04_outer_product", 128, ["--warmup", "2", "--iters", "10", "--timing", "cold"],
                                    Path("o/sweep.csv")))
        warm = run_worklog.main_runs(self.parse("--timing", "warm"), list(SIX_STEPS), Path("o"))
        self.assertEqual(warm[0][2], ["--timing", "warm"])
        self.assertEqual(sweep[-1][:2], ("06_multiwarp_wmma", 4097))

    def test_fastest_verified_step_of_each_precision(self):
        def row(step, precision, tflops, status="PASS"):
            return {"step": step, "precision": precision, "tflops": tflops, "status": status}
        rows = [row("01", "fp32", 4), row("02", "fp32", 30), row("03", "fp32", 20),
                row("05", "fp16", 50), row("06", "fp16", 90, "FAIL"), row("07", "fp16", 60),
                row("08", "fp16", 55)]
        self.assertEqual(run_worklog.fastest_per_precision(rows), ["02", "07"])
        self.assertEqual(run_worklog.fastest_per_precision([row("01", "fp32", 4, "FAIL")]), [])


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
        bin_dir = make_bin_dir(self.root, {step: 0 for step in SIX_STEPS})
        self.out.mkdir()
        (self.out / "worklog.csv").write_text("stale rows from an older run\n")
        code, stdout, stderr = run_driver("--bin-dir", bin_dir, "--out", self.out, "--size", 64,
                                          "--sweep-sizes", "128,129", "--publish", self.root / "pub")
        self.assertEqual(code, 0, stdout + stderr)
        self.assertEqual(stderr, "")
        self.assertIn("[1/6] 01_naive 64x64x64\n", stdout)
        self.assertIn("run_worklog: size sweep of the fastest step of each precision: "
                      "04_outer_product, 06_multiwarp_wmma\n", stdout)
        self.assertIn("[sweep 4/4] 06_multiwarp_wmma 129x129x129\n", stdout)
        self.assertIn("fake 01_naive 64\n", stdout)  # the step's own output is forwarded
        self.assertIn("run_worklog: done in", stdout)
        self.assertEqual(len(data_rows(self.out / "worklog.csv")), 6)
        self.assertEqual(len(data_rows(self.out / "sweep.csv")), 4)
        self.assertIn("04_outer_product --m 128 --n 128 --k 128 --warmup 2 --iters 10 --timing cold --csv",
                      self.calls()[6])
        self.assertEqual(sorted(p.name for p in (self.root / "pub").iterdir()),
                         sorted(run_worklog.PUBLISHED))
        # Nothing outside --out and --publish; no virtual environment, as this Python has matplotlib.
        self.assertEqual(sorted(p.name for p in self.root.iterdir()), ["bin", "calls.log", "out", "pub"])

    def test_a_profile_in_out_adds_the_measured_column_and_roofline(self):
        # profile.csv, from ncu_profile.py, stays in --out across runs of the worklog.
        bin_dir = make_bin_dir(self.root, {step: 0 for step in SIX_STEPS})
        self.out.mkdir()
        (self.out / "profile.csv").write_text((FIXTURES / "profile.csv").read_text(encoding="utf-8"))
        code, stdout, stderr = run_driver("--bin-dir", bin_dir, "--out", self.out, "--size", 4096, "--no-sweep")
        self.assertEqual((code, stderr), (0, ""), stdout)
        table = (self.out / "table.md").read_text(encoding="utf-8")
        self.assertIn("| check | limited by (measured) |", table)
        self.assertIn("| 04_outer_product | fake step | FP32 | 4096×4096×4096 |", table)
        self.assertIn(" | PASS | issue |", table)  # 04's words in the fixture
        self.assertIn(f"{self.out / 'roofline_measured.png'}\n", stdout)

    def test_steps_and_their_order_come_from_the_list(self):
        # Ten steps, the list in build order; a listed step whose executable is missing is
        # skipped with a warning, and an executable that is not listed is not run.
        steps = [f"{n:02d}_step" for n in range(1, 11)]
        codes = {step: 0 for step in steps if step != "08_step"}
        codes["99_unlisted"] = 0
        bin_dir = make_bin_dir(self.root, codes, listed=steps,
                               tflops={"03_step": 30.0, "10_step": 99.0})
        code, stdout, stderr = run_driver("--bin-dir", bin_dir, "--out", self.out, "--size", 64,
                                          "--sweep-sizes", "128")
        self.assertEqual(code, 0, stderr)
        self.assertEqual(stderr, f"run_worklog: warning: {bin_dir / '08_step'} not found; skipping 08_step\n")
        self.assertEqual([call.split()[0] for call in self.calls()],
                         [s for s in steps if s != "08_step"] + ["03_step", "10_step"])
        self.assertIn("[9/9] 10_step 64x64x64\n", stdout)
        table = (self.out / "table.md").read_text()
        self.assertEqual([s for s in steps if f"| {s} |" in table], [s for s in steps if s != "08_step"])

    def test_steps_alone_runs_only_those_in_build_order(self):
        # --steps without --shapes: the worklog of the steps named (by number or name, in any order,
        # each once), in the build's order; the sweep takes the fastest of them per precision.
        bin_dir = make_bin_dir(self.root, {step: 0 for step in SIX_STEPS})
        code, stdout, stderr = run_driver("--bin-dir", bin_dir, "--out", self.out, "--size", 64,
                                          "--sweep-sizes", "128", "--steps", "05_wmma,02,05", "--no-peers")
        self.assertEqual((code, stderr), (0, ""), stdout)
        self.assertEqual([call.split()[0] for call in self.calls()],
                         ["02_block_tiling", "05_wmma", "02_block_tiling", "05_wmma"])
        self.assertIn("[2/2] 05_wmma 64x64x64\n", stdout)
        self.assertIn("size sweep of the fastest step of each precision: 02_block_tiling, 05_wmma\n", stdout)
        table = (self.out / "table.md").read_text()
        self.assertEqual([s for s in SIX_STEPS if f"| {s} |" in table], ["02_block_tiling", "05_wmma"])

    def test_steps_alone_that_name_no_step_exit_2(self):
        bin_dir = make_bin_dir(self.root, {step: 0 for step in SIX_STEPS})
        for token, says in (("07", "'07' names no step(s)"), ("0", "'0' names no step(s)")):
            with self.subTest(token=token):
                code, stdout, stderr = run_driver("--bin-dir", bin_dir, "--out", self.out, "--steps", f"01,{token}")
                self.assertEqual((code, stdout), (2, ""))
                self.assertEqual(stderr, f"run_worklog: error: --steps: {says} among {', '.join(SIX_STEPS)}\n")
        self.assertFalse((self.root / "calls.log").exists())  # nothing ran
        self.assertFalse(self.out.exists())

    def test_sweep_takes_the_fastest_measured_step_of_each_precision(self):
        # 03 beats 04, and 06 fails its check: the sweep runs 03 and 05.
        codes = {step: 0 for step in SIX_STEPS}
        codes["06_multiwarp_wmma"] = 1
        bin_dir = make_bin_dir(self.root, codes, tflops={"03_thread_coarsening": 50.0})
        code, stdout, _ = run_driver("--bin-dir", bin_dir, "--out", self.out, "--size", 64,
                                     "--sweep-sizes", "128")
        self.assertEqual(code, 1)  # 06 failed verification
        self.assertIn("size sweep of the fastest step of each precision: "
                      "03_thread_coarsening, 05_wmma\n", stdout)
        self.assertEqual([call.split()[0] for call in self.calls()[6:]], ["03_thread_coarsening", "05_wmma"])

    def test_steps_the_gpu_cannot_run_are_skipped(self):
        codes = {step: 0 for step in SIX_STEPS}
        codes.update({"09_hopper_only": 4, "10_hopper_only": 4})
        bin_dir = make_bin_dir(self.root, codes, tflops={"09_hopper_only": 500.0})
        code, stdout, stderr = run_driver("--bin-dir", bin_dir, "--out", self.out, "--size", 64,
                                          "--sweep-sizes", "128")
        self.assertEqual(code, 0, stderr)
        self.assertEqual(stderr.splitlines(), [
            f"run_worklog: skipping {s}: {s} needs compute capability 9.0 exactly; "
            "NVIDIA A100-SXM4-80GB is 8.0"
            for s in ("09_hopper_only", "10_hopper_only")])
        self.assertIn("[8/8] 10_hopper_only 64x64x64\n", stdout)
        self.assertIn("04_outer_product, 06_multiwarp_wmma\n", stdout)  # the sweep as without them
        self.assertNotIn("hopper", (self.out / "table.md").read_text())

    def test_no_step_supports_the_gpu_exits_4(self):
        bin_dir = make_bin_dir(self.root, {"09_hopper_only": 4, "10_hopper_only": 4})
        code, _, stderr = run_driver("--bin-dir", bin_dir, "--out", self.out)
        self.assertEqual(code, 4)
        self.assertEqual(stderr.splitlines()[-1], "run_worklog: no step supports this GPU")

    def test_failed_verification_keeps_going_and_exits_1(self):
        codes = {step: 0 for step in SIX_STEPS if step != "05_wmma"}
        codes["03_thread_coarsening"] = 1
        bin_dir = make_bin_dir(self.root, codes, listed=list(SIX_STEPS))
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
        self.assertEqual(stderr.splitlines(),  # one line, with the step's reason
                         ["run_worklog: no CUDA device; the worklog needs an NVIDIA GPU "
                          "(02_block_tiling: fake failure)"])
        self.assertEqual(len(self.calls()), 2)  # 03 never ran
        self.assertFalse((self.out / "table.md").exists())

    def test_no_cuda_device_at_the_first_step_leaves_the_results_as_they_were(self):
        self.out.mkdir()
        (self.out / "worklog.csv").write_text("the rows of an earlier run\n")
        bin_dir = make_bin_dir(self.root, {"01_naive": 77, "02_block_tiling": 0})
        code, _, stderr = run_driver("--bin-dir", bin_dir, "--out", self.out)
        self.assertEqual(code, 77, stderr)
        self.assertEqual(sorted(p.name for p in self.out.iterdir()), ["worklog.csv"])
        self.assertEqual((self.out / "worklog.csv").read_text(), "the rows of an earlier run\n")
        fresh = self.root / "fresh"
        code, _, _ = run_driver("--bin-dir", bin_dir, "--out", fresh)
        self.assertEqual(code, 77)
        self.assertFalse(fresh.exists())  # no empty folder, no empty CSV

    def test_other_exit_code_stops_with_1(self):
        bin_dir = make_bin_dir(self.root, {"01_naive": 3, "02_block_tiling": 0})
        code, _, stderr = run_driver("--bin-dir", bin_dir, "--out", self.out, "--no-sweep")
        self.assertEqual(code, 1)
        self.assertIn("01_naive exited with code 3 (matrices do not fit in device memory); stopping", stderr)
        self.assertEqual(len(self.calls()), 1)

    def test_no_list_of_steps_exits_2(self):
        bin_dir = make_bin_dir(self.root, {"01_naive": 0})
        (bin_dir / run_worklog.STEP_LIST).unlink()
        code, stdout, stderr = run_driver("--bin-dir", bin_dir, "--out", self.out)
        self.assertEqual((code, stdout), (2, ""))
        self.assertEqual(len(stderr.splitlines()), 1, stderr)
        self.assertRegex(stderr, r"^run_worklog: error: cannot read the list of steps .*worklog_steps.txt "
                                 r"\(No such file or directory\): --bin-dir must be the build's bin folder")

    def test_empty_list_of_steps_exits_2(self):
        bin_dir = make_bin_dir(self.root, {"01_naive": 0}, listed=[])
        code, _, stderr = run_driver("--bin-dir", bin_dir, "--out", self.out)
        self.assertEqual(code, 2)
        self.assertEqual(stderr, f"run_worklog: error: {bin_dir / run_worklog.STEP_LIST} lists no steps\n")

    def test_no_executables_exits_2(self):
        bin_dir = make_bin_dir(self.root, {}, listed=["01_naive"])
        code, _, stderr = run_driver("--bin-dir", bin_dir, "--out", self.out)
        self.assertEqual(code, 2)
        self.assertIn(f"run_worklog: error: no step executables in {bin_dir}", stderr)


class WithoutMatplotlibTest(unittest.TestCase):
    """The driver run by a Python without matplotlib, on a machine without a package index: it
    tries to install matplotlib into --venv, fails, and still writes the CSVs and the table."""

    def test_table_and_one_line_on_how_to_get_the_charts(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            python = python_without_matplotlib.make(root / "bare")
            (root / "no-wheels").mkdir()
            bin_dir = make_bin_dir(root, {step: 0 for step in SIX_STEPS})
            out, venv = root / "out", root / "build" / "plots-venv"
            code, stdout, stderr = run_driver(
                "--bin-dir", bin_dir, "--out", out, "--size", 64, "--sweep-sizes", "128,129", "--venv", venv,
                python=python, env=python_without_matplotlib.offline_pip_environment(root / "no-wheels"))
            self.assertEqual(code, 0, stdout + stderr)
            self.assertRegex(stdout, rf"run_worklog: matplotlib is not installed for {python}: installing "
                                     rf".*requirements.txt into {venv} \(pip's output: {venv}.log\)\n")
            self.assertEqual(len(stderr.splitlines()), 1, stderr)
            self.assertRegex(stderr, r"^run_worklog: charts not drawn, for want of matplotlib: "
                                     rf"pip install failed: .*matplotlib.* \(log: {venv}.log\). "
                                     rf"The CSVs and table.md are in {out}. "
                                     rf"For the charts, install matplotlib "
                                     rf"\({python} -m pip install -r .*requirements.txt\) and run {python} "
                                     rf".*make_plots.py --csv {out}/worklog.csv --out {out} "
                                     rf"--sweep {out}/sweep.csv --peers {out}/peers.csv\n$")
            # peers.csv: the peers, not available in this Python (no PyTorch), are rows saying so.
            self.assertEqual(sorted(p.name for p in out.iterdir()),
                             ["peers.csv", "sweep.csv", "table.md", "worklog.csv"])
            self.assertIn("| 06_multiwarp_wmma |", (out / "table.md").read_text())
            self.assertIn("matplotlib", (root / "build" / "plots-venv.log").read_text())


def write_fake_matplotlib_wheel(folder):
    """A wheel named matplotlib 99.0 holding one empty module: enough for pip to install offline
    and for `import matplotlib` to succeed."""
    files = {"matplotlib/__init__.py": "",
             "matplotlib-99.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: matplotlib\nVersion: 99.0\n",
             "matplotlib-99.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: plots-tests\n"
                                                 "Root-Is-Purelib: true\nTag: py3-none-any\n"}
    record = "matplotlib-99.0.dist-info/RECORD"
    files[record] = "".join(f"{name},,\n" for name in [*files, record])  # no hashes: pip accepts that
    with zipfile.ZipFile(folder / "matplotlib-99.0-py3-none-any.whl", "w") as wheel:
        for name, text in files.items():
            wheel.writestr(name, text)


class PlotsEnvTest(unittest.TestCase):
    """plots_env: the virtual environment is made once, filled from the requirements, and reused."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        root = Path(cls.tmp.name)
        cls.bare_python = python_without_matplotlib.make(root / "bare")
        (root / "wheels").mkdir()
        write_fake_matplotlib_wheel(root / "wheels")
        cls.offline = python_without_matplotlib.offline_pip_environment(root / "wheels")
        cls.venv = root / "build" / "plots-venv"
        cls.said = []
        with mock.patch.dict(os.environ, cls.offline, clear=True):
            cls.python = plots_env.python_with_matplotlib(cls.venv, python=cls.bare_python,
                                                          say=cls.said.append)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_this_python_is_used_when_it_has_matplotlib(self):
        if not plots_env.imports_matplotlib(sys.executable):
            self.skipTest("this Python has no matplotlib")
        self.assertEqual(plots_env.python_with_matplotlib(self.venv / "unused"), Path(sys.executable))
        self.assertFalse((self.venv / "unused").exists())

    def test_made_in_the_build_tree_and_filled_from_the_requirements(self):
        self.assertEqual(self.python, plots_env.venv_python(self.venv))
        self.assertEqual(len(self.said), 1)
        self.assertIn(f"installing {plots_env.REQUIREMENTS} into {self.venv}", self.said[0])
        self.assertIn("Successfully installed matplotlib-99.0",
                      (self.venv.parent / "plots-venv.log").read_text())

    def test_reused_without_installing_again(self):
        said = []
        again = plots_env.python_with_matplotlib(self.venv, python=self.bare_python, say=said.append)
        self.assertEqual(again, self.python)
        self.assertEqual(said, [])

    def test_command_line_runs_the_command_with_that_python(self):
        done = subprocess.run([str(self.bare_python), str(PLOTS / "run" / "plots_env.py"), "--venv", str(self.venv),
                               "--", "-c", "import sys; print(sys.executable)"],
                              capture_output=True, text=True, timeout=60)
        self.assertEqual((done.returncode, done.stderr), (0, ""))
        self.assertEqual(done.stdout, f"{self.python}\n")

    def test_command_line_exits_77_without_a_way_to_get_matplotlib(self):
        empty = Path(self.tmp.name) / "no-wheels"
        empty.mkdir(exist_ok=True)
        done = subprocess.run([str(self.bare_python), str(PLOTS / "run" / "plots_env.py"), "--venv",
                               str(Path(self.tmp.name) / "offline-build" / "plots-venv"),
                               "--", "-c", "print('not run')"], capture_output=True, text=True, timeout=120,
                              env=python_without_matplotlib.offline_pip_environment(empty))
        self.assertEqual(done.returncode, 77, done.stdout + done.stderr)
        self.assertNotIn("not run", done.stdout)
        self.assertRegex(done.stdout.splitlines()[-1],
                         r"^plots_env: no Python with matplotlib, so nothing run: ")


if __name__ == "__main__":
    unittest.main()
