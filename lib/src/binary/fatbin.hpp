// NVIDIA's fatbin container, as nvcc 13.0 writes it (facts measured on its output; the
// format is not documented):
//
//   container header, 16 bytes: u32 magic 0xBA55ED50, u16 version (1), u16 header size
//     (16), u64 size of the entries that follow
//   entry header, at least 64 bytes:
//     +0 u16 kind (1 PTX, 2 ELF, 8 LTO-IR)   +2 u16 version   +4 u32 header size
//     +8 u64 payload size
//     +16 u32 compressed size (where compressed)   +24 u16 minor, +26 u16 major: a PTX
//          entry's ISA version (fatbinary writes the text's `.version` there; 9.0 from
//          CUDA 13.0)   +28 u32 architecture (90 for sm_90)
//     +40 u64 flags: 0x2000 LZ4 (nvcc --compress-mode speed), 0x8000 zstd (the default),
//          0x100000 an "a" variant (sm_90a), 0x200000 an "f" one (sm_100f)
//     +56 u64 decompressed size
//   then the payload (padded to 8 bytes); the next entry follows.
//
// Every size is checked against the bytes there before use.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "binary/byte_reader.hpp"
#include "cudatool/base/arch.hpp"
#include "cudatool/binary/image_format.hpp"

namespace cudatool {

inline constexpr std::uint32_t kFatbinMagic = 0xBA55ED50;

struct FatbinEntry {
  std::uint16_t kind = 0;  // 1 PTX, 2 ELF, 8 LTO-IR, anything else unknown
  // sm_90a (ELF), compute_90 (PTX): the entry's number (0 to 100000, so possibly outside
  // Arch's grammar, such as sm_5 in a malformed file) and its variant flag.
  Arch arch;
  std::uint64_t flags = 0;
  FatbinCompression compression = FatbinCompression::none;
  std::uint64_t offset = 0;               // of the entry header, in the reader's source
  std::span<const std::uint8_t> payload;  // the stored bytes (compressed where compressed)
  std::uint64_t decompressed_size = 0;    // the declared size; payload.size() when stored plain
  std::optional<PtxVersion> ptx_version;  // PTX: the ISA version the header records, if any
  std::uint64_t footprint = 0;            // its header and payload area, padding included
  ImageKind image_kind() const;           // 2 elf, 1 ptx, 8 lto_ir, anything else unknown
};

struct FatbinContainer {
  std::uint64_t offset = 0;  // of the container header, in the reader's source
  std::uint64_t size = 0;    // header and entries
  std::vector<FatbinEntry> entries;
};

// True when a container header that fits in `r` starts at `offset` (magic, version 1,
// header size 16, and an entry area inside the data).
bool looks_like_fatbin_container(const ByteReader& r, std::uint64_t offset);

// Reads the container at `offset`; throws InputError for a malformed one.
FatbinContainer read_fatbin_container(const ByteReader& r, std::uint64_t offset);

// Every container in [begin, end) of `r`: candidates are found by their magic at any
// 8-byte-aligned offset and kept only when read_fatbin_container accepts them (so stray
// bytes that happen to match the magic are ignored); the scan skips over each container
// it accepts.
std::vector<FatbinContainer> find_fatbin_containers(const ByteReader& r, std::uint64_t begin,
                                                    std::uint64_t end);

// How find_fatbin_containers may split a large range over threads.
struct ContainerScanSplit {
  unsigned threads = 0;                 // 0 for one per hardware thread
  std::uint64_t chunk_bytes = 8 << 20;  // each thread scans chunks of this size (multiple of 8)
  // Called on the scanning thread with each chunk's bytes once scanned (to give back the
  // pages of a mapped file); may be empty.
  std::function<void(std::span<const std::uint8_t>)> after_chunk;
};
// The same containers, the same order, found by scanning chunks of the range on several
// threads (or chunk by chunk on this one): a container that runs across the end of a chunk is kept,
// and where it does, the next chunk's findings are taken only from the first offset that the single
// pass would also have looked at (the rest of that chunk is rescanned until the two agree).
std::vector<FatbinContainer> find_fatbin_containers(const ByteReader& r, std::uint64_t begin,
                                                    std::uint64_t end, ContainerScanSplit split);
// The same for several ranges at once (an ELF file's sections), all chunks on one set of
// threads: the containers of ranges[k] in element k.
struct ScanRange {
  std::uint64_t begin = 0, end = 0;
};
std::vector<std::vector<FatbinContainer>> find_fatbin_containers(
    const ByteReader& r, const std::vector<ScanRange>& ranges, ContainerScanSplit split);

// The largest decompressed size accepted for `compressed` bytes: 30 times as much plus
// 128 MiB (a declared size above it is refused before anything is allocated).
std::uint64_t decompression_cap(std::uint64_t compressed);

// The most decompressed bytes the whole process holds at once, all Decompressors together:
// each buffer is counted from when it is allocated to when it is freed. A Decompressor that
// needs more than is left frees its own buffer and waits until others have freed theirs; an
// entry larger than the whole budget fails with an InputError naming it. The cap above is
// per entry; this bounds what --jobs N threads hold together (a 269 KB file of declared
// 128 MiB entries held 2.1 GB at --jobs 16).
inline constexpr std::uint64_t kDecompressedBytesLimit = 512ull << 20;
// The decompressed bytes held now, and the most held at once so far (tests, diagnostics).
std::uint64_t decompressed_bytes_held();
std::uint64_t decompressed_bytes_peak();

// A decompression buffer: anonymous pages, in 2 MiB huge pages where it is that large
// (MADV_HUGEPAGE: Debian and Ubuntu give huge pages only on request). zstd reads back
// through its output for every match, and a 16 MB CUBIN in 4 KiB pages missed the TLB:
// libcublasLt.so.13 decompressed 2-5% faster on one thread, and each thread's first job
// faults 8 pages instead of 4,096. Move-only; not zero-filled beyond what the kernel does.
class PageBuffer {
 public:
  PageBuffer() = default;
  explicit PageBuffer(std::size_t size);  // throws std::bad_alloc
  PageBuffer(PageBuffer&& other) noexcept { swap(other); }
  PageBuffer& operator=(PageBuffer&& other) noexcept {
    PageBuffer(std::move(other)).swap(*this);
    return *this;
  }
  ~PageBuffer();
  void swap(PageBuffer& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(mapped_, other.mapped_);
  }
  std::uint8_t* data() const { return data_; }

 private:
  std::uint8_t* data_ = nullptr;
  std::size_t mapped_ = 0;
};

// What one thread reuses from entry to entry: the output buffer (grown, never zero-filled)
// and a zstd decompression context for contents() (prefix() streams with a fresh one, so
// that an entry's error does not depend on which entries the thread read before).
class Decompressor {
 public:
  Decompressor();
  ~Decompressor();
  Decompressor(const Decompressor&) = delete;
  Decompressor& operator=(const Decompressor&) = delete;

  // The entry's contents: the payload itself when stored plain; otherwise decompressed
  // into the buffer (valid until the next call) with libzstd or liblz4. Throws InputError
  // naming `source`, the entry and what is wrong: a declared size over the cap, corrupt
  // data, a size that does not match, a size over kDecompressedBytesLimit. May wait for
  // other threads' Decompressors to free their buffers (kDecompressedBytesLimit).
  std::span<const std::uint8_t> contents(const FatbinEntry& entry, const std::string& source);
  // At most the first `size` bytes of the entry's contents, decompressing no more than that
  // needs (a PTX entry's `.version` and `.target` lines, a CUBIN's ELF header): the payload
  // itself when stored plain, else a zstd block or an LZ4 prefix into a small buffer of its
  // own (valid until the next call). Fewer bytes where the entry is shorter. Throws
  // InputError as contents() does for corrupt data.
  std::span<const std::uint8_t> prefix(const FatbinEntry& entry, std::size_t size,
                                       const std::string& source);
  std::size_t capacity() const { return capacity_; }

 private:
  PageBuffer buffer_;
  std::size_t capacity_ = 0;
  void* zstd_ = nullptr;  // ZSTD_DCtx
  std::vector<std::uint8_t> prefix_;
};

}  // namespace cudatool
