#include "run_step.hpp"

#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "cli.hpp"
#include "cublas_reference.hpp"
#include "cuda_check.hpp"
#include "device_select.hpp"
#include "gemm_data.hpp"
#include "harness_timing.hpp"
#include "precision_traits.hpp"
#include "profile_run.hpp"
#include "report.hpp"
#include "watchdog.hpp"

namespace worklog {

namespace {

template <class Input>
int measure(const Step<Input>& step, const Options& o, const cudaDeviceProp& prop) {
  const RunInfo info = describe_run(prop);
  std::printf("GPU %d: %s, sm_%d%d, %d SMs, CUDA runtime %s, driver %s\n", o.device, prop.name, prop.major, prop.minor,
              prop.multiProcessorCount, info.runtime.c_str(), info.driver.c_str());

  GemmData<Input> data(o.shape, o.seed, o.initial_c, o.check);
  std::optional<CublasHandle> cublas;
  if (o.cublas) cublas.emplace();
  Measurement r{};
  r.checked = o.check;
  r.global_bytes = modeled_global_bytes(o.shape, sizeof(Input), step.reuse_rows, step.reuse_cols, o.beta != 0.0f);

  // Check: one run of the step from the initial C, against cuBLAS from the same C.
  if (o.check) {
    data.compute_reference(cublas->get(), o.alpha, o.beta);
    step.launch(data.problem(o.alpha, o.beta), 0);
    CUDA_CHECK(cudaDeviceSynchronize());
    r.check = data.check(o.alpha, o.beta);
  }

  // Time: the step and cuBLAS in alternation, one run of each per round (cuBLAS into its own buffer,
  // or into C when unchecked), so that both see the same clocks.
  const GemmProblem<Input> problem = data.problem(o.alpha, o.beta);
  if (cublas) {
    const GemmProblem<Input> reference = o.check ? data.reference_problem(o.alpha, o.beta) : problem;
    const std::vector<double> ms = median_ms_interleaved(
        {[&] { step.launch(problem, 0); }, [&] { cublas_gemm(cublas->get(), reference); }}, o.warmup, o.iters);
    r.ms = ms[0];
    r.cublas_ms = ms[1];
  } else {
    r.ms = median_ms([&] { step.launch(problem, 0); }, o.warmup, o.iters);
  }
  CUDA_CHECK(cudaDeviceSynchronize());

  print_result(step.name.c_str(), precision_name<Input>(), o, r);
  if (!o.csv_path.empty())
    append_csv(o.csv_path, info, step.name.c_str(), step.description.c_str(), precision_name<Input>(), o, r);
  if (o.check && !r.check.pass) {
    std::fprintf(stderr,
                 "%s: error: check failed: %llu element(s) outside the error bound; first at (row %lld, col %lld): "
                 "expected %.8g, obtained %.8g\n",
                 step.name.c_str(), (unsigned long long)r.check.bad_count, r.check.first_bad_row, r.check.first_bad_col,
                 r.check.expected, r.check.obtained);
    return exit_check_failed;
  }
  return exit_ok;
}

}  // namespace

template <class Input>
int run_step(const Options& o, const Step<Input>& step) {
  auto error = [&](int code, const std::string& message) {
    std::fprintf(stderr, "%s: error: %s\n", step.name.c_str(), message.c_str());
    return code;
  };
  // A --csv file that cannot be written is refused now, but created only when its row is written.
  if (!o.csv_path.empty())
    if (const auto problem = csv_output_problem(o.csv_path))
      return error(exit_bad_argument, "cannot open --csv file '" + o.csv_path + "': " + *problem);

  int code = exit_ok;
  try {
    const cudaDeviceProp prop = select_device(o.device);
    if (const auto refusal = unsupported_gpu(step, prop)) throw *refusal;
    require_device_memory(o.shape, sizeof(Input), o.check);
    code = o.profile == ProfileTarget::none ? measure(step, o, prop) : profile_once(step, o);
  } catch (const Failure& f) {
    code = error(f.exit_code, f.message);
  } catch (const CudaError& e) {
    // A binary built for other GPUs has no kernel for this one: that is an unsupported GPU.
    const bool no_image = e.code == cudaErrorNoKernelImageForDevice || e.code == cudaErrorUnsupportedPtxVersion;
    // A kernel whose barrier wait never ended left its watchdog's line (watchdog.cuh): say it first.
    if (const auto watchdog = watchdog_message()) std::fprintf(stderr, "%s\n", watchdog->c_str());
    code = error(no_image ? exit_unsupported_gpu : exit_cuda_error,
                 e.what() + std::string(no_image ? " (rebuild for this GPU: CMAKE_CUDA_ARCHITECTURES)" : ""));
  } catch (const std::exception& e) {
    code = error(exit_cuda_error, e.what());
  }
  return code;
}

int run_registered_step(const char* name, int argc, char** argv) {
  const RegisteredStep* step = find_step(name);
  if (!step) {  // a build mistake, not a user's: add_worklog_step names the executable after its step
    std::fprintf(stderr, "%s: error: no step called '%s' is linked into this executable\n", argv[0], name);
    return exit_cuda_error;
  }
  // The command line is parsed once, here; --variant is then resolved by the registry.
  Options o;
  try {
    o = parse_options(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const UsageError& e) {
    std::fprintf(stderr, "%s: error: %s\n", name, e.message.c_str());
    return exit_bad_argument;
  }
  if (o.help) {
    std::fputs(usage_text(name).c_str(), stdout);
    return exit_ok;
  }
  if (!step->has_variant(o.variant)) {
    std::string known;
    for (const std::string& v : step->variant_names()) known += (known.empty() ? "" : ", ") + v;
    std::fprintf(stderr, "%s: error: unknown --variant '%s' (known: %s)\n", name, o.variant.c_str(),
                 known.empty() ? "none" : known.c_str());
    return exit_bad_argument;
  }
  return step->visit(o.variant, [&](const auto& chosen) { return run_step(o, chosen); });
}

// The two input types the worklog uses.
template int run_step(const Options&, const Step<float>&);
template int run_step(const Options&, const Step<__half>&);

}  // namespace worklog
