// The kernel-name filter of `kernels --kernel` and `occupancy --kernel-from ... --kernel`:
// a regular expression in RE2's syntax, searched for anywhere in a kernel's mangled or
// demangled name. RE2 matches in time linear in the name and on a bounded stack, so a
// hostile binary's 50,000-character name costs microseconds, never a stack overflow (as
// std::regex's per-character recursion did). RE2 has no backreferences or lookaround.
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace re2 {
class RE2;
}

namespace cudatool {

struct KernelResources;

class KernelNameFilter {
 public:
  // Throws UsageError naming `option` and the pattern where RE2 does not compile it:
  // `--kernel "(": not a regular expression (RE2: missing ): ()`.
  KernelNameFilter(std::string_view pattern, std::string_view option);
  ~KernelNameFilter();
  KernelNameFilter(KernelNameFilter&&) noexcept;
  KernelNameFilter& operator=(KernelNameFilter&&) noexcept;
  KernelNameFilter(const KernelNameFilter&) = delete;
  KernelNameFilter& operator=(const KernelNameFilter&) = delete;

  // Whether the pattern occurs in `name` (an unanchored search: anchor with ^ and $).
  // Safe to call from several threads at once.
  bool matches(std::string_view name) const;
  // Whether it occurs in the kernel's mangled or demangled name.
  bool matches(const KernelResources& kernel) const;

 private:
  std::unique_ptr<re2::RE2> pattern_;
};

}  // namespace cudatool
