"""The arithmetic of the peers (peers.py) that needs no GPU: the error bound their results are
checked against (common/gemm_math.hpp's), how many timed rounds fit a time cap, and the shape
classes whose Triton configurations are tuned once each. Needs only the Python standard library.
"""
import math
import statistics

# The error bound of common/gemm_math.hpp, for FP16 products accumulated in FP32 on tensor cores.
FP32_UNIT_ROUNDOFF = 2.0 ** -24
TENSOR_CORE_UNIT_ROUNDOFF = 4 * FP32_UNIT_ROUNDOFF
FP16_UNIT_ROUNDOFF = 2.0 ** -11
FP16_HALF_SMALLEST_SUBNORMAL = 2.0 ** -25


# --- pure arithmetic (tested without a GPU) ------------------------------------------------

def gamma_n(n, u):
    nu = n * u
    return nu / (1 - nu) if nu < 1 else math.inf


def comparison_scale(k, u):
    """common/gemm_math.hpp's comparison_scale: two results may differ by this times |A|·|B|."""
    return 2 * gamma_n(k + 2, u) * (1 + gamma_n(k, u))


def fp16_output_tolerance(tolerance, reference):
    """The tolerance of an FP16 output: one more rounding, to FP16, of a value within `tolerance`
    of `reference` (and half the smallest subnormal where it underflows). Works on numbers and on
    tensors alike."""
    return tolerance * (1 + FP16_UNIT_ROUNDOFF) + FP16_UNIT_ROUNDOFF * abs(reference) + FP16_HALF_SMALLEST_SUBNORMAL


def timed_rounds(round_ms, iters, cap_ms):
    """Rounds to time: iters, or as many as fit into cap_ms (at least one) when a round takes round_ms
    (common/run_step.cpp's rule)."""
    if not cap_ms:
        return iters
    fit = cap_ms / max(round_ms, 1e-6)
    return iters if fit >= iters else max(1, int(fit))


# Triton: the candidate configurations of each shape class (block M, N, K, group, warps, stages),
# after the tutorial's list, a few per class so that the compilations stay few (about 13, each a
# second or two, plus one per new alignment of N and K that a chosen configuration meets).
CANDIDATES = {
    "m<=16": [(16, 64, 128, 8, 4, 4), (16, 128, 128, 8, 4, 4), (16, 256, 64, 8, 4, 3)],
    "m<=64": [(64, 64, 128, 8, 4, 4), (64, 128, 64, 8, 4, 4), (64, 256, 64, 8, 8, 3)],
    "few tiles": [(64, 128, 64, 8, 4, 4), (128, 128, 64, 8, 8, 3), (128, 64, 64, 8, 4, 4)],
    "large": [(128, 256, 64, 8, 8, 3), (128, 128, 64, 8, 4, 4), (256, 128, 64, 8, 8, 3), (64, 256, 32, 8, 4, 4)],
}


def shape_class(m, n, k, sm_count):
    """The coarse class whose tuned configuration a shape uses: by M (decode-like M ≤ 16, M ≤ 64),
    then whether 128×256 tiles of C would fill the SMs once."""
    if m <= 16:
        return "m<=16"
    if m <= 64:
        return "m<=64"
    if m <= 256 or math.ceil(m / 128) * math.ceil(n / 256) < sm_count:
        return "few tiles"
    return "large"


def class_representatives(shapes, sm_count):
    """{class: the shape it is tuned on}: the class's shape of median FLOP count (the lower
    median), so that a class is tuned on neither its smallest nor its largest member."""
    members = {}
    for shape in shapes:
        members.setdefault(shape_class(*shape, sm_count), []).append(shape)
    return {cls: sorted(group, key=lambda s: (s[0] * s[1] * s[2], s))[(len(group) - 1) // 2]
            for cls, group in members.items()}


def median(values):
    return statistics.median(values)
