// cudatool: parses the command line, runs one subcommand, and maps every error to the
// tool's exit codes (exit_status.hpp) in this one place: a line on stderr,
// and under --json the error document (error_json.hpp). Standard output is checked once the
// command ends (standard_output.hpp).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <new>
#include <string>
#include <vector>

#include "command.hpp"
#include "cudatool/base/error.hpp"
#include "error_json.hpp"
#include "exit_status.hpp"
#include "render.hpp"
#include "standard_output.hpp"

namespace {

using cudatool::app::ExitStatus;

int report(const std::exception& e, bool json) {
  // A signal while nvcc ran: the shell's convention, 128 + N, and no document (nothing was
  // asked of the run any more).
  if (const auto* interrupted = dynamic_cast<const cudatool::InterruptedError*>(&e)) {
    std::cerr << "cudatool: " << cudatool::app::one_line(e.what()) << '\n';
    return 128 + interrupted->signal_number();
  }
  const ExitStatus status = cudatool::app::exit_status_for(e);
  std::string message;
  try {
    // An allocation that failed where nothing named it: say what happened, not "std::bad_alloc".
    message = dynamic_cast<const std::bad_alloc*>(&e) ? "out of memory (an allocation failed)"
                                                      : cudatool::app::one_line(e.what());
  } catch (...) {
    message = "out of memory while reporting an error";
  }
  std::cerr << "cudatool: " << message << '\n';
  if (json) cudatool::app::print_error_document(status, message, &e);
  return cudatool::app::to_int(status);
}

// Whether --json is among the arguments (before a "--" that ends the options): a command
// line that does not parse has no parsed flags to ask, and a script that asked for JSON
// still gets the error document.
bool asks_for_json(const std::vector<std::string>& arguments) {
  for (std::size_t i = 1; i < arguments.size(); ++i) {
    if (arguments[i] == "--") return false;
    if (arguments[i] == "--json") return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  cudatool::app::guard_standard_descriptors();
  cudatool::app::use_standard_output();
  if (::isatty(STDOUT_FILENO)) std::cout << std::unitbuf;  // a terminal sees lines as they come
  CLI::App app{"cudatool: the truth about your CUDA GPUs", "cudatool"};
  cudatool::app::GlobalOptions global;
  const std::vector<cudatool::app::Command> commands = cudatool::app::add_commands(app, global);

  std::vector<std::string> arguments(argv, argv + argc);
  if (argc > 1 && arguments[1] == "compile")
    arguments = cudatool::app::normalize_compile_arguments(arguments);
  std::vector<char*> pointers;
  for (auto& a : arguments) pointers.push_back(a.data());
  pointers.push_back(nullptr);

  try {
    app.parse(argc, pointers.data());
  } catch (const CLI::CallForHelp& e) {
    return cudatool::app::finish(app.exit(e));
  } catch (const CLI::CallForAllHelp& e) {
    return cudatool::app::finish(app.exit(e));
  } catch (const CLI::CallForVersion& e) {
    return cudatool::app::finish(app.exit(e));
  } catch (const CLI::ParseError& e) {
    // CLI11's own codes (100-114) become the tool's usage code, with one line on stderr.
    const std::string message = cudatool::app::parse_error_message(app, e, arguments);
    std::cerr << "cudatool: " << message << '\n';
    if (asks_for_json(arguments))
      cudatool::app::print_error_document(ExitStatus::usage, message, nullptr);
    return cudatool::app::finish(cudatool::app::to_int(ExitStatus::usage));
  }

  for (const auto& command : commands) {
    if (!command.app->parsed()) continue;
    int status = 0;
    try {
      status = cudatool::app::to_int(command.run());
    } catch (const std::exception& e) {
      const bool json = global.flags.json || global.json();
      status = report(e, json);
      if (command.after_error) {
        try {
          command.after_error(status);
        } catch (const std::exception& second) {
          status = report(second, json);
        }
      }
    }
    return cudatool::app::finish(status);
  }
  return cudatool::app::to_int(ExitStatus::usage);
}
