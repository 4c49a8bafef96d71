"""Tests for plots/report/make_plots.py and the modules it uses (results_csv, results_table, charts), on
the hand-written CSVs in fixtures/.

Run from anywhere:  python3 -m unittest discover -s plots/tests -v
"""
import contextlib
import io
import re
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent / "fixtures"
PLOTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PLOTS))

from report import make_plots  # noqa: E402
import python_without_matplotlib  # noqa: E402
from report import results_csv  # noqa: E402
from report import results_table  # noqa: E402

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
STEPS = ["01_naive", "02_block_tiling", "03_thread_coarsening", "04_outer_product",
         "05_wmma", "06_multiwarp_wmma"]


def run_main(*argv):
    """Call make_plots.main; return (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = make_plots.main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def table_rows(table):
    """The cells of each table row below the header, as lists of strings."""
    lines = [line for line in table.splitlines() if line.startswith("| ")][1:]
    return [[cell.strip() for cell in line.strip("|").split(" | ")] for line in lines]


class TableTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.table = results_table.build_table(results_csv.load_rows(FIXTURES / "worklog.csv"))
        cls.rows = {cells[0]: cells for cells in table_rows(cls.table)}

    def test_header_line_names_gpu_cuda_and_newest_date(self):
        # The first row is from 2026-11-20, the others from the next day.
        self.assertEqual(self.table.splitlines()[0],
                         "GPU: NVIDIA H100 80GB HBM3 · CUDA 13.0 (driver 13.0) · 2026-11-21")

    def test_steps_in_order_then_cublas(self):
        self.assertEqual(list(self.rows),
                         STEPS + ["cuBLAS SGEMM", "cuBLAS GemmEx FP16→FP32"])

    def test_precision_labels(self):
        self.assertEqual([self.rows[s][2] for s in STEPS], ["FP32"] * 4 + ["FP16→FP32"] * 2)

    def test_first_step(self):
        self.assertEqual(self.rows["01_naive"],
                         ["01_naive", "one thread per element of C", "FP32", "4096×4096×4096",
                          "40.0", "3.44", "6.5%", "—", "PASS"])

    def test_adds_text_with_a_comma_survives_quoting(self):
        self.assertEqual(self.rows["03_thread_coarsening"][1],
                         "each thread computes 8 outputs, kept in registers")

    def test_percent_of_cublas(self):
        self.assertEqual([self.rows[s][6] for s in STEPS],
                         ["6.5%", "17.9%", "38.1%", "66.7%", "9.8%", "26.2%"])

    def test_speedups_mark_the_change_of_precision(self):
        # 40/14.5, 14.5/6.8, 6.8/3.9, then 3.9 (FP32) / 1.95 and 1.95/0.72.
        self.assertEqual([self.rows[s][7] for s in STEPS],
                         ["—", "2.76×", "2.13×", "1.74×", "2.00× (vs FP32)", "2.71×"])

    def test_ms_and_tflops_formatting(self):
        self.assertEqual([self.rows[s][4] for s in STEPS],
                         ["40.0", "14.5", "6.80", "3.90", "1.95", "0.720"])
        self.assertEqual([self.rows[s][5] for s in STEPS],
                         ["3.44", "9.48", "20.2", "35.2", "70.5", "190.9"])

    def test_cublas_rows_use_the_median_time(self):
        # FP32 rows report 2.61, 2.60, 2.59, 2.60 ms; FP16 rows 0.191 and 0.189 ms.
        self.assertEqual(self.rows["cuBLAS SGEMM"],
                         ["cuBLAS SGEMM", "vendor library, the reference", "FP32", "4096×4096×4096",
                          "2.60", "52.9", "100.0%", "—", "—"])
        self.assertEqual(self.rows["cuBLAS GemmEx FP16→FP32"][2:7],
                         ["FP16→FP32", "4096×4096×4096", "0.190", "723.4", "100.0%"])


class CheckColumnsTest(unittest.TestCase):
    """The check's verdict columns the steps write last (bad_count ... obtained): read when there,
    not needed when not (older CSVs), and the header the harness writes is exactly these."""

    def with_check_columns(self, tmp, verdict):
        lines = (FIXTURES / "worklog.csv").read_text(encoding="utf-8").splitlines()
        path = Path(tmp) / "worklog.csv"
        path.write_text("\n".join([lines[0] + "," + ",".join(results_csv.CHECK_COLUMNS)]
                                  + [line + verdict for line in lines[1:]]) + "\n", encoding="utf-8")
        return path

    def test_rows_with_the_verdict_columns(self):
        with tempfile.TemporaryDirectory() as tmp:
            rows = results_csv.load_rows(self.with_check_columns(tmp, ",3,12,0,1.5,nan"))
            plain = results_csv.load_rows(FIXTURES / "worklog.csv")
            self.assertEqual(len(rows), len(plain))
            self.assertEqual((rows[0]["bad_count"], rows[0]["first_bad_row"], rows[0]["expected"]), (3, 12, 1.5))
            self.assertEqual(results_table.build_table(rows), results_table.build_table(plain))
            passed = results_csv.load_rows(self.with_check_columns(tmp, ",0,,,,"))
            self.assertEqual((passed[0]["bad_count"], passed[0]["first_bad_row"]), (0, None))
            unchecked = results_csv.load_rows(self.with_check_columns(tmp, ",,,,,"))
            self.assertIsNone(unchecked[0]["bad_count"])
            with self.assertRaisesRegex(results_csv.InputError, "column 'bad_count' is not a number"):
                results_csv.load_rows(self.with_check_columns(tmp, ",many,,,,"))

    def test_the_header_the_harness_writes(self):
        source = (PLOTS.parent / "common" / "report.cpp").read_text(encoding="utf-8")
        block = source[re.search(r'std::fputs\(\s*"timestamp', source).start():]
        header = "".join(re.findall(r'"([^"]*)"', block[:block.index("csv);")])).replace("\\n", "")
        self.assertEqual(header.split(","),
                         list(results_csv.COLUMNS) + list(results_csv.CHECK_COLUMNS) + list(results_csv.TIMING_COLUMNS)
                         + list(results_csv.SPREAD_COLUMNS) + list(results_csv.CODE_COLUMNS))


class SpreadColumnsTest(unittest.TestCase):
    """The spread columns the steps write last (ms_p10 ... cublas_ms_p90: the 10th and 90th
    percentiles of the timed rounds): read when there, shown beside a step's median in table.md, and
    not needed (the table as before) in CSVs written before them, the committed results among them."""

    def with_spread_columns(self, tmp, spread):
        lines = (FIXTURES / "worklog.csv").read_text(encoding="utf-8").splitlines()
        path = Path(tmp) / "worklog.csv"
        path.write_text("\n".join([lines[0] + "," + ",".join(results_csv.SPREAD_COLUMNS)]
                                  + [line + spread for line in lines[1:]]) + "\n", encoding="utf-8")
        return path

    def test_rows_with_the_spread_columns(self):
        with tempfile.TemporaryDirectory() as tmp:
            rows = results_csv.load_rows(self.with_spread_columns(tmp, ",0.7151,0.7312,2.55,2.71"))
            no_cublas = results_csv.load_rows(self.with_spread_columns(tmp, ",0.7151,0.7312,,"))
            with self.assertRaisesRegex(results_csv.InputError, "column 'ms_p90' is not a number"):
                results_csv.load_rows(self.with_spread_columns(tmp, ",0.7151,wide,,"))
        self.assertEqual([rows[0][c] for c in results_csv.SPREAD_COLUMNS], [0.7151, 0.7312, 2.55, 2.71])
        self.assertEqual((no_cublas[0]["cublas_ms_p10"], no_cublas[0]["cublas_ms_p90"]), (None, None))
        table = results_table.build_table(rows)
        cells = {cells[0]: cells for cells in table_rows(table)}
        self.assertEqual(cells["01_naive"][4], "40.0 (0.715–0.731)")  # the fixture's spread is made up
        self.assertEqual(cells["cuBLAS SGEMM"][4], "2.60")  # cuBLAS's row: the median over the steps' runs
        self.assertIn("A step's median ms is followed, in parentheses, by the 10th and 90th percentiles of its "
                      "timed rounds, and its % of cuBLAS by the range", table)
        # % of cuBLAS with its range: cuBLAS's 10th percentile over the step's 90th, to its 90th over the 10th.
        low, high = 100 * 2.55 / 0.7312, 100 * 2.71 / 0.7151
        self.assertTrue(cells["01_naive"][6].endswith(f" ({low:.1f}–{high:.1f})"), cells["01_naive"][6])
        self.assertEqual(table_rows(results_table.build_table(no_cublas))[0][6].count("("), 0)

    def test_csvs_without_them_give_the_table_as_before(self):
        plain = results_csv.load_rows(FIXTURES / "worklog.csv")
        self.assertNotIn("ms_p10", plain[0])
        self.assertNotIn("percentiles", results_table.build_table(plain))


class TimerSentenceTest(unittest.TestCase):
    """table.md says which timer each row used: the steps' and cuBLAS's from the CSV's timer column,
    the peers' always CUDA events (plots/shapes/peers.py)."""

    def test_each_timer_in_words(self):
        kernels, events, older = {"timer": "kernels"}, {"timer": "events"}, {}
        self.assertEqual(results_table.timer_sentence([kernels, kernels], has_peers=False),
                         " Timed by: the steps and cuBLAS by the kernels' own timestamps (CUPTI).")
        self.assertEqual(results_table.timer_sentence([events], has_peers=True),
                         " Timed by: the steps and cuBLAS by CUDA events around each run; torch.matmul and Triton "
                         "by CUDA events around each run, behind a spin kernel.")
        self.assertIn("or by CUDA events around each run where CUPTI could not be had (the CSV's timer column "
                      "says which)", results_table.timer_sentence([kernels, events], has_peers=False))
        self.assertEqual(results_table.timer_sentence([older], has_peers=False), "")  # CSVs before the column

    def test_the_committed_table_names_both_timers(self):
        table = (PLOTS / "results" / "table.md").read_text(encoding="utf-8")
        self.assertIn("Timed by: the steps and cuBLAS by the kernels' own timestamps (CUPTI); torch.matmul and "
                      "Triton by CUDA events around each run, behind a spin kernel.", table)


class TenStepsTest(unittest.TestCase):
    """worklog_ten_steps.csv: the six measured steps and four more FP16 ones, 07 and 08 on 06's
    tiles and 09 and 10 on larger ones (made-up numbers)."""

    @classmethod
    def setUpClass(cls):
        cls.data = results_csv.load_rows(FIXTURES / "worklog_ten_steps.csv")
        cls.rows = {c[0]: c for c in table_rows(results_table.build_table(cls.data))}

    def test_every_step_has_a_row_in_order(self):
        self.assertEqual(list(self.rows)[:10], [r["step"] for r in self.data])
        self.assertEqual([s[:2] for s in list(self.rows)[:10]], [f"{n:02d}" for n in range(1, 11)])
        self.assertEqual(list(self.rows)[10:], ["cuBLAS SGEMM", "cuBLAS GemmEx FP16→FP32"])

    def test_later_steps_compare_with_the_one_before(self):
        self.assertEqual([self.rows[s][7] for s in ("07_async_copy", "08_ldmatrix", "09_wgmma",
                                                    "10_warp_specialized")],
                         ["1.37×", "1.06×", "2.25×", "1.05×"])

    def test_all_are_plotted(self):
        size = results_csv.headline_size(self.data)
        self.assertEqual(len(results_csv.plottable(self.data, size)), 10)


class FailedStepTest(unittest.TestCase):
    """worklog_fail.csv: FP32 only, 02 run twice, 03 FAIL, 04 UNCHECKED without cuBLAS."""

    @classmethod
    def setUpClass(cls):
        cls.data = results_csv.load_rows(FIXTURES / "worklog_fail.csv")
        cls.rows = {c[0]: c for c in table_rows(results_table.build_table(cls.data))}

    def test_failed_step_shows_no_numbers(self):
        self.assertEqual(self.rows["03_thread_coarsening"][4:],
                         ["—", "—", "—", "—", "FAIL"])

    def test_step_after_a_failure_has_no_speedup(self):
        # 04 was run with --no-cublas: its cuBLAS and error columns are empty.
        self.assertEqual(self.rows["04_outer_product"][4:], ["0.640", "26.8", "—", "—", "UNCHECKED"])

    def test_later_run_of_a_step_wins(self):
        self.assertEqual(self.rows["02_block_tiling"][4:], ["2.50", "6.87", "16.8%", "2.56×", "PASS"])

    def test_cublas_median_includes_every_row(self):
        self.assertEqual(self.rows["cuBLAS SGEMM"][4:6], ["0.430", "40.0"])
        self.assertNotIn("cuBLAS GemmEx FP16→FP32", self.rows)

    def test_failed_rows_are_not_plotted(self):
        size = results_csv.headline_size(self.data)
        self.assertEqual(size, (2048, 2048, 2048))
        self.assertEqual([r["step"] for r in results_csv.plottable(self.data, size)],
                         ["01_naive", "02_block_tiling", "04_outer_product"])
        self.assertEqual(results_csv.failed_steps(self.data, size), ["03_thread_coarsening"])

    def test_fail_row_is_not_an_input_error(self):
        with tempfile.TemporaryDirectory() as out:
            code, _, err = run_main("--csv", FIXTURES / "worklog_fail.csv", "--out", out)
            self.assertEqual((code, err), (0, ""))


class FormattingTest(unittest.TestCase):
    def test_ms_has_three_significant_digits(self):
        for value, text in [(40, "40.0"), (2.6, "2.60"), (0.72, "0.720"), (0.00512, "0.00512"),
                            (123.4, "123")]:
            self.assertEqual(results_table.fmt_ms(value), text)

    def test_tflops_has_one_or_two_decimals(self):
        self.assertEqual(results_table.fmt_tflops(3.436), "3.44")
        self.assertEqual(results_table.fmt_tflops(723.36), "723.4")


class PeaksTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        from report import charts
        cls.resolve_peaks = staticmethod(charts.resolve_peaks)

    def test_h100_pcie_is_matched_before_h100(self):
        self.assertEqual(self.resolve_peaks("NVIDIA H100 PCIe"), (51.2, 756.5, 2000.0))
        self.assertEqual(self.resolve_peaks("NVIDIA H100 80GB HBM3"), (66.9, 989.4, 3350.0))
        self.assertEqual(self.resolve_peaks("NVIDIA H200"), (66.9, 989.4, 4800.0))

    def test_flags_override_the_table(self):
        self.assertEqual(self.resolve_peaks("NVIDIA H100 PCIe", bandwidth=1000.0),
                         (51.2, 756.5, 1000.0))

    def test_unknown_gpu_needs_all_three_flags(self):
        self.assertIsNone(self.resolve_peaks("Tesla T4", peak_fp32=8.1))
        self.assertEqual(self.resolve_peaks("Tesla T4", 8.1, 65.0, 320.0), (8.1, 65.0, 320.0))


class LabelSpreadTest(unittest.TestCase):
    """charts.spread_label_shifts: names of points that would overlap move apart."""

    @classmethod
    def setUpClass(cls):
        from report import charts
        cls.shifts = staticmethod(charts.spread_label_shifts)

    @staticmethod
    def moved(boxes, shifts):
        return [(x0, y0 + s, x1, y1 + s) for (x0, y0, x1, y1), s in zip(boxes, shifts)]

    def assert_apart(self, boxes, gap):
        for i, a in enumerate(boxes):
            for b in boxes[i + 1:]:
                side_by_side = a[2] <= b[0] or b[2] <= a[0]
                self.assertTrue(side_by_side or a[1] >= b[3] + gap - 1e-6 or b[1] >= a[3] + gap - 1e-6,
                                (a, b))

    def test_apart_labels_stay(self):
        boxes = [(0, 0, 50, 10), (0, 20, 50, 30), (60, 0, 110, 10)]  # above, and side by side
        self.assertEqual(self.shifts(boxes, gap=2), [0.0, 0.0, 0.0])

    def test_two_overlapping_labels_move_apart_evenly(self):
        boxes = [(0, 0, 50, 10), (5, 4, 60, 14)]  # the second is higher: it goes up
        shifts = self.shifts(boxes, gap=2)
        self.assertEqual(shifts, [-4.0, 4.0])
        self.assert_apart(self.moved(boxes, shifts), gap=2)

    def test_a_crowd_of_labels_ends_apart_in_its_order(self):
        # Four steps of about the same intensity and speed, and one further down that the
        # crowd pushes on.
        boxes = [(0, 0, 80, 10), (2, 1, 70, 11), (1, 2, 90, 12), (0, 3, 60, 13), (0, -12, 50, -2)]
        shifts = self.shifts(boxes, gap=1)
        moved = self.moved(boxes, shifts)
        self.assert_apart(moved, gap=1)
        order = sorted(range(5), key=lambda i: -moved[i][1])
        self.assertEqual(order, [3, 2, 1, 0, 4])  # the highest anchor keeps the highest name


def assert_png(test, path):
    test.assertGreater(path.stat().st_size, 0, path)
    test.assertEqual(path.read_bytes()[:8], PNG_SIGNATURE, path)


class OutputFilesTest(unittest.TestCase):
    def test_all_outputs_written(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "new" / "dir"  # created by make_plots
            code, stdout, err = run_main("--csv", FIXTURES / "worklog.csv",
                                         "--sweep", FIXTURES / "sweep.csv", "--out", out)
            self.assertEqual((code, err), (0, ""))
            names = ["table.md", "tflops.png", "sweep.png", "roofline.png"]
            self.assertEqual(stdout.splitlines(), [str(out / n) for n in names])
            for name in names[1:]:
                assert_png(self, out / name)

    def test_ten_steps_drawn(self):
        with tempfile.TemporaryDirectory() as out:
            code, stdout, err = run_main("--csv", FIXTURES / "worklog_ten_steps.csv", "--out", out)
            self.assertEqual((code, err), (0, ""))
            for name in ("tflops.png", "roofline.png"):
                assert_png(self, Path(out) / name)

    def test_table_only(self):
        with tempfile.TemporaryDirectory() as out:
            code, stdout, err = run_main("--csv", FIXTURES / "worklog.csv", "--out", out, "--table-only")
            self.assertEqual((code, err), (0, ""))
            self.assertEqual(stdout.splitlines(), [str(Path(out) / "table.md")])
            self.assertEqual([p.name for p in Path(out).iterdir()], ["table.md"])

    def test_without_matplotlib_the_table_is_written_with_one_warning(self):
        with tempfile.TemporaryDirectory() as tmp:
            python = python_without_matplotlib.make(Path(tmp) / "venv")
            out = Path(tmp) / "out"
            done = subprocess.run([str(python), str(PLOTS / "report" / "make_plots.py"),
                                   "--csv", str(FIXTURES / "worklog.csv"),
                                   "--sweep", str(FIXTURES / "sweep.csv"), "--out", str(out)],
                                  capture_output=True, text=True, timeout=60)
            self.assertEqual(done.returncode, 0, done.stderr)
            self.assertEqual(done.stdout.splitlines(), [str(out / "table.md")])
            self.assertEqual(len(done.stderr.splitlines()), 1, done.stderr)
            self.assertRegex(done.stderr, r"^make_plots: warning: matplotlib is not installed for .*, "
                                          r"so only table.md was written; for the charts: "
                                          r".* -m pip install -r .*requirements.txt")
            self.assertEqual([p.name for p in out.iterdir()], ["table.md"])

    def test_roofline_skipped_for_unknown_gpu_and_drawn_with_flags(self):
        with tempfile.TemporaryDirectory() as tmp:
            csv_file = Path(tmp) / "t4.csv"
            text = (FIXTURES / "worklog.csv").read_text(encoding="utf-8")
            csv_file.write_text(text.replace("NVIDIA H100 80GB HBM3", "Tesla T4"), encoding="utf-8")
            out = Path(tmp) / "out"
            code, _, err = run_main("--csv", csv_file, "--out", out)
            self.assertEqual(code, 0)
            self.assertIn("make_plots: warning: no datasheet peaks for 'Tesla T4'", err)
            self.assertEqual(len(err.splitlines()), 1)
            self.assertFalse((out / "roofline.png").exists())

            code, _, err = run_main("--csv", csv_file, "--out", out, "--peak-fp32", "8.1",
                                    "--peak-fp16", "65", "--bandwidth", "320")
            self.assertEqual((code, err), (0, ""))
            assert_png(self, out / "roofline.png")


class BadInputTest(unittest.TestCase):
    def assert_input_error(self, csv_name, message):
        with tempfile.TemporaryDirectory() as out:
            code, stdout, err = run_main("--csv", FIXTURES / csv_name, "--out", out)
            self.assertEqual(code, 2)
            self.assertEqual(stdout, "")
            self.assertEqual(len(err.splitlines()), 1, err)
            self.assertTrue(err.startswith("make_plots: error: "), err)
            self.assertIn(message, err)
            self.assertEqual(list(Path(out).iterdir()), [])  # nothing written

    def test_missing_file(self):
        self.assert_input_error("no_such.csv", "no_such.csv: no such file")

    def test_empty_file(self):
        self.assert_input_error("empty.csv", "empty CSV (no header line)")

    def test_header_without_rows(self):
        self.assert_input_error("header_only.csv", "no data rows")

    def test_bad_header_names_the_columns(self):
        self.assert_input_error("bad_header.csv",
                                "bad header: missing columns: ms; unknown columns: time_ms, notes")

    def test_text_in_a_numeric_column(self):
        self.assert_input_error("bad_number.csv", "line 2: column 'ms' is not a number: 'fast'")

    def test_bad_sweep_file(self):
        with tempfile.TemporaryDirectory() as out:
            code, _, err = run_main("--csv", FIXTURES / "worklog.csv",
                                    "--sweep", FIXTURES / "bad_number.csv", "--out", out)
        self.assertEqual(code, 2)
        self.assertIn("bad_number.csv, line 2: column 'ms' is not a number", err)

    def test_load_rows_raises_input_error(self):
        with self.assertRaises(results_csv.InputError):
            results_csv.load_rows(FIXTURES / "empty.csv")


if __name__ == "__main__":
    unittest.main()
