// DeviceData: libcudatool's own (occupancy/device_data.hpp), from the architecture table or a
// live device's attributes, with PyCUDA's fields.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include "bindings.hpp"
#include "cudatool/base/error.hpp"
#include "cudatool/device/selection.hpp"

namespace cudatool::python {
namespace {

using namespace nb::literals;

// A column's value, or None where the architecture table does not know it.
nb::object known(const PyDeviceData& d, const char* column, long long value) {
  if (!d.data.knows(column)) return nb::none();
  return nb::int_(value);
}

}  // namespace

const PyDeviceData& device_data_of(nb::handle devdata) {
  try {
    return nb::cast<const PyDeviceData&>(devdata);
  } catch (const nb::cast_error&) {
    throw nb::type_error("devdata must be a cudatool.DeviceData");
  }
}

void bind_device_data(nb::module_& m) {
  nb::class_<PyDeviceData>(
      m, "DeviceData",
      "What occupancy depends on (PyCUDA's DeviceData): DeviceData(\"sm_90\") from cudatool's "
      "architecture table (no GPU, no driver), or DeviceData(device=0) from a live device's "
      "attributes (no context). PyCUDA's fields are None where the table does not know a value; "
      "to_dict() is the device member of `cudatool occupancy --json`.")
      .def(
          "__init__",
          [](PyDeviceData* self, std::optional<std::string> arch,
             std::optional<nb::object> device) {
            if (arch && device)
              throw UsageError(
                  "DeviceData: give an architecture or device=, not both (an architecture needs "
                  "no GPU, device= reads a real one)");
            if (arch) {
              PyDeviceData d{DeviceData(Arch::parse(*arch, "--arch"), "--arch", *arch), *arch, ""};
              new (self) PyDeviceData(std::move(d));
              return;
            }
            std::optional<std::string> spec;
            if (device) spec = nb::cast<std::string>(nb::str(*device));
            Device chosen(0);
            {
              nb::gil_scoped_release unlocked;
              chosen = select_device(spec, "--device");
            }
            PyDeviceData d{DeviceData(chosen), std::to_string(chosen.ordinal()),
                           "device " + std::to_string(chosen.ordinal())};
            new (self) PyDeviceData(std::move(d));
          },
          "arch"_a = nb::none(), nb::kw_only(), "device"_a = nb::none())
      .def_prop_ro("max_threads",
                   [](const PyDeviceData& d) {
                     return known(d, "max_threads_per_block", d.data.max_threads());
                   })
      .def_prop_ro("warp_size",
                   [](const PyDeviceData& d) { return known(d, "warp_size", d.data.warp_size()); })
      .def_prop_ro(
          "warps_per_mp",
          [](const PyDeviceData& d) -> nb::object {
            if (!d.data.knows("warp_size") || !d.data.knows("max_threads_per_multiprocessor"))
              return nb::none();
            return nb::int_(d.data.warps_per_mp());
          })
      .def_prop_ro("thread_blocks_per_mp",
                   [](const PyDeviceData& d) {
                     return known(d, "max_blocks_per_multiprocessor",
                                  d.data.thread_blocks_per_mp());
                   })
      .def_prop_ro(
          "registers",
          [](const PyDeviceData& d) { return known(d, "registers_per_block", d.data.registers()); })
      .def_prop_ro("shared_memory",
                   [](const PyDeviceData& d) {
                     return known(d, "shared_memory_per_block",
                                  static_cast<long long>(d.data.shared_memory()));
                   })
      .def_prop_ro("smem_granularity",
                   [](const PyDeviceData& d) {
                     return known(d, "shared_memory_banks", d.data.smem_granularity());
                   })
      .def_prop_ro("smem_alloc_granularity",
                   [](const PyDeviceData& d) {
                     return known(d, "shared_memory_allocation_granularity",
                                  d.data.smem_alloc_granularity());
                   })
      .def_prop_ro("name", [](const PyDeviceData& d) { return d.data.properties().name; })
      .def_prop_ro("family",
                   [](const PyDeviceData& d) -> nb::object {
                     const auto& f = d.data.properties().family;
                     return f.empty() ? nb::none() : nb::str(f.c_str());
                   })
      .def_prop_ro("compute_capability",
                   [](const PyDeviceData& d) {
                     const auto& cc = d.data.properties().compute_capability;
                     return std::make_tuple(cc.major, cc.minor);
                   })
      .def_prop_ro("origin",
                   [](const PyDeviceData& d) { return std::string(origin_name(d.data.origin())); })
      .def_prop_ro("sm_count", [](const PyDeviceData& d) { return d.data.properties().sm_count; })
      .def_prop_ro("sm_count_part",
                   [](const PyDeviceData& d) -> nb::object {
                     const auto& p = d.data.properties().sm_count_part;
                     return p.empty() ? nb::none() : nb::str(p.c_str());
                   })
      .def_prop_ro("unknown_fields",
                   [](const PyDeviceData& d) { return d.data.properties().unknown_fields; })
      .def_prop_ro("unknown_reason",
                   [](const PyDeviceData& d) -> nb::object {
                     const auto& r = d.data.properties().unknown_reason;
                     return r.empty() ? nb::none() : nb::str(r.c_str());
                   })
      .def(
          "column",
          [](const PyDeviceData& d, const std::string& name) -> nb::object {
            nb::dict columns = nb::cast<nb::dict>(to_python(d.data.properties()));
            if (!columns.contains(name.c_str())) throw nb::key_error(name.c_str());
            return d.data.knows(name) ? nb::object(columns[name.c_str()]) : nb::none();
          },
          "name"_a)
      .def(
          "align_bytes", [](const PyDeviceData& d, int w) { return d.data.align_bytes(w); },
          "word_size"_a = 4)
      .def(
          "align", [](const PyDeviceData& d, std::size_t b, int w) { return d.data.align(b, w); },
          "bytes"_a, "word_size"_a = 4)
      .def(
          "align_words", [](const PyDeviceData& d, int w) { return d.data.align_words(w); },
          "word_size"_a)
      .def(
          "align_dtype",
          [](const PyDeviceData& d, std::size_t e, int s) { return d.data.align_dtype(e, s); },
          "elements"_a, "dtype_size"_a)
      .def_static("make_valid_tex_channel_count", &DeviceData::make_valid_tex_channel_count,
                  "size"_a)
      .def("to_dict", [](const PyDeviceData& d) { return to_python(d.data); })
      .def("__repr__", [](const PyDeviceData& d) {
        const auto& p = d.data.properties();
        return "DeviceData(" +
               (d.data.origin() == DeviceDataOrigin::architecture_table ? "'" + d.label + "'"
                                                                        : "device=" + d.label) +
               ") <" + p.name + ", compute capability " + p.compute_capability.str() + ">";
      });
}

}  // namespace cudatool::python
