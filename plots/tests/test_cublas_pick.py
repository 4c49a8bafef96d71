"""Tests for cuBLAS's own pick without a GPU or Nsight Compute: the kernel-name parser and
cublas_picks.csv (plots/shapes/cublas_names.py), and plots/shapes/cublas_pick.py against a fake ncu and a fake
step executable; make_plots --cublas-picks.

Run from anywhere:  python3 -m unittest discover -s plots/tests -v
"""
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

PLOTS = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
sys.path.insert(0, str(PLOTS))

from shapes import cublas_names  # noqa: E402
from shapes import cublas_pick  # noqa: E402
from test_make_plots import run_main as run_make_plots  # noqa: E402
from test_ncu_driver import FAKE_NCU_RUN, FakeNcuTest  # noqa: E402
from test_shapes import assert_rejected  # noqa: E402

COOP_A = "nvjet_sm90_hss_128x64_64x8_1x2_h_bz_coopA_NNT"
SPLIT_K = "nvjet_sm90_hss_128x16_64x11_4x1_v_bz_splitK_TNT"
COOP_B = "nvjet_sm90_hss_64x384_64x3_1x2_h_bz_coopB_NNT"
REDUCE = ("void cublasLt::splitKreduce_kernel<32, 16, int, float, float, float, float, false, false, false>"
          "(cublasLt::cublasSplitKParams<float>, float const*, float const*, float*, float const*, float*, void*, long)")


def fields(config):
    return (config.family, config.arch, config.types, config.tile_m, config.tile_n, config.k_per_stage, config.stages,
            config.cluster_m, config.cluster_n, config.split_k, config.schedule, config.flags)


class KernelNameTest(unittest.TestCase):
    """cuBLAS is column-major: its first tile (and cluster) dimension runs along our N."""

    def test_the_issue_s_names(self):
        self.assertEqual(fields(cublas_names.parse_kernel_name(COOP_A)),
                         ("nvjet", "sm90", "hss", 64, 128, 64, 8, 2, 1, False, "coopA", ["h", "bz", "NNT"]))
        self.assertEqual(fields(cublas_names.parse_kernel_name(SPLIT_K)),
                         ("nvjet", "sm90", "hss", 16, 128, 64, 11, 1, 4, True, "", ["v", "bz", "TNT"]))
        self.assertEqual(fields(cublas_names.parse_kernel_name(COOP_B)),
                         ("nvjet", "sm90", "hss", 384, 64, 64, 3, 2, 1, False, "coopB", ["h", "bz", "NNT"]))

    def test_summary_in_the_worklog_s_orientation(self):
        self.assertEqual(cublas_names.parse_kernel_name(COOP_A).summary(),
                         "tile 64×128, 8 stages of K 64, cluster 2×1, coopA")
        self.assertEqual(cublas_names.parse_kernel_name(SPLIT_K).summary(),
                         "tile 16×128, 11 stages of K 64, cluster 1×4, split-K")
        self.assertEqual(cublas_names.parse_kernel_name("nvjet_sm90_hss_320x128").summary(), "tile 128×320")

    def test_other_nvjet_spellings(self):
        # CUDA 12.8 wrote no architecture; Blackwell adds 2cta; sm_120 has its own form; a name may
        # end after the tile (as printed truncated) or come demangled with `void` and parameters.
        self.assertEqual(fields(cublas_names.parse_kernel_name("nvjet_hss_64x8_64x16_1x1_v_bz_splitK_NNT")),
                         ("nvjet", "", "hss", 8, 64, 64, 16, 1, 1, True, "", ["v", "bz", "NNT"]))
        self.assertEqual(fields(cublas_names.parse_kernel_name("nvjet_sm100_tst_64x32_64x16_2x1_2cta_h_bz_TNN")),
                         ("nvjet", "sm100", "tst", 32, 64, 64, 16, 1, 2, False, "", ["2cta", "h", "bz", "TNN"]))
        mma = cublas_names.parse_kernel_name("nvjet_sm120_tst_mma_64x96x128_3_32x32x128_tmaAB_alignCD4_bz_TNNN")
        self.assertEqual((mma.tile_m, mma.tile_n, mma.k_per_stage, mma.stages), (96, 64, 128, 3))
        self.assertEqual(fields(cublas_names.parse_kernel_name(f"void {COOP_A}(Params)")),
                         fields(cublas_names.parse_kernel_name(COOP_A)))
        truncated = cublas_names.parse_kernel_name("nvjet_sm90_hss_320x128")
        self.assertEqual((truncated.tile_m, truncated.tile_n, truncated.stages, truncated.cluster_m), (128, 320, None,
                                                                                                       None))

    def test_older_names(self):
        xmma = cublas_names.parse_kernel_name("sm90_xmma_gemm_f16f16_f16f32_f32_nn_n_tilesize128x256x64_cluster2x1x1_"
                                              "warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas")
        self.assertEqual(fields(xmma), ("xmma", "sm90", "f16f16_f16f32_f32", 256, 128, 64, None, 1, 2, False, "",
                                        ["segment_k_off"]))
        segment = cublas_names.parse_kernel_name("sm90_xmma_gemm_f16f16_f16f32_f32_nn_n_tilesize128x256x64_"
                                                 "warpgroupsize2x1x1_execute_segment_k_on_kernel__5x_cublas")
        self.assertTrue(segment.split_k)
        ampere = cublas_names.parse_kernel_name("sm80_xmma_gemm_f16f16_f16f32_f32_nn_n_tilesize128x64x32_stage4_"
                                                "warpsize2x2x1_tensor16x8x16_kernel")
        self.assertEqual((ampere.tile_m, ampere.tile_n, ampere.k_per_stage, ampere.stages), (64, 128, 32, 4))
        cutlass = cublas_names.parse_kernel_name("cutlass_80_tensorop_f16_s16816gemm_relu_f16_256x128_32x3_nn_align8")
        self.assertEqual((cutlass.family, cutlass.tile_m, cutlass.tile_n, cutlass.k_per_stage, cutlass.stages),
                         ("cutlass", 128, 256, 32, 3))
        three = cublas_names.parse_kernel_name("cutlass3x_sm90_tensorop_gemm_f16_f16_f32_f32_f32_128x256x64_2x1x1_0_"
                                               "tnn_align8_warpspecialized_cooperative_epi_tma")
        self.assertEqual((three.tile_m, three.tile_n, three.cluster_m, three.cluster_n, three.schedule),
                         (256, 128, 1, 2, "warpspecialized_cooperative"))

    def test_no_gemm(self):
        for name in (REDUCE, "void worklog::naive_gemm(GemmProblem<float>)", "memset"):
            self.assertIsNone(cublas_names.parse_kernel_name(name), name)
        self.assertTrue(cublas_names.is_reduction(REDUCE))
        self.assertEqual(cublas_names.short_name(REDUCE), "cublasLt::splitKreduce_kernel")
        self.assertEqual(cublas_names.short_name(COOP_A), COOP_A)


class PicksCsvTest(unittest.TestCase):
    def test_split_k_row_counts_the_parts(self):
        # 16×4096×4096: 16×128 tiles, 32 of them; 64 blocks: each tile's K in two parts, then a
        # reduction over 128 blocks.
        row = cublas_names.pick_row((16, 4096, 4096), "fp16", (SPLIT_K, {"grid": 64, "duration_us": 7.5}),
                                    [(REDUCE, {"grid": 128, "duration_us": 2.0})], "G", "2026-11-26", "08_mma_ldmatrix")
        self.assertEqual((row["tiles"], row["k_parts"], row["split_k"], row["other_kernels"], row["other_grid"],
                          row["other_us"]), (32, 2, "yes", "cublasLt::splitKreduce_kernel", "128", 2.0))
        self.assertEqual(cublas_names.pick_text(row), "tile 16×128, 11 stages of K 64, cluster 1×4, split-K ×2; 64 "
                                                      "blocks + cublasLt::splitKreduce_kernel (128 blocks)")
        plain = cublas_names.pick_row((1024, 1024, 1024), "fp16", (COOP_A, {"grid": 128}), [], "G", "d", "s")
        self.assertEqual((plain["tiles"], plain["k_parts"], plain["split_k"], plain["other_kernels"]),
                         (128, None, "no", ""))  # 16 × 8 tiles of 64×128: one per block
        unknown = cublas_names.pick_row((8, 8, 8), "fp16", ("void mystery_kernel<1>(int)", {}), [], "G", "d", "s")
        self.assertEqual((unknown["kernel"], unknown["family"], unknown["tiles"]), ("mystery_kernel", None, None))
        self.assertEqual(cublas_names.pick_text(unknown), "mystery_kernel")

    def test_round_trip_and_bad_files(self):
        rows = [cublas_names.pick_row((16, 4096, 4096), "fp16", (SPLIT_K, {"grid": 64, "duration_us": 7.5,
                                                                          "grid_dims": "32x1x2", "block": 384}),
                                      [(REDUCE, {"grid": 128})], "NVIDIA H100 80GB HBM3", "2026-11-26", "08_mma_ldmatrix")]
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / cublas_names.PICKS
            cublas_names.write_picks(path, rows)
            (again,) = cublas_names.load_picks(path)
            self.assertEqual({c: again[c] for c in cublas_names.COLUMNS}, {c: rows[0][c] if rows[0][c] is not None
                                                                           else ("" if c not in cublas_names.INT_COLUMNS
                                                                                 | cublas_names.FLOAT_COLUMNS else None)
                                                                           for c in cublas_names.COLUMNS})
            for text, message in (("m,n\n1,2\n", "bad header"),
                                  (",".join(cublas_names.COLUMNS) + "\n" + "1,x" + "," * (len(cublas_names.COLUMNS) - 2)
                                   + "\n", "column 'n' is not a number"),
                                  (",".join(cublas_names.COLUMNS) + "\n" + "1,2,3" + "," * (len(cublas_names.COLUMNS) - 3)
                                   + "\n", "no kernel named")):
                assert_rejected(self, cublas_names.load_picks, path, text, message)

    def test_make_plots_joins_the_picks(self):
        with tempfile.TemporaryDirectory() as tmp:
            picks = Path(tmp) / cublas_names.PICKS
            cublas_names.write_picks(picks, [cublas_names.pick_row((1024, 1024, 1024), "fp16", (COOP_A, {"grid": 128}),
                                                                   [], "NVIDIA H100 80GB HBM3", "d", "s")])
            code, _, err = run_make_plots("--shapes", FIXTURES / "shapes.csv", "--cublas-picks", picks, "--out", tmp,
                                          "--table-only")
            self.assertEqual((code, err), (0, ""))
            self.assertIn(f"`{COOP_A}` | tile 64×128, 8 stages of K 64, cluster 2×1, coopA; 128 blocks |",
                          (Path(tmp) / "shapes.md").read_text(encoding="utf-8"))
            with contextlib.redirect_stderr(io.StringIO()), self.assertRaises(SystemExit):
                run_make_plots("--csv", FIXTURES / "worklog.csv", "--cublas-picks", picks, "--out", tmp)


# ---- The tool, against a fake ncu and a fake step -----------------------------------------------

# Stands in for ncu: logs its arguments; refuses, as ncu does, a metric named in FAKE_NCU_UNKNOWN;
# otherwise runs the program after its options (test_ncu_driver.FAKE_NCU_RUN, as that file's fake
# does) and writes a "report" (JSON: the shape and the metrics asked for); --import prints that
# report as ncu's raw page: cuBLAS's kernels for the shape (M ≤ 16: a split-K GEMM and its
# reduction; N ≤ 64: a 64-column coopB tile; else coopA).
FAKE_NCU = ("""#!PYTHON
import json, os, subprocess, sys
args = sys.argv[1:]
with open(os.environ["FAKE_NCU_LOG"], "a") as log:
    log.write("ncu " + " ".join(args) + "\\n")
if "--import" in args:
    report = json.load(open(args[args.index("--import") + 1]))
    m, n, k, metrics = report["m"], report["n"], report["k"], report["metrics"]
    kernels = [("SPLIT_K", 64, 7000.0), ("REDUCE", 128, 2000.0)] if m <= 16 else \\
              [("COOP_B", 132, 90000.0)] if n <= 64 else [("COOP_A", 128, 9500.0)]
    def value(metric, grid, ns):
        return {"gpu__time_duration.sum": f"{ns:,.0f}", "launch__grid_size": str(grid), "launch__grid_dim_x": str(grid),
                "launch__grid_dim_y": "1", "launch__grid_dim_z": "1", "launch__block_size": "384",
                "launch__cluster_dim_x": "2", "launch__cluster_dim_y": "1", "launch__cluster_dim_z": "1",
                "launch__registers_per_thread": "168",
                "device__attribute_display_name": "NVIDIA H100 80GB HBM3"}[metric]
    quote = lambda cells: ",".join('"' + c.replace('"', '""') + '"' for c in cells)
    print(quote(["ID", "Kernel Name"] + metrics))
    print(quote(["", ""] + ["nsecond" if m.startswith("gpu__time") else "" for m in metrics]))
    for i, (name, grid, ns) in enumerate(kernels):
        print(quote([str(i), name] + [value(m, grid, ns) for m in metrics]))
    sys.exit(0)
asked = args[args.index("--metrics") + 1].split(",")
for unknown in filter(None, os.environ.get("FAKE_NCU_UNKNOWN", "").split(",")):
    if unknown in asked:
        print("==ERROR== Failed to find metric regex:^" + unknown.replace(".", "\\\\.") + "$")
        sys.exit(1)
""" + FAKE_NCU_RUN + """shape = {flag: int(args[args.index("--" + flag, program) + 1]) for flag in "mnk"}
json.dump({**shape, "metrics": asked}, open(args[args.index("--export") + 1], "w"))
print("==PROF== Disconnected from process 4242")
""").replace("SPLIT_K", SPLIT_K).replace("REDUCE", REDUCE.replace('"', '\\"')).replace("COOP_B", COOP_B) \
    .replace("COOP_A", COOP_A)

# Stands in for a step executable in --profile mode: logs its arguments; fails as a real step
# does (its one line, exit code CODE) when M is FAIL_M; else says what it profiled.
FAKE_STEP = """#!/bin/sh
echo "STEP $*" >> "LOG"
m="$2"
if [ CODE -ne 0 ] && { [ "$m" = "FAIL_M" ] || [ "FAIL_M" = any ]; }; then echo "STEP: error: MESSAGE" >&2; exit CODE; fi
echo "STEP: profiled cuBLAS once, precision fp16, ${m}x$4x$6"
"""


class ToolTest(FakeNcuTest):
    fake_ncu = FAKE_NCU

    def setUp(self):
        super().setUp()
        self.add_step("08_mma_ldmatrix")

    def add_step(self, step, code=0, fail_m="none", message=""):
        script = (FAKE_STEP.replace("STEP", step).replace("LOG", str(self.root / "calls.log"))
                  .replace("CODE", str(code)).replace("FAIL_M", fail_m).replace("MESSAGE", message))
        (self.bin / step).write_text(script)
        (self.bin / step).chmod(0o755)

    def run_tool(self, *extra, **env):
        environment = {**os.environ, "FAKE_NCU_LOG": str(self.root / "calls.log"), **env}
        command = [sys.executable, str(PLOTS / "shapes" / "cublas_pick.py"), "--bin-dir", str(self.bin), "--out", str(self.out),
                   "--ncu", str(self.ncu), *map(str, extra)]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, env=environment)
        return done.returncode, done.stdout, done.stderr

    def picks(self):
        return cublas_names.load_picks(self.out / cublas_names.PICKS)

    def test_each_shape_under_ncu(self):
        code, stdout, stderr = self.run_tool("--shapes", "1024x1024x1024,16x4096x4096")
        self.assertEqual((code, stderr), (0, ""), stdout)
        self.assertIn("[1/2] cuBLAS 1024x1024x1024 (through 08_mma_ldmatrix)\n", stdout)
        self.assertIn(f"  {SPLIT_K}: tile 16×128, 11 stages of K 64, cluster 1×4, split-K ×2; 64 blocks + "
                      "cublasLt::splitKreduce_kernel (128 blocks)\n", stdout)
        profiles = [c for c in self.calls() if c.startswith("ncu ") and "--export" in c]
        self.assertEqual(len(profiles), 2)
        self.assertIn("--profile-from-start off --clock-control none", profiles[0])
        self.assertIn("--metrics gpu__time_duration.sum,launch__grid_size,", profiles[0])
        self.assertIn("08_mma_ldmatrix --m 16 --n 4096 --k 4096 --profile cublas", self.calls())
        rows = self.picks()
        self.assertEqual([(r["m"], r["n"], r["k"], r["kernel"]) for r in rows],
                         [(1024, 1024, 1024, COOP_A), (16, 4096, 4096, SPLIT_K)])
        first = rows[0]
        self.assertEqual((first["precision"], first["tile_m"], first["tile_n"], first["k_per_stage"], first["stages"],
                          first["cluster_m"], first["cluster_n"], first["schedule"], first["grid"], first["block"],
                          first["grid_dims"], first["cluster_dims"], first["registers"], first["duration_us"],
                          first["gpu"], first["through"]),
                         ("fp16", 64, 128, 64, 8, 2, 1, "coopA", 128, 384, "128x1x1", "2x1x1", 168, 9.5,
                          "NVIDIA H100 80GB HBM3", "08_mma_ldmatrix"))
        self.assertEqual((rows[1]["k_parts"], rows[1]["other_kernels"], rows[1]["other_us"]),
                         (2, "cublasLt::splitKreduce_kernel", 2.0))

    def test_a_later_run_keeps_other_shapes_and_replaces_its_own(self):
        self.run_tool("--shapes", "1024x1024x1024,16x4096x4096")
        code, _, stderr = self.run_tool("--shapes", "16x4096x4096,50176x64x576", "--step", "08")
        self.assertEqual(code, 0, stderr)
        self.assertEqual([(r["m"], r["kernel"]) for r in self.picks()],
                         [(1024, COOP_A), (16, SPLIT_K), (50176, COOP_B)])

    def test_corpus_categories_and_shape_files(self):
        corpus = self.root / "corpus.csv"
        corpus.write_text("category,m,n,k,label\nsquare,1024,1024,1024,\nconv,50176,64,576,a layer\n"
                          "conv,50176,64,576,the same shape\nsmall,64,64,64,\n")
        code, stdout, stderr = self.run_tool("--corpus", corpus, "--categories", "conv,small")
        self.assertEqual(code, 0, stderr)
        self.assertEqual([(r["m"], r["n"], r["k"]) for r in self.picks()], [(50176, 64, 576), (64, 64, 64)])
        code, _, stderr = self.run_tool("--corpus", corpus, "--categories", "llm")
        self.assertEqual(code, 2)
        self.assertEqual(stderr, f"cublas_pick: error: {corpus}: no category llm (it has square, conv, small)\n")
        shape_file = self.root / "shapes.txt"
        shape_file.write_text("# targets\n1536x1536x1536\n")
        code, _, stderr = self.run_tool("--shape-file", shape_file)
        self.assertEqual(code, 0, stderr)
        self.assertEqual(self.picks()[-1]["m"], 1536)

    def test_a_failed_shape_is_reported_and_the_rest_written(self):
        self.add_step("08_mma_ldmatrix", code=3, fail_m="46341",
                      message="46341x46341x17 needs 34366114872 bytes of device memory (+256 MiB headroom)")
        code, _, stderr = self.run_tool("--shapes", "46341x46341x17,1024x1024x1024")
        self.assertEqual(code, 1)  # exit_check_failed
        self.assertIn("cublas_pick: 46341x46341x17: profile failed: 46341x46341x17 needs 34366114872 bytes", stderr)
        self.assertTrue(stderr.endswith("cublas_pick: FAILED: 46341x46341x17\n"), stderr)
        self.assertEqual([r["m"] for r in self.picks()], [1024])

    def test_metrics_this_ncu_does_not_know_are_dropped(self):
        code, stdout, stderr = self.run_tool("--shapes", "1024x1024x1024,2048x2048x2048",
                                             FAKE_NCU_UNKNOWN="launch__cluster_dim_x")
        self.assertEqual(code, 0, stderr)
        self.assertIn("cublas_pick: note: this ncu does not know launch__cluster_dim_x; asking again without it\n",
                      stdout)
        profiles = [c for c in self.calls() if c.startswith("ncu ") and "--export" in c]
        self.assertEqual(len(profiles), 3)  # once refused, then once per shape
        self.assertEqual([r["cluster_dims"] for r in self.picks()], ["", ""])

    def test_stops(self):
        code, _, stderr = self.run_tool("--shapes", "64x64x64", FAKE_NCU_NO_PERMISSION="1")
        self.assertEqual(code, 7)  # exit_no_counter_access
        self.assertIn("ERR_NVGPUCTRPERM", stderr)
        self.add_step("08_mma_ldmatrix", code=4, fail_m="any",
                      message="08_mma_ldmatrix needs compute capability 8.0 or newer; Tesla T4 is 7.5")
        code, _, stderr = self.run_tool("--shapes", "64x64x64")
        self.assertEqual(code, 4)  # exit_unsupported_gpu
        self.assertEqual(stderr, "cublas_pick: error: 08_mma_ldmatrix needs compute capability 8.0 or newer; Tesla T4 "
                                 "is 7.5 (choose another step with --step)\n")
        self.add_step("08_mma_ldmatrix", code=77, fail_m="any", message="no CUDA device found (0 devices)")
        code, _, stderr = self.run_tool("--shapes", "64x64x64")
        self.assertEqual(code, 77)
        self.assertFalse(self.out.exists())  # nothing profiled, nothing written
        code, _, stderr = self.run_tool("--shapes", "64x64x64", "--step", "13")
        self.assertEqual((code, stderr), (2, f"cublas_pick: error: no step executable {self.bin / '13'}\n"))
        code, _, stderr = self.run_tool("--shapes", "64x64x64", "--ncu", self.root / "no_ncu")
        self.assertEqual(code, 6)  # exit_tool_missing

    def test_bad_arguments_exit_2(self):
        for bad in (["--shapes", "64x64"], ["--shapes", "1x1x1", "--corpus"], ["--categories", "conv", "--shapes", "1x1x1"],
                    ["--timeout", "0", "--shapes", "1x1x1"], []):
            with self.subTest(bad=bad), contextlib.redirect_stderr(io.StringIO()) as err:
                with self.assertRaises(SystemExit) as caught:
                    cublas_pick.parse_args(["--bin-dir", "b", "--out", "o", *bad])
                self.assertEqual(caught.exception.code, 2)
        self.assertEqual(cublas_pick.parse_args(["--bin-dir", "b", "--out", "o", "--shapes", "1x2x3,4x5x6"]).shapes,
                         [(1, 2, 3), (4, 5, 6)])


if __name__ == "__main__":
    unittest.main()
