"""Tests for plots/pictures/: the configuration reader (config.py) against the numbers the sources
state, the stream-K arithmetic (stream_k.py) against what common/tests/stream_k_schedule.cu checks of
the C++, and the committed pictures (docs/pictures/*.svg) against a redraw, so that a change of a
step's configuration without `python3 plots/pictures/draw.py` fails. The redraw needs matplotlib, and
the one plots/constraints.txt pins (another draws other bytes); without it that test is skipped.

Run from anywhere:  python3 -m unittest discover -s plots/tests -v
"""
import filecmp
import importlib.util
import re
import tempfile
import unittest
from pathlib import Path

from support import PLOTS, ROOT  # noqa: E402  (first: it sets the import path)
from pictures import config  # noqa: E402
from pictures import stream_k  # noqa: E402

PICTURES = ROOT / "docs" / "pictures"


def stated(path, name):
    """The integer a source states for `name` the first time it declares it (`name = 128;` or
    `name = 64, other = ...`), read with a pattern of its own rather than config.py's."""
    text = (ROOT / path).read_text(encoding="utf-8")
    match = re.search(r"\b" + name + r"\s*=\s*(\d+)\s*[;,]", text)
    if not match:
        raise AssertionError(f"{path} states no {name}")
    return int(match.group(1))


class ConfigReaderTest(unittest.TestCase):
    def test_struct_config_of_later_steps(self):
        for step, names in [("07_async_pipeline", ["block_tile_m", "block_tile_n", "block_tile_k", "warp_tile_m",
                                                   "warp_tile_n", "stages", "row_padding"]),
                            ("09_wgmma_tma", ["block_tile_m", "block_tile_n", "block_tile_k", "stages",
                                              "producer_registers", "consumer_registers"]),
                            ("10_persistent_clusters", ["cluster_size", "group_rows", "stages"]),
                            ("11_split_k", ["block_tile_m", "block_tile_n", "block_tile_k", "cluster_size",
                                            "fixup_slices"]),
                            ("12_stream_k", ["block_tile_m", "block_tile_n", "block_tile_k", "cluster_size",
                                             "fixup_slices"]),
                            ("13_swap_ab", ["block_tile_n", "block_tile_k"])]:
            read = config.step_config(step)
            for name in names:
                with self.subTest(step=step, name=name):
                    self.assertEqual(read[name], stated(f"{step}/kernel.cu", name))

    def test_variants_are_not_the_config(self):
        # 07's Stages2 says `stages = 2` after Config's 4; 08's SmallTile `block_tile_m = 32`.
        self.assertEqual(config.step_config("07_async_pipeline")["stages"], stated("07_async_pipeline/kernel.cu", "stages"))
        self.assertNotEqual(config.step_config("07_async_pipeline")["stages"], 2)
        self.assertEqual(config.step_config("08_mma_ldmatrix")["block_tile_m"],
                         stated("08_mma_ldmatrix/kernel.cu", "block_tile_m"))

    def test_file_scope_constants_of_early_steps(self):
        for step, names in [("01_naive", ["block_cols", "block_rows"]), ("02_block_tiling", ["tile"]),
                            ("03_thread_coarsening", ["block_tile_m", "block_tile_n", "block_tile_k",
                                                      "thread_tile_m", "thread_tile_n"]),
                            ("04_outer_product", ["block_tile_m", "block_tile_k", "thread_tile_m"]),
                            ("06_multiwarp_wmma", ["block_tile_m", "block_tile_n", "warp_tile_m", "warp_tile_n"])]:
            read = config.step_config(step)
            for name in names:
                with self.subTest(step=step, name=name):
                    self.assertEqual(read[name], stated(f"{step}/kernel.cu", name))

    def test_rule_and_fixup_aliases_and_library_constants(self):
        for step in ["11_split_k", "12_stream_k", "13_swap_ab"]:
            text = (ROOT / step / "kernel.cu").read_text(encoding="utf-8")
            for name in ["rule", "fixup"]:
                with self.subTest(step=step, name=name):
                    self.assertEqual(config.step_config(step)[name],
                                     re.search(r"using " + name + r" = stream_k::(\w+(?:<\d+>)?);", text).group(1))
        self.assertEqual(config.header_constants("common/hopper.cuh")["wgmma_m"], stated("common/hopper.cuh", "wgmma_m"))
        self.assertEqual(config.header_constants("common/wmma_tiles.cuh")["fragment_size"],
                         stated("common/wmma_tiles.cuh", "fragment_size"))
        self.assertEqual(config.swap_width(16), 16)
        self.assertEqual(config.swap_width(17), 32)
        self.assertEqual(config.swap_width(100000), 256)

    def test_declarations_forms(self):
        source = """
constexpr int a = 4, b = a * 2;  // two on a line, one from the other
struct Config {
  static constexpr int big = 1 << 30;
  static constexpr bool on = true;
  static constexpr Kind kind =
      Kind::even;                  // over two lines
  static constexpr int half = big / 2;
  static constexpr int skipped = sizeof(float);
  using rule =
      stream_k::EveryTileInParts<half / (1 << 28)>;  // over two lines, an argument from names
  using fixup = worklog::stream_k::ByFirstUnit;
  using Base::inherited;
  using unread = std::array<float, sizeof(float)>;
};
struct Variant : Config {
  static constexpr int big = 3;
};
void f() {
  constexpr int inside = 9;
}
"""
        self.assertEqual(config.declarations(config.struct_body(source, "Config")),
                         {"big": 1 << 30, "on": True, "kind": "even", "half": 1 << 29, "rule": "EveryTileInParts<2>",
                          "fixup": "ByFirstUnit"})
        self.assertEqual(config.declarations(config.file_scope_lines(source)), {"a": 4, "b": 8})


def header_rules_and_fixups():
    """The rules (structs with a `static Division divide`) and the fixups (structs with alone_units)
    that split_k_schedule.cuh and stream_k_schedule.cuh declare, by name ("EveryTileInParts" for a
    template)."""
    rules, fixups = set(), set()
    for header in ["common/sm90/split_k_schedule.cuh", "common/sm90/stream_k_schedule.cuh"]:
        text = (ROOT / header).read_text(encoding="utf-8")
        for match in re.finditer(r"^struct (\w+) \{\n(.*?)^\};", text, re.MULTILINE | re.DOTALL):
            if "static Division divide(" in match.group(2):
                rules.add(match.group(1))
            if "alone_units" in match.group(2):
                fixups.add(match.group(1))
    return rules, fixups


class StreamKArithmeticTest(unittest.TestCase):
    """What common/tests/stream_k_schedule.cu checks of the C++ plan, at its Config and variants (read
    from it)."""

    @classmethod
    def setUpClass(cls):
        cls.text = (ROOT / "common/tests/stream_k_schedule.cu").read_text(encoding="utf-8")
        cls.config = config.declarations(config.struct_body(cls.text, "Config"))

    def variant(self, name):
        """The configuration of the C++ test's struct `name` (`struct Name : Base { … }`), its bases'
        knobs under its own."""
        if name == "Config":
            return dict(self.config)
        base = re.search(r"^struct " + name + r" : (\w+) \{", self.text, re.MULTILINE).group(1)
        return dict(self.variant(base), **config.declarations(config.struct_body(self.text, name)))

    def plan(self, m, n, k, resident=66, **changes):
        return stream_k.plan_shape(dict(self.config, **changes), m, n, k, resident)

    def test_the_test_config_reads_as_the_steps(self):
        # Config is step 12's (11's rule, the shared fixup); FixupAlone step 11's (its fixup by one unit).
        for step, variant in [("12_stream_k", "Config"), ("11_split_k", "FixupAlone")]:
            read, planned = config.step_config(step), self.variant(variant)
            for name in ["block_tile_m", "block_tile_n", "block_tile_k", "cluster_size", "fixup_slices", "rule",
                         "fixup"]:
                with self.subTest(step=step, name=name):
                    self.assertEqual(planned[name], read[name])

    def test_every_rule_and_fixup_of_the_headers_is_known(self):
        rules, fixups = header_rules_and_fixups()
        self.assertEqual(rules, set(stream_k.RULES) | {"EveryTileInParts"})
        self.assertEqual(fixups, {"ByFirstUnit", "SharedAbove"})
        self.assertEqual(stream_k.alone_units("SharedAbove<2>"), 2)
        self.assertGreater(stream_k.alone_units("ByFirstUnit"), 1 << 20)
        for rule in ["Hybrid", "EveryTileInParts<1>"]:
            with self.assertRaises(ValueError, msg=rule):
                stream_k.divide(1, 1, 1, rule)
        for fixup in ["ByOneUnit", "SharedAbove<0>"]:
            with self.assertRaises(ValueError, msg=fixup):
                stream_k.alone_units(fixup)

    def test_cube_3072(self):
        s = self.plan(3072, 3072, 3072)
        self.assertEqual((s.tiles, s.sk_tiles, s.split, s.units), (144, 12, 5, 60))
        self.assertEqual(s.begin(1) - s.begin(0), 10)
        self.assertEqual(s.begin(5) - s.begin(4), 9)
        self.assertEqual(s.begin(5), 48)

    def test_long_k(self):
        s = self.plan(1024, 1024, 8192)
        self.assertEqual((s.tiles, s.sk_tiles, s.split, s.units), (16, 16, 4, 64))
        self.assertEqual(self.plan(512, 512, 16384).split, 16)

    def test_whole_tiles(self):
        for shape in [(1024, 1024, 1024), (1536, 1536, 1536), (2048, 2048, 2048), (4096, 4096, 4096),
                      (8192, 8192, 8192), (2176, 2304, 72), (8448, 1024, 4096)]:
            with self.subTest(shape=shape):
                self.assertEqual(self.plan(*shape).sk_tiles, 0)

    def test_even_deal(self):
        s = stream_k.plan_shape(self.variant("HybridEven"), 3072, 3072, 3072, 66)
        self.assertEqual((s.sk_tiles, s.units, s.split, s.span, s.slots_per_unit), (78, 66, 66, 78 * 48, 2))

    def test_walks_cover_every_iteration_once(self):
        for variant in ["Config", "DataParallel", "SplitK2", "SplitK4", "StreamKOnly", "HybridEven", "NoCluster"]:
            for shape in [(3072, 3072, 3072), (1024, 1024, 8192), (300, 264, 10000), (4352, 2304, 2056)]:
                for resident in [66, 5]:
                    with self.subTest(variant=variant, shape=shape, resident=resident):
                        s = stream_k.plan_shape(self.variant(variant), *shape, resident)
                        covered = [(tile, kt) for w in range(s.workers) for tile, kb, ke, _ in s.walk(w)
                                   for kt in range(kb, ke)]
                        self.assertEqual(sorted(covered),
                                         [(t, kt) for t in range(s.tiles) for kt in range(s.k_tiles)])

    def test_units_and_shares(self):
        # unit_of inverts begin; a shared tile's pieces are dealt out once over its units' consumers.
        for variant in ["Config", "SplitK4", "StreamKOnly", "HybridEven"]:
            for shape in [(3072, 3072, 3072), (1024, 1024, 8192), (4352, 2304, 2056)]:
                with self.subTest(variant=variant, shape=shape):
                    s = stream_k.plan_shape(self.variant(variant), *shape, 66)
                    for u in range(s.units):
                        for x in range(s.begin(u), s.begin(u + 1)):
                            self.assertEqual(s.unit_of(x), u)
                    for tile in range(s.sk_tiles):
                        dealt = [p for u in range(s.first_unit(tile), s.last_unit(tile) + 1) for consumer in range(2)
                                 for p in range(*s.share_of(u, tile, consumer, 2, 16))]
                        self.assertEqual(dealt, list(range(16)))


def pinned_matplotlib():
    """The matplotlib plots/constraints.txt pins, or None."""
    for line in (PLOTS / "constraints.txt").read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line.startswith("matplotlib=="):
            return line.split("==", 1)[1].strip()
    return None


@unittest.skipIf(importlib.util.find_spec("matplotlib") is None,
                 "matplotlib is not installed: the pictures cannot be redrawn (plots/requirements.txt)")
class CommittedPicturesTest(unittest.TestCase):
    def setUp(self):
        import matplotlib
        if matplotlib.__version__ != pinned_matplotlib():
            self.skipTest(f"matplotlib {matplotlib.__version__} is not the {pinned_matplotlib()} of"
                          " plots/constraints.txt, which drew the committed pictures")
        from pictures import draw
        self.draw = draw

    def test_committed_pictures_are_their_redraw(self):
        with tempfile.TemporaryDirectory() as folder:
            drawn = self.draw.draw_all(folder)
            for path in drawn:
                with self.subTest(picture=path.name):
                    committed = PICTURES / path.name
                    self.assertTrue(committed.exists(), f"{committed} is missing: python3 plots/pictures/draw.py")
                    self.assertTrue(filecmp.cmp(path, committed, shallow=False),
                                    f"{committed} differs from its redraw from the steps' configuration:"
                                    " python3 plots/pictures/draw.py")
        self.assertEqual(sorted(p.name for p in PICTURES.glob("*.svg")), sorted(p.name for p in drawn),
                         "docs/pictures/ holds an SVG the script does not draw")

    def test_redraw_is_deterministic(self):
        with tempfile.TemporaryDirectory() as folder:
            paths = []
            for attempt in range(2):
                for step in ["01_naive", "11_split_k", "12_stream_k"]:
                    paths.append(Path(folder) / f"{step}.{attempt}.svg")
                    self.draw.PICTURES_DRAWN[step](step).save(paths[-1])
            for a, b in zip(paths[:3], paths[3:]):
                self.assertTrue(filecmp.cmp(a, b, shallow=False), a.name)
            text = paths[0].read_text(encoding="utf-8")
            self.assertNotIn("<dc:date>", text)
            self.assertIn("<text", text)  # text as text (svg.fonttype none): reviewable


if __name__ == "__main__":
    unittest.main()
