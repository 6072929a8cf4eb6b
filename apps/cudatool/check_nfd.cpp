// check's Node Feature Discovery feature file (--format nfd): the local source's name=value
// lines (features.d/), one per node feature, each name and value a valid Kubernetes label
// (NFD prefixes the names with feature.node.kubernetes.io/): the GPUs' product, compute
// capability, memory and count, the driver, and the check's verdict and remediation.
#include <cstdio>
#include <string>

#include "cudatool/driver/driver.hpp"
#include "render_check.hpp"

namespace cudatool::app {

std::string nfd_label_value(std::string_view text) {
  // [A-Za-z0-9._-], beginning and ending with a letter or digit, at most 63 characters.
  std::string out;
  for (char c : text) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    out.push_back(ok ? c : '-');
  }
  auto alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  };
  if (out.size() > 63) out.resize(63);
  while (!out.empty() && !alnum(out.back())) out.pop_back();
  std::size_t start = 0;
  while (start < out.size() && !alnum(out[start])) ++start;
  return out.substr(start);
}

std::string check_nfd(const check::Report* report) {
  std::string out =
      "# cudatool check --format nfd: Node Feature Discovery's local source (features.d)\n";
  auto line = [&](const std::string& name, const std::string& value) {
    const std::string v = nfd_label_value(value);
    if (!v.empty()) out += name + "=" + v + "\n";
  };
  if (report == nullptr) {  // no driver, no device: the check could not run
    line("cudatool-check.verdict", "fail");
    line("cudatool-check.up", "false");
    line("cudatool-gpu.count", "0");
    return out;
  }
  line("cudatool-check.verdict", std::string(verdict_name(report->verdict())));
  line("cudatool-check.remediation", std::string(remediation_name(report->remediation())));
  line("cudatool-check.up", "true");
  line("cudatool-gpu.count", std::to_string(report->devices.size()));
  if (report->driver_version) line("cudatool-gpu.driver", *report->driver_version);
  line("cudatool-gpu.cuda", driver::format_cuda_version(report->cuda_version));
  // The first GPU that answered describes the node's; homogeneous says whether all are alike.
  const check::DeviceReport* first = nullptr;
  bool alike = true;
  for (const auto& d : report->devices) {
    if (!d.identity.error.empty()) continue;
    if (first == nullptr)
      first = &d;
    else
      alike = alike && d.identity.name == first->identity.name &&
              d.identity.compute_capability == first->identity.compute_capability &&
              d.identity.total_memory == first->identity.total_memory;
  }
  if (first != nullptr) {
    line("cudatool-gpu.product", first->identity.name);
    line("cudatool-gpu.compute-capability", first->identity.compute_capability.str());
    line("cudatool-gpu.family", first->identity.compute_capability.sm());
    char gib[32];
    std::snprintf(gib, sizeof gib, "%.0f",
                  static_cast<double>(first->identity.total_memory) / (1024.0 * 1024.0 * 1024.0));
    line("cudatool-gpu.memory-gib", gib);
    line("cudatool-gpu.homogeneous", alike ? "true" : "false");
  }
  return out;
}

}  // namespace cudatool::app
