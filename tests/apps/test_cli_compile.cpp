// `cudatool compile` end to end: the real binary, its output, exit codes and cache, on
// this machine's NVRTC (no GPU needed; --load is covered by the GPU unit test).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "compile_corpus.hpp"
#include "cudatool/base/sha256.hpp"
#include "cudatool/compile/compile_cache.hpp"
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
  EXPECT_EQ(j["engine"], "nvrtc");
  EXPECT_FALSE(j.contains("compiler")) << "removed in schema_version 3: engine holds it";
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

// Issue 39 (also seen): `-o -` wrote a file named "-", and -o /dev/stdout into a pipe failed
// with "No such file or directory" (its last link, "pipe:[N]", names no path).
TEST_F(CliCompile, OutputToStandardOutputReachesAPipe) {
  auto o = options();
  o.working_directory = dir_.string();
  for (const char* to : {"-", "/dev/stdout"}) {
    SCOPED_TRACE(to);
    const auto r =
        run_cudatool({"compile", corpus("saxpy.cu"), "--arch", "sm_90", "--ptx", "-o", to}, o);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find(".entry saxpy"), std::string::npos) << r.out.substr(0, 500);
    EXPECT_FALSE(fs::exists(dir_ / "-"));
  }
  const auto r =
      run_cudatool({"compile", corpus("saxpy.cu"), "--arch", "sm_90", "-o", "-", "--json"}, o);
  EXPECT_EQ(r.exit_code, 2) << r.err;
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
      {{"compile", corpus("saxpy.cu"), "--arch", "banana"},
       2,
       "--arch \"banana\": expected an architecture"},
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
  const std::string entry = nlohmann::json::parse(r.out)["cache"]["path"];
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
  EXPECT_TRUE(fs::exists(dir_ / "flagged" / "v2"));
}

// Issue 39, defect 15: a malformed setting of a cache that is off does not fail the compile;
// with the cache on it still is a usage error.
TEST_F(CliCompile, ASettingOfACacheThatIsOffIsNotRead) {
  auto o = options();
  o.env["CUDATOOL_CACHE_MAX_SIZE"] = "abc";
  const auto off =
      run_cudatool({"compile", corpus("saxpy.cu"), "--arch", "sm_90", "--no-cache"}, o);
  EXPECT_EQ(off.exit_code, 0) << off.err;
  o.env["CUDATOOL_DISABLE_CACHE"] = "1";
  const auto disabled = run_cudatool({"compile", corpus("saxpy.cu"), "--arch", "sm_90"}, o);
  EXPECT_EQ(disabled.exit_code, 0) << disabled.err;
  o.env["CUDATOOL_DISABLE_CACHE"] = std::nullopt;
  const auto on = run_cudatool({"compile", corpus("saxpy.cu"), "--arch", "sm_90"}, o);
  EXPECT_EQ(on.exit_code, 2);
  EXPECT_NE(on.err.find("CUDATOOL_CACHE_MAX_SIZE"), std::string::npos) << on.err;
}

// Issue 39, defect 5: libnvrtc installs its own SIGINT and SIGTERM handlers while its front
// end runs (they exit 4). A signal then must still end cudatool as the signal does: 128 + N
// for the shell.
TEST_F(CliCompile, ASignalWhileNvrtcsFrontEndRunsEndsTheRunAsTheSignalDoes) {
  std::string text;
  for (int i = 0; i < 160000; ++i)
    text += "template <int N> __device__ int f" + std::to_string(i) + "(int x) { return x * N + " +
            std::to_string(i) + "; }\n";
  text += "__global__ void slow_front_end(int* p) { p[0] = f1<3>(p[1]); }\n";
  const fs::path src = write("front_end.cu", text);
  const fs::path tmp = dir_ / "tmp";
  fs::create_directories(tmp);
  for (const int sig : {SIGINT, SIGTERM}) {
    SCOPED_TRACE(sig);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::setenv("TMPDIR", tmp.c_str(), 1);
      const int null = ::open("/dev/null", O_WRONLY);
      ::dup2(null, 1);
      ::dup2(null, 2);
      ::execl(CUDATOOL_BINARY, CUDATOOL_BINARY, "compile", src.c_str(), "--arch", "sm_90",
              "--compiler", "nvrtc", "--no-cache", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    // The front end takes seconds on this file (4 s on 2 idle CPUs); NVRTC has its handlers
    // in place from its first tenth of a second. The signal goes once libnvrtc is mapped in
    // the child and 300 ms more have passed (a fixed delay raced an idle machine's compile).
    const std::string maps = "/proc/" + std::to_string(pid) + "/maps";
    for (int waited = 0; waited < 1000; ++waited) {
      std::ifstream in(maps);
      const std::string text((std::istreambuf_iterator<char>(in)), {});
      if (text.find("libnvrtc") != std::string::npos) break;
      ::usleep(10000);
    }
    ::usleep(300000);
    ::kill(pid, sig);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    const int code = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
    EXPECT_EQ(code, 128 + sig) << "NVRTC's handler ran (it exits 4)";
    EXPECT_TRUE(fs::is_empty(tmp)) << "a temporary file was left";
  }
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
    EXPECT_EQ(j["kernels"][0]["name"], "_Z4racePf");  // a file has C++ linkage
    EXPECT_EQ(j["kernels"][0]["demangled"], "race(float*)");
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
  const auto r =
      run_cudatool({"compile", corpus("saxpy.cu"), "--arch", "sm_90", "--keep", "--extern-c"}, o);
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
      EXPECT_EQ(k["occupancy"]["reason"],
                "the kernel allows at most 96 threads per block (its launch bounds)");
    }
  }
  r = run_cudatool({"compile", corpus("saxpy.cu"), "--arch", "sm_90", "--threads", "256"},
                   options());
  EXPECT_NE(r.out.find("occupancy@256"), std::string::npos) << r.out;
  r = run_cudatool({"compile", corpus("saxpy.cu"), "--arch", "compute_90", "--threads", "256"},
                   options());
  EXPECT_EQ(r.exit_code, 2);
}

// sm_88 compiles, but the architecture table does not know the limits occupancy needs:
// each kernel's occupancy is null with the reason, not a guess.
TEST_F(CliCompile, ThreadsOnAnArchitectureWithUnknownLimitsGivesNoNumber) {
  const auto r = run_cudatool(
      {"compile", corpus("saxpy.cu"), "--arch", "sm_88", "--threads", "256", "--json"}, options());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json document = nlohmann::json::parse(r.out);
  ASSERT_FALSE(document["kernels"].empty());
  for (const auto& k : document["kernels"]) {
    EXPECT_TRUE(k["occupancy"]["tb_per_mp"].is_null());
    EXPECT_NE(k["occupancy"]["reason"].get<std::string>().find("occupancy on sm_88 is unknown"),
              std::string::npos);
  }
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
  EXPECT_EQ(b["engine"], "nvcc");
  EXPECT_EQ(a["kernels"], b["kernels"]);
}

// ---- Real files (issue 11): tests/data/compile/real, written as projects write them. ----

std::string nvcc_path() {
  const char* home = std::getenv("CUDA_HOME");
  const std::string path = std::string(home && *home ? home : "/usr/local/cuda") + "/bin/nvcc";
  return ::access(path.c_str(), X_OK) == 0 ? path : "";
}

std::vector<std::string> real_corpus() {
  std::vector<std::string> files;
  for (const auto& e :
       fs::directory_iterator(std::string(CUDATOOL_SOURCE_DIR) + "/tests/data/compile/real"))
    if (e.path().extension() == ".cu") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

TEST_F(CliCompile, EveryRealFileCompilesWithOnlyArchAndEqualsNvccsPtxasReport) {
  const std::string nvcc = nvcc_path();
  if (nvcc.empty()) GTEST_SKIP() << "nvcc is not installed";
  const std::map<std::string, std::string> engines = {
      {"cub_block.cu", "nvcc"},         {"dynamic_parallelism.cu", "nvcc"},
      {"grid_sync_cg.cu", "nvrtc"},     {"libcu_atomics.cu", "nvrtc"},
      {"stencil_templates.cu", "nvcc"}, {"vector_add_host.cu", "nvcc"}};
  const auto files = real_corpus();
  ASSERT_EQ(files.size(), engines.size());
  std::size_t kernels = 0;
  for (const auto& file : files) {
    const std::string name = fs::path(file).filename().string();
    SCOPED_TRACE(name);
    // One compile at a time (the machine may have two cores): cudatool's, then nvcc's.
    const auto r = run_cudatool({"compile", file, "--arch", "sm_90", "--json"}, options());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["engine"], engines.at(name)) << j["engine_reason"];
    const bool rdc = j["engine_reason"].get<std::string>().find("-rdc") != std::string::npos;
    EXPECT_EQ(rdc, name == "dynamic_parallelism.cu");
    std::vector<std::string> args{"-cubin", "-arch=sm_90", "-Xptxas", "-v"};
    if (rdc) args.push_back("-rdc=true");
    args.insert(args.end(), {"-o", (dir_ / (name + ".cubin")).string(), file});
    const auto reference = run_process(nvcc, args);
    ASSERT_EQ(reference.exit_code, 0) << reference.err;
    const auto report = parse_ptxas_report(reference.out + reference.err);
    ASSERT_EQ(j["kernels"].size(), report.size()) << reference.err;
    for (const auto& k : j["kernels"]) {
      const std::string mangled = k["name"];
      EXPECT_EQ(mangled.rfind("_Z", 0), 0u) << mangled;  // C++ linkage
      EXPECT_NE(k["demangled"].get<std::string>().find('('), std::string::npos);
      const auto it = report.find(mangled);
      ASSERT_NE(it, report.end()) << mangled << "\n" << reference.err;
      EXPECT_EQ(k["num_regs"], it->second.registers) << mangled;
      EXPECT_EQ(k["shared_size_bytes"], it->second.shared) << mangled;
      EXPECT_EQ(k["local_size_bytes"], it->second.stack_frame) << mangled;
      ++kernels;
    }
  }
  EXPECT_GE(kernels, 13u);
}

TEST_F(CliCompile, ACacheHitOnAFileIncludingCubIsAHitAndAChangedHeaderIsNot) {
  const fs::path header = write("tile.h", "#define ITEMS 4\n");
  const fs::path src =
      write("sorter.cu",
            "#include <cub/block/block_radix_sort.cuh>\n#include \"tile.h\"\n"
            "__global__ void sorter(unsigned* k) {\n"
            "  using S = cub::BlockRadixSort<unsigned, 64, ITEMS>;\n"
            "  __shared__ typename S::TempStorage t;\n  unsigned v[ITEMS];\n"
            "  for (int i = 0; i < ITEMS; ++i) v[i] = k[threadIdx.x * ITEMS + i];\n"
            "  S(t).Sort(v);\n  __shared__ unsigned pad[ITEMS * 64];\n"
            "  pad[threadIdx.x] = v[0];\n  __syncthreads();\n"
            "  v[0] += pad[(threadIdx.x + 1) % 64];\n"
            "  for (int i = 0; i < ITEMS; ++i) k[threadIdx.x * ITEMS + i] = v[i];\n}\n");
  const std::vector<std::string> args{"compile", src.string(), "--arch", "sm_90", "--json"};
  auto r = run_cudatool(args, options());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_FALSE(j["cache"]["hit"].get<bool>());
  EXPECT_EQ(j["includes"], nlohmann::json::array({header.string()}));
  r = run_cudatool(args, options());
  j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j["cache"]["hit"].get<bool>());
  const int shared = j["kernels"][0]["shared_size_bytes"];
  std::ofstream(header) << "#define ITEMS 8\n";
  r = run_cudatool(args, options());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_FALSE(j["cache"]["hit"].get<bool>());
  EXPECT_NE(j["kernels"][0]["shared_size_bytes"].get<int>(), shared);
}

TEST_F(CliCompile, TheEngineCanBeForcedAndConflictsAreRefused) {
  const std::string host =
      std::string(CUDATOOL_SOURCE_DIR) + "/tests/data/compile/real/vector_add_host.cu";
  auto r = run_cudatool({"compile", host, "--arch", "sm_90", "--compiler", "nvrtc"}, options());
  EXPECT_EQ(r.exit_code, 6);
  EXPECT_NE(r.err.find("hint: NVRTC cannot open <"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--compiler nvcc"), std::string::npos) << r.err;
  r = run_cudatool(
      {"compile", corpus("saxpy.cu"), "--arch", "sm_90", "--compiler", "nvrtc", "-Xnvcc", "-O3"},
      options());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--compiler nvrtc runs NVRTC"), std::string::npos) << r.err;
  r = run_cudatool({"compile", corpus("saxpy.cu"), "--arch", "sm_90", "--compiler", "nvcc",
                    "-Xnvrtc", "-default-device"},
                   options());
  EXPECT_EQ(r.exit_code, 2);
  // NVRTC honours -rdc: no conflict, and the options say so.
  r = run_cudatool(
      {"compile", corpus("saxpy.cu"), "--arch", "sm_90", "--compiler", "nvrtc", "-rdc", "--json"},
      options());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["engine"], "nvrtc");
  const auto opts = j["options"].get<std::vector<std::string>>();
  EXPECT_NE(std::find(opts.begin(), opts.end(), "-rdc=true"), opts.end());
  r = run_cudatool({"compile", corpus("saxpy.cu"), "--arch", "sm_90", "-G", "-lineinfo",
                    "--use_fast_math", "-Xptxas", "-v", "--json"},
                   options());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  j = nlohmann::json::parse(r.out);
  for (const char* o : {"-G", "-lineinfo", "--use_fast_math", "--ptxas-options=-v"})
    EXPECT_NE(j["options"].dump().find(o), std::string::npos) << o;
  // Which NVRTC ran and where ptxas' report went, so that a failure on another host says
  // why (issue 39: an empty log on a GPU host with CUDA 13.0).
  EXPECT_NE(j["log"].get<std::string>().find("Used "), std::string::npos)
      << "log " << j["log"] << "; engine " << j["engine"] << " " << j["compiler_version"]
      << "; options " << j["options"] << "; stderr: " << r.err;
}

TEST_F(CliCompile, ErrorsSayWhatToDo) {
  auto o = options();
  o.stdin_data = "#include <cuda/std/array>\n__global__ void k(int* p) { p[0] = 1; }\n";
  auto r = run_cudatool({"compile", "-", "--arch", "sm_90"}, o);
  EXPECT_EQ(r.exit_code, 6);
  EXPECT_NE(r.err.find("hint: the extern \"C\" { } wrap"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--no-extern-c"), std::string::npos) << r.err;
  r = run_cudatool({"compile", "-", "--arch", "sm_90", "--no-extern-c"}, o);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const fs::path host_fn =
      write("host_fn.cu",
            "__global__ void k(float* p) { p[0] = 1; }\nvoid go(float* p) { k<<<1, 1>>>(p); }\n");
  r = run_cudatool({"compile", host_fn.string(), "--arch", "sm_90", "--compiler", "nvrtc"},
                   options());
  EXPECT_EQ(r.exit_code, 6);
  EXPECT_NE(r.err.find("hint: NVRTC compiles device code only"), std::string::npos) << r.err;
  // Without --compiler the same file is host code: nvcc compiles it.
  r = run_cudatool({"compile", host_fn.string(), "--arch", "sm_90", "--json"}, options());
  if (r.exit_code != 3) {
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(nlohmann::json::parse(r.out)["engine"], "nvcc");
  }
  const fs::path launcher = write("launcher.cu",
                                  "__global__ void child(int* p) { p[threadIdx.x] = 1; }\n"
                                  "__global__ void parent(int* p) { child<<<1, 32>>>(p); }\n");
  r = run_cudatool({"compile", launcher.string(), "--arch", "sm_90", "--compiler", "nvrtc"},
                   options());
  EXPECT_EQ(r.exit_code, 6);
  EXPECT_NE(r.err.find("relocatable device code: add -rdc"), std::string::npos) << r.err;
  r = run_cudatool({"compile", launcher.string(), "--arch", "sm_90", "--json"}, options());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(nlohmann::json::parse(r.out)["engine_reason"].get<std::string>().find("-rdc added"),
            std::string::npos);
}

TEST_F(CliCompile, SeveralArchitecturesGiveOneTablePerArchitecture) {
  auto r = run_cudatool(
      {"compile", corpus("multi.cu"), "--arch", "sm_80,sm_90,sm_100", "--threads", "256", "--json"},
      options());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["targets"].size(), 3u);
  EXPECT_EQ(j["targets"][0]["arch"], "sm_80");
  EXPECT_EQ(j["targets"][2]["arch"], "sm_100");
  for (const auto& t : j["targets"])
    for (const auto& k : t["kernels"]) EXPECT_TRUE(k["occupancy"].contains("occupancy")) << k;
  r = run_cudatool({"compile", corpus("multi.cu"), "--arch", "sm_80,sm_90"}, options());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(lines_with(r.out, "num_regs"), 2u) << r.out;
  EXPECT_NE(r.out.find("-> sm_80 cubin"), std::string::npos);
  EXPECT_NE(r.out.find("-> sm_90 cubin"), std::string::npos);
  for (const char* bad : {"sm_80,,sm_90", "sm_80,sm_9x", "sm_80,sm_30", ","}) {
    r = run_cudatool({"compile", corpus("saxpy.cu"), "--arch", bad}, options());
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_EQ(lines_with(r.err, "cudatool: "), 1u) << r.err;
    EXPECT_NE(r.err.find("--arch"), std::string::npos) << r.err;
  }
  r = run_cudatool(
      {"compile", corpus("saxpy.cu"), "--arch", "sm_80,sm_90", "-o", (dir_ / "x.cubin").string()},
      options());
  EXPECT_EQ(r.exit_code, 2);
}

TEST_F(CliCompile, BuildDirTakesTheProjectsFlagsFromCompileCommands) {
  const std::string nvcc = nvcc_path();
  if (nvcc.empty()) GTEST_SKIP() << "nvcc is not installed";
  const fs::path project = dir_ / "project";
  fs::create_directories(project / "include");
  std::ofstream(project / "include" / "tile.h") << "#pragma once\nconstexpr int kTile = TILE;\n";
  std::ofstream(project / "tiles.cu")
      << "#include \"tile.h\"\n#ifndef FROM_CMAKE\n#error FROM_CMAKE missing\n#endif\n"
         "__global__ void tiles(float* p) {\n  __shared__ float t[kTile];\n"
         "  t[threadIdx.x] = p[threadIdx.x];\n  __syncthreads();\n"
         "  p[threadIdx.x] = t[(threadIdx.x + 1) % kTile];\n}\n";
  std::ofstream(project / "CMakeLists.txt")
      << "cmake_minimum_required(VERSION 3.20)\nproject(tiles LANGUAGES CUDA)\n"
         "set(CMAKE_EXPORT_COMPILE_COMMANDS ON)\nset(CMAKE_CUDA_ARCHITECTURES 80 90)\n"
         "add_library(tiles STATIC tiles.cu)\n"
         "target_include_directories(tiles PRIVATE include)\n"
         "target_compile_definitions(tiles PRIVATE TILE=96 FROM_CMAKE)\n"
         "target_compile_features(tiles PRIVATE cuda_std_17)\n";
  ProcessOptions env;
  env.env["CUDACXX"] = nvcc;
  const auto configured = run_process(
      "/usr/bin/env", {"cmake", "-S", project.string(), "-B", (dir_ / "build").string()}, env);
  if (configured.exit_code != 0) GTEST_SKIP() << "cmake could not configure: " << configured.err;
  auto r = run_cudatool(
      {"compile", (project / "tiles.cu").string(), "-p", (dir_ / "build").string(), "--json"},
      options());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["targets"].size(), 2u) << j;
  EXPECT_EQ(j["targets"][0]["arch"], "sm_80");
  EXPECT_EQ(j["targets"][1]["arch"], "sm_90");
  for (const auto& t : j["targets"]) EXPECT_EQ(t["kernels"][0]["shared_size_bytes"], 96 * 4);
  // --arch still chooses.
  r = run_cudatool({"compile", (project / "tiles.cu").string(), "-p", (dir_ / "build").string(),
                    "--arch", "sm_90", "--json"},
                   options());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["arch"], "sm_90");
  // Bad databases.
  fs::create_directories(dir_ / "empty");
  fs::create_directories(dir_ / "garbage");
  std::ofstream(dir_ / "garbage" / "compile_commands.json") << "{ not json";
  struct Case {
    std::string dir, file, message;
  };
  for (const auto& c : std::vector<Case>{
           {(dir_ / "empty").string(), (project / "tiles.cu").string(), "no compile_commands.json"},
           {(dir_ / "garbage").string(), (project / "tiles.cu").string(), "not JSON"},
           {(dir_ / "build").string(), corpus("saxpy.cu"), "no entry for"}}) {
    r = run_cudatool({"compile", c.file, "-p", c.dir, "--arch", "sm_90"}, options());
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
    EXPECT_EQ(lines_with(r.err, "cudatool: "), 1u) << r.err;
  }
}

// ---- Cache entries that are not what they seem (issue 13, items 2-4). ----

class CliCompileCache : public CliCompile {
 protected:
  std::string entry_of(const std::string& file) {
    const auto r = run_cudatool({"compile", corpus(file), "--arch", "sm_90", "--json"}, options());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out)["cache"]["path"];
  }
  nlohmann::json compile_json(const std::string& file) {
    const auto r = run_cudatool({"compile", corpus(file), "--arch", "sm_90", "--json"}, options());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(r.err.empty()) << r.err;
    return nlohmann::json::parse(r.out);
  }
  static std::string key_of_path(const std::string& path) { return fs::path(path).stem().string(); }
};

TEST_F(CliCompileCache, DamagedEntriesAreRemovedAndRecompiledSilently) {
  const std::string entry = entry_of("saxpy.cu");
  const std::string key = key_of_path(entry);
  const std::string good = read_file(entry);
  const std::vector<std::string> damaged = {
      // a 30-digit size line
      "cudatool-cache 2\nkey " + key + "\nsize 123456789012345678901234567890\nsha256 " +
          sha256_hex("x") + "\nx",
      // a valid checksum over a payload that is not a compile result
      format_cache_entry(key, "not a payload"),
      // a valid checksum over a well-formed payload whose image is not a CUBIN
      format_cache_entry(key,
                         [&] {
                           const auto payload = *parse_cache_entry(good, key);
                           const auto newline = payload.find('\n');
                           const auto length = std::stoul(std::string(payload.substr(0, newline)));
                           return std::string(payload.substr(0, newline + 1 + length)) +
                                  "\x7f"
                                  "ELF not a cubin";
                         }()),
  };
  for (const auto& bytes : damaged) {
    std::ofstream(entry, std::ios::binary | std::ios::trunc) << bytes;
    auto j = compile_json("saxpy.cu");
    EXPECT_FALSE(j["cache"]["hit"].get<bool>());
    EXPECT_EQ(j["kernels"][0]["name"], "saxpy");
    EXPECT_EQ(read_file(entry), good);  // healed: the next run is a hit
    EXPECT_TRUE(compile_json("saxpy.cu")["cache"]["hit"].get<bool>());
  }
  // A directory in the entry's place.
  fs::remove(entry);
  fs::create_directories(fs::path(entry) / "inside");
  EXPECT_FALSE(compile_json("saxpy.cu")["cache"]["hit"].get<bool>());
  EXPECT_TRUE(fs::is_regular_file(entry));
  EXPECT_TRUE(compile_json("saxpy.cu")["cache"]["hit"].get<bool>());
  // A FIFO in the entry's place does not block.
  fs::remove(entry);
  ASSERT_EQ(::mkfifo(entry.c_str(), 0644), 0);
  EXPECT_FALSE(compile_json("saxpy.cu")["cache"]["hit"].get<bool>());
  EXPECT_TRUE(fs::is_regular_file(entry));
}

TEST_F(CliCompileCache, AnEntryCopiedOverAnotherIsNotTrusted) {
  const std::string saxpy = entry_of("saxpy.cu");
  const std::string multi = entry_of("multi.cu");
  fs::copy_file(saxpy, multi, fs::copy_options::overwrite_existing);
  const auto j = compile_json("multi.cu");
  EXPECT_FALSE(j["cache"]["hit"].get<bool>());
  EXPECT_EQ(j["kernels"].size(), 4u);
  EXPECT_NE(j["kernels"].dump().find("histogram"), std::string::npos);
}

TEST_F(CliCompileCache, ClearTrimAndStatsTouchOnlyEntriesAndFollowNoLink) {
  const fs::path important = dir_ / "important";
  fs::create_directories(important / "ab");
  std::ofstream(important / "keep.txt") << "precious";
  std::ofstream(important / "ab" / (std::string(64, 'a') + ".entry")) << "precious too";
  // v2 itself is a link to a directory of other data.
  fs::create_directories(cache_);
  fs::create_directory_symlink(important, cache_ / "v2");
  auto r = run_cudatool({"compile", "--cache-clear", "--json"}, options());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["removed_entries"], 0);
  EXPECT_TRUE(fs::exists(important / "keep.txt"));
  EXPECT_TRUE(fs::exists(important / "ab" / (std::string(64, 'a') + ".entry")));
  r = run_cudatool({"compile", "--cache-stats", "--json"}, options());
  EXPECT_EQ(nlohmann::json::parse(r.out)["cache"]["entries"], 0);
  // A store replaces the link by a directory and writes nothing into its target.
  const std::string entry = entry_of("saxpy.cu");
  EXPECT_FALSE(fs::is_symlink(cache_ / "v2"));
  EXPECT_EQ(std::distance(fs::directory_iterator(important), fs::directory_iterator()), 2);
  // A two-digit directory that is a link: not followed by a store either.
  const std::string sub = fs::path(entry).parent_path().filename();
  fs::remove_all(cache_ / "v2" / sub);
  fs::create_directory_symlink(important, cache_ / "v2" / sub);
  EXPECT_FALSE(compile_json("saxpy.cu")["cache"]["hit"].get<bool>());
  EXPECT_FALSE(fs::is_symlink(cache_ / "v2" / sub));
  EXPECT_EQ(std::distance(fs::directory_iterator(important), fs::directory_iterator()), 2);
  // An entry that is a link to a file: removed, its target untouched.
  fs::remove(entry);
  fs::create_symlink(important / "keep.txt", entry);
  EXPECT_FALSE(compile_json("saxpy.cu")["cache"]["hit"].get<bool>());
  EXPECT_EQ(read_file((important / "keep.txt").string()), "precious");
  // Files that are not entries stay.
  std::ofstream(cache_ / "v2" / sub / "notes.txt") << "mine";
  r = run_cudatool({"compile", "--cache-clear", "--json"}, options());
  EXPECT_EQ(nlohmann::json::parse(r.out)["removed_entries"], 1);
  EXPECT_TRUE(fs::exists(cache_ / "v2" / sub / "notes.txt"));
  r = run_cudatool({"compile", "--cache-trim", "0", "--json"}, options());
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(fs::exists(cache_ / "v2" / sub / "notes.txt"));
}

// ---- Sources and environments that are not what they seem (issue 13, items 8, 11, 14). ----

TEST_F(CliCompile, ANulOr0xFFByteIsRefusedInsteadOfTruncatingTheSource) {
  for (const char byte : {'\0', '\xff'}) {
    std::string text = "__global__ void first(int* p) { *p = 1; }\n// x";
    text += byte;
    text += "\n__global__ void second(int* p) { *p = 2; }\n";
    const fs::path src = dir_ / "odd.cu";
    std::ofstream(src, std::ios::binary | std::ios::trunc) << text;
    const auto r = run_cudatool({"compile", src.string(), "--arch", "sm_90"}, options());
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find(byte == '\0' ? "byte 0x00 at line 2" : "byte 0xFF at line 2"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(lines_with(r.err, "cudatool: "), 1u);
  }
}

TEST_F(CliCompile, AFileNameWithANewlineOr0xFFStillCompiles) {
  for (const std::string& name : {std::string("new\nline.cu"), std::string("latin\xff.cu")}) {
    const fs::path src = dir_ / name;
    fs::copy_file(corpus("saxpy.cu"), src, fs::copy_options::overwrite_existing);
    for (const char* engine : {"nvrtc", "nvcc"}) {
      const auto r = run_cudatool(
          {"compile", src.string(), "--arch", "sm_90", "--compiler", engine, "--no-cache"},
          options());
      if (r.exit_code == 3 && std::string(engine) == "nvcc") continue;
      EXPECT_EQ(r.exit_code, 0) << engine << ": " << r.err;
      EXPECT_NE(r.out.find("saxpy"), std::string::npos) << r.out;
    }
  }
}

TEST_F(CliCompile, ExitCodeFiveIsOnlyForTheDriver) {
  auto o = options();
  o.env["TMPDIR"] = "/nonexistent";
  auto r = run_cudatool({"compile", corpus("saxpy.cu"), "--arch", "sm_90", "--keep"}, o);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("TMPDIR=/nonexistent"), std::string::npos) << r.err;
  r = run_cudatool(
      {"compile", corpus("saxpy.cu"), "--arch", "sm_90", "--compiler", "nvcc", "--no-cache"}, o);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  o = options();
  o.env["CUDATOOL_NVCC"] = "/bin/true";
  r = run_cudatool(
      {"compile", corpus("saxpy.cu"), "--arch", "sm_90", "--compiler", "nvcc", "--no-cache"}, o);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("wrote no cubin"), std::string::npos) << r.err;
  EXPECT_EQ(lines_with(r.err, "cudatool: "), 1u) << r.err;
}

TEST_F(CliCompile, AHomeThatDoesNotExistIsNotCreated) {
  auto o = options();
  const fs::path home = dir_ / "nonexistent dir";
  o.env["CUDATOOL_CACHE_DIR"] = std::nullopt;
  o.env["XDG_CACHE_HOME"] = std::nullopt;
  o.env["HOME"] = home.string();
  const auto r = run_cudatool({"compile", corpus("saxpy.cu"), "--arch", "sm_90", "--json"}, o);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // cudatool creates nothing under it (on the GPU machine the CUDA libraries themselves
  // made HOME for their own files, so the check is on cudatool's cache directory).
  EXPECT_FALSE(fs::exists(home / ".cache" / "cudatool"));
  EXPECT_NE(r.err.find("cudatool: note: compile cache off: HOME="), std::string::npos) << r.err;
  EXPECT_FALSE(nlohmann::json::parse(r.out)["cache"]["enabled"].get<bool>());
}

// ---- Real projects (issue 19) and a hostile or unlucky user (issue 20). ----

// The kernels of a `cudatool kernels --json` or `compile --json` document: name -> registers.
std::map<std::string, int> kernel_registers(const nlohmann::json& j) {
  std::map<std::string, int> out;
  const nlohmann::json* list = &j["kernels"];
  nlohmann::json gathered = nlohmann::json::array();
  if (!j.contains("kernels"))
    for (const auto& image : j["images"])
      for (const auto& k : image["kernels"]) gathered.push_back(k);
  if (!j.contains("kernels")) list = &gathered;
  for (const auto& k : *list) out[k["name"].get<std::string>()] = k["num_regs"].get<int>();
  return out;
}

// compile_commands.json for one file, with `arguments` between "nvcc" and "-c FILE".
void write_database(const fs::path& build, const std::string& directory, const std::string& file,
                    const std::vector<std::string>& arguments) {
  fs::create_directories(build);
  nlohmann::json args = nlohmann::json::array({"nvcc"});
  for (const auto& a : arguments) args.push_back(a);
  args.push_back("-c");
  args.push_back(file);
  nlohmann::json entry = {{"directory", directory}, {"file", file}, {"arguments", args}};
  std::ofstream(build / "compile_commands.json") << nlohmann::json::array({entry}).dump();
}

// Issue 21: an entry's targets are checked as their own, not as --arch: one outside the
// grammar is refused when the entry is read, one CUDA 13 cannot compile where it would be
// used (no --arch given), each naming the database and the entry.
TEST_F(CliCompile, ProjectTargetsAreRefusedNamingTheEntryNotArch) {
  const fs::path src = write("k.cu", "__global__ void k(int* p) { *p = 1; }\n");
  const std::string database = (dir_ / "build" / "compile_commands.json").string();
  struct Case {
    std::string arch, message;
  };
  for (const auto& c : std::vector<Case>{
           {"-arch=sm_52", ": target sm_52: compute capability 5.2 is not supported by CUDA 13"},
           {"-arch=sm_9x", ": -arch \"sm_9x\": expected an architecture such as sm_90"}}) {
    SCOPED_TRACE(c.arch);
    write_database(dir_ / "build", dir_.string(), src.string(), {c.arch});
    const auto r =
        run_cudatool({"compile", src.string(), "-p", (dir_ / "build").string()}, options());
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find(database + ": the entry for \"" + src.string() + "\"" + c.message),
              std::string::npos)
        << r.err;
    EXPECT_EQ(r.err.find("--arch"), std::string::npos) << r.err;
    EXPECT_EQ(lines_with(r.err, "cudatool: "), 1u) << r.err;
  }
}

// Issue 19: a project built with nvcc's --extended-lambda / --expt-relaxed-constexpr (every
// cuda-samples entry has the first) compiles under nvcc, which the engine reason names;
// NVRTC 13 refuses both options ("unrecognized option", exit 6 before).
TEST_F(CliCompile, NvccOnlyProjectFlagsMakeNvccTheEngine) {
  if (nvcc_path().empty()) GTEST_SKIP() << "nvcc is not installed";
  const fs::path src =
      write("lambda.cu",
            "template <class F> __device__ int apply(F f, int x) { return f(x); }\n"
            "__global__ void lambda_kernel(int* p) {\n"
            "  p[0] = apply([] __device__(int v) { return v + 1; }, p[0]);\n}\n");
  for (const std::string flag : {"--extended-lambda", "--expt-relaxed-constexpr"}) {
    SCOPED_TRACE(flag);
    std::vector<std::string> args{flag};
    if (flag != "--extended-lambda") args.push_back("--extended-lambda");
    write_database(dir_ / "build", dir_.string(), src.string(), args);
    const auto r = run_cudatool(
        {"compile", src.string(), "-p", (dir_ / "build").string(), "--arch", "sm_90", "--json"},
        options());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["engine"], "nvcc");
    EXPECT_NE(j["engine_reason"].get<std::string>().find("NVRTC has no equivalent"),
              std::string::npos)
        << j["engine_reason"];
    EXPECT_EQ(j["kernels"][0]["name"], "_Z13lambda_kernelPi");
  }
}

// Issue 19: nvcc compiles the file where it is, so a static kernel under -rdc gets the
// __nv_static_<hash>_ name of the user's own nvcc build (the hash comes from the file's
// real path), the same on every cold compile.
TEST_F(CliCompile, StaticKernelsUnderRdcHaveTheNamesOfTheUsersBuild) {
  const std::string nvcc = nvcc_path();
  if (nvcc.empty()) GTEST_SKIP() << "nvcc is not installed";
  fs::create_directories(dir_ / "src");
  const fs::path src = dir_ / "src" / "statics.cu";
  std::ofstream(src) << "static __global__ void hidden(int* p) { p[0] = 1; }\n"
                        "namespace { __global__ void unnamed(int* p) { p[1] = 2; } }\n"
                        "__global__ void launcher(int* p) { hidden<<<1, 1>>>(p); "
                        "unnamed<<<1, 1>>>(p); }\n";
  const fs::path reference = dir_ / "reference.cubin";
  ASSERT_EQ(run_process(nvcc, {"-cubin", "-arch=sm_90", "-rdc=true", src.string(), "-o",
                               reference.string()})
                .exit_code,
            0);
  const auto ref = run_cudatool({"kernels", reference.string(), "--json"}, options());
  ASSERT_EQ(ref.exit_code, 0) << ref.err;
  const auto expected = kernel_registers(nlohmann::json::parse(ref.out));
  ASSERT_EQ(expected.size(), 3u);
  for (int run = 0; run < 2; ++run) {
    const auto r = run_cudatool(
        {"compile", src.string(), "--rdc", "--arch", "sm_90", "--no-cache", "--json"}, options());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["engine"], "nvcc") << j["engine_reason"];
    EXPECT_EQ(kernel_registers(j), expected) << j["kernels"];
  }
}

// Issue 19: a -rdc CUBIN with an uninitialized __device__ array has a .nv.global section
// (type 0x70000007) that is a size with no bytes in the file; it was read as contents and
// the compile refused ("runs past the end of its data"), under both engines. One of 137
// cuda-samples entries (binomialOptions_kernel.cu) has one.
TEST_F(CliCompile, RelocatableCodeWithUninitializedDeviceGlobalsIsRead) {
  const fs::path src = write("globals.cu",
                             "__device__ float table[1024];\n"
                             "__global__ void use_table(float* p) { p[threadIdx.x] = "
                             "table[threadIdx.x]; }\n");
  for (const char* engine : {"nvrtc", "nvcc"}) {
    SCOPED_TRACE(engine);
    const auto r = run_cudatool({"compile", src.string(), "--arch", "sm_90", "--rdc", "--compiler",
                                 engine, "--no-cache", "--json"},
                                options());
    if (r.exit_code == 3 && std::string(engine) == "nvcc") continue;
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(nlohmann::json::parse(r.out)["kernels"][0]["name"], "_Z9use_tablePf");
  }
}

// Issue 19: the file's own folder comes first for "..." includes (cuda-samples'
// simpleCallback.cu includes its own multithreading.h, and Common/ has another), under
// both engines.
TEST_F(CliCompile, TheFilesOwnFolderComesFirstForQuotedIncludes) {
  fs::create_directories(dir_ / "sample");
  fs::create_directories(dir_ / "Common");
  std::ofstream(dir_ / "sample" / "helper.h") << "#define HELPER_VALUE 7\n";
  std::ofstream(dir_ / "Common" / "helper.h") << "#error the shared helper.h was taken\n";
  const fs::path src = dir_ / "sample" / "sample.cu";
  std::ofstream(src) << "#include \"helper.h\"\n"
                        "__global__ void own_folder(int* p) { p[0] = HELPER_VALUE; }\n";
  for (const char* engine : {"nvrtc", "nvcc"}) {
    SCOPED_TRACE(engine);
    const auto r = run_cudatool({"compile", src.string(), "-I", (dir_ / "Common").string(),
                                 "--arch", "sm_90", "--compiler", engine, "--no-cache"},
                                options());
    if (r.exit_code == 3 && std::string(engine) == "nvcc") continue;
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("own_folder"), std::string::npos) << r.out;
  }
}

// Issue 20, item 5: a compilation database (or a command line, or a directory name) must
// never make nvcc's shell run a command. Every field with each payload: refused with one
// line naming the entry and the value, or compiled with nothing run. The marker is what
// `touch` would create in nvcc's working directory.
TEST_F(CliCompile, ACompilationDatabaseNeverRunsACommand) {
  if (nvcc_path().empty()) GTEST_SKIP() << "nvcc is not installed";
  const fs::path work = dir_ / "work";
  fs::create_directories(work);
  const fs::path marker = work / "pwned";
  const std::vector<std::string> payloads = {";touch pwned;", "&&touch pwned&&",
                                             "|touch pwned|", "$(touch pwned)",
                                             "`touch pwned`", "\ntouch pwned\n"};
  auto o = options();
  o.working_directory = work.string();
  std::size_t refused = 0, compiled = 0;
  for (std::size_t i = 0; i < payloads.size(); ++i) {
    const std::string& payload = payloads[i];
    const fs::path project = dir_ / ("project" + std::to_string(i));
    fs::create_directories(project / "inc");
    const fs::path src = project / "host.cu";
    std::ofstream(src) << "#include <cstdio>\n__global__ void host_kernel(int* p) { p[0] = 1; }\n";
    struct Field {
      std::string name;
      std::vector<std::string> args;
      std::string directory;
    };
    for (const auto& f : std::vector<Field>{
             {"-D", {"-DX=" + payload}, project.string()},
             {"-I", {"-I" + (project / "inc").string() + payload}, project.string()},
             {"-Xptxas", {"-Xptxas", "-v" + payload}, project.string()},
             {"directory", {"-Iinc"}, project.string() + payload},
         }) {
      SCOPED_TRACE(f.name + " " + payload);
      write_database(project / "build", f.directory, src.string(), f.args);
      const auto r = run_cudatool({"compile", src.string(), "-p", (project / "build").string(),
                                   "--arch", "sm_90", "--no-cache"},
                                  o);
      EXPECT_FALSE(fs::exists(marker)) << "a command ran: " << r.err;
      fs::remove(marker);
      if (r.exit_code == 2) {
        ++refused;
        EXPECT_EQ(count_lines(r.err), 1) << r.err;
        EXPECT_NE(r.err.find("the entry for"), std::string::npos) << r.err;
        EXPECT_NE(r.err.find(f.name), std::string::npos) << r.err;
      } else {
        ++compiled;
        // Inside nvcc's double quotes ; && | are text: the entry compiles (an -I that does
        // not exist is no error; a macro nobody uses neither).
        EXPECT_EQ(r.exit_code, 0) << r.err;
        EXPECT_EQ(payload.find_first_of("$`\n"), std::string::npos);
      }
    }
  }
  // -D, -I and directory refuse $( ` and a newline; -Xptxas (bare) refuses all six.
  EXPECT_EQ(refused, 3u * 3 + 6);
  EXPECT_EQ(compiled, 3u * 3);
  // The same through the command line and a source directory whose name holds backquotes.
  const fs::path odd = dir_ / "src`touch pwned`";
  fs::create_directories(odd);
  std::ofstream(odd / "k.cu") << "#include <cstdio>\n__global__ void k(int* p) { p[0] = 1; }\n";
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"compile", write("k.cu", "__global__ void k(int* p) { *p = 1; }\n").string(), "-D",
            "X=$(touch pwned)", "--compiler", "nvcc"},
           {"compile", write("k2.cu", "__global__ void k(int* p) { *p = 1; }\n").string(),
            "-Xptxas", "-v;touch pwned", "--compiler", "nvcc"},
           {"compile", (odd / "k.cu").string()}}) {
    auto full = args;
    full.insert(full.end(), {"--arch", "sm_90", "--no-cache"});
    const auto r = run_cudatool(full, o);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find("/bin/sh"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(marker)) << "a command ran: " << r.err;
  }
}

// Issue 20, item 16: SIGINT or SIGTERM while nvcc runs reaches nvcc's process group, the
// temporary directory goes, and cudatool exits 128 + N. The "nvcc" here starts a
// grandchild and waits, as nvcc waits for cicc and ptxas.
TEST_F(CliCompile, ASignalDuringAnNvccCompileStopsNvccCleansUpAndExits128PlusN) {
  const fs::path tmp = dir_ / "tmp";
  fs::create_directories(tmp);
  const fs::path pid_file = dir_ / "grandchild.pid";
  const fs::path fake = write("fake-nvcc",
                              "#!/bin/sh\n"
                              "if [ \"$1\" = --version ]; then\n"
                              "  echo 'Cuda compilation tools, release 13.0, V13.0.88'; exit 0\n"
                              "fi\n"
                              "sleep 60 &\necho $! > '" +
                                  pid_file.string() +
                                  ".tmp'\n"
                                  "mv '" +
                                  pid_file.string() + ".tmp' '" + pid_file.string() +
                                  "'\n"
                                  "wait\n");
  fs::permissions(fake, fs::perms::owner_all);
  const fs::path src = write("slow.cu", "__global__ void slow(int* p) { *p = 1; }\n");
  for (const int sig : {SIGINT, SIGTERM}) {
    SCOPED_TRACE(sig);
    fs::remove(pid_file);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::setenv("CUDATOOL_NVCC", fake.c_str(), 1);
      ::setenv("TMPDIR", tmp.c_str(), 1);
      const int null = ::open("/dev/null", O_WRONLY);
      ::dup2(null, 1);
      ::dup2(null, 2);
      ::execl(CUDATOOL_BINARY, CUDATOOL_BINARY, "compile", src.c_str(), "--arch", "sm_90",
              "--compiler", "nvcc", "--no-cache", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    for (int i = 0; i < 400 && !fs::exists(pid_file); ++i) ::usleep(25000);
    ASSERT_TRUE(fs::exists(pid_file));
    ::kill(pid, sig);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 128 + sig);
    EXPECT_TRUE(fs::is_empty(tmp)) << "a temporary directory was left";
    pid_t grandchild = 0;
    std::ifstream(pid_file) >> grandchild;
    ASSERT_GT(grandchild, 0);
    EXPECT_TRUE(wait_until_gone(grandchild)) << "nvcc's child " << grandchild << " still runs";
  }
}

// Issue 20, item 7: -o writes through a symbolic link, a dangling one included (its
// target is created, the link stays), and a file it replaces keeps its mode.
TEST_F(CliCompile, OutputWritesThroughLinksAndKeepsTheFilesMode) {
  const fs::path target = dir_ / "target.cubin";
  const fs::path link = dir_ / "link.cubin";
  fs::create_symlink("target.cubin", link);
  auto r = run_cudatool({"compile", corpus("saxpy.cu"), "--arch", "sm_90", "-o", link.string()},
                        options());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::is_symlink(link));
  ASSERT_TRUE(fs::is_regular_file(target));
  EXPECT_EQ(read_file(target.string()).substr(1, 3), "ELF");
  const fs::path private_file = write("private.cubin", "old");
  ::chmod(private_file.c_str(), 0600);
  r = run_cudatool({"compile", corpus("saxpy.cu"), "--arch", "sm_90", "-o", private_file.string()},
                   options());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  struct stat info {};
  ASSERT_EQ(::stat(private_file.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);
  EXPECT_EQ(read_file(private_file.string()).substr(1, 3), "ELF");
}

// Issue 20, item 10: stdin is bounded like every input (and /dev/zero, all NUL bytes, is
// refused at once); before, `compile - < /dev/zero` read until memory ran out.
TEST_F(CliCompile, StdinIsBounded) {
  ProcessOptions o = options();
  o.timeout_seconds = 60;
  const auto r = run_process(
      "/bin/sh",
      {"-c", std::string("exec '") + CUDATOOL_BINARY + "' compile - --arch sm_90 < /dev/zero"}, o);
  ASSERT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("0x00"), std::string::npos) << r.err;
}

// Issue 20, item 6: an entry someone else could have written is not used (one warning),
// and the compile gives the source's own figures.
TEST_F(CliCompile, AnEntryWritableByOthersIsNotTrusted) {
  auto r = run_cudatool({"compile", corpus("saxpy.cu"), "--arch", "sm_90", "--json"}, options());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto first = nlohmann::json::parse(r.out);
  const std::string entry = first["cache"]["path"];
  ::chmod(entry.c_str(), 0666);
  r = run_cudatool({"compile", corpus("saxpy.cu"), "--arch", "sm_90", "--json"}, options());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto second = nlohmann::json::parse(r.out);
  EXPECT_FALSE(second["cache"]["hit"].get<bool>());
  EXPECT_EQ(second["kernels"], first["kernels"]);
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("writable by others"), std::string::npos) << r.err;
}

// Issue 20, item 14: a relative XDG_CACHE_HOME is ignored (XDG Base Directory spec).
TEST_F(CliCompile, ARelativeXdgCacheHomeIsIgnored) {
  auto o = options();
  o.env["CUDATOOL_CACHE_DIR"] = std::nullopt;
  o.env["XDG_CACHE_HOME"] = "relative-cache";
  o.env["HOME"] = dir_.string();
  o.working_directory = dir_.string();
  const auto r = run_cudatool({"compile", corpus("saxpy.cu"), "--arch", "sm_90", "--json"}, o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["cache"]["dir"], (dir_ / ".cache" / "cudatool").string());
  EXPECT_FALSE(fs::exists(dir_ / "relative-cache"));
}

}  // namespace
}  // namespace cudatool::testing
