// The size report (binary_sizes.hpp): template families from demangled names, and on the
// nvcc-built test binaries (skipped without nvcc) the architectures adding up to the fatbin
// sections, the identical images, and the spill bytes and code sizes the reader takes.
#include "cudatool/binary/binary_sizes.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace cudatool {
namespace {

TEST(BinarySizes, TemplateFamily) {
  EXPECT_EQ(template_family("void physics::step<4>(physics::Particle*, int, float)"),
            "physics::step");
  EXPECT_EQ(template_family("void scale<float, 128>(float*, int)"), "scale");
  EXPECT_EQ(template_family("spill"), "spill");
  EXPECT_EQ(template_family("capped(float*)"), "capped");
  EXPECT_EQ(template_family("void ns::K<ns::A<int>, (ns::E)1>::run<2>(ns::P<float>)"),
            "ns::K::run");
  EXPECT_EQ(template_family("bool operator< <int>(X<int> const&, X<int> const&)"), "operator<");
  EXPECT_EQ(template_family("void f<void (*)(int)>(void (*)(int))"), "f");
  EXPECT_EQ(template_family(""), "");
}

std::string data(const std::string& name) {
  return std::string(CUDATOOL_KERNELS_DATA) + "/" + name;
}

TEST(BinarySizes, ArchitecturesAddUpToTheFatbinSections) {
  if (!std::filesystem::exists(data("zstd.o"))) GTEST_SKIP() << "nvcc was not found";
  for (const char* name : {"none.o", "zstd.o", "lz4.o", "libkernels.so", "libkernels.a"}) {
    const ScanResult scan = scan_binaries({data(name)}, {});
    const SizeReport report = size_report(scan, 3);
    ASSERT_EQ(report.files.size(), 1u) << name;
    const FileSizes& f = report.files[0];
    std::uint64_t sections = 0, architectures = 0;
    for (const FatbinSection& s : scan.files[0].fatbin_sections) sections += s.size;
    for (const ArchitectureSize& a : f.architectures) architectures += a.file_bytes;
    EXPECT_GT(sections, 0u) << name;
    EXPECT_EQ(f.fatbin_section_bytes, sections) << name;
    EXPECT_EQ(architectures + f.overhead_bytes, sections + f.other_image_bytes) << name;
    EXPECT_LE(report.largest_kernels.size(), 3u);
    for (std::size_t i = 1; i < report.largest_kernels.size(); ++i)
      EXPECT_GE(scan.kernels[report.largest_kernels[i - 1]].resources.code_size_bytes,
                scan.kernels[report.largest_kernels[i]].resources.code_size_bytes);
  }
}

TEST(BinarySizes, SpillsAndCodeFromTheCubin) {
  if (!std::filesystem::exists(data("none.o"))) GTEST_SKIP() << "nvcc was not found";
  const ScanResult scan = scan_binaries({data("none.o")}, {});
  bool seen = false;
  for (const ScannedKernel& k : scan.kernels) {
    EXPECT_GT(k.resources.code_size_bytes, 0u) << k.resources.name;
    // CUDA 13 marks every spill: none of these kernels spills (the local array of `spill`
    // is a stack frame, not a spill).
    ASSERT_TRUE(k.resources.spill_store_bytes) << k.resources.name;
    EXPECT_EQ(*k.resources.spill_store_bytes, 0) << k.resources.name;
    EXPECT_EQ(k.resources.spill_load_bytes, 0) << k.resources.name;
    if (k.resources.name == "spill") {
      seen = true;
      EXPECT_GT(k.resources.local_size_bytes, 0);
    }
  }
  EXPECT_TRUE(seen);
}

TEST(BinarySizes, IdenticalImagesCountOnce) {
  if (!std::filesystem::exists(data("zstd.o"))) GTEST_SKIP() << "nvcc was not found";
  // The same object twice: every image of the second is one of the first's.
  const ScanResult scan = scan_binaries({data("zstd.o"), data("zstd.o")}, {});
  const SizeReport report = size_report(scan, 100);
  std::size_t elf_images = 0;
  std::uint64_t second_bytes = 0;
  for (const ScannedImage& image : scan.images)
    if (image.file == 1 && image.kind == ImageKind::elf) {
      ++elf_images;
      second_bytes += image.file_bytes;
      ASSERT_TRUE(image.same_bytes_as);
      EXPECT_EQ(scan.images[*image.same_bytes_as].file, 0u);
    }
  EXPECT_EQ(report.identical_images, elf_images);
  EXPECT_EQ(report.identical_image_bytes, second_bytes);
  // One file's kernels are in one image per architecture: no kernel is duplicated.
  EXPECT_EQ(report.duplicate_kernel_copies, 0u);
}

}  // namespace
}  // namespace cudatool
