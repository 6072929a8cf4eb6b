// cudatool check: a GPU smoke check of every device (identity, occupancy, health, XIDs, compute,
// memory bandwidth, host link, peer copies) with a verdict per check; text, JSON or Prometheus.
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "check_command.hpp"
#include "command.hpp"
#include "cudatool/base/error.hpp"
#include "cudatool/base/numbers.hpp"
#include "cudatool/base/test_hooks.hpp"
#include "cudatool/base/text.hpp"
#include "cudatool/base/units.hpp"
#include "cudatool/check/check.hpp"
#include "cudatool/device/selection.hpp"
#include "exit_status.hpp"
#include "render.hpp"
#include "render_check.hpp"
#include "requirement_flags.hpp"

namespace cudatool::app {
namespace {

// CUDATOOL_CHECK_INJECT_FAULT=compute: the compute kernel writes one wrong element, so the
// compute check's fail path can be shown on a healthy GPU (tests and tools/gpu-check.sh).
bool inject_compute_fault() {
  const char* value = test_hook("CUDATOOL_CHECK_INJECT_FAULT");
  if (value == nullptr) return false;
  if (std::string(value) == "compute") return true;
  throw UsageError("CUDATOOL_CHECK_INJECT_FAULT " + quote_input(value) +
                   ": the only fault is \"compute\"");
}

// A bandwidth minimum: a decimal number of GB/s, 0 or more.
std::optional<double> gbps(const std::optional<std::string>& text, std::string_view flag) {
  if (!text) return std::nullopt;
  return parse_decimal(*text, flag, 0, 1e9);
}

}  // namespace

check::Options check_request(const CheckOptions& options) {
  check::Options o;
  o.kinds = check::select_kinds(options.only, "--only", options.skip, "--skip");
  o.requirements = parse_requirement_flags(options.requirements);
  o.expect_name = options.expect_name;
  if (options.expect_count) o.expect_count = parse_int(*options.expect_count, "--expect-count", 0);
  if (options.fraction) {
    const double fraction = parse_decimal(*options.fraction, "--min-fraction", 0, 1);
    if (fraction <= 0) throw UsageError("--min-fraction must be above 0 (and at most 1)");
    o.thresholds.fraction = fraction;
  }
  o.thresholds.min_h2d_gbps = gbps(options.min_h2d, "--min-h2d-gbps");
  o.thresholds.min_d2h_gbps = gbps(options.min_d2h, "--min-d2h-gbps");
  o.thresholds.min_d2d_gbps = gbps(options.min_d2d, "--min-d2d-gbps");
  o.thresholds.min_peer_gbps = gbps(options.min_peer, "--min-peer-gbps");
  o.occupancy.require_idle = options.require_idle;
  o.occupancy.require_idle_source = "--require-idle";
  o.occupancy.max_used_memory_source = "--max-used-memory";
  if (options.max_used_memory)
    o.occupancy.max_used_memory = parse_size(*options.max_used_memory, "--max-used-memory");
  o.inject_compute_fault = inject_compute_fault();
  // Every --device is parsed before the first is resolved through the driver.
  for (const std::string& spec : options.devices) parse_device_spec(spec, "--device");
  return o;
}

void add_devices(const std::vector<std::string>& specs, check::Options& o) {
  for (const std::string& spec : specs) {
    const Device d = select_device(spec, "--device");
    bool seen = false;
    for (const Device& e : o.devices) seen = seen || e == d;
    if (!seen) o.devices.push_back(d);
  }
}

ExitStatus check_exit_status(const check::Report& report, bool strict) {
  const check::Verdict verdict = report.verdict();
  if (verdict == check::Verdict::fail || (strict && verdict == check::Verdict::warn))
    return ExitStatus::check_failed;
  return ExitStatus::success;
}

namespace {

void render(Format format, const check::Report& report, const CheckRun& run) {
  if (format == Format::json)
    print_json(check_json(report, run.exit_code), kCheckSchemaVersion);
  else if (format == Format::prometheus)
    command_out() << check_prometheus(&report, run);
  else if (format == Format::nfd)
    command_out() << check_nfd(&report);
  else
    command_out() << check_text(report);
}

}  // namespace

void add_check_options(CLI::App& sub, CheckOptions& options) {
  sub.add_option("--device", options.devices,
                 "Check only this device (ordinal, PCI bus id or UUID); repeatable")
      ->take_all()
      ->allow_extra_args(false);
  sub.add_option(
      "--only", options.only,
      "Run only these checks (comma-separated: identity, occupancy, health, xid, compute, "
      "memory, hostlink, peer)");
  sub.add_option("--skip", options.skip, "Run every check but these (comma-separated)");
  add_requirement_flags(sub, options.requirements, "Fail unless at least N devices qualify");
  sub.add_option("--expect-count", options.expect_count, "Fail unless exactly N devices");
  sub.add_option("--expect-name", options.expect_name,
                 "Fail a device whose name does not contain this (\"H100\")");
  sub.add_option("--min-fraction", options.fraction,
                 "Bandwidth needed, as a fraction of the theoretical rate (default 0.75)");
  sub.add_option("--min-h2d-gbps", options.min_h2d, "Host-to-device minimum, GB/s");
  sub.add_option("--min-d2h-gbps", options.min_d2h, "Device-to-host minimum, GB/s");
  sub.add_option("--min-d2d-gbps", options.min_d2d,
                 "Device memory minimum (a copy's read + write), GB/s");
  sub.add_option("--min-peer-gbps", options.min_peer, "Peer copy minimum, GB/s");
  sub.add_flag("--require-idle", options.require_idle,
               "Fail (exit 9) when another process uses a device, instead of a warning");
  sub.add_option("--max-used-memory", options.max_used_memory,
                 "Fail when other processes hold more device memory than SIZE (\"2GiB\")");
  sub.add_flag("--strict", options.strict, "Exit 9 on a warning too");
}

Command add_check(CLI::App& root, GlobalOptions& global) {
  auto* sub = root.add_subcommand(
      "check", "Smoke-check every GPU: identity, health, compute, bandwidth (exit 9 on a failure)");
  auto options = std::make_shared<CheckOptions>();
  add_json_flag(*sub, global);
  sub->add_option("--format", global.flags.format,
                  "Output: text, json, prometheus or nfd (Node Feature Discovery's features.d)")
      ->check(CLI::IsMember({"text", "json", "prometheus", "nfd"}));
  add_check_options(*sub, *options);

  // Once the devices are asked for, --format prometheus and nfd write their whole document
  // whatever happens (no driver, no device: cudatool_check_up 0), so that a textfile
  // collector replaces the node's last file instead of keeping it; main reports the error
  // and gives the exit code (after_error), which the document carries.
  struct Run {
    Format format = Format::text;
    double started = 0;          // Unix time
    bool owes_document = false;  // from asking for the devices until the report is made
  };
  auto run = std::make_shared<Run>();
  return {sub,
          [options, run, &global]() {
            run->format = global.format;
            check::Options o = check_request(*options);
            run->started = static_cast<double>(std::time(nullptr));
            run->owes_document = true;
            add_devices(options->devices, o);
            const check::Report report = check::run_check(o);
            run->owes_document = false;
            const ExitStatus status = check_exit_status(report, options->strict);
            render(run->format, report, {to_int(status), run->started});
            return status;
          },
          [run](int exit_code) {
            if (!run->owes_document) return;
            if (run->format == Format::prometheus)
              command_out() << check_prometheus(nullptr, {exit_code, run->started});
            else if (run->format == Format::nfd)
              command_out() << check_nfd(nullptr);
          }};
}

}  // namespace cudatool::app
