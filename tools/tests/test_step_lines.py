"""tools/step_lines.py on small trees made here: the counts, and each rule of --check failing where it
should (python3 -m unittest discover -s tools/tests)."""
import pathlib
import subprocess
import sys
import tempfile
import unittest

TOOL = pathlib.Path(__file__).resolve().parent.parent / "step_lines.py"


def run(root, *args):
    return subprocess.run([sys.executable, str(TOOL), "--root", str(root), *args], capture_output=True, text=True,
                          timeout=60)


class StepLinesTest(unittest.TestCase):
    def tree(self, files):
        folder = tempfile.TemporaryDirectory()
        self.addCleanup(folder.cleanup)
        root = pathlib.Path(folder.name)
        (root / "common").mkdir()
        for path, text in files.items():
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_text(text, encoding="utf-8")
        return root

    def test_counts_code_lines_and_what_a_step_adds(self):
        root = self.tree({
            "01_a/kernel.cu": "// a comment\nint a = 1;\n\nint b = 2;  // trailing\n",
            "02_b/kernel.cu": "int a = 1;\nint b = 3;\nint c = 4;\n",
            "common/idea.cuh": "// The thing (step 02's idea): one line of code.\nint d = 5;\n",
            "common/route.cuh": "// A route of the Hopper library: not counted.\nint e = 6;\n",
        })
        result = run(root)
        self.assertEqual(result.returncode, 0, result.stderr)
        rows = {line.split()[0]: line.split()[1:4] for line in result.stdout.splitlines()[1:]}
        self.assertEqual(rows["01_a"], ["2", "0", "2"])
        # 02: 3 lines in its folder, 1 of its idea in the library; against 01's two lines, 3 new or changed.
        self.assertEqual(rows["02_b"], ["3", "1", "3"])

    def test_check_fails_on_each_limit_and_its_allowance_must_still_be_needed(self):
        root = self.tree({
            "01_a/kernel.cu": "int a;\n" * 5,
            "02_b/kernel.cu": '#include "01_a/kernel.cu"\n',
            "02_b/README.md": "line\n" * 30,
            "common/tests/x.cu": '#include "../../02_b/kernel.cu"\n',
        })
        result = run(root, "--check", "--max-added", "3", "--max-file", "20")
        self.assertEqual(result.returncode, 1)
        for message in ("01_a adds 5 code lines (at most 3)", "02_b/README.md has 30 lines (at most 20)",
                        "02_b/kernel.cu:1 includes 01_a/kernel.cu", "common/tests/x.cu:1 includes ../../02_b/kernel.cu"):
            self.assertIn(message, result.stderr)
        allowed = run(root, "--check", "--max-added", "3", "--max-file", "40", "--allow-adds", "01_a",
                      "--allow-include", "02_b/kernel.cu", "--allow-include", "common/tests/x.cu")
        self.assertEqual(allowed.returncode, 0, allowed.stderr)
        stale = run(root, "--check", "--max-file", "40", "--allow-adds", "01_a", "--allow-include", "02_b/kernel.cu",
                    "--allow-include", "common/tests/x.cu", "--allow-include", "01_a/kernel.cu")
        self.assertEqual(stale.returncode, 1)
        self.assertIn("01_a adds 5 code lines now: take it off --allow-adds", stale.stderr)
        self.assertIn("01_a/kernel.cu includes no step's file now", stale.stderr)

    def test_a_step_may_include_its_own_header(self):
        root = self.tree({"01_a/kernel.cu": '#include "01_a/own.hpp"\nint a;\n', "01_a/own.hpp": "int b;\n"})
        self.assertEqual(run(root, "--check").returncode, 0)


if __name__ == "__main__":
    unittest.main()
