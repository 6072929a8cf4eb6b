// Every flag that takes an architecture accepts and refuses the same strings (one grammar,
// lib/src/base/arch.cpp), run through the real binary. What a command then does with a
// well-formed name (the table has no row for it, CUDA 13 cannot compile it, no driver) is
// policy and differs; the grammar's refusal is one message for all of them.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "process.hpp"

using namespace cudatool::testing;

namespace {

std::string source_file() {
  return std::string(CUDATOOL_SOURCE_DIR) + "/tests/data/compile/saxpy.cu";
}

struct Flag {
  std::string name;  // as the message names it
  std::vector<std::string> before, after;
};

// Each architecture-taking flag of each command, with what it needs around it.
std::vector<Flag> flags() {
  return {
      {"--arch", {"occupancy", "--threads", "256", "--arch"}, {}},
      {"--arch",
       {"occupancy", "--kernel-from", "/nonexistent.o", "--kernel", "k", "--threads", "128",
        "--arch"},
       {}},
      {"--arch", {"kernels", "/nonexistent.o", "--arch"}, {}},
      {"--arch", {"compile", source_file(), "--no-cache", "--ptx", "--arch"}, {}},
      {"--min-cc", {"devices", "--min-cc"}, {}},
      {"--min-cc", {"check", "--min-cc"}, {}},
  };
}

std::string grammar_message(const std::string& flag, const std::string& quoted) {
  return "cudatool: " + flag + " " + quoted +
         ": expected an architecture such as sm_90, sm_90a, sm_100f, compute_90 or 9.0\n";
}

ProcessResult run_with(const Flag& f, const std::string& value) {
  std::vector<std::string> args = f.before;
  args.push_back(value);
  args.insert(args.end(), f.after.begin(), f.after.end());
  return run_cudatool(args, without_driver());
}

TEST(CliArchitecture, EveryFlagRefusesTheSameMalformedNames) {
  struct Bad {
    std::string value, quoted;
  };
  for (const Bad& bad :
       {Bad{"SM_90", "\"SM_90\""}, Bad{" sm_90", "\" sm_90\""}, Bad{"sm_90 ", "\"sm_90 \""},
        Bad{"sm_9", "\"sm_9\""}, Bad{"sm_1234", "\"sm_1234\""}, Bad{"sm_090", "\"sm_090\""},
        Bad{"sm_90x", "\"sm_90x\""}, Bad{"banana", "\"banana\""}, Bad{"9", "\"9\""},
        Bad{"9.10", "\"9.10\""}, Bad{"compute_", "\"compute_\""},
        Bad{"sm_\x1b[31m", "\"sm_\\x1b[31m\""}}) {
    for (const Flag& f : flags()) {
      SCOPED_TRACE(f.before.front() + " " + f.name + " " + bad.quoted);
      const auto r = run_with(f, bad.value);
      EXPECT_EQ(r.exit_code, 2);
      EXPECT_EQ(r.err, grammar_message(f.name, bad.quoted));
      EXPECT_EQ(r.out, "");
    }
  }
}

TEST(CliArchitecture, EveryFlagAcceptsTheSameWellFormedNames) {
  for (const char* good : {"sm_90", "sm_90a", "sm_100f", "compute_90", "compute_100a", "9.0",
                           "12.1", "sm_75", "sm_70", "sm_99", "sm_999", "1.0"}) {
    for (const Flag& f : flags()) {
      SCOPED_TRACE(f.before.front() + " " + f.name + " " + good);
      const auto r = run_with(f, good);
      // Past the grammar: a policy answer (no table row, not compilable by CUDA 13, no such
      // file, no driver) or a result, never the grammar's refusal.
      EXPECT_EQ(r.err.find("expected an architecture"), std::string::npos) << r.err;
      EXPECT_NE(r.exit_code, 1) << r.err;
    }
  }
}

// A list splits the same way in both commands that take one.
TEST(CliArchitecture, ListsRefuseEmptyEntriesAlike) {
  for (const char* item : {"sm_90,", ",sm_90", "sm_80,,sm_90"}) {
    const std::string list = item;
    for (const Flag& f : flags()) {
      if (f.before.front() != "kernels" && f.before.front() != "compile") continue;
      SCOPED_TRACE(f.before.front() + " " + list);
      const auto r = run_with(f, list);
      EXPECT_EQ(r.exit_code, 2);
      EXPECT_EQ(r.err, "cudatool: --arch \"" + list +
                           "\": an empty entry in the list (expected e.g. sm_80,sm_90)\n");
    }
  }
}

}  // namespace
