// The binary readers under `cudatool kernels` on inputs built in memory: the checked byte
// reader, fatbin containers and entries (plain, zstd, LZ4, and every kind of damage), ar
// archives, and the scan engine over them. Real CUBINs come from the nvcc-built test
// object (tests/CMakeLists.txt); tests that need one skip where nvcc was not there.
#include <gtest/gtest.h>
#include <lz4.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "binary/archive.hpp"
#include "binary/byte_reader.hpp"
#include "binary/elf.hpp"
#include "binary/fatbin.hpp"
#include "cudatool/base/error.hpp"
#include "cudatool/binary/kernel_scan.hpp"
#include "fatbin_builder.hpp"

namespace cudatool {
namespace {

using testing::Bytes;
using testing::container;
using testing::entry;
using testing::EntrySpec;
using testing::host_elf;
using testing::put;

Bytes read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), {});
}

std::string data_file(const std::string& name) {
  return std::string(CUDATOOL_KERNELS_DATA) + "/" + name;
}

// The uncompressed sm_90 CUBIN of the nvcc-built test object, or empty.
Bytes real_cubin() {
  const Bytes object = read_file(data_file("none.o"));
  if (object.empty()) return {};
  const ByteReader r(object, "none.o");
  for (const FatbinContainer& c : find_fatbin_containers(r, 0, r.size()))
    for (const FatbinEntry& e : c.entries)
      if (e.kind == 2 && e.arch.str() == "sm_90") return Bytes(e.payload.begin(), e.payload.end());
  return {};
}

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(ByteReader, EveryReadIsCheckedAndErrorsNameSourceOffsetAndWhat) {
  const Bytes data{1, 2, 3, 4, 5, 6, 7, 8, 9};
  const ByteReader r(data, "file.bin", 0x100);
  EXPECT_EQ(r.u32(1, "x"), 0x05040302u);  // little-endian at an odd offset
  EXPECT_EQ(r.u64(1, "x"), 0x0908070605040302ull);
  EXPECT_THROW(r.u64(2, "x"), UsageError);
  EXPECT_THROW(r.bytes(UINT64_MAX - 2, 8, "x"), UsageError);  // offset + length overflows
  EXPECT_THROW(r.bytes(4, UINT64_MAX, "x"), UsageError);
  EXPECT_NO_THROW(r.bytes(9, 0, "x"));
  const std::string e = error_of([&] { r.u32(7, "section header 3"); });
  EXPECT_NE(e.find("file.bin"), std::string::npos) << e;
  EXPECT_NE(e.find("section header 3"), std::string::npos) << e;
  EXPECT_NE(e.find("0x107"), std::string::npos) << e;
  const Bytes text{'a', 'b', 0, 'c'};
  EXPECT_EQ(ByteReader(text, "t").c_string(0, "s"), "ab");
  EXPECT_THROW(ByteReader(text, "t").c_string(3, "s"), UsageError);  // no terminator
  EXPECT_THROW(ByteReader(text, "t").c_string(4, "s"), UsageError);
}

TEST(Fatbin, ReadsEntriesOfEveryKindAndNamesTheirArchitectures) {
  const Bytes b =
      container({entry({.kind = 2, .arch = 90, .flags = 0x100011, .payload = Bytes(24, 7)}),
                 entry({.kind = 1, .arch = 100, .payload = Bytes(9, 'x')}),
                 entry({.kind = 9, .arch = 80, .payload = Bytes(8, 0)}),
                 entry({.kind = 2, .arch = 120, .flags = 0x200011, .payload = Bytes(8, 1)}),
                 entry({.kind = 8, .arch = 75, .payload = Bytes(8, 2)})});
  const FatbinContainer c = read_fatbin_container(ByteReader(b, "f"), 0);
  ASSERT_EQ(c.entries.size(), 5u);
  // Issue 39 (also seen): warp.so's kind-8 entry, LTO-IR for compute_75, is named.
  EXPECT_EQ(c.entries[4].image_kind(), ImageKind::lto_ir);
  EXPECT_EQ(c.entries[4].arch, Arch::parse("compute_75", "test"));
  EXPECT_EQ(c.entries[0].arch, Arch::parse("sm_90a", "test"));
  EXPECT_EQ(c.entries[0].payload.size(), 24u);
  EXPECT_EQ(c.entries[1].arch, Arch::parse("compute_100", "test"));
  EXPECT_EQ(c.entries[1].image_kind(), ImageKind::ptx);
  EXPECT_EQ(c.entries[2].image_kind(), ImageKind::unknown);
  EXPECT_EQ(c.entries[3].arch, Arch::parse("sm_120f", "test"));
  EXPECT_EQ(c.size, b.size());
}

TEST(Fatbin, RefusesSizesPastTheEndAndAbsurdHeaders) {
  Bytes b = container({entry({.payload = Bytes(16, 1)})});
  // The container's size points past the end.
  Bytes past = b;
  put<std::uint64_t>(past, 8, 1ull << 40);
  EXPECT_NE(error_of([&] { read_fatbin_container(ByteReader(past, "f"), 0); }).find("past the end"),
            std::string::npos);
  // An entry payload size past the container.
  Bytes payload = b;
  put<std::uint64_t>(payload, 16 + 8, 1ull << 62);
  EXPECT_THROW(read_fatbin_container(ByteReader(payload, "f"), 0), UsageError);
  // An absurd entry header size.
  Bytes header = b;
  put<std::uint32_t>(header, 16 + 4, 0xffffffffu);
  EXPECT_NE(error_of([&] { read_fatbin_container(ByteReader(header, "f"), 0); }).find("absurd"),
            std::string::npos);
  put<std::uint32_t>(header, 16 + 4, 8);
  EXPECT_THROW(read_fatbin_container(ByteReader(header, "f"), 0), UsageError);
  // Version and header size.
  Bytes version = b;
  put<std::uint16_t>(version, 4, 2);
  EXPECT_THROW(read_fatbin_container(ByteReader(version, "f"), 0), UsageError);
  // Every truncation of a container fails cleanly.
  for (std::size_t n = 0; n < b.size(); ++n)
    EXPECT_THROW(read_fatbin_container(ByteReader(std::span(b).first(n), "f"), 0), UsageError) << n;
  // A compressed size larger than the payload.
  Bytes compressed = container({entry(
      {.flags = 0x8011, .payload = Bytes(16, 1), .compressed_size = 17, .decompressed_size = 64})});
  EXPECT_THROW(read_fatbin_container(ByteReader(compressed, "f"), 0), UsageError);
}

TEST(Fatbin, ScanFindsContainersAnywhereAndIgnoresStrayMagic) {
  Bytes b(40, 0);
  put<std::uint32_t>(b, 8, kFatbinMagic);  // a stray magic with nothing valid behind it
  const Bytes c = container({entry({.payload = Bytes(8, 3)})});
  b.insert(b.end(), c.begin(), c.end());
  b.resize(b.size() + 24, 0xee);
  const auto found = find_fatbin_containers(ByteReader(b, "f"), 0, b.size());
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].offset, 40u);
}

// Offsets and sizes of what a scan found, to compare two scans.
std::vector<std::pair<std::uint64_t, std::uint64_t>> extents(
    const std::vector<FatbinContainer>& found) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
  for (const auto& c : found) out.emplace_back(c.offset, c.size);
  return out;
}

TEST(Fatbin, ScanSplitIntoChunksFindsWhatTheSinglePassFinds) {
  // Filler with stray magic, real containers at odd places, and a container whose plain
  // entry holds a whole other container: the single pass skips over that inner one (it is
  // part of the outer container), but a chunk that starts inside the outer container sees
  // a valid container there and must not report it.
  const Bytes inner = container({entry({.payload = Bytes(40, 5)})});
  const Bytes outer =
      container({entry({.kind = 7, .payload = inner}), entry({.payload = Bytes(200, 1)})});
  const Bytes small = container({entry({.payload = Bytes(8, 3)})});
  Bytes b(24, 0xab);
  put<std::uint32_t>(b, 8, kFatbinMagic);
  for (const Bytes* part : {&outer, &small, &outer, &inner, &small}) {
    b.insert(b.end(), part->begin(), part->end());
    b.resize(b.size() + 16 + (b.size() % 3) * 8, 0x11);
    put<std::uint32_t>(b, b.size() - 8, kFatbinMagic);
  }
  const ByteReader r(b, "chunks");
  const auto single = extents(find_fatbin_containers(r, 0, b.size()));
  ASSERT_EQ(single.size(), 5u);
  for (std::uint64_t chunk = 8; chunk <= 512; chunk += 8)
    for (unsigned threads : {1u, 3u})
      ASSERT_EQ(extents(find_fatbin_containers(
                    r, 0, b.size(), {.threads = threads, .chunk_bytes = chunk, .after_chunk = {}})),
                single)
          << "chunks of " << chunk << " bytes on " << threads << " threads";
  // A range that starts or ends inside a container: the same as the single pass there.
  for (std::uint64_t begin : {0u, 8u, 40u, 400u})
    for (std::uint64_t end : {b.size(), b.size() - 100, std::size_t{600}})
      ASSERT_EQ(extents(find_fatbin_containers(
                    r, begin, end, {.threads = 2, .chunk_bytes = 16, .after_chunk = {}})),
                extents(find_fatbin_containers(r, begin, end)))
          << begin << ".." << end;
  // Several ranges at once (the sections of a file): each as its own single pass, and each
  // scanned chunk handed back once.
  const std::vector<ScanRange> ranges = {{0, 200}, {200, 208}, {208, b.size()}, {40, 40}, {8, 600}};
  std::uint64_t handed_back = 0;
  std::mutex m;
  const auto all = find_fatbin_containers(
      r, ranges, {.threads = 3, .chunk_bytes = 24, .after_chunk = [&](auto bytes) {
                    const std::lock_guard<std::mutex> lock(m);
                    handed_back += bytes.size();
                  }});
  ASSERT_EQ(all.size(), ranges.size());
  std::uint64_t total = 0;
  for (std::size_t k = 0; k < ranges.size(); ++k) {
    EXPECT_EQ(extents(all[k]), extents(find_fatbin_containers(r, ranges[k].begin, ranges[k].end)))
        << "range " << k;
    total += ranges[k].end - ranges[k].begin;
  }
  EXPECT_EQ(handed_back, total);
}

TEST(Fatbin, DecompressionIsCappedBeforeAllocatingAndSizesAreExact) {
  EXPECT_EQ(decompression_cap(100), 3000u + (128u << 20));
  EXPECT_EQ(decompression_cap(UINT64_MAX), UINT64_MAX);
  Decompressor buffer;
  // A zstd bomb: a tiny frame declaring 1 TiB.
  Bytes tiny(64, 0);
  const Bytes zeros(1 << 20, 0);
  tiny.resize(ZSTD_compressBound(zeros.size()));
  tiny.resize(ZSTD_compress(tiny.data(), tiny.size(), zeros.data(), zeros.size(), 3));
  FatbinEntry bomb;
  bomb.arch = Arch::parse("sm_90", "test");
  bomb.compression = FatbinCompression::zstd;
  bomb.payload = tiny;
  bomb.decompressed_size = 1ull << 40;
  EXPECT_NE(error_of([&] { buffer.contents(bomb, "f"); }).find("decompression bomb"),
            std::string::npos);
  EXPECT_EQ(buffer.capacity(), 0u);  // refused before allocating
  // The right size decompresses; a wrong one is refused.
  bomb.decompressed_size = zeros.size();
  EXPECT_EQ(buffer.contents(bomb, "f").size(), zeros.size());
  bomb.decompressed_size = zeros.size() - 1;
  EXPECT_THROW(buffer.contents(bomb, "f"), UsageError);
  // Corrupt zstd and LZ4 data.
  Bytes garbage(100);
  for (std::size_t i = 0; i < garbage.size(); ++i)
    garbage[i] = static_cast<std::uint8_t>(i * 37 + 11);
  FatbinEntry corrupt;
  corrupt.arch = Arch::parse("sm_90", "test");
  corrupt.compression = FatbinCompression::zstd;
  corrupt.payload = garbage;
  corrupt.decompressed_size = 4096;
  EXPECT_NE(error_of([&] { buffer.contents(corrupt, "f"); }).find("corrupt zstd"),
            std::string::npos);
  Bytes frame = tiny;  // a frame cut short
  frame.resize(frame.size() - 3);
  corrupt.payload = frame;
  corrupt.decompressed_size = zeros.size();
  EXPECT_THROW(buffer.contents(corrupt, "f"), UsageError);
  corrupt.compression = FatbinCompression::lz4;
  corrupt.payload = garbage;
  EXPECT_NE(error_of([&] { buffer.contents(corrupt, "f"); }).find("corrupt LZ4"),
            std::string::npos);
}

// The decompression buffer: a huge one starts on a huge-page boundary and every byte is
// writable; small ones and moves work as memory does.
TEST(Fatbin, PageBufferIsWritableWholeAndHugeOnesAreAligned) {
  for (const std::size_t size : {std::size_t{1}, std::size_t{4096}, std::size_t{(2u << 20) - 1},
                                 std::size_t{2u << 20}, std::size_t{(5u << 20) + 3}}) {
    PageBuffer buffer(size);
    ASSERT_NE(buffer.data(), nullptr);
    if (size >= (2u << 20)) {
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(buffer.data()) % (2u << 20), 0u) << size;
    }
    std::memset(buffer.data(), 0xab, size);
    EXPECT_EQ(buffer.data()[size - 1], 0xab);
    PageBuffer moved(std::move(buffer));
    EXPECT_EQ(buffer.data(), nullptr);
    EXPECT_EQ(moved.data()[0], 0xab);
    buffer = std::move(moved);
    EXPECT_EQ(buffer.data()[size / 2], 0xab);
  }
  EXPECT_EQ(PageBuffer(0).data(), nullptr);
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

TEST(Archive, ReadsMembersWithShortAndLongNames) {
  const std::string long_name = "a_rather_long_object_name.o";
  std::string a = "!<arch>\n";
  const auto header = [](std::string name, std::size_t size) {
    char h[61];
    std::snprintf(h, sizeof h, "%-16s%-12s%-6s%-6s%-8s%-10zu`\n", name.c_str(), "0", "0", "0",
                  "644", size);
    return std::string(h, 60);
  };
  const std::string names = long_name + "/\n";
  a += header("//", names.size()) + names + "\n";  // members are 2-byte aligned
  a += header("short.o/", 3) + "abc" + "\n";
  a += header("/0", 4) + "wxyz";
  const Bytes bytes(a.begin(), a.end());
  const auto members = read_ar_archive(ByteReader(bytes, "lib.a"));
  ASSERT_EQ(members.size(), 2u);
  EXPECT_EQ(members[0].name, "short.o");
  EXPECT_EQ(members[0].data.size(), 3u);
  EXPECT_EQ(members[1].name, long_name);
  EXPECT_EQ(members[1].data.size(), 4u);
  // A member size past the end, a broken terminator, a thin archive.
  std::string past = "!<arch>\n" + header("x.o/", 1000) + "abc";
  EXPECT_THROW(read_ar_archive(ByteReader(Bytes(past.begin(), past.end()), "lib.a")), UsageError);
  std::string broken = "!<arch>\n" + header("x.o/", 3) + "abc";
  broken[8 + 58] = 'x';
  EXPECT_THROW(read_ar_archive(ByteReader(Bytes(broken.begin(), broken.end()), "lib.a")),
               UsageError);
  std::string thin = "!<thin>\n";
  EXPECT_THROW(read_ar_archive(ByteReader(Bytes(thin.begin(), thin.end()), "lib.a")), UsageError);
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

// A fatbin entry's architecture holds its number whatever it is (0 to 100000), so that an
// entry outside the grammar is named as it is written.
TEST(Fatbin, EntryArchitecturesOutsideTheGrammarKeepTheirNumber) {
  const Bytes b =
      container({entry({.kind = 2, .arch = 5, .payload = Bytes(8, 1)}),
                 entry({.kind = 1, .arch = 1234, .flags = 0x100000, .payload = Bytes(8, 'x')}),
                 entry({.kind = 2, .arch = 100000, .flags = 0x200000, .payload = Bytes(8, 2)})});
  const FatbinContainer c = read_fatbin_container(ByteReader(b, "f"), 0);
  ASSERT_EQ(c.entries.size(), 3u);
  EXPECT_EQ(c.entries[0].arch.str(), "sm_5");
  EXPECT_EQ(c.entries[1].arch.str(), "compute_1234a");
  EXPECT_EQ(c.entries[2].arch.str(), "sm_100000f");
  EXPECT_EQ(c.entries[2].arch.number(), 100000);
}

}  // namespace
}  // namespace cudatool
