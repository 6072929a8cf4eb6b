// The root command line of the executable (main.cpp): the version flag, the footer, and every
// subcommand; and the parsing of one command's further flags for the Python module.
#include <cuda.h>

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "command.hpp"
#include "cudatool/base/text.hpp"
#include "render.hpp"

namespace cudatool::app {

std::vector<Command> add_commands(CLI::App& root, GlobalOptions& global) {
  // The version, and the CUDA headers (cuda.h's CUDA_VERSION) the tool was built with: what
  // it knows of the driver's API and of the attributes it can name.
  root.set_version_flag("--version", std::string("cudatool ") + CUDATOOL_VERSION +
                                         "\nbuilt with the CUDA " +
                                         std::to_string(CUDA_VERSION / 1000) + "." +
                                         std::to_string(CUDA_VERSION % 1000 / 10) + " headers");
  root.require_subcommand(1);
  root.footer(
      "Exit codes: 0 ok, 1 internal error, 2 usage, 3 no driver, 4 no device or "
      "requirement unmet, 5 CUDA error, 6 compile error, 7 out of memory, 8 mismatch, 9 a check "
      "failed (cudatool check), 10 an unreadable entry in a readable file (cudatool kernels, "
      "compat), 11 some code cannot run on a target GPU (cudatool compat), 12 some code runs only "
      "by JIT and --require native (cudatool compat), 13 a regression (cudatool kernels "
      "--fail-on). See cudatool(1).");
  std::vector<Command> commands = {
      add_devices(root, global),    add_attrs(root, global),     add_compile(root, global),
      add_bench_pool(root, global), add_occupancy(root, global), add_kernels(root, global),
      add_completion(root, global), add_check(root, global),     add_compat(root, global),
  };
  // The format, parsed once before any action runs.
  for (Command& command : commands)
    command.run = [run = std::move(command.run), &global] {
      global.format = parse_format(global.flags);
      return run();
    };
  return commands;
}

std::string parse_error_message(const CLI::App& root, const CLI::ParseError& error,
                                const std::vector<std::string>& arguments) {
  std::string message = one_line(error.what());
  if (root.get_subcommands().empty() && arguments.size() > 1) {
    std::string names;
    for (const CLI::App* sub : root.get_subcommands({}))
      names += (names.empty() ? "" : ", ") + sub->get_name();
    const std::string& first = arguments[1];
    if (first.empty() || first[0] != '-')
      message = "unknown command " + quote_input(first) + " (commands: " + names + ")";
    else if (first != "-" && first != "--")
      // An option before any command: name it (CLI11 says only that a command is required).
      message = "unknown option " + quote_input(first) +
                " (options go after the command; commands: " + names + ")";
  }
  const auto parsed = root.get_subcommands();
  const std::string help =
      parsed.empty() ? "cudatool --help" : "cudatool " + parsed.back()->get_name() + " --help";
  return message + " (see '" + help + "')";
}

void parse_command_options(CLI::App& sub, const std::vector<std::string>& arguments) {
  std::vector<std::string> reversed(arguments.rbegin(), arguments.rend());  // as CLI11 takes them
  try {
    sub.parse(reversed);
  } catch (const CLI::ParseError& e) {
    throw UsageError(one_line(e.what()) + " (see 'cudatool " + sub.get_name() + " --help')");
  }
}

}  // namespace cudatool::app
