// DynamicLibrary (lib/src/driver/dynamic_library.cpp): the first candidate that opens, every
// loader message where none does, no wait on a path that is no regular file, and the
// process's signal handlers kept from a library that sets its own (libnvrtc does: a Ctrl-C
// then ended the process with exit status 4). The signal tests run in a child (gtest's
// death-test style), so a failure never leaves this process's handlers changed.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>

#include "cudatool/base/error.hpp"
#include "driver/dynamic_library.hpp"
#include "temp_dir.hpp"

namespace cudatool {
namespace {

using cudatool::testing::TempDir;

namespace fs = std::filesystem;

sighandler_t current_handler(int sig) {
  struct sigaction now {};
  ::sigaction(sig, nullptr, &now);
  return now.sa_handler;
}

void process_handler(int) {}

TEST(DynamicLibrary, TheFirstCandidateThatOpensWithItsSymbols) {
  // The fake stays mapped after the DynamicLibrary closes it (a reference that never
  // unloads): what its static initialisers allocated stays reachable from its globals, where
  // an unloaded module's would count as leaked in the sanitizer run (72 KiB on the GPU host).
  ASSERT_NE(::dlopen(CUDATOOL_FAKE_LIBCUDA, RTLD_NOW | RTLD_NODELETE), nullptr) << ::dlerror();
  DynamicLibrary lib = DynamicLibrary::open_first(
      {"/nonexistent/libnothing.so", "libcudatool-no-such-soname.so.9", CUDATOOL_FAKE_LIBCUDA},
      "CUDA driver");
  ASSERT_TRUE(lib);
  EXPECT_EQ(lib.path(), CUDATOOL_FAKE_LIBCUDA);
  EXPECT_NE(lib.symbol("cuInit"), nullptr);
  EXPECT_EQ(lib.symbol("cuNoSuchEntryPoint"), nullptr);

  DynamicLibrary moved = std::move(lib);
  EXPECT_FALSE(lib);
  EXPECT_EQ(lib.symbol("cuInit"), nullptr);
  EXPECT_TRUE(moved);
  EXPECT_NE(moved.symbol("cuInit"), nullptr);
  moved = DynamicLibrary();
  EXPECT_FALSE(moved);
}

TEST(DynamicLibrary, NoneOpensNamesEachCandidateAndNeverWaitsOnAFifo) {
  TempDir dir{"cudatool-dl"};
  const fs::path fifo = dir.path / "libfifo.so";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const fs::path not_elf = dir.path / "libtext.so";
  {
    std::FILE* f = std::fopen(not_elf.c_str(), "w");
    std::fputs("not a library\n", f);
    std::fclose(f);
  }
  try {
    DynamicLibrary::open_first(
        {fifo.string(), dir.path.string(), not_elf.string(), "/nonexistent/x.so"}, "NVML");
    FAIL() << "nothing can open";
  } catch (const LibraryNotFoundError& e) {
    const std::string why = e.what();
    EXPECT_TRUE(why.starts_with("NVML: ")) << why;
    EXPECT_EQ(e.library(), "NVML");
    EXPECT_NE(why.find("libfifo.so\": not a regular file"), std::string::npos) << why;
    EXPECT_NE(why.find(dir.path.string() + "\": not a regular file"), std::string::npos) << why;
    EXPECT_NE(why.find("libtext.so"), std::string::npos) << why;  // the loader's message
    EXPECT_NE(why.find("/nonexistent/x.so"), std::string::npos) << why;
  }
}

// In the child: the library's signal() and sigaction() see its own table, the process's
// handlers stay; SIGUSR1 (not kept) is set for real.
[[noreturn]] void signals_kept_child() {
  ::signal(SIGINT, &process_handler);  // the process's own (Python's KeyboardInterrupt)
  int failures = 0;
  const auto expect = [&](bool holds, const char* what) {
    if (!holds) {
      std::fprintf(stderr, "%s\n", what);
      ++failures;
    }
  };
  try {
    DynamicLibrary lib = DynamicLibrary::open_first({CUDATOOL_SIGNAL_LIBRARY}, "signals");
    auto install = reinterpret_cast<int (*)(void**)>(lib.symbol("signal_library_install"));
    auto restore = reinterpret_cast<int (*)(void**, void**)>(lib.symbol("signal_library_restore"));
    auto usr1 = reinterpret_cast<int (*)()>(lib.symbol("signal_library_install_usr1"));
    auto handler = reinterpret_cast<void* (*)()>(lib.symbol("signal_library_handler"));
    expect(install && restore && usr1 && handler, "the library's functions");
    if (install && restore && usr1 && handler) {
      void* previous[2] = {};
      expect(install(previous) == 0, "install succeeded");
      expect(previous[0] == reinterpret_cast<void*>(&process_handler),
             "the library saw the process's SIGINT handler first");
      expect(previous[1] == reinterpret_cast<void*>(SIG_DFL), "and SIGTERM's default");
      expect(current_handler(SIGINT) == &process_handler, "SIGINT is still the process's");
      expect(current_handler(SIGTERM) == SIG_DFL, "SIGTERM is still the default");
      void* replaced[2] = {};
      expect(restore(previous, replaced) == 0, "restore succeeded");
      expect(replaced[0] == handler() && replaced[1] == handler(),
             "the library's own table held its handlers");
      expect(current_handler(SIGINT) == &process_handler, "SIGINT after the restore");
      expect(usr1() == 0 && current_handler(SIGUSR1) == reinterpret_cast<sighandler_t>(handler()),
             "SIGUSR1 is not kept from the library");
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "threw: %s\n", e.what());
    ++failures;
  }
  std::fflush(stderr);
  std::_Exit(failures == 0 ? 0 : 1);
}

TEST(DynamicLibrary, ALibraryNeverChangesTheProcesssSignalHandlers) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(signals_kept_child(), ::testing::ExitedWithCode(0), "")
      << "the checks that failed in the child are above (Actual msg)";
}

}  // namespace
}  // namespace cudatool
