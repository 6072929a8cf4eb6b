// The engine of `cudatool check` (lib/src/check/engine.cpp): every device's checks and the
// node's in one report; a check that throws fails its own results, never the run; a device
// another process holds is the occupancy's verdict; the kernel log's XIDs per checked GPU
// and for the GPUs that are none of them; the GPUs NVML knows that CUDA does not list.
// Against the fake driver and the fake NVML in a child (fake_driver_child.hpp), whose plain
// build has no streams: the checks that need one fail, as on a driver that lacks them.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "check_samples.hpp"
#include "cudatool/base/test_hooks.hpp"
#include "cudatool/check/check.hpp"
#include "fake_driver_child.hpp"

namespace cudatool::check {
namespace {

namespace fs = std::filesystem;
using cudatool::testing::expect_in_fake_driver;
using cudatool::testing::fake_nvml_env;
using cudatool::testing::FakeChecks;
using cudatool::testing::result_named;
using cudatool::testing::result_names;

Options only(std::set<Kind> kinds) {
  ::unsetenv("CUDA_VISIBLE_DEVICES");  // every GPU is checked
  Options options;
  options.kinds = std::move(kinds);
  return options;
}

TEST(CheckEngine, EveryDeviceAndTheNodeInOneReport) {
  expect_in_fake_driver(
      CUDATOOL_FAKE_LIBCUDA, fake_nvml_env({{"FAKE_CUDA_DRIVER_VERSION", "12080"}}),
      [](FakeChecks& c) {
        const Report report = run_check(only({Kind::identity, Kind::health}));
        c.expect(report.devices.size() == 2, "two devices");
        c.expect(report.cuda_version == 12080, "the driver's CUDA version");
        c.expect(report.kernel_form == embedded_kernel_contents(), report.kernel_form);
        c.expect(report.seconds > 0, "timed");
        for (const auto& d : report.devices) {
          c.expect(result_named(d.checks, "identity") != nullptr,
                   "identity: " + result_names(d.checks));
          c.expect(result_named(d.checks, "pcie_link") != nullptr,
                   "health: " + result_names(d.checks));
          c.expect(!result_named(d.checks, "compute"), "only what was asked");
          c.expect(d.nvml_index.has_value(), "NVML's index");
        }
        const CheckResult* nvml = result_named(report.node_checks, "nvml_devices");
        c.expect(nvml && nvml->verdict == Verdict::pass,
                 "CUDA lists every GPU NVML knows: " + result_names(report.node_checks));
      });
}

TEST(CheckEngine, ACheckThatThrowsFailsItsOwnResultsNotTheRun) {
  // The plain fake driver has no streams: compute, memory and the host link cannot run.
  expect_in_fake_driver(CUDATOOL_FAKE_LIBCUDA, fake_nvml_env({}), [](FakeChecks& c) {
    const Report report =
        run_check(only({Kind::compute, Kind::memory, Kind::hostlink, Kind::health}));
    c.expect(report.devices.size() == 2, "both devices reported");
    for (const auto& d : report.devices) {
      for (const char* name : {"compute", "d2d", "h2d", "d2h"}) {
        const CheckResult* r = result_named(d.checks, name);
        c.expect(r && r->verdict == Verdict::fail && !r->reason.empty() &&
                     remediation_of(*r) == Remediation::reset_gpu,
                 std::string(name) + " failed with the driver's error: " + result_names(d.checks));
      }
      c.expect(result_named(d.checks, "pcie_link") != nullptr,
               "health still read: " + result_names(d.checks));
    }
  });
  // A device the driver lists but does not answer for is named and failed; the other is
  // still checked.
  expect_in_fake_driver(
      CUDATOOL_FAKE_LIBCUDA, fake_nvml_env({{"FAKE_CUDA_BROKEN", "1"}}), [](FakeChecks& c) {
        const Report report = run_check(only({Kind::identity}));
        c.expect(report.devices.size() == 2, "both listed");
        if (report.devices.size() != 2) return;
        const CheckResult* broken = result_named(report.devices[1].checks, "device");
        c.expect(broken && broken->verdict == Verdict::fail &&
                     remediation_of(*broken) == Remediation::reset_gpu,
                 "device 1: " + result_names(report.devices[1].checks));
        const CheckResult* fine = result_named(report.devices[0].checks, "identity");
        c.expect(fine && fine->verdict != Verdict::fail,
                 "device 0: " + result_names(report.devices[0].checks));
      });
}

TEST(CheckEngine, ADeviceAnotherProcessHoldsIsTheOccupancysVerdict) {
  expect_in_fake_driver(
      CUDATOOL_FAKE_LIBCUDA, fake_nvml_env({{"FAKE_CUDA_CTX_BUSY", "0"}}), [](FakeChecks& c) {
        const Report report = run_check(only({Kind::occupancy, Kind::compute, Kind::peer}));
        c.expect(report.devices.size() == 2, "two devices");
        if (report.devices.size() != 2) return;
        const auto& held = report.devices[0].checks;
        const CheckResult* compute = result_named(held, "compute");
        c.expect(compute && compute->verdict == Verdict::skipped &&
                     compute->reason.find("refused a context") != std::string::npos,
                 "not failed, skipped with why: " + result_names(held));
        const CheckResult* mode = result_named(held, "compute_mode");
        c.expect(mode && mode->verdict != Verdict::pass,
                 "the occupancy's finding: " + result_names(held));
        c.expect(report.devices[0].occupancy && report.devices[0].occupancy->context_refused,
                 "recorded");
        // The peer copies from and to it are skipped with the same reason.
        const CheckResult* peer = result_named(held, "peer");
        c.expect(peer && peer->verdict == Verdict::skipped && peer->peer == 1 &&
                     peer->reason.starts_with("device 0 to 1: "),
                 "peer 0 -> 1: " + (peer ? peer->reason : result_names(held)));
      });
}

TEST(CheckEngine, PeersNeedTwoDevices) {
  expect_in_fake_driver(CUDATOOL_FAKE_LIBCUDA, fake_nvml_env({{"FAKE_CUDA_DEVICES", "9.0"}}),
                        [](FakeChecks& c) {
                          const Report report = run_check(only({Kind::peer}));
                          const CheckResult* peer = result_named(report.node_checks, "peer");
                          c.expect(peer && peer->verdict == Verdict::skipped &&
                                       peer->reason == "one device: no peer to copy to",
                                   result_names(report.node_checks));
                        });
}

TEST(CheckEngine, AGpuNvmlKnowsAndCudaDoesNotListFailsTheNode) {
  expect_in_fake_driver(
      CUDATOOL_FAKE_LIBCUDA, fake_nvml_env({{"FAKE_NVML_COUNT", "3"}, {"FAKE_NVML_LOST", "3"}}),
      [](FakeChecks& c) {
        const Report report = run_check(only({Kind::identity}));
        const CheckResult* nvml = result_named(report.node_checks, "nvml_devices");
        c.expect(nvml && nvml->verdict == Verdict::fail, result_names(report.node_checks));
        if (!nvml) return;
        c.expect(nvml->value == 2.0 && nvml->threshold == 3.0, "CUDA's 2 of NVML's 3");
        c.expect(nvml->reason.find("NVML GPU 2") != std::string::npos &&
                     nvml->reason.find("fallen off the bus") != std::string::npos,
                 nvml->reason);
        c.expect(remediation_of(*nvml) == Remediation::reboot_node, "a GPU off the bus: reboot");
      });
}

TEST(CheckEngine, XidsAreCountedPerCheckedGpuAndForTheOthers) {
  if (!test_hooks_enabled()) GTEST_SKIP() << "a build without test hooks reads the real log";
  std::string pattern = (fs::temp_directory_path() / "cudatool-engine-XXXXXX").string();
  const fs::path dir = ::mkdtemp(pattern.data());
  const std::string kmsg = (dir / "kmsg").string();
  std::ofstream(kmsg)
      << "6,1,100000,-;Linux version 6.1.0\n"
         "4,903,6000000,-;NVRM: Xid (PCI:0000:02:00): 79, pid='<unknown>', name=<unknown>, GPU "
         "has fallen off the bus.\n"
         "4,905,7000000,-;NVRM: Xid (PCI:0000:05:00): 48, pid=1, name=x, An uncorrectable "
         "double bit error (DBE) has been detected on GPU in the framebuffer.\n";
  expect_in_fake_driver(
      CUDATOOL_FAKE_LIBCUDA,
      fake_nvml_env({{"CUDATOOL_TEST_KMSG", kmsg}, {"CUDATOOL_TEST_JOURNALCTL", kmsg + "-none"}}),
      [&](FakeChecks& c) {
        const Report report = run_check(only({Kind::xid}));
        c.expect(report.kernel_log_source == kmsg, "read from " + report.kernel_log_source);
        const CheckResult* log = result_named(report.node_checks, "kernel_log");
        c.expect(log && log->verdict == Verdict::pass && log->value == 3.0,
                 "three lines: " + result_names(report.node_checks));
        c.expect(report.devices.size() == 2, "two devices");
        if (report.devices.size() != 2) return;
        const CheckResult* first = result_named(report.devices[0].checks, "xid");
        c.expect(first && first->verdict == Verdict::pass && report.devices[0].xids.empty(),
                 "bus 01: none");
        const CheckResult* second = result_named(report.devices[1].checks, "xid");
        c.expect(second && second->verdict == Verdict::fail && report.devices[1].xids.size() == 1 &&
                     report.devices[1].xids[0].xid == 79,
                 "bus 02: Xid 79");
        const CheckResult* other = result_named(report.node_checks, "xid_other_gpus");
        c.expect(other && other->verdict == Verdict::fail &&
                     report.other_xids.count("00000000:05:00") == 1,
                 "bus 05, not checked: " + result_names(report.node_checks));
      });
  std::error_code ignored;
  fs::remove_all(dir, ignored);
}

}  // namespace
}  // namespace cudatool::check
