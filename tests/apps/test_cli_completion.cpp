// `cudatool completion bash` is generated from the parser: it must be valid bash and know
// every command and its flags.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "process.hpp"

using namespace cudatool::testing;

TEST(CliCompletion, BashScriptIsValidAndComplete) {
  const auto r = run_cudatool({"completion", "bash"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* word :
       {"devices", "attrs", "--min-count", "--device", "complete -F _cudatool cudatool"})
    EXPECT_NE(r.out.find(word), std::string::npos) << word;
  const auto path = std::filesystem::temp_directory_path() /
                    ("cudatool-completion-" + std::to_string(::getpid()) + ".bash");
  std::ofstream(path) << r.out;
  // Source it and complete "cudatool dev" and "cudatool devices --min-c".
  const std::string script =
      "source " + path.string() +
      " && COMP_WORDS=(cudatool dev) COMP_CWORD=1 && _cudatool && echo \"${COMPREPLY[*]}\""
      " && COMP_WORDS=(cudatool devices --min-c) COMP_CWORD=2 && _cudatool && echo "
      "\"${COMPREPLY[*]}\"";
  const auto b = run_process("/bin/bash", {"-c", script});
  std::filesystem::remove(path);
  EXPECT_EQ(b.exit_code, 0) << b.err;
  EXPECT_EQ(b.out, "devices\n--min-cc --min-count\n") << b.err;
}

TEST(CliCompletion, UnknownShellIsAUsageError) {
  const auto r = run_cudatool({"completion", "fish"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unsupported shell 'fish'"), std::string::npos) << r.err;
}
