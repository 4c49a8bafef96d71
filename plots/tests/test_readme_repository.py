"""Tests of the filler on this repository: its READMEs match the committed plots/results, and run_worklog.py --publish rewrites a checkout's READMEs.

Run from anywhere:  python3 -m unittest discover -s plots/tests -v
"""
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from support import PLOTS, ROOT  # noqa: E402  (first: it sets the import path)
import python_without_matplotlib  # noqa: E402
from readme import filler  # noqa: E402
from readme import table  # noqa: E402
from run import registrations  # noqa: E402
from test_registrations import built_steps_folder  # noqa: E402
from readme.filler import Results  # noqa: E402

from test_readme_filler import block, cell  # noqa: E402


class RunWorklogPublishTest(unittest.TestCase):
    """run_worklog.py --publish into a checkout's plots/results rewrites that checkout's READMEs."""

    def test_publish_rewrites_the_readmes(self):
        from test_run_worklog import make_bin_dir
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            bin_dir = make_bin_dir(root, {"01_naive": 0, "02_block_tiling": 0})
            checkout = root / "checkout"
            (checkout / "plots" / "results").mkdir(parents=True)
            readme = checkout / "README.md"
            readme.write_text("Speed " + cell("worklog.csv step=02_block_tiling column=tflops format=tflops")
                              + " TFLOP/s.\n\n" + block("measured/02_block_tiling"), encoding="utf-8")
            (root / "wheels").mkdir()  # no package index: without matplotlib, the table alone, at once
            done = subprocess.run([sys.executable, str(PLOTS / "run" / "run_worklog.py"), "--bin-dir", str(bin_dir),
                                   "--out", str(root / "out"), "--no-sweep", "--size", "64",
                                   "--publish", str(checkout / "plots" / "results")],
                                  capture_output=True, text=True, timeout=120,
                                  env=python_without_matplotlib.offline_pip_environment(root / "wheels"))
            self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
            self.assertIn("run_worklog: 1 README(s) rewritten from", done.stdout)
            text = readme.read_text(encoding="utf-8")
            self.assertIn("Speed " + cell("worklog.csv step=02_block_tiling column=tflops format=tflops", "8.00"), text)
            self.assertIn("| 64×64×64 | FP32 | 1.00 | 8.00 | 4.00 | 50.0% | 1.00× | PASS |", text)


@unittest.skipUnless(built_steps_folder(), f"no built steps: set {registrations.BIN_DIR_VARIABLE} or build into build/")
class RepositoryTest(unittest.TestCase):
    """The committed READMEs against the committed results and the built steps' registrations: every
    generated block and quoted cell must read what plots/results gives. When this fails, run
    python3 plots/readme/filler.py --write  (or find why the CSVs changed)."""

    def test_every_readme_matches_the_committed_results(self):
        files = filler.readmes(ROOT)
        self.assertIn(ROOT / "README.md", files)
        differences, texts = filler.check_all(files, Results(filler.RESULTS))
        self.assertEqual(differences, [], "\n" + "\n".join(filler.describe(d, ROOT) for d in differences)
                         + "\nrewrite them with: python3 plots/readme/filler.py --write")
        found = {path: filler.find(text, str(path)) for path, text in texts.items()}
        # The READMEs do quote the results: the results table, and each step's own measurements.
        names = {f.name for fs in found.values() for f in fs if f.kind == "block"}
        self.assertIn("results_table", names)
        for step in ("01_naive", "02_block_tiling", "03_thread_coarsening", "04_outer_product", "05_wmma",
                     "06_multiwarp_wmma", "07_async_pipeline", "08_mma_ldmatrix", "09_wgmma_tma",
                     "10_persistent_clusters"):
            self.assertIn(f"measured/{step}", names)
            self.assertTrue(any(f.name == f"measured/{step}" for f in found[ROOT / step / "README.md"]))

    def test_table_md_is_what_the_committed_csvs_give(self):
        body = filler.render_block("results_table", Results(filler.RESULTS)).split("\n\n", 1)[1]
        # The README's block adds, under the table, the line that names the steps measured on earlier
        # code (readme/codes.py); table.md, the report's file, is the table alone.
        body = body.split("\n\n<sup>[‡ ", 1)[0].rstrip() + "\n\n"
        table = (filler.RESULTS / "table.md").read_text(encoding="utf-8")
        self.assertEqual(body, table.rstrip() + "\n\n",
                         "plots/results/table.md is not what worklog.csv, profile.csv and peers.csv give: rerun "
                         "make_plots (python3 plots/report/make_plots.py --csv plots/results/worklog.csv --profile "
                         "plots/results/profile.csv --peers plots/results/peers.csv --out plots/results --table-only)")

    def test_experiments_csv_reads(self):
        rows = Results(filler.RESULTS).rows("experiments.csv")
        self.assertTrue(rows)
        for row in rows:
            self.assertTrue(row["source"], row)
            self.assertIn(row["run"], ("", "1", "2", "3", "min", "max"), row)


if __name__ == "__main__":
    unittest.main()
