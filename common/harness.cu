#include "harness.hpp"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>
#include <optional>
#include <sstream>

#include "kernel_utils.cuh"
#include "profile_run.hpp"

namespace worklog {

// ---- Device buffers and cuBLAS ------------------------------------------------------------------

template <class T>
DeviceBuffer<T>::DeviceBuffer(std::size_t count) : count_(count) {
  const cudaError_t status = cudaMalloc(&data_, count * sizeof(T));
  if (status == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();  // clear it: the process goes on to report and exit cleanly
    throw Failure{exit_does_not_fit, "cudaMalloc of " + std::to_string(count * sizeof(T)) + " bytes failed: out of device memory"};
  }
  CUDA_CHECK(status);
}

template <class T>
DeviceBuffer<T>& DeviceBuffer<T>::operator=(DeviceBuffer&& other) noexcept {
  std::swap(data_, other.data_);
  std::swap(count_, other.count_);
  return *this;
}

template <class T>
DeviceBuffer<T>::~DeviceBuffer() {
  if (data_) cudaFree(data_);  // no check: a destructor must not throw, and exit follows anyway
}

CublasHandle::CublasHandle() {
  CUBLAS_CHECK(cublasCreate(&handle_));
  // FP32 stays FP32: no TF32 tensor-core shortcut in the reference.
  CUBLAS_CHECK(cublasSetMathMode(handle_, CUBLAS_DEFAULT_MATH));
}
CublasHandle::~CublasHandle() { cublasDestroy(handle_); }

template <class Input> constexpr cudaDataType_t cuda_type();
template <> constexpr cudaDataType_t cuda_type<float>() { return CUDA_R_32F; }
template <> constexpr cudaDataType_t cuda_type<__half>() { return CUDA_R_16F; }

template <class Input>
void cublas_gemm(cublasHandle_t handle, const GemmProblem<Input>& p) {
  // cuBLAS is column-major. A row-major M×N matrix is the column-major N×M matrix of its
  // transpose, so C = A·B row-major is Cᵀ = Bᵀ·Aᵀ column-major: swap the operands and M with N.
  CUBLAS_CHECK(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, p.n, p.m, p.k, &p.alpha, p.b, cuda_type<Input>(), p.n,
                            p.a, cuda_type<Input>(), p.k, &p.beta, p.c, CUDA_R_32F, p.n, CUBLAS_COMPUTE_32F,
                            CUBLAS_GEMM_DEFAULT));
}

// ---- Inputs -------------------------------------------------------------------------------------

namespace {

constexpr int fill_threads = 256;
constexpr int fill_blocks = 1024;  // grid-stride loops: any size with a fixed grid

// Counter-based random numbers (splitmix64 of seed, stream and index): the same seed gives the
// same matrices whatever the launch configuration, and A, B and C are independent streams.
__device__ float uniform_pm1(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) {
  std::uint64_t z = seed + stream * 0x9E3779B97F4A7C15ull + index * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return float(z >> 40) * (2.0f / 16777216.0f) - 1.0f;  // 24 random bits -> [-1, 1)
}

template <class T>
__global__ void fill_uniform(T* x, std::size_t count, std::uint64_t seed, std::uint64_t stream) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count; i += std::size_t(gridDim.x) * blockDim.x)
    x[i] = T(uniform_pm1(seed, stream, i));
}

__global__ void fill_nan(float* x, std::size_t count) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count; i += std::size_t(gridDim.x) * blockDim.x)
    x[i] = __int_as_float(0x7fc00000);
}

template <class T>
__global__ void absolute_values(T* dst, const T* src, std::size_t count) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count; i += std::size_t(gridDim.x) * blockDim.x)
    dst[i] = src[i] < T(0.0f) ? T(-float(src[i])) : src[i];
}

// ---- The check ----------------------------------------------------------------------------------

struct CheckCounters {
  unsigned long long bad_count;
  unsigned long long first_bad;    // smallest failing linear index
  unsigned int max_abs_err_bits;   // non-negative floats order like their bit patterns
  unsigned int err_over_tol_bits;
};

__global__ void compare(const float* c, const float* reference, const float* bound, const float* c_initial,
                        std::size_t count, float alpha, float beta, double scale, CheckCounters* out) {
  float max_err = 0.0f, max_ratio = 0.0f;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count; i += std::size_t(gridDim.x) * blockDim.x) {
    const double tolerance = element_tolerance(scale, alpha, beta, bound[i], c_initial[i]);
    const bool ok = within_tolerance(c[i], reference[i], tolerance);
    const float err = isfinite(c[i]) ? fabsf(c[i] - reference[i]) : INFINITY;
    max_err = fmaxf(max_err, err);
    max_ratio = fmaxf(max_ratio, tolerance > 0 ? float(err / tolerance) : (err == 0.0f ? 0.0f : INFINITY));
    if (!ok) {
      atomicAdd(&out->bad_count, 1ull);
      atomicMin(&out->first_bad, (unsigned long long)i);
    }
  }
  atomicMax(&out->max_abs_err_bits, __float_as_uint(max_err));
  atomicMax(&out->err_over_tol_bits, __float_as_uint(max_ratio));
}

template <class T>
std::vector<float> to_host(const DeviceBuffer<T>& buffer) {
  std::vector<T> raw(buffer.size());
  CUDA_CHECK(cudaMemcpy(raw.data(), buffer.data(), raw.size() * sizeof(T), cudaMemcpyDeviceToHost));
  return std::vector<float>(raw.begin(), raw.end());
}

float element_at(const float* device_array, std::size_t index) {
  float value = 0;
  CUDA_CHECK(cudaMemcpy(&value, device_array + index, sizeof(float), cudaMemcpyDeviceToHost));
  return value;
}

}  // namespace

template <class Input>
GemmData<Input>::GemmData(Shape shape, std::uint64_t seed, InitialC initial_c, bool with_reference)
    : shape_(shape),
      a_(std::size_t(shape.m) * shape.k),
      b_(std::size_t(shape.k) * shape.n),
      c_initial_(std::size_t(shape.m) * shape.n),
      c_(std::size_t(shape.m) * shape.n) {
  if (with_reference) {
    c_reference_ = DeviceBuffer<float>(c_.size());
    bound_ = DeviceBuffer<float>(c_.size());
  }
  fill_uniform<<<fill_blocks, fill_threads>>>(a_.data(), a_.size(), seed, 1);
  WORKLOG_CHECK_LAUNCH();
  fill_uniform<<<fill_blocks, fill_threads>>>(b_.data(), b_.size(), seed, 2);
  WORKLOG_CHECK_LAUNCH();
  if (initial_c == InitialC::nan)
    fill_nan<<<fill_blocks, fill_threads>>>(c_initial_.data(), c_initial_.size());
  else
    fill_uniform<<<fill_blocks, fill_threads>>>(c_initial_.data(), c_initial_.size(), seed, 3);
  WORKLOG_CHECK_LAUNCH();
  reset_output();
}

template <class Input>
GemmProblem<Input> GemmData<Input>::problem(float alpha, float beta) const {
  return {shape_.m, shape_.n, shape_.k, alpha, beta, a_.data(), b_.data(), c_.data()};
}

template <class Input>
GemmProblem<Input> GemmData<Input>::reference_problem(float alpha, float beta) const {
  return {shape_.m, shape_.n, shape_.k, alpha, beta, a_.data(), b_.data(), c_reference_.data()};
}

template <class Input>
void GemmData<Input>::reset_output() {
  CUDA_CHECK(cudaMemcpy(c_.data(), c_initial_.data(), c_.size() * sizeof(float), cudaMemcpyDeviceToDevice));
}

template <class Input>
void GemmData<Input>::compute_reference(cublasHandle_t handle, float alpha, float beta) {
  CUDA_CHECK(cudaMemcpy(c_reference_.data(), c_initial_.data(), c_.size() * sizeof(float), cudaMemcpyDeviceToDevice));
  cublas_gemm(handle, reference_problem(alpha, beta));
  // The bound matrix |A|·|B|, from absolute copies that live only while it is computed.
  DeviceBuffer<Input> abs_a(a_.size()), abs_b(b_.size());
  absolute_values<<<fill_blocks, fill_threads>>>(abs_a.data(), a_.data(), a_.size());
  WORKLOG_CHECK_LAUNCH();
  absolute_values<<<fill_blocks, fill_threads>>>(abs_b.data(), b_.data(), b_.size());
  WORKLOG_CHECK_LAUNCH();
  cublas_gemm(handle, GemmProblem<Input>{shape_.m, shape_.n, shape_.k, 1.0f, 0.0f, abs_a.data(), abs_b.data(), bound_.data()});
  CUDA_CHECK(cudaDeviceSynchronize());
}

template <class Input>
CheckResult GemmData<Input>::check(float alpha, float beta) const {
  DeviceBuffer<CheckCounters> counters(1);
  const CheckCounters start{0, ~0ull, 0, 0};
  CUDA_CHECK(cudaMemcpy(counters.data(), &start, sizeof start, cudaMemcpyHostToDevice));
  const double scale = comparison_scale(shape_.k, accumulation_unit_roundoff<Input>());
  compare<<<fill_blocks, fill_threads>>>(c_.data(), c_reference_.data(), bound_.data(), c_initial_.data(), c_.size(),
                                         alpha, beta, scale, counters.data());
  WORKLOG_CHECK_LAUNCH();
  CheckCounters got{};
  CUDA_CHECK(cudaMemcpy(&got, counters.data(), sizeof got, cudaMemcpyDeviceToHost));

  CheckResult r;
  r.pass = got.bad_count == 0;
  r.bad_count = got.bad_count;
  float max_err = 0, ratio = 0;
  std::memcpy(&max_err, &got.max_abs_err_bits, sizeof max_err);
  std::memcpy(&ratio, &got.err_over_tol_bits, sizeof ratio);
  r.max_abs_err = max_err;
  r.err_over_tol = ratio;
  if (!r.pass) {
    r.first_bad_row = (long long)(got.first_bad / shape_.n);
    r.first_bad_col = (long long)(got.first_bad % shape_.n);
    r.expected = element_at(c_reference_.data(), got.first_bad);
    r.obtained = element_at(c_.data(), got.first_bad);
  }
  return r;
}

template <class Input>
std::vector<float> GemmData<Input>::host_a() const { return to_host(a_); }
template <class Input>
std::vector<float> GemmData<Input>::host_b() const { return to_host(b_); }
template <class Input>
std::vector<float> GemmData<Input>::host_initial_c() const { return to_host(c_initial_); }
template <class Input>
std::vector<float> GemmData<Input>::host_output() const { return to_host(c_); }

// ---- Device selection and memory ----------------------------------------------------------------

cudaDeviceProp select_device(int index) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0)
    throw Failure{exit_no_device, std::string("no CUDA device found (") +
                                      (status != cudaSuccess ? cudaGetErrorString(status) : "0 devices") + ")"};
  if (index >= count)
    throw Failure{exit_bad_argument, "--device " + std::to_string(index) + " does not exist: " + std::to_string(count) +
                                         " CUDA device(s), numbered from 0"};
  CUDA_CHECK(cudaSetDevice(index));
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, index));
  return prop;
}

void require_device_memory(Shape shape, int input_bytes, bool check) {
  // Headroom for cuBLAS's workspace and the context's own allocations.
  constexpr std::uint64_t headroom = 256ull << 20;
  std::size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const auto needed = device_bytes_needed(shape, input_bytes, check);
  const std::string size = std::to_string(shape.m) + "x" + std::to_string(shape.n) + "x" + std::to_string(shape.k);
  if (!needed || *needed > free_bytes || free_bytes - *needed < headroom)
    throw Failure{exit_does_not_fit, size + " needs " + (needed ? std::to_string(*needed) : std::string("over 2^64")) +
                                         " bytes of device memory (+256 MiB headroom), " + std::to_string(free_bytes) +
                                         " bytes are free"};
}

// ---- Reporting ----------------------------------------------------------------------------------

namespace {

std::string version_text(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

struct RunInfo {
  std::string gpu, compute_capability, runtime, driver, timestamp;
  int sm_count = 0;
};

RunInfo describe(const cudaDeviceProp& prop) {
  RunInfo info;
  info.gpu = prop.name;
  info.sm_count = prop.multiProcessorCount;
  info.compute_capability = std::to_string(prop.major) + "." + std::to_string(prop.minor);
  int runtime = 0, driver = 0;
  CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  CUDA_CHECK(cudaDriverGetVersion(&driver));
  info.runtime = version_text(runtime);
  info.driver = version_text(driver);
  char stamp[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  info.timestamp = stamp;
  return info;
}

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return out + "\"";
}

struct Result {
  double ms, cublas_ms, global_bytes;
  CheckResult check;
  bool checked;
};

std::string status_text(const Result& r) { return !r.checked ? "UNCHECKED" : r.check.pass ? "PASS" : "FAIL"; }

void append_csv(std::FILE* csv, const RunInfo& info, const char* step, const char* adds, const char* precision,
                const Options& o, const Result& r) {
  std::fseek(csv, 0, SEEK_END);
  if (std::ftell(csv) == 0)
    std::fputs("timestamp,gpu,sm_count,compute_capability,cuda_runtime,cuda_driver,step,adds,precision,m,n,k,alpha,beta,"
               "ms,tflops,cublas_ms,cublas_tflops,pct_cublas,max_abs_err,err_over_tol,global_bytes,status\n",
               csv);
  const double flops = gemm_flops(o.shape);
  std::ostringstream row;
  row.precision(6);
  row << info.timestamp << ',' << quoted(info.gpu) << ',' << info.sm_count << ',' << info.compute_capability << ','
      << info.runtime << ',' << info.driver << ',' << step << ',' << quoted(adds) << ',' << precision << ','
      << o.shape.m << ',' << o.shape.n << ',' << o.shape.k << ',' << o.alpha << ',' << o.beta << ',' << r.ms << ','
      << flops / r.ms / 1e9 << ',';
  if (r.cublas_ms > 0) row << r.cublas_ms << ',' << flops / r.cublas_ms / 1e9 << ',' << 100.0 * r.cublas_ms / r.ms << ',';
  else row << ",,,";
  if (r.checked) row << r.check.max_abs_err << ',' << r.check.err_over_tol;
  else row << ',';
  row << ',' << std::llround(r.global_bytes) << ',' << status_text(r) << '\n';
  std::fputs(row.str().c_str(), csv);
  std::fflush(csv);
}

void print_result(const char* step, const char* precision, const Options& o, const Result& r) {
  const double flops = gemm_flops(o.shape);
  const std::string size = std::to_string(o.shape.m) + "x" + std::to_string(o.shape.n) + "x" + std::to_string(o.shape.k);
  std::printf("%-22s %-9s %-17s %10s %9s %10s %9s %11s %9s %s\n", "step", "precision", "MxNxK", "median_ms", "TFLOP/s",
              "cuBLAS_ms", "%cuBLAS", "max_abs_err", "err/tol", "check");
  char err[32] = "-", ratio[32] = "-", cublas_ms[32] = "-", pct[32] = "-";
  if (r.cublas_ms > 0) {
    std::snprintf(cublas_ms, sizeof cublas_ms, "%.4f", r.cublas_ms);
    std::snprintf(pct, sizeof pct, "%.1f%%", 100.0 * r.cublas_ms / r.ms);
  }
  if (r.checked) {
    std::snprintf(err, sizeof err, "%.2e", r.check.max_abs_err);
    std::snprintf(ratio, sizeof ratio, "%.2e", r.check.err_over_tol);
  }
  std::printf("%-22s %-9s %-17s %10.4f %9.2f %10s %9s %11s %9s %s\n", step, precision, size.c_str(), r.ms,
              flops / r.ms / 1e9, cublas_ms, pct, err, ratio, status_text(r).c_str());
  std::fflush(stdout);
}

template <class Input>
int measure(const Step<Input>& step, const Options& o, const cudaDeviceProp& prop, std::FILE* csv) {
  const RunInfo info = describe(prop);
  std::printf("GPU %d: %s, sm_%d%d, %d SMs, CUDA runtime %s, driver %s\n", o.device, prop.name, prop.major, prop.minor,
              prop.multiProcessorCount, info.runtime.c_str(), info.driver.c_str());

  GemmData<Input> data(o.shape, o.seed, InitialC::random, o.check);
  std::optional<CublasHandle> cublas;
  if (o.cublas) cublas.emplace();
  Result r{};
  r.checked = o.check;
  r.global_bytes = modeled_global_bytes(o.shape, sizeof(Input), step.reuse_rows, step.reuse_cols, o.beta != 0.0f);

  // Check: one run of the step from the initial C, against cuBLAS from the same C.
  if (o.check) {
    data.compute_reference(cublas->get(), o.alpha, o.beta);
    step.launch(data.problem(o.alpha, o.beta), 0);
    CUDA_CHECK(cudaDeviceSynchronize());
    r.check = data.check(o.alpha, o.beta);
  }

  // Time: the step, then cuBLAS the same way (into cuBLAS's own buffer, or C when unchecked).
  const GemmProblem<Input> problem = data.problem(o.alpha, o.beta);
  r.ms = median_ms([&] { step.launch(problem, 0); }, o.warmup, o.iters);
  if (cublas) {
    const GemmProblem<Input> reference = o.check ? data.reference_problem(o.alpha, o.beta) : problem;
    r.cublas_ms = median_ms([&] { cublas_gemm(cublas->get(), reference); }, o.warmup, o.iters);
  }
  CUDA_CHECK(cudaDeviceSynchronize());

  print_result(step.name, precision_name<Input>(), o, r);
  if (csv) append_csv(csv, info, step.name, step.adds, precision_name<Input>(), o, r);
  if (o.check && !r.check.pass) {
    std::fprintf(stderr,
                 "%s: error: check failed: %llu element(s) outside the error bound; first at (row %lld, col %lld): "
                 "expected %.8g, obtained %.8g\n",
                 step.name, (unsigned long long)r.check.bad_count, r.check.first_bad_row, r.check.first_bad_col,
                 r.check.expected, r.check.obtained);
    return exit_check_failed;
  }
  return exit_ok;
}

}  // namespace

template <class Input>
int run_step(int argc, char** argv, const Step<Input>& step) {
  auto error = [&](int code, const std::string& message) {
    std::fprintf(stderr, "%s: error: %s\n", step.name, message.c_str());
    return code;
  };
  Options o;
  try {
    o = parse_options(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const UsageError& e) {
    return error(exit_bad_argument, e.message);
  }
  if (o.help) {
    std::fputs(usage_text(step.name).c_str(), stdout);
    return exit_ok;
  }
  std::FILE* csv = nullptr;
  if (!o.csv_path.empty() && !(csv = std::fopen(o.csv_path.c_str(), "a")))
    return error(exit_bad_argument, "cannot open --csv file '" + o.csv_path + "': " + std::strerror(errno));

  int code = exit_ok;
  try {
    const cudaDeviceProp prop = select_device(o.device);
    if (const auto refusal = unsupported_gpu(step, prop)) throw *refusal;
    require_device_memory(o.shape, sizeof(Input), o.check);
    code = o.profile == ProfileTarget::none ? measure(step, o, prop, csv) : profile_once(step, o);
  } catch (const Failure& f) {
    code = error(f.exit_code, f.message);
  } catch (const CudaError& e) {
    // A binary built for other GPUs has no kernel for this one: that is an unsupported GPU.
    const bool no_image = e.code == cudaErrorNoKernelImageForDevice || e.code == cudaErrorUnsupportedPtxVersion;
    code = error(no_image ? exit_unsupported_gpu : exit_cuda_error,
                 e.what() + std::string(no_image ? " (rebuild for this GPU: CMAKE_CUDA_ARCHITECTURES)" : ""));
  } catch (const std::exception& e) {
    code = error(exit_cuda_error, e.what());
  }
  if (csv) std::fclose(csv);
  return code;
}

template <class Input>
std::optional<Failure> unsupported_gpu(const Step<Input>& step, const cudaDeviceProp& prop) {
  const int cc = prop.major * 10 + prop.minor, lowest = step.min_compute_capability,
            highest = step.max_compute_capability;
  if (cc >= lowest && (highest == 0 || cc <= highest)) return std::nullopt;
  auto dotted = [](int v) { return std::to_string(v / 10) + "." + std::to_string(v % 10); };
  const std::string needed = highest == 0        ? dotted(lowest) + " or newer"
                             : highest == lowest ? dotted(lowest) + " exactly"
                                                 : dotted(lowest) + " to " + dotted(highest);
  return Failure{exit_unsupported_gpu, std::string(step.name) + " needs compute capability " + needed + "; " +
                                           prop.name + " is " + dotted(cc)};
}

int run_registered_step(const char* name, int argc, char** argv) {
  // --variant picks "<name>/<variant>"; the rest of the command line is run_step's.
  std::string chosen = name;
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word == "--variant" && i + 1 < argc) chosen += "/" + std::string(argv[i + 1]);
    else if (word.rfind("--variant=", 0) == 0) chosen += "/" + word.substr(10);
  }
  const RegisteredStep* step = find_step(chosen);
  if (!step && chosen != name) {
    std::string known;
    for (const RegisteredStep& s : step_registry())
      if (std::string(s.name()).rfind(std::string(name) + "/", 0) == 0)
        known += (known.empty() ? "" : ", ") + std::string(s.name()).substr(std::strlen(name) + 1);
    std::fprintf(stderr, "%s: error: unknown --variant '%s' (known: %s)\n", name, chosen.c_str() + std::strlen(name) + 1,
                 known.empty() ? "none" : known.c_str());
    return exit_bad_argument;
  }
  if (!step) {  // a build mistake, not a user's: add_worklog_step names the executable after its step
    std::fprintf(stderr, "%s: error: no step called '%s' is linked into this executable\n", argv[0], name);
    return exit_cuda_error;
  }
  return step->fp32 ? run_step(argc, argv, *step->fp32) : run_step(argc, argv, *step->fp16);
}

// The two input types the worklog uses.
template class DeviceBuffer<float>;
template class DeviceBuffer<__half>;
template class GemmData<float>;
template class GemmData<__half>;
template void cublas_gemm(cublasHandle_t, const GemmProblem<float>&);
template void cublas_gemm(cublasHandle_t, const GemmProblem<__half>&);
template int run_step(int, char**, const Step<float>&);
template int run_step(int, char**, const Step<__half>&);
template std::optional<Failure> unsupported_gpu(const Step<float>&, const cudaDeviceProp&);
template std::optional<Failure> unsupported_gpu(const Step<__half>&, const cudaDeviceProp&);

}  // namespace worklog
