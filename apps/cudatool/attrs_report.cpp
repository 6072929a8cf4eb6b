#include "attrs_report.hpp"

#include "cudatool/device/device.hpp"
#include "cudatool/device/device_cache.hpp"
#include "cudatool/device/selection.hpp"

namespace cudatool::app {

AttrsRequest attrs_request(const std::optional<std::string>& device,
                           const std::vector<std::string>& names, bool fresh) {
  AttrsRequest request{device, {}, fresh};
  for (const auto& name : names) request.wanted.push_back(&attribute_by_name(name));
  return request;
}

AttrsReport attrs_report(const AttrsRequest& request) {
  use_device_cache(request.fresh, "--fresh");
  const Device device = select_device(request.device, "--device");
  AttrsReport report{device.ordinal(), device.name(), {}};
  if (request.wanted.empty()) {
    report.values = device.get_attributes();
  } else {
    for (const AttributeInfo* info : request.wanted)
      report.values.emplace_back(std::string(info->name), device.get_attribute(info->attribute));
  }
  return report;
}

}  // namespace cudatool::app
