// The occupancy check of `cudatool check` (lib/src/check/occupancy.cpp) and the throttle
// reasons by meaning: pure functions of NVML's readings, no GPU.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "check_samples.hpp"
#include "cudatool/check/check.hpp"

using namespace cudatool;
using namespace cudatool::check;

namespace {

constexpr std::uint64_t kGiB = 1ull << 30;

Occupancy idle() {
  return cudatool::testing::idle_occupancy();
}

// The stale job: PyTorch holding 77.7 GiB.
Occupancy memory_hog() {
  Occupancy o = idle();
  o.processes->push_back({4242, "python3", 83429425152ull, true, false});
  o.used_memory = 83429425152ull;
  return o;
}

const CheckResult& find(const std::vector<CheckResult>& results, std::string_view name) {
  return cudatool::testing::find_result(results, name);
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST(CheckOccupancy, IdleDevicePassesAndIsNotShared) {
  const auto results = occupancy_results(idle(), {});
  ASSERT_EQ(results.size(), 4u);
  for (const auto& r : results) {
    EXPECT_EQ(r.kind, Kind::occupancy);
    EXPECT_EQ(r.verdict, Verdict::pass) << r.name << ": " << r.reason;
  }
  EXPECT_EQ(find(results, "processes").reason, "no other process on the device");
  EXPECT_EQ(sharers(idle(), {}), "");
  EXPECT_EQ(context_blocked(idle()), "");
}

TEST(CheckOccupancy, OtherProcessWarnsWithPidAndSizeAndFailsUnderRequireIdle) {
  auto results = occupancy_results(memory_hog(), {});
  const CheckResult& processes = find(results, "processes");
  EXPECT_EQ(processes.verdict, Verdict::warn);
  EXPECT_EQ(*processes.value, 1);
  EXPECT_EQ(processes.reason, "1 other process on the device: pid 4242 (python3, 77.7 GiB)");
  const CheckResult& used = find(results, "used_memory");
  EXPECT_EQ(used.verdict, Verdict::warn);
  // In bytes: the renderers show GiB.
  EXPECT_EQ(used.quantity, Quantity::memory_used_by_others);
  EXPECT_EQ(*used.value, 83429425152.0);
  EXPECT_EQ(*used.threshold, static_cast<double>(kGiB));
  EXPECT_EQ(used.comparison, Comparison::at_most);
  EXPECT_TRUE(has(used.reason, "77.7 GiB of 79.2 GiB used by others")) << used.reason;
  EXPECT_EQ(find(results, "utilization").verdict, Verdict::pass);  // holding, not computing
  EXPECT_EQ(sharers(memory_hog(), {}), "pid 4242 (python3, 77.7 GiB)");

  OccupancyPolicy strict;
  strict.require_idle = true;
  results = occupancy_results(memory_hog(), strict);
  EXPECT_EQ(find(results, "processes").verdict, Verdict::fail);
  EXPECT_EQ(find(results, "used_memory").verdict, Verdict::fail);
  EXPECT_EQ(find(results, "compute_mode").verdict, Verdict::pass);
}

TEST(CheckOccupancy, UsedMemoryAgainstTheGivenMaximum) {
  Occupancy o = idle();
  o.used_memory = 3 * kGiB;  // held by processes NVML does not list (a container)
  OccupancyPolicy policy;
  EXPECT_EQ(find(occupancy_results(o, policy), "used_memory").verdict, Verdict::warn);
  EXPECT_EQ(sharers(o, policy), "processes NVML does not list, holding 3 GiB");
  policy.max_used_memory = 4 * kGiB;
  EXPECT_EQ(find(occupancy_results(o, policy), "used_memory").verdict, Verdict::pass);
  EXPECT_EQ(sharers(o, policy), "");
  policy.max_used_memory = 2 * kGiB;  // given and broken: a fail without --require-idle
  const auto used = find(occupancy_results(o, policy), "used_memory");
  EXPECT_EQ(used.verdict, Verdict::fail);
  EXPECT_EQ(*used.threshold, static_cast<double>(2 * kGiB));
  EXPECT_TRUE(has(used.reason, "max_used_memory 2 GiB given")) << used.reason;
  policy.max_used_memory_source = "--max-used-memory";  // the caller's name for it
  EXPECT_TRUE(has(find(occupancy_results(o, policy), "used_memory").reason,
                  "), --max-used-memory 2 GiB given"));
  // Exactly at the maximum passes.
  policy.max_used_memory = 3 * kGiB;
  EXPECT_EQ(find(occupancy_results(o, policy), "used_memory").verdict, Verdict::pass);
  // NVML's older query counts the driver's reservation, and says so.
  o.used_excludes_reserved = false;
  EXPECT_TRUE(has(find(occupancy_results(o, policy), "used_memory").reason,
                  "the driver's reservation counted"));
}

TEST(CheckOccupancy, UtilizationIsAFindingOnlyWithSomebodyThere) {
  Occupancy compute_hog = idle();
  compute_hog.processes->push_back({5151, "python3", 2 * kGiB, true, false});
  compute_hog.used_memory = 2 * kGiB;
  compute_hog.gpu_utilization = 100;
  compute_hog.memory_utilization = 38;
  auto u = find(occupancy_results(compute_hog, {}), "utilization");
  EXPECT_EQ(u.verdict, Verdict::warn);
  EXPECT_EQ(u.quantity, Quantity::gpu_utilization);
  EXPECT_EQ(*u.value, 1.0);  // a ratio: 100%
  EXPECT_EQ(u.reason,
            "GPU 100%, memory 38% (the highest of 5 readings over 0.10 s): another process is "
            "computing");
  // Busy but nobody there: the tail of a job that ended within NVML's sample period.
  Occupancy tail = idle();
  tail.gpu_utilization = 12;
  u = find(occupancy_results(tail, {}), "utilization");
  EXPECT_EQ(u.verdict, Verdict::pass);
  EXPECT_TRUE(has(u.reason, "the tail of work that has ended")) << u.reason;
  OccupancyPolicy strict;
  strict.require_idle = true;
  EXPECT_EQ(find(occupancy_results(tail, strict), "utilization").verdict, Verdict::pass);
  // ... and it makes a measurement shared (a shortfall then is not a hardware fault)?
  // No: nobody is there. Where NVML cannot list processes, busy is somebody.
  EXPECT_EQ(sharers(tail, {}), "");
  tail.processes.reset();
  tail.processes_why_not = "NVML denies the process list (no permission)";
  EXPECT_EQ(find(occupancy_results(tail, {}), "utilization").verdict, Verdict::warn);
  EXPECT_EQ(sharers(tail, {}), "processes NVML does not list, keeping the GPU 12% busy");
  EXPECT_EQ(find(occupancy_results(tail, {}), "processes").verdict, Verdict::skipped);
  EXPECT_EQ(find(occupancy_results(tail, {}), "processes").reason,
            "NVML denies the process list (no permission)");
}

TEST(CheckOccupancy, ExclusiveProcessHeldByAnotherBlocksTheContext) {
  Occupancy o = memory_hog();
  o.compute_mode = 3;
  auto mode = find(occupancy_results(o, {}), "compute_mode");
  EXPECT_EQ(mode.verdict, Verdict::warn);
  EXPECT_EQ(context_blocked(o),
            "the device is in exclusive_process mode and held by pid 4242 (python3): no second "
            "context can be created");
  EXPECT_TRUE(has(mode.reason, "the checks that need one are skipped")) << mode.reason;
  OccupancyPolicy strict;
  strict.require_idle = true;
  EXPECT_EQ(find(occupancy_results(o, strict), "compute_mode").verdict, Verdict::fail);
  // A graphics-only process does not hold a compute context.
  o.processes->front().compute = false;
  o.processes->front().graphics = true;
  EXPECT_EQ(context_blocked(o), "");
  // Exclusive and free.
  Occupancy free_device = idle();
  free_device.compute_mode = 3;
  mode = find(occupancy_results(free_device, {}), "compute_mode");
  EXPECT_EQ(mode.verdict, Verdict::pass);
  EXPECT_EQ(mode.reason, "exclusive_process, not held by another process");
  // The driver refused a context although NVML listed nobody (another PID namespace).
  free_device.context_refused = true;
  EXPECT_EQ(find(occupancy_results(free_device, {}), "compute_mode").verdict, Verdict::warn);
  EXPECT_TRUE(has(context_blocked(free_device), "CUDA_ERROR_DEVICE_UNAVAILABLE"));
  EXPECT_EQ(sharers(free_device, {}), "a process that holds the device exclusively");
  // Prohibited: nobody may run here, a fail whatever the policy.
  Occupancy prohibited = idle();
  prohibited.compute_mode = 2;
  EXPECT_EQ(find(occupancy_results(prohibited, {}), "compute_mode").verdict, Verdict::fail);
  EXPECT_TRUE(has(context_blocked(prohibited), "prohibited"));
  // Unknown to NVML: skipped.
  Occupancy unknown = idle();
  unknown.compute_mode.reset();
  EXPECT_EQ(find(occupancy_results(unknown, {}), "compute_mode").verdict, Verdict::skipped);
  EXPECT_EQ(compute_mode_name(1), "exclusive_thread");
  EXPECT_EQ(compute_mode_name(7), "mode 7");
}

TEST(CheckOccupancy, ReadingsNvmlLacksAreSkippedNeverPassed) {
  Occupancy bare;
  for (const auto& r : occupancy_results(bare, {})) {
    EXPECT_EQ(r.verdict, Verdict::skipped) << r.name;
    EXPECT_FALSE(r.reason.empty()) << r.name;
  }
}

TEST(CheckOccupancy, NamesNotReadInAnotherPidNamespaceSaySo) {
  Occupancy o = idle();
  o.processes->push_back({4242, "", std::nullopt, true, false});
  o.names_why_not = "cudatool runs in another PID namespace than NVML's pids";
  EXPECT_EQ(find(occupancy_results(o, {}), "processes").reason,
            "1 other process on the device: pid 4242 (?, memory not reported) (no names: "
            "cudatool runs in another PID namespace than NVML's pids)");
}

TEST(CheckOccupancy, ManyProcessesAreCountedAfterTheFirstEight) {
  Occupancy o = idle();
  for (unsigned pid = 100; pid < 112; ++pid)
    o.processes->push_back({pid, "", std::nullopt, true, true});
  const auto r = find(occupancy_results(o, {}), "processes");
  EXPECT_EQ(*r.value, 12);
  EXPECT_TRUE(has(r.reason, "pid 100 (?, compute and graphics, memory not reported)")) << r.reason;
  EXPECT_TRUE(has(r.reason, "and 4 more")) << r.reason;
  EXPECT_FALSE(has(r.reason, "pid 108")) << r.reason;
}

TEST(CheckShared, ShortfallWhileSharedWarnsAndFailsOnlyUnderRequireIdle) {
  // The compute hog: h2d 24.0 GB/s below 47.3.
  const std::string who = "pid 5151 (python3, 2 GiB)";
  CheckResult r = rate_result(Quantity::host_to_device, 24.0, 63.0, std::nullopt, 0.75, "h2d");
  ASSERT_EQ(r.verdict, Verdict::fail);
  CheckResult shared = r;
  mark_shared(shared, who, {});
  EXPECT_EQ(shared.verdict, Verdict::warn);
  EXPECT_EQ(shared.shared_with, who);
  EXPECT_TRUE(has(shared.reason, "measured while the device was shared with " + who))
      << shared.reason;
  EXPECT_TRUE(has(shared.reason, "not a hardware fault")) << shared.reason;
  // The same state, the same verdict, every time.
  CheckResult again = r;
  mark_shared(again, who, {});
  EXPECT_EQ(again.verdict, shared.verdict);
  EXPECT_EQ(again.reason, shared.reason);
  CheckResult strict = r;
  OccupancyPolicy require_idle;
  require_idle.require_idle = true;
  mark_shared(strict, who, require_idle);
  EXPECT_EQ(strict.verdict, Verdict::fail);
  // The reason names what required it: the library's own word, or the caller's (the CLI's
  // flag).
  EXPECT_TRUE(has(strict.reason, " (require_idle: a fail)")) << strict.reason;
  strict = r;
  require_idle.require_idle_source = "--require-idle";
  mark_shared(strict, who, require_idle);
  EXPECT_TRUE(has(strict.reason, " (--require-idle: a fail)")) << strict.reason;
  // A pass stays a pass, marked.
  CheckResult fast =
      rate_result(Quantity::device_to_device, 3000, 3352.3, std::nullopt, 0.75, "d2d");
  mark_shared(fast, who, {});
  EXPECT_EQ(fast.verdict, Verdict::pass);
  EXPECT_EQ(fast.shared_with, who);
  // Wrong data is a hardware fault whoever shares the device: never a warning.
  CheckResult wrong = compute_result(1, 16777216, 132, 132, "SASS sm_90", "element 8 is 0x1");
  mark_shared(wrong, who, {});
  EXPECT_EQ(wrong.verdict, Verdict::fail);
  EXPECT_EQ(wrong.shared_with, who);
  // Nobody: untouched.
  CheckResult alone = r;
  mark_shared(alone, "", {});
  EXPECT_EQ(alone.verdict, Verdict::fail);
  EXPECT_EQ(alone.shared_with, "");
  EXPECT_EQ(alone.reason, r.reason);
}

TEST(CheckThrottle, EachReasonByItsMeaning) {
  // The table the man page documents: normal reasons pass (named), faults warn or fail.
  const std::vector<std::pair<unsigned long long, Verdict>> expected = {
      {0x1, Verdict::pass},   {0x2, Verdict::pass},  {0x4, Verdict::pass},  {0x8, Verdict::fail},
      {0x10, Verdict::pass},  {0x20, Verdict::warn}, {0x40, Verdict::fail}, {0x80, Verdict::fail},
      {0x100, Verdict::pass}, {0x200, Verdict::warn}};  // a bit newer than the table
  NvmlHealth h;
  h.found = true;
  for (const auto& [bit, verdict] : expected) {
    h.throttle_reasons = bit;
    const auto results = health_results(h, std::nullopt);
    const CheckResult& r = find(results, "throttle");
    EXPECT_EQ(r.verdict, verdict) << std::hex << bit << ": " << r.reason;
    EXPECT_EQ(*r.value, static_cast<double>(bit));
  }
  h.throttle_reasons = 0x4 | 0x1;  // a loaded H100 at its power cap, then idle
  EXPECT_EQ(find(health_results(h, std::nullopt), "throttle").reason,
            "normal clock events: gpu_idle, sw_power_cap");
  h.throttle_reasons = 0x4 | 0x2 | 0x20;
  EXPECT_EQ(find(health_results(h, std::nullopt), "throttle").reason,
            "clocks held down by sw_thermal_slowdown (warn); normal: applications_clocks_setting, "
            "sw_power_cap");
  h.throttle_reasons = 0x80 | 0x400;
  const auto brake = find(health_results(h, std::nullopt), "throttle");
  EXPECT_EQ(brake.verdict, Verdict::fail);
  EXPECT_EQ(brake.reason,
            "clocks held down by hw_power_brake_slowdown (fail), 0x400 (unknown: warn)");
  h.throttle_reasons = 0;
  EXPECT_EQ(find(health_results(h, std::nullopt), "throttle").reason, "no clock events");
  EXPECT_EQ(throttle_reason_names(0x1 | 0x8 | 0x800),
            (std::vector<std::string>{"hw_slowdown", "0x800"}));
}

TEST(CheckProcessName, Argv0NeverArgumentsAndCommAsFallback) {
  const auto root =
      std::filesystem::temp_directory_path() / ("cudatool-proc-" + std::to_string(::getpid()));
  std::filesystem::create_directories(root / "10");
  std::filesystem::create_directories(root / "11");
  std::filesystem::create_directories(root / "12");
  {
    std::ofstream(root / "10" / "cmdline", std::ios::binary)
        << std::string("/usr/bin/python3\0train.py\0--token\0s3cret\0", 40);
    std::ofstream(root / "10" / "comm") << "pt_main_thread\n";
    std::ofstream(root / "11" / "cmdline");  // a kernel thread or a zombie: empty
    std::ofstream(root / "11" / "comm") << "kworker/0:1\n";
    std::ofstream(root / "12" / "cmdline", std::ios::binary) << "evil\x1b[31mname";
  }
  EXPECT_EQ(process_name(10, root.string()), "python3");
  EXPECT_EQ(process_name(11, root.string()), "kworker/0:1");
  EXPECT_EQ(process_name(12, root.string()), "evil\\x1b[31mname");  // shown escaped
  EXPECT_EQ(process_name(13, root.string()), "");                   // gone
  // The PID namespace: the kernel's initial one by its fixed inode, anything else not.
  std::filesystem::create_directories(root / "self" / "ns");
  std::filesystem::create_symlink("pid:[4026531836]", root / "self" / "ns" / "pid");
  EXPECT_TRUE(in_initial_pid_namespace(root.string()));
  std::filesystem::remove(root / "self" / "ns" / "pid");
  std::filesystem::create_symlink("pid:[4026532481]", root / "self" / "ns" / "pid");
  EXPECT_FALSE(in_initial_pid_namespace(root.string()));
  EXPECT_FALSE(in_initial_pid_namespace((root / "none").string()));
  std::filesystem::remove_all(root);
  // A real one: this test.
  EXPECT_FALSE(process_name(static_cast<unsigned>(::getpid())).empty());
}
