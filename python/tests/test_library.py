"""python.library: libworklog_steps.so through ctypes alone, no PyTorch, no GPU needed.

It loads; it lists the build's steps (build/bin/worklog_steps.txt) and, for each, what the step's own
executable registers (`--list-variants`); it refuses malformed calls with its status and reason
before it asks for a GPU; and with no CUDA device to be seen (CUDA_VISIBLE_DEVICES empty, so this
runs on a GPU machine too) it says so in the words, and with the exit code, of the steps, as does
the example. $WORKLOG_LIBRARY and $WORKLOG_BIN_DIR name the build's library and bin/ (CTest sets both).
"""
import json
import os
import subprocess
import sys
import unittest
from pathlib import Path

import worklog_torch
from worklog_torch import _library

BIN_DIR = Path(os.environ.get("WORKLOG_BIN_DIR") or _library.REPOSITORY / "build" / "bin")
EXAMPLE = _library.REPOSITORY / "python" / "examples" / "linear.py"
PACKAGE_ROOT = str(Path(worklog_torch.__file__).resolve().parents[1])
EXIT = _library.exit_codes
# FP32 round to nearest, and the FP16 steps' FP32 accumulation on tensor cores (common/gemm_math.hpp).
UNIT_ROUNDOFF = {"fp32": 2.0 ** -24, "fp16": 4 * 2.0 ** -24}


def hidden_gpus():
    """The environment with every GPU hidden, as a machine without one would be."""
    return dict(os.environ, CUDA_VISIBLE_DEVICES="", PYTHONPATH=PACKAGE_ROOT)


def registration(step):
    """The step's registration, as its executable prints it without a GPU."""
    run = subprocess.run([str(BIN_DIR / step), "--list-variants"], capture_output=True, text=True,
                         env=hidden_gpus(), timeout=60)
    if run.returncode != EXIT.EXIT_OK:
        raise AssertionError(f"{step} --list-variants exited {run.returncode}: {run.stderr.strip()}")
    return json.loads(run.stdout)


class ListingTest(unittest.TestCase):
    def setUp(self):
        self.lib = worklog_torch.library()

    def test_it_loads_without_pytorch(self):
        self.assertNotIn("torch", sys.modules, "importing worklog_torch or loading its library imported torch")
        self.assertEqual(self.lib.path.name, "libworklog_steps.so")

    def test_it_holds_the_steps_of_the_build_in_their_order(self):
        listed = [line.strip() for line in (BIN_DIR / "worklog_steps.txt").read_text().splitlines()
                  if line.strip() and not line.startswith("#")]
        self.assertTrue(listed, "worklog_steps.txt lists no step")
        self.assertEqual(self.lib.steps(), listed)
        self.assertEqual(worklog_torch.steps(), listed)

    def test_each_step_and_variant_is_registered_as_its_executable_says(self):
        for step in self.lib.steps():
            with self.subTest(step=step):
                expected = registration(step)
                self.assertEqual(_library.PRECISION_NAMES[self.lib.precision(step)], expected["precision"])
                self.assertEqual(self.lib.description(step), expected["adds"])
                cc = expected["compute_capability"]
                self.assertEqual(self.lib.compute_capability(step), (cc["min"], cc["max"] or 0))
                self.assertEqual(self.lib.variants(step), [v["name"] for v in expected["variants"]])
                for v in expected["variants"]:
                    name = f"{step}/{v['name']}"
                    self.assertEqual(self.lib.description(name), v["description"])
                    self.assertEqual(_library.PRECISION_NAMES[self.lib.precision(name)], expected["precision"])

    def test_the_error_scale_is_the_bound_of_the_steps_precision(self):
        for step in self.lib.steps():
            u = UNIT_ROUNDOFF[_library.PRECISION_NAMES[self.lib.precision(step)]]
            for k in (1, 64, 4096):
                nu = (k + 2) * u  # gamma_{K+2}: the sum of K products and the epilogue's two operations
                self.assertAlmostEqual(self.lib.error_scale(step, k) / (nu / (1 - nu)), 1.0, places=12)


class RefusalTest(unittest.TestCase):
    """Malformed calls: status 2 (exit_bad_argument) and a reason naming the problem, on any machine."""

    def setUp(self):
        self.lib = worklog_torch.library()
        self.step = self.lib.steps()[0]

    def refused(self, pattern, call, *arguments):
        with self.assertRaisesRegex(worklog_torch.WorklogError, pattern) as caught:
            call(*arguments)
        self.assertEqual(caught.exception.code, EXIT.EXIT_BAD_ARGUMENT, str(caught.exception))
        self.assertNotIn("\n", str(caught.exception))

    def gemm(self, step=None, m=8, n=8, k=8, lda=8, ldb=8, ldc=8, a=16, b=16, c=16):
        # Addresses that are never dereferenced: every call here is refused before the GPU is asked.
        self.lib.gemm(step or self.step, 0, m, n, k, 1.0, a, lda, b, ldb, 0.0, c, ldc, None, 0, None)

    def test_unknown_steps_and_variants(self):
        self.refused(r"^no step called 'no_such_step' in this library", self.lib.precision, "no_such_step")
        self.refused(r"^no step called 'no_such_step'", self.gemm, "no_such_step")
        self.refused(rf"^step {self.step} has no variant 'no_such_variant' \(its variants: ", self.lib.description,
                     f"{self.step}/no_such_variant")
        self.refused(r"names a variant; give the step's name alone", self.lib.variants, f"{self.step}/x")
        self.refused(r"^step index -1 is outside 0 to ", self.lib._call, "worklog_step_name", -1,
                     _library.ctypes.byref(_library.ctypes.c_char_p()))

    def test_sizes_and_leading_dimensions(self):
        self.refused(r"^M = 0 is outside 1 to 2147483647", self.gemm, None, 0)
        self.refused(r"^K = -3 is outside", self.gemm, None, 8, 8, -3)
        self.refused(r"^lda = 7 must be at least K \(8\)", self.gemm, None, 8, 8, 8, 7)
        self.refused(r"^ldb = 4 must be at least N \(8\)", self.gemm, None, 8, 8, 8, 8, 4)
        self.refused(r"^ldc = 2147483648 must be at least N \(8\) and at most 2147483647", self.gemm, None, 8, 8, 8, 8,
                     8, 2 ** 31)
        self.refused(r"^A spans 4294967296 elements, over the 2\^31 - 1", self.gemm, None, 65536, 8, 65536, 65536)
        self.refused(r"^B is a null pointer", self.gemm, None, 8, 8, 8, 8, 8, 8, 16, None)
        self.refused(r"^K = -1 is negative", self.lib.error_scale, self.step, -1)


class NoDeviceTest(unittest.TestCase):
    """With no CUDA device to be seen, the library and the example say what the steps say."""

    def step_reason(self, step):
        run = subprocess.run([str(BIN_DIR / step), "--m", "8", "--n", "8", "--k", "8"], capture_output=True,
                             text=True, env=hidden_gpus(), timeout=60)
        self.assertEqual(run.returncode, EXIT.EXIT_NO_DEVICE, run.stderr)
        prefix = f"{step}: error: "
        self.assertTrue(run.stderr.startswith(prefix), run.stderr)
        return run.stderr[len(prefix):].strip()

    def library_answers(self):
        """Every step's answer to worklog_check_device, worklog_workspace_bytes and worklog_gemm, in a
        process that sees no GPU: {step: [[status, reason] or [0, bytes], ...]}."""
        script = (
            "import json, worklog_torch\n"
            "lib = worklog_torch.library()\n"
            "def ask(call, *args):\n"
            "    try:\n"
            "        return [0, call(*args)]\n"
            "    except worklog_torch.WorklogError as e:\n"
            "        return [e.code, str(e), type(e).__name__]\n"
            "print(json.dumps({s: [ask(lib.check_device, 0),\n"
            "                      ask(lib.workspace_bytes, s, 0, 64, 64, 64, 64, 64, 64),\n"
            "                      ask(lib.gemm, s, 0, 64, 64, 64, 1.0, 16, 64, 16, 64, 0.0, 16, 64,\n"
            "                          16, 1 << 30, None)]\n"
            "                  for s in lib.steps()}))\n")
        run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=hidden_gpus(),
                             timeout=60)
        self.assertEqual(run.returncode, EXIT.EXIT_OK, run.stderr)
        return json.loads(run.stdout)

    def test_the_library_gives_the_steps_reason_and_code(self):
        steps = worklog_torch.steps()
        reason = self.step_reason(steps[0])
        self.assertRegex(reason, r"^(no NVIDIA driver found|the NVIDIA driver is too old|no CUDA device found|"
                                 r"no usable CUDA device)")
        no_device = [EXIT.EXIT_NO_DEVICE, reason, "NoCudaDevice"]
        for step, (check, workspace, launch) in self.library_answers().items():
            with self.subTest(step=step):
                self.assertEqual(check, no_device)
                self.assertEqual(launch, no_device)
                # A step without a workspace answers 0 without asking the device; one with asks it.
                self.assertIn(workspace, ([0, 0], no_device))
        self.assertEqual(self.step_reason(steps[-1]), reason)

    def test_the_example_stops_at_the_steps_message(self):
        reason = self.step_reason(worklog_torch.steps()[0])
        run = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True, text=True, env=hidden_gpus(),
                             timeout=120)
        self.assertEqual(run.returncode, EXIT.EXIT_NO_DEVICE, run.stderr)
        self.assertEqual(run.stderr, f"linear.py: error: {reason}\n")
        self.assertEqual(run.stdout, "")

    def test_the_documented_example_is_the_example(self):
        page = (_library.REPOSITORY / "docs" / "pytorch.md").read_text(encoding="utf-8")
        self.assertIn("```python\n" + EXAMPLE.read_text(encoding="utf-8") + "```\n", page,
                      "docs/pytorch.md's example differs from python/examples/linear.py")


if __name__ == "__main__":
    unittest.main()
