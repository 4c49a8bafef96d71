// Host tests of step 11's schedule (11_stream_k/kernel.cu, included whole to reach it): for many
// shapes, numbers of resident clusters and every decomposition, the walks of all clusters, played
// on the CPU exactly as the kernel's producer and consumers play them, must
//   - cover every (tile, k-slice) exactly once;
//   - leave each split tile's partials in distinct slots inside the workspace the step asks for;
//   - write every element of C exactly once (whole tiles by their epilogue, split tiles piece by
//     piece by the shared fixup, or whole by the unit holding slice 0 with the fixup alone);
//   - never deadlock: a play in which each cluster waits, at each fixup, for the flags of the
//     partials it reads must run to the end.
// And the decomposition rule must give what README.md derives for the shapes it draws. No GPU needed.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "../../11_stream_k/kernel.cu"

using namespace worklog;

namespace {

// What one cluster does, in order, as the kernel does it.
struct Event {
  enum Kind { publish, wait_and_fix_up } kind;
  std::vector<int> slots;  // publish: slots made visible; wait: slots whose flags it waits for
};

template <class Variant>
void check_schedule(Shape shape, int resident) {
  using L = Layout<Variant>;
  CAPTURE(shape.m);
  CAPTURE(shape.n);
  CAPTURE(shape.k);
  CAPTURE(resident);
  const Plan plan = plan_schedule<Variant>(shape.m, shape.n, shape.k, resident);
  const Schedule& s = plan.schedule;
  REQUIRE(plan.clusters >= 1);
  REQUIRE(plan.clusters <= resident);
  if (s.split == 0) CHECK(s.units <= plan.clusters);  // stream-K: one range per cluster
  const long long iterations = s.tiles * s.k_tiles;
  std::vector<int> covered(std::size_t(iterations), 0);
  std::vector<int> whole_writes(std::size_t(s.tiles), 0);
  std::map<long long, std::vector<int>> piece_writes;  // split tile -> times each piece was written
  std::set<int> stored;
  const int slots = s.units * s.slots_per_unit;
  std::vector<std::vector<Event>> events(std::size_t(plan.clusters));

  for (int cluster = 0; cluster < plan.clusters; ++cluster) {
    std::vector<int> pending;
    auto publish = [&] {
      if (!pending.empty()) events[std::size_t(cluster)].push_back({Event::publish, pending});
      pending.clear();
    };
    Segment segment;
    for (Walk walk(s, cluster, plan.clusters); walk.next(segment);) {
      REQUIRE(segment.k_begin < segment.k_end);
      REQUIRE(segment.k_end <= s.k_tiles);
      REQUIRE(segment.tile < s.tiles);
      for (int kt = segment.k_begin; kt < segment.k_end; ++kt) ++covered[std::size_t(segment.tile * s.k_tiles + kt)];
      if (segment.k_begin == 0 && segment.k_end == s.k_tiles) {
        ++whole_writes[std::size_t(segment.tile)];
      } else if (segment.k_begin == 0 && s.fixed_up_alone(segment.tile)) {
        // The unit holding slice 0 publishes its own partial, waits for the others', writes the tile.
        CHECK(segment.ends_range);
        CHECK(s.last_unit(segment.tile) - segment.unit + 1 <= Variant::fixup_alone_units);
        publish();
        Event wait{Event::wait_and_fix_up, {}};
        for (int v = segment.unit + 1; v <= s.last_unit(segment.tile); ++v)
          wait.slots.push_back(s.slot_in(v, segment.tile));
        CHECK(s.first_unit(segment.tile) == segment.unit);
        events[std::size_t(cluster)].push_back(wait);
        ++whole_writes[std::size_t(segment.tile)];
      } else {
        const int slot = s.slot(segment.unit, segment.k_begin);
        CHECK(slot == s.slot_in(segment.unit, segment.tile));
        REQUIRE(slot >= 0);
        REQUIRE(slot < slots);
        CHECK(stored.insert(slot).second);  // no slot holds two partials
        pending.push_back(slot);
      }
      if (segment.ends_range) {
        publish();
        long long first, last;
        s.tiles_to_share(segment.unit, first, last);
        for (const long long tile : {first, last}) {
          if (tile < 0) continue;
          const int c0 = s.first_unit(tile), c1 = s.last_unit(tile);
          CHECK(c1 - c0 + 1 > Variant::fixup_alone_units);
          CHECK(segment.unit >= c0);
          CHECK(segment.unit <= c1);
          std::vector<int>& pieces = piece_writes[tile];
          pieces.resize(L::pieces, 0);
          Event wait{Event::wait_and_fix_up, {}};
          for (int v = c0; v <= c1; ++v) wait.slots.push_back(s.slot_in(v, tile));
          for (int consumer = 0; consumer < L::consumers; ++consumer) {
            int first = 0, end = 0;
            s.share(segment.unit, tile, consumer, L::consumers, L::pieces, first, end);
            for (int piece = first; piece < end; ++piece) ++pieces[std::size_t(piece)];
          }
          events[std::size_t(cluster)].push_back(wait);
        }
      }
    }
    CHECK(pending.empty());
  }

  for (long long i = 0; i < iterations; ++i) {
    CAPTURE(i);
    REQUIRE(covered[std::size_t(i)] == 1);
  }
  // unit_of inverts begin(): the unit it names holds the iteration.
  for (long long i = 0; i < s.sk_tiles * s.k_tiles; ++i) {
    CAPTURE(i);
    const int u = s.unit_of(i);
    REQUIRE(u >= 0);
    REQUIRE(u < s.units);
    REQUIRE(s.begin(u) <= i);
    REQUIRE(i < s.begin(u + 1));
  }
  for (long long tile = 0; tile < s.tiles; ++tile) {
    CAPTURE(tile);
    const auto split = piece_writes.find(tile);
    if (split == piece_writes.end()) {
      REQUIRE(whole_writes[std::size_t(tile)] == 1);
    } else {
      REQUIRE(whole_writes[std::size_t(tile)] == 0);
      for (const int writes : split->second) REQUIRE(writes == 1);
    }
  }
  // The workspace the step asks for holds every slot used.
  CHECK(plan.partial_bytes == std::size_t(slots) * L::cluster_size * L::consumers * L::partial_float4s * 16);

  // Play the clusters: each goes on until it must wait for a flag that is not set yet.
  std::set<int> published;
  std::vector<std::size_t> next(events.size(), 0);
  for (bool progress = true; progress;) {
    progress = false;
    for (std::size_t c = 0; c < events.size(); ++c)
      while (next[c] < events[c].size()) {
        const Event& e = events[c][next[c]];
        if (e.kind == Event::publish) {
          published.insert(e.slots.begin(), e.slots.end());
        } else {
          bool ready = true;
          for (const int slot : e.slots) ready = ready && published.count(slot);
          if (!ready) break;
        }
        ++next[c];
        progress = true;
      }
  }
  for (std::size_t c = 0; c < events.size(); ++c) {
    CAPTURE(c);
    CHECK(next[c] == events[c].size());  // else a deadlock
  }
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

TEST_CASE("stream-K schedule: the step (hybrid, shared fixup)") { check_all<Config>(); }
TEST_CASE("stream-K schedule: data-parallel only") { check_all<DataParallel>(); }
TEST_CASE("stream-K schedule: split-K 2 and 4") {
  check_all<SplitK2>();
  check_all<SplitK4>();
}
TEST_CASE("stream-K schedule: stream-K only") { check_all<StreamKOnly>(); }
TEST_CASE("stream-K schedule: the fixup alone, the fixup shared") {
  check_all<FixupAlone>();
  check_all<FixupShared>();
}
TEST_CASE("stream-K schedule: no clusters") { check_all<NoCluster>(); }

TEST_CASE("stream-K schedule: the even deals of every tile and of all but the whole waves") {
  check_all<StreamKOnly>();
  check_all<HybridEven>();
}

TEST_CASE("stream-K schedule: the rule on the shapes README.md draws (66 clusters of 2)") {
  auto schedule_of = [](Shape shape) { return plan_schedule<Config>(shape.m, shape.n, shape.k, 66).schedule; };
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
  const Schedule even = plan_schedule<HybridEven>(3072, 3072, 3072, 66).schedule;
  CHECK(even.sk_tiles == 78);
  CHECK(even.units == 66);
  CHECK(even.split == 0);
}
