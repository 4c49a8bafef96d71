// Host tests of step 12's use of 11's stream-K schedule (12_swap_ab/kernel.cu, included whole to reach
// its plans): few rows of A at every width of the swap, K dealt over the resident blocks, for every
// decomposition 12 registers; the checks of stream_k_schedule_check.hpp. Linked beside
// stream_k_schedule.cu, whose inclusion of 11's kernel.cu defines what 12 calls of 11. No GPU needed.
#include <doctest/doctest.h>

#include <vector>

#include "12_swap_ab/kernel.cu"
#include "stream_k_schedule_check.hpp"

using namespace worklog;

namespace {

template <class Variant>
void check_swap_schedule(Shape shape, int resident) {
  CAPTURE(shape.m);
  CAPTURE(shape.n);
  CAPTURE(shape.k);
  with_width(shape.m, [&](auto width) {
    using L = Layout<Variant, width>;
    const stream_k::Plan plan = plan_schedule<Variant, width>(shape.m, shape.n, shape.k, resident);
    stream_k::testing::check_schedule(
        plan, {L::consumers * L::groups, L::consumers, 1, L::groups * warpgroup_threads * sizeof(float4)}, resident);
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

TEST_CASE("stream-K schedule, 12: the step (hybrid, the fixup by one unit)") { check_all<Config>(); }
TEST_CASE("stream-K schedule, 12: data-parallel, the even deal") {
  check_all<DataParallel>();
  check_all<StreamK>();
}
TEST_CASE("stream-K schedule, 12: split-K 2 and 4") {
  check_all<SplitK2>();
  check_all<SplitK4>();
}
TEST_CASE("stream-K schedule, 12: the shared fixup") { check_all<FixupShared>(); }

TEST_CASE("stream-K schedule, 12: a decode layer splits K over every block") {
  // 16 × 4096 × 4096 at width 16: 32 tiles of 64 slices on 132 blocks; 32 tiles in 4 parts of 16.
  const stream_k::Schedule s = plan_schedule<Config, 16>(16, 4096, 4096, 132).schedule;
  CHECK(s.tiles == 32);
  CHECK(s.sk_tiles == 32);
  CHECK(s.split == 4);
  CHECK(s.units == 128);
  CHECK(s.begin(1) - s.begin(0) == 16);
}
