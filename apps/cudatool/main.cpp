// cudatool: parses the command line, runs one subcommand, and maps every error to the
// tool's exit codes (cudatool/base/exit_status.hpp) in this one place.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "command.hpp"
#include "cudatool/base/error.hpp"
#include "cudatool/base/exit_status.hpp"

namespace {

using cudatool::ExitStatus;

std::string one_line(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  for (auto& c : text)
    if (c == '\n') c = ' ';
  return text;
}

int report(const std::exception& e, bool json) {
  const ExitStatus status = cudatool::exit_status_for(e);
  const std::string message = one_line(e.what());
  std::cerr << "cudatool: " << message << '\n';
  if (json) {
    nlohmann::json error = {{"status", cudatool::exit_status_name(status)},
                            {"exit_code", cudatool::to_int(status)},
                            {"message", message}};
    if (const auto* cuda = dynamic_cast<const cudatool::Error*>(&e); cuda && cuda->code()) {
      error["call"] = cuda->call();
      error["cuda_error"] = cuda->code_name();
      error["cuda_error_code"] = cuda->code();
    }
    if (const auto* compile = dynamic_cast<const cudatool::CompileError*>(&e)) {
      error["log"] = compile->log();
      error["options"] = compile->options();
      error["compiler_version"] = compile->compiler_version();
    }
    std::cout << nlohmann::json{{"error", error}}.dump(2) << '\n';
  }
  return cudatool::to_int(status);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"cudatool: the truth about your CUDA GPUs", "cudatool"};
  app.set_version_flag("--version", std::string("cudatool ") + CUDATOOL_VERSION);
  app.require_subcommand(1);
  app.footer(
      "Exit codes: 0 ok, 1 internal error, 2 usage, 3 no driver, 4 no device or "
      "requirement unmet, 5 CUDA error, 6 compile error, 7 out of memory, 8 mismatch. "
      "See cudatool(1).");

  cudatool::app::GlobalOptions global;
  std::vector<cudatool::app::Command> commands = {
      cudatool::app::add_devices(app, global),    cudatool::app::add_attrs(app, global),
      cudatool::app::add_compile(app, global),    cudatool::app::add_bench_pool(app, global),
      cudatool::app::add_occupancy(app, global),  cudatool::app::add_kernels(app, global),
      cudatool::app::add_completion(app, global),
  };

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // CLI11's own codes (100-114) become the tool's usage code, with one line on stderr.
    std::string message = one_line(e.what());
    if (app.get_subcommands().empty() && argc > 1 && argv[1][0] != '-') {
      std::string names;
      for (const CLI::App* sub : app.get_subcommands({}))
        names += (names.empty() ? "" : ", ") + sub->get_name();
      message = std::string("unknown command '") + argv[1] + "' (commands: " + names + ")";
    }
    const auto parsed = app.get_subcommands();
    const std::string help =
        parsed.empty() ? "cudatool --help" : "cudatool " + parsed.back()->get_name() + " --help";
    std::cerr << "cudatool: " << message << " (see '" << help << "')\n";
    return cudatool::to_int(ExitStatus::usage);
  }

  for (const auto& command : commands) {
    if (!command.app->parsed()) continue;
    try {
      return cudatool::to_int(command.run());
    } catch (const std::exception& e) {
      return report(e, global.json);
    }
  }
  return cudatool::to_int(ExitStatus::usage);
}
