// The stream-K schedule (step 11's idea; its README derives the rule and the protocol), for the
// kernels that split tiles along K (stream_k_kernel.cuh, swap_kernel.cuh):
//   - the work as one line of iterations, (tile, k-slice) numbered tile · k_tiles + slice, and the
//     units that cut it into contiguous ranges (Schedule), walked alike by producer and consumers
//     (Walk, Segment);
//   - the rule that decides which tiles are split and how (divide), and the plan of a shape: the
//     schedule, the workers to launch and the workspace it needs (plan_schedule, attach_workspace);
//   - the fixup protocol (Fixup): a range that begins or ends inside a tile leaves its partial sum in
//     a workspace slot and publishes it by a flag that holds the launch's number (its epoch), so that
//     nothing is ever reset and nothing a launch before left behind is taken for this one's; the
//     units of a split tile then add the partials up in the order of their k-slices, the same order in
//     every run (bitwise reproducible), by one unit alone or shared among all of them.
// A kernel supplies what differs: its tiles, its partial layout (accumulators per thread) and how a
// tile or a piece of one is written to C.
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

using hopper::named_barrier_sync;
using hopper::store_release_gpu;
using hopper::warpgroup_threads;

// How the tiles are divided among the resident workers (11's README: the arithmetic of waves).
enum class Decomposition {
  hybrid,         // data-parallel for the whole waves, the remaining tiles in aligned k-parts over all units
  hybrid_even,    // data-parallel for the whole waves but one, the rest's slices evenly over the units
  data_parallel,  // whole tiles only: 10's schedule
  stream_k,       // every tile's slices evenly over the units
  split_k,        // every tile's k-slices in Policy::split_k equal parts, one unit each
};

// The knobs of a schedule that a step's Config names (each with the step's reason there):
//   decomposition, split_k (parts per tile for Decomposition::split_k), fixup_slices (what splitting a
//   tile costs a unit, in k-slices), fixup_alone_units (a tile split among this many units or fewer is
//   fixed up by one of them). check_policy names the knob at fault.
template <class Policy>
constexpr bool check_policy() {
  static_assert(Policy::decomposition != Decomposition::split_k || Policy::split_k >= 2,
                "split_k must be at least 2 with Decomposition::split_k");
  static_assert(Policy::fixup_slices >= 0, "fixup_slices must be at least 0");
  static_assert(Policy::fixup_alone_units >= 1, "fixup_alone_units must be at least 1 (1: every split tile shared)");
  return true;
}

// ---- The schedule ---------------------------------------------------------------------------------
// The work is T tiles × k_tiles slices. Tiles [0, sk_tiles) are "split": their iterations (tile ·
// k_tiles + slice) are cut into `units` contiguous ranges, unit u's being [begin(u), begin(u + 1)):
// either `split` parts of each tile, or all of them dealt evenly. Worker w of `workers` walks units w,
// w + workers, … (at most one with the step's rule), then the whole tiles sk_tiles + w, + workers, …
// in the step's grouped order. The host fills it in (plan_schedule); producer and consumers walk it
// alike (Walk).
struct Schedule {
  long long tiles;     // tiles of C (11: cluster tiles)
  int k_tiles;         // 64-wide k-slices per tile
  long long sk_tiles;  // tiles [0, sk_tiles) are split by the units' ranges
  int units;           // ranges over the split tiles' iterations (0: every tile whole)
  int split;           // parts per split tile (units = sk_tiles · split); 0: the iterations evenly over the units
  long long q;         // iterations per unit (split: per part)...
  int rem;             // ...and how many units (split: parts of a tile) take one more
  int slots_per_unit;  // partial sums a unit can leave: 1 in parts, 2 dealt evenly (the tiles a range begins and ends
                       // in)
  int alone_units;     // Policy::fixup_alone_units
  unsigned epoch;      // this launch's number: the value its flags are set to
  float4* partials;    // workspace: the partial sums, one per (slot, block of the worker, consumer warpgroup)
  unsigned* flags;     // workspace: one flag per partial

  // The first iteration of unit u's range; begin(units) is the end of the last one.
  __host__ __device__ long long begin(int u) const {
    long long first = 0;
    // q iterations to each unit, one more to each of the first rem: over all the split tiles'
    // iterations without parts; with them, unit u is part u % split of tile u / split.
    if (split > 0) {
      const int part = u % split;
      first = (long long)(u / split) * k_tiles + part * q + (part < rem ? part : rem);
    } else {
      first = u * q + (u < rem ? u : rem);
    }
    return first;
  }
  // The unit whose range holds iteration x: begin() inverted. The first rem units (parts of a tile)
  // take q + 1 iterations, the others q. In 32 bits, as the walk (plan_schedule checks that every
  // iteration number fits): the fixup asks this of every tile it touches, and a search, or a 64-bit
  // division, there cost whole microseconds per launch (11's README).
  __host__ __device__ int unit_of(long long x) const {
    const int per_unit = int(q), longer = rem * (per_unit + 1);  // iterations of the first rem units
    int offset = int(x), first = 0;
    if (split > 0) {
      const int tile = offset / k_tiles;
      offset -= tile * k_tiles;
      first = tile * split;
    }
    return first + (offset < longer ? offset / (per_unit + 1) : rem + (offset - longer) / per_unit);
  }
  // The slot of unit u's partial sum of the tile whose slices it takes from k_begin on: a part has
  // one; a range dealt evenly one for the tile it begins inside (k_begin > 0), one for the tile it
  // ends inside.
  __host__ __device__ int slot(int u, int k_begin) const {
    return slots_per_unit == 1 ? u : 2 * u + (k_begin == 0 ? 1 : 0);
  }
  // The units holding part of `tile`, in the order of their k-slices: first … last.
  __host__ __device__ int first_unit(long long tile) const { return unit_of(tile * k_tiles); }
  __host__ __device__ int last_unit(long long tile) const { return unit_of((tile + 1) * k_tiles - 1); }
  // The slot of unit v's partial of `tile`: v itself when a unit leaves one partial (parts), without
  // the divisions of begin() that the fixup would otherwise pay per unit it adds up.
  __host__ __device__ int slot_in(int v, long long tile) const {
    if (slots_per_unit == 1) return v;
    const long long first = begin(v), tile_first = tile * k_tiles;
    return slot(v, int((first > tile_first ? first : tile_first) - tile_first));
  }
  // How a split tile is fixed up: by the unit holding its slice 0 alone, when few units hold part
  // of it (that unit keeps its own sum in registers and adds the others' partials); else shared by
  // all of them, each adding up and writing a share of the tile's pieces.
  __host__ __device__ bool fixed_up_alone(long long tile) const {
    return last_unit(tile) - first_unit(tile) + 1 <= alone_units;
  }
  // The split tiles whose fixup unit u shares once its range is done: the tile the range begins in
  // and the one it ends in, each if other units hold part of it and it is not fixed up alone (-1: none).
  __host__ __device__ void tiles_to_share(int u, long long& first, long long& last) const {
    const long long first_tile = int(begin(u)) / k_tiles, last_tile = int(begin(u + 1) - 1) / k_tiles;
    first = first_unit(first_tile) != last_unit(first_tile) && !fixed_up_alone(first_tile) ? first_tile : -1;
    last = last_tile != first_tile && last_unit(last_tile) != u && !fixed_up_alone(last_tile) ? last_tile : -1;
  }
  // Whether the piece of unit u's range that ends at slice k_end of `tile` is the range's last (the
  // walk's Segment::ends_range). The fixup asks this after the K loop rather than carrying the flag
  // through it, where the consumers have no register to spare (ptxas spilled the flag).
  __host__ __device__ bool ends_range(int u, long long tile, int k_end) const {
    return u >= 0 && tile * k_tiles + k_end == begin(u + 1);
  }
  // The pieces [first, end) of split tile `tile` that consumer warpgroup `consumer` of unit u adds
  // up and writes: the tile's `pieces` dealt out evenly over its units' `consumers` warpgroups each.
  __host__ __device__ void share(int u, long long tile, int consumer, int consumers, int pieces, int& first,
                                 int& end) const {
    const int c0 = first_unit(tile), shares = (last_unit(tile) - c0 + 1) * consumers;
    const int index = (u - c0) * consumers + consumer;
    first = pieces * index / shares;
    end = pieces * (index + 1) / shares;
  }
};

// One piece of work: slices [k_begin, k_end) of a tile; `unit` is the range it belongs to (-1 for
// a whole tile of the data-parallel part), ends_range when it is the range's last. Tiles and
// iterations are counted in 32 bits here (plan_schedule checks that tiles · k_tiles fits): the
// producer walks with 40 registers, and 64-bit counters cost it a spill and 64-bit divisions.
struct Segment {
  int tile;
  int k_begin, k_end;
  int unit;
  bool ends_range;
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
      segment = {tile, k_begin, k_end, unit_, false};
      iteration_ += k_end - k_begin;
      if (iteration_ == end_) {
        segment.ends_range = true;
        unit_ += workers_;
        enter_unit();
      }
      return true;
    }
    if (whole_tile_ < s_.tiles) {
      segment = {whole_tile_, 0, s_.k_tiles, -1, false};
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

// Which tiles are split, and how: sk_tiles (the first, in grouped order), each in `split` parts of
// its k-slices, or (split 0) with all their iterations dealt evenly over the units.
struct Division {
  long long sk_tiles;
  int split;
};

// The decomposition rule (11's README derives and measures it). T tiles on G resident workers,
// T = w·G + r, k slices per tile. Data-parallel, the last wave keeps r workers busy for k slices
// while G − r idle. Cutting each of the r tiles into s = ⌊G / r⌋ equal k-parts gives r·s ≤ G units
// of ⌈k / s⌉ slices: the last wave shrinks to ⌈k / s⌉ slices plus a fixup, which costs about
// fixup_slices. So: r = 0, s < 2, or a saving k − ⌈k / s⌉ no larger than fixup_slices: every tile
// whole. The parts are aligned (part p of every split tile covers the same slices), so that the units
// running at the same moment read the same k-slices of A and B, as whole tiles do.
// EXCERPT BEGIN divide
template <class Policy>
Division divide(long long tiles, int k_tiles, int workers) {
  const long long waves = tiles / workers, remainder = tiles % workers;
  constexpr long long fixup = Policy::fixup_slices;
  switch (Policy::decomposition) {
    case Decomposition::data_parallel:
      return {0, 0};
    case Decomposition::stream_k:
      return {tiles, 0};
    case Decomposition::split_k:
      return {tiles, std::min(Policy::split_k, k_tiles)};
    case Decomposition::hybrid_even:
      // The rule first tried: the r remaining tiles plus one full wave, their iterations evenly over
      // the G units (each between one and two tiles' worth), when that saves k·(G − r)/G slices.
      if (remainder == 0 || k_tiles * (workers - remainder) <= fixup * workers) return {0, 0};
      return {waves >= 1 ? remainder + workers : remainder, 0};
    case Decomposition::hybrid:
      break;
  }
  if (remainder == 0) return {0, 0};
  const int parts = int(std::min<long long>(workers / remainder, k_tiles));
  if (parts < 2 || k_tiles - ceil_div(k_tiles, parts) <= fixup) return {0, 0};
  return {remainder, parts};
}
// EXCERPT END divide

// The schedule of a shape (without its workspace pointers and epoch), the workers to launch and the
// workspace it needs.
struct Plan {
  Schedule schedule;
  int workers;  // 11: clusters; 12: blocks
  std::size_t partial_bytes, flag_bytes;
};

// The plan of `tiles` tiles of k_tiles slices on `resident` workers, under the step's Policy; a slot
// holds `partials_per_slot` partial sums (one per block of a worker and consumer warpgroup) of
// `partial_bytes` each. Throws std::length_error for more iterations than 32 bits count.
template <class Policy>
Plan plan_schedule(long long tiles, int k_tiles, int resident, int partials_per_slot, std::size_t partial_bytes) {
  static_assert(check_policy<Policy>());
  Schedule s{};
  s.tiles = tiles;
  s.k_tiles = k_tiles;
  // The walk counts tiles and iterations in 32 bits (Walk). Beyond that, M·N·K ≥ 2^53: A, B and C
  // of such a shape take at least 300 GB.
  if (s.tiles * s.k_tiles + resident > 2147483647LL) throw std::length_error("more than 2^31 tile iterations");
  const Division division = divide<Policy>(s.tiles, s.k_tiles, resident);
  s.sk_tiles = division.sk_tiles;
  const long long iterations = s.sk_tiles * s.k_tiles;
  if (division.split > 0) {  // every part at least one slice (split ≤ k_tiles)
    s.split = division.split;
    if (s.sk_tiles * s.split > 2147483647LL / 2) throw std::length_error("too many tiles for split-K");
    s.units = int(s.sk_tiles * s.split);
    s.q = s.k_tiles / s.split;
    s.rem = s.k_tiles % s.split;
    s.slots_per_unit = 1;  // a part lies inside one tile
  } else if (s.sk_tiles > 0) {
    s.units = int(std::min<long long>(resident, iterations));  // every unit at least one iteration
    s.q = iterations / s.units;
    s.rem = int(iterations % s.units);
    s.slots_per_unit = 2;
  }
  s.alone_units = Policy::fixup_alone_units;
  Plan plan{};
  plan.workers = int(std::min<long long>(resident, std::max<long long>(s.units, s.tiles - s.sk_tiles)));
  // A unit waits for the other parts of its tile, which may come in a later round of units: that
  // cannot deadlock while at least `split` workers run (11's README).
  if (s.split > 0 && plan.workers < s.split) throw std::runtime_error("fewer resident workers than split-K parts");
  const std::size_t partials = std::size_t(s.units) * s.slots_per_unit * partials_per_slot;
  plan.partial_bytes = partials * partial_bytes;
  plan.flag_bytes = partials * sizeof(unsigned);
  plan.schedule = s;
  return plan;
}

// Every launch that splits tiles stores a new epoch in the flags it sets, and waits for flags that
// hold it: what any launch before it left in the workspace (11's or 13's) is never taken for this
// one's, and nothing is reset. One counter for the program: two launches never share a number.
inline unsigned next_epoch() {
  static unsigned epoch = 0;
  if (++epoch == 0) ++epoch;  // 0 is the zeroed workspace's value
  return epoch;
}

// Counts one part of a tile in, for a kernel whose last part to finish adds up the others (14's
// in-place kernel); true for the last of this launch. The counter holds the launch's epoch in its
// high half and the parts counted so far in its low half, so nothing is ever reset: a part adds 1 and
// is counted when the epoch it finds is this launch's; the first to find another (whatever an earlier
// launch left) installs this launch's epoch with a count of 1, and a part that finds it installed by
// then adds itself again. One atomic per part but for the first. The caller fences its partial before,
// and after.
__device__ __forceinline__ bool last_part_in(unsigned long long* counter, unsigned epoch, int parts) {
  const unsigned long long mine = (unsigned long long)epoch << 32;
  unsigned long long seen = atomicAdd(counter, 1ull);
  while ((seen >> 32) != epoch) {  // an earlier launch's value, one more now: install this launch's
    const unsigned long long after = seen + 1, got = atomicCAS(counter, after, mine | 1);
    if (got == after) return parts == 1;
    if ((got >> 32) == epoch)
      seen = atomicAdd(counter, 1ull);  // installed meanwhile: count in
    else
      seen = got - 1;  // still an earlier value: try again on it
  }
  return (seen & 0xffffffffull) + 1 == (unsigned long long)parts;
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
// One consumer warpgroup's side of the protocol. Its accumulators are `float4s` float4 per thread; a
// partial sum stores float4 i of thread t at i·128 + t, so that each store of the warpgroup is 2 KiB
// contiguous. The partial of (slot, block `rank` of the worker, consumer `half`) and its flag sit at
// index (slot · blocks + rank) · consumers + half. A split tile's fixup is cut into `pieces` of
// piece_float4s consecutive float4s of one consumer's partial (pieces / consumers per consumer).
// FlagWait names the step in the watchdog's message (watchdog.cuh).
template <int blocks, int consumers, int float4s, int piece_float4s, class FlagWait>
class Fixup {
 public:
  static constexpr int accumulators = 4 * float4s;
  static constexpr int pieces_per_consumer = float4s / piece_float4s;
  static constexpr int pieces = consumers * pieces_per_consumer;
  static constexpr int partial_float4s = float4s * warpgroup_threads;
  // The float4 loads of partials a thread keeps in flight; each batch waits one round trip to L2. A
  // partial of fewer float4s (13's widths 8, 16 and 32: 1, 2 and 4 a thread) shares its batch with the
  // next units' partials, 8 / float4s of them, so that a tile split over every SM is not added up one
  // unit per round trip. More loads would take registers the K loop's accumulators hold: with 32,
  // ptxas put two of 13's kernels on the stack.
  static constexpr int loads_in_flight = 8;
  static_assert(float4s % piece_float4s == 0, "piece_float4s must divide a consumer's float4s");

  // This warpgroup (consumer `consumer` of its block), its named barrier. The schedule (the
  // kernel's parameter) comes with every call.
  __device__ __forceinline__ Fixup(int consumer, int barrier)
      : consumer_(consumer), barrier_(barrier), t_(threadIdx.x % warpgroup_threads) {}

  // After the K loop of a segment: a whole tile goes to C (store_tile(acc)); the unit holding slice 0
  // of a tile fixed up alone publishes, adds the others' partials and writes it; any other part of a
  // split tile leaves its partial. At a range's end: publish, then share the fixup of the tiles it
  // began or ended in (store_piece(sum, the tile's origin_of, half, piece of that consumer)).
  template <class StoreTile, class OriginOf, class StorePiece>
  __device__ __forceinline__ void finish_segment(const Schedule& s, const Segment& segment, float (&acc)[accumulators],
                                                 StoreTile store_tile, OriginOf origin_of, StorePiece store_piece) {
    if (segment.k_begin == 0 && segment.k_end == s.k_tiles) {
      store_tile(acc);
    } else if (segment.k_begin == 0 && s.fixed_up_alone(segment.tile)) {
      // Publish what this unit left for others before waiting, so that no unit waits on a waiting one.
      publish(s, segment.unit);
      add_later_partials(s, segment.unit, segment.tile, acc);
      store_tile(acc);
    } else {
      // Part of a split tile: the partial goes to the workspace, published when the range ends (the
      // stores drain meanwhile; nobody reads it earlier).
      const int slot = s.slot(segment.unit, segment.k_begin);
      store_partial(acc, partial(s, slot, consumer_));
      pending_ |= 1 << (slot - s.slot(segment.unit, 1));
    }
    if (s.ends_range(segment.unit, segment.tile, segment.k_end)) {
      publish(s, segment.unit);
      long long first, last;
      s.tiles_to_share(segment.unit, first, last);
#pragma unroll 1
      for (int i = 0; i < 2; ++i) {
        const long long tile = i == 0 ? first : last;
        if (tile >= 0) share(s, segment.unit, tile, origin_of, store_piece);
      }
    }
  }

 private:
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
  // of units v0 … v1 of `tile`, in the order of the units: `in_flight` loads, then their sums.
  template <int count, int in_flight>
  __device__ __forceinline__ void add_partials(const Schedule& s, float (&sum)[4 * count], long long tile, int v0,
                                               int v1, int half, int first) const {
    // This thread's float4 `first` of slot 0's partial; slot v's lies v · slot_stride further. The
    // rank is read once here, not per unit: the loads of the next units wait on their addresses.
    const float4* mine = partial(s, 0, half) + first * warpgroup_threads + t_;
    constexpr long long slot_stride = (long long)blocks * consumers * partial_float4s;
    auto add = [&](const float4& part, int i) {
      sum[4 * i] += part.x;
      sum[4 * i + 1] += part.y;
      sum[4 * i + 2] += part.z;
      sum[4 * i + 3] += part.w;
    };
    if constexpr (count >= in_flight) {  // one unit at a time, its float4s in batches
      for (int v = v0; v <= v1; ++v) {
        const float4* source = mine + s.slot_in(v, tile) * slot_stride;
#pragma unroll
        for (int batch = 0; batch < count / in_flight; ++batch) {
          float4 part[in_flight];
#pragma unroll
          for (int i = 0; i < in_flight; ++i) part[i] = __ldcg(source + (in_flight * batch + i) * warpgroup_threads);
#pragma unroll
          for (int i = 0; i < in_flight; ++i) add(part[i], in_flight * batch + i);
        }
        // What is left of the float4s when in_flight does not divide them (13's swap kernel at a
        // width of 8·g rows, g groups): one shorter batch.
        constexpr int tail = count % in_flight, done = count - tail;
        if constexpr (tail > 0) {
          float4 part[tail];
#pragma unroll
          for (int i = 0; i < tail; ++i) part[i] = __ldcg(source + (done + i) * warpgroup_threads);
#pragma unroll
          for (int i = 0; i < tail; ++i) add(part[i], done + i);
        }
      }
    } else {  // several units at a time, all of each one's float4s
      constexpr int units = in_flight / count;
      for (int v = v0; v <= v1; v += units) {
        float4 part[units][count];
#pragma unroll
        for (int b = 0; b < units; ++b)
          if (v + b <= v1) {
            const float4* source = mine + s.slot_in(v + b, tile) * slot_stride;
#pragma unroll
            for (int i = 0; i < count; ++i) part[b][i] = __ldcg(source + i * warpgroup_threads);
          }
#pragma unroll
        for (int b = 0; b < units; ++b)
          if (v + b <= v1) {  // the loaded partials only, in order
#pragma unroll
            for (int i = 0; i < count; ++i) add(part[b][i], i);
          }
      }
    }
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

  // The shared fixup of split tile `tile` by unit u: its contributors are units c0 … c1, in the order
  // of their k-slices; their consumer warpgroups share out its pieces, and each adds up the partials of
  // its pieces, in that order, and writes them (store_piece).
  template <class OriginOf, class StorePiece>
  __device__ __forceinline__ void share(const Schedule& s, int u, long long tile, OriginOf origin_of,
                                        StorePiece store_piece) {
    const int c0 = s.first_unit(tile), c1 = s.last_unit(tile), n = c1 - c0 + 1;
    int first_piece, end_piece;
    s.share(u, tile, consumer_, consumers, pieces, first_piece, end_piece);
    if (first_piece == end_piece) return;
    // Every partial of the tile must be there: its flags, waited for by parallel threads.
    // LAB BEGIN share [hard]
    for (int i = t_; i < n * consumers; i += warpgroup_threads) {
      const int v = c0 + i / consumers, slot = s.slot_in(v, tile);
      flag_wait<FlagWait>(flag(s, slot, i % consumers), s.epoch, slot);
    }
    named_barrier_sync<warpgroup_threads>(barrier_);
    const auto origin = origin_of(tile);  // once per tile: the step's tile order may cost divisions
    for (int piece = first_piece; piece < end_piece; ++piece) {
      const int half = piece / pieces_per_consumer, within = piece % pieces_per_consumer;
      float sum[4 * piece_float4s];
#pragma unroll
      for (int i = 0; i < 4 * piece_float4s; ++i) sum[i] = 0.0f;
      add_partials<piece_float4s, loads_in_flight>(s, sum, tile, c0, c1, half, within * piece_float4s);
      store_piece(sum, origin, half, within);
    }
    // LAB END
  }

  int consumer_, barrier_, t_;
  int pending_ = 0;  // partials of the current unit not yet published (publish)
};

}  // namespace worklog::stream_k
