// The compute check's judgement: mismatches and SMs reached, and the form of the embedded
// kernel the driver chose (SASS or PTX compiled for the device).
#include <string>

#include "cudatool/base/units.hpp"
#include "cudatool/check/check.hpp"

namespace cudatool::check {

CheckResult compute_result(std::uint64_t mismatches, std::uint64_t elements, int sms_seen,
                           int sm_count, const std::string& form, const std::string& first_bad) {
  CheckResult r;
  r.kind = Kind::compute;
  r.name = "compute";
  r.quantity = Quantity::compute_wrong_elements;
  r.value = static_cast<double>(mismatches);
  r.threshold = 0;
  r.comparison = Comparison::at_most;
  const std::string where = std::to_string(elements) + " elements (" + format_bytes(elements * 4) +
                            "), " + form + ", blocks on " + std::to_string(sms_seen) + " of " +
                            std::to_string(sm_count) + " SMs";
  if (mismatches > 0) {
    r.verdict = Verdict::fail;
    r.reason = std::to_string(mismatches) + " of " + where + " wrong" +
               (first_bad.empty() ? "" : "; first: " + first_bad);
  } else if (sms_seen < sm_count) {
    r.verdict = Verdict::warn;
    r.reason = "all correct, but blocks ran on " + std::to_string(sms_seen) + " of " +
               std::to_string(sm_count) + " SMs: " + where;
  } else {
    r.verdict = Verdict::pass;
    r.reason = "all of " + where + " correct";
  }
  return r;
}

std::string kernel_form(ComputeCapability cc, std::span<const int> sass, int ptx) {
  int best = -1;
  for (int s : sass)
    if (s / 10 == cc.major && s % 10 <= cc.minor) best = std::max(best, s);
  if (best >= 0) return "SASS sm_" + std::to_string(best);
  if (ptx <= cc.major * 10 + cc.minor) return "PTX compute_" + std::to_string(ptx) + " (JIT)";
  return "none (the fatbin has no code for " + cc.sm() + ")";
}

}  // namespace cudatool::check
