// Context (lib/src/device/context.cpp): a device's primary context, retained, made current
// and released once, and the default context of a command (the selection, else the first
// device that accepts one). Against the fake driver in a child (fake_driver_child.hpp) and,
// where there is a GPU, the real driver (ContextGpu, skipped without one).
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "cudatool/base/error.hpp"
#include "cudatool/device/context.hpp"
#include "cudatool/device/device.hpp"
#include "driver/driver_api.hpp"
#include "fake_driver_child.hpp"
#include "gpu_test.hpp"

using namespace cudatool;

namespace {

using cudatool::testing::current_context;
using cudatool::testing::expect_in_fake_driver;
using cudatool::testing::FakeChecks;

bool primary_context_active(const Device& device) {
  unsigned int flags = 0;
  int active = 0;
  CUDATOOL_CU(cuDevicePrimaryCtxGetState, device.handle(), &flags, &active);
  return active != 0;
}

TEST(Context, IsMadeCurrentAndNoLongerCurrentOnceReleased) {
  expect_in_fake_driver(CUDATOOL_FAKE_LIBCUDA, {}, [](FakeChecks& c) {
    const Device second(1);
    {
      Context context(second);
      c.expect(context.handle() != nullptr, "a handle");
      c.expect(context.device() == second, "its device");
      c.expect(current_context() == context.handle(), "current once made");
      context.synchronize();
      Context moved = std::move(context);
      c.expect(context.handle() == nullptr, "a moved-from context holds none");
      c.expect(current_context() == moved.handle(), "the move leaves it current");
      Context other(Device(0));
      c.expect(current_context() == other.handle(), "the newest is current");
      moved = std::move(other);
      c.expect(moved.device() == Device(0) && moved.handle() == current_context(),
               "move assignment takes the other's device and handle");
    }
    c.expect(current_context() == nullptr, "released: not left current");
  });
}

TEST(Context, ADeviceRefusingAContextIsTheDriversError) {
  expect_in_fake_driver(CUDATOOL_FAKE_LIBCUDA, {{"FAKE_CUDA_CTX_BUSY", "0"}}, [](FakeChecks& c) {
    try {
      Context context(Device(0));
      c.expect(false, "device 0 is busy: no context");
    } catch (const Error& e) {
      c.expect(e.code() == CUDA_ERROR_DEVICE_UNAVAILABLE, "the driver's result: " + e.code_name());
      c.expect(e.call().find("cuDevicePrimaryCtxRetain") != std::string::npos, e.call());
    }
    c.expect(current_context() == nullptr, "nothing made current");
  });
}

TEST(Context, TheDefaultIsTheFirstDeviceThatAcceptsOne) {
  expect_in_fake_driver(CUDATOOL_FAKE_LIBCUDA, {{"FAKE_CUDA_CTX_FAIL", "0"}}, [](FakeChecks& c) {
    const Context context = make_default_context(std::nullopt, "--device");
    c.expect(context.device().ordinal() == 1, "device 0 refused: device 1");
    c.expect_throw<Error>([] { make_default_context(std::string("0"), "--device"); },
                          "a device chosen explicitly is not replaced by another");
  });
  expect_in_fake_driver(CUDATOOL_FAKE_LIBCUDA, {{"FAKE_CUDA_CTX_FAIL", "0,1"}}, [](FakeChecks& c) {
    try {
      make_default_context(std::nullopt, "--device");
      c.expect(false, "no device accepts a context");
    } catch (const RuntimeError& e) {
      const std::string why = e.what();
      c.expect(e.code() == CUDA_ERROR_UNKNOWN, "the last driver result");
      c.expect(why.find("no device accepted a context") != std::string::npos &&
                   why.find("device 0: ") != std::string::npos &&
                   why.find("device 1: ") != std::string::npos,
               "each device's failure named: " + why);
    }
  });
}

}  // namespace

class ContextGpu : public cudatool::testing::GpuTest {};

TEST_F(ContextGpu, ContextIsRetainedAndReleased) {
  const Device& d = device();
  {
    Context context(d);
    EXPECT_TRUE(primary_context_active(d));
    context.synchronize();
    Context moved = std::move(context);
    EXPECT_NE(moved.handle(), nullptr);
  }
  // Our retain was the only one: releasing it deactivates the primary context.
  EXPECT_FALSE(primary_context_active(d));
}

TEST_F(ContextGpu, DefaultContextFollowsSelection) {
  Context context = make_default_context(std::to_string(device().ordinal()), "--device");
  EXPECT_EQ(context.device(), device());
  EXPECT_THROW(make_default_context(std::string("99"), "--device"), DeviceNotFoundError);
}
