// End-to-end tests of `cudatool kernels` through the real binary, on programs built with
// nvcc by tests/CMakeLists.txt (every compression mode, sm_80/sm_90/sm_100 and PTX, -dc,
// an executable, a shared library, a static archive): the kernel lists and values against
// cuobjdump --dump-resource-usage where it is on PATH, against hard facts of the source
// always, and every kind of bad input.
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "fatbin_builder.hpp"
#include "process.hpp"

using namespace cudatool::testing;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kFiles = {
    "none.o",       "zstd.o", "lz4.o",      "relocatable.o", "program",    "libkernels.so",
    "libkernels.a", "rdc.o",  "launcher.o", "librdc.so",     "rdc_program"};

// The -dc objects (alone or as archive members): no block reserve in their shared sizes yet.
bool relocatable_source(const std::string& file, const std::string& member) {
  for (const char* name : {"relocatable.o", "rdc.o", "launcher.o"})
    if (file == name || member == name) return true;
  return false;
}

std::string data(const std::string& name) {
  return std::string(CUDATOOL_KERNELS_DATA) + "/" + name;
}

bool have_data() {
  return fs::exists(data("libkernels.a"));
}

#define REQUIRE_DATA() \
  if (!have_data()) GTEST_SKIP() << "nvcc was not found at configure time: no test binaries"

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

json kernels_json(std::vector<std::string> args) {
  args.insert(args.begin(), "kernels");
  args.push_back("--json");
  const auto r = run_cudatool(args, without_driver());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(r.out);
}

// One kernel as both tools describe it.
using Row = std::tuple<std::string, std::string, std::string, int, int, int, int>;

// The program's path as the shell would find it on PATH, or "".
std::string on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  std::string dir;
  while (std::getline(dirs, dir, ':'))
    if (!dir.empty() && ::access((dir + "/" + program).c_str(), X_OK) == 0)
      return dir + "/" + program;
  return "";
}

std::string cuobjdump_path() {
  return on_path("cuobjdump");
}

// member, arch, name, regs, shared (less the 1 KiB block reserve that loadable sm_90+ images
// lay out in it; relocatable ones have none yet), stack (UNKNOWN: the driver's 0), const.
// Kernels only: cuobjdump lists device functions too, which have no parameter bank
// (CONSTANT[0]).
std::multiset<Row> from_cuobjdump(const std::string& output, const std::string& file) {
  std::multiset<Row> rows;
  std::stringstream in(output);
  std::string line, member, arch, function;
  bool elf = false;
  int const3 = 0;
  while (std::getline(in, line)) {
    if (line.rfind("member ", 0) == 0) {
      member = line.substr(line.rfind(':', line.size() - 2) + 1);
      member.pop_back();  // the trailing ':'
    } else if (line == "Fatbin elf code:") {
      elf = true;
      const3 = 0;
    } else if (line == "Fatbin ptx code:") {
      elf = false;
    } else if (line.rfind("arch = ", 0) == 0) {
      arch = line.substr(7);
    } else if (auto c = line.find("CONSTANT[3]:");
               c != std::string::npos && line.find("GLOBAL:") != std::string::npos) {
      const3 = std::stoi(line.substr(c + 12));
    } else if (line.rfind(" Function ", 0) == 0) {
      function = line.substr(10, line.size() - 11);
    } else if (elf && !function.empty() && line.find("REG:") != std::string::npos) {
      const auto field = [&](const std::string& name) {
        const auto at = line.find(" " + name + ":");
        return at == std::string::npos ? 0 : std::stoi(line.substr(at + name.size() + 2));
      };
      int shared = field("SHARED");
      const int sm = std::stoi(arch.substr(3));
      if (sm >= 90 && !relocatable_source(file, member)) shared -= std::min(shared, 1024);
      const int stack = line.find(" STACK:UNKNOWN") != std::string::npos ? 0 : field("STACK");
      if (line.find(" CONSTANT[0]:") != std::string::npos)
        rows.insert({member, arch, function, field("REG"), shared, stack, const3});
      function.clear();
    }
  }
  return rows;
}

std::multiset<Row> from_cudatool(const json& doc) {
  std::multiset<Row> rows;
  for (const auto& k : doc["kernels"])
    rows.insert({k["member"].is_null() ? "" : k["member"].get<std::string>(), k["arch"], k["name"],
                 k["num_regs"], k["shared_size_bytes"], k["local_size_bytes"],
                 k["const_size_bytes"]});
  return rows;
}

TEST(CliKernels, EqualsCuobjdumpOnEveryTestBinary) {
  REQUIRE_DATA();
  const std::string cuobjdump = cuobjdump_path();
  if (cuobjdump.empty())
    GTEST_SKIP() << "cuobjdump is not on PATH (tools/install-deps.sh installs it from pip)";
  for (const auto& file : kFiles) {
    const auto dump = run_process(cuobjdump, {"--dump-resource-usage", data(file)});
    ASSERT_EQ(dump.exit_code, 0) << dump.err;
    const auto expected = from_cuobjdump(dump.out, file);
    const auto actual = from_cudatool(kernels_json({data(file)}));
    EXPECT_GT(expected.size(), file == "launcher.o" ? 1u : 5u) << file;
    EXPECT_EQ(actual, expected) << file;
  }
}

// -dc objects are relocatable: marked, shared sizes without the reserve, no occupancy;
// undefined (launched-only) kernels are not listed. The device-linked library and
// executable: nvlink lays the reserve out without the .nv.shared.reserved.0 marker, and it
// is taken off; a stack nvlink cannot size is 0 with stack_unknown; a static kernel's
// __nv_static_ name demangles; the __nv_relfatbin leftovers are left out unless asked for.
TEST(CliKernels, RelocatableAndDeviceLinkedCodeIsExactAndTellsWhichItIs) {
  REQUIRE_DATA();
  const auto by_name = [](const json& doc, const std::string& arch) {
    std::map<std::string, json> kernels;
    for (const auto& k : doc["kernels"])
      if (k["arch"] == arch) kernels[k["demangled"].get<std::string>()] = k;
    return kernels;
  };
  const json rdc = kernels_json({data("rdc.o"), "--threads", "128"});
  for (const auto& i : rdc["images"])
    if (i["kind"] == "elf") {
      EXPECT_TRUE(i["relocatable"].get<bool>());
    }
  for (const std::string arch : {"sm_90", "sm_100"}) {
    const auto k = by_name(rdc, arch);
    ASSERT_EQ(k.size(), 7u) << arch;
    EXPECT_EQ(k.at("big_shared(float*)")["shared_size_bytes"], 32768);
    EXPECT_EQ(k.at("with_shared(float*)")["shared_size_bytes"], 1200);
    EXPECT_EQ(k.at("no_shared(float*)")["shared_size_bytes"], 0);
    for (const auto& [name, kernel] : k) {
      EXPECT_TRUE(kernel["relocatable"].get<bool>()) << name;
      EXPECT_TRUE(kernel["occupancy"]["tb_per_mp"].is_null()) << name;
      EXPECT_TRUE(contains(kernel["occupancy"]["reason"], "relocatable")) << name;
    }
  }
  const json launcher = kernels_json({data("launcher.o")});
  ASSERT_EQ(launcher["kernels"].size(), 2u);  // launcher, once per architecture
  for (const auto& k : launcher["kernels"]) EXPECT_EQ(k["name"], "_Z8launcherPi");
  for (const char* file : {"librdc.so", "rdc_program"}) {
    const json doc = kernels_json({data(file)});
    for (const std::string arch : {"sm_90", "sm_100"}) {
      const auto k = by_name(doc, arch);
      EXPECT_EQ(k.at("with_shared(float*)")["shared_size_bytes"], 1200) << file << " " << arch;
      EXPECT_EQ(k.at("dynamic_shared(float*)")["shared_size_bytes"], 0) << file;
      EXPECT_EQ(k.at("no_shared(float*)")["shared_size_bytes"], 0) << file;
      EXPECT_EQ(k.at("big_shared(float*)")["shared_size_bytes"], 32768) << file;
      EXPECT_EQ(k.at("recursive(int*)")["local_size_bytes"], 0) << file;
      EXPECT_TRUE(k.at("recursive(int*)")["stack_unknown"].get<bool>()) << file;
      EXPECT_FALSE(k.at("launched(int*)")["stack_unknown"].get<bool>()) << file;
      EXPECT_TRUE(k.count("launcher(int*)")) << file;
      const json& s = k.at("static_kernel(int*)");
      EXPECT_EQ(s["name"].get<std::string>().rfind("__nv_static_", 0), 0u) << s["name"];
      for (const auto& [name, kernel] : k) EXPECT_FALSE(kernel["relocatable"].get<bool>()) << name;
    }
    EXPECT_GT(doc["files"][0]["relocatable_leftovers_skipped"].get<int>(), 0) << file;
    std::size_t leftovers = 0;
    for (const auto& i : doc["images"])
      if (i["relocatable"].get<bool>()) {
        EXPECT_TRUE(i["skipped"].get<bool>());
        EXPECT_EQ(i["section"], "__nv_relfatbin");
        ++leftovers;
      }
    EXPECT_GT(leftovers, 0u) << file;
    // --relocatable lists them, marked, apart from the linked kernels.
    const json all = kernels_json({data(file), "--relocatable"});
    std::size_t relocatable = 0;
    for (const auto& k : all["kernels"]) relocatable += k["relocatable"].get<bool>();
    EXPECT_EQ(all["kernels"].size(), doc["kernels"].size() + relocatable) << file;
    EXPECT_GE(relocatable, 14u) << file;  // rdc.o's and launcher.o's, for both architectures
    const auto text =
        run_cudatool({"kernels", data(file), "--relocatable", "--wide"}, without_driver());
    EXPECT_EQ(text.exit_code, 0) << text.err;
    EXPECT_TRUE(contains(text.out, " sm_90 relocatable  (")) << text.out;
    EXPECT_TRUE(contains(text.out, "  [stack unknown")) << text.out;
    const auto plain = run_cudatool({"kernels", data(file)}, without_driver());
    EXPECT_TRUE(contains(plain.out, "relocatable leftover images in __nv_relfatbin not listed"))
        << plain.out;
    EXPECT_FALSE(contains(plain.out, " sm_90 relocatable  (")) << plain.out;
  }
}

// A library nobody here built, by another toolchain: NVIDIA's nvJPEG for CUDA 11 from PyPI
// (nvidia-nvjpeg-cu11, 2.7 MB), fetched at test time, against cuobjdump for every
// architecture cuobjdump 13 can select (sm_75 to sm_90). It cannot read the library's
// sm_35 to sm_70 images at all ("Support for 'sm_35' has been removed"): for those the
// test requires that every architecture's image lists the same kernels, and the values
// come from the same ELF records, read the same way, as on the architectures compared.
// Skips where pip cannot reach PyPI (CUDATOOL_TEST_OFFLINE=1 skips it too).
TEST(CliKernels, EqualsCuobjdumpOnACuda11LibraryFromPyPI) {
  const std::string cuobjdump = cuobjdump_path();
  if (cuobjdump.empty()) GTEST_SKIP() << "cuobjdump is not on PATH";
  if (std::getenv("CUDATOOL_TEST_OFFLINE")) GTEST_SKIP() << "CUDATOOL_TEST_OFFLINE is set";
  const std::string python = on_path("python3");
  if (python.empty()) GTEST_SKIP() << "no python3 on PATH to run pip";
  ProcessOptions bounded;
  bounded.timeout_seconds = 300;
  const std::string dir = std::string(CUDATOOL_KERNELS_DATA) + "/pypi";
  const std::string lib = dir + "/nvidia/nvjpeg/lib/libnvjpeg.so.11";
  if (!fs::exists(lib)) {
    const auto download = run_process(
        python,
        {"-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:", "--timeout", "30",
         "--retries", "1", "--platform", "manylinux2014_x86_64", "--python-version", "3.11", "-d",
         dir, "nvidia-nvjpeg-cu11==11.9.0.86"},
        bounded);
    if (download.exit_code != 0)
      GTEST_SKIP() << "pip could not fetch nvidia-nvjpeg-cu11: " << download.err;
    const auto unzip = run_process(
        python, {"-c",
                 "import glob, sys, zipfile; "
                 "zipfile.ZipFile(glob.glob(sys.argv[1] + '/nvidia_nvjpeg_cu11-*.whl')[0])"
                 ".extract('nvidia/nvjpeg/lib/libnvjpeg.so.11', sys.argv[1])",
                 dir});
    ASSERT_EQ(unzip.exit_code, 0) << unzip.err;
  }
  std::size_t compared = 0;
  for (const std::string arch : {"sm_75", "sm_80", "sm_86", "sm_89", "sm_90"}) {
    const auto dump = run_process(cuobjdump, {"--dump-resource-usage", "-arch", arch, lib});
    ASSERT_EQ(dump.exit_code, 0) << dump.err;
    const auto expected = from_cuobjdump(dump.out, "libnvjpeg.so.11");
    std::multiset<Row> actual;
    for (const Row& row : from_cudatool(kernels_json({lib, "--arch", arch})))
      if (std::get<1>(row) == arch) actual.insert(row);
    EXPECT_GT(expected.size(), 100u) << arch;
    EXPECT_EQ(actual, expected) << arch;
    compared += expected.size();
  }
  std::cout << "libnvjpeg.so.11 (CUDA 11, from PyPI): " << compared
            << " kernels equal to cuobjdump's on sm_75 to sm_90\n";
  // Every architecture's images (sm_35 to sm_90) list the same kernels.
  std::map<std::string, std::multiset<std::string>> names;
  const json all = kernels_json({lib});
  for (const auto& k : all["kernels"])
    names[k["arch"].get<std::string>()].insert(k["name"].get<std::string>());
  EXPECT_EQ(names.size(), 12u);
  for (const auto& [arch, list] : names) EXPECT_EQ(list, names["sm_90"]) << arch;
}

// CUDATOOL_TEST_SCAN_TRACE (bench/RESULTS.md's phases): one line on stderr naming the scan's
// steps in order, each at a time no earlier than the one before; nothing without it.
TEST(CliKernels, ScanTraceNamesItsStepsInOrder) {
  REQUIRE_DATA();
  ProcessOptions traced = without_driver();
  traced.env["CUDATOOL_TEST_SCAN_TRACE"] = "1";
  const auto r = run_cudatool({"kernels", "--json", data("libkernels.so")}, traced);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_match(
      r.err, m,
      std::regex(R"(kernels scan: \[ start@([0-9.]+)ms searched@([0-9.]+)ms )"
                 R"(fatbin-sections-read@([0-9.]+)ms jobs-built@([0-9.]+)ms )"
                 R"(repeats-found@([0-9.]+)ms first-job@([0-9.]+)ms jobs-done@([0-9.]+)ms )"
                 R"(done@([0-9.]+)ms \]\n)")))
      << r.err;
  for (std::size_t i = 2; i < m.size(); ++i)
    EXPECT_LE(std::stod(m[i - 1]), std::stod(m[i])) << r.err;
  const auto plain = run_cudatool({"kernels", "--json", data("libkernels.so")}, without_driver());
  EXPECT_EQ(plain.err, "");
  EXPECT_EQ(plain.out, r.out);
}

TEST(CliKernels, EveryCompressionModeAndContainerGivesTheSameKernels) {
  REQUIRE_DATA();
  const auto reference = from_cudatool(kernels_json({data("none.o")}));
  ASSERT_EQ(reference.size(), 7u + 8u + 8u) << "sm_80 has no cluster kernel";
  for (const char* file : {"zstd.o", "program", "libkernels.so"})
    EXPECT_EQ(from_cudatool(kernels_json({data(file)})), reference) << file;
  // The compression each file's entries carry.
  const auto compressions = [](const json& doc) {
    std::set<std::string> c;
    for (const auto& i : doc["images"]) c.insert(i["compression"]);
    return c;
  };
  EXPECT_EQ(compressions(kernels_json({data("none.o")})), std::set<std::string>{"none"});
  EXPECT_EQ(compressions(kernels_json({data("zstd.o")})), std::set<std::string>{"zstd"});
  EXPECT_EQ(compressions(kernels_json({data("lz4.o")})), std::set<std::string>{"lz4"});
  // LZ4 and zstd objects hold the same sm_90 and sm_100 kernels as the plain one.
  std::multiset<Row> plain;
  for (const auto& row : reference)
    if (std::get<1>(row) != "sm_80") plain.insert(row);
  EXPECT_EQ(from_cudatool(kernels_json({data("lz4.o")})), plain);
  // The archive: both members, the relocatable one from __nv_relfatbin.
  const json archive = kernels_json({data("libkernels.a")});
  std::set<std::string> sections, members;
  for (const auto& i : archive["images"])
    sections.insert(i["section"]), members.insert(i["member"]);
  EXPECT_EQ(sections, (std::set<std::string>{".nv_fatbin", "__nv_relfatbin"}));
  EXPECT_EQ(members, (std::set<std::string>{"lz4.o", "relocatable.o"}));
}

TEST(CliKernels, HardFactsOfTheSource) {
  REQUIRE_DATA();
  const json doc = kernels_json({data("none.o"), "--threads", "256"});
  std::map<std::pair<std::string, std::string>, json> by;
  for (const auto& k : doc["kernels"]) by[{k["arch"], k["name"]}] = k;
  for (const char* arch : {"sm_80", "sm_90", "sm_100"}) {
    SCOPED_TRACE(arch);
    const json& scale = by.at({arch, "_Z5scaleIfLi128EEvPT_i"});
    EXPECT_EQ(scale["demangled"], "void scale<float, 128>(float*, int)");
    EXPECT_EQ(scale["shared_size_bytes"], 128 * 4);
    EXPECT_EQ(by.at({arch, "_Z5scaleIdLi64EEvPT_i"})["shared_size_bytes"], 64 * 8);
    EXPECT_EQ(scale["launch_bounds_max_threads"], 256);
    EXPECT_EQ(scale["max_threads_per_block"], 256);
    EXPECT_EQ(scale["const_size_bytes"], 64 * 4);
    EXPECT_EQ(scale["num_barriers"], 1);
    EXPECT_EQ(scale["file"], data("none.o"));
    EXPECT_FALSE(scale["occupancy"]["tb_per_mp"].is_null());
    const json& dyn = by.at({arch, "_Z14dynamic_sharedPf"});
    EXPECT_EQ(dyn["max_threads_per_block"], 128);
    EXPECT_EQ(dyn["shared_size_bytes"], 0);  // dynamic shared memory is not static
    EXPECT_TRUE(dyn["occupancy"]["tb_per_mp"].is_null()) << "256 threads break its launch bounds";
    EXPECT_TRUE(contains(dyn["occupancy"]["reason"], "at most 128 threads"));
    const json& capped = by.at({arch, "_Z6cappedPf"});
    EXPECT_EQ(capped["max_registers"], 40);
    EXPECT_LE(capped["num_regs"].get<int>(), 40);
    EXPECT_GE(by.at({arch, "spill"})["local_size_bytes"].get<int>(), 256 * 4);
    EXPECT_EQ(by.at({arch, "spill"})["demangled"], "spill");
    EXPECT_EQ(by.count({arch, "_Z9clusteredPf"}), std::string(arch) == "sm_80" ? 0u : 1u);
  }
  EXPECT_EQ(by.at({"sm_90", "_Z9clusteredPf"})["cluster_dims"], json::array({2, 1, 1}));
  EXPECT_TRUE(by.at({"sm_90", "spill"})["cluster_dims"].is_null());
  bool ptx = false;
  for (const auto& i : doc["images"])
    if (i["kind"] == "ptx") ptx = i["arch"] == "compute_100";
  EXPECT_TRUE(ptx);
}

TEST(CliKernels, FiltersSortAndText) {
  REQUIRE_DATA();
  const json sm90 = kernels_json({data("zstd.o"), "--arch", "sm_90"});
  ASSERT_EQ(sm90["kernels"].size(), 8u);
  for (const auto& k : sm90["kernels"]) EXPECT_EQ(k["arch"], "sm_90");
  for (const auto& i : sm90["images"]) EXPECT_EQ(i["skipped"], i["arch"] != "sm_90");
  const json physics = kernels_json({data("zstd.o"), "--kernel", "physics::step<[0-9]>"});
  EXPECT_EQ(physics["kernels"].size(), 6u);  // demangled names match; 2 kernels x 3 arches
  const json mangled = kernels_json({data("zstd.o"), "--kernel", "^_Z5scale", "--arch", "sm_80"});
  EXPECT_EQ(mangled["kernels"].size(), 2u);

  auto r = run_cudatool({"kernels", data("none.o"), "--arch", "sm_90", "--sort", "regs"},
                        without_driver());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, data("none.o") + "  sm_90  (8 kernels, 1 image)")) << r.out;
  EXPECT_TRUE(contains(r.out, "[cluster 2x1x1]")) << r.out;
  EXPECT_LT(r.out.find("spill"), r.out.find("clustered(float*)")) << "32 registers before 8";
  r = run_cudatool({"kernels", data("none.o"), "--arch", "sm_90", "--threads", "128"},
                   without_driver());
  EXPECT_TRUE(contains(r.out, "blocks/SM  occupancy  limited by")) << r.out;
  r = run_cudatool({"kernels", data("none.o"), "--arch", "sm_100"}, without_driver());
  EXPECT_TRUE(contains(r.out, "compute_100  PTX only")) << r.out;
  // Issue 39 (also seen): nothing for --arch names the value and what the file holds.
  r = run_cudatool({"kernels", data("none.o"), "--arch", "sm_89"}, without_driver());
  EXPECT_TRUE(contains(r.out, "no kernels for --arch sm_89 (the files hold ")) << r.out;
  EXPECT_TRUE(contains(r.out, "sm_90")) << r.out;
}

// --json without --sort renders each image's kernels on the thread that read it; with
// --sort the document is built after the scan. Both must describe the same kernels, and
// the first must not depend on the number of threads.
TEST(CliKernels, JsonRenderedWhileReadingEqualsTheSortedDocument) {
  REQUIRE_DATA();
  const std::vector<std::vector<std::string>> variants = {
      {},
      {"--threads", "128"},
      {"--kernel", "physics|scale", "--threads", "96"},
      {"--arch", "sm_90"}};
  for (const std::string& file : kFiles) {
    for (const auto& extra : variants) {
      std::vector<std::string> args = {"kernels", data(file), "--json"};
      args.insert(args.end(), extra.begin(), extra.end());
      const auto with_jobs = [&](const std::string& jobs) {
        auto a = args;
        a.insert(a.end(), {"--jobs", jobs});
        const auto r = run_cudatool(a, without_driver());
        EXPECT_EQ(r.exit_code, 0) << file << ": " << r.err;
        return r.out;
      };
      const std::string one = with_jobs("1");
      EXPECT_EQ(one, with_jobs("5")) << file;
      auto sorted_args = args;
      sorted_args.insert(sorted_args.end(), {"--sort", "regs"});
      const auto sorted = run_cudatool(sorted_args, without_driver());
      ASSERT_EQ(sorted.exit_code, 0) << sorted.err;
      // Kernel names are unique within an image.
      const auto by_image_and_name = [](const json& doc) {
        std::map<std::pair<int, std::string>, json> kernels;
        for (const auto& k : doc["kernels"]) kernels[{k["image"].get<int>(), k["name"]}] = k;
        return kernels;
      };
      const json streamed = json::parse(one), built = json::parse(sorted.out);
      EXPECT_EQ(streamed["images"], built["images"]) << file;
      EXPECT_EQ(streamed["kernels"].size(), built["kernels"].size()) << file;
      EXPECT_EQ(by_image_and_name(streamed), by_image_and_name(built)) << file;
      // In image order, then the CUBIN's.
      int last = -1;
      for (const auto& k : streamed["kernels"]) {
        EXPECT_GE(k["image"].get<int>(), last);
        last = k["image"].get<int>();
      }
    }
  }
}

TEST(CliKernels, BadInputIsOneLineAndExit2) {
  REQUIRE_DATA();
  const std::string dir =
      (fs::temp_directory_path() / ("cudatool-kernels-" + std::to_string(::getpid()))).string();
  fs::create_directories(dir);
  const auto write = [&](const std::string& name, const std::string& bytes) {
    std::ofstream(dir + "/" + name, std::ios::binary) << bytes;
    return dir + "/" + name;
  };
  std::ifstream in(data("none.o"), std::ios::binary);
  const std::string object((std::istreambuf_iterator<char>(in)), {});
  std::string bomb = object;
  // The sm_80 entry of none.o claims zstd compression of a huge image.
  const std::string magic("\x50\xed\x55\xba", 4);
  const auto container = bomb.find(magic);
  ASSERT_NE(container, std::string::npos);
  const std::size_t entry = container + 16;
  bomb[entry + 41] = static_cast<char>(0x80);                                       // zstd
  bomb.replace(entry + 16, 4, std::string("\x00\x01\x00\x00", 4));                  // 256 bytes
  bomb.replace(entry + 56, 8, std::string("\x00\x00\x00\x00\x00\x01\x00\x00", 8));  // 1 TiB
  std::string corrupt = bomb;
  corrupt.replace(entry + 56, 8, std::string("\x00\x10\x00\x00\x00\x00\x00\x00", 8));  // 4 KiB
  const std::string fifo = dir + "/fifo";
  ::mkfifo(fifo.c_str(), 0600);
  struct Case {
    std::string path, message;
  };
  const std::vector<Case> cases = {
      {dir + "/missing.o", "no such file"},
      {write("empty.o", ""), "empty file"},
      {dir, "a directory"},
      {fifo, "a FIFO"},
      {write("text.o", "just some text, not a binary\n"), "not a CUDA binary"},
      {write("truncated.o", object.substr(0, object.size() / 2)), "past the end"},
      {write("bomb.o", bomb), "decompression bomb"},
      {write("corrupt.o", corrupt), "corrupt zstd"},
      {"/bin/sh", "no CUDA code"},
  };
  for (const Case& c : cases) {
    const auto r = run_cudatool({"kernels", c.path}, without_driver());
    // A readable file whose entry cannot be read is not a usage error: exit 10.
    const bool entry = contains(c.path, "bomb.o") || contains(c.path, "corrupt.o");
    EXPECT_EQ(r.exit_code, entry ? 10 : 2) << c.path << ": " << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    EXPECT_TRUE(contains(r.err, "cudatool: ")) << r.err;
    EXPECT_TRUE(contains(r.err, c.message)) << c.path << ": " << r.err;
  }
  // An entry that cannot be read does not hide the others.
  const json doc =
      json::parse(run_cudatool({"kernels", dir + "/bomb.o", "--json"}, without_driver()).out);
  EXPECT_EQ(doc["kernels"].size(), 16u);  // sm_90 and sm_100
  // Flags.
  for (const std::vector<std::string>& args : {std::vector<std::string>{"--arch", "banana"},
                                               {"--threads", "0"},
                                               {"--threads", "2048"},
                                               {"--sort", "colour"},
                                               {"--kernel", "(unclosed"},
                                               {"--sort", "occupancy"}}) {
    std::vector<std::string> full{"kernels", data("none.o")};
    full.insert(full.end(), args.begin(), args.end());
    const auto r = run_cudatool(full, without_driver());
    EXPECT_EQ(r.exit_code, 2) << args[0] << " " << args[1] << ": " << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
  }
  fs::remove_all(dir);
}

}  // namespace

namespace {

TEST(CliKernels, OccupancyTakesAKernelFromABinary) {
  REQUIRE_DATA();
  auto r = run_cudatool({"occupancy", "--kernel-from", data("none.o"), "--kernel", "scale<float",
                         "--arch", "sm_90", "--threads", "256", "--json"},
                        without_driver());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json doc = json::parse(r.out);
  EXPECT_EQ(doc["registers"], doc["kernel"]["num_regs"]);
  EXPECT_EQ(doc["shared_mem"], 512);
  EXPECT_EQ(doc["kernel"]["arch"], "sm_90");
  // Ambiguities and launch bounds are usage errors.
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--kernel", "scale<float", "--threads", "256"},
        {"--kernel", "scale", "--arch", "sm_90", "--threads", "256"},
        {"--kernel", "dynamic_shared", "--arch", "sm_90", "--threads", "256"},
        {"--kernel", "no_such_kernel", "--threads", "256"}}) {
    std::vector<std::string> full{"occupancy", "--kernel-from", data("none.o")};
    full.insert(full.end(), args.begin(), args.end());
    r = run_cudatool(full, without_driver());
    EXPECT_EQ(r.exit_code, 2) << args[1] << ": " << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
  }
}

// A launch the architecture cannot hold is refused before anything is printed: the text
// form printed its "Kernel ..." line on stdout, then failed (issue 21).
TEST(CliKernels, OccupancyOfAKernelPrintsNothingWhenTheLaunchCannotRun) {
  REQUIRE_DATA();
  for (const std::vector<std::string>& launch :
       {std::vector<std::string>{"--threads", "128", "--smem", "1G"},
        {"--sweep", "--smem", "300K"}}) {
    std::vector<std::string> args{"occupancy",   "--kernel-from", data("none.o"), "--kernel",
                                  "scale<float", "--arch",        "sm_90"};
    args.insert(args.end(), launch.begin(), launch.end());
    const auto r = run_cudatool(args, without_driver());
    EXPECT_EQ(r.exit_code, 2) << launch[0] << ": " << r.err;
    EXPECT_EQ(r.out, "") << launch[0];
    EXPECT_NE(r.err.find("opt-in maximum"), std::string::npos) << r.err;
  }
}

}  // namespace

namespace {

// std::regex recursed once per character of the name: both filters overflowed the stack
// (SIGSEGV, exit 139) on a 50,000-character kernel name. RE2 (issue 20, item 3).
TEST(CliKernels, TheNameFilterTakesAKernelNamedBy50000Characters) {
  REQUIRE_DATA();
  const std::string name(50000, 'k');
  auto r = run_cudatool({"kernels", data("long_name.cubin"), "--kernel", ".*", "--json"},
                        without_driver());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["kernels"][0]["name"], name);
  r = run_cudatool({"kernels", data("long_name.cubin"), "--kernel", "(k|x)*y"}, without_driver());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(contains(r.out, "kkkk")) << r.out.substr(0, 300);
  r = run_cudatool({"occupancy", "--kernel-from", data("long_name.cubin"), "--kernel", "^k+$",
                    "--threads", "128", "--json"},
                   without_driver());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["kernel"]["name"], name);
  // RE2's syntax: no lookaround, no backreferences; the error names RE2.
  r = run_cudatool({"kernels", data("long_name.cubin"), "--kernel", "(?=k)"}, without_driver());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "not a regular expression (RE2: ")) << r.err;
}

}  // namespace

namespace {

// `kernels big.so & truncate -s 100M big.so` died of SIGBUS (exit 135, no message). The
// file here is a fatbin of 8,000 copies of a real CUBIN, truncated while it is read; each
// run ends with the listing (the truncation came after) or one line and exit 2, and the
// truncation during the read says that the file changed (issue 20, item 1).
TEST(CliKernels, AFileTruncatedWhileReadIsOneLineAndExit2) {
  char pattern[] = "/tmp/cudatool-truncated-XXXXXX";
  const fs::path dir = ::mkdtemp(pattern);
  const std::string path = (dir / "big.fatbin").string();
  std::ifstream in(std::string(CUDATOOL_SOURCE_DIR) + "/fuzz/corpus/cubin/saxpy_sm_90.cubin",
                   std::ios::binary);
  const Bytes cubin{std::istreambuf_iterator<char>(in), {}};
  const Bytes one = entry({.payload = cubin});
  Bytes entries;
  for (int i = 0; i < 8000; ++i) entries.insert(entries.end(), one.begin(), one.end());
  Bytes file(16, 0);
  put<std::uint32_t>(file, 0, cudatool::kFatbinMagic);
  put<std::uint16_t>(file, 4, 1);
  put<std::uint16_t>(file, 6, 16);
  put<std::uint64_t>(file, 8, entries.size());
  file.insert(file.end(), entries.begin(), entries.end());
  const auto write = [&] {
    std::ofstream(path, std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char*>(file.data()),
               static_cast<std::streamsize>(file.size()));
  };
  write();
  auto start = std::chrono::steady_clock::now();
  const auto whole = run_cudatool({"kernels", path, "--jobs", "2"}, without_driver());
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  const auto took = std::chrono::steady_clock::now() - start;
  int changed = 0;
  for (const double fraction : {0.5, 0.3, 0.7, 0.2, 0.4, 0.6, 0.8, 0.1}) {
    write();
    ProcessResult r;
    std::thread reader([&] {
      r = run_cudatool({"kernels", path, "--jobs", "2"}, without_driver());
    });
    std::this_thread::sleep_for(
        std::chrono::duration_cast<std::chrono::microseconds>(took * fraction));
    ASSERT_EQ(::truncate(path.c_str(), 1 << 20), 0);
    reader.join();
    ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 2) << r.exit_code << ": " << r.err;
    if (r.exit_code == 2) {
      EXPECT_EQ(count_lines(r.err), 1) << r.err;
      EXPECT_TRUE(contains(r.err, "cudatool: " + path + ": ")) << r.err;
      changed += contains(r.err, ": the file changed while it was read (truncated or written to)");
    }
  }
  EXPECT_GT(changed, 0) << "no run was truncated while it read (" << took.count() << " ns a run)";
  fs::remove_all(dir);
}

}  // namespace

namespace {

// Out of memory printed "cudatool: std::bad_alloc" once per entry and exit 2, as if the file
// were corrupt (issue 20, item 11): now one line naming the file and the entry, exit 7. The
// binary runs under `ulimit -v` below one entry's size (not with AddressSanitizer, which reserves
// terabytes).
TEST(CliKernels, OutOfMemoryIsOneLineNamingTheEntryAndExit7) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "an address-space limit stops AddressSanitizer itself";
#endif
  const Bytes zeros(120u << 20, 0);  // under the per-entry cap of 128 MiB
  Bytes z(ZSTD_compressBound(zeros.size()));
  z.resize(ZSTD_compress(z.data(), z.size(), zeros.data(), zeros.size(), 1));
  std::vector<Bytes> entries;
  for (int i = 0; i < 8; ++i)
    entries.push_back(entry({.flags = 0x8011,
                             .payload = z,
                             .compressed_size = static_cast<std::uint32_t>(z.size()),
                             .decompressed_size = zeros.size()}));
  char pattern[] = "/tmp/cudatool-oom-XXXXXX";
  const fs::path dir = ::mkdtemp(pattern);
  const std::string path = (dir / "large.fatbin").string();
  const Bytes file = container(entries);
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(file.data()), static_cast<std::streamsize>(file.size()));
  ProcessOptions options = without_driver();
  options.timeout_seconds = 120;
  const auto r = run_process(
      "/bin/sh",
      {"-c", "ulimit -v 120000 && exec \"$0\" kernels \"$1\" --jobs 1", CUDATOOL_BINARY, path},
      options);
  EXPECT_EQ(r.exit_code, 7) << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_TRUE(r.err.starts_with("cudatool: " + path +
                                ": out of memory reading the sm_90 image at "
                                "offset 0x"))
      << r.err;
  EXPECT_TRUE(r.err.ends_with(" (125829120 bytes decompressed)\n")) << r.err;
  fs::remove_all(dir);
}

}  // namespace

namespace {

// --arch takes one value each time (a list is comma-separated): a FILE after it is a file.
TEST(CliKernels, ArchBeforeTheFileTakesOneValueAndRepeats) {
  REQUIRE_DATA();
  const auto one = run_cudatool({"kernels", "--arch", "sm_90", data("none.o")}, without_driver());
  EXPECT_EQ(one.exit_code, 0) << one.err;
  EXPECT_TRUE(contains(one.out, "  sm_90  (8 kernels, 1 image)")) << one.out;
  const json two = kernels_json({"--arch", "sm_90", "--arch", "sm_80", data("none.o")});
  std::set<std::string> archs;
  for (const auto& k : two["kernels"]) archs.insert(k["arch"]);
  EXPECT_EQ(archs, (std::set<std::string>{"sm_80", "sm_90"}));
}

}  // namespace
