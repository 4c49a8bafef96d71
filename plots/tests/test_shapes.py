"""Tests for the shapes run without a GPU: the corpus (plots/shapes/shape_corpus.py and the committed
shape_corpus.csv), shapes.csv and its arithmetic (shape_results.py), the charts (shape_charts.py) on
a fixture, peers.py's arithmetic and its paths without PyTorch or Triton, and run_worklog.py's
--shapes mode and peer rows with fake step executables and a fake peer Python.

Run from anywhere:  python3 -m unittest discover -s plots/tests -v
"""
import tempfile
import unittest
from pathlib import Path

from support import FIXTURES, PNG_SIGNATURE, HEADER  # noqa: E402  (first: it sets the import path)
from shapes import shape_corpus  # noqa: E402
from shapes import shape_results  # noqa: E402
from shapes import shape_tables  # noqa: E402
from report.results_csv import InputError  # noqa: E402


def assert_rejected(test, load, path, text, message):
    """With text written to path, load(path) raises InputError saying message (a subtest named by
    the message). For each reader of a fixed-header CSV: shapes.csv here, cublas_picks.csv in
    test_cublas_pick.py."""
    path.write_text(text, encoding="utf-8")
    with test.subTest(message=message), test.assertRaises(InputError) as caught:
        load(path)
    test.assertIn(message, str(caught.exception))


def corpus_error(text):
    try:
        shape_corpus.parse(text, "c.csv")
    except InputError as e:
        return str(e)
    return "(accepted)"


class CorpusTest(unittest.TestCase):
    def test_parse(self):
        entries = shape_corpus.parse("# comment\n\n" + HEADER + "square,256,256,256,\nllm,1,4096,4096,7B attn out\n"
                                     'unaligned,4096,4096,4100,"K a multiple of 4, not 8"\nskinny,8,8,8\n'
                                     "llm,1,4096,4096,13B attn out\n", "c.csv")
        self.assertEqual([(e.category, e.shape, e.label, e.line) for e in entries], [
            ("square", (256, 256, 256), "", 4), ("llm", (1, 4096, 4096), "7B attn out", 5),
            ("unaligned", (4096, 4096, 4100), "K a multiple of 4, not 8", 6), ("skinny", (8, 8, 8), "", 7),
            ("llm", (1, 4096, 4096), "13B attn out", 8)])
        self.assertEqual(shape_corpus.unique_shapes(entries), [(256, 256, 256), (1, 4096, 4096), (4096, 4096, 4100),
                                                               (8, 8, 8)])

    def test_bad_lines_name_file_and_line(self):
        cases = [
            ("square,256,256,256,\n", "c.csv:1: expected the header line 'category,m,n,k,label', got 'square,256,256,256,'"),
            (HEADER + "square,256,256\n", "c.csv:2: expected 5 fields (category,m,n,k,label; the label may be empty), got 3"),
            (HEADER + "square,256,256,256,a,b\n", "c.csv:2: expected 5 fields (category,m,n,k,label; the label may be "
                                                  "empty), got 6"),
            (HEADER + "\n# x\nsquare,256,x,256,\n", "c.csv:4: n must be a positive integer, got 'x'"),
            (HEADER + "square,256,256,-1,\n", "c.csv:2: k must be a positive integer, got '-1'"),
            (HEADER + "square,0,256,256,\n", "c.csv:2: m must be between 1 and 2147483647, got 0"),
            (HEADER + "square,2147483648,1,1,\n", "c.csv:2: m must be between 1 and 2147483647, got 2147483648"),
            (HEADER + "Square,1,1,1,\n", "c.csv:2: the category must be a lower-case word (a-z, 0-9, _), got 'Square'"),
            (HEADER + "llm,1,2,3,x\nsquare,1,1,1,\nllm,1,2,3,x\n", "c.csv:4: repeats line 2 (llm 1x2x3)"),
            ("# only comments\n", "c.csv: empty corpus (no header line 'category,m,n,k,label')"),
            (HEADER + "# no rows\n", "c.csv: no shapes listed"),
        ]
        for text, message in cases:
            with self.subTest(message=message):
                self.assertEqual(corpus_error(text), message)

    def test_missing_file(self):
        with self.assertRaises(InputError) as caught:
            shape_corpus.load("/nonexistent-dir/corpus.csv")
        self.assertEqual(str(caught.exception), "/nonexistent-dir/corpus.csv: no such file")

    def test_the_committed_corpus(self):
        entries = shape_corpus.load()
        by = {}
        for e in entries:
            by.setdefault(e.category, []).append(e)
        self.assertEqual(list(by), ["square", "skinny", "llm", "unaligned", "conv", "square_off_grid", "small",
                                    "gemv_dot"])
        self.assertTrue(set(by) <= set(shape_corpus.CATEGORY_NAMES))
        squares = {e.m for e in by["square"]}
        self.assertTrue(all(e.m == e.n == e.k for e in by["square"]))
        self.assertTrue({1536, 3072, 5120, 6144, 256, 8192, 4097, 4095, 2049} <= squares)
        self.assertTrue(set(range(256, 8193, 256)) <= squares)
        for shape in ((1024, 1024, 8192), (512, 512, 16384), (8192, 8192, 256), (16384, 1024, 1024)):
            self.assertIn(shape, [e.shape for e in by["skinny"]])
        layers = {(e.label, e.n, e.k) for e in by["llm"]}
        self.assertIn(("8B LM head", 128256, 4096), layers)
        self.assertEqual({e.m for e in by["llm"]}, {1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192})
        self.assertEqual(len(by["llm"]), 12 * len(layers))
        self.assertEqual({n for _, n, _ in layers} | {k for _, _, k in layers} >= {4096, 5120, 8192, 11008, 13824,
                                                                                  14336, 28672}, True)
        unaligned = [e.shape for e in by["unaligned"]]
        self.assertTrue(any(k % 2 for _, _, k in unaligned) and any(n % 8 for _, n, _ in unaligned)
                        and any(m % 2 for m, _, _ in unaligned))
        self.assertTrue(any(m * n >= 8192 * 8192 and k < 32 for m, n, k in unaligned))
        self.assertEqual(len(shape_corpus.unique_shapes(entries)), len({e.shape for e in entries}))

    def test_the_committed_corpus_new_categories(self):
        entries = shape_corpus.load()
        by = {}
        for e in entries:
            by.setdefault(e.category, []).append(e)
        # Convolutions as GEMMs: VGG-16's 13 layers at batch 16 on 224×224 (M = 16·H·W, N = output
        # channels, K = input channels·9), each label naming its layer, and a few of ResNet-50's.
        vgg = [e for e in by["conv"] if e.label.startswith("VGG-16 ")]
        self.assertEqual([e.label.split(":")[0] for e in vgg],
                         [f"VGG-16 conv{block}_{layer}" for block, layers in ((1, 2), (2, 2), (3, 3), (4, 3), (5, 3))
                          for layer in range(1, layers + 1)])
        channels = [3, 64, 64, 128, 128, 256, 256, 256, 512, 512, 512, 512, 512, 512]
        sides = [224] * 2 + [112] * 2 + [56] * 3 + [28] * 3 + [14] * 3
        self.assertEqual([e.shape for e in vgg], [(16 * side * side, out, cin * 9) for side, cin, out
                                                  in zip(sides, channels, channels[1:])])
        self.assertTrue(any(e.label.startswith("ResNet-50 ") for e in by["conv"]))
        self.assertTrue(any(e.n == 64 and e.m >= 50000 for e in by["conv"]))  # the N = 64, M ≈ 10⁵
        # Squares off the 128 grid: multiples of 8, not of 128, between 1000 and 8000.
        off = [e.m for e in by["square_off_grid"]]
        self.assertTrue(all(e.m == e.n == e.k for e in by["square_off_grid"]))
        self.assertTrue(all(m % 8 == 0 and m % 128 and 1000 <= m <= 8000 for m in off), off)
        self.assertGreaterEqual(len(off), 12)
        # Small: every side at most 512, some not multiples of 8.
        small = [e.shape for e in by["small"]]
        self.assertTrue(all(max(s) <= 512 for s in small))
        self.assertTrue(any(all(v % 8 == 0 for v in s) and s[0] % 128 for s in small))
        self.assertTrue(any(any(v % 8 for v in s) for s in small))
        # GEMV and dot: M or N is 1 (or 8×8), K long.
        gemv = [e.shape for e in by["gemv_dot"]]
        self.assertTrue(all((m == 1 or n == 1 or (m, n) == (8, 8)) and k >= 4096 for m, n, k in gemv))
        for shape in ((1, 1, 65536), (1, 4096, 4096), (4096, 1, 4096), (1, 1, 1048576), (8, 8, 131072)):
            self.assertIn(shape, gemv)
        # Issue 29's targets are measured: its squares, long-K shapes, the decode layers and 46341²×17.
        shapes = {e.shape for e in entries}
        for shape in ((1024, 1024, 1024), (1536, 1536, 1536), (3072, 3072, 3072), (1024, 1024, 8192),
                      (512, 512, 16384), (46341, 46341, 17), (512, 4096, 4096), (16, 4096, 4096)):
            self.assertIn(shape, shapes)
        self.assertGreater(46341 * 46341, shape_corpus.INT_MAX)  # M·N past what an int indexes
        self.assertTrue({1, 8, 16, 32, 64, 128} <= {e.m for e in by["llm"]})

    def test_shape_list_matches_the_executables(self):
        shapes = [(4096, 4096, 4097), (1, 128256, 4096)]
        text = shape_corpus.shape_list_text(shapes)
        self.assertEqual(shape_corpus.parse_shape_list(text, "s.txt"), shapes)
        self.assertEqual(shape_corpus.parse_shape_list("  8x8x8  # c\r\n\n", "s.txt"), [(8, 8, 8)])
        for bad, message in (("64x64x64\n4096x4096\n", "s.txt:2: expected MxNxK, three positive integers "
                                                       "(got '4096x4096')"),
                             ("8x0x8", "s.txt:1: expected MxNxK, three positive integers (got '8x0x8')"),
                             ("#\n", "s.txt: no shapes listed")):
            with self.subTest(bad=bad), self.assertRaises(InputError) as caught:
                shape_corpus.parse_shape_list(bad, "s.txt")
            self.assertEqual(str(caught.exception), message)

    def test_waves(self):
        # 10 at 3072³: 12 × 24 tiles of 128×256 = 144 cluster tiles of 256×256 for 66 clusters.
        ten = shape_corpus.WAVE_TILES["10_persistent_clusters"]
        self.assertAlmostEqual(shape_corpus.waves(3072, 3072, ten, 132), 144 / 66)
        self.assertAlmostEqual(shape_corpus.waves(2048, 2048, ten, 132), 64 / 66)
        starts = shape_corpus.wave_starts(1024, 4096, ten, 132)
        self.assertEqual(starts[:3], [(2049, 2), (2817, 3), (3585, 4)])
        # 04: 128×128 tiles, two blocks per SM: 264 at once; 2048³ is 256 tiles, 2049³ 289.
        four = shape_corpus.WAVE_TILES["04_outer_product"]
        self.assertEqual(shape_corpus.wave_starts(2048, 2049, four, 132), [(2049, 2)])
        self.assertEqual(shape_corpus.wave_starts(1, 128, four, 132), [(1, 1)])


class ShapeResultsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.rows = shape_results.load(FIXTURES / "shapes.csv")

    def test_geometric_mean(self):
        self.assertAlmostEqual(shape_results.geometric_mean([20, 50, 125]), 50.0)
        self.assertAlmostEqual(shape_results.geometric_mean([4.0]), 4.0)
        self.assertIsNone(shape_results.geometric_mean([]))
        with self.assertRaises(ValueError):
            shape_results.geometric_mean([1.0, 0.0])

    def test_summary(self):
        summary = {(s["category"], s["engine"]): s for s in shape_results.summarize(self.rows)}
        ten = summary[("square", "10_persistent_clusters")]
        self.assertAlmostEqual(ten["geomean_pct"], 50.0)  # 20, 50, 125
        self.assertEqual((ten["min_pct"], ten["min_row"]["m"]), (20.0, 1024))
        llm = summary[("llm", "10_persistent_clusters")]
        self.assertAlmostEqual(llm["geomean_pct"], (80 * 40 * 50 * 160) ** 0.25)
        failed = summary[("unaligned", "10_persistent_clusters")]  # its one shape failed its check
        self.assertEqual((failed["passed"], failed["failed"], failed["geomean_pct"]), (0, 1, None))
        self.assertIn("not installed", summary[("square", "Triton")]["unavailable"])
        cublas = summary[("square", "cuBLAS GemmEx FP16→FP32")]
        self.assertAlmostEqual(cublas["geomean_tflops"], (214.748 * 687.195 * 344.101) ** (1 / 3), places=1)

    def test_worst(self):
        self.assertEqual([(r["m"], r["n"], r["k"]) for r in shape_results.worst(self.rows, "10_persistent_clusters", 3)],
                         [(1024, 1024, 1024), (16, 4096, 4096), (1, 11008, 4096)])  # two at 50%: smaller M first
        self.assertEqual(shape_results.worst(self.rows, "Triton"), [])

    def test_category_table(self):
        table = shape_tables.category_table(self.rows, caption=False)
        self.assertEqual(table.splitlines(), [
            "| category (shapes) | 10_persistent_clusters | 08_mma_ldmatrix | torch.matmul (FP32 out) | Triton | "
            "cuBLAS GemmEx FP16→FP32 |",
            "|---|---:|---:|---:|---:|---:|",
            "| squares (3) | 50.0% (min 20.0%) | 60.0% (min 60.0%) | 100% (min 100%) | not available | 370 TFLOP/s |",
            "| LLM layers (4) | 71.1% (min 40.0%) | 90.0% (min 90.0%) | 100% (min 100%) | not available | "
            "11.6 TFLOP/s |",
            "| unaligned (1) | FAIL 1 | 30.0% (min 30.0%) | 100% (min 100%) | not available | 137 TFLOP/s |"])

    def test_shapes_markdown(self):
        text = shape_tables.shapes_markdown(self.rows)
        self.assertIn("GPU: NVIDIA H100 80GB HBM3 (132 SMs) · 2026-11-25 · 8 shapes", text)
        self.assertIn(shape_tables.category_table(self.rows, caption=False), text)
        self.assertIn("| squares | 10_persistent_clusters | 3 | 3 | 0 | 50.0% | 20.0% | 1024x1024x1024 | ", text)
        self.assertIn("**10_persistent_clusters**: 1024x1024x1024 20.0% (squares; 47.7 TFLOP/s), "
                      "16x4096x4096 40.0% (LLM layers, 7B attn out;", text)
        self.assertIn("- Triton: not available (Triton is not installed", text)
        self.assertIn("- Failed checks, left out of the means: 10_persistent_clusters 4096x4096x4097.", text)

    def test_assemble(self):
        entries = shape_corpus.parse(HEADER + "square,64,64,64,\nllm,1,64,64,x\nsquare,128,128,128,\n", "c.csv")

        def raw(step, shape, cublas_ms, status="PASS", precision="fp16"):
            m, n, k = shape
            return {"step": step, "precision": precision, "m": m, "n": n, "k": k, "ms": 1.0, "tflops": 1.0,
                    "cublas_ms": cublas_ms, "cublas_tflops": 1.0, "pct_cublas": 100 * cublas_ms, "max_abs_err": 0.0,
                    "err_over_tol": 0.0, "status": status, "adds": "what", "gpu": "G", "sm_count": 132,
                    "timestamp": "2026-11-25T10:00:00Z"}
        raws = [raw("10", (64, 64, 64), 0.5), raw("08", (64, 64, 64), 0.7), raw("08", (64, 64, 64), 0.9),
                raw("08", (1, 64, 64), 0.3), raw("torch.matmul", (64, 64, 64), 0.1)]
        rows = shape_results.assemble(entries, raws, ["10", "08"], {"torch.matmul": None, "Triton": "no triton"})
        table = [(r["engine"], r["category"], r["m"], r["check"], r["ms"]) for r in rows]
        self.assertEqual(table, [
            ("10", "square", 64, "PASS", 1.0), ("10", "llm", 1, "not run", None), ("10", "square", 128, "not run", None),
            # A later row replaces an earlier one (08 at 64³: cuBLAS 0.9, not 0.7).
            ("08", "square", 64, "PASS", 1.0), ("08", "llm", 1, "PASS", 1.0), ("08", "square", 128, "not run", None),
            # cuBLAS: the median over the steps' rows, the peers' left out.
            ("cuBLAS GemmEx FP16→FP32", "square", 64, "reference", 0.7),
            ("cuBLAS GemmEx FP16→FP32", "llm", 1, "reference", 0.3),
            ("cuBLAS GemmEx FP16→FP32", "square", 128, "not run", None),
            ("torch.matmul", "square", 64, "PASS", 1.0), ("torch.matmul", "llm", 1, "not run", None),
            ("torch.matmul", "square", 128, "not run", None),
            ("Triton", "square", 64, "not available", None), ("Triton", "llm", 1, "not available", None),
            ("Triton", "square", 128, "not available", None)])
        with tempfile.TemporaryDirectory() as tmp:  # written and read back unchanged
            path = Path(tmp) / "shapes.csv"
            shape_results.write_rows(path, rows)
            again = shape_results.load(path)
            self.assertEqual([(r["engine"], r["m"], r["check"], r["ms"]) for r in again],
                             [(e, m, c, ms) for e, _, m, c, ms in table])

    def test_step_table(self):
        # Each step's geometric mean and its worst shape per category; peers and cuBLAS are not steps.
        table = shape_tables.step_table(self.rows).splitlines()
        self.assertEqual(table[:2], ["| category (shapes) | 10_persistent_clusters | 08_mma_ldmatrix |",
                                     "|---|---:|---:|"])
        self.assertEqual(table[2], "| squares (3) | 50.0% · worst 20.0% 1024x1024x1024 | 60.0% · worst 60.0% "
                                   "1024x1024x1024 |")
        self.assertEqual(table[4], "| unaligned (1) | FAIL 1 | 30.0% · worst 30.0% 4096x4096x4097 |")
        markdown = shape_tables.shapes_markdown(self.rows)
        self.assertIn("## Each step's worst shape per category\n\nGeometric mean of % of cuBLAS over the category's "
                      "shapes, then the slowest shape against cuBLAS.\n", markdown)
        self.assertNotIn("## cuBLAS's own kernel", markdown)

    def test_best_of_menu_is_a_column_and_bounds_the_model(self):
        def row(engine, category, shape, ms, pct, check="PASS"):
            m, n, k = shape
            return {**dict.fromkeys(shape_results.COLUMNS), "engine": engine, "kind": "step", "precision": "fp16",
                    "category": category, "label": "", "m": m, "n": n, "k": k, "ms": ms, "tflops": 1.0,
                    "pct_cublas": pct, "check": check, "gpu": "G", "sm_count": 132, "timestamp": "t"}
        model, best = "15_tile_per_shape", "15_tile_per_shape/best_of_menu"
        rows = [row(model, "square", (1024,) * 3, 1.00, 100.0), row(best, "square", (1024,) * 3, 0.96, 104.0),
                row(model, "square", (2048,) * 3, 1.10, 90.0), row(best, "square", (2048,) * 3, 1.00, 99.0),
                row(model, "small", (64,) * 3, 2.00, 50.0, "FAIL"), row(best, "small", (64,) * 3, 1.00, 100.0),
                row("14_pad_unaligned", "square", (1024,) * 3, 2.0, 50.0)]
        self.assertEqual(shape_results.bounded_step(best), model)
        self.assertIsNone(shape_results.bounded_step("07_async_pipeline/no_padding"))
        self.assertEqual(shape_results.model_within(rows, "square", model, best), (1, 2))  # 1.10 > 1.05 × 1.00
        self.assertEqual(shape_results.model_within(rows, "small", model, best), (0, 0))  # a failed check: not counted
        table = shape_tables.step_table(rows).splitlines()
        self.assertEqual(table[0], "| category (shapes) | 15_tile_per_shape | 15_tile_per_shape/best_of_menu | "
                                   "14_pad_unaligned | 15_tile_per_shape within 5% of 15_tile_per_shape/best_of_menu |")
        self.assertEqual(table[2], "| squares (2) | 94.9% · worst 90.0% 2048x2048x2048 | 101% · worst 99.0% 2048x2048x2048 "
                                   "| 50.0% · worst 50.0% 1024x1024x1024 | 1/2 |")
        self.assertEqual(table[3], "| small, sides ≤ 512 (1) | FAIL 1 | 100% · worst 100% 64x64x64 |  | — |")
        self.assertIn("on how many shapes the step's own choice takes at most 1.05× its time",
                      shape_tables.shapes_markdown(rows))
        # The README's per-category table gains the column too (one per engine).
        self.assertIn("| 15_tile_per_shape | 15_tile_per_shape/best_of_menu |", shape_tables.category_table(rows))

    def test_dram_fraction_timing_and_roofline(self):
        # assemble() gives every measured row its least bytes over its time against the DRAM read rate that
        # the step processes measured; the tables say the card, the date and the timing mode.
        from report import results_csv
        entries = [shape_corpus.Entry("llm", 16, 4096, 4096, "7B attn out", 2),
                   shape_corpus.Entry("square", 4096, 4096, 4096, "", 3)]

        def raw(step, shape, ms, cublas_ms, rate=None):
            m, n, k = shape
            return {"step": step, "precision": "fp16", "m": m, "n": n, "k": k, "ms": ms, "tflops": 1.0,
                    "cublas_ms": cublas_ms, "cublas_tflops": 1.0, "pct_cublas": 100 * cublas_ms / ms,
                    "max_abs_err": 0.0, "err_over_tol": 0.0, "status": "PASS", "adds": "", "gpu": "G", "sm_count": 132,
                    "timestamp": "2026-11-28T10:00:00Z", "timing": "cold", "sm_mhz_before": 1980.0,
                    "sm_mhz_after": 1965.0, "clock_fell": 0, "dram_read_gbps": rate}
        decode, square = (16, 4096, 4096), (4096, 4096, 4096)
        rows = shape_results.assemble(entries, [raw("13_swap_ab", decode, 0.020, 0.016, 3000.0),
                                                raw("13_swap_ab", square, 0.200, 0.190, 3200.0)], ["13_swap_ab"], {})
        least = results_csv.least_bytes(16, 4096, 4096, "fp16")
        step = next(r for r in rows if r["engine"] == "13_swap_ab" and r["m"] == 16)
        cublas = next(r for r in rows if r["kind"] == "cublas" and r["m"] == 16)
        self.assertAlmostEqual(step["dram_fraction"], least / 20e-6 / 3100e9)  # the median of the rates
        self.assertAlmostEqual(cublas["dram_fraction"], least / 16e-6 / 3100e9)
        self.assertEqual((step["timing"], step["sm_mhz_before"]), ("cold", 1980.0))
        table = shape_tables.roofline_table(rows).splitlines()
        self.assertEqual(table[0], "GPU: G (132 SMs) · 2026-11-28 · timing cold: L2 flushed before every timed run; "
                                   "each cell: geometric mean of % of cuBLAS · median (range) of the least bytes over "
                                   "the time, as a share of the DRAM read rate measured in the run:")
        fraction = shape_tables.fmt_fraction(step["dram_fraction"])
        self.assertEqual(table[4], f"| decode layers (LLM, M ≤ 128) (1) | 80.0% · DRAM {fraction} ({fraction}–{fraction}) "
                                   f"| DRAM {shape_tables.fmt_fraction(cublas['dram_fraction'])} "
                                   f"({shape_tables.fmt_fraction(cublas['dram_fraction'])}–"
                                   f"{shape_tables.fmt_fraction(cublas['dram_fraction'])}) |")
        self.assertTrue(shape_tables.category_table(rows).startswith("GPU: G (132 SMs) · 2026-11-28 · timing cold"))
        # Written and read back: the timing columns survive; a shapes.csv from before them still loads.
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "shapes.csv"
            shape_results.write_rows(path, rows)
            back = shape_results.load(path)
        self.assertEqual([(r["timing"], r["clock_fell"]) for r in back][:1], [("cold", 0)])
        self.assertEqual(self.rows[0]["timing"], "")  # the fixture predates the modes

    def test_picks_table_joins_cublas_s_kernel(self):
        from shapes import cublas_names
        gemm = ("nvjet_sm90_hss_128x64_64x8_1x2_h_bz_coopA_NNT", {"grid": 128, "duration_us": 9.5})
        split = ("nvjet_sm90_hss_128x16_64x11_4x1_v_bz_splitK_TNT", {"grid": 64, "duration_us": 7.0})
        reduce = ("void cublasLt::splitKreduce_kernel<32, 16, int, float>(cublasLt::cublasSplitKParams<float>, float*)",
                  {"grid": 128, "duration_us": 2.0})
        picks = [cublas_names.pick_row((1024, 1024, 1024), "fp16", gemm, [], "NVIDIA H100 80GB HBM3", "2026-11-26", "08_mma_ldmatrix"),
                 cublas_names.pick_row((16, 4096, 4096), "fp16", split, [reduce], "NVIDIA H100 80GB HBM3", "2026-11-26", "08_mma_ldmatrix"),
                 cublas_names.pick_row((7, 7, 7), "fp16", gemm, [], "NVIDIA H100 80GB HBM3", "2026-11-26", "08_mma_ldmatrix")]
        table = shape_tables.picks_table(self.rows, picks).splitlines()
        self.assertEqual(table[0], "| shape | in the corpus as | 10_persistent_clusters | 08_mma_ldmatrix | cuBLAS GemmEx "
                                   "FP16→FP32 TFLOP/s | cuBLAS's kernel | what its name and launch say |")
        self.assertEqual(table[2], "| 1024x1024x1024 | squares | 20.0% | 60.0% | 215 | "
                                   "`nvjet_sm90_hss_128x64_64x8_1x2_h_bz_coopA_NNT` | tile 64×128, 8 stages of K 64, "
                                   "cluster 2×1, coopA; 128 blocks |")
        self.assertEqual(table[3], "| 16x4096x4096 | LLM layers: 7B attn out | 40.0% | 90.0% | 44.7 | "
                                   "`nvjet_sm90_hss_128x16_64x11_4x1_v_bz_splitK_TNT` | tile 16×128, 11 stages of K 64, "
                                   "cluster 1×4, split-K ×2; 64 blocks + cublasLt::splitKreduce_kernel (128 blocks) |")
        self.assertEqual(table[4].split(" | ")[:4], ["| 7x7x7", "—", "—", "—"])  # a pick outside the corpus
        markdown = shape_tables.shapes_markdown(self.rows, picks=picks)
        self.assertIn("## cuBLAS's own kernel\n\nThe kernel that cuBLAS ran for each shape of cublas_picks.csv", markdown)
        self.assertIn(table[3], markdown)

    def test_bad_shapes_csv(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "shapes.csv"
            header = ",".join(shape_results.COLUMNS)
            for body, message in (("engine,m\n", "bad header"),
                                  (header + "\n" + "x,robot,fp16,square,,1,1,1,1,1,1,1,100,0,0,PASS,,g,1,t,cold,,,,,\n",
                                   "line 2: column 'kind' must be one of step, cublas, peer"),
                                  (header + "\n" + "x,step,fp16,square,,1,1,1,,1,1,1,100,0,0,PASS,,g,1,t,cold,,,,,\n",
                                   "line 2: a measured row needs a positive 'ms'"),
                                  (header + "\n" + "x,step,fp16,square,,1,1,1,1,1,1,1,100,0,0,OK,,g,1,t,cold,,,,,\n",
                                   "line 2: column 'check' must be one of")):
                assert_rejected(self, shape_results.load, path, body, message)

    def test_readme_block(self):
        # README.md's `shapes` block is readme/filler.py's, rendered from shapes.csv by category_table
        # (the repository's own README is checked with every other block by test_readme/filler.py).
        from readme import filler
        with tempfile.TemporaryDirectory() as tmp:
            shape_results.write_rows(Path(tmp) / "shapes.csv", self.rows)
            text = filler.render_block("shapes", filler.Results(Path(tmp)))
        self.assertIn(shape_tables.category_table(self.rows).strip(), text)
        self.assertIn("plots/results/shapes.csv", text)

    def test_peer_rows_of_the_worklog_table(self):
        from report import results_csv
        from report import results_table
        worklog = results_csv.load_rows(FIXTURES / "worklog.csv")
        entry = shape_corpus.Entry("worklog", 4096, 4096, 4096, "", 0)
        raw = {"step": "torch.matmul", "precision": "fp16", "m": 4096, "n": 4096, "k": 4096, "ms": 0.2,
               "tflops": 687.2, "cublas_ms": 0.19, "cublas_tflops": 723.4, "pct_cublas": 95.0, "max_abs_err": 0.0,
               "err_over_tol": 0.0, "status": "PASS", "adds": "PyTorch 2.11.0: torch.mm", "gpu": "G",
               "sm_count": 132, "timestamp": "2026-11-25T10:00:00Z"}
        rows = shape_results.assemble([entry], [raw], [], {"torch.matmul": None, "Triton": "Triton is not installed"})
        table = results_table.build_table(worklog, None, rows)
        self.assertIn("| torch.matmul | PyTorch 2.11.0: torch.mm | FP16→FP32 | 4096×4096×4096 | 0.200 | 687.2 | "
                      "95.0% | — | PASS |", table)
        self.assertIn("| Triton | not available: Triton is not installed | FP16→FP32 | 4096×4096×4096 | — | — | — | — "
                      "| — |", table)
        lines = table.splitlines()
        self.assertEqual(lines.index([line for line in lines if line.startswith("| torch.matmul")][0]),
                         lines.index([line for line in lines if line.startswith("| cuBLAS GemmEx")][0]) + 1)
        self.assertIn("torch.matmul and Triton are what a reader would use", table)


class ChartsTest(unittest.TestCase):
    def test_charts_on_the_fixture(self):
        try:
            from shapes import shape_charts
        except ImportError:
            self.skipTest("no matplotlib")
        rows = shape_results.load(FIXTURES / "shapes.csv")
        with tempfile.TemporaryDirectory() as tmp:
            written = shape_charts.draw(rows, Path(tmp))
            self.assertEqual([p.name for p in written], ["shapes_squares.png", "shapes_llm.png"])
            for path in written:
                self.assertEqual(path.read_bytes()[:8], PNG_SIGNATURE)
            # Without squares or LLM rows, no chart.
            self.assertEqual(shape_charts.draw([r for r in rows if r["category"] == "unaligned"], Path(tmp)), [])
