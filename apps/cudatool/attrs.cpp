// cudatool attrs [--device D] [NAME...]: every attribute, or the named ones.
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "command.hpp"
#include "cudatool/device/attributes.hpp"
#include "cudatool/device/device.hpp"
#include "cudatool/device/device_cache.hpp"
#include "cudatool/device/selection.hpp"
#include "render.hpp"

namespace cudatool::app {
namespace {

struct AttrsOptions {
  std::optional<std::string> device;
  std::vector<std::string> names;
  bool fresh = false;
};

}  // namespace

Command add_attrs(CLI::App& root, GlobalOptions& global) {
  auto* sub = root.add_subcommand("attrs", "Print a device's attributes (all, or the named ones)");
  auto options = std::make_shared<AttrsOptions>();
  add_json_flag(*sub, global);
  add_table_format_option(*sub, global);
  sub->add_option("--device,-d", options->device,
                  "Device: ordinal, PCI bus id or UUID (default: CUDA_DEVICE, ~/.cuda-device, 0)");
  sub->add_option("names", options->names,
                  "Attribute names (max_threads_per_block, multiprocessor_count, ...)");
  add_fresh_flag(*sub, options->fresh);

  return {
      sub, [options, &global]() {
        // Names are checked before the driver is touched: a typo is a usage error
        // even on a machine without a GPU.
        const TableFormat format = table_format(global);
        std::vector<const AttributeInfo*> wanted;
        for (const auto& name : options->names) wanted.push_back(&attribute_by_name(name));

        use_device_cache(options->fresh, "--fresh");
        const Device device = select_device(options->device, "--device");
        std::vector<std::pair<std::string, int>> values;
        if (wanted.empty()) {
          values = device.get_attributes();
        } else {
          for (const AttributeInfo* info : wanted)
            values.emplace_back(std::string(info->name), device.get_attribute(info->attribute));
        }
        if (global.json) {
          nlohmann::json attributes = nlohmann::json::object();
          for (const auto& [name, value] : values) attributes[name] = value;
          print_json(
              {{"device", device.ordinal()}, {"name", device.name()}, {"attributes", attributes}});
        } else if (format != TableFormat::text) {
          if (format == TableFormat::csv) print_csv_row({"device", "attribute", "value"});
          for (const auto& [name, value] : values)
            print_csv_row({std::to_string(device.ordinal()), name, std::to_string(value)});
        } else {
          std::size_t width = 0;
          for (const auto& entry : values) width = std::max(width, entry.first.size());
          for (const auto& [name, value] : values)
            command_out() << pad(name, width) << "  " << value << '\n';
        }
        return ExitStatus::success;
      }};
}

}  // namespace cudatool::app
