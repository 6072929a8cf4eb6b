// The XID parser and classification (lib/src/check/xid.cpp): NVIDIA's line format as the
// driver writes it behind every prefix it reaches users with (/dev/kmsg records, dmesg,
// journalctl, syslog), interleaved devices, truncated lines, hostile text; the catalog
// compiled in against share/xid-catalog.json.
#include "cudatool/check/xid.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

using namespace cudatool::check;

namespace {

XidEvent parse(std::string_view line) {
  auto e = parse_xid_line(line);
  EXPECT_TRUE(e.has_value()) << line;
  return e.value_or(XidEvent{});
}

CheckResult one(unsigned xid, const std::string& text = "") {
  XidEvent e;
  e.xid = xid;
  e.pci_device = "00000000:CB:00";
  e.text = text;
  if (xid == 154)
    e.recovery_action = parse_xid_line("NVRM: Xid (PCI:0000:cb:00): 154, " + text)->recovery_action;
  return xid_result(count_xids({e}));
}

}  // namespace

TEST(Xid, TheDriversLineBehindEachPrefix) {
  // /dev/kmsg's record: PRIORITY,SEQUENCE,MICROSECONDS,FLAGS;MESSAGE
  XidEvent e = parse(
      "4,1841,5342919126,-;NVRM: Xid (PCI:0000:cb:00): 13, pid='<unknown>', name=<unknown>, "
      "Graphics SM Warp Exception on (GPC 7, TPC 7, SM 0): Illegal Instruction Parameter");
  EXPECT_EQ(e.xid, 13u);
  EXPECT_EQ(e.pci_device, "00000000:CB:00");
  ASSERT_TRUE(e.uptime_s);
  EXPECT_DOUBLE_EQ(*e.uptime_s, 5342.919126);
  EXPECT_EQ(e.text,
            "pid='<unknown>', name=<unknown>, Graphics SM Warp Exception on (GPC 7, TPC 7, SM 0): "
            "Illegal Instruction Parameter");
  // Newer kernels add fields after the flags ("caller=").
  e = parse(
      "4,2,3000000,-,caller=T812;NVRM: Xid (PCI:0000:05:00): 79, pid='<unknown>', "
      "name=<unknown>, GPU has fallen off the bus.");
  EXPECT_EQ(e.xid, 79u);
  EXPECT_DOUBLE_EQ(e.uptime_s.value_or(0), 3.0);
  // dmesg, and journalctl -o short-monotonic.
  e = parse(
      "[ 1843.308145] NVRM: Xid (PCI:0000:b3:00): 48, pid=1234, name=python3, An "
      "uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer");
  EXPECT_EQ(e.xid, 48u);
  EXPECT_EQ(e.pci_device, "00000000:B3:00");
  EXPECT_DOUBLE_EQ(e.uptime_s.value_or(0), 1843.308145);
  e = parse(
      "[16450076.435595] gpu-node-17 kernel: NVRM: Xid (PCI:0002:00:00): 119, pid=1582259, "
      "name=python, Timeout after 6s of waiting for RPC response from GPU0 GSP!");
  EXPECT_EQ(e.xid, 119u);
  EXPECT_EQ(e.pci_device, "00000002:00:00");
  // syslog (no kernel timestamp), and the older form without "PCI:".
  e = parse(
      "Nov 28 08:00:01 gpu-node-17 kernel: NVRM: Xid (PCI:0000:10:1c): 63, pid=1896, Row "
      "Remapper: New row marked for remapping, reset gpu to activate.");
  EXPECT_EQ(e.xid, 63u);
  EXPECT_EQ(e.pci_device, "00000000:10:1C");
  EXPECT_FALSE(e.uptime_s);
  e = parse("NVRM: Xid (0000:03:00): 14, Channel 00000001");
  EXPECT_EQ(e.xid, 14u);
  EXPECT_EQ(e.pci_device, "00000000:03:00");
  // With the function, as some tools rewrite it.
  EXPECT_EQ(parse("NVRM: Xid (PCI:0000:b3:00.0): 79, GPU has fallen off the bus.").pci_device,
            "00000000:B3:00");
}

TEST(Xid, NotAnXidLine) {
  for (std::string_view line :
       {"", "NVRM: GPU at PCI:0000:01:00: GPU-299fe279-1c52-2255-d4ba-07d7bd2861d9",
        "NVRM: GPU 0000:04:00.0: GPU has fallen off the bus.",
        "nvidia-nvswitch0: SXid (PCI:0000:ca:00.0): 19077, Non-fatal, Link 20",
        "NVRM: Xid (PCI:0000:cb:00) 13, no colon", "NVRM: Xid (PCI:0000:cb:00): , empty",
        "NVRM: Xid (PCI:0000:cb:00): 0, zero", "NVRM: Xid (PCI:0000:cb:00): -1, negative",
        "NVRM: Xid (PCI:0000:cb:00): 123456, too long", "NVRM: Xid (PCI:0000:cb:00): 13x, suffix",
        "NVRM: Xid (PCI:000000000:cb:00): 13, domain of 9 digits",
        "NVRM: Xid (PCI:0000:1cb:00): 13, bus of 3 digits",
        "NVRM: Xid (PCI:0000:cb:20): 13, device 0x20",
        "NVRM: Xid (PCI:0000:cb:00.8): 13, function 8", "NVRM: Xid (PCI:zz:cb:00): 13, not hex"})
    EXPECT_FALSE(parse_xid_line(line)) << line;
  const std::string nul("NVRM: Xid (PCI:0000:cb:00): 13\0, a NUL", 38);
  EXPECT_FALSE(parse_xid_line(nul));
}

TEST(Xid, TruncatedLines) {
  // Cut anywhere before the number: nothing; cut after it: the XID without text.
  const std::string line = "NVRM: Xid (PCI:0000:cb:00): 79, pid=0, GPU has fallen off the bus.";
  const std::size_t number_end = line.find(',');
  for (std::size_t n = 0; n < line.size(); ++n) {
    const auto e = parse_xid_line(line.substr(0, n));
    if (n < number_end) {
      // "...: 7" is a cut "79": taken as 7 would be wrong, but a cut there cannot be told from
      // a line that ends with its number; every other cut before the number is no XID.
      if (e) {
        EXPECT_EQ(n, number_end - 1) << line.substr(0, n);
      }
    } else {
      ASSERT_TRUE(e) << line.substr(0, n);
      EXPECT_EQ(e->xid, 79u);
      std::string expected = line.substr(0, n).substr(std::min(n, number_end + 2));
      while (!expected.empty() && expected.back() == ' ') expected.pop_back();
      EXPECT_EQ(e->text, expected) << n;
    }
  }
  // A kmsg header cut short: the XID without a time.
  const auto e = parse_xid_line("4,1841;NVRM: Xid (PCI:0000:cb:00): 31, pid=7");
  ASSERT_TRUE(e);
  EXPECT_FALSE(e->uptime_s);  // two fields before ';': not a record header
}

TEST(Xid, HostileText) {
  // Control characters, an escape sequence, bytes above 0x7f, CR: printable ASCII only.
  XidEvent e =
      parse(std::string("NVRM: Xid (PCI:0000:cb:00): 31, \x1b[31mred\x1b[0m \xff\xfe\r\n"));
  EXPECT_EQ(e.text, "?[31mred?[0m ??");
  // A megabyte of text: bounded.
  e = parse("NVRM: Xid (PCI:0000:cb:00): 31, " + std::string(1 << 20, 'A'));
  EXPECT_EQ(e.text.size(), kXidTextBytes + 3);
  EXPECT_TRUE(e.text.ends_with("..."));
  // A malformed report before a real one does not hide it; a second report is not read.
  e = parse("NVRM: Xid (PCI:0000:cb:00): 0, NVRM: Xid (PCI:0000:cc:00): 79, lost");
  EXPECT_EQ(e.xid, 79u);
  EXPECT_EQ(e.pci_device, "00000000:CC:00");
  // Digits that overflow the timestamp fields: no time, still the XID.
  e = parse("99999999999999999999999,1,2,-;NVRM: Xid (PCI:0000:cb:00): 13, x");
  EXPECT_FALSE(e.uptime_s);
  e = parse("[ 99999999999999999.1] NVRM: Xid (PCI:0000:cb:00): 13, x");
  EXPECT_FALSE(e.uptime_s);
  // The marker a thousand times over without a report: no XID, and quickly.
  std::string many;
  for (int i = 0; i < 100000; ++i) many += "NVRM: Xid (";
  EXPECT_FALSE(parse_xid_line(many));
}

TEST(Xid, InterleavedDevicesAndOtherLines) {
  const std::string log =
      "6,1,100000,-;Linux version 6.1.0-28-amd64\n"
      " SUBSYSTEM=pci\n"
      " DEVICE=+pci:0000:cb:00.0\n"
      "6,900,5000000,-;NVRM: GPU at PCI:0000:cb:00: GPU-299fe279-1c52-2255-d4ba-07d7bd2861d9\n"
      "4,901,5000100,-;NVRM: Xid (PCI:0000:cb:00): 13, pid=1, name=a, Graphics Exception\n"
      "6,902,5000200,-;NVRM: GPU at PCI:0000:05:00: GPU-0a0b0c0d-0000-1111-2222-333344445555\n"
      "4,903,5000300,-;NVRM: Xid (PCI:0000:05:00): 79, pid='<unknown>', name=<unknown>, GPU has "
      "fallen off the bus.\n"
      "6,904,5000400,-;usb 1-1: new high-speed USB device number 2\n"
      "4,905,6000000,-;NVRM: Xid (PCI:0000:cb:00): 13, pid=2, name=b, Graphics Exception\n"
      "4,906,7000000,-;NVRM: Xid (PCI:0000:cb:00): 31, pid=2, name=b, MMU Fault\n"
      "4,907,8000000,-;NVRM: Xid (PCI:0000:05:00): 154, GPU recovery action changed from 0x0 "
      "(None) to 0x2 (Node Reboot Required)";  // the last line has no newline
  const KernelLogXids parsed = parse_kernel_log(log);
  EXPECT_EQ(parsed.lines, 11u);
  ASSERT_EQ(parsed.events.size(), 5u);
  EXPECT_EQ(parsed.uuid_of.at("00000000:CB:00"), "GPU-299fe279-1c52-2255-d4ba-07d7bd2861d9");
  EXPECT_EQ(parsed.uuid_of.at("00000000:05:00"), "GPU-0a0b0c0d-0000-1111-2222-333344445555");
  std::vector<XidEvent> cb, five;
  for (const auto& e : parsed.events) (e.pci_device == "00000000:CB:00" ? cb : five).push_back(e);
  const auto cb_counts = count_xids(cb);
  ASSERT_EQ(cb_counts.size(), 2u);
  EXPECT_EQ(cb_counts[0].xid, 13u);
  EXPECT_EQ(cb_counts[0].count, 2u);
  EXPECT_DOUBLE_EQ(cb_counts[0].latest_uptime_s.value_or(0), 6.0);
  EXPECT_EQ(cb_counts[0].latest_text, "pid=2, name=b, Graphics Exception");
  const CheckResult cb_result = xid_result(cb_counts);
  EXPECT_EQ(cb_result.verdict, Verdict::warn);  // RESTART_APP, twice
  EXPECT_EQ(remediation_of(cb_result), Remediation::restart_job);
  EXPECT_EQ(cb_result.value, 3);
  const CheckResult five_result = xid_result(count_xids(five));
  EXPECT_EQ(five_result.verdict, Verdict::fail);
  EXPECT_EQ(remediation_of(five_result), Remediation::reboot_node);
  EXPECT_NE(five_result.reason.find("Xid 79 x1 (GPU has fallen off the bus, NVIDIA: RESTART_BM)"),
            std::string::npos)
      << five_result.reason;
}

TEST(Xid, EveryActionClass) {
  // IGNORE passes, RESTART_APP warns, the rest fail; each with its remediation.
  struct Case {
    unsigned xid;
    Verdict verdict;
    Remediation remediation;
  };
  for (const Case& c :
       {Case{43, Verdict::pass, Remediation::none}, Case{92, Verdict::pass, Remediation::none},
        Case{13, Verdict::warn, Remediation::restart_job},
        Case{31, Verdict::warn, Remediation::restart_job},
        Case{94, Verdict::warn, Remediation::restart_job},
        Case{48, Verdict::fail, Remediation::reset_gpu},
        Case{63, Verdict::fail, Remediation::reset_gpu},
        Case{64, Verdict::fail, Remediation::reset_gpu},
        Case{74, Verdict::fail, Remediation::reset_gpu},
        Case{95, Verdict::fail, Remediation::reset_gpu},
        Case{119, Verdict::fail, Remediation::reset_gpu},
        Case{79, Verdict::fail, Remediation::reboot_node},
        Case{57, Verdict::fail, Remediation::drain_inspect},
        Case{9999, Verdict::warn, Remediation::monitor}}) {
    const CheckResult r = one(c.xid);
    EXPECT_EQ(r.verdict, c.verdict) << c.xid << ": " << r.reason;
    EXPECT_EQ(remediation_of(r), c.remediation) << c.xid << ": " << r.reason;
  }
  EXPECT_NE(one(9999).reason.find("not in NVIDIA's catalog"), std::string::npos);
  // Every catalog action maps to a remediation, and every XID of the catalog is found.
  for (const auto& entry : xid_catalog()) {
    ASSERT_EQ(find_xid(entry.xid), &entry);
    EXPECT_EQ(remediation_of(one(entry.xid)), remediation_for(entry.action)) << entry.xid;
  }
  EXPECT_EQ(find_xid(1), nullptr);
  // No XID: a pass that says so.
  const CheckResult none = xid_result({});
  EXPECT_EQ(none.verdict, Verdict::pass);
  EXPECT_EQ(none.value, 0);
  EXPECT_EQ(none.reason, "no XID in the kernel log since boot");
}

TEST(Xid, RecoveryActionOfXid154) {
  const std::string prefix = "GPU recovery action changed from 0x0 (None) to ";
  EXPECT_EQ(remediation_of(one(154, prefix + "0x1 (GPU Reset Required)")), Remediation::reset_gpu);
  EXPECT_EQ(remediation_of(one(154, prefix + "0x2 (Node Reboot Required)")),
            Remediation::reboot_node);
  EXPECT_EQ(remediation_of(one(154, prefix + "0x4 (Drain and Reset)")), Remediation::reset_gpu);
  EXPECT_EQ(
      one(154, "GPU recovery action changed from 0x1 (GPU Reset Required) to 0x0 (None)").verdict,
      Verdict::pass);
  // An action newer than the parser: looked at.
  EXPECT_EQ(remediation_of(one(154, prefix + "0x9 (Replace The Moon)")),
            Remediation::drain_inspect);
}

TEST(Xid, BusIdsMeetTheLogsForm) {
  EXPECT_EQ(xid_pci_device("0000:cb:00.0"), "00000000:CB:00");
  EXPECT_EQ(xid_pci_device("00000000:CB:00.0"), "00000000:CB:00");
  EXPECT_EQ(xid_pci_device("0001:02:1f.7"), "00000001:02:1F");
  EXPECT_EQ(xid_pci_device("cb:00.0"), "");
  EXPECT_EQ(xid_pci_device("0000:cb:00.0 "), "");
}

TEST(Xid, CatalogIsTheSharedFile) {
  std::ifstream in(std::string(CUDATOOL_SOURCE_DIR) + "/share/xid-catalog.json");
  const auto catalog = nlohmann::json::parse(in);
  EXPECT_EQ(xid_catalog_source(), catalog["source"].get<std::string>());
  ASSERT_EQ(xid_catalog().size(), catalog["xids"].size());
  for (const auto& row : catalog["xids"]) {
    const XidCatalogEntry* entry = find_xid(row["xid"].get<unsigned>());
    ASSERT_NE(entry, nullptr) << row.dump();
    EXPECT_EQ(entry->mnemonic, row["mnemonic"].get<std::string>());
    EXPECT_EQ(entry->description, row["description"].get<std::string>());
    EXPECT_EQ(xid_action_name(entry->action), row["action"].get<std::string>());
    EXPECT_TRUE(catalog["actions"].contains(row["action"].get<std::string>())) << row.dump();
  }
}

TEST(Xid, LongLogsAreBounded) {
  std::string log;
  for (int i = 0; i < 1000; ++i) log += "4,1,1,-;NVRM: Xid (PCI:0000:cb:00): 13, x\n";
  const KernelLogXids parsed = parse_kernel_log(log);
  EXPECT_EQ(parsed.events.size(), 1000u);
  EXPECT_FALSE(parsed.truncated);
  KernelLogXids many;
  for (std::size_t i = 0; i < kMaxXidEvents + 5; ++i)
    add_kernel_log_line(many, "NVRM: Xid (PCI:0000:cb:00): 13, x");
  EXPECT_EQ(many.events.size(), kMaxXidEvents);
  EXPECT_TRUE(many.truncated);
}
