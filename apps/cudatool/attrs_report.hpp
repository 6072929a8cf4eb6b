// `attrs`: the request (names checked before the driver is touched), the report (a device's
// attributes, all or the named ones) and one renderer per format (attrs_text.cpp,
// attrs_json.cpp: share/schemas/attrs.schema.json, attrs_csv.cpp).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cudatool/device/attributes.hpp"
#include "json_stream.hpp"

namespace cudatool::app {

struct AttrsRequest {
  std::optional<std::string> device;         // --device, or the default device
  std::vector<const AttributeInfo*> wanted;  // none: every attribute
  bool fresh = false;                        // --fresh: the driver, not the device cache
};

struct AttrsReport {
  int device = 0;  // the ordinal
  std::string name;
  std::vector<std::pair<std::string, int>> values;  // in the driver's or the request's order
};

// Throws UsageError for an unknown name (before any device is asked).
AttrsRequest attrs_request(const std::optional<std::string>& device,
                           const std::vector<std::string>& names, bool fresh);
AttrsReport attrs_report(const AttrsRequest& request);

void print_attrs_text(const AttrsReport& report);
void print_attrs_json(const AttrsReport& report);
// The --json document without schema_version (print_json adds it).
JsonObject attrs_json(const AttrsReport& report);
void print_attrs_csv(const AttrsReport& report, bool header);

}  // namespace cudatool::app
