#include <cstring>

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

}  // namespace worklog
