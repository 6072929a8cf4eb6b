// The library's one stream and event (lib/src/device/stream.hpp): move-only, destroyed once,
// in the stream's own context whatever context the thread has current, and failures as the
// library's errors. Against the fake driver's streams (run in a child, fake_driver_child.hpp)
// and, where there is one, a real GPU (StreamGpu, skipped without).
#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <type_traits>
#include <utility>

#include "cudatool/base/error.hpp"
#include "cudatool/device/context.hpp"
#include "device/stream.hpp"
#include "driver/driver_api.hpp"
#include "fake_driver_child.hpp"
#include "gpu_test.hpp"

namespace cudatool::detail {
namespace {

using cudatool::testing::current_context;
using cudatool::testing::expect_in_fake_driver;
using cudatool::testing::fake_context;
using cudatool::testing::FakeChecks;

static_assert(!std::is_copy_constructible_v<Stream> && !std::is_copy_assignable_v<Stream>);
static_assert(std::is_nothrow_move_constructible_v<Stream> &&
              std::is_nothrow_move_assignable_v<Stream>);
static_assert(!std::is_copy_constructible_v<Event> && !std::is_copy_assignable_v<Event>);
static_assert(std::is_nothrow_move_constructible_v<Event> &&
              std::is_nothrow_move_assignable_v<Event>);

// What the fake driver counts, from the library the child loaded.
long long fake_count(const char* what) {
  return cudatool::testing::fake_count(CUDATOOL_FAKE_LIBCUDA_STREAMS, what);
}

TEST(Stream, MovesItsHandleAndIsDestroyedOnceInItsOwnContext) {
  expect_in_fake_driver(CUDATOOL_FAKE_LIBCUDA_STREAMS, {}, [](FakeChecks& c) {
    const CUcontext mine = fake_context(0), other = fake_context(1);
    CUDATOOL_CU(cuCtxSetCurrent, other);
    {
      Stream a(mine);
      const CUstream handle = a.get();
      c.expect(handle != nullptr && a.context() == mine, "made in its context");
      c.expect(current_context() == other, "the current context is as it was after making it");
      c.expect(fake_count("streams") == 1, "one stream");
      a.synchronize();

      Stream b(std::move(a));
      c.expect(a.get() == nullptr && a.context() == nullptr, "a moved-from stream holds none");
      c.expect(b.get() == handle && b.context() == mine, "the move carries handle and context");
      c.expect(fake_count("streams") == 1, "a move makes no stream");

      Stream d(other);
      c.expect(fake_count("streams") == 2, "two streams");
      d = std::move(b);
      c.expect(fake_count("streams") == 1, "move assignment destroys the stream it replaces");
      c.expect(d.get() == handle && d.context() == mine && b.get() == nullptr,
               "move assignment carries handle and context");
      Stream& same = d;
      d = std::move(same);
      c.expect(d.get() == handle && fake_count("streams") == 1, "self-assignment keeps it");
    }
    c.expect(fake_count("streams") == 0, "destroyed once its owner is gone (and only once)");
    c.expect(fake_count("wrong_context_destroys") == 0,
             "destroyed in its own context while another was current");
    c.expect(current_context() == other, "the current context is as it was after destroying");
  });
}

TEST(Stream, FailuresAreTheLibrarysErrorsAndLeaveTheCurrentContext) {
  // The plain fake has no streams or events: a driver too old for an entry point.
  expect_in_fake_driver(CUDATOOL_FAKE_LIBCUDA, {}, [](FakeChecks& c) {
    const CUcontext mine = fake_context(0), other = fake_context(1);
    CUDATOOL_CU(cuCtxSetCurrent, other);
    c.expect_throw<LibraryNotFoundError>([&] { Stream s(mine); }, "no cuStreamCreate");
    c.expect(current_context() == other, "the current context is as it was after the failure");
    c.expect_throw<LibraryNotFoundError>([] { Event e; }, "no cuEventCreate");
  });
  // No context: the driver's error, as the library's class; nothing is left made.
  expect_in_fake_driver(CUDATOOL_FAKE_LIBCUDA_STREAMS, {}, [](FakeChecks& c) {
    c.expect_throw<Error>([] { Stream s(nullptr); }, "a stream of no context");
    c.expect_throw<Error>([] { Event e; }, "an event with no context current");
    c.expect(fake_count("streams") == 0 && fake_count("events") == 0, "nothing made");
  });
}

TEST(Event, MovesItsHandleAndTimesOnlyRecordedEvents) {
  expect_in_fake_driver(CUDATOOL_FAKE_LIBCUDA_STREAMS, {}, [](FakeChecks& c) {
    CUDATOOL_CU(cuCtxSetCurrent, fake_context(0));
    const Stream stream(fake_context(0));
    {
      Event start, stop;
      c.expect(start.get() != nullptr && fake_count("events") == 2, "two events");
      c.expect_throw<Error>([&] { (void)stop.elapsed_ms_since(start); },
                            "timing events never recorded");
      start.record(stream);
      stop.record(stream);
      c.expect(stop.elapsed_ms_since(start) == 1.5f, "the driver's interval");

      const CUevent handle = start.get();
      Event moved(std::move(start));
      c.expect(start.get() == nullptr && moved.get() == handle, "a move carries the handle");
      c.expect(fake_count("events") == 2, "a move makes no event");
      stop = std::move(moved);
      c.expect(stop.get() == handle && moved.get() == nullptr, "move assignment carries it");
      c.expect(fake_count("events") == 1, "move assignment destroys the event it replaces");
    }
    c.expect(fake_count("events") == 0, "destroyed once its owner is gone (and only once)");
  });
}

class StreamGpu : public cudatool::testing::GpuTest {};

// The real driver: a stream made in a device's context from a thread with none current
// leaves none current, orders work, and its events time it; a moved-from pair holds nothing.
TEST_F(StreamGpu, WorksOnTheDeviceAndLeavesTheCurrentContext) {
  // The primary context, retained until the test ends (the library's own Context), and no
  // context current: the handles must work from a thread with none.
  const Context primary(device());
  const CUcontext context = primary.handle();
  CUDATOOL_CU(cuCtxSetCurrent, nullptr);
  {
    Stream stream(context);
    EXPECT_EQ(current_context(), nullptr);
    Stream owner(std::move(stream));
    EXPECT_EQ(stream.get(), nullptr);
    CUDATOOL_CU(cuCtxSetCurrent, context);
    Event start, stop;
    EXPECT_THROW((void)stop.elapsed_ms_since(start), Error);  // never recorded
    CUdeviceptr memory = 0;
    CUDATOOL_CU(cuMemAlloc, &memory, std::size_t{1} << 24);
    start.record(owner);
    CUDATOOL_CU(cuMemsetD8Async, memory, 7, std::size_t{1} << 24, owner.get());
    stop.record(owner);
    owner.synchronize();
    EXPECT_GE(stop.elapsed_ms_since(start), 0.0f);
    CUDATOOL_CU(cuMemFree, memory);
    CUDATOOL_CU(cuCtxSetCurrent, nullptr);
  }
  EXPECT_EQ(current_context(), nullptr) << "destroying it left a context current";
}

}  // namespace
}  // namespace cudatool::detail
