"""tools/renumber_steps.py on a small git tree made here: the moved steps' folders and pages, their
names, possessives and "step N" rewritten, the kept steps untouched, the rest listed for a reader
(python3 -m unittest discover -s tools/tests)."""
import pathlib
import subprocess
import sys
import tempfile
import unittest

TOOL = pathlib.Path(__file__).resolve().parent.parent / "renumber_steps.py"


def run(root, *args):
    return subprocess.run([sys.executable, str(TOOL), "--root", str(root), *args], capture_output=True, text=True,
                          timeout=60)


class RenumberTest(unittest.TestCase):
    def tree(self, files):
        folder = tempfile.TemporaryDirectory()
        self.addCleanup(folder.cleanup)
        root = pathlib.Path(folder.name)
        for path, text in files.items():
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_text(text, encoding="utf-8")
        for command in (["init", "-q"], ["add", "-A"]):
            subprocess.run(["git", *command], cwd=root, check=True, timeout=60, capture_output=True)
        return root

    FILES = {
        "01_first/kernel.cu": "// Step 01.\n",
        "02_second/kernel.cu": "// Adds to 01: tiles. 02's idea; see 03_third_tool and 03_third/x.\n",
        "03_third/README.md": "# 03_third\nSteps 02 and 03: 03's menu, step 3, in 12 × 3 tiles; 03 runs fast.\n",
        "lab/tasks/03_third.md": "03_third's tasks\n",
        "plots/results/a.csv": "step,ms\n03_third/variant,3\n02_second,2\n",
        "common/prices_03.csv": "x\n",
    }

    def test_without_write_nothing_changes(self):
        root = self.tree(self.FILES)
        done = run(root, "--from", "2")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("step: 02_second -> 03_second", done.stdout)
        self.assertIn("nothing written", done.stdout)
        self.assertTrue((root / "02_second" / "kernel.cu").is_file())

    def test_write_moves_and_rewrites_what_it_can_and_lists_the_rest(self):
        root = self.tree(self.FILES)
        done = run(root, "--from", "2", "--write")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual((root / "01_first" / "kernel.cu").read_text(), "// Step 01.\n")
        self.assertEqual((root / "03_second" / "kernel.cu").read_text(),
                         "// Adds to 01: tiles. 03's idea; see 04_third_tool and 04_third/x.\n")
        self.assertEqual((root / "04_third" / "README.md").read_text(),
                         "# 04_third\nSteps 03 and 03: 04's menu, step 4, in 12 × 3 tiles; 03 runs fast.\n")
        self.assertTrue((root / "lab" / "tasks" / "04_third.md").is_file())
        self.assertEqual((root / "plots" / "results" / "a.csv").read_text(), "step,ms\n04_third/variant,3\n03_second,2\n")
        self.assertIn("review: 03_third/README.md:2:", done.stdout)  # "and 03" and "03 runs": the reader's
        self.assertIn("review: common/prices_03.csv: a path with a moved number", done.stdout)
        self.assertFalse((root / "02_second").exists())

    def test_ranges_sentence_ends_and_cuda_versions(self):
        root = self.tree({"01_a/kernel.cu": "", "02_b/kernel.cu": "", "03_c/kernel.cu": "",
                          "docs/a.md": "CUDA 03's oldest target.\nWhat changes from 02.\nTMA (01–03) and 01 to 03.\n"
                                       "Tiles of 8-16 rows.\n"})
        done = run(root, "--from", "2", "--write")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertTrue((root / "docs" / "a.md").read_text().startswith("CUDA 03's oldest"))  # not a step's
        for line in (2, 3):  # a sentence's last word; two ranges that hold moved steps
            self.assertIn(f"review: docs/a.md:{line}:", done.stdout)
        self.assertNotIn("review: docs/a.md:4:", done.stdout)  # 8-16: no step range (one digit)

    def test_a_clash_with_a_kept_step_is_refused(self):
        root = self.tree({"01_a/kernel.cu": "", "02_b/kernel.cu": "", "03_b/kernel.cu": ""})
        done = run(root, "--from", "2", "--shift", "1")
        self.assertEqual(done.returncode, 0, done.stderr)  # 02_b -> 03_b and 03_b -> 04_b: both move
        root = self.tree({"01_b/kernel.cu": "", "02_c/kernel.cu": ""})
        self.assertEqual(run(root, "--from", "2", "--shift", "0").returncode, 2)


if __name__ == "__main__":
    unittest.main()
