"""tools/device/tables.py: the hand-made tables remade from a raw folder of remeasure.sh counters."""
import csv
import importlib.util
import io
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SPEC = importlib.util.spec_from_file_location("device_tables", ROOT / "tools" / "device" / "tables.py")
tables = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(tables)

METRICS = ["gpu__time_duration.sum", "launch__grid_size", "launch__cluster_dim_x", "sm__cycles_active.avg",
           "sm__cycles_elapsed.max", "lts__t_bytes.sum", "dram__bytes_read.sum", "dram__sectors_read.sum",
           "lts__t_sectors_srcunit_tex_op_read.sum", "lts__t_sectors_srcunit_tex_lookup_hit.sum",
           "smsp__inst_executed.sum", "sm__throughput.avg.pct_of_peak_sustained_elapsed",
           "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
           "lts__throughput.avg.pct_of_peak_sustained_elapsed",
           "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed"]
COPY = "void worklog::pad_unaligned::pad_copy<__half>(const __half*, int, __half*)"
GEMM = "void worklog::swap_ab::swap_ab_gemm<unnamed>::Config, 256, 1>(CUtensorMap, float*)"
EXPLAIN = """4096x4096x4096:
  entry             slices segments  fixup    off   model µs measured µs   error
  menu_128x256_c2      147        3     no    yes       136.0       119.8  +13.5%  <- the model's pick
  menu_128x192_c1      160        4 shared     no       192.5       157.6  +22.1%
"""


def quoted(fields):
    return ",".join(f'"{f}"' for f in fields)


def ncu_csv(kernels):
    """ncu's raw page: the header, the units, a row per kernel (name, duration ns, then 1000s)."""
    header = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size",
              "Grid Size", "Device", "CC"] + METRICS
    units = [""] * 11 + ["nsecond"] + [""] * (len(METRICS) - 1)
    lines = ["==PROF== Connected to process", quoted(header), quoted(units)]
    for i, (name, ns) in enumerate(kernels):
        lines.append(quoted([i, 1, "step", "host", name, 1, 7, "(384,1,1)", "(132,1,1)", 0, "9.0", ns]
                            + [1000 + i] * (len(METRICS) - 1)))
    return "\n".join(lines) + "\n"


class DeviceTables(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        raw = self.raw = Path(self.tmp.name) / "raw"
        raw.mkdir()
        (raw / "gpu.txt").write_text("NVIDIA H200\n")
        (raw / "date.txt").write_text("2026-12-02\n")
        runs = {"tile_limits@15_tile_per_shape@1024x1024x1024@step": [(GEMM, 9000)],
                "tile_counters@14_pad_unaligned@1024x1024x1024@step": [(COPY, 1000), (GEMM, 9000)],
                "small_counters@14_pad_unaligned@100x100x100@step": [(COPY, 4000), (COPY, 3000), (GEMM, 12000)],
                "copy_share@14_pad_unaligned@999x999x999@step": [(COPY, 4000), (COPY, 4000), (GEMM, 24000)],
                "ncu_swap_ab@13_swap_ab@16x128x64@step": [(GEMM, 4130)]}
        for name, kernels in runs.items():
            (raw / f"{name}.csv").write_text(ncu_csv(kernels))
        (raw / "tile_model@15_tile_per_shape.txt").write_text(EXPLAIN)
        (raw / "edges_4096@16_both_orientations.txt").write_text(EXPLAIN)
        (raw / "dram_copy.txt").write_text("DRAM copy: 3.87 TB/s (read + write)\nDRAM read: 4.44 TB/s\n")
        (raw / "mma_peak.txt").write_text("mma.sync peak: 646.9 TFLOP/s\n")
        shapes = "".join(f"16_both_orientations/menu_64x128_c1,1024,1024,{k},{k / 1e5},{k / 2e5},700\n"
                         for k in (1024, 4096, 8192))
        (raw / "slice_cost_1024.csv").write_text("step,m,n,k,ms,cublas_ms,cublas_tflops\n" + shapes)
        (raw / "one_process_each.csv").write_text("step,m,n,k,ms,cublas_ms,cublas_tflops\n"
                                                  "06_multiwarp_wmma,8192,8192,8192,10,1.46,752.3\n")
        self.results = Path(self.tmp.name) / "results"
        self.results.mkdir()
        with open(self.results / "experiments.csv", "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=tables.EXPERIMENT_COLUMNS)
            w.writeheader()
            w.writerow({"experiment": "fastcu", "metric": "pct_cublas", "value": "103"})
            w.writerow({"experiment": "mma_peak", "metric": "tflops", "value": "1"})

    def tearDown(self):
        self.tmp.cleanup()

    def run_tables(self):
        with redirect_stdout(io.StringIO()):
            return tables.main([str(self.raw), "--results", str(self.results)])

    def rows(self, name):
        with open(self.results / name, newline="") as f:
            return list(csv.DictReader(f))

    def test_writes_every_table(self):
        self.assertEqual(self.run_tables(), 0)
        limits = self.rows("tile_limits.csv")
        self.assertEqual([(r["kernel"], r["role"], r["duration_ns"]) for r in limits],
                         [("swap_ab::swap_ab_gemm<Config, 256, 1>", "gemm", "9000"),
                          ("all", "all", "9000")])
        counters = {r["metric"]: r["value"] for r in self.rows("tile_counters.csv")}
        self.assertEqual(counters["gpu__time_duration.sum"], "9000")  # the GEMM's, not the copy's
        small = self.rows("small_counters.csv")
        self.assertEqual((small[-1]["kernel"], small[-1]["kernels"], small[-1]["duration_ns"]), ("all", "3", "19000"))
        model = self.rows("tile_model.csv")
        self.assertEqual([(r["entry"], r["fixup"], r["picked"], r["error_pct"]) for r in model],
                         [("menu_128x256_c2", "no", "yes", "+13.5"), ("menu_128x192_c1", "shared", "no", "+22.1")])

    def test_experiments_replaced_others_kept(self):
        self.run_tables()
        rows = self.rows("experiments.csv")
        value = {(r["experiment"], r["variant"], r["metric"], r["k"]): r["value"] for r in rows}
        self.assertEqual(value[("fastcu", "", "pct_cublas", "")], "103")
        self.assertEqual(value[("mma_peak", "mma_peak", "tflops", "")], "646.9")  # the old row replaced
        self.assertEqual(sum(r["experiment"] == "mma_peak" for r in rows), 1)
        self.assertEqual(value[("copy_share", "", "copy_share_pct", "999")], "25.0")
        self.assertEqual(value[("copy_share", "pad_copy_2", "duration_us", "999")], "4.00")
        self.assertEqual(value[("ncu_swap_ab", "one_tile_one_slice", "duration_us", "64")], "4.13")
        self.assertEqual(value[("dram_copy", "", "read_tb_s", "")], "4.44")
        self.assertEqual(value[("edges_4096", "menu_128x256_c2", "measured_us", "4096")], "119.8")
        # (81.92 - 40.96) µs over 64 slices
        self.assertEqual(value[("slice_cost_1024", "menu_64x128_c1", "per_slice_us", "")], "0.6400")
        self.assertEqual(value[("one_process_each", "", "cublas_tflops", "8192")], "752.3")
        self.assertTrue(all(r["gpu"] == "NVIDIA H200" and r["date"] == "2026-12-02"
                            for r in rows if r["experiment"] != "fastcu"))

    def test_missing_raw_file_writes_nothing(self):
        (self.raw / "mma_peak.txt").unlink()
        with redirect_stderr(io.StringIO()) as err:
            self.assertEqual(self.run_tables(), 2)
        self.assertIn("mma_peak.txt", err.getvalue())
        self.assertFalse((self.results / "tile_limits.csv").exists())


if __name__ == "__main__":
    unittest.main()
