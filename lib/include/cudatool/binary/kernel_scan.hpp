// Every kernel in compiled CUDA binaries: CUBINs, fatbins, host objects (relocatable -dc
// ones included), static archives, executables and shared libraries. Offline: no driver.
//
// Discovery is cheap: the ELF section table, then every section searched for fatbin
// containers in chunks on all threads while the fatbin sections are read on one more. The
// work is per fatbin entry: decompress (zstd, LZ4) and read the CUBIN. It runs on a fixed
// pool of threads that take job indices, largest first, from an atomic counter and write
// each result into its own pre-sized slot, so the output order is stable and nothing is
// locked. Each thread reuses one buffer, so at most one decompressed image per thread is
// held at a time (freed by its thread once no job is left); entries of architectures that
// --arch leaves out are never decompressed, and an entry whose compressed bytes repeat
// another's is read once for both. Errors in an entry are recorded with it. A
// caller can take each image's kernels as soon as they are read (ScanOptions::on_image),
// to overlap its own work (rendering) with the reading of the others. Decompression is the
// floor: bench/bench_zstd_floor measures it alone.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>
#include "cudatool/base/arch.hpp"

#include "cudatool/binary/cubin.hpp"
#include "cudatool/binary/image_format.hpp"
#include "cudatool/binary/kernel_filter.hpp"

namespace cudatool {

struct ImageKernels;

struct ScanOptions {
  // Architectures to keep ("sm_90" also keeps sm_90a and sm_90f; "sm_90a" only itself);
  // empty for all.
  std::vector<Arch> arch;
  unsigned threads = 0;  // worker threads; 0 for one per hardware thread
  // Called from the calling thread about every 100 ms while entries are read.
  std::function<void(std::size_t done, std::size_t total)> progress;
  // Called with each image's kernels as soon as the image is read, on the worker thread
  // that read it (so several calls run at once), while the other images are still being
  // read: for work on the kernels that can overlap the reading (rendering them). Not
  // called for images that fail (their error is in ScanResult) or that --arch leaves out;
  // an exception it throws ends the scan and is rethrown by scan_binaries.
  std::function<void(const ImageKernels&)> on_image;
  // Read the relocatable leftovers of linked files too: the __nv_relfatbin images of an
  // executable or shared library (the -rdc objects the host linker kept beside the
  // device-linked image; the driver never loads them and cuobjdump does not list them).
  // Left out by default: listed as skipped images with relocatable true.
  bool relocatable_leftovers = false;
  // False where on_image has taken what the caller needs: ScanResult::kernels is left
  // empty (each image's kernels are freed once on_image returns).
  bool keep_kernels = true;
  // Headers only (`cudatool compat`): every image is listed, but no CUBIN is read, so
  // ScanResult::kernels stays empty and on_image is not called. A PTX entry's ISA version
  // is its entry header's; where the header records none (or read_ptx_text is set) its
  // first 4 KiB are decompressed for the `.version` and `.target` directives. A CUBIN entry
  // of a relocatable host object (an ET_REL object or an archive's member) has its ELF
  // header decompressed for `relocatable`.
  bool headers_only = false;
  bool read_ptx_text = false;
};

// A fatbin section (.nv_fatbin, __nv_relfatbin) of a host ELF file or archive member.
struct FatbinSection {
  std::string member;                 // archive member, "" otherwise
  std::string name;                   // .nv_fatbin, __nv_relfatbin, ...
  std::uint64_t size = 0;             // the section's size in the file
  std::uint64_t container_bytes = 0;  // its containers' bytes: headers and entries
  std::size_t containers = 0;
};

struct ScannedFile {
  std::string path;
  std::uint64_t size = 0;
  bool has_cuda_code = false;  // at least one CUBIN, fatbin entry or PTX
  std::string note;            // why not, where has_cuda_code is false
  // Relocatable images of __nv_relfatbin in an executable or shared library that were
  // left out (ScanOptions::relocatable_leftovers false).
  std::size_t relocatable_leftovers_skipped = 0;
  // A headers-only scan of an ELF host file: its DT_NEEDED libraries (libcudart.so.12).
  std::vector<std::string> needed_libraries;
  std::vector<FatbinSection> fatbin_sections{};  // in section order
};

struct ScannedImage {
  std::size_t file = 0;                // index into ScanResult::files
  std::string member;                  // archive member, "" otherwise
  std::string section;                 // ELF section holding the container, "" for none
  std::uint64_t container_offset = 0;  // in the file (or member); 0 for a bare CUBIN
  std::uint64_t offset = 0;            // of the entry header (a bare CUBIN: 0)
  ImageKind kind{ImageKind::unknown};  // elf (a CUBIN), ptx, lto_ir, unknown
  // sm_90a, compute_90 (PTX and LTO-IR: the virtual architecture); nullopt for an unknown kind
  std::optional<Arch> arch;
  FatbinCompression compression{};  // none, lz4, zstd
  std::uint64_t stored_size = 0;    // bytes in the file
  std::uint64_t size = 0;           // decompressed
  // What the entry takes in the file: its header and its payload area (padding included);
  // a bare CUBIN's whole size. A container's 16-byte header is nobody's.
  std::uint64_t file_bytes = 0;
  // An earlier image whose stored bytes are these exactly (the scan reads them once).
  std::optional<std::size_t> same_bytes_as;
  bool skipped = false;  // left out by --arch, or a relocatable leftover
  // Relocatable (-dc) device code: the CUBIN is ET_REL (known once read), or the image is
  // a leftover in a linked file's __nv_relfatbin. Its registers and stack are final only
  // after the device link; the driver does not load it as it is.
  bool relocatable = false;
  std::string error;  // "" or why the entry could not be read
  std::size_t kernel_count = 0;
  // PTX: the ISA version its fatbin entry header records (fatbinary copies it from the
  // text's `.version`), else, in a headers-only scan, the text's. Where a headers-only scan
  // read the text: its `.version` and the architecture of its `.target` (compute_90a);
  // nullopt where the text has none.
  std::optional<PtxVersion> ptx_version;
  std::optional<PtxVersion> ptx_text_version;
  std::optional<Arch> ptx_target;
};

struct ScannedKernel {
  std::size_t image = 0;  // index into ScanResult::images
  KernelResources resources;
  KernelBounds bounds;
};

// What ScanOptions::on_image is given: one image, its file and its kernels (in the CUBIN's
// symbol order, as they will be in ScanResult::kernels).
struct ImageKernels {
  std::size_t image = 0;  // index into ScanResult::images
  const ScannedImage& info;
  const ScannedFile& file;
  std::span<const ScannedKernel> kernels;
  // The CUBIN itself (decompressed), valid only during the call: for callers that hand the
  // image to the driver (tools/kernels_vs_driver).
  std::span<const std::uint8_t> cubin;
};

struct ScanResult {
  std::vector<ScannedFile> files;
  std::vector<ScannedImage> images;
  std::vector<ScannedKernel> kernels;  // in image order, then the CUBIN's symbol order
};

// Maps and reads each file. A file that cannot be read throws UsageError naming it; one that
// is not ELF, a fatbin or an ar archive (or is malformed as one) throws InputError naming it
// and the offset; a well-formed file without CUDA code is returned with has_cuda_code false
// and a note. A file that changes while it is read (truncated, written to) throws
// InputError "<path>: the file changed while it was read ..." (MappedFile::check_unchanged),
// never a crash.
ScanResult scan_binaries(const std::vector<std::string>& paths, const ScanOptions& options);
// The same over bytes in memory, named `name` (tests and fuzzing drive this).
ScanResult scan_bytes(std::span<const std::uint8_t> bytes, const std::string& name,
                      const ScanOptions& options);

// What find_one_kernel looks for, and the names its messages use.
struct KernelLookup {
  std::string_view pattern;  // the filter's text, as given
  std::string_view source;   // what gave it: "--kernel"
  std::string_view file;     // the file scanned
  // The architecture the scan kept (ScanOptions::arch, an Arch), as its flag spelled it
  // ("12.1"), for the message only.
  std::optional<std::string_view> arch;
  std::string_view arch_source;           // what chooses one: "--arch"
  bool several_architectures_ok = false;  // take the first (a device decides the rest)
};

// The one kernel of `found` that `filter` matches. Throws UsageError
//   `<source> "<pattern>": no such kernel in "<file>"[ for "<arch>"]` where none matches,
//   `<source> "<pattern>" matches N kernels (a; b): make it unique` for several names,
//   `<source> "<pattern>" is compiled for sm_80, sm_90: choose one with <arch_source>` for one
//   name in several architectures (unless several_architectures_ok).
const ScannedKernel& find_one_kernel(const ScanResult& found, const KernelNameFilter& filter,
                                     const KernelLookup& lookup);

// The kernels (demangled names, in symbol order) of one fatbin container of `bytes` (a
// whole file, or a bare CUBIN where `container_offset` is 0 and the bytes are one): read
// from its smallest CUBIN, else from its smallest PTX's `.entry` directives. Decompresses
// that one entry: for naming what cannot run (`cudatool compat`), not for scanning. Throws
// InputError where the container or entry cannot be read.
std::vector<std::string> container_kernel_names(std::span<const std::uint8_t> bytes,
                                                std::uint64_t container_offset,
                                                const std::string& source);

// Whether an image's architecture passes the filters (see ScanOptions::arch, Arch::passes);
// PTX (compute_90) matches sm_90 and compute_90. An image of no architecture (an entry of
// unknown kind) passes none, nor does one whose number is outside the grammar (sm_5 in a
// malformed fatbin entry: no filter names it).
bool arch_matches(const std::optional<Arch>& arch, const std::vector<Arch>& filters);

}  // namespace cudatool
