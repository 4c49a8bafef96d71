// The watchdog's mailbox (watchdog.cuh): where a kernel whose wait never ended leaves its one-line
// message before it traps. A trap ends the CUDA context, and with it anything the kernel printed
// with printf that was not flushed yet, so the message goes instead into pinned host memory that
// the GPU writes directly (mapped), which the host can still read after the error. The harness
// prints it on stderr with the step's error (run_step.cpp).
#pragma once

#include <optional>
#include <string>

namespace worklog {

struct WatchdogMailbox {
  int claimed;  // 0 until the first thread whose wait expired claims the mailbox
  int ready;    // 1 once the message below is complete
  char message[400];
};

// The process's mailbox, allocated (pinned, mapped, zeroed) on first use; its device address, for
// arm_watchdog() (watchdog.cuh). Throws CudaError when the allocation fails.
WatchdogMailbox* watchdog_mailbox_device_address();
// The message a kernel left, if any.
std::optional<std::string> watchdog_message();

}  // namespace worklog
