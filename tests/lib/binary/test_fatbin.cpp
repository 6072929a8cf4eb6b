// The fatbin reader on containers built in memory (fatbin_builder.hpp): containers and
// entries (plain, zstd, LZ4, and every kind of damage), the search for containers, and the
// capped decompression. The scan over them is test_kernel_scan.cpp's.
#include <gtest/gtest.h>
#include <lz4.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "binary/byte_reader.hpp"
#include "binary/fatbin.hpp"
#include "binary_samples.hpp"
#include "cudatool/base/error.hpp"
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

// A corrupt zstd entry fails with one error whatever the thread read before it. The frame
// declares 300 bytes (4 KiB window) and holds one block of 1,000 raw literals: a fresh
// streaming context has room for the 300 ("Destination buffer is too small"), one that had
// read a 64 KiB frame first had room for the block and failed later ("Data corruption
// detected"), so `cudatool compat` named either, as the scheduling fell (m097_rdc.o).
TEST(Fatbin, CorruptZstdEntryFailsAlikeWhateverWasReadBefore) {
  Bytes frame = {0x28, 0xb5, 0x2f, 0xfd, 0x40, 0x10, 300 - 256, 0};
  const std::uint32_t block = 1 | 2 << 1 | (2 + 1000 + 1) << 3;  // last, compressed
  frame.insert(frame.end(),
               {static_cast<std::uint8_t>(block), static_cast<std::uint8_t>(block >> 8),
                static_cast<std::uint8_t>(block >> 16)});
  frame.insert(frame.end(), {(1 << 2) | (1000 & 0xf) << 4, 1000 >> 4});  // raw, 1,000 bytes
  frame.insert(frame.end(), 1000, 'x');
  frame.push_back(0);  // no sequences
  FatbinEntry corrupt;
  corrupt.arch = Arch::parse("sm_90", "test");
  corrupt.compression = FatbinCompression::zstd;
  corrupt.payload = frame;
  corrupt.decompressed_size = 300;
  Bytes text(64 << 10);
  for (std::size_t i = 0; i < text.size(); ++i) text[i] = static_cast<std::uint8_t>(i * 7 / 13);
  Bytes packed(ZSTD_compressBound(text.size()));
  packed.resize(ZSTD_compress(packed.data(), packed.size(), text.data(), text.size(), 3));
  FatbinEntry larger = corrupt;
  larger.arch = Arch::parse("sm_100", "test");
  larger.payload = packed;
  larger.decompressed_size = text.size();

  const std::string expected = error_of([&] { Decompressor().prefix(corrupt, 64, "f"); });
  EXPECT_NE(expected.find("corrupt zstd data"), std::string::npos) << expected;
  // `kernels` (the whole entry) and `compat` (its first bytes) name the same error.
  EXPECT_EQ(error_of([&] { Decompressor().contents(corrupt, "f"); }), expected);
  // One thread's decompressor, in either order, again and again.
  Decompressor reused;
  for (int round = 0; round < 3; ++round) {
    EXPECT_EQ(reused.prefix(larger, 64, "f").size(), 64u);
    EXPECT_EQ(error_of([&] { reused.prefix(corrupt, 64, "f"); }), expected) << round;
    EXPECT_EQ(error_of([&] { reused.prefix(corrupt, 64, "f"); }), expected) << round;
    EXPECT_EQ(reused.contents(larger, "f").size(), text.size());
    EXPECT_EQ(error_of([&] { reused.prefix(corrupt, 64, "f"); }), expected) << round;
  }
  // Threads of their own, half reading the larger entry first.
  std::vector<std::string> errors(8);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < errors.size(); ++t)
    threads.emplace_back([&, t] {
      Decompressor d;
      if (t % 2 == 1) d.prefix(larger, 64, "f");
      errors[t] = error_of([&] { d.prefix(corrupt, 64, "f"); });
    });
  for (std::thread& t : threads) t.join();
  for (std::size_t t = 0; t < errors.size(); ++t) EXPECT_EQ(errors[t], expected) << "thread " << t;
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
