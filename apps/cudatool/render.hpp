// Small helpers the subcommands' renderers share.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cudatool/base/arch.hpp"
#include "cudatool/base/text.hpp"
#include "cudatool/binary/image_format.hpp"

namespace cudatool::app {

// Where a command writes its output and its messages: standard output and standard error.
// The Python module never runs a command; it calls the steps below a command with a stream
// and a message sink of its own (Messages), so no process-wide stream is ever swapped.
inline std::ostream& command_out() {
  return std::cout;
}
inline std::ostream& command_err() {
  return std::cerr;
}

// The version of a --json document (cudatool(1), JSON OUTPUT): each document's moves when
// one of its keys is removed or renamed or changes type or meaning; adding a key does not
// move it. This is every document's but check's (render_check.hpp, kCheckSchemaVersion) and
// compile's. share/schemas/*.schema.json describe the documents of these versions.
inline constexpr int kJsonSchemaVersion = 1;
// compile's documents: 2 since each kernel's occupancy is the object kernels gives (its
// error key and the record's keys were removed); 3 since `compiler`, the same value as
// `engine`, was removed.
inline constexpr int kCompileSchemaVersion = 3;

// The longest message line, in bytes of the text before escaping.
inline constexpr std::size_t kMaxMessageLine = 2000;

// A message as it is shown: the paths, names and values inside made printable by the one
// escaping function (base/text.hpp: control, invisible and bidirectional characters
// escaped), cut at kMaxMessageLine, one line.
inline std::string message_line(std::string_view text) {
  return printable(text, kMaxMessageLine);
}

// One line on stderr, "cudatool: TEXT": every note, warning and error line the tool prints
// goes through here (main.cpp's errors too).
inline void print_message(std::string_view text) {
  command_err() << "cudatool: " << message_line(text) << '\n';
}

// Where the steps of a command tell what they note on the way (a file without CUDA code, an
// unreadable entry): print_message in the executable, a result's warnings in Python.
using Messages = std::function<void(std::string_view)>;

// An error message as one printable line: newlines become blanks, other control characters
// and bytes that are not UTF-8 are escaped (text.hpp), and the whole is cut at
// kMaxMessageLine. Values inside are already cut where they are echoed (quote_input());
// this is the backstop. The executable prints it after "cudatool: "; the Python module's
// exceptions carry it.
inline std::string one_line(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  for (auto& c : text)
    if (c == '\n') c = ' ';
  return printable(text, kMaxMessageLine);
}

// A Markdown table cell of a name (kernels --baseline and --sizes --markdown): a code span,
// printable, '|' escaped and backquotes replaced.
inline std::string markdown_code(const std::string& text) {
  std::string cell;
  for (const char ch : printable(text, text.size())) {
    if (ch == '|')
      cell += "\\|";
    else if (ch == '`')
      cell += '\'';
    else
      cell += ch;
  }
  return "`" + cell + "`";
}

// An image's architecture as every output spells it ("sm_90a", "compute_90"); "" for none
// (an entry of unknown kind: null in JSON).
inline std::string arch_text(const std::optional<Arch>& arch) {
  return arch ? arch->str() : std::string();
}

// An image's kind and compression as every output spells them (kernels: JSON's "kind" and
// "compression", the Python module's values).
inline std::string_view image_kind_name(ImageKind kind) {
  switch (kind) {
    case ImageKind::elf:
      return "elf";
    case ImageKind::ptx:
      return "ptx";
    case ImageKind::lto_ir:
      return "lto_ir";
    case ImageKind::unknown:
      break;
  }
  return "unknown";
}
inline std::string_view compression_name(FatbinCompression compression) {
  switch (compression) {
    case FatbinCompression::lz4:
      return "lz4";
    case FatbinCompression::zstd:
      return "zstd";
    case FatbinCompression::none:
      break;
  }
  return "none";
}

// A fraction as a percentage with one decimal: "87.5%".
inline std::string percent(double fraction) {
  char text[16];
  std::snprintf(text, sizeof text, "%.1f%%", fraction * 100.0);
  return text;
}

// Pads `text` with spaces to `width` characters (left-aligned).
inline std::string pad(const std::string& text, std::size_t width) {
  return text.size() >= width ? text : text + std::string(width - text.size(), ' ');
}

// One CSV field (RFC 4180): text from outside made printable as on a terminal (control,
// invisible and reordering characters escaped, base/text.hpp; never cut), then quoted where
// it holds a comma, a quote or a space at either end, with quotes doubled. Text that a
// spreadsheet would evaluate as a formula (starting with = + - @, a kernel named "=2+5")
// and is not a number gets a leading apostrophe (OWASP's CSV-injection rule): spreadsheets
// show it as text; the one change made to a value (cudatool(1)).
inline std::string csv_field(std::string_view text) {
  std::string field = printable(text, text.size());
  if (!field.empty() && std::string_view("=+-@").find(field.front()) != std::string_view::npos) {
    char* end = nullptr;
    const std::string copy(field);
    (void)std::strtod(copy.c_str(), &end);
    if (end != copy.c_str() + copy.size() || copy.size() == 1) field.insert(0, 1, '\'');
  }
  const bool quote = field.find_first_of(",\"") != std::string::npos ||
                     (!field.empty() && (field.front() == ' ' || field.back() == ' '));
  if (!quote) return field;
  std::string quoted = "\"";
  for (char c : field) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + '"';
}

// One CSV line of fields.
inline void print_csv_row(const std::vector<std::string>& fields) {
  std::string line;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i) line += ',';
    line += csv_field(fields[i]);
  }
  line += '\n';
  command_out() << line;
}

}  // namespace cudatool::app
