// libFuzzer harness for the baseline of `kernels --baseline`: a saved `kernels --json`
// document read back into a scan (apps/cudatool/kernels_baseline.cpp), which anyone may
// hand over as a CI artifact. Reading it may only throw UsageError; what it reads must then
// go through the size report and the comparison (with itself) without a crash, and compare
// equal to itself.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "cudatool/base/error.hpp"
#include "cudatool/binary/binary_sizes.hpp"
#include "cudatool/occupancy/kernel_comparison.hpp"
#include "kernels_compare.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  cudatool::ScanResult scan;
  try {
    scan = cudatool::app::read_kernels_document(text, {});
  } catch (const cudatool::UsageError&) {
    return 0;
  }
  (void)cudatool::size_report(scan, 5);
  cudatool::ComparisonOptions options;
  options.rules.push_back(
      {cudatool::RegressionRule::Kind::kernels_removed, {}, 0, false, "removed"});
  cudatool::ArchitectureTable table;
  const auto same = cudatool::compare_kernels(scan, scan, options, table);
  if (!same.changes.empty() || !same.broken_rules.empty()) std::abort();
  return 0;
}
