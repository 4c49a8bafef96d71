"""Tests for plots/readme/filler.py: finding generated blocks and quoted cells in a README, rendering
them on small fixtures, rewriting and checking; and the check of this repository's own READMEs
against the committed plots/results (a README that differs from what the CSVs give fails here).

Run from anywhere:  python3 -m unittest discover -s plots/tests -v
"""
import contextlib
import io
import json
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from support import PLOTS, FIXTURES  # noqa: E402  (first: it sets the import path)
from readme import filler  # noqa: E402
from readme import formats, table  # noqa: E402
from run import registrations  # noqa: E402
from test_registrations import fake_step  # noqa: E402
from report import results_csv  # noqa: E402
from report import results_table  # noqa: E402
from readme.filler import BlockError, Results  # noqa: E402

# A small experiments.csv: a step and a variant at two sizes, three processes, a range kept as min/max.
EXPERIMENTS = """experiment,date,gpu,step,variant,m,n,k,run,metric,value,source
one_process_each,2026-11-21,NVIDIA H200,06_multiwarp_wmma,,8192,8192,8192,,tflops,107.4,test
one_process_each,2026-11-21,NVIDIA H200,06_multiwarp_wmma,,8192,8192,8192,,pct_cublas,14.2,test
one_process_each,2026-11-21,NVIDIA H200,06_multiwarp_wmma,,8192,8192,8192,,ms,10.235,test
one_process_each,2026-11-21,NVIDIA H200,06_multiwarp_wmma,wide,8192,8192,8192,,tflops,74,test
three_processes,2026-11-21,NVIDIA H200,06_multiwarp_wmma,,4096,4096,4096,1,pct_cublas,14.5,test
three_processes,2026-11-21,NVIDIA H200,06_multiwarp_wmma,,4096,4096,4096,2,pct_cublas,14.1,test
three_processes,2026-11-21,NVIDIA H200,06_multiwarp_wmma,,4096,4096,4096,3,pct_cublas,14.3,test
three_processes,2026-11-21,NVIDIA H200,06_multiwarp_wmma,,4096,4096,4096,min,ms,1.29,test
three_processes,2026-11-21,NVIDIA H200,06_multiwarp_wmma,,4096,4096,4096,max,ms,1.31,test
mma_peak,2026-11-21,NVIDIA H200,08_mma_ldmatrix,mma_peak,,,,,tflops,647.3,test
"""


def fixture_results(root):
    """A results folder with the fixtures' worklog, sweep and profile CSVs and EXPERIMENTS."""
    folder = Path(root) / "plots" / "results"
    folder.mkdir(parents=True)
    for name in ("worklog.csv", "sweep.csv", "profile.csv"):
        shutil.copy(FIXTURES / name, folder / name)
    (folder / "experiments.csv").write_text(EXPERIMENTS, encoding="utf-8")
    return folder


def cell(spec, text="?"):
    return f"<!-- cell: {spec} -->{text}<!-- /cell -->"


def block(name, body="", options=""):
    begin = f"{name} {options}" if options else name
    return f"<!-- BEGIN generated: {begin} -->\n{body}<!-- END generated: {name} -->\n"


def fixture_build(folder, registered=None):
    """A bin folder at `folder` with a fake executable for every step of this checkout's build, each
    answering --list-variants as a step does: STEP adds "what STEP adds" and registers no variant,
    unless `registered` ({step: (what it adds, {variant: description})}) says otherwise."""
    for step in registrations.steps(filler.CHECKOUT):
        adds, variants = (registered or {}).get(step, (f"what {step} adds", {}))
        fake_step(folder, step, json.dumps({"step": step, "adds": adds, "variants": [
            {"name": name, "description": description} for name, description in variants.items()]}))
    return Path(folder)


def fixture_checkout(root):
    """A build at root/bin whose 06_multiwarp_wmma registers the variant `wide` (EXPERIMENTS' variant)
    and says what it adds, and which has no 05_wmma; returns the bin folder."""
    folder = fixture_build(Path(root) / "bin", {"06_multiwarp_wmma": ("4 warps, 64x64 warp tiles",
                                                                      {"wide": "warp tiles of 64 x 128"})})
    (folder / "05_wmma").unlink()
    return folder


class FindTest(unittest.TestCase):
    def error(self, text):
        with self.assertRaises(BlockError) as caught:
            filler.find(text, "X.md")
        return str(caught.exception)

    def test_blocks_and_cells_in_order_with_their_lines(self):
        text = ("# Title\n\n" + block("results_table", "old\n") + "\nAt " + cell("worklog.csv step=01_naive column=ms")
                + " ms.\n\n" + block("measured/01_naive"))
        found = filler.find(text, "X.md")
        self.assertEqual([(f.kind, f.name, f.line) for f in found],
                         [("block", "results_table", 3), ("cell", "worklog.csv step=01_naive column=ms", 7),
                          ("block", "measured/01_naive", 9)])
        self.assertEqual(text[found[0].start:found[0].end], "old\n")  # what the writer replaces
        self.assertEqual(text[found[1].start:found[1].end], "?")
        self.assertEqual(text[found[2].start:found[2].end], "")

    def test_unknown_block_names_file_and_line(self):
        message = self.error("a\n\n" + block("no_such_block"))
        self.assertTrue(message.startswith("X.md:3: unknown block 'no_such_block' (known: "), message)
        self.assertIn("measured/step", message)

    def test_a_block_taking_an_argument_needs_one_and_others_take_none(self):
        self.assertIn("X.md:1: unknown block 'measured'", self.error(block("measured")))
        self.assertIn("X.md:1: unknown block 'results_table/x'", self.error(block("results_table/x")))

    def test_begin_without_end(self):
        self.assertEqual(self.error("a\n<!-- BEGIN generated: results_table -->\ntext\n"),
                         "X.md:2: BEGIN generated: results_table has no END")

    def test_end_without_begin(self):
        self.assertEqual(self.error("a\nb\n<!-- END generated: sweep -->\n"),
                         "X.md:3: END generated: sweep without a BEGIN")

    def test_end_of_another_block(self):
        self.assertEqual(self.error("<!-- BEGIN generated: sweep -->\n<!-- END generated: results_table -->\n"),
                         "X.md:2: END generated: results_table closes BEGIN generated: sweep (line 1)")

    def test_nested_begin(self):
        self.assertIn("X.md:2: BEGIN generated: sweep inside the block 'results_table' opened on line 1",
                      self.error("<!-- BEGIN generated: results_table -->\n<!-- BEGIN generated: sweep -->\n"))

    def test_mistyped_markers_are_errors_not_text(self):
        for line in ("<!-- BEGIN generated:results_table -->", "<!--BEGIN generated: sweep-->",
                     "text <!-- END generated: sweep -->", "<!-- begin generated: sweep -->"):
            with self.subTest(line=line):
                self.assertIn("X.md:2: not a marker", self.error("a\n" + line + "\n"))

    def test_a_blocks_options_are_on_its_begin_line(self):
        text = block("counters/02_block_tiling", "old\n", "compare=01_naive rows=l2_bytes,tensor")
        found = filler.find(text, "X.md")
        self.assertEqual([(f.kind, f.name, f.options) for f in found],
                         [("block", "counters/02_block_tiling", "compare=01_naive rows=l2_bytes,tensor")])
        self.assertEqual(text[found[0].start:found[0].end], "old\n")

    def test_options_that_cannot_be_read(self):
        for name, options, message in (
                ("counters/02_block_tiling", "rows=l2_bytes", "needs compare= on its BEGIN line"),
                ("counters/02_block_tiling", "compare=01_naive rows=a colour=red",
                 "unknown option 'colour=' (this block's options: compare=, precision=, rows=)"),
                ("counters/02_block_tiling", "compare=01_naive compare=x rows=a", "'compare=' given twice"),
                ("counters/02_block_tiling", "compare=01_naive rows", "'rows' is not KEY=VALUE"),
                ("sweep", "rows=a", "unknown option 'rows=' (this block's options: none)")):
            with self.subTest(options=options):
                self.assertIn(f"X.md:1: block '{name}': " + message, self.error(block(name, "", options)))

    def test_markers_in_code_are_not_read(self):
        text = ("Write `<!-- BEGIN generated: NAME -->` and `" + cell("x.csv column=y") + "`.\n\n"
                "```\n<!-- BEGIN generated: nothing -->\n" + cell("worklog.csv column=ms") + "\n```\n")
        self.assertEqual(filler.find(text, "X.md"), [])

    def test_a_cell_must_not_start_a_line(self):
        self.assertIn("X.md:2: a cell must not start a line",
                      self.error("Some words\n  " + cell("worklog.csv column=ms") + " ms.\n"))

    def test_a_cell_is_one_line(self):
        self.assertIn("X.md:1: a cell is '<!-- cell: FILE KEY=VALUE... -->TEXT<!-- /cell -->', all on one line",
                      self.error("At <!-- cell: worklog.csv column=ms -->1.0\n<!-- /cell --> ms.\n"))

    def test_cell_specs_that_cannot_be_read(self):
        for spec, message in (("step=01_naive column=ms", "a cell starts with the CSV file"),
                              ("worklog.csv step=01_naive", "a cell needs column="),
                              ("worklog.csv column=ms agg=mean", "agg= must be one of"),
                              ("worklog.csv column=ms scale=x", "scale= must be a number"),
                              ("worklog.csv column=ms column=tflops", "'column=' given twice"),
                              ("worklog.csv column=ms oops", "'oops' is not KEY=VALUE"),
                              ("../secret.csv column=ms", "'../secret.csv' is not the name of a CSV")):
            with self.subTest(spec=spec):
                self.assertIn("X.md:1: " + message, self.error("At " + cell(spec) + ".\n"))


class RenderTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.folder = fixture_results(cls.tmp.name)
        cls.results = Results(cls.folder, bin_dir=fixture_build(Path(cls.tmp.name) / "bin"))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def render(self, name, options=""):
        return filler.render_block(name, self.results, options)

    def cell(self, spec):
        return filler.render_cell(spec, self.results)

    def test_block_text_is_the_note_then_the_markdown_between_blank_lines(self):
        text = self.render("results_table")
        self.assertTrue(text.startswith("<!-- written by plots/readme/filler.py from plots/results/worklog.csv, "
                                        "plots/results/profile.csv, plots/results/peers.csv; do not edit -->\n\n"), text)
        self.assertTrue(text.endswith("\n\n"))

    def test_results_table_is_table_md(self):
        # What make_plots writes as table.md, from the same worklog.csv and profile.csv.
        rows = results_csv.load_rows(self.folder / "worklog.csv")
        from profiling.profile_csv import limited_by_step, load_profile
        table = results_table.build_table(rows, limited_by_step(load_profile(self.folder / "profile.csv")))
        self.assertEqual(self.render("results_table").split("\n\n", 1)[1], table.rstrip() + "\n\n")

    def test_measured_row_of_a_step(self):
        text = self.render("measured/02_block_tiling")
        self.assertIn("NVIDIA H100 80GB HBM3 (132 SMs), CUDA 13.0 (driver 13.0), 2026-11-21", text)
        self.assertIn("| M×N×K | precision | median ms | TFLOP/s | cuBLAS TFLOP/s | % of cuBLAS | "
                      "speed-up over 01_naive | check |", text)
        # 01 took 40.0 ms and 02 14.5 ms: 2.76×.
        self.assertIn("| 4096×4096×4096 | FP32 | 14.5 | 9.48 | 52.9 | 17.9% | 2.76× | PASS |", text)

    def test_measured_marks_a_change_of_precision_and_the_first_step_has_no_speedup(self):
        self.assertIn("(vs FP32) | PASS |", self.render("measured/05_wmma"))
        self.assertIn("| speed-up over previous step | check |", self.render("measured/01_naive"))
        self.assertIn("| — | PASS |", self.render("measured/01_naive"))

    def test_an_unknown_step_is_missing(self):
        with self.assertRaises(filler.Missing) as caught:
            self.render("measured/99_nothing")
        self.assertIn("worklog.csv has no rows with step=99_nothing", str(caught.exception))

    def test_sweep_table_and_one_step_of_it(self):
        text = self.render("sweep")
        self.assertIn("| N | 04_outer_product (FP32) | cuBLAS SGEMM | % of cuBLAS |", text)
        self.assertIn("| 256 | 1.90 | 3.10 | 61.3% |", text)
        self.assertIn("| 256 | 0.0177 | 1.90 | 3.10 | 61.3% | PASS |", self.render("sweep_points/04_outer_product"))

    def test_counters_compare_a_step_with_what_its_readme_names(self):
        text = self.render("counters/02_block_tiling", "compare=01_naive rows=dram_bytes,shared_ld_per_fma,conflicts")
        self.assertIn("|  | 01_naive | 02_block_tiling |", text)
        rows = [line for line in text.splitlines() if line.startswith("| ") and not line.startswith("|  |")]
        self.assertEqual(rows, ["| DRAM bytes (read + write) | 1.95 GB | 671 MB |",
                                "| shared load instructions per FMA instruction | 0 | 2 |",
                                "| shared bank conflicts / wavefronts | 0 / 0 | 2,147,483,648 / 6.44 G (33.3%) |"])
        self.assertIn("an FMA instruction is one warp FFMA", text)
        text = self.render("counters/01_naive", "compare=cuBLAS precision=fp32 rows=l2_bytes")
        self.assertIn("| cuBLAS SGEMM | 01_naive |", text)
        self.assertNotIn("an FMA instruction", text)
        with self.assertRaises(filler.Missing) as caught:
            self.render("counters/01_naive", "compare=cuBLAS rows=l2_bytes,colour")
        self.assertIn("unknown counter row(s) colour in rows=", str(caught.exception))

    def test_variants_say_what_changes_as_the_kernel_registers_it(self):
        with tempfile.TemporaryDirectory() as tmp:
            results = Results(self.folder, bin_dir=fixture_checkout(tmp))
            text = filler.render_block("variants/06_multiwarp_wmma", results, "rows=06_multiwarp_wmma,wide")
            self.assertIn("each in its own process in one session", text)
            self.assertIn("| variant | what changes | 4096³ TFLOP/s | 8192³ TFLOP/s |", text)  # no % for `wide`
            self.assertIn("| (the step) | 4 warps, 64x64 warp tiles | — | 107.4 |", text)
            self.assertIn("| `wide` | warp tiles of 64 x 128 | — | 74.0 |", text)
            text = filler.render_block("variants/06_multiwarp_wmma", results,
                                              "labels=flags rows=06_multiwarp_wmma/wide,06_multiwarp_wmma")
            self.assertIn("| `--variant wide` | warp tiles of 64 x 128 | — | 74.0 |\n"
                          "| 06_multiwarp_wmma | 4 warps, 64x64 warp tiles | — | 107.4 |", text)
            for options, message in (("rows=06_multiwarp_wmma,narrow", "registers no variant 'narrow' (it registers: wide)"),
                                     ("rows=05_wmma", "05_wmma: no such executable"),
                                     ("labels=mine rows=wide", "labels= must be one of names, flags"),
                                     ("rows=06_multiwarp_wmma/", "'06_multiwarp_wmma/' is not STEP/VARIANT")):
                with self.subTest(options=options), self.assertRaises(filler.Missing) as caught:
                    filler.render_block("variants/06_multiwarp_wmma", results, options)
                self.assertIn(message, str(caught.exception))

    def test_profile_summary_has_every_step_and_cublas(self):
        text = self.render("profile_summary")
        for name in ("01_naive", "06_multiwarp_wmma", "cuBLAS FP32", "cuBLAS FP16→FP32"):
            self.assertIn(f"| {name} |", text)

    def test_ladder_has_a_row_per_step_then_cublas_after_the_steps_it_measures(self):
        text = self.render("ladder")
        self.assertIn("| step | what it adds | precision | TFLOP/s | % of cuBLAS | what holds it back (measured) |\n", text)
        lines = [line for line in text.splitlines() if line.startswith("| [") or line.startswith("| cuBLAS")]
        # The fixture measured 01-06; the checkout's later steps keep their rows, marked as not measured,
        # after the last measured step and before its yardstick.
        later = [s for s in registrations.steps(filler.CHECKOUT) if s > "06_multiwarp_wmma"]
        self.assertEqual([line.split(" | ")[0] for line in lines],
                         ["| [01_naive](01_naive/)", "| [02_block_tiling](02_block_tiling/)",
                          "| [03_thread_coarsening](03_thread_coarsening/)", "| [04_outer_product](04_outer_product/)",
                          "| cuBLAS SGEMM", "| [05_wmma](05_wmma/)", "| [06_multiwarp_wmma](06_multiwarp_wmma/)"]
                         + [f"| [{s}]({s}/)" for s in later] + ["| cuBLAS GemmEx FP16→FP32"])
        for s in later:
            self.assertIn(f"| [{s}]({s}/) | what {s} adds |  | not in this run |", text)
        self.assertIn("| [02_block_tiling](02_block_tiling/) | shared-memory tiles of A and B | FP32 | 9.48 | 17.9% | "
                      "threads queueing on the same shared-memory banks |", text)
        self.assertIn("| cuBLAS SGEMM | the yardstick of 01–04 | FP32 |", text)
        self.assertIn("| cuBLAS GemmEx FP16→FP32 | the yardstick of 05–06 | FP16→FP32 |", text)

    def test_ladder_and_cells_take_the_median_of_a_steps_processes(self):
        # The fixture's worklog three times over, 02's % of cuBLAS 17.9 (the fixture's), 30.0 and 5.0
        # in the three processes: the ladder and a cell show the median process's row, and say how many.
        import csv as csv_module
        with tempfile.TemporaryDirectory() as tmp:
            folder = fixture_results(tmp)
            with open(folder / "worklog.csv", newline="", encoding="utf-8") as f:
                reader = csv_module.DictReader(f)
                header, rows = reader.fieldnames, list(reader)
            processes = []
            for pct in (None, "30.0", "5.0"):
                for row in rows:
                    copy = dict(row)
                    if pct and copy["step"] == "02_block_tiling":
                        copy["pct_cublas"] = pct
                    processes.append(copy)
            with open(folder / "worklog.csv", "w", newline="", encoding="utf-8") as f:
                writer = csv_module.DictWriter(f, fieldnames=header, lineterminator="\n")
                writer.writeheader()
                writer.writerows(processes)
            results = Results(folder)
            text = filler.render_block("ladder", results, "")
            self.assertIn("each step's row the median of its 3 processes by % of cuBLAS", text)
            self.assertIn("| [02_block_tiling](02_block_tiling/) | shared-memory tiles of A and B | FP32 | 9.48 | 17.9% |",
                          text)
            self.assertEqual(filler.render_cell("worklog.csv step=02_block_tiling column=pct_cublas format=.1f", results),
                             "17.9")
        # A process that failed its check is what the step's row shows, whatever the others measured.
        from report.results_csv import median_per_step
        passed = {"step": "02_block_tiling", "m": 64, "n": 64, "k": 64, "status": "PASS", "pct_cublas": 50.0}
        failed = {**passed, "status": "FAIL", "pct_cublas": None}
        self.assertEqual([r["status"] for r in median_per_step([passed, failed, passed])], ["FAIL"])
        self.assertEqual(median_per_step([passed, failed, passed])[0]["processes"], 3)

    def test_ladder_links_its_plain_words_to_the_counters(self):
        text = self.render("ladder", "counters=#the-counters")
        self.assertIn("| 17.9% | [threads queueing on the same shared-memory banks](#the-counters) |", text)
        self.assertIn("| the counter that shows it |", self.render("profile_summary"))
        self.assertIn("| shared-memory bank conflicts | 33.3% of the shared wavefronts are bank conflicts |",
                      self.render("profile_summary"))
        plain = formats.plain_limit
        self.assertEqual(plain("latency (waiting for global/local memory)"), "waiting for global/local memory")
        self.assertEqual(plain("memory bandwidth (L2)"), "moving data through the L2 cache")
        self.assertEqual(plain("something new"), "something new")

    def test_ladder_says_where_each_later_step_pays(self):
        # The fixture's shapes, their 10 and 08 renamed as two steps of the fixture's ladder, 06 after 05.
        shapes = (FIXTURES / "shapes.csv").read_text(encoding="utf-8")
        shapes = shapes.replace("10_persistent_clusters", "06_multiwarp_wmma").replace("08_mma_ldmatrix", "05_wmma")
        with tempfile.TemporaryDirectory() as tmp:
            folder = fixture_results(tmp)
            (folder / "shapes.csv").write_text(shapes, encoding="utf-8")
            results = Results(folder)
            text = filler.render_block("ladder", results, "pays=06_multiwarp_wmma:1x4096x4096")
            self.assertIn("| on the shapes it is for: % of cuBLAS (the step before) |", text)
            self.assertIn("`plots/results/shapes.csv`; GPU: ", text)
            self.assertIn(" | 80.0% at 1×4096×4096 (05: 90.0%) |", text)
            self.assertRegex(text, r"\| \[05_wmma\]\(05_wmma/\) .* \|  \|\n")
            # The corpus: every passed shape once (06's failed 4097 is left out), geometric means.
            text = filler.render_block("ladder", results, "pays=06_multiwarp_wmma:corpus")
            self.assertIn(" | 61.2% geometric mean over the corpus's 7 shapes (05: 67.4%) |", text)
            for pays, message in (("01_naive:1x1x1", "not a step of the ladder after its first"),
                                  ("06_multiwarp_wmma:1x2", "is not STEP:MxNxK or STEP:corpus"),
                                  ("06_multiwarp_wmma:7x7x7", "no passed row of 06_multiwarp_wmma at 7×7×7")):
                with self.subTest(pays=pays), self.assertRaises(filler.Missing) as caught:
                    filler.render_block("ladder", results, f"pays={pays}")
                self.assertIn(message, str(caught.exception))

    def test_the_counter_that_shows_each_verdict(self):
        counter = formats.limiting_counter
        self.assertEqual(counter({"limited_by": "tensor pipe", "tensor_pipe_pct": 85.68}), "tensor pipe busy 85.7%")
        self.assertEqual(counter({"limited_by": "memory bandwidth (L2)", "l2_throughput_pct": 81.0}), "L2 busy 81.0%")
        self.assertEqual(counter({"limited_by": "issue", "issue_active_pct": 75.2, "sm_throughput_pct": 72.97}),
                         "issue slots busy 75.2%")
        self.assertEqual(counter({"limited_by": "issue", "issue_active_pct": 60.0, "sm_throughput_pct": 71.3}),
                         "SM busy 71.3%")
        self.assertEqual(counter({"limited_by": "latency (waiting for global/local memory)",
                                  "top_stall": "long_scoreboard", "top_stall_per_issue": 29.05}),
                         "29.1 warps stalled on long_scoreboard per issued instruction")
        self.assertIsNone(counter({"limited_by": "n/a"}))
        self.assertEqual(self.cell("profile.csv step=02_block_tiling column=limiting_counter"),
                         "33.3% of the shared wavefronts are bank conflicts")

    def test_cells(self):
        self.assertEqual(self.cell("worklog.csv step=02_block_tiling column=pct_cublas format=.1f"), "17.9")
        self.assertEqual(self.cell("worklog.csv step=02_block_tiling column=ms format=ms"), "14.5")
        self.assertEqual(self.cell("worklog.csv step=02_block_tiling column=gpu"), "NVIDIA H100 80GB HBM3")
        self.assertEqual(self.cell("sweep.csv step=04_outer_product n=256 column=tflops format=tflops"), "1.90")
        self.assertEqual(self.cell("worklog.csv step=01_naive column=global_bytes format=bytes"), "550 GB")
        self.assertEqual(self.cell("worklog.csv step=01_naive column=global_bytes scale=1e9 format=.1f"), "549.8")

    def test_cells_over_several_rows(self):
        pct = "experiments.csv experiment=three_processes metric=pct_cublas column=value format=.1f"
        self.assertEqual(self.cell(pct + " agg=range"), "14.1–14.5")
        self.assertEqual(self.cell(pct + " agg=list"), "14.5, 14.1, 14.3")
        self.assertEqual(self.cell(pct + " agg=median"), "14.3")
        self.assertEqual(self.cell(pct + " agg=geomean"), "14.3")  # (14.5 · 14.1 · 14.3)^(1/3) = 14.299
        self.assertEqual(self.cell(pct + " agg=max run=1|2"), "14.5")
        self.assertEqual(self.cell("experiments.csv experiment=three_processes metric=ms column=value "
                                   "agg=range format=.2f"), "1.29–1.31")
        self.assertEqual(self.cell("profile.csv step=01_naive|02_block_tiling column=dram_flop_per_byte "
                                   "agg=range format=.0f"), "71–205")

    def test_a_ratio_of_two_rows(self):
        # 02's DRAM bytes over 01's, from the fixture's profile.csv: the quotient of the two cells.
        over = float(self.cell("profile.csv step=02_block_tiling column=dram_bytes over.step=01_naive format=.6f"))
        two = float(self.cell("profile.csv step=02_block_tiling column=dram_bytes format=.1f"))
        one = float(self.cell("profile.csv step=01_naive column=dram_bytes format=.1f"))
        self.assertAlmostEqual(over, two / one, places=5)
        for spec, message in (
                ("profile.csv step=02_block_tiling column=dram_bytes over.step=99_x", "no row to divide by"),
                ("profile.csv step=02_block_tiling column=dram_bytes over.=x", "over. needs a column"),
                ("profile.csv step=02_block_tiling column=dram_bytes over.step=01_naive agg=max", "not agg="),
                ("profile.csv step=02_block_tiling column=top_stall over.step=01_naive", "a number on each side")):
            with self.subTest(spec=spec), self.assertRaises(filler.Missing) as caught:
                self.cell(spec)
            self.assertIn(message, str(caught.exception))

    def test_an_empty_selector_matches_an_empty_cell(self):
        self.assertEqual(self.cell("experiments.csv experiment=one_process_each variant= metric=tflops "
                                   "column=value format=.1f"), "107.4")

    def test_derived_profile_quantities(self):
        self.assertEqual(self.cell("profile.csv step=02_block_tiling column=dram_bytes format=bytes"), "671 MB")
        self.assertEqual(self.cell("profile.csv step=02_block_tiling column=shared_ld_per_fma format=g"), "2")
        self.assertEqual(self.cell("profile.csv step=02_block_tiling column=conflict_pct format=.1f"), "33.3")

    def test_cell_errors(self):
        for spec, message in (
                ("worklog.csv step=99_x column=ms", "no row (expected one)"),
                ("worklog.csv precision=fp32 column=ms", "4 rows (expected one)"),
                ("worklog.csv step=01_naive column=nope", "worklog.csv has no column 'nope'"),
                ("worklog.csv nope=1 column=ms", "worklog.csv has no column 'nope'"),
                ("worklog.csv step=01_naive column=dram_bytes", "no column 'dram_bytes'"),
                ("missing.csv column=x", "no such file"),
                ("worklog.csv step=01_naive column=ms format=%%", "bad format"),
                ("worklog.csv precision=fp32 column=gpu agg=max", "needs a number in every row")):
            with self.subTest(spec=spec), self.assertRaises(filler.Missing) as caught:
                self.cell(spec)
            self.assertIn(message, str(caught.exception))

    def test_formats(self):
        self.assertEqual(formats.significant(3.4, 3), "3.40")
        self.assertEqual(formats.significant(999.7, 3), "1000")
        self.assertEqual(formats.significant(0.06251, 3), "0.0625")
        self.assertEqual(formats.format_value(396e6, "bytes"), "396 MB")
        self.assertEqual(formats.format_value(999.7e6, "bytes"), "1.00 GB")
        self.assertEqual(formats.format_value(1.3701e9, "bytes4"), "1.370 GB")
        self.assertEqual(formats.format_value(21200365, "count"), "21.2 M")
        self.assertEqual(formats.format_value(0.2204, "auto"), "0.22")
        self.assertEqual(formats.format_value(30.42, "auto"), "30.4")


class RewriteTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)
        self.folder = fixture_results(self.root)
        self.results = Results(self.folder)
        self.readme = self.root / "README.md"
        self.text = ("# Worklog\n\nThe naive step ran at " + cell("worklog.csv step=01_naive column=tflops "
                     "format=tflops", "9.99") + " TFLOP/s.\n\n" + block("measured/01_naive", "stale\n")
                     + "\nThe end.\n")
        self.readme.write_text(self.text, encoding="utf-8")

    def tearDown(self):
        self.tmp.cleanup()

    def test_check_lists_what_differs(self):
        differences = filler.check(self.text, self.results, "README.md")
        self.assertEqual([(d.line, d.kind, d.committed) for d in differences],
                         [(3, "cell", "9.99"), (5, "block", "stale\n")])
        self.assertEqual(differences[0].expected, "3.44")
        self.assertEqual(filler.describe(differences[0]),
                         "README.md:3: cell 'worklog.csv step=01_naive column=tflops format=tflops' reads '9.99'; "
                         "the results give '3.44'")
        self.assertIn("README.md:5: block 'measured/01_naive' differs:\n    @@ -1 +1,8 @@\n    -stale\n"
                      "    +<!-- written by",
                      filler.describe(differences[1]))

    def test_rewrite_fills_blocks_and_cells_and_keeps_the_rest(self):
        self.assertTrue(filler.rewrite(self.readme, self.results))
        text = self.readme.read_text(encoding="utf-8")
        self.assertIn("The naive step ran at " + cell("worklog.csv step=01_naive column=tflops format=tflops",
                                                      "3.44") + " TFLOP/s.\n", text)
        self.assertIn("| 4096×4096×4096 | FP32 | 40.0 | 3.44 |", text)
        self.assertTrue(text.startswith("# Worklog\n\n") and text.endswith("-->\n\nThe end.\n"))
        self.assertEqual(filler.check(text, self.results), [])
        self.assertFalse(filler.rewrite(self.readme, self.results))  # a second time: nothing to do

    def test_an_excerpt_quotes_the_code_between_its_markers(self):
        step = self.root / "01_naive"
        step.mkdir()
        (step / "kernel.cu").write_text(
            "int before;\n  // EXCERPT BEGIN loop\n  for (int k = 0; k < n; ++k) {\n    // LAB BEGIN body\n"
            "    sum += a[k] * b[k];\n    // LAB END\n  }\n  // EXCERPT END loop\nint after;\n", encoding="utf-8")
        readme = step / "README.md"
        readme.write_text("# 01\n\nThe loop:\n\n<!-- BEGIN generated: excerpt/loop file=kernel.cu -->\nold\n"
                          "<!-- END generated: excerpt/loop -->\n", encoding="utf-8")
        self.assertTrue(filler.rewrite(readme, self.results))
        text = readme.read_text(encoding="utf-8")
        self.assertIn("<!-- written by plots/readme/filler.py from kernel.cu; do not edit -->\n\n"
                      "[`kernel.cu`](kernel.cu), lines 3–7:\n\n```cuda\nfor (int k = 0; k < n; ++k) {\n"
                      "  sum += a[k] * b[k];\n}\n```\n\n<!-- END generated: excerpt/loop -->", text)
        self.assertEqual(filler.check(text, self.results, str(readme)), [])
        # The code changes: the README no longer matches it.
        (step / "kernel.cu").write_text((step / "kernel.cu").read_text().replace("b[k]", "b[k * ldb]"))
        self.assertEqual(len(filler.check(text, self.results, str(readme))), 1)
        for source, message in (("int x;\n", "needs one '// EXCERPT BEGIN loop'"),
                                ("// EXCERPT END loop\n// EXCERPT BEGIN loop\n", "needs one"),
                                ("// EXCERPT BEGIN loop\n\n// EXCERPT END loop\n", "holds no code")):
            (step / "kernel.cu").write_text(source)
            with self.subTest(source=source), self.assertRaises(BlockError) as caught:
                filler.check(text, self.results, str(readme))
            self.assertIn(message, str(caught.exception))
        readme.write_text("<!-- BEGIN generated: excerpt/loop -->\n<!-- END generated: excerpt/loop -->\n")
        with self.assertRaises(BlockError) as caught:
            filler.check(readme.read_text(), self.results, str(readme))
        self.assertIn("needs file=", str(caught.exception))

    def test_write_all_writes_nothing_when_one_file_fails(self):
        broken = self.root / "02" / "README.md"
        broken.parent.mkdir()
        broken.write_text("x " + cell("worklog.csv step=99_none column=ms") + "\n", encoding="utf-8")
        with self.assertRaises(BlockError) as caught:
            filler.write_all([self.readme, broken], self.results)
        self.assertIn(f"{broken}:1: cell 'worklog.csv step=99_none column=ms': worklog.csv step=99_none: no row",
                      str(caught.exception))
        self.assertEqual(self.readme.read_text(encoding="utf-8"), self.text)

    def test_readmes_are_the_top_one_those_one_level_down_a_steps_pages_and_the_docs_pages(self):
        (self.root / "01_naive").mkdir()
        (self.root / "01_naive" / "README.md").write_text("no blocks\n")
        (self.root / "01_naive" / "routes.md").write_text("a page beside the step's code\n")
        (self.root / "a" / "b").mkdir(parents=True)
        (self.root / "a" / "b" / "README.md").write_text("too deep\n")
        (self.root / "a" / "notes.md").write_text("not a step's\n")
        (self.root / "docs").mkdir(exist_ok=True)
        (self.root / "docs" / "running.md").write_text("a page\n")
        self.assertEqual(filler.readmes(self.root), [self.readme, self.root / "01_naive" / "README.md",
                                                            self.root / "01_naive" / "routes.md",
                                                            self.root / "docs" / "running.md"])

    def test_refresh_after_publish_rewrites_a_checkouts_readmes(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            self.assertTrue(filler.refresh(self.folder, "run_worklog"))
        self.assertIn("run_worklog: 1 README(s) rewritten from", out.getvalue())
        self.assertEqual(filler.check(self.readme.read_text(encoding="utf-8"), self.results), [])

    def test_refresh_leaves_a_folder_that_is_not_plots_results_alone(self):
        other = self.root / "pub"
        shutil.copytree(self.folder, other)
        self.assertTrue(filler.refresh(other, "run_worklog"))
        self.assertEqual(self.readme.read_text(encoding="utf-8"), self.text)

    def test_refresh_warns_and_writes_nothing_when_a_cell_has_no_row(self):
        (self.folder / "worklog.csv").write_text(
            (FIXTURES / "worklog.csv").read_text(encoding="utf-8").replace("01_naive", "01_other"), encoding="utf-8")
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            self.assertFalse(filler.refresh(self.folder, "ncu_profile"))
        self.assertIn("ncu_profile: warning: the READMEs' measured figures were not rewritten: ", err.getvalue())
        self.assertEqual(self.readme.read_text(encoding="utf-8"), self.text)

    def run_cli(self, *args):
        done = subprocess.run([sys.executable, str(PLOTS / "readme" / "filler.py"), "--results", str(self.folder), *args],
                              capture_output=True, text=True, timeout=60)
        return done.returncode, done.stdout, done.stderr

    def test_command_line(self):
        code, _, err = self.run_cli("--check")
        self.assertEqual(code, 1, err)
        self.assertIn("README.md:3: cell 'worklog.csv step=01_naive column=tflops format=tflops' reads '9.99'", err)
        self.assertIn("readme/filler.py: 2 block(s) or cell(s) differ", err)
        self.assertEqual(self.run_cli("--write"), (0, f"{self.readme}\n", ""))
        self.assertEqual(self.run_cli("--check"), (0, "", ""))
        self.readme.write_text("<!-- BEGIN generated: results_table -->\n", encoding="utf-8")
        code, _, err = self.run_cli("--check")
        self.assertEqual((code, err), (2, f"readme/filler.py: error: {self.readme}:1: BEGIN generated: results_table "
                                          "has no END\n"))


if __name__ == "__main__":
    unittest.main()
