// Output for shell users: --format csv / csv,noheader of the tabular commands (devices and
// attrs through the fake driver, occupancy sweeps, kernels), kernel names cut only on a
// terminal, an unknown option before the command named, and --version's CUDA headers.
#include <cuda.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "process.hpp"

using namespace cudatool::testing;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The fields of one CSV line (RFC 4180: quoted fields, doubled quotes).
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

std::string kernels_data(const std::string& name) {
  return std::string(CUDATOOL_KERNELS_DATA) + "/" + name;
}

}  // namespace

TEST(CliOutput, VersionNamesTheCudaHeadersItWasBuiltWith) {
  const auto r = run_cudatool({"--version"});
  EXPECT_EQ(r.exit_code, 0);
  const std::string headers = "built with the CUDA " + std::to_string(CUDA_VERSION / 1000) + "." +
                              std::to_string(CUDA_VERSION % 1000 / 10) + " headers";
  EXPECT_EQ(r.out, std::string("cudatool ") + CUDATOOL_VERSION + "\n" + headers + "\n");
}

TEST(CliOutput, AnUnknownOptionBeforeTheCommandIsNamed) {
  for (const char* option : {"--bogus", "-z"}) {
    const auto r = run_cudatool({option});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(std::string("unknown option \"") + option + "\""), std::string::npos)
        << r.err;
    EXPECT_EQ(r.err.find("A subcommand is required"), std::string::npos) << r.err;
  }
}

TEST(CliOutput, DevicesCsvHasAHeaderAndALinePerDevice) {
  auto r = run_cudatool({"devices", "--format", "csv"}, with_fake_driver());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  EXPECT_EQ(
      lines[0],
      "ordinal,name,compute_capability,total_memory_bytes,multiprocessor_count,pci_bus_id,uuid,"
      "driver_version,cuda_version");
  const auto first = csv_fields(lines[1]);
  ASSERT_EQ(first.size(), 9u) << lines[1];
  EXPECT_EQ(first[0], "0");
  EXPECT_EQ(first[1], "Fake GPU 0");
  EXPECT_EQ(first[2], "9.0");
  EXPECT_EQ(first[5], "0000:01:00.0");
  EXPECT_EQ(first[8], "13.0");
  // The values are those of --json, unformatted.
  const json j = json::parse(run_cudatool({"devices", "--json"}, with_fake_driver()).out);
  EXPECT_EQ(first[3], std::to_string(j["devices"][0]["total_memory_bytes"].get<std::uint64_t>()));
  EXPECT_EQ(first[6], j["devices"][0]["uuid"].get<std::string>());

  r = run_cudatool({"devices", "--format", "csv,noheader"}, with_fake_driver());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 2u) << r.out;
  EXPECT_EQ(csv_fields(lines[1])[1], "Fake GPU 1");

  // --format json is --json; --json with csv is a contradiction.
  r = run_cudatool({"devices", "--format", "json"}, with_fake_driver());
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(json::parse(r.out)["devices"].size(), 2u);
  r = run_cudatool({"devices", "--json", "--format", "csv"}, with_fake_driver());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("exclude each other"), std::string::npos) << r.err;
  r = run_cudatool({"devices", "--format", "xml"}, with_fake_driver());
  EXPECT_EQ(r.exit_code, 2);
}

TEST(CliOutput, AttrsCsvIsOneLinePerAttribute) {
  const auto r =
      run_cudatool({"attrs", "--format", "csv", "max_threads_per_block", "multiprocessor_count"},
                   with_fake_driver());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  EXPECT_EQ(lines[0], "device,attribute,value");
  EXPECT_EQ(lines[2], "0,multiprocessor_count,100");
  EXPECT_TRUE(lines[1].starts_with("0,max_threads_per_block,")) << lines[1];
}

TEST(CliOutput, OccupancySweepCsvHasTheRecordsOfTheJson) {
  for (const std::vector<std::string>& sweep : {std::vector<std::string>{"--sweep"},
                                                {"--threads", "256", "--sweep-regs"},
                                                {"--threads", "256", "--sweep-smem"},
                                                {"--threads", "256", "--regs", "32"}}) {
    std::vector<std::string> args = {"occupancy", "--arch", "sm_90"};
    args.insert(args.end(), sweep.begin(), sweep.end());
    auto json_args = args;
    json_args.push_back("--json");
    args.insert(args.end(), {"--format", "csv"});
    const auto r = run_cudatool(args, without_driver());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json j = json::parse(run_cudatool(json_args, without_driver()).out);
    const json records = j.contains("records") ? j["records"] : json::array({j});
    const auto lines = lines_of(r.out);
    ASSERT_EQ(lines.size(), records.size() + 1) << r.out;
    EXPECT_EQ(lines[0],
              "threads,registers,shared_mem_bytes,block_barriers,blocks_per_sm,warps_per_sm,"
              "max_warps_per_sm,occupancy,limited_by");
    for (std::size_t i = 0; i < records.size(); ++i) {
      const auto fields = csv_fields(lines[i + 1]);
      ASSERT_EQ(fields.size(), 9u) << lines[i + 1];
      EXPECT_EQ(fields[0], std::to_string(records[i]["threads"].get<int>()));
      EXPECT_EQ(fields[4], std::to_string(records[i]["tb_per_mp"].get<int>()));
      EXPECT_DOUBLE_EQ(std::stod(fields[7]), records[i]["occupancy"].get<double>());
      EXPECT_EQ(fields[8], records[i]["limited_by"].get<std::string>());
    }
  }
}

TEST(CliOutput, KernelsCsvQuotesNamesWithCommasAndCutsNothing) {
  if (!fs::exists(kernels_data("zstd.o"))) GTEST_SKIP() << "no nvcc-built test objects";
  const auto r = run_cudatool(
      {"kernels", "--format", "csv,noheader", "--threads", "256", kernels_data("zstd.o")},
      without_driver());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = lines_of(r.out);
  const json j = json::parse(
      run_cudatool({"kernels", "--json", kernels_data("zstd.o")}, without_driver()).out);
  ASSERT_EQ(lines.size(), j["kernels"].size());
  bool found = false;
  for (const auto& line : lines) {
    const auto fields = csv_fields(line);
    ASSERT_EQ(fields.size(), 17u) << line;
    if (fields[4] == "void scale<double, 64>(double*, int)") {
      found = true;
      EXPECT_NE(line.find("\"void scale<double, 64>(double*, int)\""), std::string::npos);
      EXPECT_EQ(fields[6], "12");      // regs
      EXPECT_EQ(fields[7], "512");     // shared
      EXPECT_EQ(fields[13], "256");    // block_threads
      EXPECT_EQ(fields[12], "false");  // stack_unknown
    }
  }
  EXPECT_TRUE(found) << r.out;
}

// Issue 39, defect 13: a cell a spreadsheet would evaluate (here a file named "=2+5.o")
// gets a leading apostrophe; numbers, negative ones too, stay as they are.
TEST(CliOutput, CsvCellsAreNeverFormulas) {
  if (!fs::exists(kernels_data("zstd.o"))) GTEST_SKIP() << "no nvcc-built test objects";
  const fs::path dir = fs::temp_directory_path() / ("cudatool-csv-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::copy_file(kernels_data("zstd.o"), dir / "=2+5.o", fs::copy_options::overwrite_existing);
  ProcessOptions o = without_driver();
  o.working_directory = dir.string();
  const auto r = run_cudatool({"kernels", "--format", "csv,noheader", "=2+5.o"}, o);
  fs::remove_all(dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = lines_of(r.out);
  ASSERT_FALSE(lines.empty());
  for (const auto& line : lines) EXPECT_EQ(csv_fields(line)[0], "'=2+5.o") << line;
}

// Blocks of 64 KiB or more go to the descriptor from where they are (standard_output.cpp),
// after what is buffered: the 100 KB kernels text of one image arrives whole and in place
// in the document, and a full disk is still one line and exit 1.
TEST(CliOutput, LargeBlocksReachStdoutWholeAndInOrder) {
  const std::string cubin = kernels_data("long_name.cubin");
  if (!fs::exists(cubin)) GTEST_SKIP() << "no nvcc-built 50,000-character kernel";
  auto r = run_cudatool({"kernels", "--json", cubin}, without_driver());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json doc = json::parse(r.out);
  ASSERT_EQ(doc.at("kernels").size(), 1u);
  EXPECT_EQ(doc.at("kernels")[0].at("name").get<std::string>(), std::string(50000, 'k'));
  EXPECT_EQ(doc.at("images").size(), 1u);
  ProcessOptions full = without_driver();
  full.stdout_path = "/dev/full";
  r = run_cudatool({"kernels", "--json", cubin}, full);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.err, "cudatool: cannot write standard output: No space left on device\n");
}

// Issue 39, defect 12: output lost is said even where the command fails as well: its own
// line, then the output's, and the command's status (here a requirement unmet, 4, after
// the listing was printed).
TEST(CliOutput, LostOutputIsSaidWhenTheCommandFailsToo) {
  ProcessOptions full = with_fake_driver();
  full.env["CUDATOOL_NO_NVML"] = "1";
  full.stdout_path = "/dev/full";
  const auto r = run_cudatool({"devices", "--min-count", "5"}, full);
  EXPECT_EQ(r.exit_code, 4) << r.err;
  const auto lines = lines_of(r.err);
  ASSERT_EQ(lines.size(), 2u) << r.err;
  EXPECT_NE(lines[0].find("need at least 5"), std::string::npos) << r.err;
  EXPECT_EQ(lines[1], "cudatool: cannot write standard output: No space left on device");
}

// Issue 39 (also seen): into a pipe, every row was padded to the longest name (rows of
// 4,000 characters for warp.so): a name longer than the column has a line of its own.
TEST(CliOutput, OneLongKernelNameDoesNotWidenEveryRow) {
  const std::string cubin = kernels_data("long_name.cubin");
  if (!fs::exists(cubin)) GTEST_SKIP() << "no nvcc-built 50,000-character kernel";
  const auto r = run_cudatool({"kernels", cubin}, without_driver());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string whole(50000, 'k');
  for (const auto& line : lines_of(r.out)) {
    if (line == whole) continue;
    EXPECT_LT(line.size(), 200u) << line.substr(0, 200);
  }
  EXPECT_NE(r.out.find("\n" + whole + "\n"), std::string::npos);
}

TEST(CliOutput, KernelNamesAreCutOnlyOnATerminal) {
  const std::string cubin = kernels_data("long_name.cubin");
  if (!fs::exists(cubin)) GTEST_SKIP() << "no nvcc-built 50,000-character kernel";
  const std::string whole(50000, 'k');
  // Into a pipe: the whole name, as ps does.
  auto r = run_cudatool({"kernels", cubin}, without_driver());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(whole), std::string::npos);
  // On a terminal (script(1) gives it a pseudo-terminal): cut to 60 characters, and whole
  // again with --wide.
  if (access("/usr/bin/script", X_OK) != 0) GTEST_SKIP() << "no script(1) for a terminal";
  const auto on_terminal = [&](const std::string& extra) {
    return run_process(
        "/usr/bin/script",
        {"-qec", std::string(CUDATOOL_BINARY) + " kernels " + extra + cubin, "/dev/null"},
        without_driver());
  };
  r = on_terminal("");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find(whole), std::string::npos);
  EXPECT_NE(r.out.find(std::string(30, 'k') + "..."), std::string::npos) << r.out.substr(0, 500);
  r = on_terminal("--wide ");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(whole), std::string::npos);
}
