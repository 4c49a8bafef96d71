"""Tests for plots/profiling/ncu_profile.py and profile.csv (profile_csv.py), without a GPU or Nsight Compute:
ncu's CSV output from recorded fixtures (fixtures/ncu_*.csv), the intensity arithmetic, the
"limited by" rule, profile.csv, the merged table (results_table, make_plots --profile) and the
measured roofline (charts), and the driver against a fake ncu and fake steps.

Run from anywhere:  python3 -m unittest discover -s plots/tests -v
"""
import contextlib
import importlib.util
import io
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path

PLOTS = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
sys.path.insert(0, str(PLOTS))

from report import make_plots  # noqa: E402
from profiling import ncu_profile  # noqa: E402
from profiling import profile_csv  # noqa: E402
from report import results_csv  # noqa: E402
from report import results_table  # noqa: E402
from run import run_worklog  # noqa: E402
import python_without_matplotlib  # noqa: E402
from test_make_plots import run_main as run_make_plots  # noqa: E402

HAVE_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
SHAPE = (4096, 4096, 4096)
FLOPS = 2.0 * 4096 ** 3
OUTER_PRODUCT_KERNEL = ("void worklog::(anonymous namespace)::outer_product_gemm<128, 128, 8, 8, 8, true>"
                        "(worklog::GemmProblem<float>)")


def kernels(fixture):
    return ncu_profile.parse_ncu_csv((FIXTURES / fixture).read_text(encoding="utf-8"))


def rows_of(fixture, step, precision):
    """profile.csv rows (with the step totals) from one recorded ncu CSV."""
    return profile_csv.add_step_totals(
        [ncu_profile.kernel_row(k, step, precision, SHAPE) for k in kernels(fixture)])


class RawPageTest(unittest.TestCase):
    """ncu --import R --csv --page raw --print-units base: one row per kernel, a units row."""

    @classmethod
    def setUpClass(cls):
        (cls.kernel,) = kernels("ncu_raw_04_outer_product.csv")
        (cls.row,) = rows_of("ncu_raw_04_outer_product.csv", "04_outer_product", "fp32")

    def test_kernel_name_with_commas_is_one_field(self):
        self.assertEqual(self.kernel.name, OUTER_PRODUCT_KERNEL)
        self.assertEqual(self.row["kernel"], OUTER_PRODUCT_KERNEL)

    def test_thousands_separators_and_units(self):
        self.assertEqual(self.row["dram_read_bytes"], 402653184)
        self.assertEqual(self.row["duration_ns"], 3612832)
        self.assertEqual(self.row["registers_per_thread"], 128)
        self.assertEqual(self.row["shared_mem_per_block_bytes"], 16384)  # static + dynamic
        self.assertEqual(self.row["gpu"], "NVIDIA H100 80GB HBM3")

    def test_na_cell_is_missing(self):
        self.assertIsNone(self.kernel.metrics["smsp__sass_inst_executed_op_shared_st.sum"])
        self.assertIsNone(self.row["shared_st_instructions"])

    def test_l2_bytes_fall_back_to_sectors(self):
        # No lts__t_bytes.sum column in this report: 136,314,880 sectors of 32 bytes.
        self.assertNotIn("lts__t_bytes.sum", self.kernel.metrics)
        self.assertEqual(self.row["l2_bytes"], 136314880 * 32)
        self.assertEqual(self.row["l2_peak_bytes_per_second"], 32 * 96 * 1.755e9)

    def test_top_two_stalls_leave_selected_out(self):
        self.assertEqual((self.row["top_stall"], self.row["top_stall_per_issue"]), ("not_selected", 1.12))
        self.assertEqual((self.row["second_stall"], self.row["second_stall_per_issue"]),
                         ("math_pipe_throttle", 0.92))

    def test_every_field_read(self):
        missing = [c for c in profile_csv.PROFILE_COLUMNS if self.row[c] is None]
        self.assertEqual(missing, ["shared_st_instructions"])


class KernelNameTest(unittest.TestCase):
    """The anonymous namespace of a kernel's name: Nsight Compute 2025 drops the `<` of `<unnamed>`
    after another namespace, which leaves the name's brackets unbalanced; profile.csv spells it
    `(anonymous namespace)` with every bracket paired."""

    def test_a_dropped_bracket_is_restored(self):
        self.assertEqual(profile_csv.kernel_name("unnamed>::naive_gemm(GemmProblem<float>)"),
                         "(anonymous namespace)::naive_gemm(GemmProblem<float>)")
        self.assertEqual(profile_csv.kernel_name("void unnamed>::async_pipeline_gemm<unnamed>::Config, 1>"
                                                 "(GemmProblem<__half>)"),
                         "void (anonymous namespace)::async_pipeline_gemm<(anonymous namespace)::Config, 1>"
                         "(GemmProblem<__half>)")

    def test_a_whole_unnamed_is_only_respelled(self):
        self.assertEqual(profile_csv.kernel_name("void worklog::<unnamed>::g<worklog::<unnamed>::Config, 1>"
                                                 "(worklog::GemmProblem<__half>)"),
                         "void worklog::(anonymous namespace)::g<worklog::(anonymous namespace)::Config, 1>"
                         "(worklog::GemmProblem<__half>)")

    def test_other_names_are_kept(self):
        for name in (OUTER_PRODUCT_KERNEL, "nvjet_sm90_hss_256x128_64x4_1x2_h_bz_coopA_NNT",
                     "void f<unnamed>::A, unnamed>::B>>(int)"):
            self.assertEqual(profile_csv.kernel_name(name), name)

    def test_kernel_row_writes_the_balanced_name(self):
        kernel = ncu_profile.NcuKernel("1", "void unnamed>::g<unnamed>::Config>(GemmProblem<__half>)", {})
        name = ncu_profile.kernel_row(kernel, "09_wgmma_tma", "fp16", SHAPE)["kernel"]
        self.assertEqual(name, "void (anonymous namespace)::g<(anonymous namespace)::Config>(GemmProblem<__half>)")

    def test_the_committed_profile_has_balanced_names(self):
        for row in profile_csv.load_profile(PLOTS / "results" / "profile.csv"):
            name = row["kernel"]
            self.assertEqual(name.count("<"), name.count(">"), name)
            self.assertEqual(name.count("("), name.count(")"), name)


class TwoKernelsTest(unittest.TestCase):
    """A cuBLAS call that launched a GEMM and a split-K reduction: one row each, one step."""

    @classmethod
    def setUpClass(cls):
        cls.rows = rows_of("ncu_raw_cublas_fp16.csv", profile_csv.CUBLAS, "fp16")

    def test_one_row_per_kernel_in_order(self):
        self.assertEqual(len(self.rows), 2)
        self.assertTrue(self.rows[0]["kernel"].startswith("sm90_xmma_gemm_f16f16_f16f32"))
        self.assertTrue(self.rows[1]["kernel"].startswith("void cublasLt::splitKreduce_kernel<32, 16, int"))
        self.assertTrue(self.rows[1]["kernel"].endswith("long, float*, int*)"))

    def test_step_totals_add_the_kernels(self):
        (totals,) = profile_csv.step_totals(self.rows)
        self.assertEqual(totals["dram_bytes"], 142606336 + 134217728 + 134217728 + 67108864)
        self.assertEqual(totals["l2_bytes"], 1476395008 + 268435456)
        self.assertAlmostEqual(totals["tflops"], FLOPS / (181344 + 18656) / 1e3)
        for row in self.rows:  # the step's intensities, on each of its rows
            self.assertAlmostEqual(row["l2_flop_per_byte"], FLOPS / (1476395008 + 268435456))

    def test_each_kernel_has_its_own_limit(self):
        self.assertEqual([r["limited_by"] for r in self.rows], ["tensor pipe", "memory bandwidth (DRAM)"])
        self.assertEqual(self.rows[0]["top_stall"], "gmma")

    def test_table_takes_the_longest_kernel(self):
        self.assertEqual(profile_csv.limited_by_step(self.rows),
                         {(profile_csv.CUBLAS, "fp16", SHAPE): "tensor pipe"})


class DetailsPageTest(unittest.TestCase):
    """ncu --csv while profiling: one row per metric, scaled units, the program's output around."""

    @classmethod
    def setUpClass(cls):
        (cls.row,) = rows_of("ncu_details_05_wmma.csv", "05_wmma", "fp16")

    def test_scaled_units_become_base_units(self):
        self.assertAlmostEqual(self.row["dram_read_bytes"], 285.21e6)  # Mbyte
        self.assertAlmostEqual(self.row["l2_bytes"], 17.45e9)  # Gbyte
        self.assertAlmostEqual(self.row["duration_ns"], 5230.40e3)  # usecond, "5,230.40"
        self.assertAlmostEqual(self.row["shared_mem_per_block_bytes"], 1020)  # Kbyte/block + byte/block

    def test_metrics_not_collected_are_missing(self):
        for column in ("shared_ld_instructions", "dram_throughput_pct", "l2_peak_bytes_per_second"):
            self.assertIsNone(self.row[column], column)
        self.assertEqual(self.row["kernel"],
                         "void worklog::(anonymous namespace)::wmma_gemm(worklog::GemmProblem<__half>)")

    def test_limited_by_latency(self):
        self.assertEqual(self.row["limited_by"], "latency (waiting for global/local memory)")


class ParsingEdgeTest(unittest.TestCase):
    def test_units(self):
        for unit, scale in [("byte", 1), ("Kbyte", 1e3), ("Mbyte", 1e6), ("Gbyte", 1e9), ("Kibyte", 1024),
                            ("nsecond", 1), ("usecond", 1e3), ("msecond", 1e6), ("second", 1e9), ("%", 1),
                            ("register/thread", 1), ("Kbyte/block", 1e3), ("Gbyte/second", 1e9),
                            ("byte/usecond", 1e6), ("cycle/nsecond", 1e9), ("Ghz", 1e9), ("", 1)]:
            with self.subTest(unit=unit):
                self.assertAlmostEqual(ncu_profile.unit_scale(unit), scale)

    def test_values(self):
        self.assertEqual(ncu_profile.parse_value("1,073,741,824", "byte"), 1073741824.0)
        self.assertEqual(ncu_profile.parse_value("4.0e-05", "second"), 40000.0)
        self.assertIsNone(ncu_profile.parse_value("n/a"))
        self.assertIsNone(ncu_profile.parse_value(""))
        self.assertEqual(ncu_profile.parse_value("NVIDIA H200"), "NVIDIA H200")
        self.assertEqual(ncu_profile.parse_value("(256, 1, 1)"), "(256, 1, 1)")  # not a number

    def test_no_table(self):
        with self.assertRaisesRegex(ncu_profile.NcuCsvError, "no ncu CSV table"):
            ncu_profile.parse_ncu_csv("==PROF== Connected to process 1\n"
                                      "==WARNING== No kernels were profiled.\n")

    def test_ragged_row(self):
        text = '"ID","Kernel Name","dram__bytes_read.sum"\n"","","byte"\n"0","k(int, int)"\n'
        with self.assertRaisesRegex(ncu_profile.NcuCsvError, "does not have the header's 3 fields"):
            ncu_profile.parse_ncu_csv(text)

    def test_header_without_kernel_name(self):
        with self.assertRaisesRegex(ncu_profile.NcuCsvError, "no 'Kernel Name' column"):
            ncu_profile.parse_ncu_csv('"ID","dram__bytes_read.sum"\n"0","1"\n')

    def test_no_kernels(self):
        header_and_units = '"ID","Kernel Name","gpu__time_duration.sum"\n"","","nsecond"\n'
        self.assertEqual(ncu_profile.parse_ncu_csv(header_and_units), [])


class MetricChoiceTest(unittest.TestCase):
    def test_everything_first(self):
        metrics, missing = ncu_profile.choose_metrics()
        self.assertEqual(missing, [])
        self.assertEqual(metrics[:3],
                         ["gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum"])
        self.assertIn("lts__t_bytes.sum", metrics)
        self.assertNotIn("lts__t_sectors.sum", metrics)  # a second way, not asked for
        self.assertIn("sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed", metrics)
        self.assertEqual(metrics.count("lts__cycles_elapsed.avg.per_second"), 1)
        self.assertEqual(len(metrics), len(set(metrics)))
        self.assertEqual(sum("issue_stalled" in m for m in metrics), len(ncu_profile.STALL_REASONS))
        self.assertNotIn(ncu_profile.stall_metric("selected"), metrics)

    def test_a_rejected_metric_takes_its_next_way(self):
        metrics, missing = ncu_profile.choose_metrics({"lts__t_bytes", ncu_profile.metric_base(
            ncu_profile.stall_metric("gmma")), "dram__bytes_write.sum"})
        self.assertIn("lts__t_sectors.sum", metrics)  # l2_bytes and the L2 roof, in sectors
        self.assertIn("lts__t_sectors.sum.peak_sustained", metrics)
        self.assertNotIn("lts__t_bytes.sum", metrics)
        self.assertNotIn(ncu_profile.stall_metric("gmma"), metrics)
        self.assertEqual(missing, ["dram_write_bytes"])

    def test_rejected_names_in_ncu_output(self):
        output = textwrap.dedent("""\
            ==PROF== Connected to process 20101 (/work/build/bin/01_naive)
            ==ERROR== Failed to find metric regex:^lts__t_bytes\\.sum\\.peak_sustained$
            ==ERROR== Failed to find metric regex:^sm__bogus_cycles\\.(sum|min|max|avg|pct|ratio|max_rate)$
            ==ERROR== Failed to find metric regex:^gpu__dram_throughput.(...)$
            """)
        self.assertEqual(ncu_profile.rejected_metrics(output, ["lts__t_bytes.sum.peak_sustained"]),
                         {"lts__t_bytes.sum.peak_sustained", "sm__bogus_cycles", "gpu__dram_throughput"})
        self.assertEqual(ncu_profile.rejected_metrics("==PROF== Disconnected from process 1\n", []), set())


class IntensityTest(unittest.TestCase):
    def test_arithmetic(self):
        (row,) = rows_of("ncu_raw_04_outer_product.csv", "04_outer_product", "fp32")
        self.assertEqual(results_csv.gemm_flops(SHAPE), 137438953472.0)
        self.assertAlmostEqual(row["dram_flop_per_byte"], 137438953472 / (402653184 + 67108864))  # 292.6
        self.assertAlmostEqual(row["l2_flop_per_byte"], 137438953472 / (136314880 * 32))  # 31.5
        self.assertAlmostEqual(row["tflops"], 137438953472 / 3612832e-9 / 1e12)  # 38.0

    def test_missing_or_zero_bytes_give_no_intensity(self):
        self.assertIsNone(profile_csv.flop_per_byte(1e9, None))
        self.assertIsNone(profile_csv.flop_per_byte(1e9, 0))
        row = dict.fromkeys(profile_csv.PROFILE_COLUMNS)
        row.update(step="01_naive", precision="fp32", m=64, n=64, k=64, duration_ns=1000.0,
                   dram_read_bytes=4096.0, l2_bytes=8192.0)  # dram_write_bytes missing
        (totals,) = profile_csv.step_totals([row])
        self.assertIsNone(totals["dram_bytes"])
        self.assertAlmostEqual(totals["tflops"], 2 * 64 ** 3 / 1000 / 1e3)

    def test_roofline_points(self):
        points = profile_csv.roofline_points(profile_csv.load_profile(FIXTURES / "profile.csv"))
        self.assertEqual([p[0] for p in points], ["01_naive", "02_block_tiling", "03_thread_coarsening",
                                                  "04_outer_product", "05_wmma", "06_multiwarp_wmma",
                                                  "cuBLAS FP32", "cuBLAS FP16"])
        label, precision, dram, l2, tflops = points[5]
        self.assertEqual((precision, dram, l2), ("fp16", 512.0, 16.0))
        self.assertAlmostEqual(tflops, FLOPS / 1.95e6 / 1e3)

    def test_measured_l2_roof(self):
        rows = profile_csv.load_profile(FIXTURES / "profile.csv")
        self.assertAlmostEqual(profile_csv.measured_l2_bandwidth(rows), 5391.36)


class LimitedByTest(unittest.TestCase):
    # (what the case shows, the counters that are set, the words expected), in the rule's order.
    CASES = [
        ("tensor pipe first", dict(tensor_pipe_pct=75.0, sm_throughput_pct=76.0, memory_throughput_pct=90.0),
         "tensor pipe"),
        ("conflicts in a busy L1/shared", dict(shared_wavefronts=100.0, shared_bank_conflicts=40.0,
                                              l1_throughput_pct=85.0, memory_throughput_pct=85.0,
                                              sm_throughput_pct=50.0), "shared-memory bank conflicts"),
        ("conflicts filling the MIO queue", dict(shared_wavefronts=100.0, shared_bank_conflicts=20.0,
                                                 l1_throughput_pct=30.0, memory_throughput_pct=30.0,
                                                 sm_throughput_pct=30.0, top_stall="mio_throttle"),
         "shared-memory bank conflicts"),
        ("too few conflicts", dict(shared_wavefronts=100.0, shared_bank_conflicts=19.0,
                                   l1_throughput_pct=85.0, memory_throughput_pct=85.0,
                                   sm_throughput_pct=50.0),
         "memory bandwidth (L1/shared)"),
        ("conflicts nobody waits for", dict(shared_wavefronts=100.0, shared_bank_conflicts=50.0,
                                            l1_throughput_pct=20.0, memory_throughput_pct=20.0,
                                            sm_throughput_pct=20.0, top_stall="long_scoreboard"),
         "latency (waiting for global/local memory)"),
        ("the busiest memory level", dict(memory_throughput_pct=92.0, dram_throughput_pct=92.0,
                                          l2_throughput_pct=50.0, l1_throughput_pct=20.0,
                                          sm_throughput_pct=10.0),
         "memory bandwidth (DRAM)"),
        ("no level known", dict(memory_throughput_pct=70.0, sm_throughput_pct=10.0), "memory bandwidth"),
        ("issue busier than memory", dict(memory_throughput_pct=65.0, issue_active_pct=80.0,
                                          sm_throughput_pct=80.0), "issue"),
        ("memory busier than issue", dict(memory_throughput_pct=85.0, issue_active_pct=80.0,
                                          l1_throughput_pct=85.0),
         "memory bandwidth (L1/shared)"),
        ("nothing busy", dict(memory_throughput_pct=40.0, sm_throughput_pct=59.9, top_stall="barrier"),
         "latency (waiting for a __syncthreads barrier)"),
        ("nothing busy, no stall known", dict(memory_throughput_pct=40.0), "latency"),
        ("no counters", dict(), "n/a"),
    ]

    def test_rule(self):
        for what, values, words in self.CASES:
            with self.subTest(what):
                row = dict.fromkeys(profile_csv.PROFILE_COLUMNS)
                row.update(values)
                self.assertEqual(profile_csv.limited_by(row), words)

    def test_fixture_steps(self):
        rows = profile_csv.load_profile(FIXTURES / "profile.csv")
        self.assertEqual([profile_csv.limited_by(r) for r in rows], [r["limited_by"] for r in rows])
        self.assertEqual(profile_csv.limited_by_step(rows)[("06_multiwarp_wmma", "fp16", SHAPE)],
                         "memory bandwidth (L2)")


class ProfileCsvTest(unittest.TestCase):
    def test_round_trip_keeps_numbers_names_and_missing_values(self):
        rows = rows_of("ncu_raw_04_outer_product.csv", "04_outer_product", "fp32") + \
            rows_of("ncu_raw_cublas_fp16.csv", profile_csv.CUBLAS, "fp16")
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "profile.csv"
            profile_csv.write_profile(rows, path)
            text = path.read_text(encoding="utf-8")
            back = profile_csv.load_profile(path)
        self.assertEqual(text.splitlines()[0], ",".join(profile_csv.PROFILE_COLUMNS))
        self.assertIn(f'"{OUTER_PRODUCT_KERNEL}"', text)  # quoted: the name has commas
        self.assertIn(",3612832,", text)  # counts as integers
        self.assertIn(",n/a,", text)
        self.assertEqual(len(back), 3)
        self.assertEqual(back[0]["kernel"], OUTER_PRODUCT_KERNEL)
        self.assertIsNone(back[0]["shared_st_instructions"])
        self.assertEqual(back[0]["l2_bytes"], 4362076160)
        self.assertEqual(back[2]["limited_by"], "memory bandwidth (DRAM)")

    def assert_error(self, text, message):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "profile.csv"
            path.write_text(text, encoding="utf-8")
            with self.assertRaisesRegex(profile_csv.InputError, message):
                profile_csv.load_profile(path)

    def test_bad_files(self):
        header = ",".join(profile_csv.PROFILE_COLUMNS)
        self.assert_error("step,kernel\n01_naive,k\n", "not a profile.csv: missing columns: precision, m, n")
        self.assert_error(header + "\n", "no data rows")
        row = ["01_naive", "fp32", "k", "64", "64", "64", "fast"]
        row += ["n/a"] * (len(profile_csv.PROFILE_COLUMNS) - len(row))
        self.assert_error(header + "\n" + ",".join(row) + "\n",
                          "line 2: column 'duration_ns' is not a number: 'fast'")
        with self.assertRaisesRegex(profile_csv.InputError, "no such file"):
            profile_csv.load_profile(FIXTURES / "no_such_profile.csv")


class TableTest(unittest.TestCase):
    """The "limited by (measured)" column of table.md (results_table, make_plots --table-only)."""

    @classmethod
    def setUpClass(cls):
        cls.profile = profile_csv.load_profile(FIXTURES / "profile.csv")
        cls.worklog = results_csv.load_rows(FIXTURES / "worklog.csv")

    def table_rows(self, table):
        lines = [line for line in table.splitlines() if line.startswith("| ")]
        split = ([cell.strip() for cell in line.strip("|").split(" | ")] for line in lines)
        return {cells[0]: cells for cells in split}

    def test_table_gains_the_measured_column(self):
        table = results_table.build_table(self.worklog, profile_csv.limited_by_step(self.profile))
        cells = self.table_rows(table)
        self.assertEqual(cells["step"][-1], "limited by (measured)")
        self.assertEqual(cells["04_outer_product"][-2:], ["PASS", "issue"])
        self.assertEqual(cells["02_block_tiling"][-1], "shared-memory bank conflicts")
        self.assertEqual(cells["cuBLAS SGEMM"][-1], "issue")
        self.assertEqual(cells["cuBLAS GemmEx FP16→FP32"][-1], "tensor pipe")
        self.assertIn("|---:|---|---|\n", table)
        self.assertIn("Limited by (measured)", table)

    def test_table_without_profile_is_unchanged(self):
        self.assertNotIn("limited by", results_table.build_table(self.worklog))
        # A size or step the profile did not cover reads "—".
        self.assertIn("| PASS | — |", results_table.build_table(self.worklog, {}))

    def test_make_plots_table_only_merges_a_profile(self):
        with tempfile.TemporaryDirectory() as out:
            code, stdout, _ = run_make_plots("--csv", FIXTURES / "worklog.csv", "--out", out,
                                             "--profile", FIXTURES / "profile.csv", "--table-only")
            self.assertEqual(code, 0)
            self.assertEqual(stdout.splitlines(), [str(Path(out) / "table.md")])
            self.assertIn("| PASS | latency (waiting for global/local memory) |",
                          (Path(out) / "table.md").read_text(encoding="utf-8"))

    def test_make_plots_rejects_a_bad_profile(self):
        with tempfile.TemporaryDirectory() as out:
            code, _, err = run_make_plots("--csv", FIXTURES / "worklog.csv", "--out", out,
                                          "--profile", FIXTURES / "worklog.csv")
            self.assertEqual(code, 2)
            self.assertEqual(list(Path(out).iterdir()), [])
        self.assertRegex(err, r"^make_plots: error: .*worklog.csv: not a profile.csv: missing columns")

    def test_make_plots_needs_csv_or_profile(self):
        for argv in (["--out", "o"], ["--sweep", "s.csv", "--profile", "p.csv", "--out", "o"]):
            with self.subTest(argv=argv), contextlib.redirect_stderr(io.StringIO()):
                with self.assertRaises(SystemExit) as caught:
                    make_plots.parse_args(argv)
                self.assertEqual(caught.exception.code, 2)


@unittest.skipUnless(HAVE_MATPLOTLIB, "matplotlib is not installed")
class MeasuredRooflineTest(unittest.TestCase):
    """roofline_measured.png: charts.plot_measured_roofline, drawn by make_plots --profile."""

    @classmethod
    def setUpClass(cls):
        from report import charts
        cls.charts = charts
        cls.profile = profile_csv.load_profile(FIXTURES / "profile.csv")

    def test_make_plots_merges_a_profile(self):
        with tempfile.TemporaryDirectory() as out:
            code, stdout, _ = run_make_plots("--csv", FIXTURES / "worklog.csv", "--out", out,
                                             "--profile", FIXTURES / "profile.csv")
            self.assertEqual(code, 0)
            self.assertIn("| PASS | latency (waiting for global/local memory) |",
                          (Path(out) / "table.md").read_text(encoding="utf-8"))
            self.assertEqual(stdout.splitlines()[-1], str(Path(out) / "roofline_measured.png"))
            self.assertEqual((Path(out) / "roofline_measured.png").read_bytes()[:8], PNG_SIGNATURE)

    def test_profile_alone_draws_the_measured_roofline_only(self):
        with tempfile.TemporaryDirectory() as out:
            code, stdout, err = run_make_plots("--profile", FIXTURES / "profile.csv", "--out", out)
            self.assertEqual((code, err), (0, ""))
            self.assertEqual(stdout.splitlines(), [str(Path(out) / "roofline_measured.png")])
            self.assertEqual([p.name for p in Path(out).iterdir()], ["roofline_measured.png"])

    def test_measured_roofline_needs_peaks(self):
        with tempfile.TemporaryDirectory() as tmp:
            profile = Path(tmp) / "profile.csv"
            profile.write_text((FIXTURES / "profile.csv").read_text(encoding="utf-8")
                               .replace("NVIDIA H100 80GB HBM3", "Tesla T4"), encoding="utf-8")
            out = Path(tmp) / "out"
            code, _, err = run_make_plots("--profile", profile, "--out", out)
            self.assertEqual(code, 0)
            self.assertEqual(err, "make_plots: warning: no datasheet peaks for 'Tesla T4'; skipping "
                                  "roofline_measured.png (give --peak-fp32, --peak-fp16 and --bandwidth)\n")
            self.assertFalse((out / "roofline_measured.png").exists())
            code, _, err = run_make_plots("--profile", profile, "--out", out, "--peak-fp32", "8.1",
                                          "--peak-fp16", "65", "--bandwidth", "320")
            self.assertEqual((code, err), (0, ""))
            self.assertTrue((out / "roofline_measured.png").is_file())

    def test_measured_roofline_needs_a_point(self):
        rows = [dict(row, duration_ns=None) for row in self.profile]
        with tempfile.TemporaryDirectory() as tmp:
            profile = Path(tmp) / "profile.csv"
            profile_csv.write_profile(rows, profile)
            code, stdout, err = run_make_plots("--profile", profile, "--out", tmp)
            self.assertEqual((code, stdout), (0, ""))
            self.assertEqual(err, "make_plots: warning: no profiled step has a time and a byte count; "
                                  "skipping roofline_measured.png\n")

    def test_measured_roofline_png(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "roofline_measured.png"
            peaks = self.charts.resolve_peaks("NVIDIA H100 80GB HBM3")
            self.charts.plot_measured_roofline(self.profile, path, peaks)
            self.assertEqual(path.read_bytes()[:8], PNG_SIGNATURE)

    def test_measured_roofline_without_l2_roof_or_l2_bytes(self):
        rows = profile_csv.load_profile(FIXTURES / "profile.csv")
        for row in rows:
            row["l2_peak_bytes_per_second"] = None
        rows[0]["l2_bytes"] = None
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "roofline_measured.png"
            self.charts.plot_measured_roofline(rows, path, (66.9, 989.4, 3350.0))
            self.assertEqual(path.read_bytes()[:8], PNG_SIGNATURE)


# ---- The driver, against a fake ncu and fake steps -------------------------------------------------

# The profiling run of a fake ncu, this file's and test_cublas_pick.py's (`args`: ncu's arguments):
# runs the program after its options, as ncu does, passing its output on; then, as ncu would say
# them, no access to the counters (FAKE_NCU_NO_PERMISSION) or the program's failure. What follows
# it writes the fake's "report".
FAKE_NCU_RUN = """program = next(i for i, a in enumerate(args) if os.path.isfile(a) and os.access(a, os.X_OK))
run = subprocess.run(args[program:], capture_output=True, text=True)
print("==PROF== Connected to process 4242 (" + args[program] + ")")
sys.stdout.write(run.stdout)
sys.stderr.write(run.stderr)
if os.environ.get("FAKE_NCU_NO_PERMISSION"):
    print("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU "
          "Performance Counters on the target device 0.")
    sys.exit(0)
if run.returncode != 0:
    print("==ERROR== The application returned an error code (%d)." % run.returncode)
    sys.exit(run.returncode)
"""

# Stands in for ncu: logs its arguments; answers --import (prints the fixture the report names);
# refuses, as ncu does, a run that asks for a metric in FAKE_NCU_UNKNOWN (comma-separated base
# names); otherwise runs the program after its options, as ncu does, and writes a "report" naming
# the fixture that stands for what was profiled.
FAKE_NCU = """#!PYTHON
import os, re, subprocess, sys
args = sys.argv[1:]
with open(os.environ["FAKE_NCU_LOG"], "a") as log:
    log.write("ncu " + " ".join(args) + "\\n")
if "--import" in args:
    with open(args[args.index("--import") + 1]) as report:
        sys.stdout.write(open(report.read()).read())
    sys.exit(0)
for unknown in filter(None, os.environ.get("FAKE_NCU_UNKNOWN", "").split(",")):
    for metric in args[args.index("--metrics") + 1].split(","):
        if metric.split(".")[0] == unknown:
            print("==ERROR== Failed to find metric regex:^" + metric.replace(".", "\\\\.") + "$")
            sys.exit(1)
""" + FAKE_NCU_RUN + """target = args[args.index("--profile", program) + 1]
fp16 = "precision fp16" in run.stdout
fixture = {"cublas": "ncu_raw_cublas_fp16.csv", "step": "ncu_details_05_wmma.csv" if fp16
           else "ncu_raw_04_outer_product.csv"}[target]
with open(args[args.index("--export") + 1], "w") as report:
    report.write(os.path.join(os.environ["FAKE_NCU_FIXTURES"], fixture))
print("==PROF== Disconnected from process 4242")
"""

# Stands in for a step executable in --profile mode: logs its arguments, then either fails with
# its one-line message and CODE, or says what it profiled (a variant: under its own name), as
# profile_run.cpp does.
FAKE_STEP = """#!/bin/sh
echo "STEP $*" >> "LOG"
case " $* " in *" --profile cublas "*) what="cuBLAS" ;; *) what="the step's kernel" ;; esac
if [ CODE -ne 0 ]; then echo "STEP: error: MESSAGE" >&2; exit CODE; fi
name=STEP
case " $* " in *" --variant "*) name="STEP/${*##*--variant }" ;; esac  # a variant says its own name
echo "$name: profiled $what once, precision PRECISION, 64x64x64"
"""


class FakeNcuTest(unittest.TestCase):
    """Tests of a tool against a fake ncu (fake_ncu: its script; this file's FAKE_NCU unless a
    subclass names another) in a fresh folder: self.bin for fake steps, self.out for the tool's
    output (not made yet), self.ncu; calls() reads the log the fakes write. No tests of its own:
    DriverTest's and test_cublas_pick.py's are."""
    fake_ncu = FAKE_NCU

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)
        self.bin = self.root / "bin"
        self.bin.mkdir()
        self.out = self.root / "out"
        self.ncu = self.root / "ncu"
        self.ncu.write_text(self.fake_ncu.replace("PYTHON", sys.executable))
        self.ncu.chmod(0o755)

    def tearDown(self):
        self.tmp.cleanup()

    def calls(self):
        return (self.root / "calls.log").read_text().splitlines()


class DriverTest(FakeNcuTest):
    def add_step(self, step, precision="fp32", code=0, message=""):
        """A fake step executable, listed last in the build's list of steps."""
        script = (FAKE_STEP.replace("STEP", step).replace("LOG", str(self.root / "calls.log"))
                  .replace("PRECISION", precision).replace("CODE", str(code)).replace("MESSAGE", message))
        (self.bin / step).write_text(script)
        (self.bin / step).chmod(0o755)
        with open(self.bin / run_worklog.STEP_LIST, "a", encoding="utf-8") as step_list:
            step_list.write(step + "\n")

    def run_driver(self, *extra, python=sys.executable, base_env=os.environ, **env):
        environment = {**base_env, "FAKE_NCU_LOG": str(self.root / "calls.log"),
                       "FAKE_NCU_FIXTURES": str(FIXTURES), **env}
        command = [str(python), str(PLOTS / "profiling" / "ncu_profile.py"), "--bin-dir", str(self.bin), "--out",
                   str(self.out), "--size", "64", "--ncu", str(self.ncu), *map(str, extra)]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, env=environment)
        return done.returncode, done.stdout, done.stderr

    def test_variants_alone_into_variant_profile(self):
        self.add_step("07_async_pipeline", "fp16")
        self.add_step("08_mma_ldmatrix", "fp16")
        code, stdout, stderr = self.run_driver("--variants", "07_async_pipeline/no_padding,08_mma_ldmatrix")
        self.assertEqual(code, 0, stderr)
        self.assertIn("[1] 07_async_pipeline/no_padding 64x64x64\n", stdout)
        self.assertNotIn("cuBLAS", stdout)  # no cuBLAS profile, no profile.csv, no chart
        self.assertFalse((self.out / "profile.csv").exists())
        rows = profile_csv.load_profile(self.out / ncu_profile.VARIANT_PROFILE)
        self.assertEqual([r["step"] for r in rows], ["07_async_pipeline/no_padding", "08_mma_ldmatrix"])
        self.assertIn("07_async_pipeline --m 64 --n 64 --k 64 --profile step --variant no_padding", self.calls())
        self.assertIn("08_mma_ldmatrix --m 64 --n 64 --k 64 --profile step", self.calls())
        self.assertTrue((self.out / "ncu" / "07_async_pipeline_no_padding.ncu-rep").is_file())
        code, _, stderr = self.run_driver("--variants", "99_nothing/x")
        self.assertEqual(code, 2)
        self.assertIn("no step executable", stderr)

    def test_every_step_then_cublas_per_precision(self):
        self.add_step("01_naive")
        self.add_step("04_outer_product")
        self.add_step("05_wmma", "fp16")
        self.add_step("09_wgmma_tma", "fp16", 4,
                      "09_wgmma_tma needs compute capability 9.0 exactly; NVIDIA A100 is 8.0")
        code, stdout, stderr = self.run_driver()
        self.assertEqual(code, 0, stderr)
        self.assertIn("ncu_profile: skipping 09_wgmma_tma: 09_wgmma_tma needs compute capability 9.0 "
                      "exactly; NVIDIA A100 is 8.0\n", stdout)
        self.assertIn("[5] cuBLAS fp32 (through 01_naive) 64x64x64\n", stdout)
        self.assertIn("[6] cuBLAS fp16 (through 05_wmma) 64x64x64\n", stdout)
        # The fake's cuBLAS report holds two kernels (GEMM and split-K reduction) for either precision.
        self.assertTrue(stdout.splitlines()[-1].startswith("ncu_profile: 7 kernel(s) profiled in "), stdout)
        rows = profile_csv.load_profile(self.out / "profile.csv")
        self.assertEqual([(r["step"], r["precision"]) for r in rows],
                         [("01_naive", "fp32"), ("04_outer_product", "fp32"), ("05_wmma", "fp16"),
                          ("cuBLAS", "fp32"), ("cuBLAS", "fp32"), ("cuBLAS", "fp16"), ("cuBLAS", "fp16")])
        self.assertEqual(rows[0]["m"], 64)
        profiles = [c for c in self.calls() if c.startswith("ncu ") and "--export" in c]
        self.assertEqual(len(profiles), 6)
        for call in profiles:
            self.assertIn("--profile-from-start off --clock-control none", call)
            self.assertIn("--metrics gpu__time_duration.sum,dram__bytes_read.sum,", call)
        self.assertIn("01_naive --m 64 --n 64 --k 64 --profile cublas", self.calls())  # the steps' own log
        self.assertIn("05_wmma --m 64 --n 64 --k 64 --profile cublas", self.calls())
        self.assertTrue((self.out / "ncu" / "01_naive.ncu-rep").is_file())
        self.assertTrue((self.out / "ncu" / "cuBLAS_05_wmma.ncu-rep").is_file())
        if HAVE_MATPLOTLIB:
            self.assertEqual((self.out / "roofline_measured.png").read_bytes()[:8], PNG_SIGNATURE)
            self.assertFalse((self.out / "table.md").exists())  # no worklog.csv to merge with

    def test_without_matplotlib_profile_csv_and_one_line(self):
        """Run by a Python without matplotlib, on a machine without a package index: profile.csv is
        written, and one line says how to draw the chart (as the worklog driver does)."""
        self.add_step("01_naive")
        python = python_without_matplotlib.make(self.root / "bare")
        (self.root / "no-wheels").mkdir()
        venv = self.root / "build" / "plots-venv"
        code, stdout, stderr = self.run_driver(
            "--venv", venv, python=python,
            base_env=python_without_matplotlib.offline_pip_environment(self.root / "no-wheels"))
        self.assertEqual(code, 0, stderr)
        self.assertRegex(stdout, rf"ncu_profile: matplotlib is not installed for {python}: installing ")
        self.assertEqual(len(stderr.splitlines()), 1, stderr)
        self.assertRegex(stderr, r"^ncu_profile: charts not drawn, for want of matplotlib: pip install failed: "
                                 rf".* The CSVs are in {self.out}. For the charts, install matplotlib "
                                 rf"\({python} -m pip install -r .*requirements.txt\) and run {python} "
                                 rf".*make_plots.py --out {self.out} --profile {self.out}/profile.csv\n$")
        self.assertEqual(sorted(p.name for p in self.out.iterdir()), ["ncu", "profile.csv"])

    def test_manifest_order_missing_executable_and_table_merge(self):
        for step in ("01_naive", "02_block_tiling"):
            self.add_step(step)
        (self.bin / run_worklog.STEP_LIST).write_text("02_block_tiling\n01_naive\n03_thread_coarsening\n")
        self.out.mkdir()
        (self.out / "worklog.csv").write_text((FIXTURES / "worklog.csv").read_text(encoding="utf-8"))
        code, stdout, stderr = self.run_driver("--publish", self.root / "published")
        self.assertEqual(code, 0, stderr)
        self.assertIn("03_thread_coarsening not found; skipping 03_thread_coarsening", stderr)
        self.assertEqual([r["step"] for r in profile_csv.load_profile(self.out / "profile.csv")],
                         ["02_block_tiling", "01_naive", "cuBLAS", "cuBLAS"])
        published = sorted(p.name for p in (self.root / "published").iterdir())
        if HAVE_MATPLOTLIB:
            self.assertEqual(published, ["profile.csv", "roofline_measured.png", "table.md"])
            # The fixture's 64³ profile does not match the worklog's 4096³ rows: "—" there.
            self.assertIn("limited by (measured)", (self.out / "table.md").read_text(encoding="utf-8"))
        else:
            self.assertEqual(published, ["profile.csv"])

    def test_metrics_this_ncu_does_not_know_are_dropped(self):
        self.add_step("01_naive")
        self.add_step("02_block_tiling")
        code, stdout, stderr = self.run_driver(
            FAKE_NCU_UNKNOWN="sm__pipe_tensor_cycles_active,smsp__sass_inst_executed_op_shared_st")
        self.assertEqual(code, 0, stderr)
        self.assertIn("ncu_profile: note: this ncu does not know sm__pipe_tensor_cycles_active"
                      ".avg.pct_of_peak_sustained_elapsed; asking again without it\n", stdout)
        self.assertIn("ncu_profile: note: this ncu does not know smsp__sass_inst_executed_op_shared_st.sum; "
                      "asking again without it (n/a in profile.csv: shared_st_instructions)\n", stdout)
        profiles = [c for c in self.calls() if c.startswith("ncu ") and "--export" in c]
        self.assertEqual(len(profiles), 3 + 2)  # 01 three times, then 02 and cuBLAS FP32 once each
        self.assertIn("sm__pipe_tensor_op_hmma_cycles_active", profiles[-1])
        self.assertNotIn("smsp__sass_inst_executed_op_shared_st", profiles[-1])
        self.assertEqual(len(profile_csv.load_profile(self.out / "profile.csv")), 4)

    def test_no_counter_access_exits_7(self):
        self.add_step("01_naive")
        code, stdout, stderr = self.run_driver(FAKE_NCU_NO_PERMISSION="1")
        self.assertEqual(code, 7)  # exit_no_counter_access
        self.assertEqual(stderr.splitlines(), [
            "ncu_profile: error: ncu cannot read the GPU's performance counters (ERR_NVGPUCTRPERM): run as "
            "root, or let users profile (https://developer.nvidia.com/ERR_NVGPUCTRPERM)"])
        self.assertFalse((self.out / "profile.csv").exists())

    def test_no_device_exits_77(self):
        self.add_step("01_naive", code=77, message="no CUDA device found (0 devices)")
        self.add_step("02_block_tiling")
        code, _, stderr = self.run_driver()
        self.assertEqual(code, 77)  # exit_no_device
        self.assertEqual(stderr, "ncu_profile: error: no CUDA device; profiling needs an NVIDIA GPU "
                                 "(01_naive: no CUDA device found (0 devices))\n")
        self.assertEqual(sum(c.startswith("ncu ") and "--export" in c for c in self.calls()), 1)
        self.assertFalse(self.out.exists())  # nothing profiled, nothing left behind

    def test_a_failed_step_is_reported_and_the_rest_written(self):
        self.add_step("01_naive", code=5, message="CUDA error at kernel.cu:10: cudaErrorIllegalAddress")
        self.add_step("02_block_tiling")
        code, _, stderr = self.run_driver()
        self.assertEqual(code, 1)  # exit_check_failed
        self.assertIn("ncu_profile: 01_naive: profile failed: CUDA error at kernel.cu:10: "
                      "cudaErrorIllegalAddress\n", stderr)
        self.assertEqual([r["step"] for r in profile_csv.load_profile(self.out / "profile.csv")],
                         ["02_block_tiling", "cuBLAS", "cuBLAS"])

    def test_ncu_not_found_exits_6(self):
        self.add_step("01_naive")
        code, stdout, stderr = self.run_driver("--ncu", self.root / "no_ncu")
        self.assertEqual(code, 6)  # exit_tool_missing
        self.assertEqual(stderr, f"ncu_profile: error: --ncu {self.root / 'no_ncu'}: no such executable\n")

    def test_no_steps_exits_2(self):
        (self.bin / "01_naive").write_text("not listed")
        code, _, stderr = self.run_driver()
        self.assertEqual(code, 2)  # exit_bad_argument
        step_list = self.bin / run_worklog.STEP_LIST
        self.assertEqual(stderr, f"ncu_profile: error: cannot read the list of steps {step_list} (No such file "
                                 "or directory): --bin-dir must be the build's bin folder, where the build writes it\n")
        (self.bin / run_worklog.STEP_LIST).write_text("# the steps\n02_block_tiling\n")
        code, _, stderr = self.run_driver()
        self.assertEqual(code, 2)  # exit_bad_argument
        self.assertEqual(stderr.splitlines()[-1], f"ncu_profile: error: no step executables in {self.bin}")

    def test_bad_arguments_exit_2(self):
        for bad in (["--size", "0"], ["--timeout", "x"], ["--peak-fp32", "-1"]):
            with self.subTest(bad=bad), contextlib.redirect_stderr(io.StringIO()):
                with self.assertRaises(SystemExit) as caught:
                    ncu_profile.parse_args(["--bin-dir", "b", "--out", "o", *bad])
                self.assertEqual(caught.exception.code, 2)


class FindNcuTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)
        self.saved = dict(os.environ)
        for name in ("CUDA_HOME", "CUDA_PATH"):
            os.environ.pop(name, None)

    def tearDown(self):
        os.environ.clear()
        os.environ.update(self.saved)
        self.tmp.cleanup()

    def executable(self, path):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("#!/bin/sh\n")
        path.chmod(0o755)
        return path

    def test_beside_nvcc_through_its_link(self):
        nvcc = self.executable(self.root / "cuda" / "bin" / "nvcc")
        ncu = self.executable(self.root / "cuda" / "bin" / "ncu")
        (self.root / "path").mkdir()
        (self.root / "path" / "nvcc").symlink_to(nvcc)
        os.environ["PATH"] = str(self.root / "path")
        self.assertEqual(ncu_profile.find_ncu(None), str(ncu))

    def test_cuda_home(self):
        ncu = self.executable(self.root / "toolkit" / "bin" / "ncu")
        os.environ["PATH"] = str(self.root / "empty")
        os.environ["CUDA_HOME"] = str(self.root / "toolkit")
        self.assertEqual(ncu_profile.find_ncu(None), str(ncu))

    def test_not_found(self):
        if Path("/usr/local/cuda/bin/ncu").is_file():
            self.skipTest("this machine has /usr/local/cuda/bin/ncu")
        os.environ["PATH"] = str(self.root / "empty")
        with self.assertRaises(ncu_profile.Stop) as caught:
            ncu_profile.find_ncu(None)
        self.assertEqual(caught.exception.code, ncu_profile.exit_codes.EXIT_TOOL_MISSING)
        self.assertIn("Nsight Compute (ncu) not found", str(caught.exception))


class StepOutputTest(unittest.TestCase):
    """read_outcome() on what ncu and a step print, including ncu's progress on the same line."""

    def test_precision_after_progress_dots(self):
        output = ('==PROF== Profiling "naive_gemm": 0%....50%....100% - 12 passes01_naive: profiled the '
                  "step's kernel once, precision fp32, 4096x4096x4096\n")
        self.assertEqual(ncu_profile.read_outcome(output, 0, "01_naive").precision, "fp32")

    def test_exit_code_of_ncu_when_it_does_not_report_the_step_s(self):
        # The step said it failed, and ncu passed its exit code on without a line about it.
        outcome = ncu_profile.read_outcome("09_wgmma_tma: error: needs compute capability 9.0\n", 4,
                                           "09_wgmma_tma")
        self.assertEqual(outcome.skipped, "needs compute capability 9.0")
        with self.assertRaises(ncu_profile.Stop):
            ncu_profile.read_outcome("01_naive: error: no CUDA device found (0 devices)\n", 77, "01_naive")

    def test_ncu_error_without_the_step_line(self):
        outcome = ncu_profile.read_outcome("==ERROR== Failed to find metric sm__bogus.sum\n", 1, "01_naive")
        self.assertEqual(outcome.error, "==ERROR== Failed to find metric sm__bogus.sum")


if __name__ == "__main__":
    unittest.main()
