#include "cudatool/base/test_hooks.hpp"

#include <cstdlib>

namespace cudatool {

bool test_hooks_enabled() noexcept {
#ifdef CUDATOOL_TEST_HOOKS
  return true;
#else
  return false;
#endif
}

const char* test_hook(const char* variable) noexcept {
  if (!test_hooks_enabled()) return nullptr;
  const char* value = std::getenv(variable);
  return value != nullptr && *value != '\0' ? value : nullptr;
}

}  // namespace cudatool
