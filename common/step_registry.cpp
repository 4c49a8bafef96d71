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

bool RegisteredStep::has_variant(const std::string& variant) const {
  if (variant.empty()) return true;
  for (const std::string& name : variant_names())
    if (name == variant) return true;
  return false;
}

}  // namespace worklog
