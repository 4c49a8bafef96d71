"""Step 14's padding decision (common/sm90/pad_unaligned.cuh) in Python, for its picture: which
operands TMA can read where they are (aligned), the route and the copies (decide_padding), the
copies' buffers in the workspace (plan_padding's offsets, each on a scratch_alignment boundary) and
the bytes the copies move (copy_bytes, as 14's README counts them). The constants are the header's
(constants: PadConfig, halves_per_chunk, scratch_alignment, and swap_ab::max_m of swap_gemm.hpp).
The same integer arithmetic as the C++; standard library only.
"""
from dataclasses import dataclass

from pictures import config

HALF_BYTES, FLOAT_BYTES = 2, 4  # sizeof(__half), sizeof(float): A and B are FP16, C FP32
SOURCE = "common/sm90/pad_unaligned.cuh"


def constants(root=config.ROOT):
    """PadConfig's knobs, the header's halves_per_chunk and scratch_alignment, and swap_max_m (13's
    swap_ab::max_m, above which M goes to 12)."""
    values = dict(config.struct_config(SOURCE, "PadConfig", root=root))
    values.update(config.header_constants(SOURCE, root))
    values["swap_max_m"] = config.header_constants("common/sm90/swap_gemm.hpp", root)["max_m"]
    return values


def round_up(x, to):
    return -(-x // to) * to


def aligned(n, lda, ldb, ldc, pad):
    """a_ok, b_ok, c_ok for bases on 16 bytes (padded_workspace_bytes_with's rule): A's and B's rows a
    whole number of 16-byte chunks apart; C's too, in floats, and its rows ending on one (N)."""
    floats_per_chunk = pad["halves_per_chunk"] * HALF_BYTES // FLOAT_BYTES
    return (lda % pad["halves_per_chunk"] == 0, ldb % pad["halves_per_chunk"] == 0,
            ldc % floats_per_chunk == 0 and n % floats_per_chunk == 0)


@dataclass
class Padding:
    """pad_unaligned.cuh's Padding: the route, the copies, the padded leading dimensions and the
    copies' offsets in the workspace (rest_offset: where the workspace of the route it hands over to
    begins)."""
    route: str = "swap_step"
    pad_a: bool = False
    pad_b: bool = False
    stage_c: bool = False
    k8: int = 0
    n8: int = 0
    a_offset: int = 0
    b_offset: int = 0
    c_offset: int = 0
    rest_offset: int = 0


def decide_padding(m, n, k, a_ok, b_ok, c_ok, pad):
    """decide_padding<Pad>: the route (swap_step, in_place, swap_direct_c, staged_c) and the copies."""
    d = Padding(k8=round_up(k, pad["halves_per_chunk"]), n8=round_up(n, pad["halves_per_chunk"]))
    if not b_ok and m <= pad["in_place_max_m"]:
        d.route = "in_place"
    else:
        d.pad_a, d.pad_b = not a_ok, not b_ok
        if m > pad["swap_max_m"] and not c_ok:
            d.route = "swap_direct_c" if k <= pad["direct_c_max_k"] else "staged_c"
        d.stage_c = d.route == "staged_c"
        d.pad_b = d.pad_b or (d.stage_c and d.n8 != n)
    return d


def plan_padding(m, n, k, lda, ldb, ldc, pad):
    """plan_padding<Pad>'s decision and buffers: A's copy (M × K8 halves), B's (K × N8 halves), the
    staged C (M × N8 floats), in that order, each that is needed on a scratch_alignment boundary."""
    d = decide_padding(m, n, k, *aligned(n, lda, ldb, ldc, pad), pad)
    offset = 0

    def reserve(needed, size):
        nonlocal offset
        at = offset
        if needed:
            offset += round_up(size, pad["scratch_alignment"])
        return at

    d.a_offset = reserve(d.pad_a, m * d.k8 * HALF_BYTES)
    d.b_offset = reserve(d.pad_b, k * d.n8 * HALF_BYTES)
    d.c_offset = reserve(d.stage_c, m * d.n8 * FLOAT_BYTES)
    d.rest_offset = offset
    return d


def copy_bytes(m, n, k, d):
    """The bytes the copies move, as 14's README counts them: a padded copy of R rows of C columns
    reads 2·R·C and writes 2·R·C8; a staged C adds 4·M·N8 read and 4·M·N written (unpad_c, beta 0)."""
    moved = {}
    if d.pad_a:
        moved["A"] = HALF_BYTES * m * k + HALF_BYTES * m * d.k8
    if d.pad_b:
        moved["B"] = HALF_BYTES * k * n + HALF_BYTES * k * d.n8
    if d.stage_c:
        moved["C"] = FLOAT_BYTES * m * d.n8 + FLOAT_BYTES * m * n
    return moved
