// How a subcommand plugs into main: each subcommand file defines one add_<name>()
// that declares its options on a CLI11 subcommand and returns the action to run after
// parsing. Actions return an exit status or throw; main maps exceptions to exit codes
// (exit_status.hpp) in one place.
#pragma once

#include <CLI/CLI.hpp>
#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cudatool/base/error.hpp"
#include "cudatool/occupancy/device_data.hpp"
#include "exit_status.hpp"
#include "format.hpp"

namespace cudatool::app {

// Options every subcommand shares.
struct GlobalOptions {
  FormatFlags flags;             // --json, and --format where the command has it
  Format format = Format::text;  // what they ask for (format.hpp), parsed before the action
  bool json() const { return format == Format::json; }
};

struct Command {
  CLI::App* app = nullptr;
  std::function<ExitStatus()> run;
  // Where set, main calls it with the exit code of an exception `run` threw, once it has
  // reported the error: a command whose document stands whatever happens writes it here
  // (check's Prometheus textfile and NFD feature file).
  std::function<void(int exit_code)> after_error = {};
};

// Adds the shared --json flag to a subcommand.
inline void add_json_flag(CLI::App& sub, GlobalOptions& global) {
  sub.add_flag("--json", global.flags.json, "Print JSON for scripts instead of text");
}

// Adds --fresh to a subcommand that answers from the device cache (device_cache.hpp).
inline void add_fresh_flag(CLI::App& sub, bool& fresh) {
  sub.add_flag("--fresh", fresh,
               "Ask the driver (cuInit) instead of the device cache, and refresh the cache "
               "(also CUDATOOL_FRESH=1)");
}

// The values a shell completes for an option (`cudatool completion` reads them from the
// option's validator named "choices", as it reads CLI::IsMember's): help shows them as
// {a|b|c}. Not strict, the validator accepts anything: the command checks the value with its
// own message. Strict, it refuses any other value.
inline CLI::Validator completion_choices(std::vector<std::string> values, bool strict = false) {
  std::string list;
  for (const std::string& v : values) list += (list.empty() ? "{" : "|") + v;
  list += "}";
  return CLI::Validator(
      [values, list, strict](std::string& value) -> std::string {
        if (!strict || std::find(values.begin(), values.end(), value) != values.end()) return {};
        return value + " not in " + list;
      },
      list, "choices");
}

// The architecture table's names (sm_75 ... sm_121), for completion.
inline std::vector<std::string> architecture_names() {
  std::vector<std::string> names;
  for (const DeviceProperties& p : known_architectures()) names.push_back(p.name);
  return names;
}

// Adds --format (text, json, csv, csv,noheader) to a tabular command: devices, attrs,
// kernels, occupancy.
inline void add_table_format_option(CLI::App& sub, GlobalOptions& global) {
  sub.add_option("--format", global.flags.format,
                 "Output: text, json (as --json), csv (a header line, then a line per row) or "
                 "csv,noheader")
      ->check(completion_choices({"text", "json", "csv", "csv,noheader"}, true));
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
Command add_compat(CLI::App& root, GlobalOptions& global);

// The whole command line (commands.cpp): the version flag, the footer and every subcommand
// above.
std::vector<Command> add_commands(CLI::App& root, GlobalOptions& global);
// The one line a command line that does not parse gets (CLI11's message, or the unknown
// command and the commands there are), with where to find help. `arguments` starts with
// the program's name.
std::string parse_error_message(const CLI::App& root, const CLI::ParseError& error,
                                const std::vector<std::string>& arguments);
// Parses `arguments` (no program or command name) as the options a command declared on `sub`
// (add_compile_options, add_check_options): the Python module's way to take a command's
// further flags. UsageError with the executable's message where they do not parse.
void parse_command_options(CLI::App& sub, const std::vector<std::string>& arguments);

}  // namespace cudatool::app
