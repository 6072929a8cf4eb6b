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

namespace cudatool::app {

// Options every subcommand shares.
struct GlobalOptions {
  bool json = false;  // --json: machine-readable output on stdout
  // --format of the tabular commands (add_table_format_option); unset: text, or --json.
  std::optional<std::string> format;
};

// What a tabular command prints: its text table, JSON, or CSV (RFC 4180: a header line of
// column names, then one line per row; nvidia-smi's spelling, "csv,noheader", leaves the
// header out).
enum class TableFormat { text, json, csv, csv_noheader };

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
  sub.add_flag("--json", global.json, "Print JSON for scripts instead of text");
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
  sub.add_option("--format", global.format,
                 "Output: text, json (as --json), csv (a header line, then a line per row) or "
                 "csv,noheader")
      ->check(completion_choices({"text", "json", "csv", "csv,noheader"}, true));
}

// The format asked for; --json with another --format is a usage error, --format json sets
// global.json.
inline TableFormat table_format(GlobalOptions& global) {
  if (global.json && global.format && *global.format != "json")
    throw UsageError("--json and --format " + *global.format + " exclude each other");
  const std::string format = global.json ? "json" : global.format.value_or("text");
  if (format == "json") {
    global.json = true;
    return TableFormat::json;
  }
  if (format == "csv") return TableFormat::csv;
  if (format == "csv,noheader") return TableFormat::csv_noheader;
  return TableFormat::text;
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
// above, for the executable and for the in-process runner alike.
std::vector<Command> add_commands(CLI::App& root, GlobalOptions& global);
// The one line a command line that does not parse gets (CLI11's message, or the unknown
// command and the commands there are), with where to find help. `arguments` starts with
// the program's name.
std::string parse_error_message(const CLI::App& root, const CLI::ParseError& error,
                                const std::vector<std::string>& arguments);

}  // namespace cudatool::app
