#include "profile_run.hpp"

#include <cuda_profiler_api.h>

#include <cstdio>
#include <functional>
#include <optional>

#include "cublas_reference.hpp"
#include "cuda_check.hpp"
#include "gemm_data.hpp"
#include "precision_traits.hpp"

namespace worklog {

template <class Input>
int profile_once(const Step<Input>& step, const Options& o) {
  GemmData<Input> data(o.shape, o.seed, o.initial_c, /*with_reference=*/false, step.workspace_bytes(o.shape, o.strides),
                       o.strides);
  const GemmProblem<Input> problem = data.problem(o.alpha, o.beta);
  std::optional<CublasHandle> cublas;
  std::function<void()> run = [&] { step.launch(problem, 0); };
  if (o.profile == ProfileTarget::cublas) {
    cublas.emplace();
    run = [&] { cublas_gemm(cublas->get(), problem); };
  }
  run();  // warm-up, outside the range: the profiled launch is a steady-state one
  CUDA_CHECK(cudaDeviceSynchronize());
  data.reset_output();  // the profiled launch starts from the same C as a timed run
  CUDA_CHECK(cudaProfilerStart());
  for (int i = 0; i < o.profile_launches; ++i) run();
  CUDA_CHECK(cudaDeviceSynchronize());
  CUDA_CHECK(cudaProfilerStop());
  std::printf("%s: profiled %s %d time(s), precision %s, %dx%dx%d\n", step.name.c_str(),
              o.profile == ProfileTarget::cublas ? "cuBLAS" : "the step's kernel", o.profile_launches,
              precision_name<Input>(), o.shape.m, o.shape.n, o.shape.k);
  std::fflush(stdout);
  return exit_ok;
}

template int profile_once(const Step<float>&, const Options&);
template int profile_once(const Step<__half>&, const Options&);

}  // namespace worklog
