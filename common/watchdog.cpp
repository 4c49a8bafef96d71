#include "watchdog.hpp"

#include <cuda_runtime.h>

#include <cstring>

#include "cuda_check.hpp"

namespace worklog {
namespace {

WatchdogMailbox* host_mailbox = nullptr;

// Frees the mailbox when the program ends (before the CUDA runtime's own clean-up, which was set up
// before the mailbox's first use), so that a leak check sees no pinned memory left behind.
struct MailboxRelease {
  ~MailboxRelease() {
    if (host_mailbox) cudaFreeHost(host_mailbox);  // at exit: nothing to do if it fails
  }
};

}  // namespace

WatchdogMailbox* watchdog_mailbox_device_address() {
  static WatchdogMailbox* device_address = [] {
    void* host = nullptr;
    CUDA_CHECK(cudaHostAlloc(&host, sizeof(WatchdogMailbox), cudaHostAllocMapped));
    std::memset(host, 0, sizeof(WatchdogMailbox));
    host_mailbox = static_cast<WatchdogMailbox*>(host);
    static MailboxRelease release;  // constructed after the runtime's set-up, so destroyed before its clean-up
    void* device = nullptr;
    CUDA_CHECK(cudaHostGetDevicePointer(&device, host, 0));
    return static_cast<WatchdogMailbox*>(device);
  }();
  return device_address;
}

std::optional<std::string> watchdog_message() {
  if (!host_mailbox) return std::nullopt;
  const volatile WatchdogMailbox* box = host_mailbox;  // written by the GPU behind the compiler's back
  if (!box->claimed || !box->ready) return std::nullopt;
  std::string text;
  for (std::size_t i = 0; i < sizeof box->message && box->message[i]; ++i) text += box->message[i];
  return text;
}

}  // namespace worklog
