// The split-K schedule (step 11's idea; its README derives the rule), for the kernels that split
// tiles along K (stream_k_kernel.cuh, swap_kernel.cuh):
//   - the work as one line of iterations, (tile, k-slice) numbered tile · k_tiles + slice, cut by
//     units into contiguous ranges (Schedule), walked alike by producer and consumers (Walk, Segment);
//   - the rules that decide which tiles are split and into how many parts (WholeTiles,
//     EveryTileInParts, LastWaveInParts), and the plan of a shape: the schedule, the workers to launch
//     and the workspace it needs (plan_schedule, attach_workspace);
//   - the fixup (Fixup): a range that ends inside a tile leaves its partial sum in a workspace slot
//     and publishes it by a flag that holds the launch's number (its epoch), so that nothing is ever
//     reset and nothing a launch before left behind is taken for this one's; the unit holding the
//     tile's slice 0 then adds the partials in the order of their k-slices, the same order in every
//     run (bitwise reproducible).
// A kernel supplies what differs: its tiles, its partial layout (accumulators per thread) and how a
// tile is written to C.
#pragma once

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>

#include "gemm_math.hpp"  // ceil_div
#include "hopper.cuh"
#include "step.hpp"  // GemmProblem
#include "watchdog.cuh"

namespace worklog::stream_k {

using namespace hopper;

// ---- The schedule ---------------------------------------------------------------------------------
// The work is T tiles × k_tiles slices. Tiles [0, sk_tiles) are "split": their iterations (tile ·
// k_tiles + slice) are cut into `units` contiguous ranges, unit u's being [begin(u), begin(u + 1)).
// The units come in groups of `split`; each group cuts `span` consecutive iterations into equal
// ranges (a split tile's k_tiles slices, in `split` parts). Worker w of `workers` walks units w,
// w + workers, … (at most one with the step's rule), then the whole tiles sk_tiles + w, + workers, …
// in the step's grouped order. The host fills it in (plan_schedule); producer and consumers walk it
// alike (Walk).
struct Schedule {
  long long tiles;     // tiles of C (11: cluster tiles)
  int k_tiles;         // 64-wide k-slices per tile
  long long sk_tiles;  // tiles [0, sk_tiles) are split by the units' ranges
  int units;           // ranges over the split tiles' iterations (0: every tile whole)
  int split;           // units per group...
  int span;            // ...and the iterations a group cuts: k_tiles, one tile in `split` parts
  int q;               // iterations per unit...
  int rem;             // ...and how many units of a group take one more
  int slots_per_unit;  // partials a unit can leave: 1 when its range lies inside one tile, else 2 (where it
                       // begins and where it ends)
  unsigned epoch;      // this launch's number: the value its flags are set to
  float4* partials;    // workspace: the partial sums, one per (slot, block of the worker, consumer warpgroup)
  unsigned* flags;     // workspace: one flag per partial

  // The first iteration of unit u's range; begin(units) is the end of the last one. q iterations to
  // each unit of a group, one more to each of its first rem.
  __host__ __device__ long long begin(int u) const {
    const int part = u % split;
    return (long long)(u / split) * span + part * q + (part < rem ? part : rem);
  }
  // The unit whose range holds iteration x: begin() inverted. In 32 bits, as the walk (plan_schedule
  // checks that every iteration number fits): the fixup asks this of every tile it touches, and a
  // search, or a 64-bit division, there cost whole microseconds per launch (11's README).
  __host__ __device__ int unit_of(long long x) const {
    const int longer = rem * (q + 1);  // iterations of a group's first rem units
    int offset = int(x);
    const int group = offset / span;
    offset -= group * span;
    return group * split + (offset < longer ? offset / (q + 1) : rem + (offset - longer) / q);
  }
  // The slot of unit u's partial sum of the tile whose slices it takes from k_begin on: one per unit
  // when ranges lie inside tiles; else one for the tile a range ends inside (k_begin == 0), one for the
  // tile it begins inside.
  __host__ __device__ int slot(int u, int k_begin) const {
    return slots_per_unit == 1 ? u : 2 * u + (k_begin == 0 ? 1 : 0);
  }
  // The units holding part of `tile`, in the order of their k-slices: first … last.
  __host__ __device__ int first_unit(long long tile) const { return unit_of(tile * k_tiles); }
  __host__ __device__ int last_unit(long long tile) const { return unit_of((tile + 1) * k_tiles - 1); }
  // The slot of unit v's partial of `tile`: v itself when a unit leaves one partial, without the
  // divisions of begin() that the fixup would otherwise pay per unit it adds up.
  __host__ __device__ int slot_in(int v, long long tile) const {
    if (slots_per_unit == 1) return v;
    const long long first = begin(v), tile_first = tile * k_tiles;
    return slot(v, int((first > tile_first ? first : tile_first) - tile_first));
  }
  // Whether the piece of unit u's range that ends at slice k_end of `tile` is the range's last. The
  // fixup asks this after the K loop rather than carrying a flag from the walk through it, where the
  // consumers have no register to spare (ptxas spilled the flag).
  __host__ __device__ bool ends_range(int u, long long tile, int k_end) const {
    return u >= 0 && tile * k_tiles + k_end == begin(u + 1);
  }
};

// One piece of work: slices [k_begin, k_end) of a tile; `unit` is the range it belongs to (-1 for
// a whole tile of the data-parallel part; Schedule::ends_range says whether it is the range's last).
// Tiles and iterations are counted in 32 bits here (plan_schedule checks that tiles · k_tiles fits): the
// producer walks with 40 registers, and 64-bit counters cost it a spill and 64-bit divisions.
struct Segment {
  int tile;
  int k_begin, k_end;
  int unit;
};

// Worker `worker`'s segments, in order: the pieces of its units' ranges, cut at tile boundaries,
// then its whole tiles.
class Walk {
 public:
  __host__ __device__ Walk(const Schedule& s, int worker, int workers)
      : s_(s), workers_(workers), unit_(worker), whole_tile_(int(s.sk_tiles) + worker) {
    enter_unit();
  }
  __host__ __device__ bool next(Segment& segment) {
    if (unit_ < s_.units) {
      const int tile = iteration_ / s_.k_tiles;
      const int k_begin = iteration_ - tile * s_.k_tiles;
      const int left = end_ - iteration_;
      const int k_end = left < s_.k_tiles - k_begin ? k_begin + left : s_.k_tiles;
      segment = {tile, k_begin, k_end, unit_};
      iteration_ += k_end - k_begin;
      if (iteration_ == end_) {
        unit_ += workers_;
        enter_unit();
      }
      return true;
    }
    if (whole_tile_ < s_.tiles) {
      segment = {whole_tile_, 0, s_.k_tiles, -1};
      whole_tile_ += workers_;
      return true;
    }
    return false;
  }

 private:
  // The range of unit_ or, if it is empty, of the next of this worker's units that is not.
  __host__ __device__ void enter_unit() {
    for (; unit_ < s_.units; unit_ += workers_) {
      iteration_ = int(s_.begin(unit_));
      end_ = int(s_.begin(unit_ + 1));
      if (iteration_ < end_) return;
    }
  }
  const Schedule& s_;
  int workers_, unit_;
  int whole_tile_, iteration_ = 0, end_ = 0;  // < tiles · k_tiles + workers: 32 bits (plan_schedule)
};

// ---- The plan (host) ------------------------------------------------------------------------------

// Which tiles are split, and how: tiles [0, sk_tiles) in grouped order; units in groups of `split`,
// each group cutting `span` consecutive iterations; a unit leaving slots_per_unit partials. A rule
// (below) returns one.
struct Division {
  long long sk_tiles = 0;
  int split = 0, span = 0, slots_per_unit = 0;
};
// The first `tiles` tiles, each in `parts` aligned parts of its k_tiles slices: part p of every split
// tile covers the same slices, so that the units running at the same moment read the same k-slices
// of A and B, as whole tiles do.
inline Division in_parts(long long tiles, int parts, int k_tiles) { return {tiles, parts, k_tiles, 1}; }

// The rules. A rule is a type whose divide(T tiles, k slices each, G resident workers, fixup_slices)
// returns the Division; a configuration names one (`using rule = …`).
// Whole tiles only: 10's schedule.
struct WholeTiles {
  static Division divide(long long, int, int, int) { return {}; }
};
// Every tile in `parts` aligned k-parts (fewer where a tile has fewer slices), whatever the waves.
template <int parts>
struct EveryTileInParts {
  static_assert(parts >= 2, "EveryTileInParts: parts must be at least 2");
  static Division divide(long long tiles, int k_tiles, int, int) {
    return in_parts(tiles, std::min(parts, k_tiles), k_tiles);
  }
};
// The step's rule (11's README derives and measures it). T tiles on G resident workers, T = w·G + r,
// k slices per tile. Data-parallel, the last wave keeps r workers busy for k slices while G − r idle.
// Cutting each of the r tiles into s = ⌊G / r⌋ aligned k-parts gives r·s ≤ G units of ⌈k / s⌉
// slices: the last wave shrinks to ⌈k / s⌉ slices plus a fixup, which costs about fixup_slices. So:
// r = 0, s < 2, or a saving k − ⌈k / s⌉ no larger than fixup_slices: every tile whole.
// EXCERPT BEGIN divide
struct LastWaveInParts {
  static Division divide(long long tiles, int k_tiles, int workers, int fixup_slices) {
    const long long remainder = tiles % workers;
    if (remainder == 0) return {};
    const int parts = int(std::min<long long>(workers / remainder, k_tiles));
    if (parts < 2 || k_tiles - ceil_div(k_tiles, parts) <= fixup_slices) return {};
    return in_parts(remainder, parts, k_tiles);
  }
};
// EXCERPT END divide

// The schedule of a shape (without its workspace pointers and epoch), the workers to launch and the
// workspace it needs.
struct Plan {
  Schedule schedule;
  int workers;  // 11: clusters; 13: blocks
  std::size_t partial_bytes, flag_bytes;
};

// The plan of `tiles` tiles of k_tiles slices on `resident` workers, under the configuration's rule
// (Policy::rule, with Policy::fixup_slices); a slot holds `partials_per_slot` partial sums (one per
// block of a worker and consumer warpgroup) of `partial_bytes` each. Throws std::length_error for
// more iterations than 32 bits count.
template <class Policy>
Plan plan_schedule(long long tiles, int k_tiles, int resident, int partials_per_slot, std::size_t partial_bytes) {
  static_assert(Policy::fixup_slices >= 0, "fixup_slices must be at least 0");
  Schedule s{};
  s.tiles = tiles;
  s.k_tiles = k_tiles;
  // The walk counts tiles and iterations in 32 bits (Walk). Beyond that, M·N·K ≥ 2^53: A, B and C
  // of such a shape take at least 300 GB.
  if (s.tiles * s.k_tiles + resident > 2147483647LL) throw std::length_error("more than 2^31 tile iterations");
  const Division division = Policy::rule::divide(s.tiles, s.k_tiles, resident, Policy::fixup_slices);
  s.sk_tiles = division.sk_tiles;
  if (s.sk_tiles > 0) {  // every unit at least one iteration (split ≤ span)
    const long long groups = s.sk_tiles * s.k_tiles / division.span;
    if (groups * division.split > 2147483647LL / 2) throw std::length_error("too many tiles for split-K");
    s.split = division.split;
    s.span = division.span;
    s.units = int(groups * s.split);
    s.q = s.span / s.split;
    s.rem = s.span % s.split;
    s.slots_per_unit = division.slots_per_unit;
  }
  Plan plan{};
  plan.workers = int(std::min<long long>(resident, std::max<long long>(s.units, s.tiles - s.sk_tiles)));
  // A unit waits for the other units of its group, which may come in a later round of units: that
  // cannot deadlock while at least `split` workers run (11's README).
  if (s.units > 0 && plan.workers < s.split) throw std::runtime_error("fewer resident workers than split-K parts");
  const std::size_t partials = std::size_t(s.units) * s.slots_per_unit * partials_per_slot;
  plan.partial_bytes = partials * partial_bytes;
  plan.flag_bytes = partials * sizeof(unsigned);
  plan.schedule = s;
  return plan;
}

// Every launch that splits tiles stores a new epoch in the flags it sets, and waits for flags that
// hold it: what any launch before it left in the workspace is never taken for this one's, and
// nothing is reset. One counter for the program: two launches never share a number.
inline unsigned next_epoch() {
  static unsigned epoch = 0;
  if (++epoch == 0) ++epoch;  // 0 is the zeroed workspace's value
  return epoch;
}

// Points the plan's schedule at the problem's workspace (partials, then flags) and gives it a new
// epoch, when it splits any tile; throws when the workspace is smaller than the plan needs.
template <class Input>
void attach_workspace(Plan& plan, const GemmProblem<Input>& p, const char* step) {
  Schedule& s = plan.schedule;
  if (s.units == 0) return;
  const std::size_t needed = plan.partial_bytes + plan.flag_bytes;
  if (!p.workspace || p.workspace_bytes < needed)
    throw std::runtime_error(
        std::string(step) + ": this shape needs " + std::to_string(needed) + " bytes of workspace, the launch has " +
        std::to_string(p.workspace ? p.workspace_bytes : 0) + " (Step::needs_workspace, GemmProblem::workspace)");
  s.partials = static_cast<float4*>(p.workspace);
  s.flags = reinterpret_cast<unsigned*>(static_cast<unsigned char*>(p.workspace) + plan.partial_bytes);
  s.epoch = next_epoch();
}

// ---- The fixup (device) ----------------------------------------------------------------------------
// Adds part, float4 i of a partial, to sum's values 4i … 4i+3.
template <int n>
__device__ __forceinline__ void add_float4(float (&sum)[n], const float4& part, int i) {
  sum[4 * i] += part.x;
  sum[4 * i + 1] += part.y;
  sum[4 * i + 2] += part.z;
  sum[4 * i + 3] += part.w;
}

// Adds to sum `count` float4s of this thread of the partials of units v0 … v1 of `tile` (unit v's at
// mine + slot_in(v) · slot_stride), in the order of the units: the same bits in every run. One unit at
// a time, its float4s in batches of in_flight loads, then their sums; each batch waits one round
// trip to L2. A partial of fewer float4s than a batch would pay a round trip per unit this way:
// stream_k_schedule.cuh's specialization batches several units' partials instead.
template <int count, int in_flight, long long slot_stride, bool narrow = (count < in_flight)>
struct SumPartials {
  static_assert(!narrow, "a partial narrower than a batch of loads: include sm90/stream_k_schedule.cuh");
  __device__ __forceinline__ static void add_up(float (&sum)[4 * count], const Schedule& s, const float4* mine,
                                                long long tile, int v0, int v1) {
    for (int v = v0; v <= v1; ++v) {
      const float4* source = mine + s.slot_in(v, tile) * slot_stride;
      // Batches of in_flight; the last one shorter where in_flight does not divide count.
#pragma unroll
      for (int done = 0; done < count; done += in_flight) {
        float4 part[in_flight];
#pragma unroll
        for (int i = 0; i < in_flight && done + i < count; ++i)
          part[i] = __ldcg(source + (done + i) * warpgroup_threads);
#pragma unroll
        for (int i = 0; i < in_flight && done + i < count; ++i) add_float4(sum, part[i], done + i);
      }
    }
  }
};

// One consumer warpgroup's side of the protocol. Its accumulators are `float4s` float4 per thread; a
// partial sum stores float4 i of thread t at i·128 + t, so that each store of the warpgroup is 2 KiB
// contiguous. The partial of (slot, block `rank` of the worker, consumer `half`) and its flag sit at
// index (slot · blocks + rank) · consumers + half. Partials names the layout (and FlagWait, the step
// in the watchdog's message, watchdog.cuh); piece_float4s cuts a partial into pieces, for a fixup
// that writes a tile in pieces.
template <int blocks_, int consumers_, int float4s_, int piece_float4s_, class FlagWait_>
struct Partials {
  static constexpr int blocks = blocks_, consumers = consumers_, float4s = float4s_, piece_float4s = piece_float4s_;
  using FlagWait = FlagWait_;
};

// The fixup by the unit holding a tile's slice 0: it publishes what it left for others, then adds
// the partials of the units after it, in order, to its own accumulators and writes the tile.
template <class P>
class Fixup {
 public:
  static constexpr int blocks = P::blocks, consumers = P::consumers, float4s = P::float4s;
  static constexpr int accumulators = 4 * float4s;
  static constexpr int partial_float4s = float4s * warpgroup_threads;
  using FlagWait = typename P::FlagWait;
  // The float4 loads of partials a thread keeps in flight (SumPartials): 16 KiB a warpgroup per round
  // trip to L2. More would take registers that the K loop's accumulators hold: with 32, ptxas put
  // kernels of narrow tiles on the stack.
  static constexpr int loads_in_flight = 8;

  // This warpgroup (consumer `consumer` of its block), its named barrier. The schedule (the
  // kernel's parameter) comes with every call.
  __device__ __forceinline__ Fixup(int consumer, int barrier)
      : consumer_(consumer), barrier_(barrier), t_(threadIdx.x % warpgroup_threads) {}

  // After the K loop of a segment: a whole tile goes to C (store_tile(acc)); the unit holding slice 0
  // of a split tile publishes, adds the others' partials and writes it; any other part of a split
  // tile leaves its partial, published when its range ends. (origin_of and store_piece write part of
  // a tile: this fixup writes whole tiles only.)
  template <class StoreTile, class OriginOf, class StorePiece>
  __device__ __forceinline__ void finish_segment(const Schedule& s, const Segment& segment, float (&acc)[accumulators],
                                                 StoreTile store_tile, OriginOf, StorePiece) {
    if (segment.k_begin == 0 && segment.k_end == s.k_tiles) {
      store_tile(acc);
    } else if (segment.k_begin == 0) {
      fix_up_alone(s, segment, acc, store_tile);
    } else {
      leave_partial(s, segment, acc);
    }
    if (s.ends_range(segment.unit, segment.tile, segment.k_end)) publish(s, segment.unit);
  }

 protected:
  // The block's rank in its worker, read where it is used: a copy kept in a register from the start
  // would stay live through the K loop, where the consumers have none to spare: ptxas then spills,
  // and re-reads threadIdx in every k-slice (the K loop's SASS shows it).
  __device__ __forceinline__ static int rank() { return blocks > 1 ? int(hopper::cluster_rank()) : 0; }
  __device__ __forceinline__ float4* partial(const Schedule& s, int slot, int half) const {
    return s.partials + ((slot * blocks + rank()) * consumers + half) * partial_float4s;
  }
  __device__ __forceinline__ unsigned* flag(const Schedule& s, int slot, int half) const {
    return s.flags + (slot * blocks + rank()) * consumers + half;
  }

  // L2 only (__stcg): another SM reads it.
  __device__ __forceinline__ void store_partial(const float (&acc)[accumulators], float4* destination) const {
#pragma unroll
    for (int i = 0; i < float4s; ++i)
      __stcg(destination + i * warpgroup_threads + t_,
             make_float4(acc[4 * i], acc[4 * i + 1], acc[4 * i + 2], acc[4 * i + 3]));
  }

  // Publishes this consumer's partials stored since the last call (pending_, bit b: unit u's slot of
  // type b, Schedule::slot): every thread's stores, then the flags (release).
  __device__ __forceinline__ void publish(const Schedule& s, int u) {
    // LAB BEGIN publish [hard]
    if (pending_ == 0) return;
    named_barrier_sync<warpgroup_threads>(barrier_);
    if (t_ == 0)
      for (int type = 0; type < 2; ++type)
        if (pending_ & (1 << type)) store_release_gpu(flag(s, s.slot(u, 1) + type, consumer_), s.epoch);
    pending_ = 0;
    // LAB END
  }

  // Adds to sum the float4s [first, first + count) of this thread of the partials (of consumer `half`)
  // of units v0 … v1 of `tile`, in the order of the units (SumPartials).
  template <int count, int in_flight>
  __device__ __forceinline__ void add_partials(const Schedule& s, float (&sum)[4 * count], long long tile, int v0,
                                               int v1, int half, int first) const {
    // This thread's float4 `first` of slot 0's partial; slot v's lies v · slot_stride further. The
    // rank is read once here, not per unit: the loads of the next units wait on their addresses.
    const float4* mine = partial(s, 0, half) + first * warpgroup_threads + t_;
    constexpr long long slot_stride = (long long)blocks * consumers * partial_float4s;
    SumPartials<count, in_flight, slot_stride>::add_up(sum, s, mine, tile, v0, v1);
  }

  // The fixup by one unit alone: unit u holds slice 0 of `tile` and adds the partials of the units
  // after it, in order, to its own accumulators, once their flags say they are there.
  __device__ __forceinline__ void add_later_partials(const Schedule& s, int u, long long tile,
                                                     float (&acc)[accumulators]) {
    // LAB BEGIN add_later_partials [hard]
    const int c1 = s.last_unit(tile);
    for (int i = t_; i < c1 - u; i += warpgroup_threads) {
      const int v = u + 1 + i, slot = s.slot_in(v, tile);
      flag_wait<FlagWait>(flag(s, slot, consumer_), s.epoch, slot);
    }
    named_barrier_sync<warpgroup_threads>(barrier_);
    add_partials<float4s, loads_in_flight>(s, acc, tile, u + 1, c1, consumer_, 0);
    // LAB END
  }

  // The unit holding slice 0 of the segment's tile: publish what this unit left for others before
  // waiting, so that no unit waits on a waiting one; then add the others' partials, and write.
  template <class StoreTile>
  __device__ __forceinline__ void fix_up_alone(const Schedule& s, const Segment& segment, float (&acc)[accumulators],
                                               StoreTile store_tile) {
    publish(s, segment.unit);
    add_later_partials(s, segment.unit, segment.tile, acc);
    store_tile(acc);
  }
  // Part of a split tile: the partial goes to the workspace, published when the range ends (the
  // stores drain meanwhile; nobody reads it earlier).
  __device__ __forceinline__ void leave_partial(const Schedule& s, const Segment& segment,
                                                const float (&acc)[accumulators]) {
    const int slot = s.slot(segment.unit, segment.k_begin);
    store_partial(acc, partial(s, slot, consumer_));
    pending_ |= 1 << (slot - s.slot(segment.unit, 1));
  }

  int consumer_, barrier_, t_;
  int pending_ = 0;  // partials of the current unit not yet published (publish)
};

// The fixup a configuration names (`using fixup = …`): by the unit holding a split tile's slice 0.
struct ByFirstUnit {
  static constexpr int alone_units = 1 << 30;  // every split tile: fixed up alone
  template <class P>
  using type = Fixup<P>;
};

}  // namespace worklog::stream_k
