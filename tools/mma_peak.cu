// The mma.sync ceiling of this GPU: how many TFLOP/s mma.sync.m16n8k16 (FP16 in, FP32 accumulate)
// delivers when nothing else is in the way. Built as build/bin/mma_peak (tools/README.md); prints
// one line, "mma.sync peak: X TFLOP/s".
//
// Usage: mma_peak [--help]. It takes no other argument; exit codes as every
// program of the worklog (common/exit_codes.hpp): 0, 4 (no mma.sync on this GPU), 5 (CUDA error),
// 77 (no usable CUDA device, with the reason: no driver, a driver too old, no GPU).
//
// Every warp issues mma after mma on operands that stay in registers: no memory traffic in the
// loop. Each warp keeps `chains` independent accumulators, so that several mma are in flight per
// warp (one accumulator alone would wait out the instruction's latency before each next mma), and
// enough blocks run to give every SM `blocks_per_sm` × 8 warps, all four schedulers busy. What is
// left is the tensor cores' throughput for this instruction. On Hopper that is well below the
// datasheet's FP16 peak, which only wgmma (warpgroup MMA, reading operands from shared memory)
// reaches: that gap is what step 08 cannot close.

#include <cstdio>
#include <cstring>
#include <string>

#include "cuda_check.hpp"
#include "device_select.hpp"  // program_name(), refuse_without_device()
#include "exit_codes.hpp"
#include "harness_timing.hpp"
#include "mma_sync.cuh"

namespace {

constexpr int chains = 8;         // independent accumulators per warp
constexpr int threads = 256;      // 8 warps per block
constexpr int blocks_per_sm = 4;  // 32 warps per SM, 8 per scheduler
constexpr int iterations = 8192;  // mma per chain per launch: a few milliseconds
constexpr double flop_per_mma = 2.0 * 16 * 8 * 16;

__global__ void __launch_bounds__(threads) mma_loop(float* out, int iterations) {
  // Arbitrary, lane-dependent FP16 operands (small, so that nothing overflows), built at run time
  // so that the compiler cannot fold them.
  unsigned a[4], b[2];
  const unsigned lane = threadIdx.x % 32;
#pragma unroll
  for (int r = 0; r < 4; ++r) a[r] = 0x1c001c00u + lane + r;  // halves near 2^-8
#pragma unroll
  for (int r = 0; r < 2; ++r) b[r] = 0x1c001c00u + 2 * lane + r;

  float acc[chains][4] = {};
  for (int it = 0; it < iterations; ++it)
#pragma unroll
    for (int c = 0; c < chains; ++c) worklog::mma_sync::mma_m16n8k16(acc[c], a, b);

  // Every result is used, so no mma can be dropped.
  float sum = 0.0f;
#pragma unroll
  for (int c = 0; c < chains; ++c) sum += acc[c][0] + acc[c][1] + acc[c][2] + acc[c][3];
  out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

}  // namespace

const char usage[] = R"(usage: %s [--help]
Measures the mma.sync ceiling of GPU 0: how many TFLOP/s mma.sync.m16n8k16 (FP16 in, FP32
accumulate) delivers with every operand in registers, and prints it as "mma.sync peak: X TFLOP/s".
Takes no other argument. Needs compute capability 8.0 or newer.
exit codes: 0 ok, 2 bad argument, 4 unsupported GPU, 5 CUDA error, 77 no CUDA device
)";

int main(int argc, char** argv) {
  using namespace worklog;
  const std::string program = program_name(argc, argv, "mma_peak");
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::printf(usage, program.c_str());
      return exit_ok;
    }
    std::fprintf(stderr, "%s: error: unknown argument '%s' (see --help)\n", program.c_str(), argv[i]);
    return exit_bad_argument;
  }
  if (const auto refused = refuse_without_device(program)) return *refused;
  try {
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    if (prop.major * 10 + prop.minor < 80) {
      std::fprintf(stderr, "%s: error: mma.sync.m16n8k16 needs compute capability 8.0 or newer; %s is %d.%d\n",
                   program.c_str(), prop.name, prop.major, prop.minor);
      return exit_unsupported_gpu;
    }
    const int blocks = prop.multiProcessorCount * blocks_per_sm;
    float* out = nullptr;
    CUDA_CHECK(cudaMalloc(&out, sizeof(float) * blocks * threads));
    const double ms = median_ms(
        [&] {
          mma_loop<<<blocks, threads>>>(out, iterations);
          CUDA_CHECK(cudaGetLastError());
        },
        3, 11, TimingMode::warm);  // no operands: the caches do not matter
    CUDA_CHECK(cudaFree(out));
    const double flop = double(blocks) * (threads / 32) * iterations * chains * flop_per_mma;
    std::printf("%s, %d SMs: %d blocks of %d threads, %d independent accumulators per warp, %.3f ms\n", prop.name,
                prop.multiProcessorCount, blocks, threads, chains, ms);
    std::printf("mma.sync peak: %.1f TFLOP/s\n", flop / (ms * 1e-3) / 1e12);
  } catch (const CudaError& e) {
    std::fprintf(stderr, "%s: error: %s\n", program.c_str(), e.what());
    return exit_cuda_error;
  }
  return exit_ok;
}
