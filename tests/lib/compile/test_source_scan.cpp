// The textual scan of a source (source_scan.hpp): the project headers it resolves, in
// order and recursively, the names it cannot resolve, `main` and kernels with internal
// linkage, on files written here.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cudatool/compile/compiler.hpp"
#include "cudatool/compile/source_scan.hpp"

namespace cudatool {
namespace {
namespace fs = std::filesystem;

class SourceScanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "cudatool-scan-test-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  void write(const fs::path& name, const std::string& text) {
    fs::create_directories((dir_ / name).parent_path());
    std::ofstream(dir_ / name) << text;
  }
  CompileRequest request(const std::string& source) {
    CompileRequest r;
    r.source = source;
    r.source_dir = dir_;
    r.arch = Arch::parse("sm_90", "test");
    return r;
  }
  fs::path dir_;
};

TEST_F(SourceScanTest, ResolvesProjectHeadersRecursivelyOnce) {
  write("a.h", "#include \"detail/b.h\"\n#include \"a.h\"\n");
  write("detail/b.h", "  #  include \"c.h\"\n");  // beside b.h first
  write("detail/c.h", "#define C 1\n");
  write("inc/d.h", "#define D 1\n");
  CompileRequest r = request("#include \"a.h\"\n#include <d.h>\n#include \"a.h\"\n");
  r.include_dirs = {(dir_ / "inc").string()};
  const SourceScan scan = scan_source(r);
  ASSERT_EQ(scan.found.size(), 4u);
  EXPECT_EQ(scan.found[0], (dir_ / "a.h").lexically_normal());
  EXPECT_EQ(scan.found[1], (dir_ / "inc" / "d.h").lexically_normal());
  EXPECT_EQ(scan.found[2], (dir_ / "detail" / "b.h").lexically_normal());
  EXPECT_EQ(scan.found[3], (dir_ / "detail" / "c.h").lexically_normal());
  EXPECT_EQ(find_includes(r), scan.found);
  EXPECT_TRUE(scan.unresolved.empty());
}

TEST_F(SourceScanTest, NamesFoundNowhereAreUnresolved) {
  const SourceScan scan =
      scan_source(request("#include <cudatool_no_such_header.h>\n#include \"gone.h\"\n"
                          "#include <cudatool_no_such_header.h>\n#include MACRO\n"));
  EXPECT_EQ(scan.unresolved, (std::vector<std::string>{"cudatool_no_such_header.h", "gone.h"}));
  EXPECT_TRUE(scan.found.empty());
}

TEST_F(SourceScanTest, FindsMainInTheSourceOrAHeader) {
  EXPECT_TRUE(scan_source(request("int main() { return 0; }\n")).has_main);
  EXPECT_TRUE(scan_source(request("int main (void) { return 0; }\n")).has_main);
  EXPECT_FALSE(scan_source(request("int domain(int main_value) { return 0; }\n")).has_main);
  EXPECT_FALSE(scan_source(request("__global__ void main_kernel() {}\n")).has_main);
  write("driver.h", "int main(int, char**) { return 0; }\n");
  EXPECT_TRUE(scan_source(request("#include \"driver.h\"\n")).has_main);
}

TEST_F(SourceScanTest, FindsKernelsWithInternalLinkage) {
  EXPECT_TRUE(scan_source(request("static __global__ void k() {}\n")).static_kernels);
  EXPECT_TRUE(scan_source(request("__global__ static void k() {}\n")).static_kernels);
  EXPECT_FALSE(scan_source(request("static int x;\n__global__ void k() {}\n")).static_kernels);
  EXPECT_FALSE(
      scan_source(request("__global__ void k() { static_assert(true); }\n")).static_kernels);
  EXPECT_TRUE(
      scan_source(request("namespace {\n__global__ void k() {}\n}\n")).anonymous_namespace_kernels);
  EXPECT_FALSE(scan_source(request("namespace n {\n__global__ void k() {}\n}\n"))
                   .anonymous_namespace_kernels);
  // Without a kernel, an anonymous namespace says nothing about kernel names.
  EXPECT_FALSE(scan_source(request("namespace { int x; }\n")).anonymous_namespace_kernels);
}

}  // namespace
}  // namespace cudatool
