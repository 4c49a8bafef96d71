"""Tests for the generic table block (plots/readme/table.py): a spec of CSV, rows, groups, columns,
headers, formats and caption, laid out as Markdown; and a spec named by a README's marker, written
and checked by the filler like the READMEs' own tables.

Run from anywhere:  python3 -m unittest discover -s plots/tests -v
"""
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

PLOTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PLOTS))

from readme import filler, table, tables  # noqa: E402
from readme.formats import Missing  # noqa: E402

ROWS = [  # as a CSV reads: text
    {"kernel": "a_one", "n": "4096", "metric": "tflops", "value": "700.25", "status": "PASS", "gpu": "H100"},
    {"kernel": "a_one", "n": "4096", "metric": "tflops", "value": "690.5", "status": "PASS", "gpu": "H100"},
    {"kernel": "a_one", "n": "4096", "metric": "pct", "value": "97.0", "status": "PASS", "gpu": "H100"},
    {"kernel": "b_two", "n": "4096", "metric": "tflops", "value": "0", "status": "FAIL", "gpu": "H200"},
    {"kernel": "c_three", "n": "128", "metric": "tflops", "value": "12.0", "status": "PASS", "gpu": "H100"},
]


def spec(**changes):
    base = {"csv": "x.csv", "where": {"metric": "tflops"}, "group": ["kernel"],
            "caption": "On {each[gpu]}, n = {each[n]}, {what}:",
            "columns": [{"header": "kernel", "column": "kernel", "format": "words", "align": "---"},
                        {"header": "TFLOP/s", "column": "value", "agg": "range", "format": ".0f", "failed": "—"},
                        {"header": "best", "column": "value", "agg": "max", "format": ".1f", "suffix": " T"},
                        {"header": "runs", "text": "{kernel} at {n}", "align": "---"}]}
    base.update(changes)
    return base


class GenericTableTest(unittest.TestCase):
    def test_rows_grouped_and_each_column_quoted_as_a_cell(self):
        self.assertEqual(table.render(spec(), ROWS, {"what": "toy"}),
                         "On H100, H200, n = 128, 4096, toy:\n\n"
                         "| kernel | TFLOP/s | best | runs |\n"
                         "|---|--:|--:|---|\n"
                         "| a one | 690–700 | 700.2 T | a_one at 4096 |\n"
                         "| b two | — | 0.0 T | b_two at 4096 |\n"
                         "| c three | 12 | 12.0 T | c_three at 128 |")

    def test_sort_where_from_the_options_and_a_column_shown_only_when_asked(self):
        columns = [{"header": "n", "column": "n", "format": ".0f"},
                   {"header": "pct", "column": "value", "where": {"metric": "pct"}, "suffix": "%", "missing": "n/a"},
                   {"header": "extra", "text": "x", "when": "extra"}]
        text = table.render(spec(where={"kernel": "{mine}|c_three"}, group=["n"], sort=["n"], columns=columns,
                                 caption="{first[kernel]}"), ROWS, {"mine": "a_one", "extra": ""})
        self.assertEqual(text.splitlines()[2:], ["| n | pct |", "|--:|--:|", "| 128 | n/a |", "| 4096 | 97.0% |"])
        self.assertIn("| extra |", table.render(spec(columns=columns, caption=""), ROWS, {"extra": "yes"}))

    def test_the_spread_of_the_timed_rounds_where_a_readme_asks_for_it(self):
        # spread=yes on a BEGIN line adds the p10–p90 column to a step's run tables; rows from before
        # the harness wrote the percentiles (the committed CSVs) show it as missing, and without the
        # option the table is as it was.
        from report import results_csv
        lines = (PLOTS / "tests" / "fixtures" / "worklog.csv").read_text(encoding="utf-8").splitlines()
        with tempfile.TemporaryDirectory() as tmp:
            spread_csv = Path(tmp) / "sweep.csv"
            spread_csv.write_text("\n".join([lines[0] + "," + ",".join(results_csv.SPREAD_COLUMNS)]
                                            + [line + ",3.8512,3.9634,2.55,2.71" for line in lines[1:]]) + "\n",
                                  encoding="utf-8")
            with_spread = results_csv.load_rows(spread_csv)
        plain = results_csv.load_rows(PLOTS / "tests" / "fixtures" / "worklog.csv")
        points = tables.TABLES["sweep_points"]
        asked = table.render(points, with_spread, {"step": "04_outer_product", "spread": "yes"}).splitlines()
        self.assertEqual(asked[2], "| N | median ms | p10–p90 ms | TFLOP/s | cuBLAS TFLOP/s | % of cuBLAS | check |")
        self.assertEqual(asked[4].split(" | ")[1:3], ["3.90", "3.85–3.96"])
        before = table.render(points, plain, {"step": "04_outer_product", "spread": "yes"}).splitlines()
        self.assertEqual(before[4].split(" | ")[1:3], ["3.90", "—"])
        self.assertNotIn("p10–p90", table.render(points, with_spread, {"step": "04_outer_product", "spread": ""}))

    def test_a_pivot_repeats_its_columns_for_each_value(self):
        text = table.render({"csv": "x.csv", "where": {"metric": "tflops", "status": "PASS"}, "group": ["n"],
                             "sort": ["n"], "caption": "", "columns": [{"header": "N", "text": "{n}"}],
                             "pivot": "kernel", "repeat": [{"header": "{kernel} on {gpu}", "column": "value",
                                                            "agg": "max", "format": ".1f"}]}, ROWS, {})
        # No caption, no blank line above the table: the page's own sentence introduces it.
        self.assertEqual(text.splitlines(), ["| N | a_one on H100 | c_three on H100 |", "|--:|--:|--:|",
                                             "| 128 | — | 12.0 |", "| 4096 | 700.2 | — |"])

    def test_what_it_cannot_make_is_missing_with_the_reason(self):
        for bad, message in ((spec(where={"kernel": "z"}), "x.csv has no rows with kernel=z"),
                             (spec(where={"colour": "red"}), "x.csv has no column 'colour'"),
                             (spec(caption="{nothing}"), "cannot fill '{nothing}'"),
                             (spec(group=["n"]), "3 values (expected one; agg= to combine)")):
            with self.subTest(message=message), self.assertRaises(Missing) as caught:
                table.render(bad, ROWS, {"what": ""})
            self.assertIn(message, str(caught.exception))


class TableNamedByAMarkerTest(unittest.TestCase):
    """A spec in tables.TABLES is a block a README names; the filler writes and checks it."""

    def test_a_new_table_is_a_spec_and_a_marker(self):
        toy = {"argument": "kernel", "options": {"metric": "tflops", "runs": tables.REQUIRED}, "sources": ["x.csv"],
               "csv": "x.csv", "where": {"kernel": "{kernel}", "metric": "{metric}"},
               "caption": "{kernel}, {runs} runs (`plots/results/x.csv`):",
               "columns": [{"header": "n", "column": "n", "format": ".0f"},
                           {"header": "{metric}", "column": "value", "format": ".2f"}]}
        with tempfile.TemporaryDirectory() as tmp, mock.patch.dict(tables.TABLES, {"toy": toy}):
            folder = Path(tmp) / "plots" / "results"
            folder.mkdir(parents=True)
            (folder / "x.csv").write_text("kernel,n,metric,value,status,gpu\n" +
                                          "".join(",".join(r.values()) + "\n" for r in ROWS))
            results = filler.Results(folder, Path(tmp), Path(tmp) / "bin")
            readme = ("# Toy\n\n<!-- BEGIN generated: toy/c_three runs=2 -->\nstale\n<!-- END generated: toy/c_three -->\n"
                      "\nIt ran at <!-- cell: x.csv kernel=c_three column=value format=.0f -->?<!-- /cell --> TFLOP/s.\n")
            written = filler.rewritten(readme, results)
            self.assertIn("<!-- written by plots/readme/filler.py from plots/results/x.csv; do not edit -->\n\n"
                          "c_three, 2 runs (`plots/results/x.csv`):\n\n| n | tflops |\n|--:|--:|\n| 128 | 12.00 |\n\n"
                          "<!-- END generated: toy/c_three -->", written)
            self.assertIn("It ran at <!-- cell: x.csv kernel=c_three column=value format=.0f -->12<!-- /cell -->",
                          written)
            self.assertEqual(filler.check(written, results), [])
            self.assertEqual([d.kind for d in filler.check(readme, results)], ["block", "cell"])
            for line, message in (("<!-- BEGIN generated: toy/c_three -->", "needs runs= on its BEGIN line"),
                                  ("<!-- BEGIN generated: toy/c_three runs=2 colour=red -->", "unknown option 'colour='"),
                                  ("<!-- BEGIN generated: toy runs=2 -->", "unknown block 'toy'")):
                with self.subTest(line=line), self.assertRaises(filler.BlockError) as caught:
                    filler.find(f"{line}\n<!-- END generated: {line.split()[3]} -->\n")
                self.assertIn(message, str(caught.exception))

    def test_every_spec_names_its_sources_and_a_known_view(self):
        from readme import views
        for name, spec in tables.TABLES.items():
            with self.subTest(table=name):
                # A CSV, or the block's option that names one (compare's csv=).
                self.assertTrue(spec["sources"] and all(s.endswith(".csv") or s == "{csv}" for s in spec["sources"]))
                if "{csv}" in spec["sources"]:
                    self.assertIs(spec["options"].get("csv"), tables.REQUIRED)
                if "markdown" in spec:
                    self.assertIn(spec["markdown"], views.MARKDOWN)
                elif spec["csv"].startswith("view:"):
                    self.assertIn(spec["csv"][5:], views.VIEWS)
                else:
                    self.assertIn(spec["csv"], spec["sources"])


if __name__ == "__main__":
    unittest.main()
