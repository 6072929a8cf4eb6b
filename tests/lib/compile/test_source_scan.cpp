// The textual scan of a source (source_scan.hpp): the project headers it resolves, in
// order and recursively, the names it cannot resolve, `main` and kernels with internal
// linkage, on files written here.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
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

// Issue 39, defect 4: the compiler's order. NVRTC gets the source's folder as the first -I,
// so <cfg.h> there comes before the -I directories'; "..." names look beside the including
// file first. Every other place looked at is `checked`.
TEST_F(SourceScanTest, SearchesInTheCompilersOrderAndRecordsThePlacesLookedAt) {
  write("cfg.h", "");
  write("inc/cfg.h", "");
  write("inc/sub/h.h", "#include \"cfg.h\"\n");
  write("inc/sub/cfg.h", "");
  CompileRequest r = request("#include <cfg.h>\n#include <sub/h.h>\n");
  r.include_dirs = {(dir_ / "inc").string()};
  const SourceScan scan = scan_source(r);
  ASSERT_EQ(scan.found.size(), 3u);
  EXPECT_EQ(scan.found[0], (dir_ / "cfg.h").lexically_normal());
  EXPECT_EQ(scan.found[1], (dir_ / "inc" / "sub" / "h.h").lexically_normal());
  EXPECT_EQ(scan.found[2], (dir_ / "inc" / "sub" / "cfg.h").lexically_normal());
  const auto checked = [&](const fs::path& p) {
    return std::find(scan.checked.begin(), scan.checked.end(), p.lexically_normal()) !=
           scan.checked.end();
  };
  EXPECT_TRUE(checked(dir_ / "inc" / "cfg.h"));  // shadowed
  EXPECT_TRUE(checked(dir_ / "sub" / "h.h"));    // looked at first, nothing there
  EXPECT_TRUE(scan.complete);
}

// Issue 39, defect 2: an include through a macro, defined in the file, a header or by -D.
TEST_F(SourceScanTest, FollowsIncludesThroughMacros) {
  write("cfg.h", "#define NEXT <next.h>\n#include NEXT\n");
  write("next.h", "");
  write("other.h", "");
  write("defined.h", "");
  CompileRequest r =
      request("#define CFG \"cfg.h\"\n#define ALIAS CFG\n#include ALIAS\n#include FROM_FLAG\n");
  r.defines = {"FROM_FLAG=\"defined.h\""};
  SourceScan scan = scan_source(r);
  EXPECT_TRUE(scan.complete);
  const auto has = [&](const std::string& name) {
    return std::find(scan.found.begin(), scan.found.end(), (dir_ / name).lexically_normal()) !=
           scan.found.end();
  };
  EXPECT_TRUE(has("cfg.h"));
  EXPECT_TRUE(has("next.h"));
  EXPECT_TRUE(has("defined.h"));
  EXPECT_FALSE(has("other.h"));
  // A macro the scan cannot expand: incomplete (the cache keeps no entry).
  EXPECT_FALSE(scan_source(request("#include UNKNOWN\n")).complete);
  EXPECT_FALSE(scan_source(request("#define H(x) #x\n#include H(cfg.h)\n")).complete);
  // Defined twice: both are recorded.
  scan =
      scan_source(request("#if A\n#define C \"cfg.h\"\n#else\n#define C \"other.h\"\n#endif\n"
                          "#include C\n"));
  EXPECT_TRUE(has("cfg.h"));
  EXPECT_TRUE(has("other.h"));
}

TEST(IncludeDirectives, ReadsIncludesAndDefinitionsOfAnyText) {
  const auto d = detail::include_directives(
      "#include <a.h>\n  #  include \"b.h\"\n#include M\n#include M(x)\n#include_next <c.h>\n"
      "#define M \"m.h\"\n#define F(x) <x>\n#define O M\n#include\n#include \"\"\n#define");
  ASSERT_EQ(d.includes.size(), 7u);
  EXPECT_EQ(d.includes[0].name, "a.h");
  EXPECT_FALSE(d.includes[0].quoted);
  EXPECT_EQ(d.includes[1].name, "b.h");
  EXPECT_TRUE(d.includes[1].quoted);
  EXPECT_EQ(d.includes[2].macro, "M");
  EXPECT_TRUE(d.includes[3].macro.empty() && d.includes[3].name.empty());
  EXPECT_EQ(d.includes[4].name, "c.h");
  ASSERT_EQ(d.definitions.size(), 2u);
  EXPECT_EQ(d.definitions[0].header, "m.h");
  EXPECT_EQ(d.definitions[1].other, "M");
}

}  // namespace
}  // namespace cudatool
