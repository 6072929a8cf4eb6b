// attrs' renderers: text (a name and a value a line), JSON (share/schemas/attrs.schema.json)
// and CSV (a line per attribute).
#include <algorithm>
#include <string>

#include "attrs_report.hpp"
#include "json_stream.hpp"
#include "render.hpp"

namespace cudatool::app {

void print_attrs_text(const AttrsReport& report) {
  std::size_t width = 0;
  for (const auto& entry : report.values) width = std::max(width, entry.first.size());
  for (const auto& [name, value] : report.values)
    command_out() << pad(name, width) << "  " << value << '\n';
}

JsonObject attrs_json(const AttrsReport& report) {
  JsonObject attributes;
  for (const auto& [name, value] : report.values) attributes.set(name, value);
  return JsonObject()
      .set("device", report.device)
      .set("name", report.name)
      .set("attributes", attributes);
}

void print_attrs_json(const AttrsReport& report) {
  print_json(attrs_json(report));
}

void print_attrs_csv(const AttrsReport& report, bool header) {
  if (header) print_csv_row({"device", "attribute", "value"});
  for (const auto& [name, value] : report.values)
    print_csv_row({std::to_string(report.device), name, std::to_string(value)});
}

}  // namespace cudatool::app
