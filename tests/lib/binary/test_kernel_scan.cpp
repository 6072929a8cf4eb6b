// The scan engine (lib/src/binary/kernel_scan.cpp) over containers built in memory
// (fatbin_builder.hpp) and the nvcc-built test object (tests/CMakeLists.txt; tests that need
// it skip without nvcc): the same kernels from plain, zstd and LZ4 entries, images handed
// over once, repeated entries, where containers are searched for, the decompression budget,
// architecture filters, find_one_kernel, and a file that changes while it is read (issue 20,
// items 1 and 2).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <lz4.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "binary/byte_reader.hpp"
#include "binary/elf.hpp"
#include "binary/fatbin.hpp"
#include "binary_samples.hpp"
#include "cudatool/base/error.hpp"
#include "cudatool/binary/kernel_scan.hpp"
#include "fatbin_builder.hpp"

namespace cudatool {
namespace {

using testing::Bytes;
using testing::container;
using testing::data_file;
using testing::entry;
using testing::EntrySpec;
using testing::error_of;
using testing::host_elf;
using testing::put;
using testing::real_cubin;

namespace fs = std::filesystem;

class ChangingFile : public ::testing::Test {
 protected:
  void SetUp() override {
    const fs::path object = std::string(CUDATOOL_KERNELS_DATA) + "/none.o";
    if (!fs::exists(object)) GTEST_SKIP() << "nvcc was not found at configure time";
    char pattern[] = "/tmp/cudatool-scan-XXXXXX";
    dir_ = ::mkdtemp(pattern);
    path_ = (dir_ / "none.o").string();
    fs::copy_file(object, path_);
    std::ifstream in(path_, std::ios::binary);
    bytes_.assign(std::istreambuf_iterator<char>(in), {});
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  fs::path dir_;
  std::string path_;
  std::string bytes_;
};

bool says_changed(const UsageError& e) {
  return std::string(e.what()).find(": the file changed while it was read") != std::string::npos;
}

// `cp` over a library while it is scanned: the file is truncated after its first image is
// read, the next images' pages are gone (SIGBUS, exit 135, before). The scan reports the
// change instead, naming the file.
TEST_F(ChangingFile, TruncatedWhileReadIsOneError) {
  ScanOptions options;
  options.threads = 1;  // images one after another: the truncation comes between two
  bool truncated = false;
  options.on_image = [&](const ImageKernels&) {
    if (!truncated) {
      ASSERT_EQ(::truncate(path_.c_str(), 64), 0);
    }
    truncated = true;
  };
  try {
    scan_binaries({path_}, options);
    ADD_FAILURE() << "no error";
  } catch (const UsageError& e) {
    EXPECT_TRUE(says_changed(e)) << e.what();
    EXPECT_EQ(std::string(e.what()).rfind(path_ + ": ", 0), 0u) << e.what();
  }
  EXPECT_TRUE(truncated);
}

// A section name rewritten in place while the file is read: the names were read twice and
// the second reading indexed lists sized by the first (ASan: heap-buffer-overflow in
// add_object). Each scan now either reads the file or reports the change.
TEST_F(ChangingFile, SectionNamesRewrittenWhileReadNeverCrash) {
  const std::size_t at = bytes_.find(std::string(".nv_fatbin\0", 11));
  ASSERT_NE(at, std::string::npos);
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    const int fd = ::open(path_.c_str(), O_WRONLY);
    for (unsigned i = 0; !stop.load(std::memory_order_relaxed); ++i)
      if (::pwrite(fd, i % 2 ? "N" : "n", 1, static_cast<off_t>(at + 9)) != 1) break;
    ::close(fd);
  });
  ScanOptions options;
  options.threads = 2;
  int read = 0, changed = 0;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (std::chrono::steady_clock::now() < until) {
    try {
      scan_binaries({path_}, options);
      ++read;
    } catch (const UsageError& e) {
      EXPECT_TRUE(says_changed(e)) << e.what();
      ++changed;
    }
  }
  stop = true;
  writer.join();
  EXPECT_GT(read + changed, 10);
}

// The one kernel selector (occupancy --kernel-from): exactly one kernel name, and one
// architecture unless the caller takes the first.
TEST(FindOneKernel, ExactlyOneKernelOrAMessageNamingTheSource) {
  ScanResult found;
  found.images.resize(2);
  found.images[0].arch = Arch::parse("sm_80", "test");
  found.images[1].arch = Arch::parse("sm_90", "test");
  auto kernel = [](std::size_t image, const char* name) {
    ScannedKernel k;
    k.image = image;
    k.resources.name = k.resources.demangled = name;
    return k;
  };
  found.kernels = {kernel(0, "scale"), kernel(1, "scale"), kernel(1, "scan"), kernel(1, "copy")};
  KernelLookup lookup;
  lookup.source = "--kernel";
  lookup.file = "f.o";
  lookup.arch_source = "--arch";
  auto message = [&](const char* pattern) -> std::string {
    lookup.pattern = pattern;
    try {
      find_one_kernel(found, KernelNameFilter(pattern, "--kernel"), lookup);
    } catch (const UsageError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(message("^copy$"), "");
  EXPECT_EQ(message("nothing"), "--kernel \"nothing\": no such kernel in \"f.o\"");
  EXPECT_EQ(message("sca"), "--kernel \"sca\" matches 2 kernels (scale; scan): make it unique");
  EXPECT_EQ(message("scale"),
            "--kernel \"scale\" is compiled for sm_80, sm_90: choose one with --arch");
  lookup.several_architectures_ok = true;
  lookup.pattern = "scale";
  EXPECT_EQ(&find_one_kernel(found, KernelNameFilter("scale", "--kernel"), lookup),
            &found.kernels[0]);
  lookup.arch = "sm_100";
  EXPECT_EQ(message("nothing"), "--kernel \"nothing\": no such kernel in \"f.o\" for \"sm_100\"");
}

// The cap above is per entry: twelve entries declaring 100 MiB each, read by twelve threads,
// held 1.2 GB at once (a 269 KB file took 2.1 GB at --jobs 16). What the whole process holds
// decompressed is capped at kDecompressedBytesLimit; threads wait for room (issue 20,
// item 9).
TEST(KernelScan, DecompressedBytesHeldAtOnceAreCappedForTheWholeProcess) {
  const Bytes zeros(100u << 20, 0);
  Bytes z(ZSTD_compressBound(zeros.size()));
  z.resize(ZSTD_compress(z.data(), z.size(), zeros.data(), zeros.size(), 1));
  std::vector<Bytes> entries;
  for (int i = 0; i < 12; ++i)
    entries.push_back(entry({.flags = 0x8011,
                             .payload = z,
                             .compressed_size = static_cast<std::uint32_t>(z.size()),
                             .decompressed_size = zeros.size()}));
  ScanOptions options;
  options.threads = 12;
  const ScanResult r = scan_bytes(container(entries), "bombs.fatbin", options);
  ASSERT_EQ(r.images.size(), 12u);
  for (const ScannedImage& image : r.images)  // each decompressed, then not a CUBIN
    EXPECT_EQ(image.error.find("decompressed at once"), std::string::npos) << image.error;
  EXPECT_LE(decompressed_bytes_peak(), kDecompressedBytesLimit);
  EXPECT_GE(decompressed_bytes_peak(), zeros.size());
  EXPECT_EQ(decompressed_bytes_held(), 0u);
  // One entry larger than the whole budget is refused, naming it, before any allocation.
  Decompressor decompressor;
  FatbinEntry large;
  large.arch = Arch::parse("sm_90", "test");
  large.offset = 0x40;
  large.compression = FatbinCompression::zstd;
  large.payload = Bytes(17u << 20, 1);
  large.decompressed_size = 600ull << 20;
  EXPECT_EQ(error_of([&] { decompressor.contents(large, "big.fatbin"); }),
            "big.fatbin: sm_90 entry at offset 0x40: declared decompressed size 629145600 is "
            "more than the 512 MiB cudatool holds decompressed at once: refused");
  EXPECT_EQ(decompressor.capacity(), 0u);
}

TEST(KernelScan, TheSameCubinPlainZstdAndLz4GivesTheSameKernels) {
  const Bytes cubin = real_cubin();
  if (cubin.empty()) GTEST_SKIP() << "no nvcc-built test object at " << data_file("none.o");
  Bytes z(ZSTD_compressBound(cubin.size()));
  z.resize(ZSTD_compress(z.data(), z.size(), cubin.data(), cubin.size(), 3));
  Bytes l(static_cast<std::size_t>(LZ4_compressBound(static_cast<int>(cubin.size()))));
  l.resize(static_cast<std::size_t>(LZ4_compress_default(
      reinterpret_cast<const char*>(cubin.data()), reinterpret_cast<char*>(l.data()),
      static_cast<int>(cubin.size()), static_cast<int>(l.size()))));
  const std::uint32_t zs = static_cast<std::uint32_t>(z.size()),
                      ls = static_cast<std::uint32_t>(l.size());
  const Bytes fatbin = container({entry({.payload = cubin}),
                                  entry({.flags = 0x8011,
                                         .payload = z,
                                         .compressed_size = zs,
                                         .decompressed_size = cubin.size()}),
                                  entry({.flags = 0x2011,
                                         .payload = l,
                                         .compressed_size = ls,
                                         .decompressed_size = cubin.size()}),
                                  entry({.kind = 5, .payload = Bytes(8, 0)}),
                                  entry({.kind = 8, .arch = 75, .payload = Bytes(8, 0)})});
  for (unsigned threads : {1u, 3u}) {
    ScanOptions options;
    options.threads = threads;
    const ScanResult r = scan_bytes(fatbin, "mem.fatbin", options);
    ASSERT_EQ(r.images.size(), 5u);
    EXPECT_EQ(r.images[4].kind, ImageKind::lto_ir);
    ASSERT_TRUE(r.images[4].arch);
    EXPECT_EQ(r.images[4].arch->str(), "compute_75");
    EXPECT_EQ(r.images[1].compression, FatbinCompression::zstd);
    EXPECT_EQ(r.images[2].compression, FatbinCompression::lz4);
    EXPECT_EQ(r.images[3].kind, ImageKind::unknown);  // listed, not an error
    for (const auto& i : r.images) EXPECT_EQ(i.error, "") << i.error;
    const std::size_t n = r.images[0].kernel_count;
    ASSERT_GT(n, 3u);
    ASSERT_EQ(r.kernels.size(), 3 * n);
    for (std::size_t k = 0; k < n; ++k) {
      EXPECT_EQ(r.kernels[k].resources, r.kernels[n + k].resources);
      EXPECT_EQ(r.kernels[k].resources, r.kernels[2 * n + k].resources);
      EXPECT_EQ(r.kernels[k].bounds, r.kernels[2 * n + k].bounds);
    }
  }
  // --arch leaves other architectures undecompressed: a corrupt sm_80 entry is no error.
  const Bytes mixed = container({entry({.payload = cubin}), entry({.arch = 80,
                                                                   .flags = 0x8011,
                                                                   .payload = Bytes(16, 9),
                                                                   .compressed_size = 16,
                                                                   .decompressed_size = 1000})});
  ScanOptions only90;
  only90.arch = {Arch::parse("sm_90", "--arch")};
  const ScanResult r = scan_bytes(mixed, "mixed", only90);
  EXPECT_TRUE(r.images[1].skipped);
  EXPECT_EQ(r.images[1].error, "");
  const ScanResult all = scan_bytes(mixed, "mixed", {});
  EXPECT_NE(all.images[1].error.find("corrupt zstd"), std::string::npos) << all.images[1].error;
  EXPECT_EQ(all.images[0].error, "");
}

// on_image hands each image's kernels over on the thread that read it, as ScanResult has
// them; without keep_kernels the result keeps only the counts; what it throws ends the scan.
TEST(KernelScan, OnImageGetsEveryReadImageOnce) {
  const Bytes cubin = real_cubin();
  if (cubin.empty()) GTEST_SKIP() << "no nvcc-built test object at " << data_file("none.o");
  Bytes z(ZSTD_compressBound(cubin.size()));
  z.resize(ZSTD_compress(z.data(), z.size(), cubin.data(), cubin.size(), 3));
  std::vector<Bytes> entries;
  for (int i = 0; i < 12; ++i)
    entries.push_back(i % 2 ? entry({.flags = 0x8011,
                                     .payload = z,
                                     .compressed_size = static_cast<std::uint32_t>(z.size()),
                                     .decompressed_size = cubin.size()})
                            : entry({.payload = cubin}));
  entries.push_back(entry({.arch = 80, .payload = Bytes(cubin.begin(), cubin.begin() + 100)}));
  entries.push_back(entry({.kind = 1, .payload = Bytes(8, 'x')}));  // PTX: nothing to read
  const Bytes fatbin = container(entries);
  for (bool keep : {true, false}) {
    std::mutex mutex;
    std::map<std::size_t, std::vector<ScannedKernel>> seen;
    ScanOptions options;
    options.threads = 3;
    options.keep_kernels = keep;
    options.on_image = [&](const ImageKernels& done) {
      EXPECT_EQ(done.file.path, "mem.fatbin");
      EXPECT_EQ(done.info.kind, ImageKind::elf);
      const std::lock_guard<std::mutex> lock(mutex);
      EXPECT_TRUE(seen.emplace(done.image,
                               std::vector<ScannedKernel>(done.kernels.begin(), done.kernels.end()))
                      .second)
          << "image " << done.image << " handed over twice";
    };
    const ScanResult r = scan_bytes(fatbin, "mem.fatbin", options);
    ASSERT_EQ(r.images.size(), 14u);
    EXPECT_NE(r.images[12].error, "");  // truncated: an error, not handed over
    EXPECT_EQ(seen.size(), 12u);
    EXPECT_FALSE(seen.count(12) || seen.count(13));
    std::size_t flat = 0;
    for (const auto& [image, kernels] : seen) {
      EXPECT_EQ(r.images[image].kernel_count, kernels.size());
      ASSERT_GT(kernels.size(), 3u);
      for (const ScannedKernel& k : kernels) {
        EXPECT_EQ(k.image, image);
        if (keep) {
          ASSERT_LT(flat, r.kernels.size());
          EXPECT_EQ(r.kernels[flat].image, k.image);
          EXPECT_EQ(r.kernels[flat].resources, k.resources);
          EXPECT_EQ(r.kernels[flat].bounds, k.bounds);
        }
        ++flat;
      }
    }
    EXPECT_EQ(r.kernels.size(), keep ? flat : 0u);
  }
  ScanOptions throwing;
  throwing.threads = 2;
  throwing.on_image = [](const ImageKernels&) { throw std::runtime_error("renderer failed"); };
  EXPECT_THROW(scan_bytes(fatbin, "mem.fatbin", throwing), std::runtime_error);
}

// Entries whose compressed bytes repeat another's are read once (libcublasLt.so.13: 4,557
// of 5,832), and each gets the kernels under its own image, from on_image too, with the
// same CUBIN. Equal sizes with other bytes are read on their own, and an entry that fails
// fails again under its own offset.
TEST(KernelScan, RepeatedCompressedEntriesGiveEveryImageItsOwnKernels) {
  const Bytes cubin = real_cubin();
  if (cubin.empty()) GTEST_SKIP() << "no nvcc-built test object at " << data_file("none.o");
  Bytes z(ZSTD_compressBound(cubin.size()));
  z.resize(ZSTD_compress(z.data(), z.size(), cubin.data(), cubin.size(), 3));
  const Bytes good = entry({.flags = 0x8011,
                            .payload = z,
                            .compressed_size = static_cast<std::uint32_t>(z.size()),
                            .decompressed_size = cubin.size()});
  const auto corrupt = [](std::uint8_t fill) {
    return entry({.flags = 0x8011,
                  .payload = Bytes(16, fill),
                  .compressed_size = 16,
                  .decompressed_size = 1000});
  };
  const Bytes fatbin = container({good, entry({.payload = cubin}), good, corrupt(9), corrupt(7),
                                  good, corrupt(9), corrupt(7)});
  for (const unsigned threads : {1u, 3u})
    for (const bool keep : {true, false}) {
      std::mutex mutex;
      std::map<std::size_t, std::vector<ScannedKernel>> seen;
      ScanOptions options;
      options.threads = threads;
      options.keep_kernels = keep;
      options.on_image = [&](const ImageKernels& done) {
        EXPECT_TRUE(std::equal(done.cubin.begin(), done.cubin.end(), cubin.begin(), cubin.end()))
            << "image " << done.image;
        const std::lock_guard<std::mutex> lock(mutex);
        seen[done.image].assign(done.kernels.begin(), done.kernels.end());
      };
      const ScanResult r = scan_bytes(fatbin, "mem.fatbin", options);
      ASSERT_EQ(r.images.size(), 8u);
      ASSERT_EQ(seen.size(), 4u);
      const std::vector<ScannedKernel>& stored = seen.at(1);
      ASSERT_GT(stored.size(), 3u);
      for (const std::size_t i : {0u, 2u, 5u}) {
        EXPECT_EQ(r.images[i].error, "");
        EXPECT_EQ(r.images[i].kernel_count, stored.size());
        ASSERT_EQ(seen.at(i).size(), stored.size()) << "image " << i;
        for (std::size_t k = 0; k < stored.size(); ++k) {
          EXPECT_EQ(seen.at(i)[k].image, i);
          EXPECT_EQ(seen.at(i)[k].resources, stored[k].resources);
          EXPECT_EQ(seen.at(i)[k].bounds, stored[k].bounds);
        }
      }
      if (keep) {
        ASSERT_EQ(r.kernels.size(), 4 * stored.size());
        const std::size_t read_images[] = {0, 1, 2, 5};  // in image order
        for (std::size_t k = 0; k < r.kernels.size(); ++k)
          EXPECT_EQ(r.kernels[k].image, read_images[k / stored.size()]);
      } else {
        EXPECT_TRUE(r.kernels.empty());
      }
      for (const std::size_t i : {3u, 4u, 6u, 7u}) {
        EXPECT_NE(r.images[i].error.find("corrupt zstd"), std::string::npos) << r.images[i].error;
        EXPECT_NE(r.images[i].error.find("entry at offset " + hex(r.images[i].offset) + ":"),
                  std::string::npos)
            << r.images[i].error;
      }
    }
}

// A shared library's fatbin containers are found in .nv_fatbin and in any section of data
// (cuBLASLt's .cask_resource, cuFFT's .ldata, cuSPARSE's .rodata), never in code.
TEST(KernelScan, ContainersAreFoundInEverySectionOfDataNotInCode) {
  const Bytes c =
      container({entry({.payload = Bytes(8, 3)}), entry({.kind = 1, .payload = Bytes(8, 'x')})});
  Bytes padded(24, 0);
  padded.insert(padded.end(), c.begin(), c.end());
  const Bytes library = host_elf({{".text", 6, padded},
                                  {".rodata", 2, padded},
                                  {".nv_fatbin", 2, c},
                                  {".cask_resource", 2, padded},
                                  {".data", 3, padded}});
  const ScanResult r = scan_bytes(library, "lib.so", {});
  std::vector<std::string> sections;
  for (const ScannedImage& i : r.images) sections.push_back(i.section);
  EXPECT_EQ(sections,
            (std::vector<std::string>{".rodata", ".rodata", ".nv_fatbin", ".nv_fatbin",
                                      ".cask_resource", ".cask_resource", ".data", ".data"}));
  // The same container in code alone: no CUDA code.
  const ScanResult code = scan_bytes(host_elf({{".text", 6, padded}}), "code.so", {});
  EXPECT_TRUE(code.images.empty());
  EXPECT_FALSE(code.files[0].has_cuda_code);
}

// A fatbin section is searched with the others, on all threads, and what is found must
// tile it (containers one after another, zeros around them): anything else is read as the
// sequence it must be, with that reading's errors, as before the search took it on.
TEST(KernelScan, AFatbinSectionIsItsContainersOneAfterAnother) {
  const Bytes a = container({entry({.payload = Bytes(8, 3)}), entry({.payload = Bytes(16, 4)})});
  const Bytes b = container({entry({.kind = 1, .payload = Bytes(8, 'x')})});
  const auto section = [](std::vector<Bytes> parts) {
    Bytes out;
    for (const Bytes& part : parts) out.insert(out.end(), part.begin(), part.end());
    return out;
  };
  const auto offsets = [](const ScanResult& r) {
    std::vector<std::uint64_t> at;
    for (const ScannedImage& i : r.images) at.push_back(i.container_offset);
    return at;
  };
  const auto scan = [](const Bytes& fatbin) {
    ScanOptions options;
    options.threads = 3;
    return scan_bytes(host_elf({{".rodata", 2, Bytes(64, 7)}, {".nv_fatbin", 2, fatbin}}), "lib.so",
                      options);
  };
  // Back to back, and with zero padding between (8 bytes, then 3: the next container
  // unaligned, which the search does not look at) and after the last.
  for (const auto& [pad1, pad2, tail] : {std::tuple{0, 0, 0}, std::tuple{8, 3, 40}}) {
    const ScanResult r = scan(section({a, Bytes(pad1, 0), b, Bytes(pad2, 0), a, Bytes(tail, 0)}));
    ASSERT_EQ(r.images.size(), 5u);
    const std::uint64_t first = r.images[0].container_offset;
    const std::uint64_t second = first + a.size() + pad1, third = second + b.size() + pad2;
    EXPECT_EQ(offsets(r), (std::vector<std::uint64_t>{first, first, second, third, third}));
    for (const ScannedImage& i : r.images) EXPECT_EQ(i.section, ".nv_fatbin");
  }
  // Anything else between them is an error naming where, as a sequence reads it.
  EXPECT_NE(error_of([&] {
              scan(section({a, Bytes(8, 9), b}));
            }).find("no fatbin magic"),
            std::string::npos);
  // So is a container that runs past the section's end (the search alone would take it).
  Bytes cut = section({a, b});
  cut.resize(cut.size() - 8);
  EXPECT_FALSE(error_of([&] { scan(cut); }).empty());
}

TEST(KernelScan, EveryTruncationOfARealCubinIsAnEntryErrorNeverACrash) {
  const Bytes cubin = real_cubin();
  if (cubin.empty()) GTEST_SKIP() << "no nvcc-built test object at " << data_file("none.o");
  for (std::size_t n = 1; n < cubin.size(); n += 97) {
    const Bytes fatbin =
        container({entry({.payload = Bytes(cubin.begin(), cubin.begin() + static_cast<long>(n))})});
    const ScanResult r = scan_bytes(fatbin, "t", {});
    ASSERT_EQ(r.images.size(), 1u);
    EXPECT_NE(r.images[0].error, "") << n;
  }
}

TEST(KernelScan, WhatIsNotACudaBinaryIsSaidSo) {
  const std::string text = "hello, world";
  EXPECT_NE(error_of([&] {
              scan_bytes(Bytes(text.begin(), text.end()), "hello.txt", {});
            }).find("not a CUDA binary"),
            std::string::npos);
  EXPECT_THROW(scan_bytes({}, "empty", {}), UsageError);
  Bytes elf(64, 0);
  std::memcpy(elf.data(),
              "\x7f"
              "ELF\x02\x01",
              6);
  put<std::uint16_t>(elf, 18, 62);
  const ScanResult r = scan_bytes(elf, "host", {});
  ASSERT_EQ(r.files.size(), 1u);
  EXPECT_FALSE(r.files[0].has_cuda_code);
  EXPECT_NE(r.files[0].note.find("no CUDA code"), std::string::npos);
  // A section table past the end.
  put<std::uint64_t>(elf, 40, 1ull << 40);
  put<std::uint16_t>(elf, 58, 64);
  put<std::uint16_t>(elf, 60, 3);
  EXPECT_THROW(scan_bytes(elf, "host", {}), UsageError);
}

std::vector<Arch> filters(std::initializer_list<const char*> names) {
  std::vector<Arch> out;
  for (const char* name : names) out.push_back(Arch::parse(name, "--arch"));
  return out;
}

// An image's architecture, as a fatbin entry or CUBIN gives it.
std::optional<Arch> image(const char* name) {
  return Arch::parse(name, "test");
}

TEST(KernelScan, ArchFilters) {
  EXPECT_TRUE(arch_matches(image("sm_90a"), filters({"sm_90"})));
  EXPECT_TRUE(arch_matches(image("sm_90"), filters({"sm_80", "sm_90"})));
  EXPECT_TRUE(arch_matches(image("sm_90"), filters({"9.0"})));
  EXPECT_FALSE(arch_matches(image("sm_90"), filters({"sm_90a"})));
  EXPECT_TRUE(arch_matches(image("sm_100f"), filters({"sm_100f"})));
  EXPECT_FALSE(arch_matches(image("sm_100"), filters({"sm_10"})));
  EXPECT_TRUE(arch_matches(image("compute_90"), filters({"sm_90"})));
  EXPECT_FALSE(arch_matches(image("sm_90"), filters({"compute_90"})));
  // An image whose number is outside the grammar (sm_9 in a malformed fatbin entry) passes
  // nothing, nor does one of no architecture (an entry of unknown kind).
  Arch sm_9;
  sm_9.cc = {0, 9};
  EXPECT_EQ(sm_9.str(), "sm_9");
  EXPECT_FALSE(arch_matches(sm_9, filters({"sm_90", "9.0"})));
  EXPECT_FALSE(arch_matches(std::nullopt, filters({"sm_90"})));
}

}  // namespace
}  // namespace cudatool
