// scan_binaries over a file that changes while it is read (issue 20, items 1 and 2), on
// the nvcc-built test object (tests/CMakeLists.txt; skipped without nvcc).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "cudatool/base/error.hpp"
#include "cudatool/binary/kernel_scan.hpp"

namespace cudatool {
namespace {

namespace fs = std::filesystem;

class ChangingFile : public ::testing::Test {
 protected:
  void SetUp() override {
    const fs::path object = std::string(CUDATOOL_KERNELS_DATA) + "/none.o";
    if (!fs::exists(object)) GTEST_SKIP() << "nvcc was not found at configure time";
    char pattern[] = "/tmp/cudatool-scan-XXXXXX";
    dir_ = ::mkdtemp(pattern);
    path_ = (dir_ / "none.o").string();
    fs::copy_file(object, path_);
    std::ifstream in(path_, std::ios::binary);
    bytes_.assign(std::istreambuf_iterator<char>(in), {});
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  fs::path dir_;
  std::string path_;
  std::string bytes_;
};

bool says_changed(const UsageError& e) {
  return std::string(e.what()).find(": the file changed while it was read") != std::string::npos;
}

// `cp` over a library while it is scanned: the file is truncated after its first image is
// read, the next images' pages are gone (SIGBUS, exit 135, before). The scan reports the
// change instead, naming the file.
TEST_F(ChangingFile, TruncatedWhileReadIsOneError) {
  ScanOptions options;
  options.threads = 1;  // images one after another: the truncation comes between two
  bool truncated = false;
  options.on_image = [&](const ImageKernels&) {
    if (!truncated) {
      ASSERT_EQ(::truncate(path_.c_str(), 64), 0);
    }
    truncated = true;
  };
  try {
    scan_binaries({path_}, options);
    ADD_FAILURE() << "no error";
  } catch (const UsageError& e) {
    EXPECT_TRUE(says_changed(e)) << e.what();
    EXPECT_EQ(std::string(e.what()).rfind(path_ + ": ", 0), 0u) << e.what();
  }
  EXPECT_TRUE(truncated);
}

// A section name rewritten in place while the file is read: the names were read twice and
// the second reading indexed lists sized by the first (ASan: heap-buffer-overflow in
// add_object). Each scan now either reads the file or reports the change.
TEST_F(ChangingFile, SectionNamesRewrittenWhileReadNeverCrash) {
  const std::size_t at = bytes_.find(std::string(".nv_fatbin\0", 11));
  ASSERT_NE(at, std::string::npos);
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    const int fd = ::open(path_.c_str(), O_WRONLY);
    for (unsigned i = 0; !stop.load(std::memory_order_relaxed); ++i)
      if (::pwrite(fd, i % 2 ? "N" : "n", 1, static_cast<off_t>(at + 9)) != 1) break;
    ::close(fd);
  });
  ScanOptions options;
  options.threads = 2;
  int read = 0, changed = 0;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (std::chrono::steady_clock::now() < until) {
    try {
      scan_binaries({path_}, options);
      ++read;
    } catch (const UsageError& e) {
      EXPECT_TRUE(says_changed(e)) << e.what();
      ++changed;
    }
  }
  stop = true;
  writer.join();
  EXPECT_GT(read + changed, 10);
}

// The one kernel selector (occupancy --kernel-from): exactly one kernel name, and one
// architecture unless the caller takes the first.
TEST(FindOneKernel, ExactlyOneKernelOrAMessageNamingTheSource) {
  ScanResult found;
  found.images.resize(2);
  found.images[0].arch = Arch::parse("sm_80", "test");
  found.images[1].arch = Arch::parse("sm_90", "test");
  auto kernel = [](std::size_t image, const char* name) {
    ScannedKernel k;
    k.image = image;
    k.resources.name = k.resources.demangled = name;
    return k;
  };
  found.kernels = {kernel(0, "scale"), kernel(1, "scale"), kernel(1, "scan"), kernel(1, "copy")};
  KernelLookup lookup;
  lookup.source = "--kernel";
  lookup.file = "f.o";
  lookup.arch_source = "--arch";
  auto message = [&](const char* pattern) -> std::string {
    lookup.pattern = pattern;
    try {
      find_one_kernel(found, KernelNameFilter(pattern, "--kernel"), lookup);
    } catch (const UsageError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(message("^copy$"), "");
  EXPECT_EQ(message("nothing"), "--kernel \"nothing\": no such kernel in \"f.o\"");
  EXPECT_EQ(message("sca"), "--kernel \"sca\" matches 2 kernels (scale; scan): make it unique");
  EXPECT_EQ(message("scale"),
            "--kernel \"scale\" is compiled for sm_80, sm_90: choose one with --arch");
  lookup.several_architectures_ok = true;
  lookup.pattern = "scale";
  EXPECT_EQ(&find_one_kernel(found, KernelNameFilter("scale", "--kernel"), lookup),
            &found.kernels[0]);
  lookup.arch = "sm_100";
  EXPECT_EQ(message("nothing"), "--kernel \"nothing\": no such kernel in \"f.o\" for \"sm_100\"");
}

}  // namespace
}  // namespace cudatool
