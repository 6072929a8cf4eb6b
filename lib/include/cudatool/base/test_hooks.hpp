// Environment variables that only the test suite sets (CUDATOOL_TEST_PROC_DRIVER_VERSION,
// CUDATOOL_CHECK_INJECT_FAULT). They are read only by a build configured with
// CUDATOOL_TEST_HOOKS=ON, the default where the tests are built, never for
// CMAKE_BUILD_TYPE=Release; any other build ignores them, so that nobody can change a
// release binary's behaviour through them.
#pragma once

namespace cudatool {

// Whether this build reads the test hooks.
bool test_hooks_enabled() noexcept;

// The value of the test hook `variable`: nullptr where it is unset or empty, and always in
// a build without test hooks.
const char* test_hook(const char* variable) noexcept;

}  // namespace cudatool
