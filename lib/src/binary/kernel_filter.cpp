#include "cudatool/binary/kernel_filter.hpp"

#include <re2/re2.h>

#include "cudatool/base/error.hpp"
#include "cudatool/base/text.hpp"
#include "cudatool/binary/cubin.hpp"

namespace cudatool {

KernelNameFilter::KernelNameFilter(std::string_view pattern, std::string_view option) {
  RE2::Options options;
  options.set_log_errors(false);  // the error is ours to report, once, on one line
  pattern_ = std::make_unique<re2::RE2>(re2::StringPiece(pattern.data(), pattern.size()), options);
  if (!pattern_->ok())
    throw UsageError(std::string(option) + " " + quote_input(pattern) +
                     ": not a regular expression (RE2: " + printable(pattern_->error()) + ")");
}

KernelNameFilter::~KernelNameFilter() = default;
KernelNameFilter::KernelNameFilter(KernelNameFilter&&) noexcept = default;
KernelNameFilter& KernelNameFilter::operator=(KernelNameFilter&&) noexcept = default;

bool KernelNameFilter::matches(std::string_view name) const {
  return RE2::PartialMatch(re2::StringPiece(name.data(), name.size()), *pattern_);
}

bool KernelNameFilter::matches(const KernelResources& kernel) const {
  return matches(kernel.name) || matches(kernel.demangled);
}

}  // namespace cudatool
