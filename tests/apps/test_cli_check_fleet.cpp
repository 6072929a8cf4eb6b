// `cudatool check` for fleets, end to end through the real binary with the fake driver and
// fake NVML: XIDs from a kernel log (CUDATOOL_TEST_KMSG: a file read as /dev/kmsg;
// CUDATOOL_TEST_JOURNALCTL: a program run as journalctl) mapped to their GPUs and
// classified, what is said where the log cannot be read, the remediations, and a broken GPU
// (answering NVML but not CUDA, lost to NVML, missing from CUDA) that hides no other GPU.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cudatool/base/test_hooks.hpp"
#include "process.hpp"

using namespace cudatool::testing;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const json& find_check(const json& checks, const std::string& name) {
  for (const auto& c : checks)
    if (c["name"] == name) return c;
  static const json none;
  ADD_FAILURE() << "no check " << name << " in " << checks.dump();
  return none;
}

// Kernel-log records as /dev/kmsg gives them, the fake driver's GPUs on buses 01 and 02:
// GPU 0 (01) with two RESTART_APP XIDs, GPU 1 (02) fallen off the bus, and a device on bus
// 05 that is neither, between other lines.
constexpr const char* kLog =
    "6,1,100000,-;Linux version 6.1.0-28-amd64 (debian-kernel@lists.debian.org)\n"
    "6,880,4200000,-;nvidia-nvlink: Nvlink Core is being initialized, major device number 234\n"
    "6,900,5000000,-;NVRM: GPU at PCI:0000:01:00: GPU-10111213-1415-1617-1819-1a1b1c1d1e00\n"
    "4,901,5000100,-;NVRM: Xid (PCI:0000:01:00): 13, pid=4242, name=python3, Graphics SM Warp "
    "Exception on (GPC 7, TPC 7, SM 0): Illegal Instruction Parameter\n"
    " SUBSYSTEM=pci\n"
    " DEVICE=+pci:0000:01:00.0\n"
    "6,902,5000200,-;NVRM: GPU at PCI:0000:02:00: GPU-20212223-2425-2627-2829-2a2b2c2d2e01\n"
    "4,903,6000000,-;NVRM: Xid (PCI:0000:02:00): 79, pid='<unknown>', name=<unknown>, GPU has "
    "fallen off the bus.\n"
    "4,904,6500000,-;NVRM: Xid (PCI:0000:01:00): 31, pid=4242, name=python3, Ch 00000008, "
    "intr 00000000. MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_0 faulted @ 0x7f_00000000\n"
    "4,905,7000000,-;NVRM: Xid (PCI:0000:05:00): 48, pid=1, name=x, An uncorrectable double bit "
    "error (DBE) has been detected on GPU in the framebuffer at partition 6, subpartition 0.\n"
    "6,906,7100000,-;usb 1-1: new high-speed USB device number 2 using xhci_hcd\n";

class CliCheckFleet : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cudatool::test_hooks_enabled())
      GTEST_SKIP() << "a build without test hooks (CUDATOOL_TEST_HOOKS=OFF)";
    dir_ = fs::temp_directory_path() /
           ("cudatool-fleet-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    write("kmsg", kLog);
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  std::string write(const std::string& name, const std::string& text, bool executable = false) {
    const fs::path p = dir_ / name;
    std::ofstream(p) << text;
    if (executable) ::chmod(p.c_str(), 0755);
    return p.string();
  }
  // The fake driver (and NVML where `nvml`), the log file as /dev/kmsg, no journalctl.
  ProcessOptions options(std::map<std::string, std::string> settings = {}, bool nvml = false) {
    ProcessOptions o = nvml ? with_fake_nvml(settings) : with_fake_driver(settings);
    if (!nvml) o.env["CUDATOOL_NO_NVML"] = "1";
    o.env["CUDATOOL_TEST_KMSG"] = (dir_ / "kmsg").string();
    o.env["CUDATOOL_TEST_JOURNALCTL"] = (dir_ / "no-journalctl").string();
    o.env["CUDA_VISIBLE_DEVICES"] = std::nullopt;
    return o;
  }
  fs::path dir_;
};

}  // namespace

TEST_F(CliCheckFleet, XidsAreMappedToTheirGpusAndClassified) {
  const auto r = run_cudatool({"check", "--only", "identity,xid", "--json"}, options());
  EXPECT_EQ(r.exit_code, 9) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["kernel_log"]["readable"], true);
  EXPECT_EQ(j["kernel_log"]["source"], (dir_ / "kmsg").string());
  EXPECT_EQ(j["remediation"], "reboot_node");
  // GPU 0: Xid 13 and 31 (RESTART_APP): a warning, restart the job.
  const json& gpu0 = j["devices"][0];
  EXPECT_EQ(find_check(gpu0["checks"], "xid")["verdict"], "warn");
  EXPECT_EQ(find_check(gpu0["checks"], "xid")["remediation"], "restart_job");
  EXPECT_EQ(find_check(gpu0["checks"], "xid")["value"], 2);
  ASSERT_EQ(gpu0["xids"].size(), 2u);
  EXPECT_EQ(gpu0["xids"][0]["xid"], 13);
  EXPECT_EQ(gpu0["xids"][0]["nvidia_action"], "RESTART_APP");
  EXPECT_NEAR(gpu0["xids"][0]["latest_uptime_s"].get<double>(), 5.0001, 1e-9);
  EXPECT_TRUE(gpu0["xids"][0]["latest_time"].is_number());
  EXPECT_EQ(gpu0["xids"][1]["xid"], 31);
  EXPECT_EQ(gpu0["remediation"], "restart_job");
  // GPU 1: off the bus: reboot the node.
  const json& gpu1 = j["devices"][1];
  EXPECT_EQ(find_check(gpu1["checks"], "xid")["verdict"], "fail");
  EXPECT_EQ(gpu1["remediation"], "reboot_node");
  EXPECT_EQ(gpu1["xids"][0]["mnemonic"], "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS");
  EXPECT_EQ(gpu1["xids"][0]["latest_text"],
            "pid='<unknown>', name=<unknown>, GPU has fallen off the bus.");
  // Bus 05 is none of the checked GPUs: a node check, and the JSON's other GPUs.
  const json& other = find_check(j["node_checks"], "xid_other_gpus");
  EXPECT_EQ(other["verdict"], "fail");
  EXPECT_EQ(other["remediation"], "reset_gpu");  // Xid 48: NVIDIA's DBE workflow
  EXPECT_NE(other["reason"].get<std::string>().find("00000000:05:00"), std::string::npos);
  EXPECT_EQ(j["kernel_log"]["other_gpus"][0]["pci_device"], "00000000:05:00");
  const json& log = find_check(j["node_checks"], "kernel_log");
  EXPECT_EQ(log["verdict"], "pass");
  EXPECT_EQ(log["value"], 11);  // every line of the file, continuation lines too
  EXPECT_NE(log["reason"].get<std::string>().find("4 XIDs"), std::string::npos) << log.dump();

  // The text says what to do, per check, per GPU and for the node.
  const auto text = run_cudatool({"check", "--only", "identity,xid"}, options());
  EXPECT_NE(text.out.find("GPU has fallen off the bus, NVIDIA: RESTART_BM"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("-> fail (reboot_node)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("remediation: reboot_node (reboot the node)"), std::string::npos)
      << text.out;
  // --skip xid reads no log.
  const auto skipped =
      run_cudatool({"check", "--skip", "xid,compute,memory,hostlink,peer", "--json"}, options());
  EXPECT_FALSE(json::parse(skipped.out).contains("kernel_log")) << skipped.out;
}

TEST_F(CliCheckFleet, PrometheusCountsEachXidWithItsLatestTime) {
  const auto r =
      run_cudatool({"check", "--only", "identity,xid", "--format", "prometheus"}, options());
  EXPECT_EQ(r.exit_code, 9) << r.err;
  for (const char* line :
       {"cudatool_check_xid_count{UUID=\"GPU-10111213-1415-1617-1819-1a1b1c1d1e00\","
        "pci_bus_id=\"00000000:01:00.0\",modelName=\"Fake GPU 0\",cuda_device=\"0\",xid=\"13\"} 1",
        "cudatool_check_other_gpu_xid_count{pci_bus_id=\"00000000:05:00.0\",xid=\"48\"} 1",
        "cudatool_check_remediation{action=\"reboot_node\"} 1",
        "cudatool_check_remediation{action=\"none\"} 0",
        "cudatool_check_gpu_remediation{UUID=\"GPU-20212223-2425-2627-2829-2a2b2c2d2e01\","
        "pci_bus_id=\"00000000:02:00.0\",modelName=\"Fake GPU 1\",cuda_device=\"1\","
        "action=\"reboot_node\"} 1",
        "cudatool_check_xid_events{UUID=\"GPU-20212223-2425-2627-2829-2a2b2c2d2e01\""})
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
  EXPECT_NE(r.out.find("cudatool_check_xid_latest_timestamp_seconds{UUID=\"GPU-1011"),
            std::string::npos)
      << r.out;
}

TEST_F(CliCheckFleet, AnUnreadableLogIsSaidAndSkipped) {
  auto o = options();
  o.env["CUDATOOL_TEST_KMSG"] = (dir_ / "no-kmsg").string();
  const auto r = run_cudatool({"check", "--only", "identity,xid", "--json"}, o);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["kernel_log"]["readable"], false);
  const json& log = find_check(j["node_checks"], "kernel_log");
  EXPECT_EQ(log["verdict"], "skipped");
  const std::string reason = log["reason"];
  EXPECT_NE(reason.find((dir_ / "no-kmsg").string() + ": No such file or directory"),
            std::string::npos)
      << reason;
  EXPECT_NE(reason.find((dir_ / "no-journalctl").string()), std::string::npos) << reason;
  EXPECT_FALSE(j["devices"][0].contains("xids"));
  for (const auto& d : j["devices"])
    for (const auto& c : d["checks"]) EXPECT_NE(c["name"], "xid");
}

TEST_F(CliCheckFleet, TheJournalWhereKmsgIsRefused) {
  auto o = options();
  o.env["CUDATOOL_TEST_KMSG"] = (dir_ / "no-kmsg").string();
  // journalctl -k -o short-monotonic's lines, and its arguments checked.
  write("journal.txt",
        "[    5.000100] gpu-node-17 kernel: NVRM: Xid (PCI:0000:02:00): 119, pid=1582259, "
        "name=python, Timeout after 6s of waiting for RPC response from GPU1 GSP!\n"
        "[    6.000000] gpu-node-17 kernel: usb 1-1: new device\n");
  o.env["CUDATOOL_TEST_JOURNALCTL"] = write("journalctl",
                                            "#!/bin/sh\n[ \"$*\" = \"-k -b 0 -o short-monotonic "
                                            "--no-pager -q\" ] || { echo \"args: $*\" >&2; "
                                            "exit 1; }\ncat " +
                                                (dir_ / "journal.txt").string() + "\n",
                                            true);
  auto r = run_cudatool({"check", "--only", "identity,xid", "--json"}, o);
  EXPECT_EQ(r.exit_code, 9) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["kernel_log"]["source"], (dir_ / "journalctl").string() + " -k -b 0");
  EXPECT_EQ(j["devices"][1]["xids"][0]["xid"], 119);
  EXPECT_EQ(j["devices"][1]["remediation"], "reset_gpu");
  EXPECT_NEAR(j["devices"][1]["xids"][0]["latest_uptime_s"].get<double>(), 5.0001, 1e-9);

  // A journal this user may not read: journalctl prints nothing and exits 0.
  o.env["CUDATOOL_TEST_JOURNALCTL"] = write("journalctl-empty", "#!/bin/sh\nexit 0\n", true);
  r = run_cudatool({"check", "--only", "identity,xid", "--json"}, o);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  j = json::parse(r.out);
  EXPECT_NE(find_check(j["node_checks"], "kernel_log")["reason"].get<std::string>().find(
                "showed no kernel message"),
            std::string::npos)
      << r.out;

  // A journalctl that hangs: stopped at the deadline, the check still ends.
  o.env["CUDATOOL_TEST_JOURNALCTL"] =
      write("journalctl-hang",
            "#!/bin/sh\necho '[ 1.0] k: NVRM: Xid (PCI:0000:01:00): 13, x'\nexec sleep 60\n", true);
  const auto start = std::chrono::steady_clock::now();
  r = run_cudatool({"check", "--only", "identity,xid", "--json"}, o);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 15) << "the journal's deadline did not hold";
  j = json::parse(r.out);
  const std::string reason = find_check(j["node_checks"], "kernel_log")["reason"];
  EXPECT_NE(reason.find("stopped after 3.0 s"), std::string::npos) << reason;
  EXPECT_EQ(j["devices"][0]["xids"][0]["xid"], 13);  // what was read before the deadline
}

TEST_F(CliCheckFleet, AGpuAnsweringNvmlButNotCudaHidesNoOther) {
  const auto r = run_cudatool({"check", "--only", "identity,health", "--json"},
                              options({{"FAKE_CUDA_BROKEN", "1"}}, true));
  EXPECT_EQ(r.exit_code, 9) << r.err;
  const json j = json::parse(r.out);
  ASSERT_EQ(j["devices"].size(), 2u);
  // The other GPU is checked as ever.
  EXPECT_EQ(j["devices"][0]["verdict"], "pass") << j["devices"][0].dump();
  // The broken one is named by bus id and UUID, with the driver's error.
  const json& broken = j["devices"][1];
  EXPECT_EQ(broken["pci_bus_id"], "0000:02:00.0");
  EXPECT_EQ(broken["uuid"], "GPU-20212223-2425-2627-2829-2a2b2c2d2e01");
  const json& device = find_check(broken["checks"], "device");
  EXPECT_EQ(device["verdict"], "fail");
  EXPECT_EQ(device["remediation"], "reset_gpu");
  EXPECT_NE(device["reason"].get<std::string>().find("CUDA_ERROR_UNKNOWN"), std::string::npos)
      << device.dump();
  // NVML still answers for it: its health is read.
  EXPECT_EQ(find_check(broken["checks"], "ecc_mode")["verdict"], "pass");
  // The text lists both.
  const auto text = run_cudatool({"check", "--only", "identity,health"},
                                 options({{"FAKE_CUDA_BROKEN", "1"}}, true));
  EXPECT_NE(text.out.find("device 0  Fake GPU 0"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("0000:02:00.0  GPU-20212223"), std::string::npos) << text.out;
}

TEST_F(CliCheckFleet, AGpuLostToNvmlAndCudaIsNamedOthersChecked) {
  // Bus 02 answers neither: CUDA's context fails and NVML says the GPU is lost.
  auto r = run_cudatool({"check", "--only", "identity,health,compute", "--json"},
                        options({{"FAKE_CUDA_BROKEN", "1"}, {"FAKE_NVML_LOST", "2"}}, true));
  EXPECT_EQ(r.exit_code, 9) << r.err;
  json j = json::parse(r.out);
  ASSERT_EQ(j["devices"].size(), 2u);
  const json& nvml = find_check(j["devices"][1]["checks"], "nvml");
  EXPECT_EQ(nvml["verdict"], "fail");
  EXPECT_EQ(nvml["remediation"], "reboot_node");
  EXPECT_NE(nvml["reason"].get<std::string>().find("NVML_ERROR_GPU_IS_LOST"), std::string::npos);
  EXPECT_EQ(find_check(j["devices"][0]["checks"], "ecc_mode")["verdict"], "pass");
  EXPECT_EQ(j["remediation"], "reboot_node");
  // NVML's node view: the lost GPU is also missing from its list.
  const json& count = find_check(j["node_checks"], "nvml_devices");
  EXPECT_EQ(count["verdict"], "fail") << count.dump();
  EXPECT_NE(count["reason"].get<std::string>().find(
                "NVML GPU 1: NVML_ERROR_GPU_IS_LOST (fallen off the bus)"),
            std::string::npos)
      << count.dump();
  // Prometheus: the lost GPU keeps the gpu label (empty), so node_exporter takes the file.
  const auto prom = run_cudatool({"check", "--only", "identity,health", "--format", "prometheus"},
                                 options({{"FAKE_NVML_LOST", "2"}}, true));
  EXPECT_NE(prom.out.find("cudatool_check_gpu_verdict{gpu=\"0\",UUID=\"GPU-1011"),
            std::string::npos)
      << prom.out;
  EXPECT_NE(prom.out.find("cudatool_check_gpu_verdict{gpu=\"\",UUID=\"GPU-2021"), std::string::npos)
      << prom.out;
}

TEST_F(CliCheckFleet, AGpuCudaDoesNotListIsNamedFromNvmlAndTheLog) {
  // Three GPUs to NVML, two to CUDA: the third is off the bus; the log names its UUID.
  write("kmsg",
        "6,900,5000000,-;NVRM: GPU at PCI:0000:03:00: GPU-30313233-3435-3637-3839-3a3b3c3d3e02\n"
        "4,903,6000000,-;NVRM: Xid (PCI:0000:03:00): 79, pid='<unknown>', name=<unknown>, GPU has "
        "fallen off the bus.\n");
  const auto r = run_cudatool({"check", "--only", "identity,xid", "--json"},
                              options({{"FAKE_NVML_COUNT", "3"}, {"FAKE_NVML_LOST", "3"}}, true));
  EXPECT_EQ(r.exit_code, 9) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["devices"][0]["verdict"], "pass");
  EXPECT_EQ(j["devices"][1]["verdict"], "pass");
  const json& count = find_check(j["node_checks"], "nvml_devices");
  EXPECT_EQ(count["verdict"], "fail");
  EXPECT_EQ(count["value"], 2);
  EXPECT_EQ(count["threshold"], 3);
  const std::string reason = count["reason"];
  EXPECT_NE(reason.find("NVML GPU 2: NVML_ERROR_GPU_IS_LOST"), std::string::npos) << reason;
  EXPECT_NE(reason.find("00000000:03:00 GPU-30313233-3435-3637-3839-3a3b3c3d3e02"),
            std::string::npos)
      << reason;
  const json& xid = find_check(j["node_checks"], "xid_other_gpus");
  EXPECT_NE(xid["reason"].get<std::string>().find("(GPU-30313233-3435-3637-3839-3a3b3c3d3e02)"),
            std::string::npos);
  EXPECT_EQ(j["remediation"], "reboot_node");
  // Restricted to some GPUs (CUDA_VISIBLE_DEVICES), NVML's whole list is not compared.
  auto o = options({{"FAKE_NVML_COUNT", "3"}, {"FAKE_NVML_LOST", "3"}}, true);
  o.env["CUDA_VISIBLE_DEVICES"] = "0";
  const json visible = json::parse(run_cudatool({"check", "--only", "identity", "--json"}, o).out);
  for (const auto& c : visible["node_checks"]) EXPECT_NE(c["name"], "nvml_devices");
}

TEST_F(CliCheckFleet, RowRemapsAndTheLinkSayWhatToDo) {
  auto r = run_cudatool({"check", "--only", "health", "--device", "0", "--json"},
                        options({{"FAKE_NVML_REMAP", "0,3,1,0"}}, true));
  EXPECT_EQ(r.exit_code, 9) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(find_check(j["devices"][0]["checks"], "row_remap")["remediation"], "reboot_node");
  r = run_cudatool({"check", "--only", "health", "--device", "0", "--json"},
                   options({{"FAKE_NVML_REMAP", "0,3,0,1"}}, true));
  j = json::parse(r.out);
  EXPECT_EQ(find_check(j["devices"][0]["checks"], "row_remap")["remediation"], "drain_inspect");
  EXPECT_EQ(j["remediation"], "drain_inspect");
  // A link idling below its maximum where it cannot be loaded (this fake driver has no
  // streams): not judged, and the other health readings stay.
  r = run_cudatool({"check", "--only", "health", "--device", "0", "--json"},
                   options({{"FAKE_NVML_PCIE_CURRENT", "4,8"}}, true));
  j = json::parse(r.out);
  const json& link = find_check(j["devices"][0]["checks"], "pcie_link");
  EXPECT_EQ(link["verdict"], "skipped");
  EXPECT_NE(link["reason"].get<std::string>().find("idles at Gen4 x8"), std::string::npos)
      << link.dump();
  EXPECT_EQ(find_check(j["devices"][0]["checks"], "ecc_mode")["verdict"], "pass");
  // NVLink fabric, where NVML reports it.
  r = run_cudatool({"check", "--only", "health", "--device", "0", "--json"},
                   options({{"FAKE_NVML_FABRIC", "3,999"}}, true));
  j = json::parse(r.out);
  EXPECT_EQ(find_check(j["devices"][0]["checks"], "nvlink_fabric")["verdict"], "fail");
}

TEST_F(CliCheckFleet, DevicesListsABrokenGpuByBusIdAndUuidAndExitsFive) {
  auto o = with_fake_driver({{"FAKE_CUDA_BROKEN", "1"}});
  auto r = run_cudatool({"devices", "--fresh"}, o);
  EXPECT_EQ(r.exit_code, 5) << r.err;
  EXPECT_NE(r.out.find("0  Fake GPU 0  sm_90"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1  (no answer)  0000:02:00.0  GPU-20212223-2425-2627-2829-2a2b2c2d2e01"),
            std::string::npos)
      << r.out;
  EXPECT_NE(
      r.err.find("cudatool: device 1 (0000:02:00.0, GPU-20212223-2425-2627-2829-2a2b2c2d2e01) "
                 "does not answer: "),
      std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("CUDA_ERROR_UNKNOWN"), std::string::npos) << r.err;
  r = run_cudatool({"devices", "--fresh", "--json"}, o);
  EXPECT_EQ(r.exit_code, 5) << r.err;
  const json j = json::parse(r.out);
  ASSERT_EQ(j["devices"].size(), 2u);
  EXPECT_EQ(j["devices"][0]["name"], "Fake GPU 0");
  EXPECT_FALSE(j["devices"][0].contains("error"));
  EXPECT_EQ(j["devices"][1]["pci_bus_id"], "0000:02:00.0");
  EXPECT_NE(j["devices"][1]["error"].get<std::string>().find("CUDA_ERROR_UNKNOWN"),
            std::string::npos);
  EXPECT_EQ(j["peer_access"], json::parse("[[false,false],[false,false]]"));
}
