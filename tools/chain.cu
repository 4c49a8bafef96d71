// A chain of layers, the way a language model decodes: the four GEMMs of a transformer block at
// Llama-3-8B's sizes (q/k/v together, o, gate and up together, down), `layers` blocks back to back,
// each GEMM's output turned into the next one's input by a small kernel standing in for what a model
// runs between them (attention, the residual, SwiGLU, the next block's input), every kernel an RMS
// normalization of its rows so that values neither vanish nor grow over the chain. Built as
// build/bin/chain (tools/README.md: chain).
//
// Each chain is captured once in a CUDA graph and replayed: cuBLAS's GEMMs, step 13's, and step 13's
// by programmatic dependent launch (swap_ab::launch_chained), where a GEMM starts while the kernels
// ahead of it finish, copies its first slices of weights (which no earlier kernel writes) and waits
// only before it reads its activations. The three are timed in alternation in one process
// (harness_timing.hpp), each run behind an L2 flush in cold mode, beside the chain's DRAM floor: the
// bytes its GEMMs must move (weights, activations read once, outputs written once) at the read rate
// the harness measures (measure_dram_read_rate, 4 GiB).
//
// The check: each of step 13's GEMMs, launched one by one, agrees with cuBLAS on its inputs within a
// bound from K; step 13's graphs, with and without programmatic dependent launch, give bit for bit
// the output of those layers launched one by one, and cuBLAS's graph that of its own. (The chains'
// outputs are not compared with each other: over 4·layers GEMMs and normalizations, differences of
// rounding grow to the size of the values.)
//
// The timeline (--timeline FILE): one run of each graph with every kernel's start and end as the GPU
// stamps them (CUPTI, kernel_timestamps.hpp), a row per link of the chain (a GEMM, the kernel after
// it): where a chain's time goes. The weights (GBs) never fit in L2, so each layer's come from DRAM in that run
// too.
//
// Usage: chain [--help] [--m M] [--layers L] [--iters N] [--timing cold|warm] [--check-only]
// [--csv FILE] [--timeline FILE]. Exit codes as every program of the worklog (common/exit_codes.hpp): 0, 1 (the check
// failed), 2 (bad argument), 3 (the weights do not fit), 4 (not compute capability 9.0), 5 (CUDA
// error), 6 (--timeline without CUPTI), 77 (no usable CUDA device).

#include <cublas_v2.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "cublas_reference.hpp"
#include "cuda_check.hpp"
#include "device_buffer.hpp"
#include "device_select.hpp"  // program_name(), refuse_without_device()
#include "exit_codes.hpp"
#include "failure.hpp"
#include "gemm_data.hpp"  // fill_uniform
#include "harness_timing.hpp"
#include "hopper.cuh"
#include "kernel_timestamps.hpp"
#include "kernel_utils.cuh"  // LaunchConfig
#include "sm90/swap_gemm.hpp"
#include "tool_cli.hpp"

namespace {

using namespace worklog;

// ---- The block -------------------------------------------------------------------------------------
// Llama-3-8B: hidden size 4096; 32 query heads and 8 key/value heads of 128 (4096 + 2·1024 = 6144
// columns of q, k and v); 14336 columns of the feed-forward layer, gate and up side by side.
constexpr int hidden = 4096, qkv_columns = 6144, ffn = 14336;

// What turns a GEMM's output (FP32) into the next GEMM's input (FP16): `columns` of each row, or for
// SwiGLU silu(gate)·up of the two halves; then each row divided by its root mean square.
enum class Between { first_columns, swiglu };

struct BlockGemm {
  const char* name;
  int n, k;
  Between then;            // how its output becomes the next GEMM's input...
  int next_k;              // ...of next_k columns
  const char* after_name;  // what the kernel after it stands for (the timeline's link)
};
constexpr BlockGemm block_gemms[4] = {
    {"qkv", qkv_columns, hidden, Between::first_columns, hidden, "attention"},  // q's columns
    {"o", hidden, hidden, Between::first_columns, hidden, "residual"},
    {"gate_up", 2 * ffn, hidden, Between::swiglu, ffn, "swiglu"},
    {"down", hidden, ffn, Between::first_columns, hidden, "next_input"},  // the next block's input
};

// The chain's inputs (common/gemm_data.hpp's generator): stream 0 the first block's input, stream
// 1 + 4·block + g the weights of the block's GEMM g.
constexpr std::uint64_t chain_seed = 12;

// The kernels between GEMMs are part of the chain's time (the timeline shows how much), so they are
// written to take as little as a model's would: one block a row, every thread's loads issued at once
// and its values kept in registers for the one pass that scales them.
constexpr int between_threads = 1024;  // a row's loads all in flight
constexpr int between_vectors = 4;     // float4s of the output row a thread holds: up to 16384 columns
constexpr bool between_fits(const BlockGemm& b) {
  const int next_k = b.next_k, output_columns = b.n;
  return next_k % 4 == 0 && output_columns % 4 == 0 && next_k <= between_threads * between_vectors * 4 &&
         (b.then == Between::swiglu ? 2 * next_k <= output_columns : next_k <= output_columns);
}
static_assert(between_fits(block_gemms[0]) && between_fits(block_gemms[1]) && between_fits(block_gemms[2]) &&
                  between_fits(block_gemms[3]),
              "between_threads, between_vectors: each next input's row in float4s, all in registers");

// The sum of a value over the block, the same in every thread: a fixed tree of shuffles in each warp,
// then one over the warps' sums (the same bits in every run).
__device__ float block_sum(float value) {
  __shared__ float warp_sums[between_threads / 32];
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_xor_sync(0xffffffffu, value, offset);
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = value;
  __syncthreads();
  value = warp_sums[threadIdx.x % 32];
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_xor_sync(0xffffffffu, value, offset);
  return value;
}

// One block per row: out[row][j] = v_j / rms(v), v_j the FP32 value at column j (or silu(gate)·up).
// Chained, the kernel lets the next one start at once and waits for the GEMM before it (programmatic
// dependent launch); otherwise both calls do nothing.
__global__ void __launch_bounds__(between_threads)
    between_kernel(const float* c, int ldc, __half* out, int columns, Between kind, bool chained) {
  static_assert(between_threads == 32 * 32, "block_sum: one warp sums the warps' sums");
  if (chained) {
    hopper::allow_next_grid_to_start();
    hopper::wait_for_previous_grid();
  }
  const float* row = c + (long long)blockIdx.x * ldc;
  float4 gate[between_vectors], up[between_vectors];
#pragma unroll
  for (int i = 0; i < between_vectors; ++i) {  // the loads, all before the first use
    const int j = 4 * (threadIdx.x + i * between_threads);
    const bool inside = j < columns, swiglu = inside && kind == Between::swiglu;
    gate[i] = inside ? *reinterpret_cast<const float4*>(row + j) : make_float4(0, 0, 0, 0);
    up[i] = swiglu ? *reinterpret_cast<const float4*>(row + columns + j) : make_float4(0, 0, 0, 0);
  }
  auto value = [&](float g, float u) { return kind == Between::swiglu ? g / (1.0f + __expf(-g)) * u : g; };
  float squares = 0.0f;
#pragma unroll
  for (int i = 0; i < between_vectors; ++i) {
    float4& v = gate[i];
    v = make_float4(value(v.x, up[i].x), value(v.y, up[i].y), value(v.z, up[i].z), value(v.w, up[i].w));
    squares += v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w;
  }
  const float scale = rsqrtf(block_sum(squares) / float(columns) + 1e-6f);
#pragma unroll
  for (int i = 0; i < between_vectors; ++i) {
    const int j = 4 * (threadIdx.x + i * between_threads);
    if (j >= columns) continue;
    const float4 v = gate[i];
    const __half2 pair[2] = {__floats2half2_rn(v.x * scale, v.y * scale), __floats2half2_rn(v.z * scale, v.w * scale)};
    *reinterpret_cast<uint2*>(out + (long long)blockIdx.x * columns + j) = *reinterpret_cast<const uint2*>(pair);
  }
}

// ---- The chain ---------------------------------------------------------------------------------------

enum class Engine { cublas, step, step_chained };
const char* engine_name(Engine e) {
  return e == Engine::cublas ? "cuBLAS" : e == Engine::step ? "13_swap_ab" : "13_swap_ab/chained";
}

class Chain {
 public:
  Chain(int m, int layers) : m_(m), layers_(layers) {
    for (int l = 0; l < layers; ++l)
      for (int g = 0; g < 4; ++g) {
        const BlockGemm& b = block_gemms[g];
        weights_.emplace_back(std::size_t(b.n) * b.k);
        // Uniform in ±sqrt(3 / K): each output's variance is its input's.
        fill_uniform(weights_.back().data(), (long long)b.n * b.k, chain_seed, 1 + 4 * l + g,
                     std::sqrt(3.0f / float(b.k)));
      }
    for (int g = 0; g < 4; ++g) {
      outputs_.emplace_back(std::size_t(m) * block_gemms[g].n);
      inputs_.emplace_back(std::size_t(m) * block_gemms[g].k);
      if (swap_ab::workspace_bytes({m, block_gemms[g].n, block_gemms[g].k}, {}) != 0)
        throw Failure{exit_check_failed, std::string("13_swap_ab needs a workspace for ") + block_gemms[g].name +
                                             ": a graph replays its launch numbers (schedule.cuh's epochs)"};
    }
    first_input_ = DeviceBuffer<__half>(std::size_t(m) * hidden);
    fill_uniform(first_input_.data(), (long long)m * hidden, chain_seed, 0, 1.0f);
    CUDA_CHECK(cudaDeviceSynchronize());
  }

  // The chain's kernels on `stream`, first the copy of the chain's input into qkv's input buffer (the
  // chain overwrites it with each next block's input).
  // each_gemm, outside a capture: called after every GEMM's launch (the check).
  void enqueue(Engine engine, cublasHandle_t cublas, cudaStream_t stream,
               const std::function<void(const GemmProblem<__half>&)>& each_gemm = {}) {
    CUDA_CHECK(cudaMemcpyAsync(inputs_[0].data(), first_input_.data(), first_input_.size() * sizeof(__half),
                               cudaMemcpyDeviceToDevice, stream));
    const bool chained = engine == Engine::step_chained;
    for (int l = 0; l < layers_; ++l)
      for (int g = 0; g < 4; ++g) {
        const BlockGemm& b = block_gemms[g];
        const GemmProblem<__half> p{
            m_, b.n, b.k, 1.0f, 0.0f, inputs_[g].data(), b.k, weights_[4 * l + g].data(), b.n, outputs_[g].data(), b.n};
        if (engine == Engine::cublas)
          cublas_gemm(cublas, p);
        else if (chained)
          swap_ab::launch_chained(p, stream);
        else
          swap_ab::launch(p, stream);
        if (each_gemm) each_gemm(p);
        launch_between(g, stream, chained);
      }
  }

  // The chain's output: the last block's input to a next one (qkv's input buffer), on the host.
  std::vector<__half> output() const {
    std::vector<__half> host(inputs_[0].size());
    CUDA_CHECK(cudaMemcpy(host.data(), inputs_[0].data(), host.size() * sizeof(__half), cudaMemcpyDeviceToHost));
    return host;
  }

  // The bytes the chain's GEMMs must move: weights and activations read once, outputs written once.
  double least_bytes() const {
    double bytes = 0;
    for (const BlockGemm& b : block_gemms) bytes += 2.0 * b.n * b.k + 2.0 * m_ * b.k + 4.0 * m_ * b.n;
    return bytes * layers_;
  }

 private:
  void launch_between(int g, cudaStream_t stream, bool chained) {
    const BlockGemm& b = block_gemms[g];
    __half* next = inputs_[(g + 1) % 4].data();
    LaunchConfig config(m_, between_threads, 0, stream);
    config.programmatic(chained);
    CUDA_CHECK(cudaLaunchKernelEx(config.get(), between_kernel, static_cast<const float*>(outputs_[g].data()), b.n,
                                  next, b.next_k, b.then, chained));
  }

  int m_, layers_;
  std::vector<DeviceBuffer<__half>> weights_, inputs_;
  std::vector<DeviceBuffer<float>> outputs_;
  DeviceBuffer<__half> first_input_;
};

// A chain captured once in a graph, replayed by run().
class ChainGraph {
 public:
  ChainGraph(Chain& chain, Engine engine, cublasHandle_t cublas) {
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    if (engine == Engine::cublas) CUBLAS_CHECK(cublasSetStream(cublas, stream_));
    CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
    chain.enqueue(engine, cublas, stream_);
    cudaGraph_t graph = nullptr;
    CUDA_CHECK(cudaStreamEndCapture(stream_, &graph));
    CUDA_CHECK(cudaGraphInstantiate(&exec_, graph, 0));
    CUDA_CHECK(cudaGraphDestroy(graph));
    if (engine == Engine::cublas) CUBLAS_CHECK(cublasSetStream(cublas, nullptr));
  }
  ~ChainGraph() {
    cudaGraphExecDestroy(exec_);
    cudaStreamDestroy(stream_);
  }
  ChainGraph(const ChainGraph&) = delete;
  ChainGraph& operator=(const ChainGraph&) = delete;
  // On the default stream, where the harness puts its covers and timestamps.
  void run() const { CUDA_CHECK(cudaGraphLaunch(exec_, nullptr)); }

 private:
  cudaStream_t stream_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

// The largest difference between two results, relative to the largest value of the first (NaN and
// infinities: infinite).
double relative_difference(const std::vector<float>& expected, const std::vector<float>& obtained) {
  double largest = 0, worst = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const double e = expected[i], o = obtained[i];
    if (!std::isfinite(o) || !std::isfinite(e)) return INFINITY;
    largest = std::fmax(largest, std::fabs(e));
    worst = std::fmax(worst, std::fabs(e - o));
  }
  return largest > 0 ? worst / largest : INFINITY;
}

std::vector<float> to_host(const float* data, std::size_t count) {
  std::vector<float> host(count);
  CUDA_CHECK(cudaMemcpy(host.data(), data, count * sizeof(float), cudaMemcpyDeviceToHost));
  return host;
}

bool same_bits(const std::vector<__half>& a, const std::vector<__half>& b) {
  for (std::size_t i = 0; i < a.size(); ++i)
    if (__half_as_ushort(a[i]) != __half_as_ushort(b[i])) return false;
  return true;
}

// --timeline: one run of each graph, a row per link of the chain: a GEMM (its kernels: cuBLAS may run
// two) or the kernel after it, in µs from the run's first kernel, and the time the link adds to the
// chain: from the end of the link before to its own end. A chained link starts before the one ahead
// of it ends; what it adds is what it did not hide. The run before it is untimed, so that no
// first-launch work lands in it.
void write_timeline(std::FILE* file, const char* stamp, const ChainGraph* const graphs[3], int m, const char* gpu) {
  KernelTimestamps* timestamps = KernelTimestamps::get();
  for (int e = 0; e < 3; ++e) {
    graphs[e]->run();
    CUDA_CHECK(cudaDeviceSynchronize());
    if (!timestamps->start()) throw Failure{exit_tool_missing, "--timeline: CUPTI refused to record kernels"};
    graphs[e]->run();
    CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<KernelSpan> spans = timestamps->stop();
    if (spans.empty()) throw Failure{exit_tool_missing, "--timeline: CUPTI recorded no kernel"};
    const std::uint64_t origin = spans.front().start_ns;
    std::uint64_t previous_end = origin, start = 0, end = 0;
    int link = 0, kernels = 0;  // link 2g: the g-th GEMM of a block; 2g + 1: the kernel after it
    auto write_link = [&] {
      const BlockGemm& b = block_gemms[(link / 2) % 4];
      std::fprintf(file, "%s,\"%s\",%d,%s,%d,%s,%d,%.3f,%.3f,%.3f\n", stamp, gpu, m, engine_name(Engine(e)), link / 8,
                   link % 2 == 0 ? b.name : b.after_name, kernels, (start - origin) * 1e-3, (end - origin) * 1e-3,
                   (double(end) - double(previous_end)) * 1e-3);
      previous_end = end, kernels = 0, ++link;
    };
    for (const KernelSpan& k : spans) {  // in start order: a GEMM's kernels, then the kernel after it
      if (k.name.find("between_kernel") == std::string::npos) {
        start = kernels == 0 ? k.start_ns : std::min(start, k.start_ns);
        end = kernels == 0 ? k.end_ns : std::max(end, k.end_ns);
        ++kernels;
        continue;
      }
      if (kernels == 0) throw Failure{exit_check_failed, "--timeline: a kernel between GEMMs follows no GEMM"};
      write_link();  // the GEMM
      start = k.start_ns, end = k.end_ns, kernels = 1;
      write_link();  // the kernel after it
    }
  }
}

const char usage[] =
    R"(usage: %s [--help] [--m M] [--layers L] [--iters N] [--timing cold|warm] [--check-only] [--csv FILE]
       [--timeline FILE]
Runs the GEMMs of L transformer blocks at Llama-3-8B's sizes (default 32), M rows of activations
(default 16, 1 to 128), in a CUDA graph: cuBLAS, step 13, and step 13 by programmatic dependent
launch. Checks each GEMM of step 13 against cuBLAS on the same inputs, and that every graph equals
its layers launched one by one, bit for bit; then (unless --check-only) times the three in alternation, N rounds
(default 10), cold (L2 flushed before every run, the default) or warm, beside the chain's DRAM
floor, and appends a row per chain to FILE with --csv. --timeline FILE: before the timing, one run of
each graph with every kernel's start and end (CUPTI), a row per link (a GEMM, the kernel after it)
appended to FILE.
exit codes: 0 ok, 1 check failed, 2 bad argument, 3 the weights do not fit, 4 not compute capability 9.0,
5 CUDA error, 6 --timeline without CUPTI, 77 no CUDA device
)";

}  // namespace

int main(int argc, char** argv) {
  const std::string program = program_name(argc, argv, "chain");
  int m = 16, layers = 32, iters = 10;
  bool check_only = false;
  TimingMode timing = TimingMode::cold;
  std::string csv_path, timeline_path;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--help" || arg == "-h") {
      std::printf(usage, program.c_str());
      return exit_ok;
    }
    if (arg == "--check-only") {
      check_only = true;
      continue;
    }
    if (has_value && (arg == "--m" || arg == "--layers" || arg == "--iters")) {
      int& target = arg == "--m" ? m : arg == "--layers" ? layers : iters;
      const int high = arg == "--m" ? swap_ab::max_m : arg == "--layers" ? 64 : 1000;
      if (const auto code = tool::parse_whole(program, arg, argv[++i], 1, high, target)) return *code;
      continue;
    }
    if (has_value && arg == "--timing") {
      const std::string mode = argv[++i];
      if (mode != "cold" && mode != "warm") {
        std::fprintf(stderr, "%s: error: --timing takes cold or warm, got '%s'\n", program.c_str(), mode.c_str());
        return exit_bad_argument;
      }
      timing = mode == "cold" ? TimingMode::cold : TimingMode::warm;
      continue;
    }
    if (has_value && (arg == "--csv" || arg == "--timeline")) {
      (arg == "--csv" ? csv_path : timeline_path) = argv[++i];
      continue;
    }
    const bool takes_value = arg == "--m" || arg == "--layers" || arg == "--iters" || arg == "--timing" ||
                             arg == "--csv" || arg == "--timeline";
    return tool::unknown_argument(program, argv[i], takes_value && !has_value);
  }
  if (const auto refused = refuse_without_device(program)) return *refused;
  return tool::run_reporting_errors(program, [&]() -> int {
    cudaDeviceProp prop{};
    if (const auto refused = tool::refuse_unless_hopper(program, "step 13", prop)) return *refused;
    CublasHandle cublas;
    DeviceBuffer<unsigned char> cublas_workspace(std::size_t(32) << 20);  // cuBLAS in a graph: no allocation inside
    CUBLAS_CHECK(cublasSetWorkspace(cublas.get(), cublas_workspace.data(), cublas_workspace.size()));
    Chain chain(m, layers);

    // The check. Step 13's layers one by one first, each GEMM checked against cuBLAS on the same
    // inputs: FP32 sums of FP16 products in another order differ by a few units of FP32 rounding per
    // term, far inside K·2⁻²² of the largest value (normalized inputs: values near 1); a wrong
    // element is of the order of the values. Running them also does every launch's one-time work
    // (module loading, attributes) outside the captures. Then cuBLAS's one by one, for its graph.
    DeviceBuffer<float> expected(std::size_t(m) * 2 * ffn);
    // Zeros first: compute-sanitizer's initcheck does not see cuBLAS's kernels write it (nor their split-K
    // partials), and would report its copy to the host.
    CUDA_CHECK(cudaMemset(expected.data(), 0, expected.size() * sizeof(float)));
    double worst = 0;
    int worst_gemm = -1, gemm = 0;
    chain.enqueue(Engine::step, cublas.get(), nullptr, [&](const GemmProblem<__half>& p) {
      GemmProblem<__half> reference = p;
      reference.c = expected.data();
      cublas_gemm(cublas.get(), reference);
      const std::size_t count = std::size_t(p.m) * p.n;
      const double difference =
          relative_difference(to_host(expected.data(), count), to_host(p.c, count)) / (p.k * std::ldexp(1.0, -22));
      if (!(difference <= worst)) worst = difference, worst_gemm = gemm;
      ++gemm;
    });
    CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<__half> one_by_one = chain.output();
    chain.enqueue(Engine::cublas, cublas.get(), nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<__half> cublas_one_by_one = chain.output();
    ChainGraph cublas_graph(chain, Engine::cublas, cublas.get()), step_graph(chain, Engine::step, cublas.get()),
        chained_graph(chain, Engine::step_chained, cublas.get());
    const ChainGraph* graphs[3] = {&cublas_graph, &step_graph, &chained_graph};
    std::vector<__half> outputs[3];
    for (int e = 0; e < 3; ++e) {
      graphs[e]->run();
      CUDA_CHECK(cudaDeviceSynchronize());
      outputs[e] = chain.output();
    }
    const bool step_same = same_bits(one_by_one, outputs[1]), chained_same = same_bits(one_by_one, outputs[2]),
               cublas_same = same_bits(cublas_one_by_one, outputs[0]);
    std::printf(
        "%s, M = %d, %d blocks (%d GEMMs): each GEMM of step 13 within %.3f of its bound from cuBLAS (the "
        "worst: GEMM %d); step 13 one by one vs its graph %s, vs its chained graph %s; cuBLAS one by one vs "
        "its graph %s\n",
        prop.name, m, layers, 4 * layers, worst, worst_gemm, step_same ? "bit for bit" : "DIFFERENT",
        chained_same ? "bit for bit" : "DIFFERENT", cublas_same ? "bit for bit" : "DIFFERENT");
    if (!step_same || !chained_same || !cublas_same || !(worst <= 1.0)) {
      std::fprintf(stderr, "%s: error: the chains disagree (see above)\n", program.c_str());
      return exit_check_failed;
    }
    if (check_only) return exit_ok;
    char stamp[32];  // the time of the rows this process writes
    const std::time_t now = std::time(nullptr);
    std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    if (!timeline_path.empty()) {
      if (!KernelTimestamps::get()) {
        std::fprintf(stderr, "%s: error: --timeline needs CUPTI (libcupti), which cannot be loaded here\n",
                     program.c_str());
        return exit_tool_missing;
      }
      const bool fresh = !std::ifstream(timeline_path).good();
      std::FILE* file = std::fopen(timeline_path.c_str(), "a");
      if (!file) {
        std::fprintf(stderr, "%s: error: cannot write %s\n", program.c_str(), timeline_path.c_str());
        return exit_bad_argument;
      }
      if (fresh) std::fprintf(file, "timestamp,gpu,m,engine,block,link,kernels,start_us,end_us,adds_us\n");
      write_timeline(file, stamp, graphs, m, prop.name);
      std::fclose(file);
    }

    // The timing: the three graphs in alternation, each behind its cover (harness_timing.hpp).
    const double read_rate = measure_dram_read_rate(dram_read_bytes, 5);
    const Timings t = time_interleaved(
        {[&] { cublas_graph.run(); }, [&] { step_graph.run(); }, [&] { chained_graph.run(); }}, 2, iters, timing);
    const double floor_ms = chain.least_bytes() / read_rate * 1e3;
    std::printf("timing %s, timer %s, SM clock %.0f -> %.0f MHz%s; DRAM read %.2f TB/s, floor %.3f ms (%.1f GB)\n",
                timing_mode_name(timing), timer_name(t.timer), t.sm_mhz_before, t.sm_mhz_after,
                t.clock_fell() ? " (fell)" : "", read_rate / 1e12, floor_ms, chain.least_bytes() / 1e9);
    std::FILE* csv = nullptr;
    if (!csv_path.empty()) {
      const bool fresh = !std::ifstream(csv_path).good();
      csv = std::fopen(csv_path.c_str(), "a");
      if (!csv) {
        std::fprintf(stderr, "%s: error: cannot write %s\n", program.c_str(), csv_path.c_str());
        return exit_bad_argument;
      }
      if (fresh)
        std::fprintf(csv,
                     "timestamp,gpu,m,layers,engine,ms,floor_ms,floor_fraction,speedup_over_cublas,timing,timer,"
                     "sm_mhz_before,sm_mhz_after,clock_fell,dram_read_gbps\n");
    }
    for (int e = 0; e < 3; ++e) {
      const double ms = t.ms[e];
      std::printf("%-20s %8.3f ms  %5.1f%% of the floor's speed  %.2fx cuBLAS\n", engine_name(Engine(e)), ms,
                  100.0 * floor_ms / ms, t.ms[0] / ms);
      if (csv)
        std::fprintf(csv, "%s,\"%s\",%d,%d,%s,%.6g,%.6g,%.4f,%.4f,%s,%s,%.0f,%.0f,%d,%.1f\n", stamp, prop.name, m,
                     layers, engine_name(Engine(e)), ms, floor_ms, floor_ms / ms, t.ms[0] / ms,
                     timing_mode_name(timing), timer_name(t.timer), t.sm_mhz_before, t.sm_mhz_after,
                     t.clock_fell() ? 1 : 0, read_rate / 1e9);
    }
    if (csv) std::fclose(csv);
    return exit_ok;
  });
}
