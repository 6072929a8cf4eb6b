// The driver's loading (lib/src/driver/driver.cpp): the file CUDATOOL_LIBCUDA names, each
// entry point by its symbol, cuInit once with its failure kept and explained, the
// environment the driver started under, and a driver too old for an entry point. Against
// the fake driver in a child (fake_driver_child.hpp), which loads its own driver.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cudatool/base/error.hpp"
#include "cudatool/device/device.hpp"
#include "cudatool/driver/driver.hpp"
#include "driver/driver_api.hpp"
#include "fake_driver_child.hpp"

namespace cudatool::driver {
namespace {

using cudatool::testing::expect_in_fake_driver;
using cudatool::testing::FakeChecks;

template <class Fn>
std::string message_of(Fn&& fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(nothing thrown)";
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(Driver, CudaVersionsAreMajorDotMinor) {
  EXPECT_EQ(format_cuda_version(13000), "13.0");
  EXPECT_EQ(format_cuda_version(12040), "12.4");
  EXPECT_EQ(format_cuda_version(11080), "11.8");
  EXPECT_EQ(format_cuda_version(12090), "12.9");
  EXPECT_EQ(format_cuda_version(0), "");
  EXPECT_EQ(format_cuda_version(-1), "");
}

TEST(Driver, LoadsTheNamedFileWithItsVersionAndStartsOnce) {
  expect_in_fake_driver(
      CUDATOOL_FAKE_LIBCUDA, {{"FAKE_CUDA_DRIVER_VERSION", "12040"}}, [](FakeChecks& c) {
        const Api& a = api();
        c.expect(a.library_path == CUDATOOL_FAKE_LIBCUDA, "the named file: " + a.library_path);
        c.expect(a.driver_version == 12040, "cuDriverGetVersion's answer");
        c.expect(a.cuInit != nullptr && a.cuDeviceGetName != nullptr && a.cuMemAlloc != nullptr,
                 "entry points resolved");
        c.expect(start_environment() == nullptr, "no environment before cuInit");
        ::setenv("CUDATOOL_TEST_MARK", "before", 1);
        c.expect(&initialized() == &a, "initialized() is the same table");
        ::setenv("CUDATOOL_TEST_MARK", "after", 1);
        const std::vector<std::string>* started = start_environment();
        c.expect(started != nullptr, "the environment at cuInit is kept");
        if (started) {
          const auto mark =
              std::find(started->begin(), started->end(), "CUDATOOL_TEST_MARK=before");
          c.expect(mark != started->end(), "as it was when cuInit ran, not as it is now");
        }
      });
}

TEST(Driver, AMissingDriverIsNamedByItsFileAndTheSoname) {
  expect_in_fake_driver("/nonexistent/libcuda.so.1", {}, [](FakeChecks& c) {
    try {
      api();
      c.expect(false, "no driver: nothing loaded");
    } catch (const LibraryNotFoundError& e) {
      const std::string why = e.what();
      c.expect(why.starts_with("CUDA driver not found (/nonexistent/libcuda.so.1): "), why);
      c.expect(e.library() == "libcuda.so.1", "the soname: " + e.library());
    }
    // The failure is kept: the same on every call, never a second attempt's other answer.
    c.expect(message_of([] { api(); }) == message_of([] { initialized(); }), "the same error");
  });
}

TEST(Driver, EachFailedStartIsExplained) {
  // No device: CUDA_VISIBLE_DEVICES, which hides devices, is named.
  expect_in_fake_driver(CUDATOOL_FAKE_LIBCUDA, {{"CUDA_VISIBLE_DEVICES", "7"}}, [](FakeChecks& c) {
    c.expect_throw<DeviceNotFoundError>([] { initialized(); }, "no visible device");
    const std::string why = message_of([] { initialized(); });
    c.expect(
        has(why, "no CUDA device visible") && has(why, "CUDA_VISIBLE_DEVICES=") && has(why, "7"),
        why);
  });
  // The toolkit's stub (CUDA_ERROR_STUB_LIBRARY, 34) is no driver.
  expect_in_fake_driver(CUDATOOL_FAKE_LIBCUDA, {{"FAKE_CUDA_INIT_RESULT", "34"}},
                        [](FakeChecks& c) {
                          const std::string why = message_of([] { initialized(); });
                          c.expect_throw<LibraryNotFoundError>([] { initialized(); }, "stub");
                          c.expect(has(why, "stub library"), why);
                        });
  // A driver that cannot serve this machine (CUDA_ERROR_DEVICE_UNAVAILABLE, 46): unusable,
  // with its file, its CUDA version and the driver's own words.
  expect_in_fake_driver(CUDATOOL_FAKE_LIBCUDA, {{"FAKE_CUDA_INIT_RESULT", "46"}},
                        [](FakeChecks& c) {
                          const std::string why = message_of([] { initialized(); });
                          c.expect_throw<LibraryNotFoundError>([] { initialized(); }, "unusable");
                          c.expect(has(why, "CUDA driver unusable (") && has(why, ", CUDA 13.0)") &&
                                       has(why, "CUDA_ERROR_DEVICE_UNAVAILABLE"),
                                   why);
                        });
  // Any other result is the driver's error, of its class.
  expect_in_fake_driver(CUDATOOL_FAKE_LIBCUDA, {{"FAKE_CUDA_INIT_RESULT", "999"}},
                        [](FakeChecks& c) {
                          c.expect_throw<RuntimeError>([] { initialized(); }, "CUDA_ERROR_UNKNOWN");
                          const std::string why = message_of([] { initialized(); });
                          c.expect(has(why, "cuInit") && has(why, "CUDA_ERROR_UNKNOWN"), why);
                        });
}

TEST(Driver, ADriverTooOldForAnEntryPointSaysWhichAndItsVersion) {
  expect_in_fake_driver(CUDATOOL_FAKE_LIBCUDA_OLD, {{"FAKE_CUDA_DRIVER_VERSION", "11040"}},
                        [](FakeChecks& c) {
                          c.expect(api().cuDeviceGetUuid == nullptr, "the old fake lacks it");
                          c.expect(api().cuDeviceGetName != nullptr, "and has the rest");
                          const Device d(0);
                          c.expect(d.name() == "Fake GPU 0", "the rest works");
                          const std::string why = message_of([&] { d.uuid(); });
                          c.expect_throw<LibraryNotFoundError>([&] { d.uuid(); }, "no entry point");
                          c.expect(has(why, "CUDA driver too old: it lacks cuDeviceGetUuid") &&
                                       has(why, "driver supports CUDA 11.4"),
                                   why);
                        });
}

}  // namespace
}  // namespace cudatool::driver
