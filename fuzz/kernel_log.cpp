// libFuzzer harness: the kernel-log XID parser (lib/src/check/xid.cpp), which reads the
// kernel's untrusted text. Any bytes parse; each event's text is printable ASCII and
// bounded, its PCI address in NVML's form, its XID a positive number; counting and judging
// the events works; and every line parsed alone agrees with the whole log.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "cudatool/check/xid.hpp"

using namespace cudatool::check;

namespace {

void check_event(const XidEvent& e) {
  if (e.xid == 0 || e.xid > 99999) std::abort();
  if (e.text.size() > kXidTextBytes + 3) std::abort();
  for (char c : e.text)
    if (c < 0x20 || c > 0x7e) std::abort();
  if (e.pci_device.size() != 14 || e.pci_device[8] != ':' || e.pci_device[11] != ':') std::abort();
  if (e.uptime_s && !(*e.uptime_s >= 0)) std::abort();
  if (e.recovery_action && e.xid != 154) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const KernelLogXids log = parse_kernel_log(text);
  for (const auto& e : log.events) check_event(e);
  for (const auto& [device, uuid] : log.uuid_of)
    if (!uuid.starts_with("GPU-") || uuid.size() > 64 || device.size() != 14) std::abort();
  // Line by line, the same events.
  std::size_t events = 0, start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    if (auto e = parse_xid_line(text.substr(start, end - start))) {
      check_event(*e);
      if (events >= log.events.size() || log.events[events].xid != e->xid ||
          log.events[events].pci_device != e->pci_device)
        std::abort();
      ++events;
    }
    start = end + 1;
  }
  if (events != log.events.size()) std::abort();
  const auto counts = count_xids(log.events);
  std::size_t total = 0;
  for (const auto& c : counts) total += c.count;
  if (total != log.events.size()) std::abort();
  const CheckResult r = xid_result(counts);
  if (r.value.value_or(-1) != static_cast<double>(total) || r.reason.empty()) std::abort();
  return 0;
}
