// Runs the real cudatool binary (or any program) for end-to-end tests and captures its
// exit code, stdout and stderr.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cudatool::testing {

struct ProcessResult {
  int exit_code = -1;  // the exit status, or 128 + signal when killed
  std::string out;
  std::string err;
};

struct ProcessOptions {
  std::map<std::string, std::optional<std::string>> env;  // set (value) or unset (nullopt)
  std::string stdin_data;
  std::string working_directory;  // "" for the current one
};

ProcessResult run_process(const std::string& program, const std::vector<std::string>& args,
                          const ProcessOptions& options = {});

// run_process on the cudatool binary this build made.
ProcessResult run_cudatool(const std::vector<std::string>& args,
                           const ProcessOptions& options = {});

// Options that make the binary load the fake driver (tests/fake_driver) with the given
// FAKE_CUDA_* settings.
ProcessOptions with_fake_driver(std::map<std::string, std::string> fake_settings = {});

}  // namespace cudatool::testing
