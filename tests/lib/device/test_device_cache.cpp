// The device cache's policy (lib/src/device/device_cache.cpp) where it decides without the
// driver: when the cache is not used at all, and the cache directory's own rules. The paths
// through the driver (hits, refreshes, every change that must end a hit) are end to end in
// tests/apps/test_cli_device_cache.cpp, through the fake driver and fake NVML.
#include "cudatool/device/device_cache.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

namespace cudatool {
namespace {
namespace fs = std::filesystem;

// The variables the policy reads, set for one test and restored after.
class DeviceCachePolicy : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name :
         {"CUDATOOL_LIBCUDA", "CUDATOOL_TEST_DEVICE_CACHE_WITH_LIBCUDA", "CUDATOOL_NO_NVML",
          "CUDATOOL_LIBNVML", "CUDATOOL_FRESH", "XDG_CACHE_HOME", "HOME"})
      if (const char* value = std::getenv(name))
        saved_[name] = value;
      else
        saved_[name] = std::nullopt;
    ::unsetenv("CUDATOOL_LIBCUDA");
    ::unsetenv("CUDATOOL_TEST_DEVICE_CACHE_WITH_LIBCUDA");
    ::unsetenv("CUDATOOL_NO_NVML");
    ::unsetenv("CUDATOOL_FRESH");
    // No NVML: a run that gets past the directory stops before the driver.
    ::setenv("CUDATOOL_LIBNVML", "/nonexistent/libnvidia-ml.so.1", 1);
    std::string pattern = (fs::temp_directory_path() / "cudatool-policy-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    ::setenv("XDG_CACHE_HOME", dir_.c_str(), 1);
  }
  void TearDown() override {
    for (const auto& [name, value] : saved_)
      value ? ::setenv(name.c_str(), value->c_str(), 1) : ::unsetenv(name.c_str());
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }
  std::map<std::string, std::optional<std::string>> saved_;
  fs::path dir_;
};

TEST_F(DeviceCachePolicy, ADriverNamedByCudatoolLibcudaIsAskedEveryTime) {
  ::setenv("CUDATOOL_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  const DeviceCacheOutcome outcome = use_device_cache(false, "--fresh");
  EXPECT_EQ(outcome.path, DeviceCachePath::off);
  EXPECT_EQ(outcome.why, "CUDATOOL_LIBCUDA is set");
  EXPECT_EQ(cached_devices(), nullptr);
  EXPECT_FALSE(fs::exists(dir_ / "cudatool")) << "nothing is created for a cache not used";
}

TEST_F(DeviceCachePolicy, WithoutNvmlNothingIsCached) {
  ::setenv("CUDATOOL_NO_NVML", "1", 1);
  const DeviceCacheOutcome outcome = use_device_cache(false, "--fresh");
  EXPECT_EQ(outcome.path, DeviceCachePath::off);
  EXPECT_EQ(outcome.why, "CUDATOOL_NO_NVML is set");
  ::setenv("CUDATOOL_NO_NVML", "0", 1);  // "0" is not set
  EXPECT_NE(use_device_cache(false, "--fresh").why, "CUDATOOL_NO_NVML is set");
}

TEST_F(DeviceCachePolicy, NoCacheDirectoryIsNoCache) {
  ::setenv("XDG_CACHE_HOME", "relative", 1);  // invalid (XDG): ignored
  ::setenv("HOME", "also-relative", 1);
  const DeviceCacheOutcome outcome = use_device_cache(false, "--fresh");
  EXPECT_EQ(outcome.path, DeviceCachePath::off);
  EXPECT_EQ(outcome.why, "no cache directory (neither an absolute XDG_CACHE_HOME nor HOME)");
  ::unsetenv("XDG_CACHE_HOME");
  ::unsetenv("HOME");
  EXPECT_EQ(use_device_cache(false, "--fresh").path, DeviceCachePath::off);
}

TEST_F(DeviceCachePolicy, TheDirectoryIsMadeAndKeptTheUsersAlone) {
  // No NVML here: the cuInit path, with nothing written, after the directory was made.
  DeviceCacheOutcome outcome = use_device_cache(false, "--fresh");
  EXPECT_EQ(outcome.path, DeviceCachePath::cuinit);
  EXPECT_NE(outcome.why.find("no NVML"), std::string::npos) << outcome.why;
  struct stat s {};
  ASSERT_EQ(::stat((dir_ / "cudatool/devices").c_str(), &s), 0);
  EXPECT_EQ(s.st_mode & 0777, 0700u);
  // Opened to others: made the user's alone again.
  fs::permissions(dir_ / "cudatool/devices", fs::perms::all);
  outcome = use_device_cache(true, "--fresh");
  EXPECT_EQ(outcome.path, DeviceCachePath::cuinit);
  EXPECT_TRUE(outcome.why.starts_with("--fresh; no NVML")) << outcome.why;
  ASSERT_EQ(::stat((dir_ / "cudatool/devices").c_str(), &s), 0);
  EXPECT_EQ(s.st_mode & 0777, 0700u);
  // A symbolic link where the directory should be is not followed.
  fs::remove_all(dir_ / "cudatool/devices");
  fs::create_directory(dir_ / "elsewhere");
  fs::create_directory_symlink(dir_ / "elsewhere", dir_ / "cudatool/devices");
  outcome = use_device_cache(false, "--fresh");
  EXPECT_EQ(outcome.path, DeviceCachePath::off);
  EXPECT_EQ(outcome.why, "cannot open the cache directory " + dir_.string() + "/cudatool/devices");
}

}  // namespace
}  // namespace cudatool
