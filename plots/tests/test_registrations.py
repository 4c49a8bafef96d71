"""Tests for plots/registrations.py: reading a step's registration from its kernel.cu (a fixture,
with a literal split over lines, comments and literals that look like registrations), the build's
list of steps, and this repository: every step the build lists registers itself under its
directory's name, and every variant a README's variant table names is registered.

Run from anywhere:  python3 -m unittest discover -s plots/tests -v
"""
import ast
import sys
import tempfile
import unittest
from pathlib import Path

PLOTS = Path(__file__).resolve().parents[1]
ROOT = PLOTS.parent
sys.path.insert(0, str(PLOTS))

import readme_blocks  # noqa: E402
import registrations  # noqa: E402
from registrations import RegistrationError  # noqa: E402

# A kernel.cu as a step writes it, with what a careless reader would trip on: the description of a
# variant split over two lines (adjacent literals), comments holding quotes and a registration, a
# character literal and a digit separator, an escape, a raw string, a continued #define line.
KERNEL = r'''// 07_fixture: what the step adds.
// WORKLOG_REGISTER_STEP(Step<float>{"not_this_one", launch}.adds("a comment"))
#include "common/step.hpp"
#define FIXTURE_NOTE(x) \
  WORKLOG_REGISTER_STEP(x)

namespace worklog {
namespace {
constexpr char quote = '"';          // a quote that opens no string
constexpr long big = 1'000'000;      // a digit separator, not a character literal
const char* raw = R"x(a ")" raw string)x";
/* a block comment: .variant("ghost", "never registered") */
}  // namespace

WORKLOG_REGISTER_STEP(Step<__half>{"07_fixture", launch_config<Config>}
                          .adds("cp.async pipeline, "  // the first half
                                "tiles shared in smem")
                          .reuses_tile(Config::block_tile_m, Config::block_tile_n)
                          .needs_compute_capability(80)
                          .variant("k64", "K slices of 64, 3 stages", launch_config<K64>)
                          .variant("tile_128x256",
                                   "128 x 256 tiles of 8 warps, "
                                   "K slices of 64, \"4\" stages",
                                   launch_config<Tile128x256>, Tile128x256::block_tile_m, 256)
                          .variant("sync_copies", "16-byte load, then store, instead of cp.async",
                                   launch_config<SyncCopies>))

}  // namespace worklog
'''


def registration(text):
    return registrations.parse(text, "07_fixture/kernel.cu")


class ParseTest(unittest.TestCase):
    def error(self, text):
        with self.assertRaises(RegistrationError) as caught:
            registration(text)
        return str(caught.exception)

    def test_the_step_its_description_and_its_variants_in_order(self):
        found = registration(KERNEL)
        self.assertEqual(found.step, "07_fixture")
        self.assertEqual(found.adds, "cp.async pipeline, tiles shared in smem")
        self.assertEqual(list(found.variants.items()),
                         [("k64", "K slices of 64, 3 stages"),
                          ("tile_128x256", '128 x 256 tiles of 8 warps, K slices of 64, "4" stages'),
                          ("sync_copies", "16-byte load, then store, instead of cp.async")])
        self.assertEqual(found.line, 15)

    def test_a_step_without_variants(self):
        found = registration('WORKLOG_REGISTER_STEP(Step<float>{"01_x", launch}.adds("one thread per element"))\n')
        self.assertEqual((found.step, found.adds, found.variants), ("01_x", "one thread per element", {}))

    def test_registrations_that_cannot_be_read(self):
        for text, message in (
                ("int x;\n", "07_fixture/kernel.cu: no WORKLOG_REGISTER_STEP(...) statements"),
                ('WORKLOG_REGISTER_STEP(Step<float>{"a", f}.adds("x"))\n' * 2, "2 WORKLOG_REGISTER_STEP(...)"),
                ('WORKLOG_REGISTER_STEP(Step<float>{"a", f}.adds(kWhat))\n', ":1: .adds(...)'s argument is not a string"),
                ('WORKLOG_REGISTER_STEP(Step<float>{"a", f}\n.reuses_tile(1, 1))\n', "the step 'a' has no .adds"),
                ('WORKLOG_REGISTER_STEP(Step<float>{"a", f}.adds("x")\n.variant("v", launch_v))\n',
                 ":2: the description of the variant 'v' is not a string literal"),
                ('WORKLOG_REGISTER_STEP(Step<float>{"a", f}.adds("x").variant("v", "1", g).variant("v", "2", h))\n',
                 "the variant 'v' is registered twice"),
                ('WORKLOG_REGISTER_STEP(Step<float>{"a", f}.adds("x")\n', "has no closing parenthesis")):
            with self.subTest(message=message):
                self.assertIn(message, self.error(text))

    def test_read_checks_the_directory_name(self):
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "07_other").mkdir()
            (Path(tmp) / "07_other" / "kernel.cu").write_text(KERNEL, encoding="utf-8")
            with self.assertRaises(RegistrationError) as caught:
                registrations.read(tmp, "07_other")
            self.assertIn("07_other/kernel.cu:15: registers '07_fixture', not '07_other'", str(caught.exception))
            with self.assertRaises(RegistrationError) as caught:
                registrations.read(tmp, "08_missing")
            self.assertIn("08_missing/kernel.cu", str(caught.exception))

    def test_the_builds_list_of_steps(self):
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "CMakeLists.txt").write_text(
                "# add_worklog_step(00_comment) is no step\nadd_worklog_step(01_a)\n  add_worklog_step( 02_b HOPPER "
                "FALLBACK 01_a)\nfunction(add_worklog_step step)\n", encoding="utf-8")
            self.assertEqual(registrations.steps(tmp), ["01_a", "02_b"])
            with self.assertRaises(RegistrationError):
                registrations.steps(Path(tmp) / "nowhere")


class RepositoryTest(unittest.TestCase):
    """This checkout's kernels and READMEs."""

    def test_every_step_of_the_build_registers_itself(self):
        steps = registrations.steps(ROOT)
        self.assertIn("01_naive", steps)
        for step in steps:
            with self.subTest(step=step):
                found = registrations.read(ROOT, step)
                self.assertTrue(found.adds)
                self.assertTrue(all(found.variants.values()), found.variants)

    def test_every_variant_a_readme_table_names_is_registered(self):
        tables = readme_blocks.variant_tables(ROOT)
        self.assertTrue(tables)
        for table, rows in tables.items():
            for step, variant in rows:
                with self.subTest(table=table, step=step, variant=variant):
                    self.assertIn(step, registrations.steps(ROOT))
                    if variant:
                        self.assertIn(variant, registrations.read(ROOT, step).variants,
                                      f"{table}/README.md's variant table names {step}/{variant}, which "
                                      f"{step}/kernel.cu does not register")

    def test_readme_blocks_names_no_step_outside_its_docstrings(self):
        # The build's list (CMakeLists.txt) is the only list of steps: a step's choices live in its README.
        tree = ast.parse((PLOTS / "readme_blocks.py").read_text(encoding="utf-8"))
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
