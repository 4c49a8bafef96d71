"""tools/fingerprints.py's codes and --stamp on small files made here: a step's code moves with any
of its kernels' fingerprints, and stamping fills only the rows of steps that have no code yet
(python3 -m unittest discover -s tools/tests). No build, no disassembler."""
import csv
import pathlib
import sys
import tempfile
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
import fingerprints  # noqa: E402

ROWS = [{"step": "01_a", "source": "01_a/kernel.cu", "kernel": "k1", "sass_sha256": "aaaa", "instructions": "3"},
        {"step": "01_a", "source": "01_a/kernel.cu", "kernel": "k2", "sass_sha256": "bbbb", "instructions": "3"},
        {"step": "02_b", "source": "02_b/kernel.cu", "kernel": "k1", "sass_sha256": "aaaa", "instructions": "3"},
        {"step": "harness", "source": "common/gemm_data.cu", "kernel": "fill", "sass_sha256": "cccc",
         "instructions": "9"}]


class CodesTest(unittest.TestCase):
    def test_a_code_per_step_that_moves_with_any_kernel_and_not_with_the_order_or_the_harness(self):
        codes = fingerprints.step_codes(ROWS)
        self.assertEqual(set(codes), {"01_a", "02_b"})
        self.assertNotEqual(codes["01_a"], codes["02_b"])
        self.assertEqual(fingerprints.step_codes(list(reversed(ROWS))), codes)
        changed = [dict(r, sass_sha256="dddd") if r["kernel"] == "k2" else r for r in ROWS]
        self.assertNotEqual(fingerprints.step_codes(changed)["01_a"], codes["01_a"])
        self.assertEqual(fingerprints.step_codes(changed)["02_b"], codes["02_b"])
        harness = [dict(r, sass_sha256="eeee") if r["step"] == "harness" else r for r in ROWS]
        self.assertEqual(fingerprints.step_codes(harness), codes)


class StampTest(unittest.TestCase):
    def csv_file(self, text):
        folder = tempfile.TemporaryDirectory()
        self.addCleanup(folder.cleanup)
        path = pathlib.Path(folder.name) / "x.csv"
        path.write_text(text, encoding="utf-8")
        return path

    def rows(self, path):
        with open(path, newline="", encoding="utf-8") as f:
            return list(csv.DictReader(f))

    def test_adds_the_column_and_fills_the_rows_of_built_steps_only(self):
        path = self.csv_file("timestamp,step,ms\nt1,01_a,1\nt2,01_a/variant,2\nt3,cuBLAS,3\nt4,09_gone,4\n")
        self.assertEqual(fingerprints.stamp(path, {"01_a": "c1"}), 2)
        self.assertEqual([r["code"] for r in self.rows(path)], ["c1", "c1", "", ""])
        self.assertEqual([r["ms"] for r in self.rows(path)], ["1", "2", "3", "4"])

    def test_keeps_the_code_a_row_has_and_reads_the_engine_column(self):
        path = self.csv_file("engine,kind,code\n01_a,step,unknown\n01_a,step,\ntorch.matmul,peer,\n")
        self.assertEqual(fingerprints.stamp(path, {"01_a": "c1"}), 1)
        self.assertEqual([r["code"] for r in self.rows(path)], ["unknown", "c1", ""])

    def test_a_file_that_names_no_step_is_refused(self):
        path = self.csv_file("m,n,k\n1,2,3\n")
        with self.assertRaises(fingerprints.Unavailable):
            fingerprints.stamp(path, {"01_a": "c1"})


if __name__ == "__main__":
    unittest.main()
