// Rates: the theoretical rates (PCIe per generation and width, memory from its bus and
// clock, an NVLink per architecture), the median of timed repetitions, and the judgement of
// a measured rate against a fraction of theory or a given minimum.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "check/reason_format.hpp"
#include "cudatool/check/check.hpp"

namespace cudatool::check {

using detail::fixed;

double pcie_lane_gbps(unsigned generation) {
  switch (generation) {
    case 1:
      return 2.5 * 8 / 10 / 8;  // 2.5 GT/s, 8b/10b
    case 2:
      return 5.0 * 8 / 10 / 8;
    case 3:
      return 8.0 * 128 / 130 / 8;  // 128b/130b
    case 4:
      return 16.0 * 128 / 130 / 8;
    case 5:
      return 32.0 * 128 / 130 / 8;
    case 6:
      return 64.0 * 242 / 256 / 8;  // PAM4 with 256-byte FLITs, 242 bytes of payload
    default:
      return 0;
  }
}

double pcie_theoretical_gbps(unsigned generation, unsigned width) {
  return pcie_lane_gbps(generation) * width;
}

double memory_theoretical_gbps(int bus_width_bits, int memory_clock_khz) {
  if (bus_width_bits <= 0 || memory_clock_khz <= 0) return 0;
  return bus_width_bits / 8.0 * memory_clock_khz * 1e3 * 2 / 1e9;
}

double nvlink_link_gbps(ComputeCapability cc) {
  switch (cc.major) {
    case 6:
      return cc.minor == 0 ? 20 : 0;
    case 7:
      return cc.minor == 0 ? 25 : 0;
    case 8:
      return cc.minor == 0 ? 25 : 0;
    case 9:
      return 26.5625;
    case 10:
      return 50;
    default:
      return 0;
  }
}

namespace {

// The kind and name of a rate's result.
void name_rate(CheckResult& r, Quantity rate) {
  switch (rate) {
    case Quantity::device_to_device:
      r.kind = Kind::memory;
      r.name = "d2d";
      return;
    case Quantity::host_to_device:
      r.kind = Kind::hostlink;
      r.name = "h2d";
      return;
    case Quantity::device_to_host:
      r.kind = Kind::hostlink;
      r.name = "d2h";
      return;
    case Quantity::peer_copy:
      r.kind = Kind::peer;
      r.name = "peer";
      return;
    default:
      throw std::invalid_argument("rate_result: not a rate");
  }
}

}  // namespace

CheckResult rate_result(Quantity rate, double measured, std::optional<double> theoretical,
                        std::optional<double> minimum, double fraction, const std::string& what) {
  CheckResult r;
  name_rate(r, rate);
  r.quantity = rate;
  // Judged and described in GB/s, as given; held in bytes per second.
  r.value = measured * kBytesPerGB;
  r.comparison = Comparison::at_least;
  const double theory = theoretical.value_or(0);  // 0: unknown
  double threshold = 0;
  if (minimum) {
    threshold = *minimum;
  } else if (theory > 0) {
    threshold = fraction * theory;
  } else {
    r.verdict = Verdict::skipped;
    r.reason = what + ": " + fixed(measured, 1) +
               " GB/s measured, but the theoretical rate is unknown; give a minimum";
    return r;
  }
  r.threshold = threshold * kBytesPerGB;
  r.verdict = measured >= threshold ? Verdict::pass : Verdict::fail;
  r.reason = what + ": " + fixed(measured, 1) + " GB/s";
  if (theory > 0)
    r.reason += " of " + fixed(theory, 1) + " GB/s theoretical (" +
                fixed(100 * measured / theory, 0) + "%)";
  r.reason += minimum ? ", minimum " + fixed(*minimum, 1) + " GB/s given"
                      : ", need " + fixed(100 * fraction, 0) + "%";
  return r;
}

double median(std::vector<double> samples) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  return n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
}

}  // namespace cudatool::check
