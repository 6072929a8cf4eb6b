// The bad-input matrix (issue 13): every subcommand with wrong values, conflicting flags,
// odd files (a FIFO, a directory, /dev/zero, an empty or binary file, a huge one) and an
// odd environment. Every case must end with exactly one line on stderr starting
// `cudatool: `, the documented exit code, no sanitizer report, no escape character on the
// terminal, a valid JSON document on stdout where --json was asked for, and no hang (the runner
// kills a case after kTimeout seconds and the case fails).
//
// The table is built by make_cases(): add a row (or a value to a list) to extend it; a new
// subcommand adds its own block there.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "compile_corpus.hpp"
#include "cudatool/base/test_hooks.hpp"
#include "fatbin_builder.hpp"
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
  // Under --json, the key stdout's document must have: "error" for the error document;
  // "files" where the command reports after its listing (kernels: an entry that cannot be
  // read, a file without CUDA code), so that stdout is the listing itself.
  std::string json_key = "error";
};

// Bytes of a file, or empty.
std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A little-endian integer written over `at` of `bytes`.
template <class T>
void patch(std::string& bytes, std::size_t at, T value) {
  for (std::size_t i = 0; i < sizeof(T); ++i)
    bytes[at + i] = static_cast<char>(static_cast<std::uint64_t>(value) >> (8 * i));
}

std::string text_of(const Bytes& b) {
  return std::string(b.begin(), b.end());
}

// The source tree's real binaries: a CUBIN and a zstd fatbin of nvcc's (the fuzz corpora).
std::string source_file(const std::string& relative) {
  return std::string(CUDATOOL_SOURCE_DIR) + "/" + relative;
}
const char* const kCubin = "fuzz/corpus/cubin/saxpy_sm_90.cubin";
const char* const kZstdFatbin = "fuzz/corpus/fatbin/zstd_sm80_sm90_sm100_ptx.fatbin";

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
    names_ = {
        {"{fifo}", (root_ / "fifo").string()},
        {"{dir}", (root_ / "dir").string()},
        {"{empty}", (root_ / "empty").string()},
        {"{binary}", (root_ / "binary").string()},
        {"{big}", (root_ / "big").string()},
        {"{cu}", (root_ / "kernel.cu").string()},
        {"{root}", root_.string()},
        {"{missing}", (root_ / "missing").string()},
        {"{cubin}", source_file(kCubin)},
        {"{fake_old}", CUDATOOL_FAKE_LIBCUDA_OLD},
    };
    make_binaries();
  }
  ~OddFiles() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  std::string expand(std::string text) const {
    for (const auto& [name, value] : names_)
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
  // A file for `kernels` under root_, named by the placeholder {name}.
  void binary(const std::string& name, const std::string& bytes) {
    write(root_ / name, bytes);
    names_["{" + name + "}"] = (root_ / name).string();
  }

  // Damaged binaries for `kernels`: host ELF files (from /bin/true), the source tree's real
  // CUBIN and zstd fatbin, fatbin containers built byte by byte, ar archives.
  void make_binaries() {
    const std::string host = slurp("/bin/true");  // a 64-bit little-endian ELF without CUDA
    binary("text", "just some text, not a binary\n");
    binary("elf-truncated", host.substr(0, 100));
    std::string e = host;
    patch<std::uint64_t>(e, 40, 0x7fffffffffff0000ull);  // e_shoff
    binary("elf-shoff", e);
    e = host;
    patch<std::uint16_t>(e, 60, 0xffff);  // e_shnum
    binary("elf-shnum", e);
    e = host;
    patch<std::uint16_t>(e, 62, 0x4000);  // e_shstrndx
    binary("elf-shstrndx", e);
    e = host;
    patch<std::uint16_t>(e, 58, 8);  // e_shentsize
    binary("elf-shentsize", e);
    e = host;
    e[4] = 1;  // ELFCLASS32
    binary("elf-32", e);
    e = host;
    e[5] = 2;  // big-endian
    binary("elf-big-endian", e);
    const std::string cubin = slurp(source_file(kCubin));
    binary("cubin-truncated", cubin.substr(0, cubin.size() / 2));
    // The CUBIN with its kernel "saxpy" renamed "s\x1b[2J" (the same length, every
    // occurrence: the symbol and section names agree).
    std::string escaped = cubin;
    for (std::size_t at; (at = escaped.find("saxpy")) != std::string::npos;)
      escaped.replace(at, 5, "s\x1b[2J");
    binary("cubin-escape-name", escaped);
    // A file named with an escape sequence, whose "no CUDA code" note names it.
    binary("esc\x1b[31m-name", host);
    // ... and one named with a zero-width space and a right-to-left override.
    binary("zwsp\xe2\x80\x8b-rlo\xe2\x80\xae-name", host);

    // Containers and entries with absurd sizes (fatbin_builder.hpp).
    const Bytes ptx = bytes_of(".version 8.0\n.target sm_90\n.address_size 64\n");
    const Bytes good = container({entry({.kind = 1, .payload = ptx})});
    Bytes b = good;
    put<std::uint64_t>(b, 8, 1ull << 40);
    binary("fatbin-size", text_of(b));
    b = good;
    put<std::uint16_t>(b, 4, 2);
    binary("fatbin-version", text_of(b));
    b = good;
    put<std::uint16_t>(b, 6, 4096);
    binary("fatbin-header-size", text_of(b));
    b = good;
    put<std::uint32_t>(b, 16 + 4, 0xffffffffu);
    binary("fatbin-entry-header", text_of(b));
    b = good;
    put<std::uint64_t>(b, 16 + 8, 1ull << 62);
    binary("fatbin-entry-payload", text_of(b));
    b = good;
    put<std::uint32_t>(b, 16 + 28, 0x80000000u);
    binary("fatbin-arch", text_of(b));
    binary("fatbin-compressed-size", text_of(container({entry({.flags = 0x8011,
                                                               .payload = Bytes(16, 1),
                                                               .compressed_size = 17,
                                                               .decompressed_size = 64})})));
    binary("fatbin-entry-truncated",
           text_of(container({entry({.kind = 1, .payload = ptx}), Bytes(8, 0xab)})));
    b = good;
    b.insert(b.end(), 24, 0xee);
    binary("fatbin-trailing", text_of(b));
    // Entries that cannot be read: the listing goes on, one line each, exit 2.
    Bytes garbage(256);
    for (std::size_t i = 0; i < garbage.size(); ++i)
      garbage[i] = static_cast<std::uint8_t>(i * 37 + 11);
    binary("zstd-bomb", text_of(container({entry({.flags = 0x8011,
                                                  .payload = Bytes(16, 0),
                                                  .compressed_size = 16,
                                                  .decompressed_size = 1ull << 40})})));
    binary(
        "zstd-zero",
        text_of(container({entry({.flags = 0x8011, .payload = garbage, .compressed_size = 256})})));
    binary("zstd-corrupt", text_of(container({entry({.flags = 0x8011,
                                                     .payload = garbage,
                                                     .compressed_size = 256,
                                                     .decompressed_size = 4096})})));
    binary("lz4-corrupt", text_of(container({entry({.flags = 0x2011,
                                                    .payload = garbage,
                                                    .compressed_size = 256,
                                                    .decompressed_size = 4096})})));
    binary("cubin-garbage", text_of(container({entry({.payload = garbage})})));
    // nvcc's zstd fatbin, its first entry's declared size made 1 TiB, or its data damaged.
    const std::string fatbin = slurp(source_file(kZstdFatbin));
    std::string real = fatbin;
    patch<std::uint64_t>(real, 16 + 56, 1ull << 40);
    binary("real-zstd-bomb", real);
    real = fatbin;
    const std::size_t payload = 16 + static_cast<unsigned char>(fatbin[16 + 4]);
    for (std::size_t i = payload + 24; i < payload + 200; ++i) real[i] = static_cast<char>(i * 37);
    binary("real-zstd-corrupt", real);
    // ar archives.
    const std::string member =
        "notes.txt/      0           0     0     644     6         `\nhello\n";
    binary("ar-no-elf", "!<arch>\n" + member);
    binary("ar-thin", "!<thin>\n" + member);
    binary("ar-bad-header", "!<arch>\n" + std::string(60, 'x'));
    std::string huge = member;
    huge.replace(48, 10, "9999999999");
    binary("ar-huge-member", "!<arch>\n" + huge);
  }

  fs::path root_;
  std::map<std::string, std::string> names_;
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
      // Invisible characters: a zero-width space, a byte order mark, a right-to-left
      // override (item 17: echoed as they were, "1\u200b" looked like "1").
      "1\xe2\x80\x8b",
      "\xef\xbb\xbf"
      "0",
      "0\xe2\x80\xae",
  };
  return values;
}

std::vector<Case> make_cases() {
  std::vector<Case> cases;
  auto add = [&](std::string name, std::vector<std::string> args, int code,
                 Driver driver = Driver::missing, std::map<std::string, std::string> env = {},
                 std::string json_key = "error") {
    cases.push_back(
        {std::move(name), std::move(args), code, driver, std::move(env), std::move(json_key)});
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
           // Issue 20, item 12: the one strict number parser (no hex, sign or blanks).
           {"compile", "--maxrregcount", "0x20", "--arch", "sm_90", "{cu}"},
           {"compile", "--maxrregcount", "+5", "--arch", "sm_90", "{cu}"},
           {"compile", "--maxrregcount", " 5", "--arch", "sm_90", "{cu}"},
           {"compile", "--maxrregcount", "1e2", "--arch", "sm_90", "{cu}"},
           {"compile", "--threads", "0x10", "--arch", "sm_90", "{cu}"},
           {"compile", "--threads", "+5", "--arch", "sm_90", "{cu}"},
           {"compile", "--threads", "0b11", "--arch", "sm_90", "{cu}"},
           {"compile", "--threads", "1048577", "--arch", "sm_90", "{cu}"},
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

  // kernels: files that are not CUDA binaries, or damaged ones. A file that cannot be
  // read at all, or files none of which holds CUDA code, is one line and exit 2 (the error
  // document under --json); an entry that cannot be read is one line after the listing,
  // exit 10, and under --json stdout is the listing (json_key "files").
  for (const std::string file : {"{missing}",
                                 "{dir}",
                                 "{fifo}",
                                 "/dev/zero",
                                 "/dev/null",
                                 "/dev/stdin",
                                 "/proc/self/status",
                                 "{empty}",
                                 "{binary}",
                                 "{text}",
                                 "{elf-truncated}",
                                 "{elf-shoff}",
                                 "{elf-shnum}",
                                 "{elf-shstrndx}",
                                 "{elf-shentsize}",
                                 "{elf-32}",
                                 "{elf-big-endian}",
                                 "{cubin-truncated}",
                                 "{fatbin-size}",
                                 "{fatbin-version}",
                                 "{fatbin-header-size}",
                                 "{fatbin-entry-header}",
                                 "{fatbin-entry-payload}",
                                 "{fatbin-arch}",
                                 "{fatbin-compressed-size}",
                                 "{fatbin-entry-truncated}",
                                 "{fatbin-trailing}",
                                 "{ar-bad-header}",
                                 "{ar-huge-member}",
                                 "{ar-thin}",
                                 "{root}/home-loop/.cuda-device",
                                 "{root}/esc\x1b]0;owned\x07-missing",
                                 "{root}/\xff\xfe-missing"})
    add("kernels file " + file, {"kernels", file}, 2);
  for (const std::string file : {"/bin/true", "{esc\x1b[31m-name}",
                                 "{zwsp\xe2\x80\x8b-rlo\xe2\x80\xae-name}", "{ar-no-elf}"})
    add("kernels listed file " + file, {"kernels", file}, 2);
  // A readable file with an entry that cannot be read: exit 10 (unreadable_entry), not usage.
  for (const std::string file : {"{zstd-bomb}", "{zstd-zero}", "{zstd-corrupt}", "{lz4-corrupt}",
                                 "{cubin-garbage}", "{real-zstd-bomb}", "{real-zstd-corrupt}"})
    add("kernels listed file " + file, {"kernels", file}, 10);
  // The same under --json, and next to a good file: an unreadable FILE stops the command.
  for (const std::string file :
       {"{missing}", "{fifo}", "{elf-shoff}", "{fatbin-size}", "{root}/\xff\xfe-missing"})
    add("kernels --json file " + file, {"kernels", "--json", file}, 2);
  for (const std::string file : {"{missing}", "{fifo}", "{text}"})
    add("kernels good and bad file " + file, {"kernels", "{cubin}", file}, 2);
  add("kernels --json listed file /bin/true", {"kernels", "--json", "/bin/true"}, 2);
  for (const std::string file : {"{zstd-bomb}", "{real-zstd-corrupt}"})
    add("kernels --json listed file " + file, {"kernels", "--json", file}, 10, Driver::missing, {},
        "files");
  // kernels' flags, on a real CUBIN (the flags are checked before it is read).
  for (const std::string arch :
       {"", "sm_", "banana", "sm_90x", "sm_90,", "sm_80,,sm_90", "SM_90", "sm_-90", "\x1b[31m\xff"})
    add("kernels --arch \"" + arch + "\"", {"kernels", "{cubin}", "--arch", arch}, 2);
  add("kernels --arch 300 characters", {"kernels", "{cubin}", "--arch", std::string(300, 's')}, 2);
  // Out of range, and the spellings CLI11's own conversion would take (both go through
  // base/numbers.hpp now).
  for (const std::string value :
       {"0", "-1", "1025", "abc", "", "0x10", "+1", " 1", "1e3", "99999999999999999999"}) {
    add("kernels --threads \"" + value + "\"", {"kernels", "{cubin}", "--threads", value}, 2);
    add("kernels --jobs \"" + value + "\"", {"kernels", "{cubin}", "--jobs", value}, 2);
  }
  for (const std::string column : {"colour", "", "NAME", "regs,name", "\x1b[2J"})
    add("kernels --sort \"" + column + "\"", {"kernels", "{cubin}", "--sort", column}, 2);
  for (const std::string regex : {"(", "[", "a{2,1}", "(?<n>x)", "*", "\\", "[\x1b"})
    add("kernels --kernel \"" + regex + "\"", {"kernels", "{cubin}", "--kernel", regex}, 2);
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"kernels"},
           {"kernels", "--json"},
           {"kernels", "{cubin}", "--sort", "occupancy"},
           {"kernels", "{cubin}", "--bogus"},
           {"kernels", "{cubin}", "--wide=maybe"},
           {"kernels", "{cubin}", "--threads"},
       })
    add("kernels flags " + std::to_string(cases.size()), args, 2);
  // Each kind of bad flag under --json: the error document on stdout.
  for (const auto& flag : std::vector<std::vector<std::string>>{{"--arch", "banana"},
                                                                {"--arch", "sm_90,"},
                                                                {"--arch", "\x1b[31m\xff"},
                                                                {"--threads", "0"},
                                                                {"--threads", "abc"},
                                                                {"--jobs", "-1"},
                                                                {"--jobs", "99999999999999999999"},
                                                                {"--sort", "colour"},
                                                                {"--sort", "occupancy"},
                                                                {"--kernel", "("},
                                                                {"--kernel", "[\xff"}}) {
    std::vector<std::string> args = {"kernels", "--json", "{cubin}"};
    args.insert(args.end(), flag.begin(), flag.end());
    add("kernels --json " + flag[0] + " \"" + flag[1] + "\"", args, 2);
  }

  // check: every value is checked before the driver is loaded (the driver is missing here,
  // which would be exit 3).
  for (const std::string& value : std::vector<std::string>{
           "", "abc", "-0.5", "0", "1.5", "1.0000001", "nan", "inf", "1e-3", "0x0.8", " 0.5",
           "+0.5", ".", "0,5", "\x1b[31m", std::string(5000, '9')})
    add("check --min-fraction \"" + value.substr(0, 20) + "\"",
        {"check", "--min-fraction=" + value}, 2);
  for (const char* flag : {"--min-d2h-gbps", "--min-d2d-gbps", "--min-peer-gbps"})
    add(std::string("check ") + flag + " \"-1\"", {"check", flag + std::string("=-1")}, 2);
  for (const std::string value :
       {"", "-1", "fast", "1e400", "nan", "inf", "0x10", "1e3", "5GB/s", "1000000001"})
    add("check --min-h2d-gbps \"" + value + "\"", {"check", "--min-h2d-gbps=" + value}, 2);
  for (const std::string& list :
       std::vector<std::string>{"gpu-burn", "", ",", "compute,", "compute,,memory", "COMPUTE",
                                "\x1b[2Jcompute", "\xff", std::string(300, 'c')})
    add("check --only \"" + list.substr(0, 20) + "\"", {"check", "--only", list}, 2);
  // --skip reads its list with the same parser: a few.
  for (const std::string list : {"bogus", "", "peer,", "\x1b[2J"})
    add("check --skip \"" + list + "\"", {"check", "--skip", list}, 2);
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"check", "--only", "compute", "--skip", "peer"},
           {"check", "--only", "compute", "--skip", "compute"},
           {"check", "--json", "--format", "text"},
           {"check", "--json", "--format", "prometheus"},
           {"check", "--format", "xml"},
           {"check", "--format", ""},
           {"check", "--format", "JSON"},
           {"check", "--min-cc", "banana"},
           {"check", "--min-cc", "9.0.0"},
           {"check", "--min-memory", "lots"},
           {"check", "--min-memory", "-5G"},
           {"check", "--min-count=-1"},
           {"check", "--expect-count", "-1"},
           {"check", "--expect-count", "2147483648"},
           {"check", "--device", ""},
           {"check", "--device", "\x1b]0;owned\x07"},
           {"check", "--device", "0", "--device", "abc"},
           {"check", "--strict=maybe"},
           {"check", "--max-used-memory", "lots"},
           {"check", "--max-used-memory", "-1G"},
           {"check", "--max-used-memory", "99999999999999999999"},
           {"check", "--max-used-memory", ""},
           {"check", "--require-idle=maybe"},
           {"check", "extra"},
           {"check", "--bogus"},
       })
    add("check flags " + std::to_string(cases.size()), args, 2);
  // A test hook: a build without them ignores the variable (no driver here: exit 3).
  for (const std::string fault : {"memory", "COMPUTE", "compute ", "\x1b[2J"})
    add("check CUDATOOL_CHECK_INJECT_FAULT=" + fault, {"check"},
        cudatool::test_hooks_enabled() ? 2 : 3, Driver::missing,
        {{"CUDATOOL_CHECK_INJECT_FAULT", fault}});
  // check under --json (or --format json): the error document on stdout.
  for (const auto& [args, code] : std::vector<std::pair<std::vector<std::string>, int>>{
           {{"check", "--json", "--only", "gpu-burn"}, 2},
           {{"check", "--json", "--skip", "\xff"}, 2},
           {{"check", "--json", "--min-fraction", "nan"}, 2},
           {{"check", "--json", "--min-peer-gbps", "-1"}, 2},
           {{"check", "--json", "--expect-count", "abc"}, 2},
           {{"check", "--json", "--min-count", "\xff"}, 2},
           {{"check", "--json", "--device", "\xff"}, 2},
           {{"check", "--format", "json", "--min-d2d-gbps", "fast"}, 2},
           {{"check", "--format", "json", "--only", "compute", "--skip", "peer"}, 2},
           {{"check"}, 3},
           {{"check", "--json"}, 3},
           {{"check", "--format", "json"}, 3},
           {{"check", "--format", "prometheus"}, 3},
           {{"check", "--device", "0"}, 3},
       })
    add("check json " + std::to_string(cases.size()), args, code);
  // With the fake driver: no device, or no such device, is exit 4; a driver that fails is
  // 5; one that is a stub or too old is 3.
  for (const auto& [args, code, env] :
       std::vector<std::tuple<std::vector<std::string>, int, std::map<std::string, std::string>>>{
           {{"check"}, 4, {{"FAKE_CUDA_DEVICES", ""}}},
           {{"check", "--json"}, 4, {{"FAKE_CUDA_DEVICES", ""}}},
           {{"check", "--format", "prometheus"}, 4, {{"FAKE_CUDA_DEVICES", ""}}},
           {{"check", "--device", "7"}, 4, {}},
           {{"check", "--json", "--device", "2"}, 4, {}},
           {{"check", "--device", "GPU-ffffffff"}, 4, {}},
           {{"check", "--device", "0", "--device", "9"}, 4, {}},
           {{"check"}, 4, {{"FAKE_CUDA_INIT_RESULT", "100"}}},
           {{"check"}, 5, {{"FAKE_CUDA_INIT_RESULT", "999"}}},
           {{"check", "--json"}, 5, {{"FAKE_CUDA_INIT_RESULT", "999"}}},
           {{"check"}, 3, {{"FAKE_CUDA_INIT_RESULT", "34"}}},
           {{"check", "--only", "identity"}, 3, {{"CUDATOOL_LIBCUDA", "{fake_old}"}}},
       }) {
    auto with_nvml_off = env;
    with_nvml_off["CUDATOOL_NO_NVML"] = "1";
    add("check fake " + std::to_string(cases.size()), args, code, Driver::fake, with_nvml_off);
  }
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
  for (const char* invisible : {"\xe2\x80\x8b", "\xef\xbb\xbf", "\xe2\x80\xae"})
    EXPECT_EQ(r.err.find(invisible), std::string::npos) << "an invisible character reached stderr";
  EXPECT_LT(r.err.size(), 2500u) << "an echoed value was not cut";
  EXPECT_EQ(r.err.find("Sanitizer"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("runtime error"), std::string::npos) << r.err;
  // Under --json every failure is a document on stdout, a command line that does not
  // parse included.
  const bool json = std::find(c.args.begin(), c.args.end(), "--json") != c.args.end();
  if (json) {
    EXPECT_FALSE(r.out.empty()) << "no document on stdout under --json";
  }
  if (json && !r.out.empty()) {
    // nlohmann's parser rejects invalid UTF-8: the document must be valid.
    EXPECT_NO_THROW({
      const auto doc = nlohmann::json::parse(r.out);
      if (c.json_key == "error")
        EXPECT_EQ(doc.at("error").at("exit_code"), c.exit_code);
      else
        EXPECT_TRUE(doc.contains(c.json_key)) << c.json_key;
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
    // The first failed write's reason, whenever it failed (--version and attrs had none).
    EXPECT_EQ(r.err, "cudatool: cannot write standard output: No space left on device\n");
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
    // Descriptor 1 is /dev/null opened read-only (main.cpp): writing it is EBADF.
    EXPECT_EQ(r.err, "cudatool: cannot write standard output: Bad file descriptor\n");
  }
}

TEST(OutputErrors, AFailedCommandKeepsItsOwnStatusAndLine) {
  // Its own status and its own line first; then that its JSON error document was lost too
  // (issue 39, 12: lost output is said whatever the status).
  ProcessOptions options = without_driver();
  options.stdout_path = "/dev/full";
  const auto r = run_cudatool({"devices", "--json"}, options);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(count_lines(r.err), 2) << r.err;
  EXPECT_EQ(r.err.rfind("cudatool: CUDA driver not found", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("\ncudatool: cannot write standard output: No space left on device\n"),
            std::string::npos)
      << r.err;
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

// A kernel name from the file reaches the terminal escaped, never as a control sequence;
// --json keeps it exact (JSON escapes it).
TEST(BadInputRegression, KernelNamesFromTheFileAreEscapedOnTheTerminal) {
  const std::string file = odd_files().expand("{cubin-escape-name}");
  const auto text = run_cudatool({"kernels", file}, without_driver());
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_EQ(text.out.find('\x1b'), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("s\\x1b[2J"), std::string::npos) << text.out;
  const auto json = run_cudatool({"kernels", "--json", file}, without_driver());
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto doc = nlohmann::json::parse(json.out);
  ASSERT_EQ(doc.at("kernels").size(), 1u);
  EXPECT_EQ(doc.at("kernels")[0].at("name"), "s\x1b[2J");
  const auto occupancy = run_cudatool(
      {"occupancy", "--kernel-from", file, "--kernel", "s", "--threads", "128"}, without_driver());
  ASSERT_EQ(occupancy.exit_code, 0) << occupancy.err;
  EXPECT_EQ(occupancy.out.find('\x1b'), std::string::npos) << occupancy.out;
}

// `--sweep` alone sweeps every block size; `--sweep ""` is a malformed list.
TEST(BadInputRegression, EmptySweepListIsAnError) {
  EXPECT_EQ(run_cudatool({"occupancy", "--arch", "sm_90", "--sweep"}).exit_code, 0);
  EXPECT_EQ(run_cudatool({"occupancy", "--arch", "sm_90", "--sweep", ""}).exit_code, 2);
}

// A thin archive (ar rcT) was "not a CUDA binary (neither ELF, a fatbin nor an ar
// archive)": the message that says what it is was unreachable (issue 20, item 18).
TEST(BadInputRegression, AThinArchiveIsNamedAsOne) {
  const auto r = run_cudatool({"kernels", odd_files().expand("{ar-thin}")}, without_driver());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(": a thin archive (its members are separate files): name the objects "
                       "instead at offset 0x0\n"),
            std::string::npos)
      << r.err;
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
