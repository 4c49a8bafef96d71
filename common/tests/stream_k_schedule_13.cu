// Host tests of the split-K and stream-K schedules as the swap kernel (common/sm90/swap_kernel.cuh) plans it,
// at step 13's configuration and the other decompositions: few rows of A at every width of the swap,
// K dealt over the resident blocks; the checks of stream_k_schedule_check.hpp. Linked beside
// stream_k_schedule.cu. No GPU needed.
#include <doctest/doctest.h>

#include <vector>

#include "sm90/swap_kernel.cuh"
#include "stream_k_schedule_check.hpp"

namespace {

namespace stream_k = worklog::stream_k;

// The configurations planned: step 13's knobs that its plans read, and each other rule and fixup
// (the cluster split and the narrow tiles are the launch's, not the plan's).
struct Config {
  static constexpr int block_tile_n = 128, block_tile_k = 64, max_stages = 16, swap_max_m = 128, group_rows = 8;
  static constexpr int producer_registers = 40, consumer_registers = 232;
  using rule = stream_k::LastWaveInParts;
  static constexpr int fixup_slices = 16;
  using fixup = stream_k::ByFirstUnit;
  static constexpr int max_cluster = 8, narrow_whole_max_k_tiles = 64;
};
struct DataParallel : Config {
  using rule = stream_k::WholeTiles;
};
struct StreamK : Config {
  using rule = stream_k::EveryTileEven;
};
struct SplitK2 : Config {
  using rule = stream_k::EveryTileInParts<2>;
};
struct SplitK4 : Config {
  using rule = stream_k::EveryTileInParts<4>;
};
struct FixupShared : Config {
  using fixup = stream_k::SharedAbove<2>;
};

}  // namespace

using namespace worklog;
using namespace worklog::swap_ab;

namespace {

template <class Variant>
void check_swap_schedule(Shape shape, int resident) {
  CAPTURE(shape.m);
  CAPTURE(shape.n);
  CAPTURE(shape.k);
  with_width(shape.m, [&](auto width) {
    using L = Layout<Variant, width>;
    const stream_k::Plan plan = plan_schedule<Variant, width>(shape.m, shape.n, shape.k, resident);
    stream_k::testing::check_schedule(plan,
                                      {L::consumers * L::groups, L::consumers, 1,
                                       L::groups * warpgroup_threads * sizeof(float4), Variant::fixup::alone_units},
                                      resident);
  });
}

// Few rows (every width from 8 to 256, M on both sides of each), long and short K, N in one tile or many.
const std::vector<Shape> swap_shapes = {
    {1, 1032, 4104},   {7, 4096, 520},   {8, 2056, 1024},   {9, 264, 8200},     {16, 4096, 4096},
    {32, 14336, 4096}, {64, 8192, 8192}, {100, 1000, 3000}, {128, 520, 2056},   {129, 264, 1032},
    {256, 4096, 64},   {1, 1, 65536},    {16, 128, 128},    {200, 28672, 8192},
};
const std::vector<int> resident_counts = {132, 66, 5, 64};

template <class Variant>
void check_all() {
  for (const Shape& shape : swap_shapes)
    for (const int resident : resident_counts) check_swap_schedule<Variant>(shape, resident);
}

}  // namespace

TEST_CASE("stream-K schedule, the swap kernel: 13's rule (hybrid, the fixup by one unit)") { check_all<Config>(); }
TEST_CASE("stream-K schedule, the swap kernel: data-parallel, the even deal") {
  check_all<DataParallel>();
  check_all<StreamK>();
}
TEST_CASE("stream-K schedule, the swap kernel: split-K 2 and 4") {
  check_all<SplitK2>();
  check_all<SplitK4>();
}
TEST_CASE("stream-K schedule, the swap kernel: the shared fixup") { check_all<FixupShared>(); }

TEST_CASE("stream-K schedule, the swap kernel: a decode layer splits K over every block") {
  // 16 × 4096 × 4096 at width 16: 32 tiles of 64 slices on 132 blocks; 32 tiles in 4 parts of 16.
  const stream_k::Schedule s = plan_schedule<Config, 16>(16, 4096, 4096, 132).schedule;
  CHECK(s.tiles == 32);
  CHECK(s.sk_tiles == 32);
  CHECK(s.split == 4);
  CHECK(s.units == 128);
  CHECK(s.begin(1) - s.begin(0) == 16);
}
