// The pieces of cudatool._cudatool (module.cpp registers them): each file binds one command's
// request and result (the library's steps and the CLI's renderer), none runs a command line.
#pragma once

#include <nanobind/nanobind.h>

#include <string>
#include <string_view>
#include <vector>

#include "cudatool/occupancy/device_data.hpp"
#include "json_stream.hpp"
#include "occupancy_json.hpp"  // the writers of DeviceData, OccupancyUnknown, ... (to_python)

namespace cudatool::python {

namespace nb = nanobind;

// A DeviceData as the Python class holds it: with the name it was made from ("sm_90", or the
// ordinal of device=) and `where` as the CLI's documents say it ("device 0"; "" for the
// architecture table).
struct PyDeviceData {
  DeviceData data;
  std::string label;
  std::string where;
};

// `devdata` as the DeviceData it must be (TypeError otherwise).
const PyDeviceData& device_data_of(nb::handle devdata);

// Text as json.loads reads it.
nb::object json_loads(std::string_view text);
// A document (with schema_version, as the CLI's --json prints it) as a dict.
inline nb::object document(app::JsonObject object, int schema_version = app::kJsonSchemaVersion) {
  return json_loads(app::json_document(std::move(object), schema_version));
}
// A value as the CLI's JSON writes it (json_stream.hpp), as json.loads reads it.
template <class T>
nb::object to_python(const T& value) {
  std::string text;
  app::JsonStream(text).value(value);
  return json_loads(text);
}

// The messages a command's steps note on the way (render.hpp's Messages), kept as the lines
// the executable prints after "cudatool: ": a result's `warnings`.
struct Warnings {
  std::vector<std::string> lines;
  app::Messages sink() {
    return [this](std::string_view text) { lines.push_back(app::message_line(text)); };
  }
};

void register_errors(nb::module_& m);
void bind_devices(nb::module_& m);
void bind_device_data(nb::module_& m);
void bind_occupancy(nb::module_& m);
void bind_kernels(nb::module_& m);
void bind_compat(nb::module_& m);
void bind_compile(nb::module_& m);
void bind_check(nb::module_& m);

}  // namespace cudatool::python
