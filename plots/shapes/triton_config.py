"""What peers.py needs to know of the Triton kernel (triton_matmul.py) without importing Triton: the
configuration one compilation takes, and which shapes the kernel's 32-bit offsets reach. Kept apart
so that the tests' stand-in for the kernel uses these very definitions.
"""
from typing import NamedTuple

# Offsets are computed in 32 bits, as in the tutorial: matrices of 2^31 elements or more are refused.
LARGEST = 2 ** 31 - 1


class Config(NamedTuple):
    block_m: int
    block_n: int
    block_k: int
    group_m: int
    warps: int
    stages: int

    def __str__(self):
        return (f"{self.block_m}x{self.block_n}x{self.block_k} group {self.group_m}, "
                f"{self.warps} warps, {self.stages} stages")


def fits(m, n, k):
    """Whether this kernel's 32-bit offsets reach every element."""
    return m * k <= LARGEST and k * n <= LARGEST and m * n <= LARGEST
