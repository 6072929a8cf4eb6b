// The library/CLI line (issue 21): the library names what failed and the caller's `source`
// (as parse_int(text, source) does); the app passes its flags as sources. So no string
// literal in lib/ names one of cudatool's flags: the flags are read from the command line
// itself (add_commands), the literals from every source file of the library.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "command.hpp"

namespace cudatool::app {
namespace {

namespace fs = std::filesystem;

// String literals that are the compilers' own options, spelled as nvcc and NVRTC spell them
// (cudatool's compile flags mirror them): the command lines the library gives nvcc and
// NVRTC, and the options it reads from a compile_commands.json entry. Each is the exact
// literal in its file; every one must still be there (a stale entry fails).
const std::set<std::pair<std::string, std::string>> kCompilerOptions = {
    {"lib/src/compile/compile_commands.cpp", "--device-debug"},
    {"lib/src/compile/compile_commands.cpp", "--maxrregcount"},
    {"lib/src/compile/compile_commands.cpp",
     "--maxrregcount of the compile_commands.json entry for "},
    {"lib/src/compile/compile_commands.cpp", "--std"},
    {"lib/src/compile/engine_inputs.cpp", "--maxrregcount="},
    {"lib/src/compile/engine_inputs.cpp", "--std="},
    {"lib/src/compile/nvcc_engine.cpp", "--keep"},
    {"lib/src/compile/nvcc_engine.cpp", "--version"},
};

// Every long option of the command line, "--device", "--fresh", ..., of every subcommand.
std::set<std::string> cudatool_flags() {
  CLI::App root{"cudatool", "cudatool"};
  GlobalOptions global;
  add_commands(root, global);
  std::set<std::string> flags;
  std::vector<const CLI::App*> apps = {&root};
  while (!apps.empty()) {
    const CLI::App* app = apps.back();
    apps.pop_back();
    for (const CLI::Option* option : app->get_options())
      for (const std::string& name : option->get_lnames()) flags.insert("--" + name);
    for (const CLI::App* sub : app->get_subcommands([](const CLI::App*) { return true; }))
      apps.push_back(sub);
  }
  return flags;
}

// The contents of the string literals of C++ source `text` (comments, character literals
// and numbers skipped; raw strings read to their delimiter; escapes left as written).
std::vector<std::string> string_literals(const std::string& text) {
  std::vector<std::string> literals;
  const std::size_t n = text.size();
  auto identifier_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
  };
  std::size_t i = 0;
  while (i < n) {
    const char c = text[i];
    if (c == '/' && i + 1 < n && text[i + 1] == '/') {
      i = text.find('\n', i);
      if (i == std::string::npos) break;
    } else if (c == '/' && i + 1 < n && text[i + 1] == '*') {
      i = text.find("*/", i + 2);
      if (i == std::string::npos) break;
      i += 2;
    } else if (std::isdigit(static_cast<unsigned char>(c)) != 0) {
      // A number, with its digit separators (1'000) and exponents (1e-3).
      while (i < n && (identifier_char(text[i]) || text[i] == '.' || text[i] == '\'' ||
                       ((text[i] == '-' || text[i] == '+') &&
                        std::string_view("eEpP").find(text[i - 1]) != std::string_view::npos)))
        ++i;
    } else if (identifier_char(c)) {
      const std::size_t start = i;
      while (i < n && identifier_char(text[i])) ++i;
      const std::string word = text.substr(start, i - start);
      const bool raw = word == "R" || word == "u8R" || word == "uR" || word == "UR" || word == "LR";
      if (raw && i < n && text[i] == '"') {
        const std::size_t open = text.find('(', i);
        if (open == std::string::npos) break;
        const std::string close = ")" + text.substr(i + 1, open - i - 1) + "\"";
        const std::size_t end = text.find(close, open + 1);
        if (end == std::string::npos) break;
        literals.push_back(text.substr(open + 1, end - open - 1));
        i = end + close.size();
      }
      // Other prefixes (u8"", L'') fall through to the quote on the next round.
    } else if (c == '"' || c == '\'') {
      std::string literal;
      ++i;
      while (i < n && text[i] != c && text[i] != '\n') {
        if (text[i] == '\\' && i + 1 < n) literal += text[i++];
        literal += text[i++];
      }
      ++i;
      if (c == '"') literals.push_back(literal);
    } else {
      ++i;
    }
  }
  return literals;
}

// The flags of `flags` that `literal` names: "--name" not followed by more of a name.
std::vector<std::string> flags_named(const std::string& literal,
                                     const std::set<std::string>& flags) {
  std::vector<std::string> named;
  for (std::size_t at = literal.find("--"); at != std::string::npos;
       at = literal.find("--", at + 2)) {
    if (at > 0 && literal[at - 1] == '-') continue;
    std::size_t end = at + 2;
    while (end < literal.size() &&
           (std::isalnum(static_cast<unsigned char>(literal[end])) != 0 || literal[end] == '-'))
      ++end;
    const std::string token = literal.substr(at, end - at);
    if (flags.count(token) != 0) named.push_back(token);
  }
  return named;
}

TEST(LibraryLine, TheCommandLinesFlagsAreRead) {
  const std::set<std::string> flags = cudatool_flags();
  for (const char* flag : {"--device", "--fresh", "--threads", "--arch", "--only", "--skip",
                           "--require-idle", "--max-used-memory", "--size", "--min-size"})
    EXPECT_EQ(flags.count(flag), 1u) << flag;
}

TEST(LibraryLine, LiteralsAreFoundAndCommentsSkipped) {
  const std::set<std::string> flags = {"--fresh", "--threads"};
  const std::string source = R"cpp(
    // "use --fresh" in a comment is not a message
    /* nor "--fresh" here */
    const int n = 1'000'000 + 0x1'0000 + 1e-3;
    const char c = '"';
    const auto s = "cannot start (try fewer --threads)";
    const auto r = R"x(raw --fresh)x";
    const auto t = "--threads-per-block and --fresher are other names";
  )cpp";
  std::vector<std::string> named;
  for (const std::string& literal : string_literals(source))
    for (const std::string& flag : flags_named(literal, flags)) named.push_back(flag);
  EXPECT_EQ(named, (std::vector<std::string>{"--threads", "--fresh"}));
}

TEST(LibraryLine, NoLibraryStringLiteralNamesACudatoolFlag) {
  const std::set<std::string> flags = cudatool_flags();
  const fs::path source_dir = CUDATOOL_SOURCE_DIR;
  std::size_t files = 0;
  std::set<std::pair<std::string, std::string>> compiler_options_seen;
  for (const char* tree : {"lib/src", "lib/include"}) {
    for (const auto& entry : fs::recursive_directory_iterator(source_dir / tree)) {
      const std::string extension = entry.path().extension().string();
      if (!entry.is_regular_file() ||
          (extension != ".cpp" && extension != ".hpp" && extension != ".h" && extension != ".cu"))
        continue;
      const std::string relative = entry.path().lexically_relative(source_dir).generic_string();
      std::ifstream in(entry.path());
      std::stringstream text;
      text << in.rdbuf();
      ++files;
      for (const std::string& literal : string_literals(text.str()))
        for (const std::string& flag : flags_named(literal, flags))
          if (kCompilerOptions.count({relative, literal}))
            compiler_options_seen.insert({relative, literal});
          else
            ADD_FAILURE() << relative << ": \"" << literal << "\" names cudatool's " << flag
                          << ": take a source from the caller (the app passes \"" << flag << "\")";
    }
  }
  EXPECT_GT(files, 50u);  // the library was found
  for (const auto& [file, literal] : kCompilerOptions)
    EXPECT_TRUE(compiler_options_seen.count({file, literal}))
        << file << ": \"" << literal << "\" is no longer there: drop it from kCompilerOptions";
}

}  // namespace
}  // namespace cudatool::app
