// XIDs: NVIDIA's catalog (compiled in from share/xid-catalog.json), the parser of the
// driver's kernel-log lines, and the check result of a GPU's XIDs.
//
// The driver writes (open-gpu-kernel-modules, and as seen in logs since r470):
//   NVRM: Xid (PCI:0000:cb:00): 13, pid='<unknown>', name=<unknown>, Graphics SM Warp Exception ...
//   NVRM: Xid (PCI:0000:04:00): 154, GPU recovery action changed from 0x0 (None) to 0x2 (Node
//   Reboot Required) NVRM: Xid (0000:03:00): 14, Channel 00000001                    (older
//   drivers: no "PCI:") NVRM: GPU at PCI:0000:01:00: GPU-299fe279-1c52-2255-d4ba-07d7bd2861d9
//   (before a GPU's first Xid)
// behind /dev/kmsg's record header ("4,1234,5678901234,-;") or dmesg's and journalctl
// -o short-monotonic's "[ 5678.901234] " (journalctl adds "host kernel: ").
#include "cudatool/check/xid.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

#include "check/reason_format.hpp"

namespace cudatool::check {

namespace {

const std::vector<XidCatalogEntry>& catalog_table() {
  static const std::vector<XidCatalogEntry> table = [] {
    std::vector<XidCatalogEntry> rows = {
#include "xid_catalog.inc"
    };
    std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.xid < b.xid; });
    return rows;
  }();
  return table;
}

bool is_hex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
unsigned hex_value(char c) {
  if (c <= '9') return static_cast<unsigned>(c - '0');
  if (c >= 'a') return static_cast<unsigned>(c - 'a' + 10);
  return static_cast<unsigned>(c - 'A' + 10);
}

// Reads 1 to `max_digits` hex digits at `at` into `value`.
bool read_hex(std::string_view text, std::size_t& at, std::size_t max_digits, unsigned& value) {
  std::size_t digits = 0;
  value = 0;
  while (at < text.size() && is_hex(text[at]) && digits < max_digits) {
    value = value * 16 + hex_value(text[at]);
    ++at;
    ++digits;
  }
  return digits > 0 && !(at < text.size() && is_hex(text[at]));
}

// "DOMAIN:BUS:DEVICE" (and an optional ".FUNCTION") at `at`, as NVML writes it without the
// function: "00000000:CB:00".
std::optional<std::string> read_pci_device(std::string_view text, std::size_t& at) {
  unsigned domain = 0, bus = 0, device = 0, function = 0;
  if (!read_hex(text, at, 8, domain) || at >= text.size() || text[at] != ':') return std::nullopt;
  ++at;
  if (!read_hex(text, at, 2, bus) || at >= text.size() || text[at] != ':') return std::nullopt;
  ++at;
  if (!read_hex(text, at, 2, device) || device > 0x1f) return std::nullopt;
  if (at < text.size() && text[at] == '.') {
    ++at;
    if (!read_hex(text, at, 1, function) || function > 7) return std::nullopt;
  }
  char out[24];
  std::snprintf(out, sizeof out, "%08X:%02X:%02X", domain, bus, device);
  return std::string(out);
}

// Printable ASCII of `text`, anything else as '?', at most `max_bytes` (then "...").
std::string printable_excerpt(std::string_view text, std::size_t max_bytes) {
  std::string out;
  const std::size_t n = std::min(text.size(), max_bytes);
  out.reserve(n + 3);
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    out.push_back(c >= 0x20 && c < 0x7f ? static_cast<char>(c) : '?');
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  if (text.size() > max_bytes) out += "...";
  return out;
}

// The kernel's timestamp at the start of `line`: kmsg's "PRI,SEQ,USEC,FLAGS;" or "[ S.U]".
std::optional<double> leading_uptime(std::string_view line) {
  std::size_t at = 0;
  if (!line.empty() && line[0] == '[') {
    at = 1;
    while (at < line.size() && line[at] == ' ') ++at;
    double seconds = 0;
    std::size_t digits = 0;
    while (at < line.size() && is_digit(line[at]) && digits < 12) {
      seconds = seconds * 10 + (line[at++] - '0');
      ++digits;
    }
    if (digits == 0 || at >= line.size() || line[at] != '.') return std::nullopt;
    ++at;
    double fraction = 0, scale = 1;
    std::size_t fraction_digits = 0;
    while (at < line.size() && is_digit(line[at]) && fraction_digits < 9) {
      fraction = fraction * 10 + (line[at++] - '0');
      scale *= 10;
      ++fraction_digits;
    }
    if (fraction_digits == 0 || at >= line.size() || line[at] != ']') return std::nullopt;
    return seconds + fraction / scale;
  }
  // kmsg: three decimal fields separated by commas, the third microseconds since boot.
  unsigned long long fields[3] = {};
  for (int f = 0; f < 3; ++f) {
    std::size_t digits = 0;
    while (at < line.size() && is_digit(line[at]) && digits < 20) {
      fields[f] = fields[f] * 10 + static_cast<unsigned long long>(line[at++] - '0');
      ++digits;
    }
    if (digits == 0 || digits >= 20 || at >= line.size()) return std::nullopt;
    if (line[at] != ',' && !(f == 2 && line[at] == ';')) return std::nullopt;
    ++at;
  }
  return static_cast<double>(fields[2]) / 1e6;
}

// Xid 154's text: "GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot Required)".
std::optional<Remediation> recovery_action(std::string_view text) {
  const std::size_t to = text.rfind(" to ");
  if (to == std::string_view::npos) return std::nullopt;
  const std::string_view tail = text.substr(to);
  const auto has = [&](std::string_view word) { return tail.find(word) != std::string_view::npos; };
  if (has("(None)")) return Remediation::none;
  if (has("Node Reboot Required")) return Remediation::reboot_node;
  if (has("GPU Reset Required") || has("Drain and Reset") || has("Drain P2P"))
    return Remediation::reset_gpu;
  return Remediation::drain_inspect;  // an action newer than this parser: look at it
}

constexpr std::string_view kXidMarker = "NVRM: Xid (";
constexpr std::string_view kGpuAtMarker = "NVRM: GPU at PCI:";

}  // namespace

std::string_view xid_action_name(XidAction action) {
  switch (action) {
    case XidAction::ignore:
      return "IGNORE";
    case XidAction::restart_app:
      return "RESTART_APP";
    case XidAction::reset_gpu:
      return "RESET_GPU";
    case XidAction::restart_bm:
      return "RESTART_BM";
    case XidAction::restart_vm:
      return "RESTART_VM";
    case XidAction::contact_support:
      return "CONTACT_SUPPORT";
    case XidAction::workflow_xid_48:
      return "WORKFLOW_XID_48";
  }
  return "CONTACT_SUPPORT";
}

Remediation remediation_for(XidAction action) {
  switch (action) {
    case XidAction::ignore:
      return Remediation::none;
    case XidAction::restart_app:
      return Remediation::restart_job;
    case XidAction::reset_gpu:
    case XidAction::workflow_xid_48:
      return Remediation::reset_gpu;
    case XidAction::restart_bm:
    case XidAction::restart_vm:
      return Remediation::reboot_node;
    case XidAction::contact_support:
      return Remediation::drain_inspect;
  }
  return Remediation::drain_inspect;
}

const std::vector<XidCatalogEntry>& xid_catalog() {
  return catalog_table();
}

const XidCatalogEntry* find_xid(unsigned xid) {
  const auto& table = catalog_table();
  const auto it = std::lower_bound(table.begin(), table.end(), xid,
                                   [](const XidCatalogEntry& e, unsigned x) { return e.xid < x; });
  return it != table.end() && it->xid == xid ? &*it : nullptr;
}

std::string_view xid_catalog_source() {
  return CUDATOOL_XID_CATALOG_SOURCE;
}

namespace {

// The Xid report that starts at `marker` (the position of "NVRM: Xid (").
std::optional<XidEvent> parse_xid_at(std::string_view line, std::size_t marker) {
  std::size_t at = marker + kXidMarker.size();
  if (line.substr(at, 4) == "PCI:") at += 4;
  auto device = read_pci_device(line, at);
  if (!device || line.substr(at, 3) != "): ") return std::nullopt;
  at += 3;
  unsigned xid = 0;
  std::size_t digits = 0;
  while (at < line.size() && is_digit(line[at]) && digits < 6) {
    xid = xid * 10 + static_cast<unsigned>(line[at++] - '0');
    ++digits;
  }
  if (digits == 0 || digits > 5 || xid == 0) return std::nullopt;
  if (at < line.size() && line[at] != ',') return std::nullopt;  // "13x": not an Xid number
  XidEvent event;
  event.xid = xid;
  event.pci_device = std::move(*device);
  event.uptime_s = leading_uptime(line);
  if (at < line.size()) ++at;  // the comma
  while (at < line.size() && line[at] == ' ') ++at;
  std::string_view rest = line.substr(at);
  while (!rest.empty() && (rest.back() == '\r' || rest.back() == '\n')) rest.remove_suffix(1);
  event.text = printable_excerpt(rest, kXidTextBytes);
  if (xid == 154) event.recovery_action = recovery_action(rest.substr(0, 4096));
  return event;
}

}  // namespace

std::optional<XidEvent> parse_xid_line(std::string_view line) {
  // The first well-formed report of the line (text before it, even a malformed "NVRM: Xid (",
  // does not hide it).
  for (std::size_t marker = line.find(kXidMarker); marker != std::string_view::npos;
       marker = line.find(kXidMarker, marker + 1))
    if (auto event = parse_xid_at(line, marker)) return event;
  return std::nullopt;
}

void add_kernel_log_line(KernelLogXids& into, std::string_view line) {
  ++into.lines;
  into.bytes += line.size() + 1;
  if (auto event = parse_xid_line(line)) {
    if (into.events.size() >= kMaxXidEvents) {
      into.truncated = true;
      return;
    }
    into.events.push_back(std::move(*event));
    return;
  }
  // "NVRM: GPU at PCI:0000:01:00: GPU-299fe279-...": the GPU's UUID.
  const std::size_t marker = line.find(kGpuAtMarker);
  if (marker == std::string_view::npos) return;
  std::size_t at = marker + kGpuAtMarker.size();
  auto device = read_pci_device(line, at);
  if (!device || line.substr(at, 2) != ": ") return;
  at += 2;
  std::size_t end = at;
  while (end < line.size() && end - at < 64 &&
         (is_hex(line[end]) || line[end] == '-' || (line[end] >= 'A' && line[end] <= 'Z')))
    ++end;
  const std::string_view uuid = line.substr(at, end - at);
  if (uuid.starts_with("GPU-") && uuid.size() > 4 && into.uuid_of.size() < 1024)
    into.uuid_of[*device] = std::string(uuid);
}

KernelLogXids parse_kernel_log(std::string_view text) {
  KernelLogXids out;
  if (text.size() > kMaxKernelLogBytes) {
    text = text.substr(text.size() - kMaxKernelLogBytes);  // the newest part
    out.truncated = true;
  }
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    add_kernel_log_line(out, text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

std::vector<XidCount> count_xids(const std::vector<XidEvent>& events) {
  std::vector<XidCount> out;
  for (const auto& e : events) {
    auto it =
        std::find_if(out.begin(), out.end(), [&](const XidCount& c) { return c.xid == e.xid; });
    if (it == out.end()) {
      out.push_back({});
      it = out.end() - 1;
      it->xid = e.xid;
    }
    ++it->count;
    if (e.uptime_s) it->latest_uptime_s = e.uptime_s;
    it->latest_text = e.text;
    if (e.xid == 154) it->recovery_action = e.recovery_action;
  }
  std::sort(out.begin(), out.end(),
            [](const XidCount& a, const XidCount& b) { return a.xid < b.xid; });
  return out;
}

CheckResult xid_result(const std::vector<XidCount>& counts) {
  CheckResult r;
  r.kind = Kind::xid;
  r.name = "xid";
  r.quantity = Quantity::xid_events;
  std::size_t total = 0;
  Verdict verdict = Verdict::pass;
  Remediation remediation = Remediation::none;
  std::vector<std::string> parts;
  for (const auto& c : counts) {
    total += c.count;
    const XidCatalogEntry* entry = find_xid(c.xid);
    Remediation action = Remediation::monitor;
    Verdict v = Verdict::warn;
    std::string what = entry ? std::string(entry->description) : "not in NVIDIA's catalog";
    if (c.xid == 154 && c.recovery_action) {
      action = *c.recovery_action;
      v = action == Remediation::none ? Verdict::pass : Verdict::fail;
    } else if (entry) {
      action = remediation_for(entry->action);
      v = entry->action == XidAction::ignore        ? Verdict::pass
          : entry->action == XidAction::restart_app ? Verdict::warn
                                                    : Verdict::fail;
      what += ", NVIDIA: " + std::string(xid_action_name(entry->action));
    }
    verdict = worse(verdict, v);
    remediation = worse(remediation, action);
    if (parts.size() < 8) {
      std::string part =
          "Xid " + std::to_string(c.xid) + " x" + std::to_string(c.count) + " (" + what + ")";
      if (c.latest_uptime_s)
        part += ", latest " + detail::fixed(*c.latest_uptime_s, 1) + " s after boot";
      if (!c.latest_text.empty()) part += ": " + c.latest_text;
      parts.push_back(part);
    }
  }
  if (parts.size() < counts.size())
    parts.push_back("and " + std::to_string(counts.size() - parts.size()) + " more XIDs");
  r.value = static_cast<double>(total);
  r.verdict = verdict;
  r.remediation = remediation;
  r.reason = counts.empty() ? "no XID in the kernel log since boot" : detail::join(parts);
  return r;
}

std::string xid_pci_device(std::string_view pci_bus_id) {
  std::size_t at = 0;
  auto device = read_pci_device(pci_bus_id, at);
  return device && at == pci_bus_id.size() ? *device : std::string();
}

}  // namespace cudatool::check
