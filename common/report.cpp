#include "report.hpp"

#include <unistd.h>  // access()

#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>
#include <sstream>

#include "cuda_check.hpp"

namespace worklog {

namespace {

std::string version_text(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return out + "\"";
}

std::string status_text(const Measurement& r) { return !r.checked ? "UNCHECKED" : r.check.pass ? "PASS" : "FAIL"; }

}  // namespace

RunInfo describe_run(const cudaDeviceProp& prop) {
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

std::optional<std::string> csv_output_problem(const std::string& path) {
  if (access(path.c_str(), F_OK) == 0) {  // there already: rows are appended, so it must open for that
    std::FILE* f = std::fopen(path.c_str(), "a");
    if (!f) return std::string(std::strerror(errno));
    std::fclose(f);
    return std::nullopt;
  }
  // Not there yet: the folder it goes into must exist and take a new file. Nothing is created now.
  const std::size_t slash = path.find_last_of('/');
  const std::string folder = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  if (access(folder.c_str(), W_OK | X_OK) != 0) return std::string(std::strerror(errno));
  return std::nullopt;
}

void append_csv(const std::string& path, const RunInfo& info, const char* step, const char* adds, const char* precision,
                const Options& o, const Measurement& r) {
  std::FILE* csv = std::fopen(path.c_str(), "a");
  if (!csv) throw Failure{exit_bad_argument, "cannot open --csv file '" + path + "': " + std::strerror(errno)};
  std::fseek(csv, 0, SEEK_END);
  if (std::ftell(csv) == 0)
    std::fputs(
        "timestamp,gpu,sm_count,compute_capability,cuda_runtime,cuda_driver,step,adds,precision,m,n,k,alpha,beta,"
        "ms,tflops,cublas_ms,cublas_tflops,pct_cublas,max_abs_err,err_over_tol,global_bytes,status,"
        "bad_count,first_bad_row,first_bad_col,expected,obtained,"
        "timing,timer,sm_mhz_before,sm_mhz_after,clock_fell,uncovered_runs,least_bytes,dram_read_gbps,"
        "dram_fraction,cublas_dram_fraction,ms_p10,ms_p90,cublas_ms_p10,cublas_ms_p90,code\n",
        csv);
  const double flops = gemm_flops(o.shape);
  std::ostringstream row;
  row.precision(6);
  row << info.timestamp << ',' << quoted(info.gpu) << ',' << info.sm_count << ',' << info.compute_capability << ','
      << info.runtime << ',' << info.driver << ',' << step << ',' << quoted(adds) << ',' << precision << ','
      << o.shape.m << ',' << o.shape.n << ',' << o.shape.k << ',' << o.alpha << ',' << o.beta << ',' << r.ms << ','
      << flops / r.ms / 1e9 << ',';
  if (r.cublas_ms > 0)
    row << r.cublas_ms << ',' << flops / r.cublas_ms / 1e9 << ',' << 100.0 * r.cublas_ms / r.ms << ',';
  else
    row << ",,,";
  if (r.checked)
    row << r.check.max_abs_err << ',' << r.check.err_over_tol;
  else
    row << ',';
  row << ',' << std::llround(r.global_bytes) << ',' << status_text(r);
  // The check's verdict for programs (lab/lab.py grade reads these, not the message on stderr):
  // how many elements are outside the bound, and the first of them, with the two values there.
  if (!r.checked)
    row << ",,,,,";
  else if (r.check.bad_count == 0)
    row << ",0,,,,";
  else {
    row << ',' << r.check.bad_count << ',' << r.check.first_bad_row << ',' << r.check.first_bad_col << ',';
    row.precision(9);
    row << r.check.expected << ',' << r.check.obtained;
  }
  // How it was timed (harness_timing.hpp), and the DRAM roofline: the least bytes over the time, as a
  // fraction of the DRAM read rate measured in this process (empty without --dram-fraction).
  row.precision(6);
  row << ',' << timing_mode_name(r.timing) << ',' << r.timer << ',' << std::lround(r.sm_mhz_before) << ','
      << std::lround(r.sm_mhz_after) << ',' << (r.clock_fell ? 1 : 0) << ',' << r.uncovered << ','
      << std::llround(r.least_bytes) << ',';
  if (r.dram_read_rate > 0) {
    row << r.dram_read_rate / 1e9 << ',' << r.least_bytes / (r.ms * 1e-3) / r.dram_read_rate << ',';
    if (r.cublas_ms > 0) row << r.least_bytes / (r.cublas_ms * 1e-3) / r.dram_read_rate;
  } else {
    row << ",,";
  }
  // The spread of the rounds behind each median (percentile.hpp), last, so that the rows of older
  // files keep their columns; cuBLAS's empty when it was not timed.
  row << ',' << r.spread.p10 << ',' << r.spread.p90 << ',';
  if (r.cublas_ms > 0)
    row << r.cublas_spread.p10 << ',' << r.cublas_spread.p90;
  else
    row << ',';
  // The code it measured, left empty: tools/fingerprints.py --stamp fills it in from the build's SASS
  // after the run (docs/figures.md); this program cannot read its own machine code.
  row << ",\n";
  const bool written = std::fputs(row.str().c_str(), csv) >= 0 && std::fflush(csv) == 0;
  const int write_errno = errno;
  std::fclose(csv);
  if (!written)
    throw Failure{exit_bad_argument, "cannot write --csv file '" + path + "': " + std::strerror(write_errno)};
}

void print_result(const char* step, const char* precision, const Options& o, const Measurement& r, bool header) {
  const double flops = gemm_flops(o.shape);
  std::string size = std::to_string(o.shape.m) + "x" + std::to_string(o.shape.n) + "x" + std::to_string(o.shape.k);
  const Strides packed = resolve_strides(o.shape, {}), given = resolve_strides(o.shape, o.strides);
  if (given.lda != packed.lda || given.ldb != packed.ldb || given.ldc != packed.ldc)  // the strides, when not packed
    size += " ld " + std::to_string(given.lda) + "," + std::to_string(given.ldb) + "," + std::to_string(given.ldc);
  if (header)
    std::printf("%-22s %-9s %-17s %10s %9s %10s %9s %11s %9s %s\n", "step", "precision", "MxNxK", "median_ms",
                "TFLOP/s", "cuBLAS_ms", "%cuBLAS", "max_abs_err", "err/tol", "check");
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

}  // namespace worklog
