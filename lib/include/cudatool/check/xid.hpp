// XIDs: the NVIDIA driver's error reports in the kernel log ("NVRM: Xid (PCI:0000:cb:00): 13,
// pid=..., ..."), read since boot from /dev/kmsg (or `journalctl -k` where only that is
// readable), each mapped to its GPU by PCI bus id and classified by NVIDIA's Xid catalog
// (share/xid-catalog.json, compiled in): the action NVIDIA documents for it, as the
// remediation `check` gives (check.hpp).
//
// The kernel log is untrusted text: the parser takes any bytes, keeps at most a bounded
// excerpt of each line (printable ASCII only), and never fails on what it cannot read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cudatool/check/check.hpp"

namespace cudatool::check {

// NVIDIA's resolution buckets (the catalog's "Immediate Action").
enum class XidAction {
  ignore,
  restart_app,
  reset_gpu,
  restart_bm,
  restart_vm,
  contact_support,
  workflow_xid_48
};
// "IGNORE", "RESTART_APP", ... as the catalog spells them.
std::string_view xid_action_name(XidAction action);
// What cudatool's remediation is for NVIDIA's action.
Remediation remediation_for(XidAction action);

struct XidCatalogEntry {
  unsigned xid = 0;
  std::string_view mnemonic;     // "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS"
  std::string_view description;  // "GPU has fallen off the bus"
  XidAction action = XidAction::contact_support;
};
// The catalog, by XID (share/xid-catalog.json).
const std::vector<XidCatalogEntry>& xid_catalog();
// The entry of `xid`; nullptr for an XID the catalog does not list.
const XidCatalogEntry* find_xid(unsigned xid);
// Where the catalog comes from (its URL).
std::string_view xid_catalog_source();

// One "NVRM: Xid" line of the kernel log.
struct XidEvent {
  unsigned xid = 0;
  // The GPU's PCI address as the line names it, DOMAIN:BUS:DEVICE in NVML's form without the
  // function ("00000000:CB:00"); the driver writes "PCI:0000:cb:00" (older: "0000:cb:00").
  std::string pci_device;
  // Seconds since boot where the line carries the kernel's timestamp (/dev/kmsg's record
  // header, or "[ 1234.567890]" as dmesg and journalctl -o short-monotonic print it).
  std::optional<double> uptime_s;
  // The rest of the line after "NN, ": printable ASCII only, at most kXidTextBytes.
  std::string text;
  // Xid 154 only: the recovery action the driver now asks for, from its text ("GPU Reset
  // Required", "Node Reboot Required", "Drain and Reset", "Drain P2P", "None").
  std::optional<Remediation> recovery_action;
};
inline constexpr std::size_t kXidTextBytes = 160;

// The XID of one kernel-log line, or nullopt where the line is not an Xid report (any
// bytes, any length; the prefix before "NVRM: " may be a kmsg record header, a syslog or
// journal prefix, or a dmesg timestamp).
std::optional<XidEvent> parse_xid_line(std::string_view line);

// What the kernel log holds: every Xid, and the GPUs the driver named ("NVRM: GPU at
// PCI:0000:01:00: GPU-299fe279-...", which it writes before a GPU's first Xid) by UUID.
struct KernelLogXids {
  std::vector<XidEvent> events;                // in log order
  std::map<std::string, std::string> uuid_of;  // pci_device -> "GPU-..."
  std::size_t lines = 0;                       // lines looked at
  std::size_t bytes = 0;                       // bytes looked at
  bool truncated = false;                      // the log was longer than the limits below
};
inline constexpr std::size_t kMaxKernelLogBytes = 64u << 20;
inline constexpr std::size_t kMaxXidEvents = 100000;
// Parses a log: lines separated by '\n' (a kmsg record's continuation lines, which start
// with a blank, are skipped), any bytes.
KernelLogXids parse_kernel_log(std::string_view text);
// Adds one line to `into` (the streaming form of parse_kernel_log).
void add_kernel_log_line(KernelLogXids& into, std::string_view line);

// The kernel log as read: from where, and why not where it could not be.
struct KernelLog {
  bool readable = false;
  std::string source;   // "/dev/kmsg" or "journalctl -k -b 0"
  std::string why_not;  // "" when readable; else every source tried and its error
  KernelLogXids xids;
};
// Reads the kernel log since boot: /dev/kmsg, else `journalctl -k -b 0` (at most
// `journal_timeout_s` seconds, then stopped). Never throws for what it cannot read.
// The test hooks CUDATOOL_TEST_KMSG (a file read as /dev/kmsg) and CUDATOOL_TEST_JOURNALCTL
// (a program run as journalctl) replace the sources in a build with test hooks.
KernelLog read_kernel_log(double journal_timeout_s = 3.0);

// Per GPU: each XID seen, how often and when last (XidCount: check.hpp).
std::vector<XidCount> count_xids(const std::vector<XidEvent>& events);

// The check result of a GPU's XIDs (name "xid"): the count as its value, the verdict and
// remediation of the worst one (RESTART_APP warns, RESET_GPU and worse fail, IGNORE passes;
// an XID the catalog lacks warns with "monitor").
CheckResult xid_result(const std::vector<XidCount>& counts);

// The PCI address `pci_bus_id` (CUDA's "0000:cb:00.0" or NVML's form) as XidEvent names it
// ("00000000:CB:00"); "" where it does not parse.
std::string xid_pci_device(std::string_view pci_bus_id);

}  // namespace cudatool::check
