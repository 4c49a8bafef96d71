// Host-side arithmetic about a GEMM: FLOP and byte counts, the memory a run needs, and the error
// bound that decides whether a computed C is right. No CUDA here, so the host tests cover all of it.
#pragma once

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

// The per-element test below runs in the GPU checker and in the host tests alike.
#ifdef __CUDACC__
#define WORKLOG_HOST_DEVICE __host__ __device__
#else
#define WORKLOG_HOST_DEVICE
#endif

namespace worklog {

struct Shape {
  int m = 0, n = 0, k = 0;
};

// Leading dimensions of row-major A (M×K), B (K×N) and C (M×N), in elements: row r of A starts
// r·lda elements after row 0, and so on. lda ≥ K, ldb ≥ N, ldc ≥ N; the elements between the end of a
// row and the start of the next (the gap) are not part of the matrix: never read as data, never
// written. 0 stands for packed (K, N, N), the default.
struct Strides {
  int lda = 0, ldb = 0, ldc = 0;
};

// The strides with every 0 replaced by its packed value.
constexpr Strides resolve_strides(Shape s, Strides t) {
  return {t.lda ? t.lda : s.k, t.ldb ? t.ldb : s.n, t.ldc ? t.ldc : s.n};
}

// What is wrong with the strides for this shape (a leading dimension below its row length), or
// nothing. The message names the option that sets it.
inline const char* strides_problem(Shape s, Strides t) {
  const Strides r = resolve_strides(s, t);
  if (r.lda < s.k) return "--lda must be at least K";
  if (r.ldb < s.n) return "--ldb must be at least N";
  if (r.ldc < s.n) return "--ldc must be at least N";
  return nullptr;
}

// Elements of a rows × cols matrix with leading dimension ld: every row but the last takes ld, the
// last only cols (what a BLAS may touch; the harness allocates exactly this).
WORKLOG_HOST_DEVICE constexpr std::uint64_t strided_elements(std::uint64_t rows, std::uint64_t cols, std::uint64_t ld) {
  return rows == 0 ? 0 : (rows - 1) * ld + cols;
}

// Overflow-safe ceil(a / b) for a >= 0, b > 0: (a + b - 1) / b overflows when a is near INT_MAX.
WORKLOG_HOST_DEVICE constexpr long long ceil_div(long long a, long long b) { return a / b + (a % b != 0 ? 1 : 0); }

// Grouped tile order, for L2 reuse: instead of walking C's tiles row after row (which streams all
// of B through L2 once per row of tiles), walk them in groups of `group_rows` rows of tiles, column
// by column inside a group. The blocks running at the same time then share a few rows of A and a
// few columns of B, which stay in L2. `tile` is the tile's number in that order; returns its
// (row, column) in tiles.
struct TileIndex {
  int row, col;
};
WORKLOG_HOST_DEVICE inline TileIndex grouped_tile(long long tile, int tiles_m, int tiles_n, int group_rows) {
  const long long tiles_per_group = (long long)group_rows * tiles_n;
  const int first_row = int(tile / tiles_per_group) * group_rows;
  const int rows_in_group = tiles_m - first_row < group_rows ? tiles_m - first_row : group_rows;
  const long long in_group = tile % tiles_per_group;
  return {first_row + int(in_group % rows_in_group), int(in_group / rows_in_group)};
}

// 2·M·N·K: one multiply and one add per (i, j, k). The alpha/beta epilogue (2·M·N more) is left out,
// as cuBLAS and most worklogs do; it is under 0.05% of the total at K = 4096.
constexpr double gemm_flops(Shape s) { return 2.0 * s.m * s.n * s.k; }

// Modeled global-memory traffic of a kernel that stages block tiles of tile_rows × tile_cols of C:
// each tile reads its tile_rows rows of A and tile_cols columns of B once, so all of A is read
// ceil(N / tile_cols) times and all of B ceil(M / tile_rows) times; C is written once, and read once
// more when beta != 0. tile_rows = tile_cols = 1 models a kernel with no reuse at all (01_naive).
// These are the bytes the kernel asks for; L1 and L2 can serve part of them, so DRAM sees less.
inline double modeled_global_bytes(Shape s, int input_bytes, int tile_rows, int tile_cols, bool reads_c) {
  const double a_reads = double(s.m) * s.k * ceil_div(s.n, tile_cols);
  const double b_reads = double(s.k) * s.n * ceil_div(s.m, tile_rows);
  const double c_bytes = double(s.m) * s.n * 4.0 * (reads_c ? 2.0 : 1.0);
  return (a_reads + b_reads) * input_bytes + c_bytes;
}

// The least global-memory traffic of any kernel for the shape: A and B read once, C written once (and
// read once more when beta != 0). Over a run's time, the rate a kernel would need from DRAM if every
// byte came from there exactly once: the floor of a memory-bound GEMM (the DRAM roofline).
constexpr double least_global_bytes(Shape s, int input_bytes, bool reads_c) {
  return (double(s.m) * s.k + double(s.k) * s.n) * input_bytes + double(s.m) * s.n * 4.0 * (reads_c ? 2.0 : 1.0);
}

// x * y in 64 bits, or nothing when it overflows.
inline std::optional<std::uint64_t> checked_mul(std::uint64_t x, std::uint64_t y) {
  std::uint64_t r = 0;
  if (__builtin_mul_overflow(x, y, &r)) return std::nullopt;
  return r;
}
inline std::optional<std::uint64_t> checked_add(std::uint64_t x, std::uint64_t y) {
  std::uint64_t r = 0;
  if (__builtin_add_overflow(x, y, &r)) return std::nullopt;
  return r;
}

// rows × ld elements, an upper bound of strided_elements() that cannot overflow unnoticed.
inline std::optional<std::uint64_t> checked_strided(int rows, int ld) {
  return checked_mul(std::uint64_t(rows), std::uint64_t(ld));
}

// Device bytes a run allocates: A and B in the input type, with their leading dimensions; C as the
// step's output and its initial value (kept so every run starts from the same C), with ldc; with the
// check on, cuBLAS's C (ldc) and the bound matrix |alpha|·|A|·|B| (M × N, below), plus |A| and |B|
// while that bound is computed. Nothing when the count does not fit in 64 bits.
inline std::optional<std::uint64_t> device_bytes_needed(Shape s, int input_bytes, bool check, Strides t = {}) {
  const Strides r = resolve_strides(s, t);
  const auto a = checked_strided(s.m, r.lda), b = checked_strided(s.k, r.ldb), c = checked_strided(s.m, r.ldc);
  const auto mn = checked_mul(std::uint64_t(s.m), std::uint64_t(s.n));
  if (!a || !b || !c || !mn) return std::nullopt;
  const auto inputs = checked_add(*a, *b);
  if (!inputs) return std::nullopt;
  const auto input_bytes_total = checked_mul(*inputs, std::uint64_t(input_bytes) * (check ? 2 : 1));
  const auto c_bytes_total = checked_mul(*c, 4ull * (check ? 3 : 2));
  const auto bound_bytes = checked_mul(*mn, check ? 4ull : 0ull);
  if (!input_bytes_total || !c_bytes_total || !bound_bytes) return std::nullopt;
  const auto total = checked_add(*input_bytes_total, *c_bytes_total);
  return total ? checked_add(*total, *bound_bytes) : std::nullopt;
}

// ---- The error bound ----------------------------------------------------------------------------
// Every step and cuBLAS compute c = fl(alpha·Σ_k a_ik·b_kj + beta·c_ij). For a sum of K products in
// any order, with or without fused multiply-adds, and the two more operations of the epilogue,
// the rounding error obeys (Higham, "Accuracy and Stability of Numerical Algorithms", §3.1, §3.5)
//     |c_computed − c_exact| ≤ γ_{K+2} · (|alpha|·Σ_k |a_ik|·|b_kj| + |beta|·|c_ij|),
//     γ_n = n·u / (1 − n·u),
// where u is the unit roundoff of the accumulation. The step and the reference each satisfy it,
// so they differ by at most twice the bound. The bound matrix Σ|a||b| is itself computed in
// floating point, but from non-negative terms only, so it is off by at most a factor (1 + γ_K):
// we widen by that factor. The bound grows with K and u and is never a loose constant; for
// K >= 1/u it says nothing (infinite), and only NaN or Inf would fail.

// u for FP32 round-to-nearest.
inline constexpr double fp32_unit_roundoff = 1.0 / (1ull << 24);
// FP16 inputs accumulated in FP32 on tensor cores. Products of two FP16 values (11-bit
// significands) are exact in FP32 (24 bits), so only the accumulation errs. Tensor cores are not
// IEEE adders: measurements (Fasi, Higham, Mikaitis, Pranesh, "Numerical behavior of NVIDIA tensor
// cores", PeerJ CS 2021) show truncation instead of rounding (2u) and the products of one block FMA
// aligned to the largest before the sum, which can drop one more bit: we take 4u.
inline constexpr double tensor_core_fp32_unit_roundoff = 4.0 * fp32_unit_roundoff;

inline double gamma_n(double n, double u) {
  const double nu = n * u;
  return nu < 1.0 ? nu / (1.0 - nu) : std::numeric_limits<double>::infinity();
}

// Factor f such that two computed results may differ by f·(|alpha|·(|A||B|)_ij + |beta|·|c_ij|).
inline double comparison_scale(long long k, double u) {
  const double g = gamma_n(double(k) + 2.0, u);
  return 2.0 * g * (1.0 + gamma_n(double(k), u));
}

// Factor for comparing a computed result against an exact (double-precision) reference: one bound.
inline double exact_reference_scale(long long k, double u) { return gamma_n(double(k) + 2.0, u); }

// Tolerance of element (i, j) when `scale` is one of the factors above: bound = (|A|·|B|)_ij and
// c_initial = C_ij before the call. With beta == 0, C was not read and does not count.
WORKLOG_HOST_DEVICE inline double element_tolerance(double scale, float alpha, float beta, float bound,
                                                    float c_initial) {
  const double from_c = beta == 0.0f ? 0.0 : fabs(double(beta)) * fabs(double(c_initial));
  return scale * (fabs(double(alpha)) * double(bound) + from_c);
}

// The per-element test: true when |obtained − expected| ≤ tolerance. NaN or Inf obtained fails,
// whatever the tolerance (the comparison is false for NaN; the magnitude test catches Inf).
WORKLOG_HOST_DEVICE inline bool within_tolerance(double obtained, double expected, double tolerance) {
  if (!(fabs(obtained) <= DBL_MAX)) return false;
  return fabs(obtained - expected) <= tolerance;
}

}  // namespace worklog
