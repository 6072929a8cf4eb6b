// The output format of a command: parsed once from --json and --format (commands.cpp runs
// parse_format before every command's action), and the set of --format values each command
// allows.
#pragma once

#include <optional>
#include <string>

#include "cudatool/base/error.hpp"

namespace cudatool::app {

// text, the --json document, CSV (RFC 4180: a header line of column names, then one line
// per row; nvidia-smi's spelling, "csv,noheader", leaves the header out), and check's
// Prometheus textfile and Node Feature Discovery feature file.
enum class Format { text, json, csv, csv_noheader, prometheus, nfd };

// --json and --format as given.
struct FormatFlags {
  bool json = false;                  // --json: as --format json
  std::optional<std::string> format;  // a value of the command's --format set
};

// The format asked for; --json with another --format is a usage error. The value is one
// of the command's set: its --format option refuses any other.
inline Format parse_format(const FormatFlags& flags) {
  if (flags.json && flags.format && *flags.format != "json")
    throw UsageError("--json and --format " + *flags.format + " exclude each other");
  const std::string format = flags.json ? "json" : flags.format.value_or("text");
  if (format == "json") return Format::json;
  if (format == "csv") return Format::csv;
  if (format == "csv,noheader") return Format::csv_noheader;
  if (format == "prometheus") return Format::prometheus;
  if (format == "nfd") return Format::nfd;
  return Format::text;
}

}  // namespace cudatool::app
