// PhaseTrace: steps only where its test hook is set, each " name@<ms>ms", in order; take()
// hands them over once.
#include "base/phase_trace.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <regex>
#include <string>
#include <thread>
#include <vector>

namespace cudatool {
namespace {

TEST(PhaseTrace, StepsOnlyWhereTheHookIsSetAndTakenOnce) {
  ::unsetenv("CUDATOOL_TEST_PHASE_TRACE_UNIT");
  PhaseTrace off("CUDATOOL_TEST_PHASE_TRACE_UNIT");
  off.step("start");
  EXPECT_FALSE(off.on());
  EXPECT_EQ(off.take(), "");

  ::setenv("CUDATOOL_TEST_PHASE_TRACE_UNIT", "1", 1);
  PhaseTrace on("CUDATOOL_TEST_PHASE_TRACE_UNIT");
  ::unsetenv("CUDATOOL_TEST_PHASE_TRACE_UNIT");
  ASSERT_TRUE(on.on());  // read once, when made
  on.step("start");
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) threads.emplace_back([&] { on.step("worker"); });
  for (auto& t : threads) t.join();
  on.step("done");
  const std::string steps = on.take();
  EXPECT_TRUE(std::regex_match(
      steps,
      std::regex(R"( start@[0-9]+\.[0-9]ms( worker@[0-9]+\.[0-9]ms){4} done@[0-9]+\.[0-9]ms)")))
      << steps;
  EXPECT_EQ(on.take(), "");
}

}  // namespace
}  // namespace cudatool
