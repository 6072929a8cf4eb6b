#include "binary/fatbin.hpp"

#include <lz4.h>
#include <sys/mman.h>
#include <zstd.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>

#include "cudatool/base/error.hpp"
#include "cudatool/base/parallel.hpp"

namespace cudatool {
namespace {

constexpr std::uint64_t kContainerHeaderSize = 16;
constexpr std::uint64_t kMinEntryHeaderSize = 64;
constexpr std::uint64_t kFlagLz4 = 0x2000;
constexpr std::uint64_t kFlagZstd = 0x8000;
constexpr std::uint64_t kFlagArchA = 0x100000;
constexpr std::uint64_t kFlagArchF = 0x200000;

}  // namespace

ImageKind FatbinEntry::image_kind() const {
  switch (kind) {
    case 1:
      return ImageKind::ptx;
    case 2:
      return ImageKind::elf;
    case 8:
      return ImageKind::lto_ir;
    default:
      return ImageKind::unknown;
  }
}

bool looks_like_fatbin_container(const ByteReader& r, std::uint64_t offset) {
  if (!r.contains(offset, kContainerHeaderSize)) return false;
  if (r.u32(offset, "fatbin magic") != kFatbinMagic) return false;
  if (r.u16(offset + 4, "fatbin version") != 1) return false;
  if (r.u16(offset + 6, "fatbin header size") != kContainerHeaderSize) return false;
  const std::uint64_t size = r.u64(offset + 8, "fatbin size");
  return size >= kMinEntryHeaderSize && r.contains(offset + kContainerHeaderSize, size);
}

FatbinContainer read_fatbin_container(const ByteReader& r, std::uint64_t offset) {
  const std::uint32_t magic = r.u32(offset, "fatbin container header");
  if (magic != kFatbinMagic) r.fail(offset, "no fatbin magic (0xba55ed50)");
  const std::uint16_t version = r.u16(offset + 4, "fatbin container version");
  if (version != 1)
    r.fail(offset + 4, "fatbin container version " + std::to_string(version) + " (known: 1)");
  const std::uint16_t header_size = r.u16(offset + 6, "fatbin container header size");
  if (header_size != kContainerHeaderSize)
    r.fail(offset + 6,
           "fatbin container header size " + std::to_string(header_size) + " (known: 16)");
  const std::uint64_t size = r.u64(offset + 8, "fatbin container size");
  const ByteReader body = r.sub(offset + kContainerHeaderSize, size, "fatbin container entries");
  FatbinContainer c;
  c.offset = r.origin() + offset;
  c.size = kContainerHeaderSize + size;
  std::uint64_t p = 0;
  while (p < body.size()) {
    if (body.size() - p < kMinEntryHeaderSize) {
      // Trailing padding is allowed; anything else is not an entry.
      for (auto b : body.bytes(p, body.size() - p, "fatbin padding"))
        if (b != 0) body.fail(p, "fatbin entry header truncated");
      break;
    }
    FatbinEntry e;
    e.offset = body.origin() + p;
    e.kind = body.u16(p, "fatbin entry kind");
    const std::uint32_t entry_header = body.u32(p + 4, "fatbin entry header size");
    const std::uint64_t payload_size = body.u64(p + 8, "fatbin entry payload size");
    if (e.kind == 0 && entry_header == 0 && payload_size == 0) break;  // zero padding
    if (entry_header < kMinEntryHeaderSize || entry_header > 4096)
      body.fail(p + 4, "fatbin entry header size " + std::to_string(entry_header) + " is absurd");
    body.bytes(p, entry_header, "fatbin entry header");
    e.payload = body.bytes(p + entry_header, payload_size, "fatbin entry payload");
    e.footprint = entry_header + payload_size;
    const std::uint32_t compressed = body.u32(p + 16, "fatbin entry compressed size");
    const std::uint32_t sm = body.u32(p + 28, "fatbin entry architecture");
    e.flags = body.u64(p + 40, "fatbin entry flags");
    if (e.kind == 1) {
      const std::uint16_t minor = body.u16(p + 24, "fatbin entry PTX version");
      const std::uint16_t major = body.u16(p + 26, "fatbin entry PTX version");
      if (major > 0 && major < 100 && minor < 100) e.ptx_version = PtxVersion{major, minor};
    }
    e.decompressed_size = body.u64(p + 56, "fatbin entry decompressed size");
    if (e.flags & kFlagZstd)
      e.compression = FatbinCompression::zstd;
    else if (e.flags & kFlagLz4)
      e.compression = FatbinCompression::lz4;
    if (e.compression != FatbinCompression::none) {
      if (compressed == 0 || compressed > payload_size)
        body.fail(p + 16, "fatbin entry compressed size " + std::to_string(compressed) +
                              " does not fit its payload of " + std::to_string(payload_size) +
                              " bytes");
      e.payload = e.payload.first(compressed);
    } else {
      e.decompressed_size = payload_size;
    }
    // Read as an int, as it was: a value above INT_MAX reads as negative.
    const int number = static_cast<int>(sm);
    if (number < 0 || number > 100000)
      body.fail(p + 28, "fatbin entry architecture " + std::to_string(number) + " is absurd");
    // PTX and LTO-IR are for a virtual architecture (compute_80, lto_80).
    e.arch.code = e.kind == 1 || e.kind == 8 ? Arch::Code::ptx : Arch::Code::sass;
    e.arch.cc = {number / 10, number % 10};
    if (e.flags & kFlagArchA)
      e.arch.variant = Arch::Variant::a;
    else if (e.flags & kFlagArchF)
      e.arch.variant = Arch::Variant::f;
    c.entries.push_back(std::move(e));
    p += entry_header + payload_size;
  }
  return c;
}

namespace {

constexpr std::uint64_t align8(std::uint64_t p) {
  return (p + 7) & ~std::uint64_t(7);
}

// The container at `p` (8-byte aligned, inside the data), or nothing: the magic first,
// then the whole header and entries must read (bytes that merely match the magic are not
// a container).
std::optional<FatbinContainer> container_at(const ByteReader& r, const std::uint8_t* data,
                                            std::uint64_t p) {
  // The magic's first byte, little-endian: 0x50.
  if (data[p] != 0x50 || data[p + 1] != 0xED || data[p + 2] != 0x55 || data[p + 3] != 0xBA ||
      !looks_like_fatbin_container(r, p))
    return std::nullopt;
  try {
    FatbinContainer c = read_fatbin_container(r, p);
    if (!c.entries.empty()) return c;
  } catch (const InputError&) {
    // Bytes that look like a header but do not hold entries: not a container.
  }
  return std::nullopt;
}

// The first 8-byte-aligned offset in [from, to) of `data` where the magic is, or `to`
// (`from` aligned; four bytes readable at each offset before `to`). Most of a searched
// section holds no magic: 64 bytes are tested at once (SSE2), where word by word the loop
// took 1.5% of a one-thread scan of libcublasLt.so.13.
#if defined(__x86_64__)
// The same search 128 bytes at a time where the CPU has AVX2 (chosen at run time): `compat`
// searches every data section of every library, and the search was a quarter of its time.
__attribute__((target("avx2"))) std::uint64_t next_magic_avx2(const std::uint8_t* data,
                                                              std::uint64_t p, std::uint64_t to) {
  const __m256i magic = _mm256_set1_epi32(static_cast<int>(kFatbinMagic));
  for (; p < to && to - p >= 128; p += 128) {
    const auto* b = reinterpret_cast<const __m256i*>(data + p);
    // (No lambda: it would not inherit the function's target.)
    const __m256i e0 = _mm256_cmpeq_epi32(_mm256_loadu_si256(b), magic);
    const __m256i e1 = _mm256_cmpeq_epi32(_mm256_loadu_si256(b + 1), magic);
    const __m256i e2 = _mm256_cmpeq_epi32(_mm256_loadu_si256(b + 2), magic);
    const __m256i e3 = _mm256_cmpeq_epi32(_mm256_loadu_si256(b + 3), magic);
    const __m256i any = _mm256_or_si256(_mm256_or_si256(e0, e1), _mm256_or_si256(e2, e3));
    // Lanes 0, 2, 4, 6: the first four bytes of each 8-byte-aligned word.
    if (_mm256_movemask_ps(_mm256_castsi256_ps(any)) & 0x55) break;
  }
  return p;
}
#endif

std::uint64_t next_magic(const std::uint8_t* data, std::uint64_t from, std::uint64_t to) {
  std::uint64_t p = from;
#if defined(__x86_64__)
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (avx2) p = next_magic_avx2(data, p, to);
#endif
#if defined(__SSE2__)
  const __m128i magic = _mm_set1_epi32(static_cast<int>(kFatbinMagic));
  const auto equal = [&](const std::uint8_t* at) {
    return _mm_cmpeq_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(at)), magic);
  };
  for (; p < to && to - p >= 64; p += 64) {
    const std::uint8_t* b = data + p;
    const __m128i any = _mm_or_si128(_mm_or_si128(equal(b), equal(b + 16)),
                                     _mm_or_si128(equal(b + 32), equal(b + 48)));
    // Lanes 0 and 2: the first four bytes of each 8-byte-aligned word.
    if (_mm_movemask_ps(_mm_castsi128_ps(any)) & 0x5) break;
  }
#endif
  for (; p < to; p += 8) {
    std::uint32_t word;
    std::memcpy(&word, data + p, sizeof word);
    if (word == kFatbinMagic) return p;
  }
  return to;
}

// One pass from `begin` (aligned) while the offset is before `end`: a container found is
// skipped over whole, and may run past `end`. `local` gets each one's offset in `r`.
std::vector<FatbinContainer> scan_pass(const ByteReader& r, std::uint64_t begin, std::uint64_t end,
                                       std::vector<std::uint64_t>& local) {
  std::vector<FatbinContainer> found;
  const std::uint8_t* data = r.all().data();
  // The last offset a container header fits at, plus one.
  if (r.size() < kContainerHeaderSize) return found;
  const std::uint64_t stop = std::min<std::uint64_t>(end, r.size() - kContainerHeaderSize + 1);
  std::uint64_t p = align8(begin);
  while (p < stop) {
    p = next_magic(data, p, stop);
    if (p >= stop) break;
    if (auto c = container_at(r, data, p)) {
      local.push_back(p);
      p = align8(p + c->size);
      found.push_back(std::move(*c));
      continue;
    }
    p += 8;
  }
  return found;
}

}  // namespace

std::vector<FatbinContainer> find_fatbin_containers(const ByteReader& r, std::uint64_t begin,
                                                    std::uint64_t end) {
  std::vector<std::uint64_t> local;
  return scan_pass(r, begin, std::min<std::uint64_t>(end, r.size()), local);
}

std::vector<FatbinContainer> find_fatbin_containers(const ByteReader& r, std::uint64_t begin,
                                                    std::uint64_t end, ContainerScanSplit split) {
  return std::move(find_fatbin_containers(r, {{begin, end}}, split).front());
}

std::vector<std::vector<FatbinContainer>> find_fatbin_containers(
    const ByteReader& r, const std::vector<ScanRange>& ranges, ContainerScanSplit split) {
  const std::uint64_t chunk = std::max<std::uint64_t>(8, split.chunk_bytes & ~std::uint64_t(7));
  struct Chunk {
    std::size_t range = 0;
    std::uint64_t begin = 0, end = 0;
    std::vector<FatbinContainer> found;
    std::vector<std::uint64_t> local;  // their offsets in r
  };
  // Every range's chunks in one list, so that one set of threads scans them all.
  std::vector<Chunk> chunks;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> bounds;  // each range, clamped
  for (std::size_t k = 0; k < ranges.size(); ++k) {
    const std::uint64_t end = std::min<std::uint64_t>(ranges[k].end, r.size());
    const std::uint64_t begin = align8(ranges[k].begin);
    bounds.emplace_back(begin, end);
    for (std::uint64_t b = begin; b < end; b += chunk) {
      Chunk c;
      c.range = k;
      c.begin = b;
      c.end = std::min(end, b + chunk);
      chunks.push_back(std::move(c));
    }
  }
  parallel_for(chunks.size(), split.threads, [&](std::size_t i) {
    chunks[i].found = scan_pass(r, chunks[i].begin, chunks[i].end, chunks[i].local);
    if (split.after_chunk)
      split.after_chunk(r.all().subspan(chunks[i].begin, chunks[i].end - chunks[i].begin));
  });
  // Join each range's chunks as the single pass would have gone. `p` is where that pass
  // stands in the range.
  const std::uint8_t* data = r.all().data();
  std::vector<std::vector<FatbinContainer>> result(ranges.size());
  std::size_t first = 0;  // the range's first chunk
  for (std::size_t k = 0; k < ranges.size(); ++k) {
    auto& found = result[k];
    const auto [begin, end] = bounds[k];
    std::uint64_t p = begin;
    for (; first < chunks.size() && chunks[first].range == k; ++first) {
      Chunk& c = chunks[first];
      std::size_t next = 0;  // the chunk's first container not yet passed
      while (p < c.end) {
        // Where the chunk's own pass also stood at p (p is not inside one of its
        // containers), the two passes agree from here on.
        while (next < c.local.size() && c.local[next] < p &&
               align8(c.local[next] + c.found[next].size) <= p)
          ++next;
        const bool inside = next < c.local.size() && c.local[next] < p;
        if (p >= c.begin && !inside) {
          for (; next < c.found.size(); ++next) {
            p = align8(c.local[next] + c.found[next].size);
            found.push_back(std::move(c.found[next]));
          }
          p = std::max(p, c.end);
          break;
        }
        // Not yet in step (a container of the previous chunk ran into this one, and this
        // chunk's pass took something inside it for a container): one step of the pass.
        if (p > r.size() || r.size() - p < kContainerHeaderSize) {
          p = end;
          break;
        }
        if (auto container = container_at(r, data, p)) {
          p = align8(p + container->size);
          found.push_back(std::move(*container));
        } else {
          p += 8;
        }
      }
    }
  }
  return result;
}

std::uint64_t decompression_cap(std::uint64_t compressed) {
  constexpr std::uint64_t k128MiB = 128ull << 20;
  if (compressed > (UINT64_MAX - k128MiB) / 30) return UINT64_MAX;
  return compressed * 30 + k128MiB;
}

namespace {

// The process's account of decompressed bytes held (kDecompressedBytesLimit).
class DecompressionBudget {
 public:
  // Waits until `bytes` fit beside what is held, then counts them. The caller holds none
  // (it freed its buffer first), so every holder is working, and frees in time.
  void acquire(std::uint64_t bytes) {
    std::unique_lock<std::mutex> lock(mutex_);
    freed_.wait(lock, [&] { return held_ + bytes <= kDecompressedBytesLimit; });
    held_ += bytes;
    peak_ = std::max(peak_, held_);
  }
  void release(std::uint64_t bytes) {
    if (bytes == 0) return;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      held_ -= bytes;
    }
    freed_.notify_all();
  }
  std::uint64_t held() {
    const std::lock_guard<std::mutex> lock(mutex_);
    return held_;
  }
  std::uint64_t peak() {
    const std::lock_guard<std::mutex> lock(mutex_);
    return peak_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable freed_;
  std::uint64_t held_ = 0, peak_ = 0;
};

DecompressionBudget& budget() {
  static DecompressionBudget instance;
  return instance;
}

}  // namespace

std::uint64_t decompressed_bytes_held() {
  return budget().held();
}

std::uint64_t decompressed_bytes_peak() {
  return budget().peak();
}

PageBuffer::PageBuffer(std::size_t size) {
  constexpr std::size_t kHuge = 2u << 20;
  if (size == 0) return;
  const bool huge = size >= kHuge;
  // A huge buffer is mapped one huge page larger, so that an aligned start can be cut.
  const std::size_t rounded = huge ? (size + kHuge - 1) / kHuge * kHuge : size;
  const std::size_t mapped = huge ? rounded + kHuge : rounded;
  void* p = ::mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  auto* base = static_cast<std::uint8_t*>(p);
  data_ = base;
  mapped_ = mapped;
  if (!huge) return;
  const std::size_t lead = (kHuge - reinterpret_cast<std::uintptr_t>(base) % kHuge) % kHuge;
  if (lead != 0) ::munmap(base, lead);
  ::munmap(base + lead + rounded, kHuge - lead);  // the rest of the spare huge page
  data_ = base + lead;
  mapped_ = rounded;
  ::madvise(data_, mapped_, MADV_HUGEPAGE);  // advice: where refused, 4 KiB pages serve
}

PageBuffer::~PageBuffer() {
  if (data_ != nullptr) ::munmap(data_, mapped_);
}

Decompressor::Decompressor() : zstd_(ZSTD_createDCtx()) {
  if (zstd_ == nullptr) throw std::bad_alloc();
}

Decompressor::~Decompressor() {
  budget().release(capacity_);
  ZSTD_freeDCtx(static_cast<ZSTD_DCtx*>(zstd_));
}

std::span<const std::uint8_t> Decompressor::contents(const FatbinEntry& e,
                                                     const std::string& source) {
  if (e.compression == FatbinCompression::none) return e.payload;
  const auto where = [&] {
    return source + ": " + e.arch.str() + " entry at offset " + hex(e.offset) + ": ";
  };
  const std::uint64_t cap = decompression_cap(e.payload.size());
  if (e.decompressed_size == 0)
    throw InputError(where() + "compressed entry declares a decompressed size of 0");
  if (e.decompressed_size > cap)
    throw InputError(where() + "declared decompressed size " + std::to_string(e.decompressed_size) +
                     " is more than 30 x the " + std::to_string(e.payload.size()) +
                     " compressed bytes + 128 MiB: refused (a decompression bomb?)");
  if (e.decompressed_size > kDecompressedBytesLimit)
    throw InputError(where() + "declared decompressed size " + std::to_string(e.decompressed_size) +
                     " is more than the " + std::to_string(kDecompressedBytesLimit >> 20) +
                     " MiB cudatool holds decompressed at once: refused");
  const auto size = static_cast<std::size_t>(e.decompressed_size);
  if (size > capacity_) {
    // Free this buffer before waiting for room, so that no two threads wait on each other.
    buffer_ = PageBuffer();
    budget().release(std::exchange(capacity_, 0));
    budget().acquire(size);
    try {
      buffer_ = PageBuffer(size);
    } catch (...) {
      budget().release(size);
      throw;
    }
    capacity_ = size;
  }
  std::uint8_t* const out = buffer_.data();
  if (e.compression == FatbinCompression::zstd) {
    const unsigned long long frame = ZSTD_getFrameContentSize(e.payload.data(), e.payload.size());
    if (frame == ZSTD_CONTENTSIZE_ERROR)
      throw InputError(where() + "corrupt zstd data (no valid frame header)");
    if (frame != ZSTD_CONTENTSIZE_UNKNOWN && frame != e.decompressed_size)
      throw InputError(where() + "zstd frame declares " + std::to_string(frame) +
                       " bytes, the entry " + std::to_string(e.decompressed_size));
    const std::size_t n = ZSTD_decompressDCtx(static_cast<ZSTD_DCtx*>(zstd_), out, size,
                                              e.payload.data(), e.payload.size());
    if (ZSTD_isError(n))
      throw InputError(where() + "corrupt zstd data (" + ZSTD_getErrorName(n) + ")");
    if (n != e.decompressed_size)
      throw InputError(where() + "zstd data decompressed to " + std::to_string(n) +
                       " bytes, the entry declares " + std::to_string(e.decompressed_size));
  } else {
    if (e.payload.size() > 0x7fffffffu || e.decompressed_size > 0x7fffffffu)
      throw InputError(where() + "LZ4 entry larger than 2 GiB");
    const int n = LZ4_decompress_safe(reinterpret_cast<const char*>(e.payload.data()),
                                      reinterpret_cast<char*>(out),
                                      static_cast<int>(e.payload.size()), static_cast<int>(size));
    if (n < 0) throw InputError(where() + "corrupt LZ4 data");
    if (static_cast<std::uint64_t>(n) != e.decompressed_size)
      throw InputError(where() + "LZ4 data decompressed to " + std::to_string(n) +
                       " bytes, the entry declares " + std::to_string(e.decompressed_size));
  }
  return std::span<const std::uint8_t>(out, size);
}

std::span<const std::uint8_t> Decompressor::prefix(const FatbinEntry& e, std::size_t size,
                                                   const std::string& source) {
  if (e.compression == FatbinCompression::none)
    return e.payload.first(std::min(size, e.payload.size()));
  const auto where = [&] {
    return source + ": " + e.arch.str() + " entry at offset " + hex(e.offset) + ": ";
  };
  size = static_cast<std::size_t>(std::min<std::uint64_t>(size, e.decompressed_size));
  prefix_.resize(size);
  if (e.compression == FatbinCompression::zstd) {
    // A fresh context for each entry, not the thread's: a streaming context keeps the
    // window buffer an earlier (larger) frame sized, and a corrupt block is decoded into
    // whatever room that leaves, so the same entry failed with "Destination buffer is too
    // small" on a fresh thread and "Data corruption detected" after a larger entry, as
    // the scheduling fell. Single-pass decoding (contents()) sizes the room by the entry.
    const std::unique_ptr<ZSTD_DCtx, std::size_t (*)(ZSTD_DCtx*)> fresh(ZSTD_createDCtx(),
                                                                        ZSTD_freeDCtx);
    if (!fresh) throw std::bad_alloc();
    ZSTD_DCtx* const dctx = fresh.get();
    ZSTD_inBuffer in{e.payload.data(), e.payload.size(), 0};
    ZSTD_outBuffer out{prefix_.data(), size, 0};
    // One block at a time until the prefix is full, the frame ends or the input does.
    while (out.pos < out.size) {
      const std::size_t before_in = in.pos, before_out = out.pos;
      const std::size_t r = ZSTD_decompressStream(dctx, &out, &in);
      if (ZSTD_isError(r))
        throw InputError(where() + "corrupt zstd data (" + ZSTD_getErrorName(r) + ")");
      if (r == 0 || (in.pos == before_in && out.pos == before_out)) break;
    }
    prefix_.resize(out.pos);
  } else {
    if (e.payload.size() > 0x7fffffffu || size > 0x7fffffffu)
      throw InputError(where() + "LZ4 entry larger than 2 GiB");
    const int n = LZ4_decompress_safe_partial(
        reinterpret_cast<const char*>(e.payload.data()), reinterpret_cast<char*>(prefix_.data()),
        static_cast<int>(e.payload.size()), static_cast<int>(size), static_cast<int>(size));
    if (n < 0) throw InputError(where() + "corrupt LZ4 data");
    prefix_.resize(static_cast<std::size_t>(n));
  }
  return prefix_;
}

}  // namespace cudatool
