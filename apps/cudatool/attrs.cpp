// cudatool attrs [--device D] [NAME...]: every attribute, or the named ones. Options ->
// request -> attrs_report -> one renderer per format (attrs_report.hpp).
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attrs_report.hpp"
#include "command.hpp"

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

  return {sub, [options, &global]() {
            // Names are checked before the driver is touched: a typo is a usage error even on
            // a machine without a GPU.
            const AttrsReport report =
                attrs_report(attrs_request(options->device, options->names, options->fresh));
            if (global.format == Format::json)
              print_attrs_json(report);
            else if (global.format == Format::text)
              print_attrs_text(report);
            else
              print_attrs_csv(report, global.format == Format::csv);
            return ExitStatus::success;
          }};
}

}  // namespace cudatool::app
