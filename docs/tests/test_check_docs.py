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
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(DOCS))
import check_docs  # noqa: E402

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

Paths under `build/bin/01_step` are a build's, `NN_name/kernel.cu` a placeholder, `../shared/x/` not
the repository's, [a web page](https://example.com/nowhere).

## Terms defined before use

[tile](docs/glossary.md#tile), [`cp.async`](docs/glossary.md#cpasync).
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

    def test_a_term_linked_to_the_wrong_entry_fails(self):
        self.edit("README.md", "[tile](docs/glossary.md#tile) of C", "[tile](docs/glossary.md#cpasync) of C")
        problems = self.problems()
        self.assertTrue(any('"tile"' in p for p in problems), problems)

    def test_a_term_never_used_fails(self):
        self.edit("README.md", "[`cp.async`](docs/glossary.md#cpasync).", "[`cp.async`](docs/glossary.md#cpasync), "
                  "[wave](docs/glossary.md#tile).")
        self.assert_one_problem("wave", "never uses it")

    def test_the_command_line_exit_codes(self):
        with contextlib.redirect_stdout(io.StringIO()):
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


class RepositoryTest(unittest.TestCase):
    """This checkout: every link and path of its READMEs and docs/ resolves, and README.md links
    every checked term where it first uses it."""

    def test_every_link_and_path_resolves(self):
        self.assertEqual(check_docs.check(DOCS.parent), [])

    def test_every_step_readme_is_read(self):
        read = set(check_docs.markdown_files(DOCS.parent))
        readmes = set(DOCS.parent.glob("[0-9][0-9]_*/README.md"))
        self.assertTrue(readmes)
        self.assertLessEqual(readmes, read)


if __name__ == "__main__":
    unittest.main()
