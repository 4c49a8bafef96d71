// A failure with its documented exit code (cli.hpp) and a one-line message. The harness's pieces
// throw it; run_step() prints the message and returns the code.
#pragma once

#include <string>

namespace worklog {

struct Failure {
  int exit_code;
  std::string message;
};

}  // namespace worklog
