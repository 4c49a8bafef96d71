"""Step 15's menu (common/sm90/tile_per_shape.cu) in Python, for its picture: each entry's
configuration (config.menu_entry_config), its pipeline stages (stages_that_fit), its resident
clusters on a GPU of `sms` SMs (one block an SM, as the route report counts them), its plan under 11's
schedule (stream_k.plan_shape) and the work of its busiest cluster (busiest_cluster:
tile_per_shape.hpp's Work, the terms the model prices). The same integer arithmetic as the C++;
plots/tests/test_pictures.py checks it against the counts 15's and 16's READMEs state. Standard
library only.
"""
from dataclasses import dataclass

from pictures import config
from pictures import stream_k

HALF_BYTES = 2  # sizeof(__half)


def stages_that_fit(c, hopper, max_shared_bytes):
    """tile_per_shape.cu's stages_that_fit for the entry configuration c: the most stages (at most
    max_stages) of block_tile_m × block_tile_n tiles, 64-wide in k, beside the C staging buffers."""
    swizzle_halves = hopper["swizzle_bytes"] // HALF_BYTES
    stage_bytes = (c["block_tile_m"] + c["block_tile_n"]) * swizzle_halves * 2
    consumers = c["block_tile_m"] // hopper["wgmma_m"]
    c_staging_bytes = consumers * c["c_buffers"] * hopper["wgmma_m"] * hopper["swizzle_bytes"]
    fit = (max_shared_bytes - c_staging_bytes - hopper["swizzle_atom_bytes"]) // (stage_bytes + 16)
    return min(fit, c["max_stages"])


def resident_clusters(c, sms):
    """An entry's clusters resident at once on `sms` SMs: one block an SM (each block's launch takes
    every register: launch_registers_per_thread), cluster_size blocks a cluster; the route report's
    count (common/tests/lab_routes/step_15.cu: gpu.sms / e.cluster)."""
    return sms // c["cluster_size"]


@dataclass
class Work:
    """tile_per_shape.hpp's Work: what an entry's busiest cluster does on a shape."""
    slices: int
    segments: int
    fixup: bool
    unaligned_slices: int
    shared_fixup: bool = False


def busiest_cluster(s, lda, ldb, alone_units, line_halves):
    """tile_per_shape.cu's busiest_cluster (and tile_per_shape::busiest_cluster's shared_fixup) on the
    Schedule s: whole tiles ⌈(T − sk_tiles) / workers⌉, then its units of a split last wave; rows of A
    or B off a line_halves line cost every slice."""
    whole_per_worker = stream_k.ceil_div(s.tiles - s.sk_tiles, s.workers)
    units_per_worker = stream_k.ceil_div(s.units, s.workers) if s.units > 0 else 0
    unit_slices = s.q + (1 if s.rem > 0 else 0) if s.units > 0 else 0
    unit_segments = 1 if s.split > 0 else 2  # an even deal may cross one tile boundary
    slices = whole_per_worker * s.k_tiles + units_per_worker * unit_slices
    off_lines = lda % line_halves != 0 or ldb % line_halves != 0
    shared = s.units > 0 and any(not s.fixed_up_alone(tile, alone_units) for tile in range(s.sk_tiles))
    return Work(slices, whole_per_worker + units_per_worker * unit_segments, s.units > 0,
                slices if off_lines else 0, shared)


@dataclass
class Entry:
    name: str
    description: str
    config: dict
    stages: int
    resident: int


def menu(sms, root=config.ROOT):
    """The menu's entries, in menu_items' order, on a GPU of `sms` SMs."""
    hopper = config.header_constants("common/hopper.cuh", root)
    shared = config.header_constants("common/kernel_utils.cuh", root)["max_shared_bytes_per_block"]
    entries = []
    for item in config.menu_items(root):
        c = config.menu_entry_config(item, root)
        entries.append(Entry(item["name"], item["description"], c, stages_that_fit(c, hopper, shared),
                             resident_clusters(c, sms)))
    return entries


def plan(entry, m, n, k):
    """The entry's schedule of an M × N × K problem on its resident clusters (11's plan_shape)."""
    return stream_k.plan_shape(entry.config, m, n, k, entry.resident)


def work(entry, m, n, k, lda=None, ldb=None, root=config.ROOT):
    """The entry's busiest cluster on an M × N × K problem (packed rows unless lda, ldb are given)."""
    line_halves = config.header_constants("common/hopper.cuh", root)["swizzle_bytes"] // HALF_BYTES
    return busiest_cluster(plan(entry, m, n, k), k if lda is None else lda, n if ldb is None else ldb,
                           stream_k.alone_units(entry.config["fixup"]), line_halves)
