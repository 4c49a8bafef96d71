// The watchdog's test (watchdog.cmake): the library's stream-K kernel (sm90/stream_k_kernel.cuh)
// launched wrongly on purpose, registered as a step of its own, stream_k_broken, in an executable of
// the tests alone.
//
// The launch gives each block one consumer warpgroup too few. The empty barriers count arrivals from
// two consumer warpgroups and one never arrives, so after `stages` slices the producer waits for a
// phase that never completes: the watchdog (common/watchdog.cuh) must stop it with its message
// instead of letting the launch hang.
#include "sm90/stream_k_kernel.cuh"
#include "step.hpp"

namespace worklog {
namespace {

// One block per 128 × 128 tile, no cluster and whole tiles only: the launch needs no workspace, and
// every wait but the broken one is the ordinary pipeline's.
struct Config {
  static constexpr int block_tile_m = 128;  // two consumer warpgroups: the launch drops the second
  static constexpr int block_tile_n = 128;
  static constexpr int block_tile_k = 64;
  static constexpr int stages = 4;  // K = 1024 in the test: 16 slices, so the producer must wait
  static constexpr int group_rows = 8;
  static constexpr int producer_registers = 40;
  static constexpr int consumer_registers = 232;
  static constexpr int cluster_size = 1;
  static constexpr int c_buffers = 2;
  using rule = stream_k::WholeTiles;
  static constexpr int fixup_slices = 16;
  using fixup = stream_k::ByFirstUnit;
};

void launch_one_consumer_short(const GemmProblem<__half>& p, cudaStream_t stream) {
  using L = stream_k::Layout<Config>;
  using hopper::swizzle_halves;
  constexpr auto kernel = stream_k::stream_k_gemm<Config>;
  if (!stream_k::tma_path_possible(p)) throw std::runtime_error("stream_k_broken: the test's shape must suit TMA");
  arm_watchdog();
  allow_dynamic_shared_memory<kernel>(L::shared_bytes);
  const int tiles = int(ceil_div(p.m, L::block_tile_m) * ceil_div(p.n, L::block_tile_n));
  const stream_k::Plan plan = stream_k::plan_shape<Config>(p.m, p.n, p.k, tiles);
  const CUtensorMap a_map = make_tensor_map_2d(p.a, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, p.m, p.k, p.lda,
                                               L::block_tile_m, swizzle_halves, CU_TENSOR_MAP_SWIZZLE_128B);
  const CUtensorMap b_map = make_tensor_map_2d(p.b, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, p.k, p.n, p.ldb,
                                               L::block_tile_k, swizzle_halves, CU_TENSOR_MAP_SWIZZLE_128B);
  const CUtensorMap c_map = make_tensor_map_2d(p.c, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, p.m, p.n, p.ldc,
                                               hopper::wgmma_m, L::c_chunk_cols, CU_TENSOR_MAP_SWIZZLE_128B);
  kernel<<<plan.workers, L::threads - hopper::warpgroup_threads, L::shared_bytes, stream>>>(a_map, b_map, c_map, p,
                                                                                            plan.schedule);
  WORKLOG_CHECK_LAUNCH();
}

}  // namespace

WORKLOG_REGISTER_STEP(Step<__half>{"stream_k_broken", launch_one_consumer_short}
                          .adds("the library's stream-K kernel launched one consumer warpgroup short, on purpose: "
                                "the watchdog's test")
                          .reuses_tile(Config::block_tile_m, Config::block_tile_n)
                          .needs_compute_capability(90, 90))

}  // namespace worklog
