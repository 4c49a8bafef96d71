// Small pieces that the steps use the same way: shared-memory addresses for PTX, where a block's
// tile of C starts, the alpha/beta epilogue, and launching over the tiles.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "cuda_check.hpp"
#include "gemm_math.hpp"

namespace worklog {

// The most dynamic shared memory one block may have on the GPUs this worklog builds for (sm_90:
// 227 KiB, after the opt-in of allow_dynamic_shared_memory below; sm_80 allows 163 KiB, sm_86/89
// 99 KiB, so the biggest configurations of 07 and 08 run on Hopper alone and the launch reports it
// elsewhere).
inline constexpr int max_shared_bytes_per_block = 227 * 1024;

// Whether `pointer` lies on a multiple of `bytes` (a power of two): the alignment that vector loads,
// wmma fragments and copies of 16-byte chunks need of their addresses.
__host__ __device__ inline bool is_aligned(const void* pointer, std::uintptr_t bytes) {
  return reinterpret_cast<std::uintptr_t>(pointer) % bytes == 0;
}

// The 32-bit shared-memory address that PTX's shared-memory operands take.
__device__ __forceinline__ std::uint32_t shared_address(const void* pointer) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(pointer));
}

// Blocks are numbered along a 1-D grid, row of tiles after row of tiles. A 2-D grid would be more
// direct, but its y extent stops at 65535 blocks, and a tall matrix (M = 10^6, N = 1) needs more;
// the x extent allows 2^31 − 1.
inline dim3 tile_grid(Shape s, int tile_rows, int tile_cols) {
  const long long blocks = ceil_div(s.m, tile_rows) * ceil_div(s.n, tile_cols);
  if (blocks > 2147483647LL)
    throw std::length_error("grid of " + std::to_string(blocks) + " blocks exceeds the CUDA limit");
  return dim3(unsigned(blocks));
}

struct TileOrigin {
  long long row, col;  // 64-bit, so that row * ld below cannot overflow
};

// First row and column of C covered by this block (inverse of tile_grid's numbering).
__device__ inline TileOrigin block_tile_origin(int n, int tile_rows, int tile_cols) {
  const int tiles_per_row = int(ceil_div(n, tile_cols));
  return {(long long)(blockIdx.x / tiles_per_row) * tile_rows, (long long)(blockIdx.x % tiles_per_row) * tile_cols};
}

// The same, with the tiles numbered in grouped order (grouped_tile, gemm_math.hpp): groups of
// group_rows rows of tiles, column by column inside a group, so that the blocks resident at the
// same time share a few panels of A and B in L2. The grid is tile_grid's.
//   group_rows = 2, 5 × 3 tiles:   0  2  4     (row-major:  0  1  2
//                                   1  3  5                  3  4  5
//                                   6  8 10                  6  7  8 …)
//                                   7  9 11
//                                  12 13 14
__device__ inline TileOrigin grouped_block_tile_origin(int m, int n, int tile_rows, int tile_cols, int group_rows) {
  const TileIndex t = grouped_tile(blockIdx.x, int(ceil_div(m, tile_rows)), int(ceil_div(n, tile_cols)), group_rows);
  return {(long long)t.row * tile_rows, (long long)t.col * tile_cols};
}

// c = alpha·acc + beta·c. With beta == 0, C is not read, so whatever C held (even NaN) cannot
// leak into the result: BLAS semantics, which cuBLAS follows too.
__device__ __forceinline__ void store_c(float* c, float acc, float alpha, float beta) {
  *c = beta == 0.0f ? alpha * acc : alpha * acc + beta * *c;
}
// The same, stored with the evict-first hint (st.global.cs), for a C that the kernel writes once and
// does not read again (15's write of C for tiny K): L2 may evict its lines first.
__device__ __forceinline__ void store_c_streamed(float* c, float acc, float alpha, float beta) {
  __stcs(c, beta == 0.0f ? alpha * acc : alpha * acc + beta * *c);
}

// A kernel that uses more than 48 KiB of dynamic shared memory must say so before its first launch
// (cudaFuncSetAttribute); this does it once per kernel and process.
template <auto kernel>
void allow_dynamic_shared_memory(int bytes) {
  static const bool done = [bytes] {
    check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes), __FILE__, __LINE__);
    return true;
  }();
  (void)done;
}

// The current device's number of SMs.
inline int multiprocessor_count() {
  int device = 0, sms = 0;
  check_cuda(cudaGetDevice(&device), __FILE__, __LINE__);
  check_cuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), __FILE__, __LINE__);
  return sms;
}

// How many blocks of `kernel` (`threads` each, `shared_bytes` of dynamic shared memory) the current
// device holds at once, read once per kernel and process: the grid of a kernel whose blocks wait for
// each other may not exceed it. Throws when not even one fits.
template <auto kernel>
int resident_blocks(int threads, int shared_bytes) {
  static const int count = [&] {
    allow_dynamic_shared_memory<kernel>(shared_bytes);
    int per_sm = 0;
    check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, shared_bytes), __FILE__,
               __LINE__);
    if (per_sm < 1) throw std::runtime_error("no block of this kernel fits on an SM");
    return per_sm * multiprocessor_count();
  }();
  return count;
}

// The configuration of a launch by cudaLaunchKernelEx, for what <<<...>>> cannot say: clusters (10
// to 14) and programmatic dependent launch (13's chain of layers). It holds the attributes its
// cudaLaunchConfig_t points to, so it is never copied.
class LaunchConfig {
 public:
  LaunchConfig(long long blocks, int threads, int shared_bytes, cudaStream_t stream) {
    config_.gridDim = dim3(unsigned(blocks));
    config_.blockDim = dim3(unsigned(threads));
    config_.dynamicSmemBytes = std::size_t(shared_bytes);
    config_.stream = stream;
    config_.attrs = attributes_;
  }
  LaunchConfig(const LaunchConfig&) = delete;
  LaunchConfig& operator=(const LaunchConfig&) = delete;

  LaunchConfig& blocks(long long count) {
    config_.gridDim = dim3(unsigned(count));
    return *this;
  }
  // Blocks in clusters of `size` along x (the grid a multiple of it).
  LaunchConfig& cluster(int size) {
    cudaLaunchAttribute& a = add();
    a.id = cudaLaunchAttributeClusterDimension;
    a.val.clusterDim.x = unsigned(size);
    a.val.clusterDim.y = 1;
    a.val.clusterDim.z = 1;
    return *this;
  }
  // The kernel may start before the one ahead of it in the stream has finished; it waits where it
  // must (hopper::wait_for_previous_grid).
  LaunchConfig& programmatic(bool allowed = true) {
    if (!allowed) return *this;
    cudaLaunchAttribute& a = add();
    a.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    a.val.programmaticStreamSerializationAllowed = 1;
    return *this;
  }
  const cudaLaunchConfig_t* get() const { return &config_; }

 private:
  cudaLaunchAttribute& add() {
    if (config_.numAttrs == sizeof(attributes_) / sizeof(attributes_[0]))
      throw std::logic_error("LaunchConfig: more launch attributes than it holds");
    return attributes_[config_.numAttrs++];
  }
  cudaLaunchConfig_t config_{};
  cudaLaunchAttribute attributes_[2]{};
};

// How many clusters of `kernel`, launched as `config` says (its cluster size), the current device
// holds at once: how the clusters fit into its GPCs, not only its SM count (0: not even one).
template <auto kernel>
int max_active_clusters(const LaunchConfig& config) {
  int clusters = 0;
  check_cuda(cudaOccupancyMaxActiveClusters(&clusters, kernel, config.get()), __FILE__, __LINE__);
  return clusters;
}

// Every launch is followed by this, so that a bad configuration is reported where it happened.
#define WORKLOG_CHECK_LAUNCH() ::worklog::check_cuda(cudaGetLastError(), __FILE__, __LINE__)

// Launches `kernel`(problem, extra…) with one block of `threads` per tile_rows × tile_cols tile of C
// (tile_grid) and `shared_bytes` of dynamic shared memory, opting in above 48 KiB.
template <auto kernel, class Problem, class... Extra>
void launch_over_tiles(const Problem& p, int tile_rows, int tile_cols, int threads, int shared_bytes,
                       cudaStream_t stream, Extra... extra) {
  allow_dynamic_shared_memory<kernel>(shared_bytes);
  kernel<<<tile_grid({p.m, p.n, p.k}, tile_rows, tile_cols), threads, shared_bytes, stream>>>(p, extra...);
  WORKLOG_CHECK_LAUNCH();
}

}  // namespace worklog
