// cudatool: parses the command line, runs one subcommand, and maps every error to the
// tool's exit codes (cudatool/base/exit_status.hpp) in this one place.
#include <fcntl.h>
#include <unistd.h>

#include <cuda.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "command.hpp"
#include "cudatool/base/error.hpp"
#include "cudatool/base/exit_status.hpp"
#include "cudatool/base/text.hpp"
#include "render.hpp"

namespace {

using cudatool::ExitStatus;

// An error message as one printable line: newlines become blanks, other control characters
// and bytes that are not UTF-8 are escaped (text.hpp), and the whole is cut at kMaxMessageLine
// (render.hpp). Values inside are already cut where they are echoed (quote_input()); this is the
// backstop.
std::string one_line(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  for (auto& c : text)
    if (c == '\n') c = ' ';
  return cudatool::printable(text, cudatool::app::kMaxMessageLine);
}

// A closed standard descriptor would be reused by the next open(): an output file would
// then receive what is meant for stdout. Each closed one is opened on /dev/null, stdout
// and stderr read-only, so that writing to them still fails and is reported.
void guard_standard_descriptors() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    const int opened = ::open("/dev/null", O_RDONLY | O_NOCTTY);
    if (opened >= 0 && opened != fd) {
      ::dup2(opened, fd);
      ::close(opened);
    }
  }
}

// Standard output, flushed and checked: everything a command printed must have been
// written. A failure (a full disk, a closed or read-only stdout) is one line on stderr and
// exit 1, unless the command failed already (its own status and line stand).
int finish(int status) {
  errno = 0;
  std::cout.flush();
  const bool failed = !std::cout.good() || std::fflush(stdout) != 0 || std::ferror(stdout);
  if (!failed) return status;
  const int error = errno;
  if (status == 0) {
    std::cerr << "cudatool: cannot write standard output"
              << (error != 0 ? std::string(": ") + std::strerror(error) : std::string()) << '\n';
    status = cudatool::to_int(ExitStatus::failure);
  }
  return status;
}

// The error document of --json on stdout (cudatool(1), JSON OUTPUT), with what `e` adds
// where it is a CUDA or compile error. Reporting must never fail in turn: the JSON goes
// through print_json (invalid UTF-8 replaced), and anything that still throws here leaves
// the line on stderr as the report.
void print_error_document(ExitStatus status, const std::string& message, const std::exception* e) {
  try {
    nlohmann::json error = {{"status", cudatool::exit_status_name(status)},
                            {"exit_code", cudatool::to_int(status)},
                            {"message", message}};
    if (const auto* cuda = dynamic_cast<const cudatool::Error*>(e); cuda && cuda->code()) {
      error["call"] = cuda->call();
      error["cuda_error"] = cuda->code_name();
      error["cuda_error_code"] = cuda->code();
    }
    if (const auto* compile = dynamic_cast<const cudatool::CompileError*>(e)) {
      error["log"] = compile->log();
      error["options"] = compile->options();
      error["compiler_version"] = compile->compiler_version();
    }
    cudatool::app::print_json(nlohmann::json{{"error", error}});
  } catch (...) {
  }
}

int report(const std::exception& e, bool json) {
  const ExitStatus status = cudatool::exit_status_for(e);
  std::string message;
  try {
    message = one_line(e.what());
  } catch (...) {
    message = "out of memory while reporting an error";
  }
  std::cerr << "cudatool: " << message << '\n';
  if (json) print_error_document(status, message, &e);
  return cudatool::to_int(status);
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
  guard_standard_descriptors();
  CLI::App app{"cudatool: the truth about your CUDA GPUs", "cudatool"};
  // The version, and the CUDA headers (cuda.h's CUDA_VERSION) the tool was built with: what
  // it knows of the driver's API and of the attributes it can name.
  app.set_version_flag("--version", std::string("cudatool ") + CUDATOOL_VERSION +
                                        "\nbuilt with the CUDA " +
                                        std::to_string(CUDA_VERSION / 1000) + "." +
                                        std::to_string(CUDA_VERSION % 1000 / 10) + " headers");
  app.require_subcommand(1);
  app.footer(
      "Exit codes: 0 ok, 1 internal error, 2 usage, 3 no driver, 4 no device or "
      "requirement unmet, 5 CUDA error, 6 compile error, 7 out of memory, 8 mismatch, 9 a check "
      "failed (cudatool check). "
      "See cudatool(1).");

  cudatool::app::GlobalOptions global;
  std::vector<cudatool::app::Command> commands = {
      cudatool::app::add_devices(app, global),    cudatool::app::add_attrs(app, global),
      cudatool::app::add_compile(app, global),    cudatool::app::add_bench_pool(app, global),
      cudatool::app::add_occupancy(app, global),  cudatool::app::add_kernels(app, global),
      cudatool::app::add_completion(app, global), cudatool::app::add_check(app, global),
  };

  std::vector<std::string> arguments(argv, argv + argc);
  if (argc > 1 && arguments[1] == "compile")
    arguments = cudatool::app::normalize_compile_arguments(arguments);
  std::vector<char*> pointers;
  for (auto& a : arguments) pointers.push_back(a.data());
  pointers.push_back(nullptr);

  try {
    app.parse(argc, pointers.data());
  } catch (const CLI::CallForHelp& e) {
    return finish(app.exit(e));
  } catch (const CLI::CallForAllHelp& e) {
    return finish(app.exit(e));
  } catch (const CLI::CallForVersion& e) {
    return finish(app.exit(e));
  } catch (const CLI::ParseError& e) {
    // CLI11's own codes (100-114) become the tool's usage code, with one line on stderr.
    std::string message = one_line(e.what());
    if (app.get_subcommands().empty() && argc > 1 && argv[1][0] == '-' &&
        std::string_view(argv[1]) != "-" && std::string_view(argv[1]) != "--") {
      // An option before any command: name it (CLI11 says only that a command is required).
      std::string names;
      for (const CLI::App* sub : app.get_subcommands({}))
        names += (names.empty() ? "" : ", ") + sub->get_name();
      message = "unknown option " + cudatool::quote_input(argv[1]) +
                " (options go after the command; commands: " + names + ")";
    } else if (app.get_subcommands().empty() && argc > 1 && argv[1][0] != '-') {
      std::string names;
      for (const CLI::App* sub : app.get_subcommands({}))
        names += (names.empty() ? "" : ", ") + sub->get_name();
      message = "unknown command " + cudatool::quote_input(argv[1]) + " (commands: " + names + ")";
    }
    const auto parsed = app.get_subcommands();
    const std::string help =
        parsed.empty() ? "cudatool --help" : "cudatool " + parsed.back()->get_name() + " --help";
    message += " (see '" + help + "')";
    std::cerr << "cudatool: " << message << '\n';
    if (asks_for_json(arguments)) print_error_document(ExitStatus::usage, message, nullptr);
    return finish(cudatool::to_int(ExitStatus::usage));
  }

  for (const auto& command : commands) {
    if (!command.app->parsed()) continue;
    int status = 0;
    try {
      status = cudatool::to_int(command.run());
    } catch (const std::exception& e) {
      status = report(e, global.json);
    }
    return finish(status);
  }
  return cudatool::to_int(ExitStatus::usage);
}
