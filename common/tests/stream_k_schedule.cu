// Host tests of the split-K and stream-K schedules (common/sm90/split_k_schedule.cuh,
// stream_k_schedule.cuh) as the kernel of stream_k_kernel.cuh plans them, at 128 × 256 tiles in
// clusters of two, the rules and fixups of steps 11 and 12: for many shapes and numbers of resident clusters, the
// checks of stream_k_schedule_check.hpp; and the rule must give what 11's README derives for the shapes it draws.
// stream_k_schedule_13.cu does the same for the swap kernel's use. No GPU needed.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "sm90/stream_k_kernel.cuh"
#include "sm90/stream_k_schedule.cuh"
#include "stream_k_schedule_check.hpp"

namespace {

namespace stream_k = worklog::stream_k;

// The configurations planned: 128 × 256 tiles in clusters of two with 11's rule and 12's fixup (step
// 12's), 11's fixup by one unit (step 11's), and each other rule and fixup.
struct Config {
  static constexpr int block_tile_m = 128, block_tile_n = 256, block_tile_k = 64, stages = 4, group_rows = 8;
  static constexpr int producer_registers = 40, consumer_registers = 232, cluster_size = 2, c_buffers = 2;
  using rule = stream_k::LastWaveInParts;
  static constexpr int fixup_slices = 16;
  using fixup = stream_k::SharedAbove<2>;
};
struct DataParallel : Config {
  using rule = stream_k::WholeTiles;
};
struct SplitK2 : Config {
  using rule = stream_k::EveryTileInParts<2>;
};
struct SplitK4 : Config {
  using rule = stream_k::EveryTileInParts<4>;
};
struct StreamKOnly : Config {
  using rule = stream_k::EveryTileEven;
};
struct HybridEven : Config {
  using rule = stream_k::LastWavesEven;
};
struct FixupAlone : Config {  // step 11
  using fixup = stream_k::ByFirstUnit;
};
struct FixupShared : Config {
  using fixup = stream_k::SharedAbove<1>;
};
struct EvenFixupAlone : StreamKOnly {  // ranges across tiles, each tile fixed up by one unit
  using fixup = stream_k::ByFirstUnit;
};
struct NoCluster : Config {
  static constexpr int cluster_size = 1;
};

}  // namespace

using namespace worklog;
using stream_k::Plan;

namespace {

template <class Variant>
void check_schedule(Shape shape, int resident) {
  using L = stream_k::Layout<Variant>;
  CAPTURE(shape.m);
  CAPTURE(shape.n);
  CAPTURE(shape.k);
  const Plan plan = stream_k::plan_shape<Variant>(shape.m, shape.n, shape.k, resident);
  stream_k::testing::check_schedule(
      plan,
      {L::consumers * L::chunks, L::consumers, L::cluster_size, L::float4s * hopper::warpgroup_threads * sizeof(float4),
       Variant::fixup::alone_units},
      resident);
}

const std::vector<Shape> shapes = {
    {1, 1, 8},          {64, 64, 64},       {136, 264, 200},    {192, 264, 2056},   {256, 256, 8200},
    {128, 512, 3000},   {300, 264, 10000},  {512, 512, 16384},  {1024, 1024, 1024}, {1024, 1024, 8192},
    {1536, 1536, 1536}, {2048, 2048, 2048}, {3072, 3072, 3072}, {4096, 4096, 4096}, {2176, 2304, 72},
    {8192, 8192, 512},  {256, 256, 65536},  {4352, 4352, 4352}, {130, 4000, 600},   {65536, 128, 1024},
    {1536, 1280, 2176}, {4352, 2304, 2056},
};
const std::vector<int> resident_counts = {66, 132, 5, 64};

template <class Variant>
void check_all() {
  for (const Shape& shape : shapes)
    for (const int resident : resident_counts) check_schedule<Variant>(shape, resident);
}

}  // namespace

TEST_CASE("stream-K schedule, 128 × 256 tiles: the hybrid rule, shared fixup") { check_all<Config>(); }
TEST_CASE("stream-K schedule, 128 × 256 tiles: data-parallel only") { check_all<DataParallel>(); }
TEST_CASE("stream-K schedule, 128 × 256 tiles: split-K 2 and 4") {
  check_all<SplitK2>();
  check_all<SplitK4>();
}
TEST_CASE("stream-K schedule, 128 × 256 tiles: stream-K only") { check_all<StreamKOnly>(); }
TEST_CASE("stream-K schedule, 128 × 256 tiles: the fixup alone (11), the fixup shared") {
  check_all<FixupAlone>();
  check_all<FixupShared>();
  check_all<EvenFixupAlone>();
}
TEST_CASE("stream-K schedule, 128 × 256 tiles: no clusters") { check_all<NoCluster>(); }

TEST_CASE("stream-K schedule, 128 × 256 tiles: the even deals of every tile and of all but the whole waves") {
  check_all<StreamKOnly>();
  check_all<HybridEven>();
}

TEST_CASE("stream-K schedule, 128 × 256 tiles: the rule on the shapes 11's README draws (66 clusters of 2)") {
  using stream_k::Schedule;
  auto schedule_of = [](Shape shape) { return stream_k::plan_shape<Config>(shape.m, shape.n, shape.k, 66).schedule; };
  // 3072³: 144 cluster tiles = 2 waves of 66 + 12: the 12 in 5 parts of 10, 10, 10, 9, 9 slices.
  const Schedule cube3072 = schedule_of({3072, 3072, 3072});
  CHECK(cube3072.tiles == 144);
  CHECK(cube3072.sk_tiles == 12);
  CHECK(cube3072.split == 5);
  CHECK(cube3072.units == 60);
  CHECK(cube3072.begin(1) - cube3072.begin(0) == 10);
  CHECK(cube3072.begin(5) - cube3072.begin(4) == 9);
  CHECK(cube3072.begin(5) == 48);
  // 1024 × 1024 × 8192: 16 tiles of 128 slices, each in 4 parts of 32: 64 units.
  const Schedule long_k = schedule_of({1024, 1024, 8192});
  CHECK(long_k.tiles == 16);
  CHECK(long_k.sk_tiles == 16);
  CHECK(long_k.split == 4);
  CHECK(long_k.units == 64);
  // 512 × 512 × 16384: 4 tiles of 256 slices, 16 parts each.
  CHECK(schedule_of({512, 512, 16384}).split == 16);
  // 1024³: 16 tiles in 4 parts would save 12 slices of 16, less than a fixup costs: whole tiles.
  CHECK(schedule_of({1024, 1024, 1024}).sk_tiles == 0);
  // 1536³ (36 tiles), 2048³ (64), 4096³ (3 waves + 58), 8192³ (15 waves + 34): ⌊66 / r⌋ = 1.
  CHECK(schedule_of({1536, 1536, 1536}).sk_tiles == 0);
  CHECK(schedule_of({2048, 2048, 2048}).sk_tiles == 0);
  CHECK(schedule_of({4096, 4096, 4096}).sk_tiles == 0);
  CHECK(schedule_of({8192, 8192, 8192}).sk_tiles == 0);
  // K = 72: two slices per tile, nothing worth a fixup.
  CHECK(schedule_of({2176, 2304, 72}).sk_tiles == 0);
  // Whole waves: 33 × 4 = 132 cluster tiles = 2 waves of 66.
  CHECK(schedule_of({8448, 1024, 4096}).sk_tiles == 0);
  // The even deal (hybrid_even): 3072³ splits the last 12 tiles and one wave, 78, over 66 units.
  const Schedule even = stream_k::plan_shape<HybridEven>(3072, 3072, 3072, 66).schedule;
  CHECK(even.sk_tiles == 78);
  CHECK(even.units == 66);
  CHECK(even.split == 66);
  CHECK(even.span == 78 * 48);
  CHECK(even.slots_per_unit == 2);
}
