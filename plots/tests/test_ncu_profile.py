"""Tests for plots/profiling/ncu_profile.py and profile.csv (profile_csv.py), without a GPU or Nsight Compute:
ncu's CSV output from recorded fixtures (fixtures/ncu_*.csv), the intensity arithmetic, the
"limited by" rule, profile.csv, the merged table (results_table, make_plots --profile) and the
measured roofline (charts), and the driver against a fake ncu and fake steps.

Run from anywhere:  python3 -m unittest discover -s plots/tests -v
"""
import contextlib
import importlib.util
import io
import tempfile
import textwrap
import unittest
from pathlib import Path

from support import PLOTS, FIXTURES, PNG_SIGNATURE  # noqa: E402  (first: it sets the import path)
from report import make_plots  # noqa: E402
from profiling import ncu_profile  # noqa: E402
from profiling import profile_csv  # noqa: E402
from report import results_csv  # noqa: E402
from report import results_table  # noqa: E402
from test_make_plots import run_main as run_make_plots  # noqa: E402

HAVE_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None
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


if __name__ == "__main__":
    unittest.main()
