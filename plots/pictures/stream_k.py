"""The split-K and stream-K schedules of common/sm90/split_k_schedule.cuh and stream_k_schedule.cuh, in
Python, for the pictures of 11 and 12: the rules (`divide`: WholeTiles, EveryTileInParts<n>,
LastWaveInParts, EveryTileEven, LastWavesEven, as a Config names them in `using rule = …`), the plan's
units (`plan_schedule`: begin of each unit's range, in groups of `split` units cutting `span`
iterations), each worker's walk (`Schedule.walk`: its units' pieces first, then its whole tiles), and
the fixups (`using fixup = …`: ByFirstUnit, SharedAbove<n>): which split tile is fixed up by one unit
and which unit's consumers add up and write which pieces of a shared one (`share_of`). The same integer
arithmetic as the C++; plots/tests/test_pictures.py checks it against what
common/tests/stream_k_schedule.cu states. Standard library only.
"""
import re
from dataclasses import dataclass

INT_MAX = 2147483647  # what plan_schedule lets the walk count in 32 bits


def ceil_div(a, b):
    return a // b + (1 if a % b else 0)


@dataclass
class Division:
    """Which tiles are split, and how (split_k_schedule.cuh's Division): tiles [0, sk_tiles); units in
    groups of `split`, each group cutting `span` consecutive iterations; a unit leaving slots_per_unit
    partials."""
    sk_tiles: int = 0
    split: int = 0
    span: int = 0
    slots_per_unit: int = 0


def in_parts(tiles, parts, k_tiles):
    """The first `tiles` tiles, each in `parts` aligned parts of its k_tiles slices."""
    return Division(tiles, parts, k_tiles, 1)


def evenly(tiles, k_tiles, workers):
    """The first `tiles` tiles with all their iterations dealt evenly over min(G, iterations) units."""
    iterations = tiles * k_tiles
    return Division(tiles, min(workers, iterations), iterations, 2)


def whole_tiles(tiles, k_tiles, workers, fixup_slices):
    return Division()


def every_tile_in_parts(parts):
    if parts < 2:
        raise ValueError("EveryTileInParts: parts must be at least 2")
    return lambda tiles, k_tiles, workers, fixup_slices: in_parts(tiles, min(parts, k_tiles), k_tiles)


def last_wave_in_parts(tiles, k_tiles, workers, fixup_slices):
    """The step's rule (11): the r = T mod G tiles of the last wave, each in ⌊G / r⌋ aligned parts, when
    that saves more than fixup_slices."""
    remainder = tiles % workers
    if remainder == 0:
        return Division()
    parts = min(workers // remainder, k_tiles)
    if parts < 2 or k_tiles - ceil_div(k_tiles, parts) <= fixup_slices:
        return Division()
    return in_parts(remainder, parts, k_tiles)


def every_tile_even(tiles, k_tiles, workers, fixup_slices):
    return evenly(tiles, k_tiles, workers)


def last_waves_even(tiles, k_tiles, workers, fixup_slices):
    waves, remainder = tiles // workers, tiles % workers
    if remainder == 0 or k_tiles * (workers - remainder) <= fixup_slices * workers:
        return Division()
    return evenly(remainder + workers if waves >= 1 else remainder, k_tiles, workers)


RULES = {"WholeTiles": whole_tiles, "LastWaveInParts": last_wave_in_parts, "EveryTileEven": every_tile_even,
         "LastWavesEven": last_waves_even}


def template_argument(name, template):
    """n of "Template<n>", else None."""
    match = re.fullmatch(re.escape(template) + r"<\s*(-?\d+)\s*>", name)
    return int(match.group(1)) if match else None


def rule_of(name):
    """The divide function of the rule a Config names ("LastWaveInParts", "EveryTileInParts<2>", …)."""
    if name in RULES:
        return RULES[name]
    parts = template_argument(name, "EveryTileInParts")
    if parts is not None:
        return every_tile_in_parts(parts)
    raise ValueError(f"unknown rule {name}")


def divide(tiles, k_tiles, workers, rule="LastWaveInParts", fixup_slices=16):
    """The Division the rule named `rule` gives: Rule::divide(tiles, k_tiles, workers, fixup_slices)."""
    return rule_of(rule)(tiles, k_tiles, workers, fixup_slices)


def alone_units(fixup):
    """The fixup's alone_units: a split tile among at most this many units is fixed up by the unit
    holding its slice 0 (ByFirstUnit: every split tile; SharedAbove<n>: n)."""
    if fixup == "ByFirstUnit":
        return 1 << 30
    units = template_argument(fixup, "SharedAbove")
    if units is None:
        raise ValueError(f"unknown fixup {fixup}")
    if units < 1:
        raise ValueError("SharedAbove: units must be at least 1 (1: every split tile shared)")
    return units


@dataclass
class Schedule:
    tiles: int
    k_tiles: int
    sk_tiles: int = 0
    units: int = 0
    split: int = 0
    span: int = 0
    q: int = 0
    rem: int = 0
    slots_per_unit: int = 0
    workers: int = 0

    def begin(self, u):
        """The first iteration (tile · k_tiles + slice) of unit u's range; begin(units) ends the last."""
        part = u % self.split
        return (u // self.split) * self.span + part * self.q + min(part, self.rem)

    def unit_of(self, x):
        """The unit whose range holds iteration x: begin() inverted."""
        longer = self.rem * (self.q + 1)
        group, offset = divmod(x, self.span)
        return group * self.split + (offset // (self.q + 1) if offset < longer else
                                     self.rem + (offset - longer) // self.q)

    def first_unit(self, tile):
        return self.unit_of(tile * self.k_tiles)

    def last_unit(self, tile):
        return self.unit_of((tile + 1) * self.k_tiles - 1)

    def fixed_up_alone(self, tile, alone):
        """Whether split tile `tile` is fixed up by the unit holding its slice 0 alone (at most
        `alone` units hold part of it)."""
        return self.last_unit(tile) - self.first_unit(tile) + 1 <= alone

    def share_of(self, u, tile, consumer, consumers, pieces):
        """The pieces [first, end) of split tile `tile` that consumer warpgroup `consumer` of unit u adds
        up and writes in a shared fixup: the tile's `pieces` evenly over its units' consumers."""
        c0 = self.first_unit(tile)
        shares = (self.last_unit(tile) - c0 + 1) * consumers
        index = (u - c0) * consumers + consumer
        return pieces * index // shares, pieces * (index + 1) // shares

    def walk(self, worker):
        """Worker's segments in order, as (tile, k_begin, k_end, unit): the pieces of its units'
        ranges, cut at tile boundaries (unit -1: a whole tile of the data-parallel part)."""
        segments = []
        for unit in range(worker, self.units, self.workers):
            iteration, end = self.begin(unit), self.begin(unit + 1)
            while iteration < end:
                tile, k_begin = divmod(iteration, self.k_tiles)
                k_end = min(self.k_tiles, k_begin + end - iteration)
                segments.append((tile, k_begin, k_end, unit))
                iteration += k_end - k_begin
        for tile in range(self.sk_tiles + worker, self.tiles, self.workers):
            segments.append((tile, 0, self.k_tiles, -1))
        return segments


def plan_schedule(tiles, k_tiles, resident, rule="LastWaveInParts", fixup_slices=16):
    """The schedule of `tiles` tiles of k_tiles slices on `resident` workers under the rule named
    `rule`, as split_k_schedule.cuh's plan_schedule (its workers in Schedule.workers)."""
    if fixup_slices < 0:
        raise ValueError("fixup_slices must be at least 0")
    s = Schedule(tiles, k_tiles)
    if tiles * k_tiles + resident > INT_MAX:
        raise OverflowError("more than 2^31 tile iterations")
    division = divide(tiles, k_tiles, resident, rule, fixup_slices)
    s.sk_tiles = division.sk_tiles
    if s.sk_tiles > 0:  # every unit at least one iteration (split ≤ span)
        groups = s.sk_tiles * k_tiles // division.span
        if groups * division.split > INT_MAX // 2:
            raise OverflowError("too many tiles for split-K")
        s.split, s.span = division.split, division.span
        s.units = groups * s.split
        s.q, s.rem = s.span // s.split, s.span % s.split
        s.slots_per_unit = division.slots_per_unit
    s.workers = min(resident, max(s.units, tiles - s.sk_tiles))
    if s.units > 0 and s.workers < s.split:
        raise RuntimeError("fewer resident workers than split-K parts")
    return s


def plan_shape(config, m, n, k, resident):
    """The plan of an M × N × K problem by stream_k_kernel.cuh (11's and 12's kernel; its plan_shape):
    cluster tiles of cluster_size block tiles stacked vertically, k-slices of block_tile_k, under
    config's rule."""
    tiles_m, tiles_n = ceil_div(m, config["block_tile_m"]), ceil_div(n, config["block_tile_n"])
    return plan_schedule(ceil_div(tiles_m, config["cluster_size"]) * tiles_n, ceil_div(k, config["block_tile_k"]),
                         resident, config["rule"], config["fixup_slices"])
