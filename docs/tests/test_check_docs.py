"""docs/check_docs.py: the repository's links and paths resolve, and the checker catches what does not.

    python3 -m unittest discover -s docs/tests

Standard library only; no GPU, no build.
"""
import contextlib
import io
import json
import sys
import tempfile
import textwrap
import unittest
from unittest import mock
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(DOCS))
import check_docs  # noqa: E402
import figure_rules  # noqa: E402  (check_docs.py's rules on figures, counts, variants and cards)

GLOSSARY = """\
# Glossary

### Tile
A piece of C.

### `cp.async`
An asynchronous copy.
"""

README = """\
# A worklog

A [tile](docs/glossary.md#tile) of C, copied by [`cp.async`](docs/glossary.md#cpasync); see
[the step](01_step/) and [its kernel](01_step/kernel.cu), `common/util.hpp` and `plots/results/x.csv`,
and [Usage](#usage).

## Usage

```sh
python3 plots/tool.py --out build/results
```

Paths under `build/bin/01_step` are a build's, `NN_name/kernel.cu` a placeholder, `../elsewhere/x/` not
the repository's, [a web page](https://example.com/nowhere).
"""


def write_tree(root, files):
    for name, text in files.items():
        path = Path(root) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


class CheckoutTest(unittest.TestCase):
    """A small checkout in a temporary folder: clean first, then broken one way at a time."""

    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        self.root = Path(self.folder.name)
        write_tree(self.root, {
            "README.md": README,
            "docs/glossary.md": GLOSSARY,
            "01_step/README.md": "# 01_step — a step\n\nSee [the glossary](../docs/glossary.md#tile) and `results/a.csv`.\n",
            "01_step/kernel.cu": "",
            "01_step/results/a.csv": "",
            "common/util.hpp": "",
            "plots/results/x.csv": "",
            "plots/tool.py": "",
        })

    def tearDown(self):
        self.folder.cleanup()

    def problems(self):
        return check_docs.check(self.root)

    def edit(self, name, old, new):
        path = self.root / name
        text = path.read_text(encoding="utf-8")
        self.assertIn(old, text)
        path.write_text(text.replace(old, new, 1), encoding="utf-8")

    def assert_one_problem(self, *words):
        problems = self.problems()
        self.assertEqual(len(problems), 1, problems)
        for word in words:
            self.assertIn(word, problems[0])

    def test_a_clean_checkout_passes(self):
        self.assertEqual(self.problems(), [])

    def test_a_link_to_a_missing_file_fails(self):
        self.edit("README.md", "(01_step/kernel.cu)", "(01_step/kernal.cu)")
        self.assert_one_problem("README.md:4:", "01_step/kernal.cu", "no such file")

    def test_a_link_to_a_missing_folder_fails(self):
        self.edit("README.md", "(01_step/)", "(02_step/)")
        self.assert_one_problem("README.md:4:", "02_step/")

    def test_a_link_to_a_missing_heading_fails(self):
        self.edit("README.md", "(#usage)", "(#using-it)")
        self.assert_one_problem("README.md:5:", "#using-it")

    def test_an_anchor_into_another_file_is_checked(self):
        self.edit("01_step/README.md", "glossary.md#tile", "glossary.md#tiles")
        self.assert_one_problem("01_step/README.md:3:", "#tiles")

    def test_a_path_in_inline_code_must_exist(self):
        self.edit("README.md", "`common/util.hpp`", "`common/utils.hpp`")
        self.assert_one_problem("README.md:4:", "common/utils.hpp")

    def test_a_path_in_a_fenced_block_must_exist(self):
        self.edit("README.md", "plots/tool.py", "plots/tools.py")
        self.assert_one_problem("README.md:10:", "plots/tools.py")

    def test_a_path_relative_to_the_readme_must_exist(self):
        self.edit("01_step/README.md", "`results/a.csv`", "`results/b.csv`")
        self.assert_one_problem("01_step/README.md:3:", "results/b.csv")

    def test_a_missing_step_folder_fails(self):
        self.edit("README.md", "`common/util.hpp`", "`12_next/kernel.cu`")
        self.assert_one_problem("12_next/kernel.cu", "no step folder")

    def test_a_new_steps_readme_is_read(self):
        write_tree(self.root, {"12_next/README.md": "# 12_next — more\n\n[Gone](../01_step/gone.md)\n"})
        self.assert_one_problem("12_next/README.md:3:", "../01_step/gone.md")

    def test_docs_files_are_read(self):
        write_tree(self.root, {"docs/more.md": "# More\n\n[Gone](../plots/gone.csv)\n"})
        self.assert_one_problem("docs/more.md:3:", "../plots/gone.csv")

    def test_a_student_copy_skips_the_steps_it_leaves_out(self):
        write_tree(self.root, {"lab/released.json": json.dumps({"steps": ["01_step"], "withheld": ["02_step"]})})
        self.edit("README.md", "(01_step/)", "(02_step/)")
        self.edit("README.md", "`common/util.hpp`", "`02_step/kernel.cu`")
        self.assertEqual(self.problems(), [])

    def test_a_student_copy_skips_the_kit_folders_it_removes(self):
        write_tree(self.root, {"lab/lab.py": ""})
        self.edit("README.md", "`common/util.hpp`", "`lab/tests/check.sh`")
        self.assert_one_problem("lab/tests/check.sh", "no such file")
        write_tree(self.root, {"lab/released.json": json.dumps({"steps": ["01_step"], "withheld": [],
                                                                "removed": ["lab/tests"]})})
        self.assertEqual(self.problems(), [])
        self.edit("README.md", "`lab/tests/check.sh`", "`lab/testsuite.sh`")  # only what is under the folder
        self.assert_one_problem("lab/testsuite.sh", "no such file")

    def test_a_term_used_before_its_link_fails(self):
        self.edit("README.md", "A [tile](docs/glossary.md#tile) of C", "Tiles first. A [tile](docs/glossary.md#tile) of C")
        self.assert_one_problem("README.md:3:", '"tile"', "docs/glossary.md#tile")

    def test_every_glossary_link_is_checked_and_its_plural_too(self):
        # A term linked late, in the plural, and used (in the singular) before: no list names it.
        self.edit("docs/glossary.md", "### Tile", "### Wave\nTiles at once.\n\n### Tile")
        self.edit("README.md", "and [Usage](#usage).", "and [Usage](#usage). A wave, then\n[waves](docs/glossary.md#wave).")
        self.assert_one_problem("README.md:5:", '"wave"', "docs/glossary.md#wave")
        self.edit("README.md", "A wave, then", "Then")
        self.assertEqual(self.problems(), [])

    def test_the_command_line_exit_codes(self):
        # This tree has no build: what CTest names for the checkout's (WORKLOG_BIN_DIR) is not its.
        unset = mock.patch.dict(check_docs.os.environ, {check_docs.registrations.BIN_DIR_VARIABLE: ""})
        unset.start()
        self.addCleanup(unset.stop)
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            self.assertEqual(check_docs.main(["--root", str(self.root)]), 0)
        self.edit("README.md", "(#usage)", "(#nowhere)")
        with contextlib.redirect_stdout(io.StringIO()) as out, contextlib.redirect_stderr(io.StringIO()):
            self.assertEqual(check_docs.main(["--root", str(self.root)]), 1)
        self.assertIn("#nowhere", out.getvalue())


class SlugTest(unittest.TestCase):
    def test_github_slugs(self):
        self.assertEqual(check_docs.slug("Reading with the tutorials"), "reading-with-the-tutorials")
        self.assertEqual(check_docs.slug("`cp.async`"), "cpasync")
        self.assertEqual(check_docs.slug("FP16→FP32"), "fp16fp32")
        self.assertEqual(check_docs.slug("`long_scoreboard`"), "long_scoreboard")
        self.assertEqual(check_docs.slug("The profile's stall reasons"), "the-profiles-stall-reasons")
        self.assertEqual(check_docs.slug("Split-K"), "split-k")


class RulesTest(unittest.TestCase):
    """The rules on what the READMEs may say: no measured figure typed by hand, no count of tests or
    variants, no ../shared/, the ladder, the variants, the list of tests. Each broken on purpose."""

    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        self.root = Path(self.folder.name)
        write_tree(self.root, {
            "README.md": README,
            "docs/glossary.md": GLOSSARY,
            "docs/published_figures.md": "# Published\n\n| source | figure |\n|---|---|\n| a blog | 62.90% of cuBLAS, 13 TFLOP/s |\n",
            "01_step/README.md": "# 01_step — a step\n\nIt runs fast.\n",
            "01_step/kernel.cu": "",
            "common/util.hpp": "",
            "plots/results/x.csv": "",
            "plots/tool.py": "",
        })

    def tearDown(self):
        self.folder.cleanup()

    def problems(self):
        return check_docs.check(self.root)

    def step_readme(self, text):
        write_tree(self.root, {"01_step/README.md": "# 01_step — a step\n\n" + text})

    def assert_one_problem(self, *words):
        problems = self.problems()
        self.assertEqual(len(problems), 1, problems)
        for word in words:
            self.assertIn(word, problems[0])

    def test_a_figure_typed_by_hand_fails(self):
        for figure in ("12.5 TFLOP/s", "41%", "3.5 µs", "2.1 GB"):
            with self.subTest(figure=figure):
                self.step_readme(f"It reaches {figure} here.\n")
                self.assert_one_problem("01_step/README.md:3:", f"'{figure}'", "typed by hand")

    def test_a_lesson_over_its_length_fails(self):
        self.step_readme("A line.\n" * 118)  # 120 lines with the title and the blank line: at the limit
        self.assertEqual(self.problems(), [])
        self.step_readme("A line.\n" * 119)
        self.assert_one_problem("01_step/README.md:", "121 lines", "120")

    def test_a_later_lesson_may_have_200_lines(self):
        write_tree(self.root, {"07_step/README.md": "# 07_step\n\n" + "A line.\n" * 198, "07_step/kernel.cu": ""})
        self.assertEqual(self.problems(), [])
        write_tree(self.root, {"07_step/README.md": "# 07_step\n\n" + "A line.\n" * 199})
        self.assert_one_problem("07_step/README.md:", "201 lines", "200")

    def test_three_cells_on_a_line_fail(self):
        cell = "<!-- cell: worklog.csv step=01 column=tflops -->12.5<!-- /cell -->"
        self.step_readme(f"It reaches {cell} and {cell}.\n")
        self.assertEqual(self.problems(), [])
        self.step_readme(f"It reaches {cell}, {cell} and {cell}.\n")
        self.assert_one_problem("01_step/README.md:3:", "3 cells on one line")

    def test_more_cells_than_the_limit_fail(self):
        cell = "<!-- cell: worklog.csv step=01 column=tflops -->12.5<!-- /cell -->"
        write_tree(self.root, {"docs/cells.md": "# Cells\n\n" + f"It reaches {cell} and {cell}.\n" * (check_docs.CELL_LIMIT // 2)})
        self.assertEqual(self.problems(), [])
        write_tree(self.root, {"docs/more.md": f"# More\n\nIt reaches {cell}.\n"})
        self.assert_one_problem(f"{check_docs.CELL_LIMIT + 1} inline cells")

    def test_figures_in_cells_blocks_and_code_pass(self):
        self.step_readme("It reaches <!-- cell: worklog.csv step=01 column=tflops -->12.5<!-- /cell --> TFLOP/s, "
                         "`not 99%`.\n\n<!-- BEGIN generated: measured/01_step -->\n| 12.5 TFLOP/s | 41% |\n"
                         "<!-- END generated: measured/01_step -->\n\n```\n7 TFLOP/s\n```\n")
        self.assertEqual(self.problems(), [])

    def test_a_block_with_options_on_its_begin_line_is_a_block(self):
        self.step_readme("<!-- BEGIN generated: counters/01_step compare=cuBLAS rows=l2_bytes,tensor -->\n"
                         "| tensor pipe busy | 41% |\n<!-- END generated: counters/01_step -->\n")
        self.assertEqual(self.problems(), [])

    def test_a_published_figure_needs_its_source_linked_in_the_paragraph(self):
        self.step_readme("The blog published 62.90% of cuBLAS.\n")
        self.assert_one_problem("'62.90%'")
        self.step_readme("The blog published 62.90% of cuBLAS\n([published figures](../docs/published_figures.md)).\n")
        self.assertEqual(self.problems(), [])
        self.step_readme("The blog published 63.00% of cuBLAS ([published figures](../docs/published_figures.md)).\n")
        self.assert_one_problem("'63.00%'")

    def test_a_figure_worked_out_in_place_passes(self):
        self.step_readme("A pitch of 40 wastes 8/40 = 20% of it, and 8/136 ≈ 6% of the other.\n")
        self.assertEqual(self.problems(), [])

    def test_a_readme_pending_its_rewrite_is_not_read_for_figures(self):
        pending = "12_next"
        write_tree(self.root, {f"{pending}/README.md": f"# {pending}\n\nIt reaches 41% and has 12 tests.\n"})
        self.assertEqual(len(self.problems()), 2)  # read while it is not pending: the figure and the count
        with mock.patch.object(figure_rules, "PENDING_REWRITE", {pending}):
            self.assertEqual(self.problems(), [])

    def test_a_count_of_tests_or_variants_fails(self):
        for text in ("The suite has 376 tests.", "It registers 5 variants.", "on the 117 cases"):
            with self.subTest(text=text):
                self.step_readme(text + "\n")
                self.assert_one_problem("01_step/README.md:3:", "goes stale")

    def test_the_shared_folder_is_not_in_a_clone(self):
        self.step_readme("Read the tutorial in `../shared/tutorials/`.\n")
        self.assert_one_problem("01_step/README.md:3:", "../shared/")

    def ladder(self, rows, before=""):
        body = "".join(f"| [{row}]({row}/) | 1.0 |\n" for row in rows)
        text = README.replace("# A worklog\n\n", "# A worklog\n\n" + before + "<!-- BEGIN generated: ladder -->\n"
                              + body + "<!-- END generated: ladder -->\n\n", 1)
        write_tree(self.root, {"README.md": text, "CMakeLists.txt": "add_worklog_step(01_step)\n"})

    def test_the_ladder_has_a_row_for_every_step_on_the_first_screen(self):
        self.ladder(["01_step"])
        self.assertEqual(self.problems(), [])
        write_tree(self.root, {"02_step/README.md": "# 02_step — more\n",
                               "CMakeLists.txt": "add_worklog_step(01_step)\nadd_worklog_step(02_step HOPPER)\n"})
        self.assert_one_problem("the ladder has no row for 02_step")
        self.ladder(["01_step"], before="a line\n\n" * 20)
        self.assert_one_problem("belongs on the first screen")
        write_tree(self.root, {"README.md": README})
        self.assert_one_problem("no generated block 'ladder'")

    def test_the_terms_are_not_read_in_generated_blocks(self):
        self.ladder(["01_step"], before="")
        text = (self.root / "README.md").read_text(encoding="utf-8")
        (self.root / "README.md").write_text(text.replace("| 1.0 |", "| tiles and cp.async |"), encoding="utf-8")
        self.assertEqual(self.problems(), [])

    def test_every_registered_variant_is_named_in_its_readme(self):
        # The step's executable lists its variants (--list-variants); a fake one here.
        bin_dir = self.root / "build" / "bin"
        bin_dir.mkdir(parents=True)
        answer = {"step": "01_step", "adds": "a step", "variants": [{"name": "stages2", "description": "2 stages"},
                                                                    {"name": "wide", "description": "w"}]}
        (bin_dir / "01_step.json").write_text(json.dumps(answer), encoding="utf-8")
        (bin_dir / "01_step").write_text('#!/bin/sh\ncat "$0.json"\n', encoding="utf-8")
        (bin_dir / "01_step").chmod(0o755)
        self.step_readme("`--variant stages2` is slower.\n")
        self.assertEqual(self.problems(), [])  # the build is not asked unless named
        problems = check_docs.check(self.root, bin_dir)
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("`wide` (`01_step --list-variants` lists it) is not named", problems[0])
        self.step_readme("`--variant stages2` and `wide` are slower.\n")
        self.assertEqual(check_docs.check(self.root, bin_dir), [])
        # A step that is not built is a problem, not a pass.
        (bin_dir / "01_step").unlink()
        problems = check_docs.check(self.root, bin_dir)
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("01_step/README.md: its variants cannot be checked:", problems[0])
        self.assertIn("no such executable", problems[0])

    def test_the_build_asked_for_the_variants(self):
        with mock.patch.dict(check_docs.os.environ, {check_docs.registrations.BIN_DIR_VARIABLE: ""}):
            self.assertIsNone(check_docs.built_steps_folder(self.root))  # never built: not asked
            self.assertEqual(check_docs.built_steps_folder(self.root, Path("/b")), Path("/b"))
            (self.root / "build" / "bin").mkdir(parents=True)
            (self.root / "build" / "bin" / "01_step").write_text("")
            self.assertEqual(check_docs.built_steps_folder(self.root), self.root / "build" / "bin")
        with mock.patch.dict(check_docs.os.environ, {check_docs.registrations.BIN_DIR_VARIABLE: "/ctest/bin"}):
            self.assertEqual(check_docs.built_steps_folder(self.root), Path("/ctest/bin"))

    def test_every_registered_test_has_its_line_on_the_testing_page(self):
        write_tree(self.root, {
            "common/tests/CMakeLists.txt": "add_test(NAME host COMMAND h)\nadd_test(NAME gpu.${step} COMMAND g)\n"
                                           "add_test(NAME ${name} COMMAND s)\nadd_test(NAME gpu.new_one COMMAND n)\n",
            "docs/testing.md": "# Testing\n\n- `host`: the host.\n- `gpu.<step>`: each step.\n"})
        self.assert_one_problem("docs/testing.md", "`gpu.new_one`")
        write_tree(self.root, {"docs/testing.md": "# Testing\n\n- `host`, `gpu.<step>`, `gpu.new_one`.\n"})
        self.assertEqual(self.problems(), [])


class CardsTest(unittest.TestCase):
    """A paragraph whose cells quote rows of two GPUs names both cards: read from a results CSV with
    a `gpu` column, as plots/readme/filler.py reads cells."""

    H100 = "<!-- cell: runs.csv step=a column=tflops -->700<!-- /cell -->"
    H200 = "<!-- cell: runs.csv step=b column=tflops -->650<!-- /cell -->"

    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        self.root = Path(self.folder.name)
        write_tree(self.root, {
            "README.md": README,
            "docs/glossary.md": GLOSSARY,
            "01_step/README.md": "# 01_step — a step\n",
            "01_step/kernel.cu": "",
            "common/util.hpp": "",
            "plots/results/x.csv": "",
            "plots/results/runs.csv": "gpu,step,tflops\nNVIDIA H100 80GB HBM3,a,700\nNVIDIA H200,b,650\n",
            "plots/tool.py": "",
        })

    def tearDown(self):
        self.folder.cleanup()

    def problems(self, text):
        write_tree(self.root, {"01_step/README.md": "# 01_step — a step\n\n" + text})
        return check_docs.check(self.root)

    def test_two_cards_unnamed_fail(self):
        problems = self.problems(f"Step a runs at {self.H100} TFLOP/s,\nstep b at {self.H200}.\n")
        self.assertEqual(len(problems), 1, problems)
        for words in ("01_step/README.md:3:", "2 GPUs", "NVIDIA H100 80GB HBM3 (line 3)", "NVIDIA H200 (line 4)",
                      "'H100' or 'H200'"):
            self.assertIn(words, problems[0])

    def test_naming_one_card_is_not_enough(self):
        problems = self.problems(f"On an H100, step a runs at {self.H100} TFLOP/s, step b at {self.H200}.\n")
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("never says 'H200'", problems[0])

    def test_two_cards_named_pass(self):
        self.assertEqual(self.problems(f"Step a runs at {self.H100} TFLOP/s on an H100; on an H200, step b "
                                       f"runs at {self.H200}.\n"), [])
        self.assertEqual(self.problems(f"Runs: {self.H100} and {self.H200}, on an H100/H200 pair.\n"), [])

    def test_a_cell_of_the_gpu_column_names_its_card(self):
        card = "<!-- cell: runs.csv step=b column=gpu -->NVIDIA H200<!-- /cell -->"
        self.assertEqual(self.problems(f"On an H100, {self.H100}; on an {card},\nit runs at {self.H200}.\n"), [])

    def test_one_cell_over_both_cards_counts_both(self):
        both = "<!-- cell: runs.csv step=a|b column=tflops agg=range -->650–700<!-- /cell -->"
        self.assertEqual(len(self.problems(f"The steps run at {both} TFLOP/s.\n")), 1)
        self.assertEqual(self.problems(f"The steps run at {both} TFLOP/s on an H100 and an H200.\n"), [])

    def test_one_card_a_paragraph_passes_unnamed(self):
        self.assertEqual(self.problems(f"Step a runs at {self.H100} TFLOP/s.\n\nStep b at {self.H200}.\n"), [])

    def test_a_table_is_read_with_its_caption(self):
        table = f"| step | TFLOP/s |\n|---|--:|\n| a | {self.H100} |\n| b | {self.H200} |\n"
        self.assertEqual(len(self.problems("The steps:\n\n" + table)), 1)
        self.assertEqual(self.problems("The steps, a on an H100 and b on an H200:\n\n" + table), [])
        self.assertEqual(len(self.problems("On an H100 and an H200.\n\n" + table)), 1)  # not its caption

    def test_a_cell_the_results_lack_names_no_card(self):
        self.assertEqual(self.problems(f"Step a: {self.H100}, and <!-- cell: none.csv column=x -->1<!-- /cell -->,\nthen "
                                       "<!-- cell: runs.csv step=c column=tflops -->2<!-- /cell -->.\n"), [])


class RepositoryTest(unittest.TestCase):
    """This checkout: every link and path of its READMEs and docs/ resolves, and README.md links
    every checked term where it first uses it."""

    def test_every_link_and_path_resolves(self):
        self.assertEqual(check_docs.check(DOCS.parent), [])

    @unittest.skipUnless(check_docs.built_steps_folder(DOCS.parent),
                         "no built steps: set WORKLOG_BIN_DIR or build into build/ (CTest sets it)")
    def test_every_registered_variant_is_named(self):
        self.assertEqual(check_docs.variant_problems(DOCS.parent, bin_dir=check_docs.built_steps_folder(DOCS.parent)),
                         [])

    def test_every_step_readme_is_read(self):
        read = set(check_docs.markdown_files(DOCS.parent))
        readmes = set(DOCS.parent.glob("[0-9][0-9]_*/README.md"))
        self.assertTrue(readmes)
        self.assertLessEqual(readmes, read)
        self.assertLessEqual(set(DOCS.parent.glob("[0-9][0-9]_*/*.md")), read)  # the pages beside a step's code


if __name__ == "__main__":
    unittest.main()


class StrictRulesTest(unittest.TestCase):
    """The two rules that --strict fails on and the default mode lists: figures the filler marked as
    measured on earlier code, and paragraphs or tables of two cards."""

    def page(self, text):
        folder = tempfile.TemporaryDirectory()
        self.addCleanup(folder.cleanup)
        md = Path(folder.name) / "page.md"
        md.write_text(textwrap.dedent(text), encoding="utf-8")
        return md, Path(folder.name)

    def test_marked_figures_are_found_with_their_dates(self):
        md, root = self.page("""\
            At <!-- cell: w.csv column=ms -->2<sup>[‡ 2026-11-21](docs/figures.md#measured-on-earlier-code)</sup><!-- /cell --> ms.

            Today: <!-- cell: w.csv column=tflops -->3<!-- /cell -->.
            """)
        self.assertEqual(figure_rules.earlier_figures(md, root),
                         ["page.md:1: 1 figure(s) measured on earlier code of their step (2026-11-21): re-measure "
                          "them on today's build (docs/figures.md)"])

    def test_a_paragraph_of_two_cards_is_found_even_when_it_names_them(self):
        md, root = self.page("""\
            On the H100 <!-- cell: a -->1<!-- /cell -->, on the H200 <!-- cell: b -->2<!-- /cell -->.

            Alone: <!-- cell: a -->1<!-- /cell -->.
            """)
        cards = {"a": {"NVIDIA H100 80GB HBM3"}, "b": {"NVIDIA H200"}}.get
        found = figure_rules.two_card_figures(md, root, cards, lambda name, options: set())
        self.assertEqual(len(found), 1)
        self.assertTrue(found[0].startswith("page.md:1: a paragraph quotes figures of 2 cards"), found)

    def test_a_table_of_two_cards_is_found(self):
        md, root = self.page("""\
            <!-- BEGIN generated: results_table -->
            <!-- END generated: results_table -->
            """)
        found = figure_rules.two_card_figures(md, root, lambda spec: set(),
                                              lambda name, options: {"NVIDIA H100 80GB HBM3", "NVIDIA H200"})
        self.assertEqual(len(found), 1)
        self.assertIn("page.md:1: the table results_table shows rows of 2 cards", found[0])

    def test_strict_fails_on_what_the_default_mode_lists(self):
        listed = ["x.md:1: 1 figure(s) measured on earlier code of their step (2026-11-21): ..."]
        with mock.patch.object(check_docs, "check", return_value=[]), \
                mock.patch.object(check_docs, "strict_findings", return_value=listed), \
                contextlib.redirect_stdout(io.StringIO()) as out, contextlib.redirect_stderr(io.StringIO()):
            self.assertEqual(check_docs.main(["--bin-dir", str(DOCS)]), 0)
            self.assertEqual(check_docs.main(["--bin-dir", str(DOCS), "--strict"]), 1)
        self.assertIn("listed: x.md:1:", out.getvalue())
