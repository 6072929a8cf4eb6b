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
  bool timed_out = false;  // killed (SIGKILL) after ProcessOptions::timeout_seconds
};

struct ProcessOptions {
  std::map<std::string, std::optional<std::string>> env;  // set (value) or unset (nullopt)
  std::string stdin_data;
  std::string working_directory;  // "" for the current one
  // Wall-clock bound: a child still running after this long is killed and the result has
  // timed_out set (a hang is a failure, not a stuck test). 0: no bound.
  int timeout_seconds = 0;
  // Standard output: captured (default), opened on this file instead ("/dev/full"), or
  // closed in the child.
  std::string stdout_path;
  bool close_stdout = false;
};

ProcessResult run_process(const std::string& program, const std::vector<std::string>& args,
                          const ProcessOptions& options = {});

// run_process on the cudatool binary this build made.
ProcessResult run_cudatool(const std::vector<std::string>& args,
                           const ProcessOptions& options = {});

// Waits up to about two seconds until the process `pid` is gone (or a zombie about to be
// reaped by init: a grandchild's parent is gone too); true when it is.
bool wait_until_gone(int pid);

// Newline-terminated lines in `text` (errors must be exactly one line on stderr).
int count_lines(const std::string& text);

// The path tests give CUDATOOL_LIBCUDA for "no driver": nothing is there.
inline constexpr const char* kMissingDriver = "/nonexistent/libcuda.so.1";

// Options under which any attempt to load the driver fails (exit 3).
ProcessOptions without_driver();

// Options that make the binary load the fake driver (tests/fake_driver) with the given
// FAKE_CUDA_* settings.
ProcessOptions with_fake_driver(std::map<std::string, std::string> fake_settings = {});

// The fake driver and the fake NVML (tests/fake_driver/fake_libnvml.cpp) with the given
// FAKE_CUDA_* and FAKE_NVML_* settings.
ProcessOptions with_fake_nvml(std::map<std::string, std::string> fake_settings = {});

}  // namespace cudatool::testing
