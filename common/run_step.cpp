#include "run_step.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cli.hpp"
#include "cublas_reference.hpp"
#include "cuda_check.hpp"
#include "device_select.hpp"
#include "gemm_data.hpp"
#include "harness_timing.hpp"
#include "nvtx_range.hpp"
#include "precision_traits.hpp"
#include "profile_run.hpp"
#include "report.hpp"
#include "watchdog.hpp"

namespace worklog {

namespace {

// How many rounds to time: --iters, or under --time-cap as many as fit into it by the time of one
// round measured first (at least one).
int timed_rounds(const std::vector<std::function<void()>>& runs, const Options& o) {
  if (o.time_cap_ms <= 0) return o.iters;
  const NvtxRange range("--time-cap: one round timed to size the rounds");
  double round_ms = 0;
  for (const double ms : median_ms_interleaved(runs, 0, 1, o.timing)) round_ms += ms;
  const double fit = o.time_cap_ms / std::max(round_ms, 1e-6);
  return fit >= o.iters ? o.iters : std::max(1, int(fit));
}

// One shape, o.shape: time the step and cuBLAS, then check the step against cuBLAS; print the result
// line (after the header line, when asked) and append the CSV row. Returns exit_ok or exit_check_failed.
template <class Input>
int measure(const Step<Input>& step, const Options& o, const cudaDeviceProp& prop, bool header, double dram_read_rate) {
  const RunInfo info = describe_run(prop);
  // One range per shape: a --shapes run's timeline shows where each shape's rounds begin.
  const NvtxRange shape_range(step.name + " " + std::to_string(o.shape.m) + "x" + std::to_string(o.shape.n) + "x" +
                              std::to_string(o.shape.k));
  GemmData<Input> data(o.shape, o.seed, o.initial_c, o.check, step.workspace_bytes(o.shape, o.strides), o.strides);
  std::optional<CublasHandle> cublas;
  if (o.cublas) cublas.emplace();
  Measurement r{};
  r.checked = o.check;
  r.global_bytes = modeled_global_bytes(o.shape, sizeof(Input), step.reuse_rows, step.reuse_cols, o.beta != 0.0f);
  r.least_bytes = least_global_bytes(o.shape, sizeof(Input), o.beta != 0.0f);
  r.dram_read_rate = dram_read_rate;
  r.timing = o.timing;

  // Time: the step and cuBLAS in alternation, one run of each per round, so that both see the same
  // clocks, both writing C, each behind its cover in o.timing's mode (harness_timing.hpp). Timed
  // before the check, so that a checked run times what an unchecked one does: run before the timing,
  // the check's work (the compare kernel and its buffers) slowed some kernels' timed runs after it by
  // a few percent (docs/running.md).
  const GemmProblem<Input> problem = data.problem(o.alpha, o.beta);
  std::vector<std::function<void()>> runs = {[&] { step.launch(problem, 0); }};
  if (cublas) runs.push_back([&] { cublas_gemm(cublas->get(), problem); });
  const Timings timed = time_interleaved(runs, o.warmup, timed_rounds(runs, o), o.timing);
  r.ms = timed.ms[0];
  r.cublas_ms = cublas ? timed.ms[1] : 0.0;
  r.spread = timed.spread[0];
  if (cublas) r.cublas_spread = timed.spread[1];
  r.timer = timer_name(timed.timer);
  r.sm_mhz_before = timed.sm_mhz_before;
  r.sm_mhz_after = timed.sm_mhz_after;
  r.clock_fell = timed.clock_fell();
  r.uncovered = timed.uncovered;

  // Check: one more run of the step, from the initial C (after the timed runs on the same workspace),
  // against cuBLAS from the same C.
  if (o.check) {
    const NvtxRange range("check: one more run against cuBLAS");
    data.reset_output();
    data.compute_reference(cublas->get(), o.alpha, o.beta);
    step.launch(data.problem(o.alpha, o.beta), 0);
    CUDA_CHECK(cudaDeviceSynchronize());
    r.check = data.check(o.alpha, o.beta);
  }

  print_result(step.name.c_str(), precision_name<Input>(), o, r, header);
  if (r.clock_fell)
    std::fprintf(stderr, "%s: warning: the SM clock fell from %.0f to %.0f MHz during the timed rounds\n",
                 step.name.c_str(), r.sm_mhz_before, r.sm_mhz_after);
  if (r.uncovered > 0)
    std::fprintf(stderr,
                 "%s: warning: %d timed run(s) took the host longer to enqueue than the GPU work before them: "
                 "timed by %s, their times may hold the host's (kernels' timestamps: only between a run's kernels)\n",
                 step.name.c_str(), r.uncovered, r.timer.c_str());
  if (!o.csv_path.empty())
    append_csv(o.csv_path, info, step.name.c_str(), step.description.c_str(), precision_name<Input>(), o, r);
  if (o.check && !r.check.pass) {
    if (r.check.bad_count > 0)
      std::fprintf(stderr,
                   "%s: error: check failed: %llu element(s) outside the error bound; first at (row %lld, col %lld): "
                   "expected %.8g, obtained %.8g\n",
                   step.name.c_str(), (unsigned long long)r.check.bad_count, r.check.first_bad_row,
                   r.check.first_bad_col, r.check.expected, r.check.obtained);
    if (r.check.gap_written > 0)
      std::fprintf(stderr, "%s: error: check failed: %llu element(s) of C's gaps (columns N to ldc - 1) were written\n",
                   step.name.c_str(), (unsigned long long)r.check.gap_written);
    return exit_check_failed;
  }
  return exit_ok;
}

// --shapes: measure() on each shape in turn, in this one process (one CUDA context, one set of loaded
// kernels). A shape that does not fit in device memory is skipped with a line on stderr. Returns
// exit_check_failed when any check failed, else exit_does_not_fit when any shape was skipped.
template <class Input>
int measure_shapes(const Step<Input>& step, const Options& o, const cudaDeviceProp& prop,
                   const std::vector<Shape>& shapes, double dram_read_rate) {
  bool failed = false, skipped = false;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    Options one = o;
    one.shape = shapes[i];
    try {
      require_device_memory(one.shape, sizeof(Input), one.check, one.strides);
    } catch (const Failure& f) {
      if (f.exit_code != exit_does_not_fit) throw;
      std::fprintf(stderr, "%s: error: %s; skipping this shape\n", step.name.c_str(), f.message.c_str());
      skipped = true;
      continue;
    }
    failed |= measure(step, one, prop, i == 0, dram_read_rate) != exit_ok;
  }
  return failed ? exit_check_failed : skipped ? exit_does_not_fit : exit_ok;
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
  std::vector<Shape> shapes;  // --shapes: the shapes of the file, read before any GPU work
  try {
    if (!o.shapes_path.empty()) shapes = read_shape_file(o.shapes_path);
    for (const Shape& shape : shapes) check_strides(shape, o.strides, o.shapes_path + ": ");
  } catch (const UsageError& e) {
    return error(exit_bad_argument, e.message);
  }

  int code = exit_ok;
  try {
    const cudaDeviceProp prop = select_device(o.device);
    if (const auto refusal = unsupported_gpu(step, prop)) throw *refusal;
    if (o.profile != ProfileTarget::none) {
      require_device_memory(o.shape, sizeof(Input), o.check, o.strides);
      code = profile_once(step, o);
    } else {
      const RunInfo info = describe_run(prop);
      std::printf("GPU %d: %s, sm_%d%d, %d SMs, CUDA runtime %s, driver %s\n", o.device, prop.name, prop.major,
                  prop.minor, prop.multiProcessorCount, info.runtime.c_str(), info.driver.c_str());
      std::printf(
          "timing: %s (%s)\n", timing_mode_name(o.timing),
          o.timing == TimingMode::cold ? "L2 flushed before every timed run" : "operands left in L2 by the run before");
      // Measured first, while the device memory is free: the matrices may take most of it.
      const double dram_read_rate = o.dram_fraction ? measure_dram_read_rate(dram_read_bytes, 10) : 0.0;
      if (o.dram_fraction) std::printf("DRAM read rate: %.0f GB/s (a read of 4 GiB)\n", dram_read_rate / 1e9);
      if (!shapes.empty()) {
        code = measure_shapes(step, o, prop, shapes, dram_read_rate);
      } else {
        require_device_memory(o.shape, sizeof(Input), o.check, o.strides);
        code = measure(step, o, prop, true, dram_read_rate);
      }
    }
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
  if (o.list_variants) {  // before any device is asked for: the tooling runs this on machines without one
    std::fputs(registration_json(*step).c_str(), stdout);
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
