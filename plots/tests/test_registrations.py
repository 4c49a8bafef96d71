"""Tests for plots/run/registrations.py: reading a step's registration from what its executable prints with
--list-variants (fake executables that answer well, badly or not at all), the build's list of steps,
and this repository's build: every step the build lists answers --list-variants with its own
registration, and every variant a README's variant table names is registered.

The repository's tests ask the built steps in $WORKLOG_BIN_DIR (CTest sets it), else in build/bin;
without either they are skipped, saying so. Run from anywhere:
    WORKLOG_BIN_DIR=build/bin python3 -m unittest discover -s plots/tests -v
"""
import ast
import json
import os
import shutil
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

PLOTS = Path(__file__).resolve().parents[1]
ROOT = PLOTS.parent
sys.path.insert(0, str(PLOTS))

from readme import filler  # noqa: E402
from run import registrations  # noqa: E402
from run.registrations import RegistrationError  # noqa: E402

# What a step prints for --list-variants (common/step_registry.cpp: registration_json), with what a
# careless reader would trip on: an escaped quote, UTF-8, a variant list in an order that is not sorted.
ANSWER = {
    "step": "07_fixture", "adds": "cp.async pipeline, tiles shared in smem", "precision": "fp16",
    "compute_capability": {"min": 80, "max": None}, "reuse_tile": [128, 128],
    "variants": [
        {"name": "tile_128x256", "description": '128 × 256 tiles of 8 warps, "4" stages', "reuse_tile": [128, 256]},
        {"name": "k64", "description": "K slices of 64, 3 stages", "reuse_tile": [128, 128]},
    ],
}


def fake_step(folder, name, stdout, code=0, stderr=""):
    """An executable `folder/name` that prints `stdout` and `stderr` and exits with `code`, whatever
    it is asked; its arguments go to folder/NAME.args."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.out").write_text(stdout, encoding="utf-8")
    (folder / f"{name}.err").write_text(stderr, encoding="utf-8")
    path = folder / name
    path.write_text(f'#!/bin/sh\necho "$@" > "{folder / name}.args"\ncat "{folder / name}.out"\n'
                    f'cat "{folder / name}.err" >&2\nexit {code}\n', encoding="utf-8")
    path.chmod(0o755)
    return path


def built_steps_folder():
    """The folder of the built steps the repository tests ask, or None (then they are skipped)."""
    folder = registrations.bin_dir(ROOT)
    if os.environ.get(registrations.BIN_DIR_VARIABLE) or (folder / "01_naive").is_file():
        return folder
    return None


class ParseTest(unittest.TestCase):
    def error(self, text):
        with self.assertRaises(RegistrationError) as caught:
            registrations.parse(text, "07_fixture --list-variants")
        return str(caught.exception)

    def test_the_step_its_description_and_its_variants_in_order(self):
        found = registrations.parse(json.dumps(ANSWER, ensure_ascii=False))
        self.assertEqual(found.step, "07_fixture")
        self.assertEqual(found.adds, "cp.async pipeline, tiles shared in smem")
        self.assertEqual(list(found.variants.items()),
                         [("tile_128x256", '128 × 256 tiles of 8 warps, "4" stages'),
                          ("k64", "K slices of 64, 3 stages")])

    def test_a_step_without_variants(self):
        found = registrations.parse('{"step": "01_x", "adds": "one thread per element", "variants": []}')
        self.assertEqual((found.step, found.adds, found.variants), ("01_x", "one thread per element", {}))

    def test_answers_that_cannot_be_read(self):
        def changed(**fields):
            return json.dumps(dict(ANSWER, **fields))
        for text, message in (
                ("usage: 07_fixture [options]", "07_fixture --list-variants: not JSON"),
                ("[1, 2]", "not a JSON object"),
                (changed(step=""), '"step" is not a non-empty string'),
                (changed(adds=None), "the step 07_fixture's \"adds\" is not a non-empty string"),
                (changed(variants={}), 'has no "variants" list'),
                (changed(variants=["k64"]), "a variant of 07_fixture is not a JSON object"),
                (changed(variants=[{"name": "k64"}]), "the description of the variant 'k64' is not"),
                (changed(variants=[{"name": "v", "description": "1"}, {"name": "v", "description": "2"}]),
                 "the variant 'v' is registered twice")):
            with self.subTest(message=message):
                self.assertIn(message, self.error(text))


class ReadTest(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="registrations-"))
        self.addCleanup(shutil.rmtree, self.tmp)

    def error(self, step="07_fixture"):
        with self.assertRaises(RegistrationError) as caught:
            registrations.read(self.tmp, step)
        return str(caught.exception)

    def test_the_executable_is_asked_with_list_variants(self):
        fake_step(self.tmp, "07_fixture", json.dumps(ANSWER))
        found = registrations.read(self.tmp, "07_fixture")
        self.assertEqual(list(found.variants), ["tile_128x256", "k64"])
        self.assertEqual(found.path, f"{self.tmp / '07_fixture'} --list-variants")
        self.assertEqual((self.tmp / "07_fixture.args").read_text().strip(), "--list-variants")

    def test_a_step_that_is_not_built_names_the_way_to_build_it(self):
        message = self.error("08_missing")
        self.assertIn(f"{self.tmp / '08_missing'}: no such executable", message)
        self.assertIn("cmake --workflow --preset test", message)
        self.assertIn("WORKLOG_BIN_DIR", message)
        self.assertNotIn("\n", message)

    def test_a_step_that_fails_or_registers_another(self):
        fake_step(self.tmp, "07_fixture", "", code=2, stderr="07_fixture: error: unknown argument\n")
        self.assertIn("exit code 2: 07_fixture: error: unknown argument", self.error())
        fake_step(self.tmp, "07_other", json.dumps(ANSWER))
        self.assertIn("registers '07_fixture', not '07_other'", self.error("07_other"))
        fake_step(self.tmp, "07_text", "not json")
        self.assertIn("07_text --list-variants: not JSON", self.error("07_text"))

    def test_a_rebuilt_step_is_asked_again(self):
        path = fake_step(self.tmp, "07_fixture", json.dumps(ANSWER))
        self.assertEqual(len(registrations.read(self.tmp, "07_fixture").variants), 2)
        fake_step(self.tmp, "07_fixture", json.dumps(dict(ANSWER, variants=[])))
        os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10**9))  # as a rebuild would
        self.assertEqual(registrations.read(self.tmp, "07_fixture").variants, {})

    def test_the_bin_folder(self):
        with mock.patch.dict(os.environ, {registrations.BIN_DIR_VARIABLE: "/somewhere/bin"}):
            self.assertEqual(registrations.bin_dir("/checkout"), Path("/somewhere/bin"))
        with mock.patch.dict(os.environ, {registrations.BIN_DIR_VARIABLE: ""}):
            self.assertEqual(registrations.bin_dir("/checkout"), Path("/checkout/build/bin"))

    def test_the_builds_list_of_steps(self):
        (self.tmp / "CMakeLists.txt").write_text(
            "# add_worklog_step(00_comment) is no step\nadd_worklog_step(01_a)\n  add_worklog_step( 02_b HOPPER "
            "FALLBACK 01_a)\nfunction(add_worklog_step step)\n", encoding="utf-8")
        self.assertEqual(registrations.steps(self.tmp), ["01_a", "02_b"])
        with self.assertRaises(RegistrationError):
            registrations.steps(self.tmp / "nowhere")


@unittest.skipUnless(built_steps_folder(), f"no built steps: set {registrations.BIN_DIR_VARIABLE} or build into build/")
class RepositoryTest(unittest.TestCase):
    """This checkout's built steps and READMEs."""

    def setUp(self):
        self.bin_dir = built_steps_folder()

    def test_every_step_of_the_build_registers_itself(self):
        steps = registrations.steps(ROOT)
        self.assertIn("01_naive", steps)
        for step in steps:
            with self.subTest(step=step):
                found = registrations.read(self.bin_dir, step)
                self.assertTrue(found.adds)
                self.assertTrue(all(found.variants.values()), found.variants)

    def test_14s_menu_is_registered_from_its_one_list(self):
        # kernel.cu writes the menu once (menu_items) and registers each entry from it: the variants
        # are best_of_menu, then an entry per tile, named after its tile.
        if "15_tile_per_shape" not in registrations.steps(ROOT):
            self.skipTest("the build has no step 15")
        variants = list(registrations.read(self.bin_dir, "15_tile_per_shape").variants)
        self.assertEqual(variants[0], "best_of_menu")
        self.assertIn("menu_128x256_c2", variants)
        for name in variants[1:]:
            self.assertRegex(name, r"^menu_\d+x\d+_c[12]$")

    def test_every_variant_a_readme_table_names_is_registered(self):
        tables = filler.variant_tables(ROOT)
        self.assertTrue(tables)
        for table, rows in tables.items():
            for step, variant in rows:
                with self.subTest(table=table, step=step, variant=variant):
                    self.assertIn(step, registrations.steps(ROOT))
                    if variant:
                        self.assertIn(variant, registrations.read(self.bin_dir, step).variants,
                                      f"{table}/README.md's variant table names {step}/{variant}, which "
                                      f"{step} does not register (--list-variants)")


class ReadmeBlocksTest(unittest.TestCase):
    def test_readme_filler_names_no_step_outside_its_docstrings(self):
        # The build's list (CMakeLists.txt) is the only list of steps: a step's choices live in its README.
        tree = ast.parse((PLOTS / "readme" / "filler.py").read_text(encoding="utf-8"))
        docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                      if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef)) and node.body
                      and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
        texts = [node.value for node in ast.walk(tree)
                 if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings]
        for step in registrations.steps(ROOT):
            with self.subTest(step=step):
                self.assertFalse([t for t in texts if step in t])


if __name__ == "__main__":
    unittest.main()
