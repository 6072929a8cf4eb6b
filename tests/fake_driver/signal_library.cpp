// A library that sets the process's signal handlers as libnvrtc does while its front end
// runs (tests/lib/driver/test_dynamic_library.cpp): signal() and sigaction() for SIGINT and
// SIGTERM, each call's previous handler returned to the test. Opened through DynamicLibrary,
// its calls must reach a table of its own, never the process's handlers.
#include <signal.h>

namespace {

void library_handler(int) {}

}  // namespace

extern "C" {

// The handler this library installs.
__attribute__((visibility("default"))) void* signal_library_handler() {
  return reinterpret_cast<void*>(&library_handler);
}

// Sets SIGINT through signal() and SIGTERM through sigaction(); `previous` receives the
// handlers each call reported as there before. 0 on success.
__attribute__((visibility("default"))) int signal_library_install(void* previous[2]) {
  const sighandler_t old_int = ::signal(SIGINT, &library_handler);
  if (old_int == SIG_ERR) return 1;
  struct sigaction action {
  }, old{};
  action.sa_handler = &library_handler;
  sigemptyset(&action.sa_mask);
  if (::sigaction(SIGTERM, &action, &old) != 0) return 2;
  previous[0] = reinterpret_cast<void*>(old_int);
  previous[1] = reinterpret_cast<void*>(old.sa_handler);
  return 0;
}

// Restores the handlers it was given, as libnvrtc does when its front end returns; the
// handlers it replaces are returned in `replaced`.
__attribute__((visibility("default"))) int signal_library_restore(void* previous[2],
                                                                  void* replaced[2]) {
  const sighandler_t was_int = ::signal(SIGINT, reinterpret_cast<sighandler_t>(previous[0]));
  struct sigaction action {
  }, old{};
  action.sa_handler = reinterpret_cast<sighandler_t>(previous[1]);
  sigemptyset(&action.sa_mask);
  if (was_int == SIG_ERR || ::sigaction(SIGTERM, &action, &old) != 0) return 1;
  replaced[0] = reinterpret_cast<void*>(was_int);
  replaced[1] = reinterpret_cast<void*>(old.sa_handler);
  return 0;
}

// SIGUSR1, which is not the process's to keep: set for real.
__attribute__((visibility("default"))) int signal_library_install_usr1() {
  return ::signal(SIGUSR1, &library_handler) == SIG_ERR ? 1 : 0;
}

}  // extern "C"
