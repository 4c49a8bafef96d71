// Stream-K (step 12's idea; its README derives it): what the split-K schedule of split_k_schedule.cuh
// gains when a split tile's fixup is shared by all the units that hold part of it, and when the
// iterations of the split tiles are dealt out evenly, ranges running across tile boundaries:
//   - the rules that deal evenly (EveryTileEven, LastWavesEven);
//   - the shared fixup (SharedFixup, named by a configuration as SharedAbove<units>): a tile split
//     among more than `units` units is added up and written by all of them, each unit's consumer
//     warpgroups a share of its pieces, every piece summed in the order of the k-slices (the same bits
//     in every run); a tile of fewer units is fixed up by the one holding its slice 0, as in 11.
#pragma once

#include "sm90/split_k_schedule.cuh"

namespace worklog::stream_k {

// ---- The even rules (host) --------------------------------------------------------------------------

// The first `tiles` tiles with all their iterations dealt evenly over min(G, iterations) units, one
// group: a range may begin inside one tile and end inside another, so a unit can leave two partials.
inline Division evenly(long long tiles, int k_tiles, int workers) {
  const long long iterations = tiles * k_tiles;
  return {tiles, int(std::min<long long>(workers, iterations)), int(iterations), 2};
}
// Every tile's slices evenly over the units: stream-K as its paper states it.
struct EveryTileEven {
  static Division divide(long long tiles, int k_tiles, int workers, int) { return evenly(tiles, k_tiles, workers); }
};
// The hybrid first tried: the r remaining tiles plus one full wave, their iterations evenly over the
// G units (each between one and two tiles' worth), when that saves k·(G − r)/G slices.
struct LastWavesEven {
  static Division divide(long long tiles, int k_tiles, int workers, int fixup_slices) {
    const long long waves = tiles / workers, remainder = tiles % workers;
    if (remainder == 0 || (long long)k_tiles * (workers - remainder) <= (long long)fixup_slices * workers) return {};
    return evenly(waves >= 1 ? remainder + workers : remainder, k_tiles, workers);
  }
};

// ---- Which units share which tile -------------------------------------------------------------------

// Whether split tile `tile` is fixed up by the unit holding its slice 0 alone: when at most
// alone_units units hold part of it.
__host__ __device__ inline bool fixed_up_alone(const Schedule& s, long long tile, int alone_units) {
  return s.last_unit(tile) - s.first_unit(tile) + 1 <= alone_units;
}
// The split tiles whose fixup unit u shares once its range is done: the tile the range begins in and
// the one it ends in, each if other units hold part of it and it is not fixed up alone (-1: none).
__host__ __device__ inline void tiles_to_share(const Schedule& s, int alone_units, int u, long long& first,
                                               long long& last) {
  const long long first_tile = int(s.begin(u)) / s.k_tiles, last_tile = int(s.begin(u + 1) - 1) / s.k_tiles;
  first = s.first_unit(first_tile) != s.last_unit(first_tile) && !fixed_up_alone(s, first_tile, alone_units)
              ? first_tile
              : -1;
  last = last_tile != first_tile && s.last_unit(last_tile) != u && !fixed_up_alone(s, last_tile, alone_units)
             ? last_tile
             : -1;
}
// EXCERPT BEGIN share_of
// The pieces [first, end) of split tile `tile` that consumer warpgroup `consumer` of unit u adds up
// and writes: the tile's `pieces` dealt out evenly over its units' `consumers` warpgroups each.
__host__ __device__ inline void share_of(const Schedule& s, int u, long long tile, int consumer, int consumers,
                                         int pieces, int& first, int& end) {
  const int c0 = s.first_unit(tile), shares = (s.last_unit(tile) - c0 + 1) * consumers;
  const int index = (u - c0) * consumers + consumer;
  first = pieces * index / shares;
  end = pieces * (index + 1) / shares;
}
// EXCERPT END share_of

// ---- Narrow partials (device) -----------------------------------------------------------------------
// SumPartials for partials of fewer float4s a thread than a batch of loads (a shared fixup's pieces,
// 4 float4s; narrow tiles): each batch loads the whole partials of in_flight / count units, so that
// a tile split over many units is not added up one unit per round trip to L2. The sums still go in
// the order of the units.
template <int count, int in_flight, long long slot_stride>
struct SumPartials<count, in_flight, slot_stride, true> {
  __device__ __forceinline__ static void add_up(float (&sum)[4 * count], const Schedule& s, const float4* mine,
                                                long long tile, int v0, int v1) {
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
          for (int i = 0; i < count; ++i) add_float4(sum, part[b][i], i);
        }
    }
  }
};

// ---- The shared fixup (device) ----------------------------------------------------------------------
// Fixup's protocol, and the sharing: a split tile's fixup is cut into `pieces` of piece_float4s
// consecutive float4s of one consumer's partial (pieces / consumers per consumer).
template <class P, int alone_units>
class SharedFixup : public Fixup<P> {
  using Base = Fixup<P>;
  using Base::barrier_;
  using Base::consumer_;
  using Base::t_;

 public:
  using Base::accumulators;
  using Base::consumers;
  using Base::float4s;
  using Base::loads_in_flight;
  using typename Base::FlagWait;
  static constexpr int piece_float4s = P::piece_float4s;
  static constexpr int pieces_per_consumer = float4s / piece_float4s;
  static constexpr int pieces = consumers * pieces_per_consumer;
  static_assert(alone_units >= 1, "alone_units must be at least 1 (1: every split tile shared)");
  static_assert(float4s % piece_float4s == 0, "piece_float4s must divide a consumer's float4s");

  using Base::Base;

  // EXCERPT BEGIN finish_segment
  // After the K loop of a segment: as Fixup, but a split tile of more than alone_units units is not
  // written by the unit holding its slice 0: at a range's end, the unit publishes, then shares the
  // fixup of the tiles it began or ended in (store_piece(sum, the tile's origin_of, half, piece of
  // that consumer)).
  template <class StoreTile, class OriginOf, class StorePiece>
  __device__ __forceinline__ void finish_segment(const Schedule& s, const Segment& segment, float (&acc)[accumulators],
                                                 StoreTile store_tile, OriginOf origin_of, StorePiece store_piece) {
    if (segment.k_begin == 0 && segment.k_end == s.k_tiles) {
      store_tile(acc);
    } else if (segment.k_begin == 0 && fixed_up_alone(s, segment.tile, alone_units)) {
      Base::fix_up_alone(s, segment, acc, store_tile);
    } else {
      Base::leave_partial(s, segment, acc);
    }
    if (s.ends_range(segment.unit, segment.tile, segment.k_end)) {
      Base::publish(s, segment.unit);
      long long first, last;
      tiles_to_share(s, alone_units, segment.unit, first, last);
#pragma unroll 1
      for (int i = 0; i < 2; ++i) {
        const long long tile = i == 0 ? first : last;
        if (tile >= 0) share(s, segment.unit, tile, origin_of, store_piece);
      }
    }
  }
  // EXCERPT END finish_segment

 private:
  // The shared fixup of split tile `tile` by unit u: its contributors are units c0 … c1, in the order
  // of their k-slices; their consumer warpgroups share out its pieces, and each adds up the partials of
  // its pieces, in that order, and writes them (store_piece).
  template <class OriginOf, class StorePiece>
  __device__ __forceinline__ void share(const Schedule& s, int u, long long tile, OriginOf origin_of,
                                        StorePiece store_piece) {
    const int c0 = s.first_unit(tile), c1 = s.last_unit(tile), n = c1 - c0 + 1;
    int first_piece, end_piece;
    share_of(s, u, tile, consumer_, consumers, pieces, first_piece, end_piece);
    if (first_piece == end_piece) return;
    // Every partial of the tile must be there: its flags, waited for by parallel threads.
    // LAB BEGIN wait_for_partials [hard]
    for (int i = t_; i < n * consumers; i += warpgroup_threads) {
      const int v = c0 + i / consumers, slot = s.slot_in(v, tile);
      flag_wait<FlagWait>(Base::flag(s, slot, i % consumers), s.epoch, slot);
    }
    // LAB END
    named_barrier_sync<warpgroup_threads>(Base::barrier_);  // no thread reads a partial before every flag is seen
    // LAB BEGIN share [hard]
    const auto origin = origin_of(tile);  // once per tile: the step's tile order may cost divisions
    for (int piece = first_piece; piece < end_piece; ++piece) {
      const int half = piece / pieces_per_consumer, within = piece % pieces_per_consumer;
      float sum[4 * piece_float4s];
#pragma unroll
      for (int i = 0; i < 4 * piece_float4s; ++i) sum[i] = 0.0f;
      Base::template add_partials<piece_float4s, loads_in_flight>(s, sum, tile, c0, c1, half, within * piece_float4s);
      store_piece(sum, origin, half, within);
    }
    // LAB END
  }
};

// The fixup a configuration names (`using fixup = …`): shared by the units of a split tile when more
// than `units` hold part of it.
template <int units>
struct SharedAbove {
  static constexpr int alone_units = units;
  template <class P>
  using type = SharedFixup<P, units>;
};

}  // namespace worklog::stream_k
