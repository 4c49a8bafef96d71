#include <string>

#include "cli.hpp"  // json_quoted
#include "precision_traits.hpp"
#include "step.hpp"

namespace worklog {

std::vector<RegisteredStep>& step_registry() {
  static std::vector<RegisteredStep> steps;  // a function-local static: ready before any registration uses it
  return steps;
}

const RegisteredStep* find_step(const std::string& name) {
  for (const RegisteredStep& step : step_registry())
    if (name == step.name()) return &step;
  return nullptr;
}

std::vector<std::string> RegisteredStep::variant_names() const {
  std::vector<std::string> names;
  auto collect = [&](const auto& step) {
    for (const auto& v : step.variants) names.push_back(v.variant_name());
  };
  if (fp32)
    collect(*fp32);
  else
    collect(*fp16);
  return names;
}

namespace {

// One step's registration (registration_json); a compute capability of 0 below means any GPU, and
// no upper limit is null.
template <class Input>
std::string step_json(const Step<Input>& step) {
  const auto tile = [](const Step<Input>& s) {
    return "[" + std::to_string(s.reuse_rows) + ", " + std::to_string(s.reuse_cols) + "]";
  };
  std::string out =
      "{\n  \"step\": " + json_quoted(step.name) + ",\n  \"adds\": " + json_quoted(step.description) +
      ",\n  \"precision\": " + json_quoted(precision_name<Input>()) +
      ",\n  \"compute_capability\": {\"min\": " + std::to_string(step.min_compute_capability) +
      ", \"max\": " + (step.max_compute_capability ? std::to_string(step.max_compute_capability) : "null") +
      "},\n  \"reuse_tile\": " + tile(step) + ",\n  \"variants\": [";
  for (std::size_t i = 0; i < step.variants.size(); ++i) {
    const Step<Input>& v = step.variants[i];
    out += std::string(i ? "," : "") + "\n    {\"name\": " + json_quoted(v.variant_name()) +
           ", \"description\": " + json_quoted(v.description) + ", \"reuse_tile\": " + tile(v) + "}";
  }
  return out + (step.variants.empty() ? "]\n}\n" : "\n  ]\n}\n");
}

}  // namespace

std::string registration_json(const RegisteredStep& step) {
  return step.fp32 ? step_json(*step.fp32) : step_json(*step.fp16);
}

bool RegisteredStep::has_variant(const std::string& variant) const {
  if (variant.empty()) return true;
  for (const std::string& name : variant_names())
    if (name == variant) return true;
  return false;
}

}  // namespace worklog
