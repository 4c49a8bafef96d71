// Bounded waits, so that no kernel of the worklog can hang. A wait on an mbarrier ends when the
// phase completes; a mistake in the barrier protocol (a copy never issued, bytes never announced, a
// stage released on the wrong barrier, a wrong phase) would make it wait forever, and a test with
// it. Here every wait gives up after watchdog_cycles (about a second at the clock the GPU runs
// kernels at, far beyond any legitimate wait: a stage takes microseconds). The first thread to give
// up writes one line into the watchdog's mailbox (watchdog.hpp) naming the step, the waiting role,
// the barrier, the stage, the phase and what usually causes it, then every waiting thread traps.
// The launch fails with a CUDA error, the harness prints the line on stderr, and the step exits
// with exit_cuda_error (5).
//
// On the way through the watchdog costs next to nothing: the cycle counter is read only once a
// first try_wait has found the phase incomplete, and the reporting code is out of line.
//
// A step names each of its waits with a type (a "site") whose static constexpr member `site` says
// what the wait is for, and calls arm_watchdog() before its first launch.
#pragma once

#include <cstdint>

#include "cuda_check.hpp"
#include "hopper.cuh"  // mbarrier_try_wait
#include "watchdog.hpp"

namespace worklog {

// A wait that legitimately takes longer than this does not exist in the worklog.
inline constexpr long long watchdog_cycles = 2'000'000'000;  // about 1 s at 2 GHz

// What a wait is for, said when it never ends.
struct WaitSite {
  const char* step;     // "09_wgmma_tma"
  const char* waiter;   // "consumer" or "producer" (the kernel's role that waits)
  const char* barrier;  // "full" or "empty"
  const char* hint;     // what usually causes this wait never to end
};

// This file's copy of the mailbox's device address (each kernel file has its own: arm_watchdog()).
static __device__ WatchdogMailbox* watchdog_mailbox = nullptr;

// Host: points this file's kernels at the process's mailbox, once.
[[maybe_unused]] static void arm_watchdog() {
  static const bool armed = [] {
    WatchdogMailbox* address = watchdog_mailbox_device_address();
    CUDA_CHECK(cudaMemcpyToSymbol(watchdog_mailbox, &address, sizeof address));
    return true;
  }();
  (void)armed;
}

// Appends `text`, or the decimal digits of `value`, to the mailbox's message at `*length`.
__device__ __forceinline__ void watchdog_append(WatchdogMailbox* box, int* length, const char* text) {
  while (*text && *length < int(sizeof box->message) - 1) box->message[(*length)++] = *text++;
}
__device__ __forceinline__ void watchdog_append(WatchdogMailbox* box, int* length, long long value) {
  char digits[20];
  int count = 0;
  const bool negative = value < 0;
  unsigned long long magnitude = negative ? 0ull - (unsigned long long)value : (unsigned long long)value;
  do {
    digits[count++] = char('0' + magnitude % 10);
    magnitude /= 10;
  } while (magnitude);
  if (negative) watchdog_append(box, length, "-");
  while (count && *length < int(sizeof box->message) - 1) box->message[(*length)++] = digits[--count];
}

template <class Site>
__device__ __noinline__ void watchdog_expired(int stage, std::uint32_t parity) {
  WatchdogMailbox* box = watchdog_mailbox;
  if (box && atomicExch_system(&box->claimed, 1) == 0) {
    constexpr WaitSite site = Site::site;
    int length = 0;
    watchdog_append(box, &length, site.step);
    watchdog_append(box, &length, ": watchdog: a ");
    watchdog_append(box, &length, site.waiter);
    watchdog_append(box, &length, " thread (block ");
    watchdog_append(box, &length, (long long)blockIdx.x);
    watchdog_append(box, &length, ", thread ");
    watchdog_append(box, &length, (long long)threadIdx.x);
    watchdog_append(box, &length, ") waited over ");
    watchdog_append(box, &length, watchdog_cycles);
    watchdog_append(box, &length, " cycles on ");
    watchdog_append(box, &length, site.barrier);
    watchdog_append(box, &length, "[");
    watchdog_append(box, &length, (long long)stage);
    watchdog_append(box, &length, "] for its phase of parity ");
    watchdog_append(box, &length, (long long)parity);
    watchdog_append(box, &length, ": ");
    watchdog_append(box, &length, site.hint);
    box->message[length] = '\0';
    __threadfence_system();
    atomicExch_system(&box->ready, 1);
  } else if (box) {
    // Another thread reports: trapping now could end the kernel before its message is written.
    const long long start = clock64();
    while (atomicAdd_system(&box->ready, 0) == 0 && clock64() - start < watchdog_cycles) {
    }
  }
  __trap();
}

// Waits until the phase of parity `parity` of stage `stage`'s barrier has completed, or reports
// (as Site) and traps after watchdog_cycles.
template <class Site>
__device__ __forceinline__ void mbarrier_wait(std::uint64_t* barrier, std::uint32_t parity, int stage) {
  if (hopper::mbarrier_try_wait(barrier, parity)) return;
  const long long start = clock64();
  while (!hopper::mbarrier_try_wait(barrier, parity))
    if (clock64() - start > watchdog_cycles) watchdog_expired<Site>(stage, parity);
}

}  // namespace worklog
