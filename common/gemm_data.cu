#include <cstring>
#include <limits>
#include <stdexcept>

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

// Element (row, col) of a rows × cols matrix with leading dimension ld gets the random value of its
// packed index row·cols + col, whatever ld; the gap between rows gets `gap`.
template <class T>
__global__ void fill_uniform(T* x, long long rows, long long cols, long long ld, std::uint64_t seed,
                             std::uint64_t stream, float gap) {
  const std::size_t count = std::size_t(strided_elements(rows, cols, ld));
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const std::size_t row = i / ld, col = i % ld;
    x[i] = col < std::size_t(cols) ? T(uniform_pm1(seed, stream, row * cols + col)) : T(gap);
  }
}

// `count` packed elements, each scale × the random value of its index.
__global__ void fill_uniform_scaled(__half* x, long long count, std::uint64_t seed, std::uint64_t stream, float scale) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count;
       i += (long long)gridDim.x * blockDim.x)
    x[i] = __float2half(scale * uniform_pm1(seed, stream, std::uint64_t(i)));
}

// NaN in the matrix, `gap` between its rows.
__global__ void fill_nan(float* x, long long rows, long long cols, long long ld, float gap) {
  const std::size_t count = std::size_t(strided_elements(rows, cols, ld));
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x)
    x[i] = std::size_t(i % ld) < std::size_t(cols) ? __int_as_float(0x7fc00000) : gap;
}

// ---- The check ----------------------------------------------------------------------------------

struct CheckCounters {
  unsigned long long bad_count;
  unsigned long long first_bad;    // smallest failing packed index (row·N + col)
  unsigned long long gap_written;  // gap elements of C that differ from the initial C's
  unsigned int max_abs_err_bits;   // non-negative floats order like their bit patterns
  unsigned int err_over_tol_bits;
};

// Over the strided C (ldc): the M×N elements against the reference within their tolerance (the
// bound matrix is packed, M×N), and the gap's elements bit for bit against the initial C.
__global__ void compare(const float* c, const float* reference, const float* bound, const float* c_initial,
                        long long rows, long long cols, long long ldc, float alpha, float beta, double scale,
                        CheckCounters* out) {
  float max_err = 0.0f, max_ratio = 0.0f;
  const std::size_t count = std::size_t(strided_elements(rows, cols, ldc));
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const std::size_t row = i / ldc, col = i % ldc;
    if (col >= std::size_t(cols)) {
      if (__float_as_uint(c[i]) != __float_as_uint(c_initial[i])) atomicAdd(&out->gap_written, 1ull);
      continue;
    }
    const std::size_t packed = row * cols + col;
    const double tolerance = element_tolerance(scale, alpha, beta, bound[packed], c_initial[i]);
    const bool ok = within_tolerance(c[i], reference[i], tolerance);
    const float err = isfinite(c[i]) ? fabsf(c[i] - reference[i]) : INFINITY;
    max_err = fmaxf(max_err, err);
    max_ratio = fmaxf(max_ratio, tolerance > 0 ? float(err / tolerance) : (err == 0.0f ? 0.0f : INFINITY));
    if (!ok) {
      atomicAdd(&out->bad_count, 1ull);
      atomicMin(&out->first_bad, (unsigned long long)packed);
    }
  }
  atomicMax(&out->max_abs_err_bits, __float_as_uint(max_err));
  atomicMax(&out->err_over_tol_bits, __float_as_uint(max_ratio));
}

// |x| of every element of a strided matrix, into a packed one.
template <class T>
__global__ void absolute_values(T* dst, const T* src, long long rows, long long cols, long long ld) {
  const std::size_t count = std::size_t(rows) * std::size_t(cols);
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const T x = src[i / cols * ld + i % cols];
    dst[i] = x < T(0.0f) ? T(-float(x)) : x;
  }
}

// The rows × cols matrix of a strided one, packed, on the host.
template <class T>
std::vector<float> packed_host(const DeviceBuffer<T>& buffer, long long rows, long long cols, long long ld) {
  std::vector<T> raw(buffer.size());
  CUDA_CHECK(cudaMemcpy(raw.data(), buffer.data(), raw.size() * sizeof(T), cudaMemcpyDeviceToHost));
  std::vector<float> out(std::size_t(rows) * cols);
  for (long long r = 0; r < rows; ++r)
    for (long long c = 0; c < cols; ++c) out[std::size_t(r * cols + c)] = float(raw[std::size_t(r * ld + c)]);
  return out;
}

float element_at(const float* device_array, std::size_t index) {
  float value = 0;
  CUDA_CHECK(cudaMemcpy(&value, device_array + index, sizeof(float), cudaMemcpyDeviceToHost));
  return value;
}

}  // namespace

template <class Input>
GemmData<Input>::GemmData(Shape shape, std::uint64_t seed, InitialC initial_c, bool with_reference,
                          std::size_t workspace_bytes, Strides strides)
    : shape_(shape),
      strides_(resolve_strides(shape, strides)),
      a_(strided_elements(shape.m, shape.k, strides_.lda)),
      b_(strided_elements(shape.k, shape.n, strides_.ldb)),
      c_initial_(strided_elements(shape.m, shape.n, strides_.ldc)),
      c_(c_initial_.size()),
      workspace_(workspace_bytes ? DeviceBuffer<unsigned char>(workspace_bytes) : DeviceBuffer<unsigned char>()) {
  if (const char* problem = strides_problem(shape, strides)) throw std::invalid_argument(problem);
  if (workspace_bytes) CUDA_CHECK(cudaMemset(workspace_.data(), 0, workspace_bytes));
  if (with_reference) {
    c_reference_ = DeviceBuffer<float>(c_.size());
    bound_ = DeviceBuffer<float>(std::size_t(shape.m) * shape.n);
  }
  const float nan = std::numeric_limits<float>::quiet_NaN();
  fill_uniform<<<fill_blocks, fill_threads>>>(a_.data(), shape.m, shape.k, strides_.lda, seed, 1, nan);
  WORKLOG_CHECK_LAUNCH();
  fill_uniform<<<fill_blocks, fill_threads>>>(b_.data(), shape.k, shape.n, strides_.ldb, seed, 2, nan);
  WORKLOG_CHECK_LAUNCH();
  // C's gaps: a value no kernel computes by chance, the same in the output and the reference.
  constexpr float c_gap = -7.25f;
  if (initial_c == InitialC::nan)
    fill_nan<<<fill_blocks, fill_threads>>>(c_initial_.data(), shape.m, shape.n, strides_.ldc, c_gap);
  else
    fill_uniform<<<fill_blocks, fill_threads>>>(c_initial_.data(), shape.m, shape.n, strides_.ldc, seed, 3, c_gap);
  WORKLOG_CHECK_LAUNCH();
  reset_output();
}

template <class Input>
GemmProblem<Input> GemmData<Input>::problem(float alpha, float beta) const {
  GemmProblem<Input> p = make_problem(shape_, alpha, beta, a_.data(), b_.data(), c_.data(), strides_);
  p.workspace = workspace_.data();
  p.workspace_bytes = workspace_.size();
  return p;
}

template <class Input>
GemmProblem<Input> GemmData<Input>::reference_problem(float alpha, float beta) const {
  return make_problem(shape_, alpha, beta, a_.data(), b_.data(), c_reference_.data(), strides_);
}

template <class Input>
void GemmData<Input>::reset_output() {
  CUDA_CHECK(cudaMemcpy(c_.data(), c_initial_.data(), c_.size() * sizeof(float), cudaMemcpyDeviceToDevice));
}

template <class Input>
void GemmData<Input>::compute_reference(cublasHandle_t handle, float alpha, float beta) {
  CUDA_CHECK(cudaMemcpy(c_reference_.data(), c_initial_.data(), c_.size() * sizeof(float), cudaMemcpyDeviceToDevice));
  cublas_gemm(handle, reference_problem(alpha, beta));
  // The bound matrix |A|·|B|, packed, from packed absolute copies that live only while it is computed.
  DeviceBuffer<Input> abs_a(std::size_t(shape_.m) * shape_.k), abs_b(std::size_t(shape_.k) * shape_.n);
  absolute_values<<<fill_blocks, fill_threads>>>(abs_a.data(), a_.data(), shape_.m, shape_.k, strides_.lda);
  WORKLOG_CHECK_LAUNCH();
  absolute_values<<<fill_blocks, fill_threads>>>(abs_b.data(), b_.data(), shape_.k, shape_.n, strides_.ldb);
  WORKLOG_CHECK_LAUNCH();
  cublas_gemm(handle, make_problem(shape_, 1.0f, 0.0f, abs_a.data(), abs_b.data(), bound_.data()));
  CUDA_CHECK(cudaDeviceSynchronize());
}

template <class Input>
CheckResult GemmData<Input>::check(float alpha, float beta) const {
  DeviceBuffer<CheckCounters> counters(1);
  const CheckCounters start{0, ~0ull, 0, 0, 0};
  CUDA_CHECK(cudaMemcpy(counters.data(), &start, sizeof start, cudaMemcpyHostToDevice));
  const double scale = comparison_scale(shape_.k, accumulation_unit_roundoff<Input>());
  compare<<<fill_blocks, fill_threads>>>(c_.data(), c_reference_.data(), bound_.data(), c_initial_.data(), shape_.m,
                                         shape_.n, strides_.ldc, alpha, beta, scale, counters.data());
  WORKLOG_CHECK_LAUNCH();
  CheckCounters got{};
  CUDA_CHECK(cudaMemcpy(&got, counters.data(), sizeof got, cudaMemcpyDeviceToHost));

  CheckResult r;
  r.pass = got.bad_count == 0 && got.gap_written == 0;
  r.bad_count = got.bad_count;
  r.gap_written = got.gap_written;
  float max_err = 0, ratio = 0;
  std::memcpy(&max_err, &got.max_abs_err_bits, sizeof max_err);
  std::memcpy(&ratio, &got.err_over_tol_bits, sizeof ratio);
  r.max_abs_err = max_err;
  r.err_over_tol = ratio;
  if (got.bad_count > 0) {
    r.first_bad_row = (long long)(got.first_bad / shape_.n);
    r.first_bad_col = (long long)(got.first_bad % shape_.n);
    const std::size_t at = std::size_t(r.first_bad_row) * strides_.ldc + std::size_t(r.first_bad_col);
    r.expected = element_at(c_reference_.data(), at);
    r.obtained = element_at(c_.data(), at);
  }
  return r;
}

template <class Input>
std::vector<float> GemmData<Input>::host_a() const {
  return packed_host(a_, shape_.m, shape_.k, strides_.lda);
}
template <class Input>
std::vector<float> GemmData<Input>::host_b() const {
  return packed_host(b_, shape_.k, shape_.n, strides_.ldb);
}
template <class Input>
std::vector<float> GemmData<Input>::host_initial_c() const {
  return packed_host(c_initial_, shape_.m, shape_.n, strides_.ldc);
}
template <class Input>
std::vector<float> GemmData<Input>::host_output() const {
  return packed_host(c_, shape_.m, shape_.n, strides_.ldc);
}

// The two input types the worklog uses.
void fill_uniform(__half* x, long long count, std::uint64_t seed, std::uint64_t stream, float scale) {
  fill_uniform_scaled<<<fill_blocks, fill_threads>>>(x, count, seed, stream, scale);
  CUDA_CHECK(cudaGetLastError());
}

template class GemmData<float>;
template class GemmData<__half>;

}  // namespace worklog
