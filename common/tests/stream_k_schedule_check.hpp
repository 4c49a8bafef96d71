// The checks of a split-K or stream-K schedule (common/sm90/split_k_schedule.cuh, stream_k_schedule.cuh)
// as a kernel plans it, shared by the host tests of 11's, 12's and 13's use of it (stream_k_schedule.cu,
// stream_k_schedule_13.cu). For a plan, the walks of all workers, played on the CPU exactly as the kernel's producer
// and consumers play them, must
//   - cover every (tile, k-slice) exactly once;
//   - leave each split tile's partials in distinct slots inside the workspace the step asks for;
//   - write every element of C exactly once (whole tiles by their epilogue, split tiles piece by
//     piece by the shared fixup, or whole by the unit holding slice 0 with the fixup alone);
//   - never deadlock: a play in which each worker waits, at each fixup, for the flags of the
//     partials it reads must run to the end.
#pragma once

#include <doctest/doctest.h>

#include <map>
#include <set>
#include <vector>

#include "sm90/stream_k_schedule.cuh"

namespace worklog::stream_k::testing {

// What one worker (11: a cluster, 13: a block) does, in order, as the kernel does it.
struct Event {
  enum Kind { publish, wait_and_fix_up } kind;
  std::vector<int> slots;  // publish: slots made visible; wait: slots whose flags it waits for
};

// How a step lays out its tiles' fixup: `pieces` per tile over `consumers` warpgroups per block,
// `blocks` blocks per worker (a cluster), partials of `partial_bytes`; a split tile of at most
// `alone_units` units fixed up by the one holding its slice 0 (the configuration's fixup).
struct Geometry {
  int pieces, consumers, blocks;
  std::size_t partial_bytes;
  int alone_units;
};

inline void check_schedule(const Plan& plan, const Geometry& g, int resident) {
  const Schedule& s = plan.schedule;
  CAPTURE(resident);
  REQUIRE(plan.workers >= 1);
  REQUIRE(plan.workers <= resident);
  if (s.slots_per_unit == 2) CHECK(s.units <= plan.workers);  // the even deal: one range per worker
  const long long iterations = s.tiles * s.k_tiles;
  std::vector<int> covered(std::size_t(iterations), 0);
  std::vector<int> whole_writes(std::size_t(s.tiles), 0);
  std::map<long long, std::vector<int>> piece_writes;  // split tile -> times each piece was written
  std::set<int> stored;
  const int slots = s.units * s.slots_per_unit;
  std::vector<std::vector<Event>> events(std::size_t(plan.workers));

  for (int cluster = 0; cluster < plan.workers; ++cluster) {
    std::vector<int> pending;
    auto publish = [&] {
      if (!pending.empty()) events[std::size_t(cluster)].push_back({Event::publish, pending});
      pending.clear();
    };
    std::vector<Segment> walked;
    Walk walk(s, cluster, plan.workers);
    for (Segment segment; walk.next(segment);) walked.push_back(segment);
    for (std::size_t i = 0; i < walked.size(); ++i) {
      const Segment& segment = walked[i];
      // The walk's last piece of a unit's range: the next segment is another unit's, or a whole tile.
      const bool ends_range = segment.unit >= 0 && (i + 1 == walked.size() || walked[i + 1].unit != segment.unit);
      REQUIRE(segment.k_begin < segment.k_end);
      REQUIRE(segment.k_end <= s.k_tiles);
      REQUIRE(segment.tile < s.tiles);
      for (int kt = segment.k_begin; kt < segment.k_end; ++kt) ++covered[std::size_t(segment.tile * s.k_tiles + kt)];
      if (segment.k_begin == 0 && segment.k_end == s.k_tiles) {
        ++whole_writes[std::size_t(segment.tile)];
      } else if (segment.k_begin == 0 && fixed_up_alone(s, segment.tile, g.alone_units)) {
        // The unit holding slice 0 publishes its own partial, waits for the others', writes the tile.
        CHECK(ends_range);
        CHECK(s.last_unit(segment.tile) - segment.unit + 1 <= g.alone_units);
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
      CHECK(s.ends_range(segment.unit, segment.tile, segment.k_end) == ends_range);  // the fixup's test
      if (ends_range) {
        publish();
        long long first, last;
        tiles_to_share(s, g.alone_units, segment.unit, first, last);
        for (const long long tile : {first, last}) {
          if (tile < 0) continue;
          const int c0 = s.first_unit(tile), c1 = s.last_unit(tile);
          CHECK(c1 - c0 + 1 > g.alone_units);
          CHECK(segment.unit >= c0);
          CHECK(segment.unit <= c1);
          std::vector<int>& pieces = piece_writes[tile];
          pieces.resize(std::size_t(g.pieces), 0);
          Event wait{Event::wait_and_fix_up, {}};
          for (int v = c0; v <= c1; ++v) wait.slots.push_back(s.slot_in(v, tile));
          for (int consumer = 0; consumer < g.consumers; ++consumer) {
            int first = 0, end = 0;
            share_of(s, segment.unit, tile, consumer, g.consumers, g.pieces, first, end);
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
  CHECK(plan.partial_bytes == std::size_t(slots) * g.blocks * g.consumers * g.partial_bytes);

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

}  // namespace worklog::stream_k::testing
