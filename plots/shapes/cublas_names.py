"""cuBLAS's own pick: what its kernel names say, and cublas_picks.csv, the file plots/shapes/cublas_pick.py
writes (one row per shape: the kernel cuBLAS ran, read through Nsight Compute) and the shapes tables
read (shape_results.py). Standard library only.

A cuBLAS kernel's name carries its configuration. The Hopper GEMMs of CUDA 12.8 and later are
`nvjet` kernels:

    nvjet_sm90_hss_128x64_64x8_1x2_h_bz_coopA_NNT
          arch types tile  K×stages cluster, then flags: raster (h, v), beta (bz: zero; badd),
                                       schedule (coopA, coopB), splitK, 2cta; the operands' layout

Older ones are `xmma` kernels (`sm90_xmma_gemm_f16f16_f16f32_f32_nn_n_tilesize128x256x64_cluster2x1x1_
warpgroupsize2x1x1_…`, `sm80_xmma_gemm_…_tilesize128x128x32_stage4_…`) or CUTLASS-named ones
(`cutlass_80_tensorop_…_256x128_32x3_nn_align8`). cuBLAS is column-major: the worklog calls it for
Cᵀ = Bᵀ·Aᵀ (common/cublas_reference.cpp), so cuBLAS's M is our N and its first tile dimension runs
along our N. parse_kernel_name() turns both dimensions around, into the worklog's rows × columns
(tile_m along M, tile_n along N; the cluster likewise), the orientation of the steps' own tiles.
"""
import math
import re
from dataclasses import dataclass, field

from report.results_csv import InputError, read_fixed_rows, write_fixed_rows

PICKS = "cublas_picks.csv"  # the file's name in a results folder


@dataclass
class KernelConfig:
    """What a GEMM kernel's name says, in the worklog's orientation (None where the name is silent)."""
    family: str                 # nvjet, xmma, cutlass
    arch: str = ""              # sm90; empty where the name has none (nvjet before CUDA 13)
    types: str = ""             # nvjet's letters (hss: FP16 inputs, FP32 compute and output), xmma's types
    tile_m: int = None          # the block tile's rows, along our M (cuBLAS's second dimension)
    tile_n: int = None          # its columns, along our N (cuBLAS's first dimension)
    k_per_stage: int = None     # K of one pipeline stage
    stages: int = None
    cluster_m: int = None       # blocks per cluster along our M
    cluster_n: int = None       # along our N
    split_k: bool = False       # a split-K kernel (a reduction kernel follows, or the parts are added in place)
    schedule: str = ""          # coopA, coopB (nvjet), warpspecialized_cooperative (CUTLASS), …
    flags: list = field(default_factory=list)  # the name's other words, in order

    def tile_text(self):
        return f"{self.tile_m}×{self.tile_n}" if self.tile_m and self.tile_n else ""

    def summary(self):
        """One line in the worklog's terms: 'tile 64×128, 8 stages of K 64, cluster 2×1, split-K'."""
        parts = []
        if self.tile_text():
            parts.append(f"tile {self.tile_text()}")
        if self.stages and self.k_per_stage:
            parts.append(f"{self.stages} stages of K {self.k_per_stage}")
        elif self.k_per_stage:
            parts.append(f"K {self.k_per_stage} per stage")
        if self.cluster_m and self.cluster_n and self.cluster_m * self.cluster_n > 1:
            parts.append(f"cluster {self.cluster_m}×{self.cluster_n}")
        if self.schedule:
            parts.append(self.schedule)
        if self.split_k:
            parts.append("split-K")
        return ", ".join(parts)


NVJET = re.compile(r"nvjet_(?:(sm\d+)_)?([a-z0-9]+)_(\d+)x(\d+)(?:_(\d+)x(\d+))?(?:_(\d+)x(\d+))?((?:_\w+?)*)$")
# Blackwell consumer parts spell it differently: nvjet_sm120_tst_mma_64x64x128_3_32x32x128_tmaAB_…
NVJET_MMA = re.compile(r"nvjet_(sm\d+)_([a-z0-9]+)_mma_(\d+)x(\d+)x(\d+)_(\d+)((?:_\w+?)*)$")
XMMA = re.compile(r"(sm\d+)_xmma_gemm_([a-z0-9]+_[a-z0-9]+_[a-z0-9]+)")
CUTLASS_TILE = re.compile(r"_(\d+)x(\d+)_(\d+)x(\d+)_")           # cutlass_80_…_256x128_32x3_nn: tile, K×stages
CUTLASS3_TILE = re.compile(r"_(\d+)x(\d+)x(\d+)_(\d+)x(\d+)x(\d+)_")  # cutlass3x_sm90_…_128x256x64_2x1x1_…
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# The block schedules a name may say, the longest first (a CUTLASS name is searched for them).
SCHEDULES = ("warpspecialized_cooperative", "warpspecialized_pingpong", "coopA", "coopB", "coop", "pingpong")


def short_name(name):
    """A kernel's name without `void `, namespaces' templates and parameters: ncu's demangled
    `void cublasLt::splitKreduce_kernel<32, 16, …>(…)` is `cublasLt::splitKreduce_kernel`; a plain
    name (nvjet's) is itself."""
    text = name.strip()
    if text.startswith("void "):
        text = text[5:]
    depth, out = 0, []
    for char in text:
        if char in "<(":
            if char == "(" and depth == 0:
                break
            depth += 1
        elif char in ">)":
            depth -= 1
        elif depth == 0:
            out.append(char)
    return "".join(out).strip()


def _gemm_identifier(name):
    """The word of a (possibly demangled) name that names the GEMM: the one starting with nvjet_,
    smNN_xmma_ or cutlass, else the short name."""
    for word in IDENTIFIER.findall(name):
        if word.startswith(("nvjet_", "cutlass")) or re.match(r"sm\d+_xmma_", word):
            return word
    return short_name(name)


def is_reduction(name):
    """A split-K reduction (or another non-GEMM helper) of cuBLAS, not the GEMM itself."""
    return re.search(r"reduce|reduction", short_name(name), re.IGNORECASE) is not None


def parse_kernel_name(name):
    """The KernelConfig of a cuBLAS GEMM kernel's name; None for a name that is no GEMM of the known
    families (a split-K reduction, a memset)."""
    if is_reduction(name):
        return None
    word = _gemm_identifier(name)
    match = NVJET_MMA.fullmatch(word)
    if match:
        arch, types, first, second, k, stages, rest = match.groups()
        flags = [f for f in rest.split("_") if f]
        return _nvjet(arch, types, first, second, k, stages, None, None, flags)
    match = NVJET.fullmatch(word)
    if match:
        arch, types, first, second, k, stages, cluster_first, cluster_second, rest = match.groups()
        flags = [f for f in rest.split("_") if f]
        return _nvjet(arch, types, first, second, k, stages, cluster_first, cluster_second, flags)
    match = XMMA.match(word)
    if match:
        return _xmma(word, match.group(1), match.group(2))
    if word.startswith("cutlass"):
        return _cutlass(word)
    return None


def _int(text):
    return int(text) if text else None


def _nvjet(arch, types, first, second, k, stages, cluster_first, cluster_second, flags):
    schedule = next((f for f in flags if f in SCHEDULES), "")
    split = any(f.lower() == "splitk" for f in flags)
    return KernelConfig("nvjet", arch or "", types, tile_m=_int(second), tile_n=_int(first), k_per_stage=_int(k),
                        stages=_int(stages), cluster_m=_int(cluster_second), cluster_n=_int(cluster_first),
                        split_k=split, schedule=schedule,
                        flags=[f for f in flags if f != schedule and f.lower() != "splitk"])


def _xmma(word, arch, types):
    tile = re.search(r"tilesize(\d+)x(\d+)x(\d+)", word)
    stages = re.search(r"_stages?(\d+)", word)
    cluster = re.search(r"_cluster(\d+)x(\d+)x\d+", word)
    split = re.search(r"split_?k(?!_off)", word, re.IGNORECASE) is not None or "segment_k_on" in word
    flags = [w for w in ("segment_k_on", "segment_k_off") if w in word]
    return KernelConfig("xmma", arch, types, tile_m=_int(tile.group(2)) if tile else None,
                        tile_n=_int(tile.group(1)) if tile else None, k_per_stage=_int(tile.group(3)) if tile else None,
                        stages=_int(stages.group(1)) if stages else None,
                        cluster_m=_int(cluster.group(2)) if cluster else None,
                        cluster_n=_int(cluster.group(1)) if cluster else None, split_k=split, flags=flags)


def _cutlass(word):
    arch = re.search(r"(sm\d+)", word)
    config = KernelConfig("cutlass", arch.group(1) if arch else "")
    three = CUTLASS3_TILE.search(word + "_")
    two = CUTLASS_TILE.search(word + "_")
    if three:
        config.tile_n, config.tile_m, config.k_per_stage = (int(three.group(i)) for i in (1, 2, 3))
        config.cluster_n, config.cluster_m = int(three.group(4)), int(three.group(5))
    elif two:
        config.tile_n, config.tile_m = int(two.group(1)), int(two.group(2))
        config.k_per_stage, config.stages = int(two.group(3)), int(two.group(4))
    config.schedule = next((s for s in SCHEDULES if s in word), "")
    config.split_k = re.search(r"split_?k", word, re.IGNORECASE) is not None
    return config


def output_tiles(config, m, n):
    """How many block tiles of this kernel cover an M×N C (None without a tile)."""
    if not (config and config.tile_m and config.tile_n):
        return None
    return math.ceil(m / config.tile_m) * math.ceil(n / config.tile_n)


# ---- cublas_picks.csv ---------------------------------------------------------------------------

COLUMNS = ("m n k precision kernel family tile_m tile_n k_per_stage stages cluster_m cluster_n split_k schedule "
           "flags tiles grid grid_dims block cluster_dims registers duration_us k_parts other_kernels "
           "other_grid other_us gpu date through code").split()  # code: empty, cuBLAS is no code of ours
INT_COLUMNS = {"m", "n", "k", "tile_m", "tile_n", "k_per_stage", "stages", "cluster_m", "cluster_n", "tiles", "grid",
               "block", "registers", "k_parts"}
FLOAT_COLUMNS = {"duration_us", "other_us"}


def pick_row(shape, precision, kernel, other_kernels, gpu, date, through):
    """One cublas_picks.csv row: shape (m, n, k); kernel: the GEMM's (name, launch) and other_kernels
    [(name, launch)] what else the call ran (the split-K reduction), launch a dict with grid,
    grid_dims, block, cluster_dims, registers, duration_us (None where not measured)."""
    m, n, k = shape
    name, launch = kernel
    config = parse_kernel_name(name)
    row = dict.fromkeys(COLUMNS)
    row.update(m=m, n=n, k=k, precision=precision, kernel=_gemm_identifier(name), gpu=gpu, date=date, through=through)
    row.update({key: launch.get(key) for key in ("grid", "grid_dims", "block", "cluster_dims", "registers",
                                                   "duration_us")})
    if config:
        row.update(family=config.family, tile_m=config.tile_m, tile_n=config.tile_n, k_per_stage=config.k_per_stage,
                   stages=config.stages, cluster_m=config.cluster_m, cluster_n=config.cluster_n,
                   split_k="yes" if config.split_k else "no", schedule=config.schedule, flags=" ".join(config.flags),
                   tiles=output_tiles(config, m, n))
        grid = launch.get("grid")
        if config.split_k and grid and row["tiles"] and grid % row["tiles"] == 0 and grid > row["tiles"]:
            row["k_parts"] = grid // row["tiles"]  # each tile's K cut into this many blocks' parts
    row["other_kernels"] = "; ".join(short_name(other) for other, _ in other_kernels)
    grids = [str(launch.get("grid")) for _, launch in other_kernels if launch.get("grid") is not None]
    row["other_grid"] = "; ".join(grids)
    times = [launch["duration_us"] for _, launch in other_kernels if launch.get("duration_us") is not None]
    row["other_us"] = sum(times) if times else None
    return row


def write_picks(path, rows):
    write_fixed_rows(path, COLUMNS, rows)


def _check_row(row, where):
    if None in (row["m"], row["n"], row["k"]):
        raise InputError(f"{where}: m, n and k are needed")
    if not row["kernel"]:
        raise InputError(f"{where}: no kernel named")


def load_picks(path):
    """The rows of a cublas_picks.csv, numbers converted (None where empty); InputError otherwise."""
    return read_fixed_rows(path, COLUMNS, INT_COLUMNS, FLOAT_COLUMNS, _check_row)


def pick_text(row):
    """A pick in one table cell: the kernel's configuration in the worklog's orientation, its grid,
    and what else ran (`tile 64×128, 8 stages of K 64, cluster 2×1; 128 blocks`)."""
    config = parse_kernel_name(row["kernel"])
    text = config.summary() if config else row["kernel"]
    if row["k_parts"]:
        text += f" ×{row['k_parts']}"
    if row["grid"]:
        text += f"; {row['grid']} blocks"
    if row["other_kernels"]:
        text += f" + {row['other_kernels']}" + (f" ({row['other_grid']} blocks)" if row["other_grid"] else "")
    return text
