// Bounded waits, so that no kernel of the worklog can hang. A wait on an mbarrier ends when the
// phase completes; a mistake in the barrier protocol (a copy never issued, bytes never announced, a
// stage released on the wrong barrier, a wrong phase) would make it wait forever, and a test with
// it. Here every wait gives up after `watchdog_ns` of the GPU's global timer, far beyond any
// legitimate wait (a stage takes microseconds): one thread prints one line that names the step,
// the barrier, the stage, the phase and what usually causes it, then traps. The launch then fails
// with a CUDA error, and the step exits with exit_cuda_error (5).
//
// The watchdog costs nothing on the way through: the timer is read only once a first try_wait has
// found the phase incomplete, and the reporting code is out of line.
#pragma once

#include <cstdint>
#include <cstdio>

#include "hopper.cuh"  // mbarrier_try_wait, global_timer_ns

namespace worklog {

// A wait that legitimately takes longer than this does not exist in the worklog.
inline constexpr std::uint64_t watchdog_ns = 1'000'000'000;  // 1 s

// What a wait is for, said when it never ends.
struct WaitSite {
  const char* step;     // "09_wgmma_tma"
  const char* waiter;   // "consumer" or "producer" (the kernel's role that waits)
  const char* barrier;  // "full" or "empty"
  const char* hint;     // what usually causes this wait never to end
};

// One report per launch: the first thread whose wait expires prints, every one of them traps.
static __device__ int watchdog_reported = 0;

static __device__ __noinline__ void watchdog_expired(const WaitSite& site, int stage, std::uint32_t parity) {
  if (atomicExch(&watchdog_reported, 1) == 0)
    printf("%s: watchdog: a %s thread (block %d, thread %d) waited over %llu ms on %s[%d] for its phase of parity %u: "
           "%s\n",
           site.step, site.waiter, int(blockIdx.x), int(threadIdx.x),
           (unsigned long long)(watchdog_ns / 1000000), site.barrier, stage, parity, site.hint);
  __trap();
}

// Waits until the phase of parity `parity` of stage `stage`'s barrier has completed, or reports
// and traps after watchdog_ns.
__device__ __forceinline__ void mbarrier_wait(std::uint64_t* barrier, std::uint32_t parity, int stage,
                                              const WaitSite& site) {
  if (hopper::mbarrier_try_wait(barrier, parity)) return;
  const std::uint64_t start = hopper::global_timer_ns();
  while (!hopper::mbarrier_try_wait(barrier, parity))
    if (hopper::global_timer_ns() - start > watchdog_ns) watchdog_expired(site, stage, parity);
}

}  // namespace worklog
