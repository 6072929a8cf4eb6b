// The bad-input matrix (issue 13): every subcommand with wrong values, conflicting flags,
// odd files (a FIFO, a directory, /dev/zero, an empty or binary file, a huge one) and an
// odd environment. Every case must end with exactly one line on stderr starting
// `cudatool: `, the documented exit code, no sanitizer report, no escape character on the
// terminal, valid JSON on stdout where --json was asked for, and no hang (the runner kills
// a case after kTimeout seconds and the case fails).
//
// The table is built by make_cases(): add a row (or a value to a list) to extend it; a new
// subcommand adds its own block there.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "compile_corpus.hpp"
#include "process.hpp"

namespace fs = std::filesystem;
using namespace cudatool::testing;

namespace {

constexpr int kTimeout = 60;  // seconds; generous for the sanitizer build on a busy machine

// Where a case gets its driver from.
enum class Driver { missing, fake };

struct Case {
  std::string name;
  std::vector<std::string> args;  // {placeholders} are replaced by the fixture's paths
  int exit_code;
  Driver driver = Driver::missing;
  std::map<std::string, std::string> env;  // values may hold placeholders too
};

// Odd files, made once: placeholders in a case's arguments and environment name them.
class OddFiles {
 public:
  OddFiles() {
    char pattern[] = "/tmp/cudatool-bad-input-XXXXXX";
    root_ = ::mkdtemp(pattern);
    make_fifo(root_ / "fifo");
    fs::create_directory(root_ / "dir");
    write(root_ / "empty", "");
    write(root_ / "binary", std::string("\x7f"
                                        "ELF\x00\xff\xfe\x01\x1b[31m",
                                        12) +
                                "\x00\x00");
    write(root_ / "big", std::string(1 << 20, '7'));
    write(root_ / "kernel.cu", "extern \"C\" __global__ void k(float* x) { x[0] = 1; }\n");
    // HOMEs whose ~/.cuda-device is each kind of odd file.
    for (const char* kind :
         {"fifo", "dir", "zero", "binary", "big", "escape", "empty", "blank", "loop", "nul"}) {
      const fs::path home = root_ / (std::string("home-") + kind);
      fs::create_directories(home);
      const fs::path file = home / ".cuda-device";
      const std::string k = kind;
      if (k == "fifo") make_fifo(file);
      if (k == "dir") fs::create_directory(file);
      if (k == "zero") fs::create_symlink("/dev/zero", file);
      if (k == "binary") write(file, std::string("\xff\xfe\x00\x01", 4));
      if (k == "big") write(file, std::string(1 << 20, '1'));
      if (k == "escape") write(file, "\x1b]0;owned\x07\x1b[2J");
      if (k == "empty") write(file, "");
      if (k == "blank") write(file, " \n\t\n");
      if (k == "loop") fs::create_symlink(".cuda-device", file);
      if (k == "nul")
        write(file, std::string("0\x00"
                                "1",
                                3));
    }
    fs::create_directories(root_ / "home-clean");
    fs::create_directories(root_ / "cache");
  }
  ~OddFiles() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  std::string expand(std::string text) const {
    const std::map<std::string, std::string> names = {
        {"{fifo}", (root_ / "fifo").string()},
        {"{dir}", (root_ / "dir").string()},
        {"{empty}", (root_ / "empty").string()},
        {"{binary}", (root_ / "binary").string()},
        {"{big}", (root_ / "big").string()},
        {"{cu}", (root_ / "kernel.cu").string()},
        {"{root}", root_.string()},
        {"{missing}", (root_ / "missing").string()},
    };
    for (const auto& [name, value] : names)
      for (std::size_t at; (at = text.find(name)) != std::string::npos;)
        text.replace(at, name.size(), value);
    return text;
  }
  const fs::path& root() const { return root_; }

 private:
  static void make_fifo(const fs::path& p) {
    if (::mkfifo(p.c_str(), 0600) != 0) std::abort();
  }
  static void write(const fs::path& p, const std::string& data) {
    std::ofstream(p, std::ios::binary) << data;
  }
  fs::path root_;
};

const OddFiles& odd_files() {
  static const OddFiles files;
  return files;
}

// Values no whole-number flag may accept.
const std::vector<std::string>& bad_numbers() {
  static const std::vector<std::string> values = {
      "",
      "abc",
      "-",
      "+1",
      " 1",
      "1 ",
      "0x10",
      "1e3",
      "18446744073709551616",
      "99999999999999999999",
      "-99999999999999999999",
      "\x1b[31m7",
      "\xff",
      std::string(5000, '9'),
      "1\n2",
      "1.5",
  };
  return values;
}

// Values no device spec may accept (before any driver is asked).
const std::vector<std::string>& bad_device_specs() {
  static const std::vector<std::string> values = {
      "",
      "abc",
      "-1",
      "GPU-",
      "1.5",
      "0000:zz:00.0",
      "\x1b]0;owned\x07",
      std::string(100000, '7'),
      "\xff\xfe",
      "MIG-abc",
      "1 2",
  };
  return values;
}

std::vector<Case> make_cases() {
  std::vector<Case> cases;
  auto add = [&](std::string name, std::vector<std::string> args, int code,
                 Driver driver = Driver::missing, std::map<std::string, std::string> env = {}) {
    cases.push_back({std::move(name), std::move(args), code, driver, std::move(env)});
  };

  // Whole numbers (and sizes, durations) in every flag that takes one: exit 2, before any
  // driver is loaded (the driver here is missing, which would be exit 3).
  struct NumberFlag {
    std::vector<std::string> prefix;
    std::string flag;
    std::vector<std::string> valid;  // of bad_numbers(), the ones this flag accepts
  };
  const std::vector<NumberFlag> number_flags = {
      {{"bench-pool", "--iterations", "10", "--warmup", "0"}, "--live", {}},
      {{"bench-pool", "--iterations", "10", "--warmup", "0"}, "--threads", {}},
      {{"bench-pool", "--iterations", "10", "--warmup", "0"}, "--seed", {}},
      {{"bench-pool", "--iterations", "10"}, "--warmup", {}},
      {{"bench-pool", "--iterations", "10", "--warmup", "0"}, "--leading-bits", {}},
      {{"bench-pool", "--iterations", "10", "--warmup", "0"}, "--shards", {}},
      {{"bench-pool", "--iterations", "10", "--warmup", "0"}, "--size", {}},
      {{"bench-pool", "--iterations", "10", "--warmup", "0"}, "--small-block", {}},
      {{"bench-pool", "--warmup", "0"}, "--iterations", {}},
      {{"bench-pool", "--warmup", "0"}, "--duration", {"1.5"}},
      {{"bench-pool", "--iterations", "10", "--warmup", "0", "--workload", "uniform"},
       "--min-size",
       {}},
      {{"occupancy", "--arch", "sm_90"}, "--threads", {}},
      {{"occupancy", "--arch", "sm_90", "--threads", "128"}, "--regs", {}},
      {{"occupancy", "--arch", "sm_90", "--threads", "128"}, "--smem", {}},
      {{"occupancy", "--arch", "sm_90", "--threads", "128"}, "--barriers", {}},
      {{"occupancy", "--arch", "sm_90", "--threads", "128"}, "--sms", {}},
      {{"occupancy", "--threads", "128"}, "--sms", {}},
      {{"devices"}, "--min-count", {}},
      {{"devices"}, "--min-memory", {}},
      {{"devices"}, "--min-cc", {"1.5"}},
  };
  for (const auto& f : number_flags) {
    for (std::size_t i = 0; i < bad_numbers().size(); ++i) {
      const std::string& value = bad_numbers()[i];
      if (std::find(f.valid.begin(), f.valid.end(), value) != f.valid.end()) continue;
      auto args = f.prefix;
      args.push_back(f.flag + "=" + value);
      add(f.prefix[0] + " " + f.flag + " bad number " + std::to_string(i), args, 2);
    }
  }
  // The same flags with values out of range, and the reproducers.
  for (const auto& [args, code] : std::vector<std::pair<std::vector<std::string>, int>>{
           {{"bench-pool", "--seed=-1", "--iterations", "10"}, 2},
           {{"bench-pool", "--seed", "18446744073709551616", "--iterations", "10"}, 2},
           {{"bench-pool", "--duration", ""}, 2},
           {{"bench-pool", "--duration", "0"}, 2},
           {{"bench-pool", "--duration", "3601"}, 2},
           {{"bench-pool", "--duration", "inf"}, 2},
           {{"bench-pool", "--duration", "nan"}, 2},
           {{"bench-pool", "--live", "99999999999999999999", "--iterations", "10"}, 2},
           {{"bench-pool", "--live", "0", "--iterations", "10"}, 2},
           {{"bench-pool", "--threads", "0", "--iterations", "10"}, 2},
           {{"bench-pool", "--threads", "100000", "--iterations", "10"}, 2},
           {{"bench-pool", "--leading-bits", "13", "--iterations", "10"}, 2},
           {{"bench-pool", "--shards", "257", "--iterations", "10"}, 2},
           {{"bench-pool", "--size", "0", "--iterations", "10"}, 2},
           {{"bench-pool", "--size", "1T", "--iterations", "10"}, 7},  // more than the machine has
           {{"bench-pool", "--small-block", "2M", "--iterations", "10"}, 2},
           {{"bench-pool", "--iterations", "0"}, 2},
           {{"devices", "--min-count=-1"}, 2},
           {{"devices", "--min-count", "99999999999999999999"}, 2},
           {{"devices", "--min-cc", "banana"}, 2},
           {{"devices", "--min-memory", "-5G"}, 2},
           {{"occupancy", "--arch", "sm_90", "--threads", "0"}, 2},
           {{"occupancy", "--arch", "sm_90", "--threads", "1025"}, 2},
           {{"occupancy", "--arch", "sm_90", "--threads", "128", "--regs", "256"}, 2},
           {{"occupancy", "--arch", "sm_90", "--threads", "128", "--smem", "1G"}, 2},
           {{"occupancy", "--arch", "sm_90", "--threads", "128", "--barriers", "17"}, 2},
           {{"occupancy", "--arch", "sm_90", "--threads", "128", "--sms", "0"}, 2},
       })
    add("range " + std::to_string(cases.size()), args, code);
  // --sweep lists.
  for (const std::string list : {"", ",", "64,", ",64", "64,,128", "0", "-32", "abc", "64;128",
                                 "99999999999", "2048", "\x1b[31m", " 64"})
    add("occupancy --sweep list \"" + list + "\"",
        {"occupancy", "--arch", "sm_90", "--sweep", list}, 2);

  // Architectures.
  for (const std::string& arch : std::vector<std::string>{
           "", "sm_", "sm_13", "sm_999", "banana", "compute_", "9.", ".0", "9.0.0", "sm_90x",
           "\xff", "\x1b[2J", std::string(10000, 'a'), "sm_-90", "SM_90 junk"})
    add("occupancy --arch \"" + arch.substr(0, 20) + "\"",
        {"occupancy", "--threads", "128", "--arch", arch}, 2);

  // Device specs in --device, CUDA_DEVICE: exit 2 before the driver is loaded.
  for (std::size_t i = 0; i < bad_device_specs().size(); ++i) {
    const std::string& spec = bad_device_specs()[i];
    const std::string n = std::to_string(i);
    add("attrs --device bad " + n, {"attrs", "--device", spec}, 2);
    add("occupancy --device bad " + n, {"occupancy", "--threads", "128", "--device", spec}, 2);
    add("bench-pool --device bad " + n,
        {"bench-pool", "--backend", "device", "--iterations", "10", "--device", spec}, 2);
    add("attrs CUDA_DEVICE bad " + n, {"attrs"}, 2, Driver::missing, {{"CUDA_DEVICE", spec}});
    add("occupancy CUDA_DEVICE bad " + n, {"occupancy", "--threads", "128"}, 2, Driver::missing,
        {{"CUDA_DEVICE", spec}});
  }
  // ~/.cuda-device as every kind of odd file: refused without blocking, exit 2.
  for (const char* kind :
       {"fifo", "dir", "zero", "binary", "big", "escape", "empty", "blank", "loop", "nul"}) {
    const std::string home = std::string("{root}/home-") + kind;
    add(std::string("attrs ~/.cuda-device ") + kind, {"attrs"}, 2, Driver::missing,
        {{"HOME", home}});
    add(std::string("occupancy ~/.cuda-device ") + kind, {"occupancy", "--threads", "128"}, 2,
        Driver::missing, {{"HOME", home}});
    add(std::string("attrs --json ~/.cuda-device ") + kind, {"attrs", "--json"}, 2, Driver::missing,
        {{"HOME", home}});
  }

  // CUDATOOL_LIBCUDA at something that is not a library: exit 3, never a hang.
  for (const std::string lib :
       {"{fifo}", "{dir}", "/dev/zero", "{empty}", "{binary}", "{missing}", "{big}"}) {
    for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
             {"devices"},
             {"devices", "--json"},
             {"attrs"},
             {"occupancy", "--threads", "128"},
             {"bench-pool", "--backend", "device", "--iterations", "10"}})
      add(args[0] + " CUDATOOL_LIBCUDA=" + lib, args, 3, Driver::missing,
          {{"CUDATOOL_LIBCUDA", lib}});
  }
  // CUDATOOL_LIBNVRTC likewise, for compile (no cache: NVRTC is needed).
  for (const std::string lib : {"{fifo}", "{dir}", "/dev/zero", "{empty}", "{binary}"})
    add("compile CUDATOOL_LIBNVRTC=" + lib, {"compile", "--no-cache", "--arch", "sm_90", "{cu}"}, 3,
        Driver::missing, {{"CUDATOOL_LIBNVRTC", lib}});

  // Conflicting or missing flags.
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"occupancy", "--arch", "sm_90", "--device", "0", "--threads", "128"},
           {"occupancy", "--arch", "sm_90", "--sweep", "--threads", "128"},
           {"occupancy", "--arch", "sm_90", "--threads", "128", "--sweep-regs", "--sweep-smem"},
           {"occupancy", "--arch", "sm_90", "--sweep", "--sweep-regs", "--threads", "128"},
           {"occupancy", "--arch", "sm_90", "--sweep-regs"},
           {"occupancy", "--arch", "sm_90"},
           {"occupancy", "--arch", "sm_90", "--threads", "128", "extra"},
           {"occupancy", "--arch"},
           {"compile", "--ptx", "--cubin", "{cu}"},
           {"compile", "-D", "", "--arch", "sm_90", "{cu}"},
           {"compile", "-D", "=1", "--arch", "sm_90", "{cu}"},
           {"compile", "-D", "-DX", "--arch", "sm_90", "{cu}"},
           {"compile"},
           {"compile", "--std", "c++98", "{cu}"},
           {"compile", "--compiler", "gcc", "{cu}"},
           {"compile", "--maxrregcount", "0", "{cu}"},
           {"compile", "--maxrregcount", "256", "{cu}"},
           {"compile", "--arch", "sm_13", "{cu}"},
           {"compile", "--arch", "banana", "{cu}"},
           {"bench-pool", "--backend", "gpu"},
           {"bench-pool", "--workload", "gaussian"},
           {"bench-pool", "--order", "fifo"},
           {"bench-pool", "--allocators", "pool,bogus"},
           {"bench-pool", "--allocators", "stream"},
           {"bench-pool", "--pinned-flags", "portable,bogus", "--backend", "pinned"},
           {"bench-pool", "--workload", "uniform", "--min-size", "1M", "--max-size", "1K"},
           {"bench-pool", "--iterations", "10", "extra"},
           {"devices", "extra"},
           {"devices", "--min-count"},
           {"attrs", "max_threads_per_blok"},
           {"attrs", "\x1b[2Jwarp_size"},
           {"attrs", std::string(100000, 'x')},
           {"attrs", "--device"},
           {"completion"},
           {"completion", "tcsh"},
           {"banana"},
           {"\x1b[2J"},
           {"\xff"},
           {},
           {"--bogus"},
           {"devices", "--bogus"},
           {"devices", "--json", "--bogus"},
           {"occupancy", "--bogus"},
           {"compile", "--bogus"},
           {"bench-pool", "--bogus"},
           {"attrs", "--bogus"},
       })
    add("flags " + std::to_string(cases.size()), args, 2);

  // Sources that are not files (compile reads them through base/file_io): exit 2.
  for (const std::string source : {"{fifo}", "{dir}", "/dev/zero", "{missing}", "{big}/x"})
    add("compile source " + source, {"compile", "--arch", "sm_90", source}, 2, Driver::missing,
        {{"CUDATOOL_CACHE_DIR", "{root}/cache"}});

  // Errors with --json: the error object on stdout must be valid JSON even when the
  // message holds bytes that are not UTF-8.
  for (const auto& [args, code] : std::vector<std::pair<std::vector<std::string>, int>>{
           {{"occupancy", "--json", "--arch", "\xff", "--threads", "1"}, 2},
           {{"occupancy", "--json", "--arch", "sm_\xc3\x28", "--threads", "1"}, 2},
           {{"occupancy", "--json", "--arch", "sm_90", "--threads", "\xed\xa0\x80"}, 2},
           {{"occupancy", "--json", "--device", "\xf5\x80", "--threads", "1"}, 2},
           {{"attrs", "--json", "--device", "\xff"}, 2},
           {{"attrs", "--json", "\xfe\xff"}, 2},
           {{"devices", "--json", "--min-cc", "\xff"}, 2},
           {{"devices", "--json", "--min-memory", "\xc0\xaf"}, 2},
           {{"bench-pool", "--json", "--workload", "\xff"}, 2},
           {{"bench-pool", "--json", "--seed", "\xff"}, 2},
           {{"devices", "--json"}, 3},
           {{"attrs", "--json"}, 3},
       })
    add("json " + std::to_string(cases.size()), args, code);
  for (const char* kind : {"binary", "escape", "nul"})
    add(std::string("occupancy --json ~/.cuda-device ") + kind,
        {"occupancy", "--json", "--threads", "128"}, 2, Driver::missing,
        {{"HOME", std::string("{root}/home-") + kind}});

  // With the fake driver: a device that is not there is exit 4, never 5.
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"attrs", "--device", "7"},
           {"attrs", "--device", "GPU-ffffffff"},
           {"attrs", "--device", "0000:99:00.0"},
           {"occupancy", "--threads", "128", "--device", "5"},
           {"devices", "--min-count", "3"},
           {"devices", "--min-cc", "12.0"},
           {"devices", "--min-memory", "1000T"},
       })
    add("fake " + std::to_string(cases.size()), args, 4, Driver::fake);
  return cases;
}

// gtest prints a case by its name, not its bytes.
void PrintTo(const Case& c, std::ostream* os) {
  *os << c.name.substr(0, 60);
}

std::string test_name(const ::testing::TestParamInfo<Case>& info) {
  return "case_" + std::to_string(info.index);
}

class BadInput : public ::testing::TestWithParam<Case> {};

TEST_P(BadInput, OneLineOnStderrAndTheDocumentedExitCode) {
  const Case& c = GetParam();
  const OddFiles& files = odd_files();
  ProcessOptions options = c.driver == Driver::fake ? with_fake_driver() : without_driver();
  options.env["HOME"] = (files.root() / "home-clean").string();
  options.env["CUDA_DEVICE"] = std::nullopt;
  options.env["CUDATOOL_CACHE_DIR"] = (files.root() / "cache").string();
  for (const auto& [name, value] : c.env) options.env[name] = files.expand(value);
  options.timeout_seconds = kTimeout;
  std::vector<std::string> args;
  for (const auto& a : c.args) args.push_back(files.expand(a));

  if (c.args.size() > 1 && c.args[0] == "compile" && c.env.count("CUDATOOL_LIBNVRTC") == 0 &&
      c.exit_code == 3)
    if (auto why = nvrtc_unavailable()) GTEST_SKIP() << *why;

  const ProcessResult r = run_cudatool(args, options);
  SCOPED_TRACE(c.name);
  ASSERT_FALSE(r.timed_out) << "hung for " << kTimeout << " s";
  EXPECT_EQ(r.exit_code, c.exit_code) << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_TRUE(r.err.starts_with("cudatool: ")) << r.err;
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << "an escape sequence reached stderr";
  EXPECT_EQ(r.err.find('\0'), std::string::npos);
  EXPECT_LT(r.err.size(), 2500u) << "an echoed value was not cut";
  EXPECT_EQ(r.err.find("Sanitizer"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("runtime error"), std::string::npos) << r.err;
  const bool json = std::find(c.args.begin(), c.args.end(), "--json") != c.args.end();
  if (json && !r.out.empty()) {
    // nlohmann's parser rejects invalid UTF-8: the document must be valid.
    EXPECT_NO_THROW({
      const auto doc = nlohmann::json::parse(r.out);
      EXPECT_EQ(doc.at("error").at("exit_code"), c.exit_code);
    }) << r.out;
  }
}

INSTANTIATE_TEST_SUITE_P(Matrix, BadInput, ::testing::ValuesIn(make_cases()), test_name);

TEST(BadInputMatrix, HasAFewHundredCases) {
  EXPECT_GE(make_cases().size(), 300u);
}

// Output errors: whatever a command printed must have reached stdout, or the command fails
// with one line and exit 1 (man page: EXIT STATUS).
std::vector<std::pair<std::vector<std::string>, bool>> output_commands() {
  // {args, needs the fake driver}
  return {
      {{"devices"}, true},
      {{"devices", "--json"}, true},
      {{"attrs"}, true},
      {{"attrs", "--json", "warp_size"}, true},
      {{"occupancy", "--arch", "sm_90", "--threads", "128"}, false},
      {{"occupancy", "--arch", "sm_90", "--sweep", "--json"}, false},
      {{"bench-pool", "--iterations", "100", "--warmup", "0", "--json"}, false},
      {{"completion", "bash"}, false},
      {{"devices", "--help"}, false},
      {{"--version"}, false},
  };
}

TEST(OutputErrors, FullDiskIsAFailureWithOneLine) {
  for (const auto& [args, fake] : output_commands()) {
    ProcessOptions options = fake ? with_fake_driver() : without_driver();
    options.stdout_path = "/dev/full";
    options.timeout_seconds = kTimeout;
    const auto r = run_cudatool(args, options);
    SCOPED_TRACE(args.front());
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    // The reason is there when the last write failed at exit ("No space left on device");
    // an earlier failed flush may have taken it along.
    EXPECT_TRUE(r.err.starts_with("cudatool: cannot write standard output")) << r.err;
  }
}

TEST(OutputErrors, ClosedStdoutIsAFailureWithOneLine) {
  for (const auto& [args, fake] : output_commands()) {
    ProcessOptions options = fake ? with_fake_driver() : without_driver();
    options.close_stdout = true;
    options.timeout_seconds = kTimeout;
    const auto r = run_cudatool(args, options);
    SCOPED_TRACE(args.front());
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    EXPECT_TRUE(r.err.starts_with("cudatool: cannot write standard output")) << r.err;
  }
}

TEST(OutputErrors, AFailedCommandKeepsItsOwnStatusAndLine) {
  ProcessOptions options = without_driver();
  options.stdout_path = "/dev/full";
  const auto r = run_cudatool({"devices", "--json"}, options);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
}

// Signed overflow (issue 13, 9): the grid of one wave is counted in 64 bits.
TEST(BadInputRegression, HugeSmCountGivesTheExactWave) {
  const auto r = run_cudatool(
      {"occupancy", "--arch", "sm_90", "--sweep", "128,256", "--sms", "1000000000", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  const std::int64_t per_sm = doc.at("suggestion").at("tb_per_mp");
  EXPECT_EQ(doc.at("suggestion").at("min_grid_size").get<std::int64_t>(), per_sm * 1000000000LL);
  const auto plain =
      run_cudatool({"occupancy", "--arch", "sm_90", "--sweep", "--sms", "2147483647"});
  EXPECT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(plain.out.find("-"), plain.out.find("-")) << plain.out;
  EXPECT_EQ(plain.out.find("wave: -"), std::string::npos) << plain.out;
}

// `--sweep` alone sweeps every block size; `--sweep ""` is a malformed list.
TEST(BadInputRegression, EmptySweepListIsAnError) {
  EXPECT_EQ(run_cudatool({"occupancy", "--arch", "sm_90", "--sweep"}).exit_code, 0);
  EXPECT_EQ(run_cudatool({"occupancy", "--arch", "sm_90", "--sweep", ""}).exit_code, 2);
}

// A valid but unusual success path: an argument that is not UTF-8 does not break --json.
TEST(BadInputRegression, JsonOfAnErrorWithLatin1IsValid) {
  const auto r = run_cudatool({"occupancy", "--json", "--arch", "caf\xe9", "--threads", "1"});
  EXPECT_EQ(r.exit_code, 2);
  const auto doc = nlohmann::json::parse(r.out);
  const std::string message = doc.at("error").at("message");
  EXPECT_NE(message.find("caf\\xe9"), std::string::npos) << message;
}

// bench-pool when no thread can be created: a clean error, not std::terminate. Needs an
// unprivileged user (RLIMIT_NPROC does not bind root): setpriv from util-linux, as root.
TEST(BadInputRegression, BenchPoolWithoutThreadsFailsCleanly) {
  if (::geteuid() != 0 || ::access("/usr/bin/setpriv", X_OK) != 0 ||
      ::access("/usr/bin/prlimit", X_OK) != 0)
    GTEST_SKIP() << "needs root, setpriv and prlimit to run as a user with a process limit";
  ProcessOptions options;
  options.timeout_seconds = kTimeout;
  const auto r = run_process(
      "/usr/bin/setpriv",
      {"--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/prlimit", "--nproc=8",
       CUDATOOL_BINARY, "bench-pool", "--threads", "100", "--iterations", "10", "--warmup", "0"},
      options);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_TRUE(r.err.starts_with("cudatool: bench-pool: cannot start thread")) << r.err;
}

}  // namespace
