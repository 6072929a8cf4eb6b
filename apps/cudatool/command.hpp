// How a subcommand plugs into main: each subcommand file defines one add_<name>()
// that declares its options on a CLI11 subcommand and returns the action to run after
// parsing. Actions return an exit status or throw; main maps exceptions to exit codes
// (cudatool/base/exit_status.hpp) in one place.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cudatool/base/error.hpp"
#include "cudatool/base/exit_status.hpp"

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
};

// Adds the shared --json flag to a subcommand.
inline void add_json_flag(CLI::App& sub, GlobalOptions& global) {
  sub.add_flag("--json", global.json, "Print JSON for scripts instead of text");
}

// Adds --format (text, json, csv, csv,noheader) to a tabular command: devices, attrs,
// kernels, occupancy.
inline void add_table_format_option(CLI::App& sub, GlobalOptions& global) {
  sub.add_option("--format", global.format,
                 "Output: text, json (as --json), csv (a header line, then a line per row) or "
                 "csv,noheader")
      ->check(CLI::IsMember({"text", "json", "csv", "csv,noheader"}));
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

}  // namespace cudatool::app
