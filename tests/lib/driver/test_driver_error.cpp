// A failed driver call's CUresult as the error hierarchy's class that fits it, named in the
// driver's words (lib/src/driver/driver_error.cpp). Against the fake driver in a child
// (fake_driver_child.hpp), whose cuGetErrorName and cuGetErrorString know a few results.
#include <cuda.h>
#include <gtest/gtest.h>

#include <string>

#include "cudatool/base/error.hpp"
#include "driver/driver_api.hpp"
#include "fake_driver_child.hpp"

namespace cudatool {
namespace {

using cudatool::testing::expect_in_fake_driver;
using cudatool::testing::FakeChecks;

// The class of the error throw_driver_error throws for `code`, and its fields.
struct Thrown {
  std::string kind, what, call, name, message;
  int code = 0;
};

Thrown thrown(int code) {
  Thrown t;
  try {
    throw_driver_error("cuTestCall", code);
  } catch (const MemoryError& e) {
    t = {"MemoryError", e.what(), e.call(), e.code_name(), e.driver_message(), e.code()};
  } catch (const LaunchError& e) {
    t = {"LaunchError", e.what(), e.call(), e.code_name(), e.driver_message(), e.code()};
  } catch (const DeviceNotFoundError& e) {
    t = {"DeviceNotFoundError", e.what(), e.call(), e.code_name(), e.driver_message(), e.code()};
  } catch (const LogicError& e) {
    t = {"LogicError", e.what(), e.call(), e.code_name(), e.driver_message(), e.code()};
  } catch (const RuntimeError& e) {
    t = {"RuntimeError", e.what(), e.call(), e.code_name(), e.driver_message(), e.code()};
  } catch (const Error& e) {
    t = {"Error", e.what(), e.call(), e.code_name(), e.driver_message(), e.code()};
  }
  return t;
}

TEST(DriverError, EachResultIsItsClassNamedByTheDriver) {
  expect_in_fake_driver(CUDATOOL_FAKE_LIBCUDA, {}, [](FakeChecks& c) {
    const struct {
      int code;
      const char* kind;
      const char* name;
      const char* message;
    } cases[] = {
        {CUDA_ERROR_OUT_OF_MEMORY, "MemoryError", "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
        {CUDA_ERROR_LAUNCH_FAILED, "LaunchError", "CUDA_ERROR_LAUNCH_FAILED",
         "unspecified launch failure"},
        {CUDA_ERROR_NO_DEVICE, "DeviceNotFoundError", "CUDA_ERROR_NO_DEVICE", ""},
        {CUDA_ERROR_INVALID_VALUE, "LogicError", "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
        {CUDA_ERROR_INVALID_DEVICE, "LogicError", "CUDA_ERROR_INVALID_DEVICE",
         "invalid device ordinal"},
        {CUDA_ERROR_UNKNOWN, "RuntimeError", "CUDA_ERROR_UNKNOWN", "unknown error"},
        {CUDA_ERROR_DEVICE_UNAVAILABLE, "RuntimeError", "CUDA_ERROR_DEVICE_UNAVAILABLE",
         "CUDA-capable device(s) is/are busy or unavailable"},
    };
    for (const auto& k : cases) {
      const Thrown t = thrown(k.code);
      const std::string which = std::to_string(k.code) + ": ";
      c.expect(t.kind == k.kind, which + "class " + t.kind + ", not " + k.kind);
      c.expect(t.code == k.code && t.call == "cuTestCall", which + "code and call");
      c.expect(t.name == k.name, which + "name " + t.name);
      c.expect(t.message == k.message, which + "message " + t.message);
      c.expect(t.what.starts_with("cuTestCall failed: " + std::string(k.name)), which + t.what);
    }
    // A result the driver cannot name stands as its number, of its class all the same.
    const Thrown launch = thrown(CUDA_ERROR_ILLEGAL_ADDRESS);
    c.expect(launch.kind == "LaunchError" && launch.name == "CUresult 700",
             "illegal address: " + launch.kind + " " + launch.name);
    const Thrown other = thrown(12345);
    c.expect(
        other.kind == "RuntimeError" && other.name == "CUresult 12345" && other.message.empty(),
        "unknown: " + other.kind + " " + other.name);
  });
}

TEST(DriverError, WithoutADriverTheNumberStandsAlone) {
  expect_in_fake_driver("/nonexistent/libcuda.so.1", {}, [](FakeChecks& c) {
    const Thrown t = thrown(CUDA_ERROR_OUT_OF_MEMORY);
    c.expect(t.kind == "MemoryError", "still a MemoryError: " + t.kind);
    c.expect(t.name == "CUresult 2" && t.message.empty(), "named by its number: " + t.name);
  });
}

}  // namespace
}  // namespace cudatool
