"""Tests for plots/pictures/: the configuration reader (config.py) against the numbers the sources
state, the stream-K arithmetic (stream_k.py) against what common/tests/stream_k_schedule.cu checks of
the C++, 14's padding decision (padding.py) and 15's menu and busiest clusters (tile_menu.py) against
the counts their READMEs state, and the committed pictures (docs/pictures/*.svg) against a redraw, so that a change of a
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
from pictures import padding  # noqa: E402
from pictures import stream_k  # noqa: E402
from pictures import tile_menu  # noqa: E402

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

    def test_inline_and_size_t_declarations(self):
        # the library's headers: `inline constexpr int max_m = 128;`, `constexpr std::size_t x = 256;`
        source = "inline constexpr int few = 128;\nconstexpr std::size_t align = 2 * few;\nconstexpr float no = 1;\n"
        self.assertEqual(config.declarations(config.file_scope_lines(source)), {"few": 128, "align": 256})
        self.assertEqual(config.header_constants("common/sm90/swap_gemm.hpp")["max_m"],
                         stated("common/sm90/swap_gemm.hpp", "max_m"))
        self.assertEqual(config.header_constants("common/kernel_utils.cuh")["max_shared_bytes_per_block"], 227 * 1024)


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


def readme_value(step, name):
    """The integer a step's README gives a knob: "`name` = 32"."""
    text = (ROOT / step / "README.md").read_text(encoding="utf-8")
    match = re.search(r"`" + name + r"` = (\d+)", text)
    if not match:
        raise AssertionError(f"{step}/README.md gives no `{name}` = …")
    return int(match.group(1))


class PaddingTest(unittest.TestCase):
    """padding.py (14's picture) against pad_unaligned.cuh's constants and what 14's README says of
    the routes and copies."""

    @classmethod
    def setUpClass(cls):
        cls.pad = padding.constants()

    def plan(self, m, n, k, pad=None):
        return padding.plan_padding(m, n, k, k, n, n, pad or self.pad)  # packed rows

    def test_constants_read_as_stated(self):
        for name in ["in_place_max_m", "direct_c_max_k", "halves_per_chunk", "scratch_alignment"]:
            with self.subTest(name=name):
                self.assertEqual(self.pad[name], stated("common/sm90/pad_unaligned.cuh", name))
        self.assertEqual(self.pad["swap_max_m"], stated("common/sm90/swap_gemm.hpp", "max_m"))
        for name in ["in_place_max_m", "direct_c_max_k"]:
            with self.subTest(readme=name):
                self.assertEqual(readme_value("14_pad_unaligned", name), self.pad[name])

    def test_alignment(self):
        self.assertEqual(padding.aligned(4096, 4096, 4096, 4096, self.pad), (True, True, True))
        self.assertEqual(padding.aligned(4097, 4097, 4097, 4097, self.pad), (False, False, False))
        self.assertEqual(padding.aligned(4100, 4104, 4100, 4100, self.pad), (True, False, True))  # C: floats
        self.assertEqual(padding.aligned(4098, 4096, 4096, 4100, self.pad), (True, True, False))  # C's N

    def test_routes_of_the_readmes_shapes(self):
        # 14's README: 4097³ takes 12 on padded A and B with C staged; 4097 × 4097 × 4096 the swap
        # kernel on a padded B, C written directly; 46341² × 17 the swap kernel on padded A and B; few
        # rows with B unaligned read in place up to in_place_max_m, and M = 64 pads.
        for shape, route, copies in [((4097, 4097, 4097), "staged_c", (True, True, True)),
                                     ((4097, 4097, 4096), "swap_direct_c", (False, True, False)),
                                     ((46341, 46341, 17), "swap_direct_c", (True, True, False)),
                                     ((8, 4097, 4096), "in_place", (False, False, False)),
                                     ((64, 4097, 4096), "swap_step", (False, True, False)),
                                     ((4096, 4096, 4096), "swap_step", (False, False, False))]:
            with self.subTest(shape=shape):
                d = self.plan(*shape)
                self.assertEqual((d.route, (d.pad_a, d.pad_b, d.stage_c)), (route, copies))

    def test_staged_c_pads_b_to_its_columns(self):
        # C staged at N8 columns needs B at N8 columns too, even where B's rows are aligned (ldb 4104).
        d = padding.plan_padding(4097, 4097, 4097, 4097, 4104, 4097, self.pad)
        self.assertTrue(d.stage_c and d.pad_b)

    def test_buffers_of_4097_cubed(self):
        m = n = k = 4097
        d = self.plan(m, n, k)
        self.assertEqual((d.k8, d.n8), (4104, 4104))
        align = self.pad["scratch_alignment"]
        self.assertEqual(d.a_offset, 0)
        self.assertEqual(d.b_offset, padding.round_up(2 * m * d.k8, align))
        self.assertEqual(d.c_offset, d.b_offset + padding.round_up(2 * k * d.n8, align))
        self.assertEqual(d.rest_offset, d.c_offset + padding.round_up(4 * m * d.n8, align))
        for offset in [d.b_offset, d.c_offset, d.rest_offset]:
            self.assertEqual(offset % align, 0)

    def test_copy_bytes_as_the_readme_counts_them(self):
        text = (ROOT / "14_pad_unaligned/README.md").read_text(encoding="utf-8")
        everything = float(re.search(r"C staged \(4·M·N₈ read and 4·M·N written more\),\s*(\d+\.\d) MB",
                                     text).group(1))
        d = self.plan(4097, 4097, 4097)
        self.assertEqual(round(sum(padding.copy_bytes(4097, 4097, 4097, d).values()) / 1e6, 1), everything)
        # pad_always at M = 8: the copy of B the rule reads in place (its variant: in_place_max_m = 0)
        always = dict(self.pad, **config.struct_config("14_pad_unaligned/kernel.cu", "PadAlways"))
        self.assertEqual(always["in_place_max_m"], 0)
        d = self.plan(8, 4097, 4096, always)
        copy_of_b = float(re.search(r"`pad_always` is a copy of B, (\d+\.\d) MB", text).group(1))
        self.assertEqual(round(padding.copy_bytes(8, 4097, 4096, d)["B"] / 1e6, 1), copy_of_b)


class TileMenuTest(unittest.TestCase):
    """tile_menu.py (15's picture) against tile_per_shape.cu and the counts 15's and 16's READMEs
    state."""

    @classmethod
    def setUpClass(cls):
        cls.menu = {e.name: e for e in tile_menu.menu(132)}

    def test_menu_as_the_readmes_list_it(self):
        for step in ["15_tile_per_shape", "16_both_orientations"]:
            text = (ROOT / step / "README.md").read_text(encoding="utf-8")
            listed = list(dict.fromkeys(re.findall(r"`(menu_\d+x\d+_c\d+)`", text)))
            with self.subTest(step=step):
                self.assertEqual(listed, list(self.menu))
        self.assertEqual(len(config.menu_items()), 9)

    def test_entry_configuration(self):
        source = "common/sm90/tile_per_shape.cu"
        for e in self.menu.values():
            for name in ["block_tile_k", "max_stages", "fixup_slices", "c_buffers"]:
                self.assertEqual(e.config[name], stated(source, name))
            self.assertEqual((e.config["rule"], e.config["fixup"]), ("LastWaveInParts", "SharedAbove<2>"))
        e = self.menu["menu_64x256_c2"].config
        self.assertEqual((e["block_tile_m"], e["block_tile_n"], e["cluster_size"]), (64, 256, 2))
        self.assertEqual(stream_k.alone_units(e["fixup"]), readme_value("16_both_orientations", "fixup_alone_units"))

    def test_stages_fit_as_the_layout_checks(self):
        # 11's tile: 12's stages; every entry's Layout (stream_k_kernel.cuh) within 227 KiB, one stage
        # more over it (or max_stages).
        self.assertEqual(self.menu["menu_128x256_c2"].stages, stated("12_stream_k/kernel.cu", "stages"))
        hopper = config.header_constants("common/hopper.cuh")
        most = config.header_constants("common/kernel_utils.cuh")["max_shared_bytes_per_block"]
        for e in self.menu.values():
            c = e.config

            def shared_bytes(stages):
                stage = (c["block_tile_m"] + c["block_tile_n"]) * hopper["swizzle_bytes"]
                consumers = c["block_tile_m"] // hopper["wgmma_m"]
                staging = consumers * c["c_buffers"] * hopper["wgmma_m"] * hopper["swizzle_bytes"]
                return stages * stage + staging + 2 * stages * 8 + hopper["swizzle_atom_bytes"]

            with self.subTest(entry=e.name):
                self.assertLessEqual(shared_bytes(e.stages), most)
                self.assertTrue(e.stages == c["max_stages"] or shared_bytes(e.stages + 1) > most)
        self.assertEqual([e.resident for e in self.menu.values()], [132 // e.config["cluster_size"]
                                                                    for e in self.menu.values()])

    def busy_sms(self, e, s):
        return sum(e.config["cluster_size"] for w in range(s.workers) if s.walk(w))

    def test_1024_cubed(self):
        # 15's README, why one tile loses: 11's tile makes 16 cluster tiles, 32 of 132 SMs working for
        # all 16 slices, K not split; 64 × 128 tiles make 128, on 128 SMs.
        e = self.menu["menu_128x256_c2"]
        s = tile_menu.plan(e, 1024, 1024, 1024)
        self.assertEqual((s.tiles, s.sk_tiles, self.busy_sms(e, s)), (16, 0, 32))
        self.assertEqual(tile_menu.work(e, 1024, 1024, 1024), tile_menu.Work(16, 1, False, 0, False))
        e = self.menu["menu_64x128_c1"]
        s = tile_menu.plan(e, 1024, 1024, 1024)
        self.assertEqual((s.tiles, self.busy_sms(e, s)), (128, 128))
        # what the picture says: the entries that use the SMs best, counted in FLOP
        used = {}
        for e in self.menu.values():
            c, w = e.config, tile_menu.work(e, 1024, 1024, 1024)
            used[e.name] = round(2 * 1024 ** 3 / (132 * w.slices * 2 * c["block_tile_m"] * c["block_tile_n"]
                                                  * c["block_tile_k"]), 3)
        best = max(used.values())
        self.assertEqual(sorted(name for name, value in used.items() if value == best),
                         ["menu_128x64_c1", "menu_64x128_c1", "menu_64x64_c1"])
        self.assertEqual(used["menu_128x256_c2"], round(32 / 132, 3))

    def test_3080_cubed(self):
        # 15's README, the answer: 169 cluster tiles, no split, 147 slices in 3 segments; 325 tiles,
        # 245 slices in 5 segments. 3080 is off 64 halves: every slice's rows off a line.
        for name, tiles, slices, segments in [("menu_128x256_c2", 169, 147, 3), ("menu_128x128_c2", 325, 245, 5)]:
            with self.subTest(entry=name):
                e = self.menu[name]
                self.assertEqual(tile_menu.plan(e, 3080, 3080, 3080).tiles, tiles)
                self.assertEqual(tile_menu.work(e, 3080, 3080, 3080), tile_menu.Work(slices, segments, False, slices))
        self.assertEqual(tile_menu.work(self.menu["menu_128x256_c2"], 3072, 3072, 3072).unaligned_slices, 0)

    def test_busiest_cluster_is_the_longest_walk(self):
        # the picture's bars (each worker's walk) end where busiest_cluster's slices say
        for shape in [(1024, 1024, 1024), (3072, 3072, 3072), (3080, 3080, 3080), (256, 4096, 11008),
                      (1024, 1024, 8192), (802816, 64, 576)]:
            for e in self.menu.values():
                with self.subTest(shape=shape, entry=e.name):
                    s = tile_menu.plan(e, *shape)
                    longest = max(sum(end - begin for _, begin, end, _ in s.walk(w)) for w in range(s.workers))
                    self.assertEqual(tile_menu.work(e, *shape).slices, longest)

    def test_shared_fixups_of_16s_question(self):
        # 16's README, the answer at 256 × 4096 × 11008: 44 tiles in 3 parts, 16 cluster tiles in 4;
        # both more parts than fixup_alone_units, so shared.
        for name, tiles, parts in [("menu_128x192_c1", 44, 3), ("menu_128x256_c2", 16, 4)]:
            with self.subTest(entry=name):
                e = self.menu[name]
                s = tile_menu.plan(e, 256, 4096, 11008)
                self.assertEqual((s.tiles, s.sk_tiles, s.split), (tiles, tiles, parts))
                w = tile_menu.work(e, 256, 4096, 11008)
                self.assertTrue(w.fixup and w.shared_fixup)
                self.assertEqual(w.slices, stream_k.ceil_div(stream_k.ceil_div(11008, 64), parts))
        w = tile_menu.work(self.menu["menu_128x128_c2"], 256, 4096, 11008)  # 2 parts: fixed up by one unit
        self.assertTrue(w.fixup and not w.shared_fixup)


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
