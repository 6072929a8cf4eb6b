#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "cudatool/base/error.hpp"
#include "cudatool/device/selection.hpp"

using namespace cudatool;
namespace fs = std::filesystem;

namespace {

struct TempHome {
  fs::path path;
  TempHome() {
    path = fs::temp_directory_path() /
           ("cudatool-home-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::create_directories(path);
  }
  ~TempHome() { fs::remove_all(path); }
  void write(const std::string& name, const std::string& content) const {
    std::ofstream(path / name) << content;
  }
  static inline int counter = 0;
};

std::string error_of(const SelectionInputs& inputs) {
  try {
    choose_device(inputs);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(DeviceSpec, ParsesOrdinalsPciBusIdsAndUuids) {
  EXPECT_EQ(parse_device_spec("3", "--device").ordinal, 3);
  EXPECT_EQ(parse_device_spec(" 0\n", "--device").kind, DeviceSpec::Kind::ordinal);
  EXPECT_EQ(parse_device_spec("0000:07:00.0", "--device").kind, DeviceSpec::Kind::pci_bus_id);
  EXPECT_EQ(parse_device_spec("07:00.0", "--device").kind, DeviceSpec::Kind::pci_bus_id);
  EXPECT_EQ(parse_device_spec("GPU-8a5b2c1d-1111-2222-3333-444455556666", "--device").kind,
            DeviceSpec::Kind::uuid);
  EXPECT_EQ(parse_device_spec("gpu-8a5b", "--device").kind, DeviceSpec::Kind::uuid);
}

TEST(DeviceSpec, RejectsMalformedValuesNamingSourceAndValue) {
  for (const char* bad : {"abc", "-1", "", "0000:zz:00.0", "1.5", "99999999999999999999", "GPU-"}) {
    try {
      parse_device_spec(bad, "CUDA_DEVICE");
      FAIL() << "accepted " << bad;
    } catch (const UsageError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("CUDA_DEVICE"), std::string::npos) << what;
      if (*bad) {
        EXPECT_NE(what.find(bad), std::string::npos) << what;
      }
    }
  }
}

TEST(DeviceChoice, FlagBeatsEnvironmentBeatsFileBeatsDefault) {
  TempHome home;
  home.write(".cuda-device", "2\n");
  SelectionInputs inputs{std::string("1"), std::string("3"), home.path.string(), "--device"};
  EXPECT_EQ(choose_device(inputs).source, "--device");
  EXPECT_EQ(choose_device(inputs).spec.ordinal, 1);
  inputs.flag.reset();
  EXPECT_EQ(choose_device(inputs).source, "CUDA_DEVICE");
  EXPECT_EQ(choose_device(inputs).spec.ordinal, 3);
  inputs.env_value.reset();
  EXPECT_EQ(choose_device(inputs).source, "~/.cuda-device");
  EXPECT_EQ(choose_device(inputs).spec.ordinal, 2);
  EXPECT_TRUE(choose_device(inputs).explicit_choice());
  inputs.home = (home.path / "elsewhere").string();
  EXPECT_EQ(choose_device(inputs).source, "default");
  EXPECT_FALSE(choose_device(inputs).explicit_choice());
  EXPECT_EQ(choose_device(inputs).spec.ordinal, 0);
}

// The caller's value is named as the caller calls it (the library knows no flag): the CLI's
// "--device", the Python module's "device=" alike.
TEST(DeviceChoice, CallersValueCarriesTheCallersSource) {
  SelectionInputs inputs{std::string("1"), std::nullopt, "", "device="};
  EXPECT_EQ(choose_device(inputs).source, "device=");
  inputs.flag = "banana";
  EXPECT_EQ(error_of(inputs).rfind("device= \"banana\": ", 0), 0u) << error_of(inputs);
  inputs.flag_source = "--device";
  EXPECT_EQ(error_of(inputs).rfind("--device \"banana\": ", 0), 0u) << error_of(inputs);
}

TEST(DeviceChoice, AcceptsBothHomeFileNames) {
  TempHome home;
  home.write(".cuda_device", "1");
  EXPECT_EQ(choose_device({std::nullopt, std::nullopt, home.path.string()}).source,
            "~/.cuda_device");
  home.write(".cuda-device", "0");  // the documented name wins when both exist
  EXPECT_EQ(choose_device({std::nullopt, std::nullopt, home.path.string()}).source,
            "~/.cuda-device");
}

TEST(DeviceChoice, BadHomeFilesAreUsageErrors) {
  TempHome home;
  home.write(".cuda-device", "");
  EXPECT_NE(error_of({std::nullopt, std::nullopt, home.path.string()}).find("is empty"),
            std::string::npos);
  home.write(".cuda-device", "banana");
  EXPECT_NE(error_of({std::nullopt, std::nullopt, home.path.string()}).find("\"banana\""),
            std::string::npos);
  fs::remove(home.path / ".cuda-device");
  fs::create_directory(home.path / ".cuda-device");
  EXPECT_NE(error_of({std::nullopt, std::nullopt, home.path.string()}).find("is a directory"),
            std::string::npos);
  // Files that are not what they seem are refused at once (issue 13): a FIFO would block a
  // reader, /dev/zero never ends, a huge file would be echoed whole.
  fs::remove(home.path / ".cuda-device");
  ASSERT_EQ(::mkfifo((home.path / ".cuda-device").c_str(), 0600), 0);
  EXPECT_NE(error_of({std::nullopt, std::nullopt, home.path.string()}).find("is a FIFO"),
            std::string::npos);
  fs::remove(home.path / ".cuda-device");
  fs::create_symlink("/dev/zero", home.path / ".cuda-device");
  EXPECT_NE(error_of({std::nullopt, std::nullopt, home.path.string()}).find("character device"),
            std::string::npos);
  fs::remove(home.path / ".cuda-device");
  home.write(".cuda-device", std::string(1 << 20, '1'));
  const std::string big = error_of({std::nullopt, std::nullopt, home.path.string()});
  EXPECT_NE(big.find("larger than 4096 bytes"), std::string::npos) << big.substr(0, 200);
  EXPECT_LT(big.size(), 300u);
  fs::remove(home.path / ".cuda-device");
  home.write(".cuda-device", "\x1b[2J1");
  const std::string escape = error_of({std::nullopt, std::nullopt, home.path.string()});
  EXPECT_EQ(escape.find('\x1b'), std::string::npos) << escape;
  EXPECT_NE(escape.find("\\x1b[2J1"), std::string::npos) << escape;
}

TEST(DeviceChoice, MalformedEnvironmentNamesTheVariable) {
  const std::string what = error_of({std::nullopt, std::string("abc"), ""});
  EXPECT_NE(what.find("CUDA_DEVICE \"abc\""), std::string::npos) << what;
  const std::string negative = error_of({std::nullopt, std::string("-1"), ""});
  EXPECT_NE(negative.find("non-negative"), std::string::npos) << negative;
}
