// The DRAM bandwidth of this GPU, measured by a copy and by a read: the floor under the
// memory-bound shapes. Built as build/bin/dram_copy (tools/README.md); prints "DRAM copy: X TB/s (read +
// write)" and "DRAM read: Y TB/s", then, for each shape given, the time it takes to move the bytes a
// GEMM must move at the read rate.
//
// Usage: dram_copy [--help] [--mib N] [--shape MxNxK]... Exit codes as every program of
// the worklog (common/exit_codes.hpp): 0, 2 (bad argument), 3 (4 GiB do not fit), 5 (CUDA error),
// 77 (no usable CUDA device).
//
// A GEMM with few rows of A must read B (N × K FP16) once, A (M × K) once and write C (M × N FP32):
// nothing can take less time than those bytes at the DRAM's bandwidth. The copy kernel reads and
// writes a buffer far larger than L2 (256 MiB by default, L2 is 50 MiB on an H100) in 16-byte
// accesses, every SM busy, several loads in flight per thread. The read is the harness's
// (harness_timing.hpp: measure_dram_read_rate, what every step's --dram-fraction divides by): 4 GiB
// only read, on its own, so that no copy's writes drain from L2 during it. A GEMM's traffic is
// mostly reads, so its floor uses the read rate; the copy rate is printed beside it, as
// cudaMemcpy-style benchmarks report.

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cuda_check.hpp"
#include "device_select.hpp"  // program_name(), refuse_without_device()
#include "exit_codes.hpp"
#include "failure.hpp"
#include "harness_timing.hpp"
#include "tool_cli.hpp"

namespace {

constexpr int threads = 512;        // per block
constexpr int loads_in_flight = 4;  // 16-byte loads per thread before the first use
constexpr int blocks_per_sm = 4;    // 2048 threads per SM: the most an SM holds

// dst = src, float4 by float4, grid-strided: each thread has loads_in_flight loads out at once.
__global__ void __launch_bounds__(threads)
    copy_kernel(const float4* __restrict__ src, float4* __restrict__ dst, long long count) {
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count; i += loads_in_flight * stride) {
    float4 v[loads_in_flight];
#pragma unroll
    for (int j = 0; j < loads_in_flight; ++j)
      if (i + j * stride < count) v[j] = __ldcs(src + i + j * stride);
#pragma unroll
    for (int j = 0; j < loads_in_flight; ++j)
      if (i + j * stride < count) __stcs(dst + i + j * stride, v[j]);
  }
}

struct GemmShape {
  long long m, n, k;
};

}  // namespace

const char usage[] = R"(usage: %s [--help] [--mib N] [--shape MxNxK]...
Measures the DRAM bandwidth of GPU 0 with a copy (read + write) of N MiB (default 256, far more
than L2) and a read of 4 GiB, and prints, for each --shape, the least time an FP16 GEMM of that
shape can take at the read rate: A (M×K) and B (K×N) read once, C (M×N, FP32) written once (beta = 0).
exit codes: 0 ok, 2 bad argument, 3 the 4 GiB read does not fit, 5 CUDA error, 77 no CUDA device
)";

int main(int argc, char** argv) {
  using namespace worklog;
  const std::string program = program_name(argc, argv, "dram_copy");
  long long mib = 256;
  std::vector<GemmShape> shapes;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::printf(usage, program.c_str());
      return exit_ok;
    }
    const bool has_value = i + 1 < argc;
    if (arg == "--mib" && has_value) {
      if (const auto code = tool::parse_whole(program, arg, argv[++i], 1, 1 << 16, mib)) return *code;
      continue;
    }
    if (arg == "--shape" && has_value) {
      GemmShape s{};
      if (const auto code = tool::parse_shape(program, arg, argv[++i], s.m, s.n, s.k)) return *code;
      shapes.push_back(s);
      continue;
    }
    return tool::unknown_argument(program, argv[i], !has_value && (arg == "--mib" || arg == "--shape"));
  }
  if (const auto refused = refuse_without_device(program)) return *refused;
  return tool::run_reporting_errors(program, [&]() -> int {
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    const long long bytes = mib << 20, count = bytes / 16;
    const int blocks = prop.multiProcessorCount * blocks_per_sm;
    float4 *src = nullptr, *dst = nullptr;
    CUDA_CHECK(cudaMalloc(&src, bytes));
    CUDA_CHECK(cudaMalloc(&dst, bytes));
    CUDA_CHECK(cudaMemset(src, 0, bytes));
    const double copy_ms = median_ms(
        [&] {
          copy_kernel<<<blocks, threads>>>(src, dst, count);
          CUDA_CHECK(cudaGetLastError());
        },
        3, 21, TimingMode::warm);  // buffers far larger than L2 (by default): no run finds them there
    CUDA_CHECK(cudaFree(src));
    CUDA_CHECK(cudaFree(dst));
    const double read_rate = measure_dram_read_rate(dram_read_bytes, 21);
    const double copy_rate = 2.0 * double(bytes) / (copy_ms * 1e-3);
    std::printf("%s, %d SMs: copy of %lld MiB %.3f ms, read of %zu MiB %.3f ms\n", prop.name, prop.multiProcessorCount,
                mib, copy_ms, dram_read_bytes >> 20, double(dram_read_bytes) / read_rate * 1e3);
    std::printf("DRAM copy: %.2f TB/s (read + write)\n", copy_rate / 1e12);
    std::printf("DRAM read: %.2f TB/s\n", read_rate / 1e12);
    for (const GemmShape& s : shapes) {
      const double moved = 2.0 * (s.m * s.k + s.k * s.n) + 4.0 * s.m * s.n;
      std::printf("floor %lldx%lldx%lld: %.2f us (%.1f MB at the read rate)\n", s.m, s.n, s.k, moved / read_rate * 1e6,
                  moved / 1e6);
    }
    return exit_ok;
  });
}
