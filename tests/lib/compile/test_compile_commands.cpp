// compile_commands.json entries read as nvcc's command lines (compile -p BUILD_DIR), on
// databases written here as CMake and hand-written builds write them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "cudatool/base/arch.hpp"
#include "cudatool/base/error.hpp"
#include "cudatool/compile/compile_commands.hpp"

namespace cudatool {
namespace {
namespace fs = std::filesystem;

class CompileCommands : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "cudatool-ccdb-XXXXXX").string();
    dir_ = ::mkdtemp(pattern.data());
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path dir_;
};

TEST(SplitCommandLine, QuotesAndBackslashesAsAShellReadsThem) {
  EXPECT_EQ(
      split_command_line(
          R"(nvcc -DA="x y" '-DB=it''s' C\ D "--generate-code=arch=compute_90,code=[compute_90,sm_90]")"),
      (std::vector<std::string>{"nvcc", "-DA=x y", "-DB=its", "C D",
                                "--generate-code=arch=compute_90,code=[compute_90,sm_90]"}));
  EXPECT_TRUE(split_command_line("   ").empty());
}

TEST_F(CompileCommands, TheEntryGivesIncludesDefinesStandardArchitecturesAndFlags) {
  fs::create_directories(dir_ / "build" / "CMakeFiles");
  std::ofstream(dir_ / "build" / "CMakeFiles" / "includes_CUDA.rsp")
      << "-I" << (dir_ / "include").string() << " -isystem ../third_party\n";
  const std::string source = (dir_ / "src" / "k.cu").string();
  fs::create_directories(dir_ / "src");
  std::ofstream(source) << "__global__ void k() {}\n";
  std::ofstream(dir_ / "build" / "compile_commands.json")
      << R"([{"directory": ")" << (dir_ / "build").string() << R"(", "file": ")" << source
      << R"(", "command": "/usr/local/cuda/bin/nvcc -forward-unknown-to-host-compiler -DTILE=64 -D NAME=\"a b\" --options-file CMakeFiles/includes_CUDA.rsp -O3 -DNDEBUG -std=c++17 \"--generate-code=arch=compute_80,code=[compute_80,sm_80]\" -gencode arch=compute_90,code=sm_90 -rdc=true -lineinfo --use_fast_math -Xptxas -v,-warn-spills --expt-relaxed-constexpr --maxrregcount=64 -x cu -c )"
      << source << R"( -o k.o"},
         {"directory": "/elsewhere", "file": "other.cu", "arguments": ["nvcc", "-arch=sm_75"]}])";
  const ProjectFlags f = project_flags(dir_ / "build", source);
  EXPECT_EQ(f.file, source);
  EXPECT_EQ(f.defines, (std::vector<std::string>{"TILE=64", "NAME=a b", "NDEBUG"}));
  EXPECT_EQ(f.include_dirs, (std::vector<std::string>{(dir_ / "include").string(),
                                                      (dir_ / "third_party").string()}));
  EXPECT_EQ(f.std, "c++17");
  EXPECT_EQ(f.archs,
            (std::vector<Arch>{Arch::parse("sm_80", "test"), Arch::parse("sm_90", "test")}));
  EXPECT_EQ(f.database, (dir_ / "build" / "compile_commands.json").string());
  EXPECT_TRUE(f.rdc);
  EXPECT_TRUE(f.lineinfo);
  EXPECT_TRUE(f.fast_math);
  EXPECT_FALSE(f.device_debug);
  EXPECT_EQ(f.ptxas_options, (std::vector<std::string>{"-v", "-warn-spills"}));
  EXPECT_EQ(f.nvcc_language_options, (std::vector<std::string>{"--expt-relaxed-constexpr"}));
  EXPECT_EQ(f.maxrregcount, 64);
  // The request the entry makes: its settings, the nvcc-only switches as nvcc options.
  const CompileRequest r = project_request(f);
  EXPECT_EQ(r.defines, f.defines);
  EXPECT_EQ(r.include_dirs, f.include_dirs);
  EXPECT_EQ(r.std, "c++17");
  EXPECT_TRUE(r.rdc);
  EXPECT_TRUE(r.lineinfo);
  EXPECT_TRUE(r.fast_math);
  EXPECT_FALSE(r.device_debug);
  EXPECT_EQ(r.ptxas_options, f.ptxas_options);
  EXPECT_EQ(r.maxrregcount, 64);
  EXPECT_EQ(r.nvcc_options, (std::vector<std::string>{"--expt-relaxed-constexpr"}));
  EXPECT_TRUE(r.nvrtc_options.empty());
  EXPECT_TRUE(r.source.empty());
  EXPECT_FALSE(r.engine);
}

TEST_F(CompileCommands, AMissingGarbledOrIrrelevantDatabaseIsAUsageError) {
  EXPECT_THROW(project_flags(dir_, dir_ / "k.cu"), UsageError);
  // The directory is named as the caller names it (cudatool: its -p flag).
  for (const auto& [source, expected] :
       {std::pair<std::string, std::string>{"", "build directory " + dir_.string() + ": "},
        {"-p", "-p " + dir_.string() + ": no compile_commands.json there"}}) {
    try {
      if (source.empty())
        project_flags(dir_, dir_ / "k.cu");
      else
        project_flags(dir_, dir_ / "k.cu", source);
      ADD_FAILURE() << "no throw";
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(expected, 0), 0u) << e.what();
    }
  }
  // A database that is there but malformed is bad file contents (InputError); a missing one
  // (above) and one without the entry (below) are the caller's to fix (UsageError only).
  try {
    project_flags(dir_, dir_ / "k.cu");
  } catch (const InputError& e) {
    ADD_FAILURE() << "a missing file is no malformed one: " << e.what();
  } catch (const UsageError&) {
  }
  std::ofstream(dir_ / "compile_commands.json") << "{ nope";
  EXPECT_THROW(project_flags(dir_, dir_ / "k.cu"), InputError);
  std::ofstream(dir_ / "compile_commands.json") << R"({"directory": "/"})";
  EXPECT_THROW(project_flags(dir_, dir_ / "k.cu"), InputError);
  std::ofstream(dir_ / "compile_commands.json")
      << R"([{"directory": "/x", "file": "other.cu", "command": "nvcc -c other.cu"}, 7, "s"])";
  try {
    project_flags(dir_, dir_ / "k.cu");
    ADD_FAILURE() << "no throw";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("no entry for"), std::string::npos) << e.what();
    EXPECT_EQ(dynamic_cast<const InputError*>(&e), nullptr);
  }
}

// Issue 20, item 5: nvcc hands -D values, include directories (made absolute against the
// entry's `directory`), the file and -Xptxas values to /bin/sh. A value a shell would act
// on is refused, naming the entry and the value; what nvcc's quoting keeps inert passes.
TEST_F(CompileCommands, ValuesAShellWouldRunAreRefusedNamingTheEntryAndTheValue) {
  const std::vector<std::string> payloads = {"a;touch m",  "a&&touch m", "a|touch m",
                                             "$(touch m)", "`touch m`",  "a\ntouch m"};
  auto entry = [&](const std::string& directory, const std::string& file,
                   const std::vector<std::string>& args) {
    nlohmann::json a = nlohmann::json::array({"nvcc"});
    for (const auto& x : args) a.push_back(x);
    a.push_back("-c");
    a.push_back(file);
    std::ofstream(dir_ / "compile_commands.json")
        << nlohmann::json::array({{{"directory", directory}, {"file", file}, {"arguments", a}}})
               .dump();
  };
  const std::string file = (dir_ / "k.cu").string();
  for (const std::string& payload : payloads) {
    SCOPED_TRACE(payload);
    // Where nvcc puts the value inside double quotes, ; && | stay text; $( ` and a newline
    // do not. Where it passes the value bare (-Xptxas), nothing but plain words is safe.
    const bool acts_in_quotes = payload.find_first_of("$`\n") != std::string::npos;
    struct Field {
      std::string name;
      std::vector<std::string> args;
      std::string directory;
      bool refused;
    };
    for (const auto& f : std::vector<Field>{
             {"-D", {"-DX=" + payload}, dir_.string(), acts_in_quotes},
             {"-D", {"-D", "Y=" + payload}, dir_.string(), acts_in_quotes},
             {"-I", {"-I/inc/" + payload}, dir_.string(), acts_in_quotes},
             {"-I", {"-isystem=rel/" + payload}, dir_.string(), acts_in_quotes},
             {"-Xptxas", {"-Xptxas", "-v," + payload}, dir_.string(), true},
             {"-Xptxas", {"--ptxas-options=" + payload}, dir_.string(), true},
             {"directory", {"-Irel"}, "/p/" + payload, acts_in_quotes},
         }) {
      SCOPED_TRACE(f.name);
      entry(f.directory, file, f.args);
      if (!f.refused) {
        EXPECT_NO_THROW(project_flags(dir_, file));
        continue;
      }
      try {
        project_flags(dir_, file);
        ADD_FAILURE() << "not refused";
      } catch (const UsageError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("the entry for"), std::string::npos) << what;
        EXPECT_NE(what.find(f.name), std::string::npos) << what;
        EXPECT_NE(what.find("/bin/sh"), std::string::npos) << what;
        EXPECT_EQ(what.find('\n'), std::string::npos) << "the value is quoted: " << what;
      }
    }
  }
  // A -D value with quotes (nvcc escapes them) and spaces is a project's ordinary flag.
  entry(dir_.string(), file, {"-DVERSION=\"1.0 beta\"", "-I/opt/my include"});
  EXPECT_EQ(project_flags(dir_, file).defines, (std::vector<std::string>{"VERSION=\"1.0 beta\""}));
}

// Issue 21: the entry's targets are parsed by the one architecture grammar when it is read;
// one outside it is refused naming the database, the entry and the option, not a cudatool
// flag. PTX targets, lto_XX and nvcc's names (all, native) are no machine-code target.
TEST_F(CompileCommands, TargetsAreArchitecturesParsedNamingTheEntry) {
  const std::string file = (dir_ / "k.cu").string();
  auto entry = [&](const std::string& args) {
    std::ofstream(dir_ / "compile_commands.json")
        << R"([{"directory": "/", "file": ")" << file << R"(", "command": "nvcc )" << args
        << R"( -c k.cu"}])";
  };
  auto archs = [](std::initializer_list<const char*> names) {
    std::vector<Arch> out;
    for (const char* name : names) out.push_back(Arch::parse(name, "test"));
    return out;
  };
  for (const auto& [args, expected] : std::vector<std::pair<std::string, std::vector<Arch>>>{
           {"-arch=sm_90a", archs({"sm_90a"})},
           {"-arch compute_80", archs({"sm_80"})},
           {"--gpu-architecture=compute_100f", archs({"sm_100f"})},
           {"-arch=native", {}},
           {"-arch=all-major", {}},
           {"-gencode arch=compute_90,code=[compute_90,lto_90,sm_90,sm_90]", archs({"sm_90"})},
           {"-arch=compute_80 -code=sm_80,sm_86 -arch sm_80", archs({"sm_80", "sm_86"})},
           {"-arch=sm_120 -gencode arch=compute_75,code=sm_75", archs({"sm_120", "sm_75"})}}) {
    SCOPED_TRACE(args);
    entry(args);
    EXPECT_EQ(project_flags(dir_, file).archs, expected);
  }
  const std::string database = (dir_ / "compile_commands.json").string();
  for (const auto& [args, expected] : std::vector<std::pair<std::string, std::string>>{
           {"-arch=sm_9x", R"(: -arch "sm_9x": expected an architecture)"},
           {"-arch=compute_1234", R"(: -arch "compute_1234": expected an architecture)"},
           {"-arch=SM_90", ""},  // not sm_: nvcc's to refuse, no target here
           {"-gencode arch=compute_90,code=sm_90b", R"(: --generate-code "sm_90b": expected)"},
           {"-code=sm_", R"(: -code "sm_": expected)"}}) {
    SCOPED_TRACE(args);
    entry(args);
    if (expected.empty()) {
      EXPECT_TRUE(project_flags(dir_, file).archs.empty());
      continue;
    }
    try {
      project_flags(dir_, file);
      ADD_FAILURE() << "no throw";
    } catch (const UsageError& e) {
      EXPECT_EQ(
          std::string(e.what()).rfind(database + ": the entry for \"" + file + "\"" + expected, 0),
          0u)
          << e.what();
    }
  }
}

// Issue 20, item 12: --maxrregcount in an entry goes through the one strict parser.
TEST_F(CompileCommands, MaxrregcountIsReadStrictly) {
  const std::string file = (dir_ / "k.cu").string();
  for (const auto& [value, expected] : std::vector<std::pair<std::string, int>>{
           {"64", 64}, {"0x40", -1}, {"+5", -1}, {"1e2", -1}, {"256", -1}, {"010", 10}}) {
    SCOPED_TRACE(value);
    std::ofstream(dir_ / "compile_commands.json")
        << R"([{"directory": "/", "file": ")" << file
        << R"(", "arguments": ["nvcc", "--maxrregcount=)" << value << R"(", "-c", "k.cu"]}])";
    if (expected < 0)
      EXPECT_THROW(project_flags(dir_, file), UsageError);
    else
      EXPECT_EQ(project_flags(dir_, file).maxrregcount, expected);
  }
}

}  // namespace
}  // namespace cudatool
