"""The filler's marks of figures measured on earlier code (plots/readme/codes.py): on a checkout made
here, with its own tools/fingerprints.csv, a cell or a table row quoted from a row of another code
(or "unknown") is marked with its date, one of today's code is not, and rows of cuBLAS never are.

Run from anywhere:  python3 -m unittest discover -s plots/tests -v
"""
import shutil
import sys
import tempfile
import unittest
from pathlib import Path

from support import ROOT  # noqa: E402  (first: it sets the import path)
from readme import codes, filler  # noqa: E402
from readme.filler import Results  # noqa: E402

sys.path.insert(0, str(ROOT / "tools"))
import fingerprints  # noqa: E402

KERNELS = """step,source,kernel,sass_sha256,instructions
01_naive,01_naive/kernel.cu,naive,aaaa,3
02_block_tiling,02_block_tiling/kernel.cu,tiled,bbbb,3
"""
HEADER = ("timestamp,gpu,sm_count,compute_capability,cuda_runtime,cuda_driver,step,adds,precision,m,n,k,alpha,beta,"
          "ms,tflops,cublas_ms,cublas_tflops,pct_cublas,max_abs_err,err_over_tol,global_bytes,status,code\n")


def row(date, step, ms, code):
    return (f"{date}T00:00:00Z,NVIDIA H200,132,9.0,13.0,13.0,{step},x,fp32,64,64,64,1,0,{ms},1,1,1,50,0,0,1,"
            f"PASS,{code}\n")


class MarksTest(unittest.TestCase):
    def setUp(self):
        folder = tempfile.TemporaryDirectory()
        self.addCleanup(folder.cleanup)
        self.root = Path(folder.name)
        (self.root / "tools").mkdir()
        shutil.copy(ROOT / "tools" / "fingerprints.py", self.root / "tools")
        (self.root / "tools" / "fingerprints.csv").write_text(KERNELS, encoding="utf-8")
        self.codes = fingerprints.step_codes(fingerprints.read(self.root / "tools" / "fingerprints.csv")[1])
        results = self.root / "plots" / "results"
        results.mkdir(parents=True)
        (results / "worklog.csv").write_text(
            HEADER + row("2026-11-20", "01_naive", 2, self.codes["01_naive"]) + row("2026-11-21", "02_block_tiling", 1,
                                                                                   "unknown"), encoding="utf-8")
        (self.root / "step").mkdir()
        self.readme = self.root / "step" / "README.md"
        self.results = Results(results, self.root)

    def cell(self, spec):
        return filler.render_cell(spec, self.results, self.readme)

    def test_today_s_code_is_not_marked_and_earlier_code_is_with_its_date(self):
        self.assertEqual(self.cell("worklog.csv step=01_naive column=ms format=g"), "2")
        self.assertEqual(self.cell("worklog.csv step=02_block_tiling column=ms format=g"),
                         "1<sup>[‡ 2026-11-21](../docs/figures.md#measured-on-earlier-code)</sup>")

    def test_a_ratio_or_an_aggregate_is_marked_when_any_of_its_rows_is(self):
        self.assertIn("‡ 2026-11-21", self.cell("worklog.csv step=01_naive column=ms over.step=02_block_tiling"))
        self.assertIn("‡ 2026-11-21", self.cell("worklog.csv column=ms agg=max"))

    def test_a_table_row_is_marked_after_its_first_cell(self):
        text = filler.render_block("measured/02_block_tiling", self.results, "", self.readme)
        self.assertIn("<sup>[‡ 2026-11-21](../docs/figures.md#measured-on-earlier-code)</sup> |", text)
        self.assertNotIn("‡", filler.render_block("measured/01_naive", self.results, "", self.readme))

    def test_the_compare_table_pivots_a_column_group_per_step_and_marks_a_shape_of_earlier_code(self):
        options = "csv=worklog.csv steps=01_naive,02_block_tiling shapes=64x64x64"
        text = filler.render_block("compare", self.results, options, self.readme)
        self.assertIn("| shape | 01: µs | 01: % of cuBLAS | 02: µs | 02: % of cuBLAS |", text)
        self.assertIn("| 64 × 64 × 64<sup>[‡ 2026-11-21](../docs/figures.md#measured-on-earlier-code)</sup> | "
                      "2000.0 | 50% | 1000.0 | 50% |", text)  # ms in µs
        self.assertTrue(text.startswith("<!-- written by plots/readme/filler.py from plots/results/worklog.csv;"))
        with self.assertRaises(filler.BlockError):
            filler.rewritten(f"<!-- BEGIN generated: compare {options.replace('64x64x64', '65x64x64')} -->\n"
                             "<!-- END generated: compare -->\n", self.results, str(self.readme))

    def test_rows_of_no_step_of_ours_and_pinned_commits(self):
        self.assertIsNone(codes.earlier({"step": "cuBLAS", "timestamp": "2026-11-20"}, self.codes))
        self.assertIsNone(codes.earlier({"engine": "torch.matmul", "code": ""}, self.codes))
        pinned = {"step": "01_naive@f37ae76/narrow", "timestamp": "2026-11-19T01:00:00Z", "code": self.codes["01_naive"]}
        self.assertEqual(codes.earlier(pinned, self.codes), "2026-11-19")
        self.assertEqual(codes.earlier({"step": "01_naive/variant", "code": self.codes["01_naive"]}, self.codes), None)
        self.assertEqual(codes.earlier({"step": "01_naive", "code": ""}, self.codes), "undated")

    def test_a_folder_that_is_no_checkout_s_results_marks_nothing(self):
        elsewhere = self.root / "elsewhere"
        shutil.copytree(self.root / "plots" / "results", elsewhere)
        self.assertEqual(filler.render_cell("worklog.csv step=02_block_tiling column=ms format=g",
                                            Results(elsewhere, self.root), self.readme), "1")


if __name__ == "__main__":
    unittest.main()
