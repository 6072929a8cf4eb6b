// libFuzzer harness: a compile_commands.json "command" split as a shell would
// (split_command_line, lib/src/compile/compile_commands.cpp) and the check of what nvcc would
// hand to /bin/sh (nvcc_argument_hazard, lib/src/compile/process.cpp). Whatever the check
// lets through holds no character a shell acts on inside nvcc's double quotes ($, backquote,
// backslash, control characters), and a refusal is one line.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "cudatool/compile/compile_commands.hpp"
#include "cudatool/compile/process.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::vector<std::string> words = cudatool::split_command_line(text);
  const auto problem = cudatool::nvcc_argument_hazard(words);
  if (problem) {
    if (problem->find('\n') != std::string::npos) std::abort();
    return 0;
  }
  for (const auto& w : words)
    for (const char ch : w) {
      const auto c = static_cast<unsigned char>(ch);
      if (c == '$' || c == '`' || c == '\\' || c < 0x20 || c == 0x7f) std::abort();
    }
  return 0;
}
