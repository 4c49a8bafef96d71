// A route of the Hopper library: the counter by which the last of a tile's parts to finish knows it
// is the last (14's in-place kernel, in_place_rows.cu; 15's pass over A, pass_over_a.cuh), with the
// launch numbers of split_k_schedule.cuh (next_epoch), so that nothing is ever reset.
#pragma once

#include "sm90/split_k_schedule.cuh"

namespace worklog::stream_k {

// Counts one part of a tile in, for a kernel whose last part to finish adds up the others (in_place_rows.cu,
// pass_over_a.cuh); true for the last of this launch. The counter holds the launch's epoch in its
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

}  // namespace worklog::stream_k
