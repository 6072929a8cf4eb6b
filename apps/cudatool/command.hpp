// How a subcommand plugs into main: each subcommand file defines one add_<name>()
// that declares its options on a CLI11 subcommand and returns the action to run after
// parsing. Actions return an exit status or throw; main maps exceptions to exit codes
// (cudatool/base/exit_status.hpp) in one place.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cudatool/base/exit_status.hpp"

namespace cudatool::app {

// Options every subcommand shares.
struct GlobalOptions {
  bool json = false;  // --json: machine-readable output on stdout
};

struct Command {
  CLI::App* app = nullptr;
  std::function<ExitStatus()> run;
};

// Adds the shared --json flag to a subcommand.
inline void add_json_flag(CLI::App& sub, GlobalOptions& global) {
  sub.add_flag("--json", global.json, "Print JSON for scripts instead of text");
}

// Adds --fresh to a subcommand that answers from the device cache (device_cache.hpp).
inline void add_fresh_flag(CLI::App& sub, bool& fresh) {
  sub.add_flag("--fresh", fresh,
               "Ask the driver (cuInit) instead of the device cache, and refresh the cache "
               "(also CUDATOOL_FRESH=1)");
}

Command add_devices(CLI::App& root, GlobalOptions& global);
Command add_attrs(CLI::App& root, GlobalOptions& global);
Command add_occupancy(CLI::App& root, GlobalOptions& global);
Command add_compile(CLI::App& root, GlobalOptions& global);
// `compile`'s nvcc-style spellings (-rdc, -lineinfo, -Xptxas VALUE) as the long options
// CLI11 can declare; main applies it to the arguments of `cudatool compile ...`.
std::vector<std::string> normalize_compile_arguments(const std::vector<std::string>& args);
Command add_bench_pool(CLI::App& root, GlobalOptions& global);
Command add_completion(CLI::App& root, GlobalOptions& global);
Command add_check(CLI::App& root, GlobalOptions& global);
Command add_kernels(CLI::App& root, GlobalOptions& global);

// The whole command line (commands.cpp): the version flag, the footer and every subcommand
// above, for the executable and for the in-process runner alike.
std::vector<Command> add_commands(CLI::App& root, GlobalOptions& global);
// The one line a command line that does not parse gets (CLI11's message, or the unknown
// command and the commands there are), with where to find help. `arguments` starts with
// the program's name.
std::string parse_error_message(const CLI::App& root, const CLI::ParseError& error,
                                const std::vector<std::string>& arguments);

}  // namespace cudatool::app
