"""Tests of the shapes run (plots/run/run_worklog.py --shapes) with fake step executables and peers: which steps and variants run, what fails, what is published.

Run from anywhere:  python3 -m unittest discover -s plots/tests -v
"""
import os
import tempfile
import unittest
from pathlib import Path

from support import HEADER  # noqa: E402  (first: it sets the import path)
from shapes import shape_results  # noqa: E402
from shapes import shape_tables  # noqa: E402
from run import run_worklog  # noqa: E402
from test_run_worklog import make_bin_dir, make_peer_python, run_driver  # noqa: E402

from test_peers import fake_module_path  # noqa: E402


SMALL_CORPUS = HEADER + """# a corpus for the tests
square,256,256,256,
square,257,257,257,N + 1
skinny,1024,1024,8192,long K
llm,1,4096,4096,7B attn out
llm,16,4096,4096,7B attn out
llm,1,11008,4096,7B MLP up
unaligned,4096,4096,4097,K odd
unaligned,256,256,256,also a square
"""
STEPS = ["01_naive", "04_outer_product", "05_wmma", "08_mma_ldmatrix", "09_wgmma_tma", "10_persistent_clusters"]


class ShapesModeTest(unittest.TestCase):
    """run_worklog.py --shapes with fake step executables and a fake peer Python."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)
        self.out = self.root / "out"
        self.corpus = self.root / "corpus.csv"
        self.corpus.write_text(SMALL_CORPUS)
        self.readme = self.root / "README.md"  # a checkout's README, for --publish ROOT/plots/results
        self.readme.write_text("# R\n<!-- BEGIN generated: shapes -->\nold\n<!-- END generated: shapes -->\nend\n")
        self.peer_python = make_peer_python(self.root)

    def tearDown(self):
        self.tmp.cleanup()

    def calls(self):
        return (self.root / "calls.log").read_text().splitlines()

    def shapes_run(self, codes, *extra):
        bin_dir = make_bin_dir(self.root, codes)
        return run_driver("--bin-dir", bin_dir, "--out", self.out, "--shapes", self.corpus,
                          *extra, peers=self.peer_python)

    def test_default_steps_cublas_peers_and_publish(self):
        code, stdout, stderr = self.shapes_run({s: 0 for s in STEPS}, "--publish", self.root / "plots" / "results")
        self.assertEqual((code, stderr), (0, ""), stdout)
        # Every step once on a tiny shape (its precision), then the last of each precision (10 and 04),
        # every step from 10 on (10 here) and 08.
        self.assertIn("[probe 1/6] 01_naive 64x64x64\n", stdout)
        self.assertNotIn("fake 01_naive 64", stdout)  # the probes' own output is not shown
        self.assertIn("run_worklog: 7 shapes (8 corpus lines, ", stdout)
        self.assertIn("with 10_persistent_clusters, 08_mma_ldmatrix, 04_outer_product, cuBLAS, "
                      "torch.matmul, Triton", stdout)
        self.assertIn("[shapes 1/3] 10_persistent_clusters 7 shapes\n", stdout)
        self.assertIn("[shapes 3/3] 04_outer_product 7 shapes\n", stdout)
        self.assertIn("[peers 1/2] torch.matmul 7 shapes\n", stdout)
        self.assertIn("run_worklog: Triton not available: Triton is not installed for fake (no module named "
                      "'triton')\n", stdout)
        shape_calls = [c for c in self.calls() if "--shapes" in c]
        self.assertEqual([c.split()[0] for c in shape_calls],
                         ["10_persistent_clusters", "08_mma_ldmatrix", "04_outer_product"])
        self.assertIn("--warmup 1 --iters 10 --time-cap 100 --timing cold --dram-fraction --csv", shape_calls[0])
        peer_calls = (self.root / "peers.log").read_text().splitlines()
        self.assertEqual(len(peer_calls), 2)
        self.assertIn("--engine torch --shapes", peer_calls[0])
        self.assertIn("--warmup 1 --iters 10 --time-cap 100", peer_calls[0])
        rows = shape_results.load(self.out / "shapes.csv")
        engines = [e for e, _, _ in shape_results.engines(rows)]
        self.assertEqual(engines, ["10_persistent_clusters", "08_mma_ldmatrix", "04_outer_product", "torch.matmul",
                                   "Triton", "cuBLAS GemmEx FP16→FP32", "cuBLAS SGEMM"])
        self.assertEqual(len(rows), 7 * 8)  # every engine × every corpus line
        self.assertEqual({r["check"] for r in rows if r["engine"] == "Triton"}, {"not available"})
        torch_rows = [r for r in rows if r["engine"] == "torch.matmul"]
        self.assertEqual({r["pct_cublas"] for r in torch_rows}, {4.0})
        markdown = (self.out / "shapes.md").read_text()
        self.assertIn("| squares (2) |", markdown)
        self.assertIn("| LLM layers (3) |", markdown)
        self.assertEqual(sorted(p.name for p in (self.root / "plots" / "results").iterdir()), sorted(
            run_worklog.SHAPES_PUBLISHED))
        self.assertIn(shape_tables.category_table(rows), self.readme.read_text())
        self.assertIn(f"{self.readme}\n", stdout)
        self.assertIn("run_worklog: done in", stdout)

    def test_chosen_steps_by_number_and_no_peers(self):
        code, stdout, stderr = self.shapes_run({s: 0 for s in STEPS}, "--steps", "08,10", "--no-peers")
        self.assertEqual((code, stderr), (0, ""), stdout)
        self.assertNotIn("[probe", stdout)
        self.assertEqual([c.split()[0] for c in self.calls()], ["10_persistent_clusters", "08_mma_ldmatrix"])
        self.assertFalse((self.root / "peers.log").exists())
        rows = shape_results.load(self.out / "shapes.csv")
        self.assertEqual([e for e, _, _ in shape_results.engines(rows)],
                         ["10_persistent_clusters", "08_mma_ldmatrix", "cuBLAS GemmEx FP16→FP32"])
        self.assertIn("not run", {r["check"] for r in rows} | {"not run"})
        self.assertEqual(self.readme.read_text().count("old"), 1)  # no --publish: README untouched

    def test_shapes_listed_inline(self):
        # --shapes 1x4096x4096,257x257x257: those shapes, in that order, each once, in the category
        # "inline" (no corpus gives them one); the step and the peer read them as from a file.
        bin_dir = make_bin_dir(self.root, {s: 0 for s in STEPS})
        code, stdout, stderr = run_driver("--bin-dir", bin_dir, "--out", self.out, "--shapes", "1x4096x4096,257x257x257",
                                          "--steps", "10", peers=self.peer_python)
        self.assertEqual((code, stderr), (0, ""), stdout)
        self.assertIn("run_worklog: 2 shapes (listed inline) with 10_persistent_clusters, cuBLAS, torch.matmul, "
                      "Triton\n", stdout)
        shape_call = [c for c in self.calls() if "--shapes" in c][0]
        self.assertEqual(Path(shape_call.split("--shapes ")[1].split()[0]).name, "shapes.txt")
        rows = shape_results.load(self.out / "shapes.csv")
        step_rows = [r for r in rows if r["engine"] == "10_persistent_clusters"]
        self.assertEqual([(r["category"], r["m"], r["n"], r["k"]) for r in step_rows],
                         [("inline", 1, 4096, 4096), ("inline", 257, 257, 257)])
        self.assertIn("| given on the command line (2) |", (self.out / "shapes.md").read_text())
        self.assertFalse((self.out / "shapes_squares.png").exists())  # no square of the corpus: no chart

    def test_unknown_step_and_bad_corpus_exit_2(self):
        code, _, stderr = self.shapes_run({s: 0 for s in STEPS}, "--steps", "11")
        self.assertEqual(code, 2)
        self.assertIn("run_worklog: error: --steps: '11' names no step(s) among 01_naive", stderr)
        self.corpus.write_text(HEADER + "square,256,256\n")
        code, stdout, stderr = run_driver("--bin-dir", self.root / "bin", "--out", self.out, "--shapes", self.corpus)
        self.assertEqual((code, stdout), (2, ""))
        self.assertEqual(stderr, f"run_worklog: error: bad corpus: {self.corpus}:2: expected 5 fields "
                                 "(category,m,n,k,label; the label may be empty), got 3\n")

    def test_failed_checks_and_hopper_steps_elsewhere(self):
        # On a GPU other than Hopper 09 and 10 refuse (exit 4): the last FP16 step is then 08, and
        # the FP32 one 04; 04 fails a check: the run completes and exits 1.
        codes = {s: 0 for s in STEPS}
        codes.update({"09_wgmma_tma": 4, "10_persistent_clusters": 4, "04_outer_product": 1})
        code, stdout, stderr = self.shapes_run(codes)
        self.assertEqual(code, 1, stdout + stderr)
        self.assertIn("run_worklog: skipping 10_persistent_clusters: 10_persistent_clusters needs compute "
                      "capability 9.0 exactly", stderr)
        self.assertIn("with 08_mma_ldmatrix, 04_outer_product, cuBLAS", stdout)
        self.assertIn("run_worklog: 04_outer_product FAILED verification on some shapes; continuing", stderr)
        self.assertTrue(stderr.rstrip().endswith("run_worklog: FAILED: 04_outer_product (some shapes: shapes.md "
                                                 "lists them)"))
        rows = shape_results.load(self.out / "shapes.csv")
        self.assertEqual({r["check"] for r in rows if r["engine"] == "04_outer_product"}, {"FAIL"})
        self.assertIn("- Failed checks, left out of the means: 04_outer_product 256x256x256",
                      (self.out / "shapes.md").read_text())

    def test_15_runs_its_best_of_menu_too(self):
        # 15 is the last of these steps: the default run takes 15, then its best of menu (one more
        # process, --variant best_of_menu), then 14, 13, 08 and 04; shapes.md gains the model's column.
        steps = ["04_outer_product", "08_mma_ldmatrix", "13_swap_ab", "14_pad_unaligned", "15_tile_per_shape"]
        code, stdout, stderr = self.shapes_run({s: 0 for s in steps}, "--no-peers")
        self.assertEqual((code, stderr), (0, ""), stdout)
        self.assertIn("with 15_tile_per_shape, 15_tile_per_shape/best_of_menu, 14_pad_unaligned, 13_swap_ab, "
                      "08_mma_ldmatrix, 04_outer_product, cuBLAS\n", stdout)
        self.assertIn("[shapes 1/6] 15_tile_per_shape 7 shapes\n", stdout)
        self.assertIn("[shapes 2/6] 15_tile_per_shape/best_of_menu 7 shapes\n", stdout)
        shape_calls = [c for c in self.calls() if "--shapes" in c]
        self.assertEqual([c.split()[0] for c in shape_calls], ["15_tile_per_shape", "15_tile_per_shape",
                                                               "14_pad_unaligned", "13_swap_ab", "08_mma_ldmatrix",
                                                               "04_outer_product"])
        self.assertNotIn("--variant", shape_calls[0])
        self.assertIn("--warmup 1 --iters 10 --time-cap 100 --timing cold --dram-fraction --variant best_of_menu --csv",
                      shape_calls[1])
        rows = shape_results.load(self.out / "shapes.csv")
        self.assertEqual([e for e, _, _ in shape_results.engines(rows)][:2],
                         ["15_tile_per_shape", "15_tile_per_shape/best_of_menu"])
        self.assertEqual({r["check"] for r in rows if r["engine"] == "15_tile_per_shape/best_of_menu"}, {"PASS"})
        markdown = (self.out / "shapes.md").read_text()
        self.assertIn("15_tile_per_shape within 5% of 15_tile_per_shape/best_of_menu |", markdown)
        self.assertIn("| squares (2) | 50.0% · worst 50.0% 256x256x256 | 50.0% · worst 50.0% 256x256x256 |", markdown)
        self.assertIn(" | 2/2 |\n", markdown)  # the fake steps take the same time for either run

    def test_a_gpu_that_cannot_run_15_runs_neither_it_nor_its_best_of_menu(self):
        steps = {"08_mma_ldmatrix": 0, "14_pad_unaligned": 4, "15_tile_per_shape": 4}
        code, stdout, stderr = self.shapes_run(steps, "--no-peers", "--steps", "15,08")
        self.assertEqual(code, 0, stdout + stderr)
        self.assertIn("run_worklog: skipping 15_tile_per_shape: 15_tile_per_shape needs compute capability 9.0", stderr)
        self.assertNotIn("best_of_menu", stderr)
        self.assertEqual([c.split()[0] for c in self.calls()], ["15_tile_per_shape", "08_mma_ldmatrix"])
        self.assertEqual([e for e, _, _ in shape_results.engines(shape_results.load(self.out / "shapes.csv"))],
                         ["08_mma_ldmatrix", "cuBLAS GemmEx FP16→FP32"])

    def test_a_failed_best_of_menu_is_a_failure_of_its_own(self):
        # The best of menu is a run like a step's: its exit code is read the same way.
        bin_dir = make_bin_dir(self.root, {"15_tile_per_shape": 0})
        script = (bin_dir / "15_tile_per_shape").read_text().replace(
            "#!/bin/sh\n", '#!/bin/sh\ncase " $* " in *" --variant "*) echo "15_tile_per_shape/best_of_menu: error: '
                           'fake" >&2; exit 5 ;; esac\n')
        (bin_dir / "15_tile_per_shape").write_text(script)
        code, stdout, stderr = run_driver("--bin-dir", bin_dir, "--out", self.out, "--shapes", self.corpus,
                                          "--no-peers", "--steps", "15")
        self.assertEqual(code, 1, stdout + stderr)
        self.assertIn("run_worklog: 15_tile_per_shape/best_of_menu stopped with exit code 5; its remaining shapes are "
                      "left out; continuing", stderr)
        self.assertIn("\nrun_worklog: FAILED: 15_tile_per_shape/best_of_menu (exit code 5: ", stderr)
        rows = shape_results.load(self.out / "shapes.csv")  # the step's own rows are all there
        self.assertEqual({r["check"] for r in rows if r["engine"] == "15_tile_per_shape"}, {"PASS"})

    def test_cublas_picks_in_the_results_folder_join_shapes_md(self):
        from shapes import cublas_names
        self.out.mkdir()
        gemm = ("nvjet_sm90_hss_128x64_64x8_1x2_h_bz_coopA_NNT", {"grid": 128})
        cublas_names.write_picks(self.out / cublas_names.PICKS, [
            cublas_names.pick_row((256, 256, 256), "fp16", gemm, [], "NVIDIA H100 80GB HBM3", "2026-11-26", "08_mma_ldmatrix")])
        code, stdout, stderr = self.shapes_run({s: 0 for s in STEPS}, "--no-peers", "--steps", "10,08",
                                               "--publish", self.root / "plots" / "results")
        self.assertEqual((code, stderr), (0, ""), stdout)
        markdown = (self.out / "shapes.md").read_text()
        self.assertIn("| 256x256x256 | squares; unaligned: also a square | 50.0% | 50.0% | 0.07 | "
                      "`nvjet_sm90_hss_128x64_64x8_1x2_h_bz_coopA_NNT` | tile 64×128, 8 stages of K 64, cluster 2×1, "
                      "coopA; 128 blocks |", markdown)
        self.assertTrue((self.out / cublas_names.PICKS).is_file())  # the run keeps it
        self.assertTrue((self.root / "plots" / "results" / cublas_names.PICKS).is_file())  # and publishes it

    def test_the_worklog_table_gains_the_peer_rows(self):
        bin_dir = make_bin_dir(self.root, {s: 0 for s in STEPS})
        code, stdout, stderr = run_driver("--bin-dir", bin_dir, "--out", self.out, "--size", 64, "--no-sweep",
                                          peers=self.peer_python)
        self.assertEqual((code, stderr), (0, ""), stdout)
        self.assertIn("[peers 1/2] torch.matmul 64x64x64\n", stdout)
        self.assertIn("--warmup 5 --iters 20", (self.root / "peers.log").read_text())
        table = (self.out / "table.md").read_text()
        self.assertIn("| torch.matmul | PyTorch 9.9: torch.mm(a, b, out_dtype=torch.float32); against cuBLAS "
                      "13.1.0 (PyTorch's) | FP16→FP32 | 64×64×64 | 1.00 | 2.00 | 4.0% | — | PASS |", table)
        self.assertIn("| Triton | not available: Triton is not installed for fake (no module named 'triton') | "
                      "FP16→FP32 | 64×64×64 | — | — | — | — | — |", table)

    def test_the_worklog_with_this_python_and_no_pytorch(self):
        # The real peers.py, in a Python where `import torch` fails: rows saying "not available".
        bin_dir = make_bin_dir(self.root, {s: 0 for s in STEPS[:2]})
        env = dict(os.environ, PYTHONPATH=str(fake_module_path(self.root, "raise ImportError('no torch (test)')")))
        code, stdout, stderr = run_driver("--bin-dir", bin_dir, "--out", self.out, "--size", 64, "--no-sweep",
                                          env=env)
        self.assertEqual((code, stderr), (0, ""), stdout)
        self.assertIn("run_worklog: torch.matmul not available: PyTorch is not installed for ", stdout)
        table = (self.out / "table.md").read_text()
        self.assertIn("| torch.matmul | not available: PyTorch is not installed for ", table)
        self.assertIn("| Triton | not available: PyTorch is not installed for ", table)


if __name__ == "__main__":
    unittest.main()


# --- peers.py end to end on stand-ins for PyTorch, cuBLAS and the Triton kernel (NumPy on the CPU) ---


if __name__ == "__main__":
    unittest.main()
