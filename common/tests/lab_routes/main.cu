// lab_routes (lab_routes.hpp): the program. For each shape on its command line, the route of every
// Hopper step and which of its LAB regions run, as one JSON document on stdout:
//
//     lab_routes [--sms N] [--gpu NAME] MxNxK [MxNxK ...]
//
//     {"sms": 132, "gpu": "", "shapes": [{"shape": [3072, 3072, 3072], "steps": {"12_stream_k":
//       {"route": "tma", "regions": [{"name": "publish", "runs": true}, ...], "tiles": 144, ...}}}]}
//
// Exit codes (common/exit_codes.hpp): 0 written; 2 a bad command line or a shape the steps cannot
// plan. No GPU needed: nothing here asks the device.
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "exit_codes.hpp"
#include "lab_routes.hpp"

namespace worklog::lab_routes {

std::string Route::quoted(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

GemmProblem<__half> packed_problem(Shape s) {
  // 256-byte-aligned addresses, as cudaMalloc gives; never dereferenced.
  const auto* a = reinterpret_cast<const __half*>(std::uintptr_t(1) << 20);
  const auto* b = reinterpret_cast<const __half*>(std::uintptr_t(2) << 20);
  auto* c = reinterpret_cast<float*>(std::uintptr_t(3) << 20);
  return make_problem<__half>(s, 1.0f, 0.0f, a, b, c);
}

namespace {

struct StepRoute {
  const char* step;
  Route (*route)(Shape, const Gpu&);
};
const StepRoute steps[] = {
    {"09_wgmma_tma", route_09},      {"10_persistent_clusters", route_10},
    {"11_split_k", route_11},        {"12_stream_k", route_12},
    {"13_swap_ab", route_13},        {"14_pad_unaligned", route_14},
    {"15_tile_per_shape", route_15}, {"16_both_orientations", route_16},
};

std::string json(const Route& r) {
  std::ostringstream out;
  out << "{\"route\": " << Route::quoted(r.path) << ", \"regions\": [";
  for (std::size_t i = 0; i < r.regions.size(); ++i)
    out << (i ? ", " : "") << "{\"name\": " << Route::quoted(r.regions[i].first)
        << ", \"runs\": " << (r.regions[i].second ? "true" : "false") << "}";
  out << "]";
  for (const auto& [name, value] : r.facts) out << ", " << Route::quoted(name) << ": " << value;
  return out.str() + "}";
}

int usage(const std::string& problem) {
  std::cerr << "lab_routes: error: " << problem
            << "\nusage: lab_routes [--sms N] [--gpu NAME] MxNxK [MxNxK ...] (lab_routes --help)\n";
  return exit_bad_argument;
}

}  // namespace
}  // namespace worklog::lab_routes

int main(int argc, char** argv) {
  using namespace worklog;
  using namespace worklog::lab_routes;
  Gpu gpu;
  std::vector<Shape> shapes;
  const std::regex shape_text(R"re(([1-9][0-9]{0,9})x([1-9][0-9]{0,9})x([1-9][0-9]{0,9}))re");
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    std::smatch parts;
    if (word == "--help" || word == "-h") {
      std::cout << "lab_routes [--sms N] [--gpu NAME] MxNxK [MxNxK ...]\n"
                   "For each shape, the route of every Hopper step (09 to 16) and which of its LAB regions run,\n"
                   "as JSON: the lab's check that each step's performance shape (lab/rubric.json) runs them.\n"
                   "--sms: the GPU's multiprocessors (default 132: one worker per SM, clusters of two on pairs);\n"
                   "--gpu: the name 15's calibration prices it under (default: the first GPU of its table).\n"
                   "No GPU needed.\n";
      return exit_ok;
    } else if ((word == "--sms" || word == "--gpu") && i + 1 < argc) {
      const std::string value = argv[++i];
      if (word == "--gpu") {
        gpu.name = value;
      } else if (std::regex_match(value, std::regex("[1-9][0-9]{0,4}"))) {
        gpu.sms = std::stoi(value);
      } else {
        return usage("--sms must be a positive number, not '" + value + "'");
      }
    } else if (std::regex_match(word, parts, shape_text)) {
      const long long m = std::stoll(parts[1]), n = std::stoll(parts[2]), k = std::stoll(parts[3]);
      if (m > 2147483647LL || n > 2147483647LL || k > 2147483647LL) return usage("a side past 2^31 − 1: " + word);
      shapes.push_back(Shape{int(m), int(n), int(k)});
    } else {
      return usage("not a shape (MxNxK) or option: '" + word + "'");
    }
  }
  if (shapes.empty()) return usage("no shape given");
  std::ostringstream out;
  out << "{\"sms\": " << gpu.sms << ", \"gpu\": " << Route::quoted(gpu.name) << ", \"shapes\": [";
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const Shape& s = shapes[i];
    out << (i ? ",\n  " : "\n  ") << "{\"shape\": [" << s.m << ", " << s.n << ", " << s.k << "], \"steps\": {";
    for (std::size_t j = 0; j < std::size(steps); ++j) {
      try {
        out << (j ? ",\n    " : "\n    ") << Route::quoted(steps[j].step) << ": " << json(steps[j].route(s, gpu));
      } catch (const std::exception& e) {
        return usage(std::string(steps[j].step) + " cannot plan " + std::to_string(s.m) + "x" + std::to_string(s.n) +
                     "x" + std::to_string(s.k) + ": " + e.what());
      }
    }
    out << "}}";
  }
  std::cout << out.str() << "]}\n";
  return exit_ok;
}
