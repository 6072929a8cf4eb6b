// Library tests against the fake driver (tests/fake_driver) inside the test binary. The
// library loads its driver once per process, so each such test runs its checks in a child:
// gtest's "threadsafe" death-test style re-executes this binary for the one test, and the
// child sets CUDATOOL_LIBCUDA before anything loads a driver. This process's own driver (a
// real GPU's, or none) is never replaced, whatever order the tests run in.
//
//   expect_in_fake_driver(CUDATOOL_FAKE_LIBCUDA_STREAMS, {{"FAKE_CUDA_MEMORY", "4096"}},
//                         [](FakeChecks& c) { c.expect(..., "what went wrong"); });
//
// The checks record failures (FakeChecks); the child prints them on stderr and exits 1,
// which fails the test with that text, or exits 0 when every check held. An exception
// out of the checks is a failure too.
#pragma once

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <string>

#include "driver/driver_api.hpp"

namespace cudatool::testing {

class FakeChecks {
 public:
  void expect(bool holds, const std::string& what) {
    if (!holds) failures_ += what + "\n";
  }
  template <class Error, class Fn>
  void expect_throw(Fn&& fn, const std::string& what) {
    try {
      fn();
      failures_ += what + ": nothing thrown\n";
    } catch (const Error&) {
    } catch (const std::exception& e) {
      failures_ += what + ": another exception: " + e.what() + "\n";
    }
  }
  const std::string& failures() const { return failures_; }

 private:
  std::string failures_;
};

template <class Checks>
[[noreturn]] void run_fake_driver_child(const char* libcuda,
                                        const std::map<std::string, std::string>& settings,
                                        Checks&& checks) {
  ::setenv("CUDATOOL_LIBCUDA", libcuda, 1);
  for (const auto& [name, value] : settings) ::setenv(name.c_str(), value.c_str(), 1);
  FakeChecks c;
  try {
    checks(c);
  } catch (const std::exception& e) {
    c.expect(false, std::string("threw: ") + e.what());
  }
  std::fputs(c.failures().c_str(), stderr);
  std::fflush(stderr);
  std::_Exit(c.failures().empty() ? 0 : 1);
}

// Runs `checks` in the child with `libcuda` (CUDATOOL_FAKE_LIBCUDA, ..._STREAMS) and
// `settings` (FAKE_CUDA_*) in its environment; a failed check fails the calling test.
template <class Checks>
void expect_in_fake_driver(const char* libcuda, const std::map<std::string, std::string>& settings,
                           Checks&& checks) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(run_fake_driver_child(libcuda, settings, checks), ::testing::ExitedWithCode(0), "")
      << "the checks that failed in the child are above (Actual msg)";
}

// `settings` with the fake NVML (tests/fake_nvml) as the child's NVML (process.hpp's
// with_fake_nvml is the same for a child process of the executable).
inline std::map<std::string, std::string> fake_nvml_env(
    std::map<std::string, std::string> settings) {
  settings["CUDATOOL_LIBNVML"] = CUDATOOL_FAKE_LIBNVML;
  return settings;
}

// What the fake driver `libcuda` counts (tests/fake_driver: fake_cuda_count, e.g. live
// streams), from the copy this process loaded; -2 where it is not loaded, -3 where that
// fake counts nothing.
inline long long fake_count(const char* libcuda, const char* what) {
  void* library = ::dlopen(libcuda, RTLD_NOW | RTLD_NOLOAD);
  if (library == nullptr) return -2;
  auto* count = reinterpret_cast<long long (*)(const char*)>(::dlsym(library, "fake_cuda_count"));
  const long long value = count ? count(what) : -3;
  ::dlclose(library);
  return value;
}

// The fake's primary context of device `ordinal` (it has two devices).
inline CUcontext fake_context(int ordinal) {
  CUcontext context = nullptr;
  CUDATOOL_CU(cuDevicePrimaryCtxRetain, &context, ordinal);
  return context;
}

// The calling thread's current context.
inline CUcontext current_context() {
  CUcontext context = nullptr;
  CUDATOOL_CU(cuCtxGetCurrent, &context);
  return context;
}

}  // namespace cudatool::testing
