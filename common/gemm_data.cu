#include <cstring>

#include "cublas_reference.hpp"
#include "gemm_data.hpp"
#include "kernel_utils.cuh"
#include "precision_traits.hpp"

namespace worklog {

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
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x)
    x[i] = T(uniform_pm1(seed, stream, i));
}

__global__ void fill_nan(float* x, std::size_t count) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x)
    x[i] = __int_as_float(0x7fc00000);
}

template <class T>
__global__ void absolute_values(T* dst, const T* src, std::size_t count) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x)
    dst[i] = src[i] < T(0.0f) ? T(-float(src[i])) : src[i];
}

// ---- The check ----------------------------------------------------------------------------------

struct CheckCounters {
  unsigned long long bad_count;
  unsigned long long first_bad;   // smallest failing linear index
  unsigned int max_abs_err_bits;  // non-negative floats order like their bit patterns
  unsigned int err_over_tol_bits;
};

__global__ void compare(const float* c, const float* reference, const float* bound, const float* c_initial,
                        std::size_t count, float alpha, float beta, double scale, CheckCounters* out) {
  float max_err = 0.0f, max_ratio = 0.0f;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x) {
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
GemmData<Input>::GemmData(Shape shape, std::uint64_t seed, InitialC initial_c, bool with_reference,
                          std::size_t workspace_bytes)
    : shape_(shape),
      a_(std::size_t(shape.m) * shape.k),
      b_(std::size_t(shape.k) * shape.n),
      c_initial_(std::size_t(shape.m) * shape.n),
      c_(std::size_t(shape.m) * shape.n),
      workspace_(workspace_bytes ? DeviceBuffer<unsigned char>(workspace_bytes) : DeviceBuffer<unsigned char>()) {
  if (workspace_bytes) CUDA_CHECK(cudaMemset(workspace_.data(), 0, workspace_bytes));
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
  return {shape_.m,  shape_.n,          shape_.k,         alpha, beta, a_.data(), b_.data(),
          c_.data(), workspace_.data(), workspace_.size()};
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
  cublas_gemm(handle,
              GemmProblem<Input>{shape_.m, shape_.n, shape_.k, 1.0f, 0.0f, abs_a.data(), abs_b.data(), bound_.data()});
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
std::vector<float> GemmData<Input>::host_a() const {
  return to_host(a_);
}
template <class Input>
std::vector<float> GemmData<Input>::host_b() const {
  return to_host(b_);
}
template <class Input>
std::vector<float> GemmData<Input>::host_initial_c() const {
  return to_host(c_initial_);
}
template <class Input>
std::vector<float> GemmData<Input>::host_output() const {
  return to_host(c_);
}

// The two input types the worklog uses.
template class GemmData<float>;
template class GemmData<__half>;

}  // namespace worklog
