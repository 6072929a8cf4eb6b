// `cudatool completion bash|zsh|fish` is generated from the parser: each script is loaded
// into its real shell and asked to complete command lines, as a user's TAB would.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "process.hpp"

using namespace cudatool::testing;

namespace {

class CliCompletion : public ::testing::Test {
 protected:
  void TearDown() override {
    for (const auto& path : files_) std::filesystem::remove(path);
  }
  // The script for `shell`, written to a temporary file.
  std::string script(const std::string& shell) {
    const auto r = run_cudatool({"completion", shell});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const auto path = std::filesystem::temp_directory_path() /
                      ("cudatool-completion-" + std::to_string(::getpid()) + "." + shell);
    std::ofstream(path) << r.out;
    files_.push_back(path);
    return path.string();
  }
  std::vector<std::filesystem::path> files_;
};

// The words bash's completion offers for `words` (the last one being completed).
std::string bash_complete(const std::string& script, const std::string& words, int cword) {
  const auto b = run_process("/bin/bash", {"-c", "source " + script + " && COMP_WORDS=(" + words +
                                                     ") COMP_CWORD=" + std::to_string(cword) +
                                                     " && _cudatool && echo \"${COMPREPLY[*]}\""});
  EXPECT_EQ(b.exit_code, 0) << b.err;
  return b.out;
}

TEST_F(CliCompletion, Bash) {
  const std::string path = script("bash");
  EXPECT_EQ(bash_complete(path, "cudatool dev", 1), "devices\n");
  EXPECT_EQ(bash_complete(path, "cudatool devices --min-c", 2), "--min-cc --min-count\n");
  EXPECT_EQ(bash_complete(path, "cudatool completion z", 2), "zsh\n");
  // A positional argument with choices: the choices, not the flags (whose common "-" bash
  // would insert); the flags where the word starts with "-".
  EXPECT_EQ(bash_complete(path, "cudatool completion ''", 2), "bash zsh fish\n");
  EXPECT_EQ(bash_complete(path, "cudatool completion -", 2), "--help --json -h\n");
  // An option's value: its choices, or nothing where none can be guessed.
  EXPECT_EQ(bash_complete(path, "cudatool kernels --sort ''", 3),
            "name regs shared local const threads barriers occupancy\n");
  EXPECT_EQ(bash_complete(path, "cudatool kernels --threads ''", 3), "\n");
  EXPECT_EQ(bash_complete(path, "cudatool kernels --fail-on ''", 3),
            "registers spills local shared barriers occupancy code_size size removed\n");
  EXPECT_EQ(bash_complete(path, "cudatool kernels --sizes --mark", 3), "--markdown\n");
  // --baseline takes a file.
  EXPECT_EQ(bash_complete(path, "cudatool kernels --baseline /proc/sel", 3), "/proc/self\n");
  EXPECT_EQ(bash_complete(path, "cudatool check --format = pro", 4), "prometheus\n");
  EXPECT_EQ(bash_complete(path, "cudatool compile --cache-d", 2), "--cache-dir\n");
  // After an option that takes a directory, directories.
  EXPECT_EQ(bash_complete(path, "cudatool compile -I /proc/sel", 3), "/proc/self\n");
}

// zsh through tests/support/complete.zsh: an interactive zsh on a pseudo-terminal with
// compinit, the generated _cudatool on $fpath, the line typed and TAB pressed.
std::string zsh_complete(const std::string& script, const std::string& line) {
  const auto z = run_process(
      "/usr/bin/timeout",
      {"60", "zsh", "-f", CUDATOOL_SOURCE_DIR "/tests/support/complete.zsh", script, line});
  EXPECT_EQ(z.exit_code, 0) << z.err;
  return z.out;
}

// Whether `shell` is on PATH (the GPU machine has no zsh or fish: those tests skip there).
bool have_shell(const std::string& shell) {
  return run_process("/bin/sh", {"-c", "command -v " + shell}).exit_code == 0;
}

TEST_F(CliCompletion, Zsh) {
  if (!have_shell("zsh")) GTEST_SKIP() << "zsh is not installed";
  const std::string path = script("zsh");
  EXPECT_EQ(zsh_complete(path, "cudatool dev"), "devices\n");
  EXPECT_EQ(zsh_complete(path, "cudatool devices --min-c"), "--min-cc\n--min-count\n");
  EXPECT_EQ(zsh_complete(path, "cudatool completion "), "bash\nfish\nzsh\n");
  // An option's value is skipped: --arch sm_90 is one option, then --thr is completed.
  EXPECT_EQ(zsh_complete(path, "cudatool occupancy --arch sm_90 --thr"), "--threads\n");
  // A non-repeatable option already given is not offered again; a repeatable one is.
  EXPECT_EQ(zsh_complete(path, "cudatool devices --json --js"), "");
  EXPECT_EQ(zsh_complete(path, "cudatool compile -D A --def"), "--define\n");
}

// fish: `complete -C` asks fish's completion for a command line, after sourcing the script.
std::string fish_complete(const std::string& script, const std::string& line) {
  const auto f = run_process(
      "/usr/bin/fish", {"--no-config", "-c", "source " + script + "; complete -C '" + line + "'"});
  EXPECT_EQ(f.exit_code, 0) << f.err;
  return f.out;
}

TEST_F(CliCompletion, Fish) {
  if (!have_shell("fish")) GTEST_SKIP() << "fish is not installed";
  const std::string path = script("fish");
  EXPECT_EQ(fish_complete(path, "cudatool dev"), "devices\tList the visible CUDA devices\n");
  const std::string min = fish_complete(path, "cudatool devices --min-c");
  EXPECT_NE(min.find("--min-cc\t"), std::string::npos) << min;
  EXPECT_NE(min.find("--min-count\t"), std::string::npos) << min;
  EXPECT_EQ(fish_complete(path, "cudatool completion "), "bash\nfish\nzsh\n");
  // Subcommand flags are not offered before the subcommand.
  EXPECT_EQ(fish_complete(path, "cudatool --min-c"), "");
}

TEST_F(CliCompletion, EveryCommandAndFlagIsInEveryScript) {
  for (const char* shell : {"bash", "zsh", "fish"}) {
    const auto r = run_cudatool({"completion", shell});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    for (const char* word : {"devices", "attrs", "occupancy", "compile", "bench-pool", "completion",
                             "min-count", "include-dir", "sweep-regs", "backend"})
      EXPECT_NE(r.out.find(word), std::string::npos) << shell << ": " << word;
  }
}

TEST_F(CliCompletion, UnknownShellIsAUsageError) {
  const auto r = run_cudatool({"completion", "tcsh"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unsupported shell 'tcsh' (supported: bash, zsh, fish)"), std::string::npos)
      << r.err;
}

}  // namespace
