"""The stream-K schedule of common/sm90/stream_k_schedule.cuh, in Python, for 11's picture: the rule
(`divide`), the plan's units (`plan_schedule`: begin of each unit's range) and each worker's walk
(`Walk`: its units' pieces first, then its whole tiles). The same integer arithmetic as the C++;
plots/tests/test_pictures.py checks it against what common/tests/stream_k_schedule.cu states.
Standard library only.
"""
from dataclasses import dataclass


def ceil_div(a, b):
    return a // b + (1 if a % b else 0)


def divide(tiles, k_tiles, workers, decomposition="hybrid", fixup_slices=16, split_k=1):
    """(sk_tiles, split): tiles [0, sk_tiles) are split, each in `split` aligned k-parts, or (split 0)
    with all their iterations dealt evenly over the units. stream_k_schedule.cuh's divide."""
    waves, remainder = tiles // workers, tiles % workers
    if decomposition == "data_parallel":
        return 0, 0
    if decomposition == "stream_k":
        return tiles, 0
    if decomposition == "split_k":
        return tiles, min(split_k, k_tiles)
    if decomposition == "hybrid_even":
        if remainder == 0 or k_tiles * (workers - remainder) <= fixup_slices * workers:
            return 0, 0
        return (remainder + workers if waves >= 1 else remainder), 0
    if decomposition != "hybrid":
        raise ValueError(f"unknown decomposition {decomposition}")
    if remainder == 0:
        return 0, 0
    parts = min(workers // remainder, k_tiles)
    if parts < 2 or k_tiles - ceil_div(k_tiles, parts) <= fixup_slices:
        return 0, 0
    return remainder, parts


@dataclass
class Schedule:
    tiles: int
    k_tiles: int
    sk_tiles: int = 0
    units: int = 0
    split: int = 0
    q: int = 0
    rem: int = 0
    workers: int = 0

    def begin(self, u):
        """The first iteration (tile · k_tiles + slice) of unit u's range; begin(units) ends the last."""
        if self.split > 0:
            part = u % self.split
            return (u // self.split) * self.k_tiles + part * self.q + min(part, self.rem)
        return u * self.q + min(u, self.rem)

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


def plan_schedule(tiles, k_tiles, resident, decomposition="hybrid", fixup_slices=16, split_k=1):
    """The schedule of `tiles` tiles of k_tiles slices on `resident` workers, as plan_schedule."""
    s = Schedule(tiles, k_tiles)
    s.sk_tiles, split = divide(tiles, k_tiles, resident, decomposition, fixup_slices, split_k)
    iterations = s.sk_tiles * k_tiles
    if split > 0:
        s.split, s.units = split, s.sk_tiles * split
        s.q, s.rem = k_tiles // split, k_tiles % split
    elif s.sk_tiles > 0:
        s.units = min(resident, iterations)
        s.q, s.rem = iterations // s.units, iterations % s.units
    s.workers = min(resident, max(s.units, tiles - s.sk_tiles))
    return s


def plan_shape(config, m, n, k, resident):
    """11's plan of an M × N × K problem (stream_k_kernel.cuh's plan_shape): cluster tiles of
    cluster_size block tiles stacked vertically, k-slices of block_tile_k, under config's rule."""
    tiles_m, tiles_n = ceil_div(m, config["block_tile_m"]), ceil_div(n, config["block_tile_n"])
    return plan_schedule(ceil_div(tiles_m, config["cluster_size"]) * tiles_n, ceil_div(k, config["block_tile_k"]),
                         resident, config["decomposition"], config["fixup_slices"], config["split_k"])
