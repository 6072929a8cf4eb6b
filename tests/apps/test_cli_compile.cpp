// `cudatool compile` end to end: the real binary, its output, exit codes and cache, on
// this machine's NVRTC (no GPU needed; --load is covered by the GPU unit test).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "compile_corpus.hpp"
#include "process.hpp"

namespace cudatool::testing {
namespace {
namespace fs = std::filesystem;

class CliCompile : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = nvrtc_unavailable()) GTEST_SKIP() << *why;
    std::string pattern = (fs::temp_directory_path() / "cudatool-cli-compile-XXXXXX").string();
    dir_ = ::mkdtemp(pattern.data());
    cache_ = dir_ / "cache";
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }
  ProcessOptions options() const {
    ProcessOptions o;
    o.env["CUDATOOL_CACHE_DIR"] = cache_.string();
    o.env["CUDATOOL_DISABLE_CACHE"] = std::nullopt;
    o.env["CUDATOOL_DEFAULT_NVRTC_FLAGS"] = std::nullopt;
    o.env["CUDATOOL_LIBNVRTC"] = std::nullopt;
    return o;
  }
  std::string corpus(const std::string& name) const {
    return std::string(CUDATOOL_SOURCE_DIR) + "/tests/data/compile/" + name;
  }
  fs::path write(const std::string& name, const std::string& text) const {
    const fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p;
  }
  std::size_t entries() const {
    std::size_t n = 0;
    std::error_code ec;
    if (!fs::is_directory(cache_, ec)) return 0;
    for (const auto& e : fs::recursive_directory_iterator(cache_))
      n += e.path().extension() == ".entry";
    return n;
  }
  static std::size_t lines_with(const std::string& text, const std::string& needle) {
    std::size_t n = 0, pos = 0;
    while ((pos = text.find(needle, pos)) != std::string::npos) ++n, pos += needle.size();
    return n;
  }
  fs::path dir_, cache_;
};

TEST_F(CliCompile, ReportsEveryKernelsResourcesAsText) {
  const auto r = run_cudatool({"compile", corpus("multi.cu"), "--arch", "sm_90"}, options());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("multi.cu -> sm_90 cubin"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("num_regs"), std::string::npos);
  for (const char* k : {"fill", "histogram", "stencil", "dot_partial"})
    EXPECT_NE(r.out.find(k), std::string::npos) << k << "\n" << r.out;
  EXPECT_TRUE(r.err.empty()) << r.err;
}

TEST_F(CliCompile, JsonHasThePyCudaAttributeNamesAndTheCacheState) {
  const std::vector<std::string> args{"compile", corpus("templates.cu"), "--arch",
                                      "sm_90",   "--no-extern-c",        "--json"};
  auto r = run_cudatool(args, options());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["arch"], "sm_90");
  EXPECT_EQ(j["compiler"], "nvrtc");
  EXPECT_FALSE(j["cache"]["hit"].get<bool>());
  ASSERT_EQ(j["kernels"].size(), 4u);
  for (const auto& k : j["kernels"]) {
    for (const char* key : {"name", "demangled", "num_regs", "shared_size_bytes",
                            "local_size_bytes", "const_size_bytes", "max_threads_per_block"})
      EXPECT_TRUE(k.contains(key)) << key;
    EXPECT_EQ(k["name"].get<std::string>().rfind("_Z", 0), 0u);
    EXPECT_NE(k["demangled"].get<std::string>().find('<'), std::string::npos);
  }
  r = run_cudatool(args, options());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto hit = nlohmann::json::parse(r.out);
  EXPECT_TRUE(hit["cache"]["hit"].get<bool>());
  EXPECT_EQ(hit["kernels"], j["kernels"]);
  EXPECT_EQ(entries(), 1u);
}

TEST_F(CliCompile, ReadsStdin) {
  auto o = options();
  o.stdin_data = "__global__ void from_stdin(int* p) { *p = 3; }\n";
  const auto r = run_cudatool({"compile", "-", "--arch", "sm_80", "--json"}, o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["kernels"][0]["name"], "from_stdin");
}

TEST_F(CliCompile, WritesTheOutputAtomically) {
  const fs::path out = dir_ / "saxpy.cubin";
  auto r = run_cudatool(
      {"compile", corpus("saxpy.cu"), "--arch", "sm_90", "-o", out.string(), "--json"}, options());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(fs::exists(out));
  EXPECT_EQ(fs::file_size(out), j["size_bytes"].get<std::size_t>());
  EXPECT_EQ(read_file(out.string()).substr(0, 4),
            "\x7f"
            "ELF");
  for (const auto& e : fs::directory_iterator(dir_))
    EXPECT_EQ(e.path().string().find(".tmp."), std::string::npos) << e.path();
  const fs::path ptx = dir_ / "saxpy.ptx";
  r = run_cudatool({"compile", corpus("saxpy.cu"), "--arch", "sm_90", "--ptx", "-o", ptx.string()},
                   options());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(read_file(ptx.string()).find(".entry saxpy"), std::string::npos);
}

TEST_F(CliCompile, BadInputGetsOneClearLineAndTheDocumentedExitCode) {
  const fs::path empty = write("empty.cu", "  \n");
  const fs::path bad = write("bad.cu", "__global__ void k(int* p) {\n  *p = nope;\n}\n");
  const fs::path missing_dir_out = dir_ / "no" / "such" / "dir" / "k.cubin";
  struct Case {
    std::vector<std::string> args;
    int code;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"compile", (dir_ / "missing.cu").string(), "--arch", "sm_90"},
       2,
       "missing.cu\": cannot read"},
      {{"compile", dir_.string(), "--arch", "sm_90"}, 2, "is a directory"},
      {{"compile", empty.string(), "--arch", "sm_90"}, 2, "empty source"},
      {{"compile", bad.string(), "--arch", "sm_90"}, 6, "bad.cu(2): error"},
      {{"compile", corpus("saxpy.cu"), "--arch", "sm_90", "--frobnicate"}, 2, "--frobnicate"},
      {{"compile", corpus("saxpy.cu"), "--arch", "sm_13"}, 2, "compute capability 1.3"},
      {{"compile", corpus("saxpy.cu"), "--arch", "banana"}, 2, "expected sm_XX or compute_XX"},
      {{"compile", corpus("saxpy.cu"), "--arch", "sm_90", "--maxrregcount", "0"},
       2,
       "maxrregcount"},
      {{"compile", corpus("saxpy.cu"), "--arch", "sm_90", "-o", missing_dir_out.string()},
       2,
       "does not exist"},
      {{"compile", corpus("saxpy.cu"), "--arch", "compute_90", "--cubin"}, 2, "real architecture"},
      {{"compile", corpus("saxpy.cu"), "--arch", "sm_90", "--std", "c++03"}, 2, "--std"},
      {{"compile"}, 2, "no source given"},
  };
  for (const auto& c : cases) {
    std::string joined;
    for (const auto& a : c.args) joined += a + " ";
    SCOPED_TRACE(joined);
    const auto r = run_cudatool(c.args, options());
    EXPECT_EQ(r.exit_code, c.code) << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
    EXPECT_EQ(lines_with(r.err, "cudatool: "), 1u) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  EXPECT_FALSE(fs::exists(dir_ / "no"));
  EXPECT_EQ(entries(), 0u);  // nothing half-written into the cache either
}

TEST_F(CliCompile, ACompileErrorPrintsTheLogAndWithJsonItsFields) {
  const fs::path bad = write("broken.cu", "// one\n__global__ void k(int* p) { *p = nope; }\n");
  const fs::path out = dir_ / "broken.cubin";
  const auto r = run_cudatool(
      {"compile", bad.string(), "--arch", "sm_90", "-DWHY=1", "--json", "-o", out.string()},
      options());
  EXPECT_EQ(r.exit_code, 6);
  EXPECT_NE(r.err.find("broken.cu(2): error: identifier \"nope\" is undefined"), std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(out));
  const auto j = nlohmann::json::parse(r.out)["error"];
  EXPECT_EQ(j["status"], "compile_error");
  EXPECT_EQ(j["exit_code"], 6);
  EXPECT_NE(j["log"].get<std::string>().find("broken.cu(2)"), std::string::npos);
  EXPECT_NE(std::find(j["options"].begin(), j["options"].end(), "-DWHY=1"), j["options"].end());
  EXPECT_EQ(j["compiler_version"].get<std::string>().rfind("NVRTC ", 0), 0u);
}

TEST_F(CliCompile, WithoutNvrtcItSaysWhatToInstall) {
  auto o = options();
  o.env["CUDATOOL_LIBNVRTC"] = "/nonexistent/libnvrtc.so.13";
  const auto r = run_cudatool({"compile", corpus("saxpy.cu"), "--arch", "sm_90"}, o);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("NVRTC not found"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("install"), std::string::npos) << r.err;
  EXPECT_EQ(entries(), 0u);
}

TEST_F(CliCompile, TheBinaryDoesNotLinkNvrtc) {
  const auto r = run_process("/usr/bin/ldd", {CUDATOOL_BINARY});
  if (r.exit_code != 0) GTEST_SKIP() << "ldd failed: " << r.err;
  EXPECT_EQ(r.out.find("nvrtc"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("libcuda"), std::string::npos) << r.out;
}

TEST_F(CliCompile, ArchDefaultsToTheDevicesAndIsRequiredWithoutOne) {
  auto o = options();
  o.env["CUDATOOL_LIBCUDA"] = kMissingDriver;
  auto r = run_cudatool({"compile", corpus("saxpy.cu")}, o);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--arch is required"), std::string::npos) << r.err;
  auto fake = with_fake_driver({{"FAKE_CUDA_DEVICES", "8.6,9.0"}});
  fake.env.insert(o.env.begin(), o.env.end());
  fake.env["CUDATOOL_LIBCUDA"] = std::string(CUDATOOL_FAKE_LIBCUDA);
  r = run_cudatool({"compile", corpus("saxpy.cu"), "--json"}, fake);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["arch"], "sm_86");
  r = run_cudatool({"compile", corpus("saxpy.cu"), "--json", "--device", "1"}, fake);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["arch"], "sm_90");
}

TEST_F(CliCompile, ACorruptCacheEntryIsSilentlyRecompiled) {
  const std::vector<std::string> args{"compile", corpus("saxpy.cu"), "--arch", "sm_90", "--json"};
  auto r = run_cudatool(args, options());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string entry = nlohmann::json::parse(r.out)["cache_path"];
  std::ofstream(entry, std::ios::binary | std::ios::trunc)
      << "cudatool-cache 1\nsize 5\nsha256 00\n12345";
  r = run_cudatool(args, options());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  EXPECT_FALSE(nlohmann::json::parse(r.out)["cache"]["hit"].get<bool>());
  r = run_cudatool(args, options());
  EXPECT_TRUE(nlohmann::json::parse(r.out)["cache"]["hit"].get<bool>());
}

TEST_F(CliCompile, ACacheDirectoryThatIsAFileDegradesWithOneWarning) {
  std::ofstream(dir_ / "file") << "x";
  auto o = options();
  o.env["CUDATOOL_CACHE_DIR"] = (dir_ / "file").string();
  const auto r = run_cudatool({"compile", corpus("saxpy.cu"), "--arch", "sm_90"}, o);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(lines_with(r.err, "warning"), 1u) << r.err;
  EXPECT_NE(r.err.find("compiling without the cache"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("saxpy"), std::string::npos);
}

TEST_F(CliCompile, TheCacheCanBeDisabled) {
  auto o = options();
  o.env["CUDATOOL_DISABLE_CACHE"] = "1";
  EXPECT_EQ(run_cudatool({"compile", corpus("saxpy.cu"), "--arch", "sm_90"}, o).exit_code, 0);
  EXPECT_EQ(entries(), 0u);
  EXPECT_EQ(
      run_cudatool({"compile", corpus("saxpy.cu"), "--arch", "sm_90", "--no-cache"}, options())
          .exit_code,
      0);
  EXPECT_EQ(entries(), 0u);
  EXPECT_EQ(run_cudatool({"compile", corpus("saxpy.cu"), "--arch", "sm_90", "--cache-dir",
                          (dir_ / "flagged").string()},
                         options())
                .exit_code,
            0);
  EXPECT_TRUE(fs::exists(dir_ / "flagged" / "v1"));
}

TEST_F(CliCompile, EightProcessesCompilingTheSameSourceAllSucceedAndLeaveOneEntry) {
  const fs::path src =
      write("race.cu", "__global__ void race(float* p) { p[threadIdx.x] *= 2.0f; }\n");
  std::vector<ProcessResult> results(8);
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&, i] {
      results[i] = run_cudatool({"compile", src.string(), "--arch", "sm_90", "--json"}, options());
    });
  for (auto& t : threads) t.join();
  std::string image_size;
  for (const auto& r : results) {
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(r.err.empty()) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["kernels"][0]["name"], "race");
  }
  EXPECT_EQ(entries(), 1u);
  std::size_t files = 0;
  for (const auto& e : fs::recursive_directory_iterator(cache_)) files += e.is_regular_file();
  EXPECT_EQ(files, 1u);  // no temporary left behind
  const auto r = run_cudatool({"compile", src.string(), "--arch", "sm_90", "--json"}, options());
  EXPECT_TRUE(nlohmann::json::parse(r.out)["cache"]["hit"].get<bool>());
}

TEST_F(CliCompile, CacheStatsTrimAndClear) {
  for (const char* f : {"saxpy.cu", "multi.cu", "constant.cu"})
    ASSERT_EQ(run_cudatool({"compile", corpus(f), "--arch", "sm_90"}, options()).exit_code, 0);
  auto r = run_cudatool({"compile", "--cache-stats", "--json"}, options());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out)["cache"];
  EXPECT_EQ(j["entries"], 3);
  EXPECT_EQ(j["dir"], cache_.string());
  EXPECT_GT(j["bytes"].get<long>(), 3000);
  r = run_cudatool({"compile", "--cache-stats"}, options());
  EXPECT_NE(r.out.find("3 entries"), std::string::npos) << r.out;
  r = run_cudatool({"compile", "--cache-trim", "1", "--json"}, options());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["trimmed_entries"], 3);
  ASSERT_EQ(run_cudatool({"compile", corpus("saxpy.cu"), "--arch", "sm_90"}, options()).exit_code,
            0);
  r = run_cudatool({"compile", "--cache-clear", "--json"}, options());
  EXPECT_EQ(nlohmann::json::parse(r.out)["removed_entries"], 1);
  EXPECT_EQ(entries(), 0u);
  r = run_cudatool({"compile", "--cache-trim", "lots"}, options());
  EXPECT_EQ(r.exit_code, 2);
  r = run_cudatool({"compile", corpus("saxpy.cu"), "--cache-stats"}, options());
  EXPECT_EQ(r.exit_code, 2);
}

TEST_F(CliCompile, KeepSaysWhereTheIntermediatesAre) {
  auto o = options();
  o.env["TMPDIR"] = dir_.string();
  const auto r = run_cudatool({"compile", corpus("saxpy.cu"), "--arch", "sm_90", "--keep"}, o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string marker = "kept intermediate files in ";
  const auto pos = r.err.find(marker);
  ASSERT_NE(pos, std::string::npos) << r.err;
  const fs::path kept =
      r.err.substr(pos + marker.size(), r.err.find('\n', pos) - pos - marker.size());
  for (const char* f :
       {"saxpy.prepared.cu", "saxpy.ptx", "saxpy.cubin", "saxpy.options", "saxpy.log"})
    EXPECT_TRUE(fs::exists(kept / f)) << kept / f;
  EXPECT_NE(read_file((kept / "saxpy.prepared.cu").string()).find("extern \"C\" {"),
            std::string::npos);
}

TEST_F(CliCompile, ThreadsAddsOccupancyOnTheTarget) {
  auto r = run_cudatool(
      {"compile", corpus("launch_bounds.cu"), "--arch", "sm_90", "--threads", "128", "--json"},
      options());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The parsed document must outlive the loop (a range-for over a member of a temporary
  // reads freed memory).
  const nlohmann::json document = nlohmann::json::parse(r.out);
  for (const auto& k : document["kernels"]) {
    if (k["name"] == "bounded_128") {
      EXPECT_EQ(k["occupancy"]["threads"], 128);
      EXPECT_GT(k["occupancy"]["tb_per_mp"].get<int>(), 0);
    } else {
      EXPECT_NE(k["occupancy"]["error"].get<std::string>().find("max_threads_per_block 96"),
                std::string::npos);
    }
  }
  r = run_cudatool({"compile", corpus("saxpy.cu"), "--arch", "sm_90", "--threads", "256"},
                   options());
  EXPECT_NE(r.out.find("occupancy@256"), std::string::npos) << r.out;
  r = run_cudatool({"compile", corpus("saxpy.cu"), "--arch", "compute_90", "--threads", "256"},
                   options());
  EXPECT_EQ(r.exit_code, 2);
}

TEST_F(CliCompile, DefaultFlagsComeFromTheEnvironment) {
  const fs::path src = write("needs_flag.cu",
                             "#ifndef FROM_ENV\n#error FROM_ENV missing\n#endif\n"
                             "__global__ void k(int* p) { *p = FROM_ENV; }\n");
  EXPECT_EQ(run_cudatool({"compile", src.string(), "--arch", "sm_90"}, options()).exit_code, 6);
  auto o = options();
  o.env["CUDATOOL_DEFAULT_NVRTC_FLAGS"] = "-DFROM_ENV=5";
  const auto r = run_cudatool({"compile", src.string(), "--arch", "sm_90", "--json"}, o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["options"][0], "-DFROM_ENV=5");
}

TEST_F(CliCompile, NvccGivesTheSameResourcesAsNvrtc) {
  const std::vector<std::string> base{"compile", corpus("multi.cu"), "--arch",
                                      "sm_90",   "--json",           "--no-cache"};
  auto nvrtc = run_cudatool(base, options());
  ASSERT_EQ(nvrtc.exit_code, 0) << nvrtc.err;
  auto args = base;
  args.insert(args.end(), {"--compiler", "nvcc"});
  auto nvcc = run_cudatool(args, options());
  if (nvcc.exit_code == 3) GTEST_SKIP() << "nvcc not available: " << nvcc.err;
  ASSERT_EQ(nvcc.exit_code, 0) << nvcc.err;
  const auto a = nlohmann::json::parse(nvrtc.out), b = nlohmann::json::parse(nvcc.out);
  EXPECT_EQ(b["compiler"], "nvcc");
  EXPECT_EQ(a["kernels"], b["kernels"]);
}

}  // namespace
}  // namespace cudatool::testing
