// The watchdog's test (watchdog.cmake): step 09's kernel launched wrongly on purpose. This file
// includes 09's kernel.cu whole, so that it can reach the kernel, and registers a step of its own,
// 09_wgmma_tma_broken, built into an executable of the tests alone.
//
// The launch gives the block one consumer warpgroup too few. The empty barriers count arrivals from
// two consumer warpgroups and one never arrives, so after `stages` slices the producer waits for a
// phase that never completes: the watchdog (common/watchdog.cuh) must stop it with its message
// instead of letting the launch hang.
#include "../../09_wgmma_tma/kernel.cu"

namespace worklog {
namespace {

void launch_one_consumer_short(const GemmProblem<__half>& p, cudaStream_t stream) {
  using L = Layout<Config>;
  constexpr auto kernel = wgmma_tma_gemm<Config>;
  arm_watchdog();
  allow_dynamic_shared_memory<kernel>(L::shared_bytes);
  const CUtensorMap a_map = make_tensor_map_2d(p.a, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, p.m, p.k, p.lda,
                                               L::block_tile_m, swizzle_halves, CU_TENSOR_MAP_SWIZZLE_128B);
  const CUtensorMap b_map = make_tensor_map_2d(p.b, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, p.k, p.n, p.ldb,
                                               L::block_tile_k, swizzle_halves, CU_TENSOR_MAP_SWIZZLE_128B);
  kernel<<<tile_grid({p.m, p.n, p.k}, L::block_tile_m, L::block_tile_n), L::threads - warpgroup_threads,
           L::shared_bytes, stream>>>(a_map, b_map, p);
  WORKLOG_CHECK_LAUNCH();
}

}  // namespace

WORKLOG_REGISTER_STEP(Step<__half>{"09_wgmma_tma_broken", launch_one_consumer_short}
                          .adds("step 09 launched one consumer warpgroup short, on purpose: the watchdog's test")
                          .reuses_tile(Config::block_tile_m, Config::block_tile_n)
                          .needs_compute_capability(90, 90))

}  // namespace worklog
