#include "cudatool/binary/kernel_scan.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <deque>
#include <memory>
#include <new>
#include <numeric>
#include <set>
#include <tuple>

#include "base/phase_trace.hpp"
#include "binary/archive.hpp"
#include "binary/cubin_reader.hpp"
#include "binary/elf.hpp"
#include "binary/fatbin.hpp"
#include "binary/ptx_header.hpp"
#include "cudatool/base/error.hpp"
#include "cudatool/base/mapped_file.hpp"
#include "cudatool/base/parallel.hpp"
#include "cudatool/base/text.hpp"

namespace cudatool {
namespace {

// Where a scan's time goes (CUDATOOL_TEST_SCAN_TRACE, a build with test hooks): one line on
// stderr at its end, "kernels scan: [ start@0.4ms searched@7.1ms ... done@140.1ms ]".
PhaseTrace& scan_trace() {
  static PhaseTrace trace("CUDATOOL_TEST_SCAN_TRACE");
  return trace;
}

// One unit of work: an ELF entry (or a bare CUBIN) to read, or in a headers-only scan an
// entry's first bytes.
enum class JobRead { kernels, ptx_header, elf_header };

struct Job {
  std::size_t image = 0;
  JobRead read = JobRead::kernels;
  FatbinEntry entry;                    // compression none with payload = the CUBIN for a bare one
  const std::string* source = nullptr;  // the file (or member), in Scanner::sources_
  const MappedFile* mapped = nullptr;   // pages to release once read, where mapped
};

struct JobResult {
  std::vector<ScannedKernel> kernels;
  std::size_t kernel_count = 0;  // where the kernels are not kept
  std::string error;
};

// A section of a host ELF file searched for fatbin containers, its name read once: the
// mapping may change under the reader (a file written while it is read), and the lists of a
// search are sized and indexed by this one classification (reading the names again indexed
// past them).
struct SearchedSection {
  const ElfSection* section;
  std::string name;
  bool fatbin;  // .nv_fatbin or __nv_relfatbin
};

// The sections searched for containers: every section of data (the fatbin sections too).
// Code sections (SHF_EXECINSTR: host machine code, where no toolchain or library puts a
// fatbin, which is data) are not: libcublasLt's 110 MB .text was 28% of what it had
// searched, 8 ms before the first entry on 2 CPUs. Nor the linker's and unwinder's own
// tables (relocations, symbols, strings, hashes, notes, versions, unwind and debug
// information), which no toolchain fills with a fatbin: libcublasLt.so.12's .rela.dyn and
// .eh_frame are 18 MB of them.
std::vector<SearchedSection> searched_sections(const ElfFile& elf) {
  std::vector<SearchedSection> searched;
  for (const ElfSection& s : elf.sections()) {
    if (!s.has_contents() || s.size < 16) continue;
    std::string name(s.name);
    const bool fatbin = name == ".nv_fatbin" || name == "__nv_relfatbin";
    if (!fatbin && (s.flags & kElfExecutable) != 0) continue;
    if (!fatbin &&
        (s.type == 2 || s.type == 3 || s.type == 4 || s.type == 5 || s.type == 6 || s.type == 7 ||
         s.type == 9 || s.type == 11 || (s.type >= 0x6ffffff0 && s.type <= 0x6fffffff) ||
         name.starts_with(".eh_frame") || name == ".gcc_except_table" ||
         name.starts_with(".debug_")))
      continue;
    searched.push_back({&s, std::move(name), fatbin});
  }
  return searched;
}

class Scanner {
 public:
  explicit Scanner(const ScanOptions& options) : options_(options) {}

  void add(const ByteReader& r, const MappedFile* mapped) {
    const std::size_t file = result_.files.size();
    result_.files.push_back({r.source(), r.size(), false, "", 0, {}});
    const auto bytes = r.all();
    if (is_ar_archive(bytes)) {
      bool any_object = false;
      for (const ArchiveMember& m : read_ar_archive(r)) {
        if (!ElfFile::is_elf(m.data.all()) && !looks_like_fatbin_container(m.data, 0)) continue;
        any_object = true;
        add_object(file, m.data, m.name, mapped);
      }
      if (!any_object) result_.files[file].note = "an archive without ELF members";
    } else if (ElfFile::is_elf(bytes)) {
      add_object(file, r, "", mapped);
    } else if (r.size() >= 4 && r.u32(0, "magic") == kFatbinMagic) {
      add_fatbin_sequence(file, r, 0, r.size(), "", "", mapped);
    } else {
      r.fail(0, "not a CUDA binary (neither ELF, a fatbin nor an ar archive)");
    }
    ScannedFile& f = result_.files[file];
    f.has_cuda_code = std::any_of(result_.images.begin(), result_.images.end(),
                                  [&](const ScannedImage& i) { return i.file == file; });
    if (!f.has_cuda_code && f.note.empty())
      f.note = "no CUDA code (no CUBIN and no fatbin container)";
  }

  ScanResult run() {
    std::vector<JobResult> slots(jobs_.size());
    // Entries that repeat another's compressed bytes are not read again: they take its
    // kernels, from the same decompressed CUBIN, on the thread that read it.
    scan_trace().step("jobs-built");
    // A headers-only scan reads a few KiB of each job: repeats are not worth finding.
    const Repeats repeats = options_.headers_only
                                ? Repeats{std::vector<std::vector<std::size_t>>(jobs_.size()),
                                          std::vector<char>(jobs_.size(), 0)}
                                : find_repeats();
    for (std::size_t j = 0; j < jobs_.size(); ++j)
      for (const std::size_t c : repeats.copies[j])
        result_.images[jobs_[c].image].same_bytes_as = jobs_[j].image;
    scan_trace().step("repeats-found");
    // Largest first, so that the last job to start is a small one; by decompressed size,
    // so that each thread's first job sizes its buffer once for all (by stored size, the
    // buffer grew again later: 33 MB of fresh pages on one thread for libcublasLt's 16.7).
    // A job's copies count as many more images of its size: libcublasLt has a 5 KB one
    // with 1,296 copies, whose kernels take that thread ~13 ms to hand over; taken last,
    // it ran on alone after the other 15 threads had finished.
    const auto work = [&](std::size_t j) {
      return jobs_[j].entry.decompressed_size * (1 + repeats.copies[j].size());
    };
    std::vector<std::size_t> order;
    for (std::size_t j = 0; j < jobs_.size(); ++j)
      if (!repeats.is_copy[j]) order.push_back(j);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return work(a) > work(b); });
    // Each mapped file's span of entries, for giving their pages back in bulk.
    for (const Job& j : jobs_) {
      if (!j.mapped || j.entry.payload.empty()) continue;
      const std::uint8_t* begin = j.entry.payload.data();
      const std::uint8_t* end = begin + j.entry.payload.size();
      if (entry_extents_.empty() || entry_extents_.back().file != j.mapped) {
        entry_extents_.push_back({j.mapped, begin, end});
      } else {
        entry_extents_.back().begin = std::min(entry_extents_.back().begin, begin);
        entry_extents_.back().end = std::max(entry_extents_.back().end, end);
      }
    }
    const unsigned threads = worker_count(options_.threads, order.size());
    // One decompressor (buffer and zstd context) per thread, made on its first job.
    std::vector<std::unique_ptr<Decompressor>> decompressors(threads);
    std::atomic<std::size_t> started{0}, done{0};
    const auto job = [&](std::size_t n, unsigned worker) {
      if (started.fetch_add(1, std::memory_order_relaxed) == 0) scan_trace().step("first-job");
      if (!decompressors[worker]) decompressors[worker] = std::make_unique<Decompressor>();
      const std::size_t j = order[n];
      run_job(jobs_[j], slots[j], *decompressors[worker], repeats.copies[j], slots);
      done.fetch_add(1 + repeats.copies[j].size(), std::memory_order_relaxed);
      // Every job has been taken, so this thread gets no more: its buffer (as large as the
      // largest image, 16 MB in cuBLASLt) is freed here, beside the others still working,
      // rather than all of them page by page on one thread at the end (~10 ms for 16).
      if (started.load(std::memory_order_relaxed) >= order.size()) decompressors[worker].reset();
    };
    if (options_.progress)
      parallel_for(order.size(), threads, job,
                   [&] { options_.progress(done.load(std::memory_order_relaxed), jobs_.size()); });
    else
      parallel_for(order.size(), threads, job);
    scan_trace().step("jobs-done");
    for (std::size_t j = 0; j < jobs_.size(); ++j) {
      ScannedImage& image = result_.images[jobs_[j].image];
      image.error = std::move(slots[j].error);
      image.kernel_count = options_.keep_kernels ? slots[j].kernels.size() : slots[j].kernel_count;
    }
    // Flatten in image order (jobs were created in image order).
    std::size_t total = 0;
    for (const auto& s : slots) total += s.kernels.size();
    result_.kernels.reserve(total);
    for (auto& s : slots)
      for (auto& k : s.kernels) result_.kernels.push_back(std::move(k));
    return std::move(result_);
  }

 private:
  // The entries whose bytes repeat an earlier job's (libcublasLt.so.13: 4,557 of
  // its 5,832 repeat one of 1,275 others; ~3% of its decompression). Entries of one size
  // are compared with the first ones of that size whose bytes differ, at most four, so no
  // input makes this quadratic; sizes on all threads.
  struct Repeats {
    std::vector<std::vector<std::size_t>> copies;  // per job: the later jobs with its bytes
    std::vector<char> is_copy;  // per job: its bytes are an earlier job's (one byte each:
                                // written from several threads)
  };
  Repeats find_repeats() const {
    Repeats r{std::vector<std::vector<std::size_t>>(jobs_.size()),
              std::vector<char>(jobs_.size(), 0)};
    const auto key = [&](std::size_t j) {
      const FatbinEntry& e = jobs_[j].entry;
      // The architecture too: equal bytes are of one, and entries of one size (small
      // kernel-less CUBINs, one per architecture) then no longer crowd out each other.
      return std::tuple(e.payload.size(), e.decompressed_size, e.compression, e.arch);
    };
    // Stored (uncompressed) entries too: their copies are duplicates the size report counts.
    std::vector<std::size_t> entries(jobs_.size());
    std::iota(entries.begin(), entries.end(), std::size_t{0});
    std::sort(entries.begin(), entries.end(), [&](std::size_t a, std::size_t b) {
      return std::pair(key(a), a) < std::pair(key(b), b);
    });
    std::vector<std::pair<std::size_t, std::size_t>> sizes;  // [first, last) in `entries`
    for (std::size_t first = 0, last; first < entries.size(); first = last) {
      last = first + 1;
      while (last < entries.size() && key(entries[last]) == key(entries[first])) ++last;
      if (last - first > 1) sizes.emplace_back(first, last);
    }
    parallel_for(sizes.size(), options_.threads, [&](std::size_t n) {
      constexpr std::size_t kMostCompared = 4;
      std::size_t read[kMostCompared], kept = 0;  // jobs read on their own, by job order
      for (std::size_t i = sizes[n].first; i < sizes[n].second; ++i) {
        const std::size_t j = entries[i];
        const auto bytes = jobs_[j].entry.payload;
        const auto same = std::find_if(read, read + kept, [&](std::size_t other) {
          const auto b = jobs_[other].entry.payload;
          return std::equal(bytes.begin(), bytes.end(), b.begin());
        });
        if (same != read + kept) {
          r.copies[*same].push_back(j);
          r.is_copy[j] = 1;
        } else if (kept < kMostCompared) {
          read[kept++] = j;
        }
      }
    });
    return r;
  }

  // Reads one job and gives its kernels to the jobs in `copies` (the same stored bytes).
  void run_job(const Job& job, JobResult& out, Decompressor& decompressor,
               const std::vector<std::size_t>& copies, std::vector<JobResult>& slots) {
    if (job.read != JobRead::kernels) {
      read_header(job, out, decompressor);
      return;
    }
    std::span<const std::uint8_t> contents;
    bool relocatable = false;
    try {
      contents = decompressor.contents(job.entry, *job.source);
      // A compressed entry's bytes are done with once decompressed; a stored one's are
      // the CUBIN itself, done with once read.
      const bool stored = job.entry.compression == FatbinCompression::none;
      if (!stored) entry_read(job);
      CubinInfo info =
          read_cubin_image(ByteReader(contents, *job.source + " (" + job.entry.arch.str() +
                                                    " image at " + hex(job.entry.offset) + ")"),
                           &names_);
      if (stored) entry_read(job);
      // Each job writes its own image's flag (no other thread touches that image), before
      // on_image sees it.
      relocatable = info.relocatable;
      if (relocatable) result_.images[job.image].relocatable = true;
      out.kernels.reserve(info.kernels.size());
      for (std::size_t k = 0; k < info.kernels.size(); ++k)
        out.kernels.push_back({job.image, std::move(info.kernels[k]), info.bounds[k]});
    } catch (const std::bad_alloc&) {
      // Not the entry's fault: the scan ends with one line naming the entry (each entry's
      // "std::bad_alloc", exit 2, read as if the file were corrupt).
      throw MemoryError(*job.source + ": out of memory reading the " + job.entry.arch.str() +
                        " image at offset " + hex(job.entry.offset) + " (" +
                        std::to_string(job.entry.decompressed_size) + " bytes decompressed)");
    } catch (const std::exception& e) {
      out.error = e.what();
      out.kernels.clear();
      // Each copy is read on its own, for an error that names its own offset.
      for (const std::size_t c : copies) run_job(jobs_[c], slots[c], decompressor, {}, slots);
      return;
    }
    for (const std::size_t c : copies) {
      const Job& copy = jobs_[c];
      if (relocatable) result_.images[copy.image].relocatable = true;
      slots[c].kernels = out.kernels;
      for (ScannedKernel& k : slots[c].kernels) k.image = copy.image;
      deliver(copy, slots[c], contents);
    }
    deliver(job, out, contents);
  }

  // A headers-only job: the first bytes of a PTX entry (its directives) or of a CUBIN (its
  // ELF type). Each job writes only its own image.
  void read_header(const Job& job, JobResult& out, Decompressor& decompressor) {
    ScannedImage& image = result_.images[job.image];
    try {
      if (job.read == JobRead::ptx_header) {
        const auto head = decompressor.prefix(job.entry, 4096, *job.source);
        const PtxHeader ptx = read_ptx_header(
            std::string_view(reinterpret_cast<const char*>(head.data()), head.size()));
        image.ptx_text_version = ptx.version;
        if (!image.ptx_version) image.ptx_version = ptx.version;
        image.ptx_target = ptx.target;
      } else {
        const auto head = decompressor.prefix(job.entry, 64, *job.source);
        // e_type, little-endian at 16, behind the ELF magic.
        if (head.size() >= 18 && ElfFile::is_elf(head))
          image.relocatable = (head[16] | head[17] << 8) == kElfRelocatable;
      }
      entry_read(job);
    } catch (const std::bad_alloc&) {
      throw MemoryError(*job.source + ": out of memory reading the header of the " +
                        job.entry.arch.str() + " image at offset " + hex(job.entry.offset));
    } catch (const std::exception& e) {
      out.error = e.what();
    }
  }

  // Hands a read image's kernels to on_image, and frees them where they are not kept.
  void deliver(const Job& job, JobResult& out, std::span<const std::uint8_t> contents) {
    if (options_.on_image) {
      const ScannedImage& image = result_.images[job.image];
      options_.on_image({job.image, image, result_.files[image.file], out.kernels, contents});
    }
    if (!options_.keep_kernels) {
      out.kernel_count = out.kernels.size();
      std::vector<ScannedKernel>().swap(out.kernels);
    }
  }

  // The pages of entries read are given back in bulk: after every 8 MiB of entries, one
  // madvise over each file's whole span of entries (an entry still being read faults its
  // pages back in). A call per entry meant a TLB shootdown on every CPU for each of the
  // 1,200 entries of a page or more in libcublasLt.
  void entry_read(const Job& job) const {
    constexpr std::uint64_t kReleaseEvery = 8ull << 20;
    if (!job.mapped) return;
    const std::uint64_t size = job.entry.payload.size();
    const std::uint64_t before = entry_bytes_read_.fetch_add(size, std::memory_order_relaxed);
    if ((before + size) / kReleaseEvery == before / kReleaseEvery) return;
    for (const EntryExtent& e : entry_extents_)
      e.file->release(std::span<const std::uint8_t>(e.begin, e.end));
  }

  // An ELF file (a CUBIN, or a host object, executable or library with fatbins inside), or
  // an archive member that is a bare fatbin.
  void add_object(std::size_t file, const ByteReader& r, const std::string& member,
                  const MappedFile* mapped) {
    const std::string source = member.empty() ? r.source() : r.source() + "(" + member + ")";
    const ByteReader named(r.all(), source, r.origin());
    if (!ElfFile::is_elf(r.all())) {
      add_fatbin_sequence(file, named, 0, named.size(), member, "", mapped);
      return;
    }
    const ElfFile elf(named);
    if (options_.headers_only && member.empty())
      for (const std::string_view name : elf.needed_libraries())
        result_.files[file].needed_libraries.emplace_back(name);
    if (elf.machine() == kElfMachineCuda) {
      add_cubin(file, named, elf, member, source, mapped);
      return;
    }
    const std::vector<SearchedSection> sections = searched_sections(elf);
    std::vector<std::vector<FatbinContainer>> found = find_containers(named, sections, mapped);
    scan_trace().step("fatbin-sections-read");
    std::size_t entries = 0;
    for (const auto& containers : found)
      for (const FatbinContainer& c : containers) entries += c.entries.size();
    result_.images.reserve(result_.images.size() + entries);
    jobs_.reserve(jobs_.size() + entries);
    // In an executable or shared library, __nv_relfatbin holds the relocatable objects the
    // host linker kept beside the device-linked image: not what the driver runs.
    // A relocatable host object's CUBINs may be relocatable themselves (-dc): a headers-only
    // scan reads their ELF type.
    host_relocatable_ = elf.type() == kElfRelocatable;
    for (std::size_t k = 0; k < sections.size(); ++k) {
      if (found[k].empty() || !sections[k].fatbin) continue;
      FatbinSection section{member, sections[k].name, sections[k].section->size, 0,
                            found[k].size()};
      for (const FatbinContainer& c : found[k]) section.container_bytes += c.size;
      result_.files[file].fatbin_sections.push_back(std::move(section));
    }
    for (std::size_t k = 0; k < sections.size(); ++k) {
      const bool leftovers = sections[k].name == "__nv_relfatbin" && elf.type() != kElfRelocatable;
      for (FatbinContainer& c : found[k])
        add_container(file, c, member, sections[k].name, source, mapped, leftovers);
    }
    host_relocatable_ = false;
  }

  // A CUBIN on its own (a file or an archive member): one image, read whole.
  void add_cubin(std::size_t file, const ByteReader& named, const ElfFile& elf,
                 const std::string& member, const std::string& source, const MappedFile* mapped) {
    ScannedImage image;
    image.file = file;
    image.member = member;
    image.kind = ImageKind::elf;
    const int sm =
        elf.abi_version() >= 8 ? int((elf.flags() >> 8) & 0xff) : int(elf.flags() & 0xff);
    Arch arch;  // the ELF header holds no variant
    arch.cc = {sm / 10, sm % 10};
    image.arch = arch;
    image.compression = FatbinCompression::none;
    image.stored_size = image.size = image.file_bytes = named.size();
    if (options_.headers_only) {
      image.relocatable = elf.type() == kElfRelocatable;
      image.skipped = !options_.arch.empty() && !arch_matches(image.arch, options_.arch);
      result_.images.push_back(std::move(image));
      return;
    }
    FatbinEntry entry;
    entry.kind = 2;
    entry.arch = *image.arch;
    entry.payload = named.all();
    entry.decompressed_size = named.size();
    add_image(std::move(image), std::move(entry), source, mapped);
  }

  // The containers of each searched section (element k: sections[k]'s). Every section at
  // once, in chunks on all threads, the fatbin sections too: theirs are then read as the
  // sequence they must be only where what was found does not tile them (the search reads
  // their ~5,800 headers in libcublasLt on all threads; read one after another they took
  // 7-12 ms on the lent H100 before any entry).
  std::vector<std::vector<FatbinContainer>> find_containers(
      const ByteReader& named, const std::vector<SearchedSection>& sections,
      const MappedFile* mapped) const {
    std::vector<ScanRange> ranges;
    for (const SearchedSection& s : sections)
      ranges.push_back({s.section->offset, s.section->offset + s.section->size});
    const ContainerScanSplit split = search_split(named, sections, ranges, mapped);
    std::vector<std::vector<FatbinContainer>> found;
    if (options_.headers_only) {
      // Headers only: the fatbin sections are walked container by container, reading their
      // headers and never their payloads (most of a library's bytes); only the other
      // sections are searched. A section that is no such sequence fails as below.
      std::vector<ScanRange> others;
      for (std::size_t k = 0; k < sections.size(); ++k)
        if (!sections[k].fatbin) others.push_back(ranges[k]);
      auto searched = find_fatbin_containers(named, others, split);
      found.resize(sections.size());
      for (std::size_t k = 0, o = 0; k < sections.size(); ++k)
        found[k] = sections[k].fatbin ? read_fatbin_sequence(named, ranges[k].begin, ranges[k].end,
                                                             sections[k].name)
                                      : std::move(searched[o++]);
    } else {
      found = find_fatbin_containers(named, ranges, split);
      scan_trace().step("searched");
      for (std::size_t k = 0; k < sections.size(); ++k)
        if (sections[k].fatbin && !tiles(named, ranges[k], found[k]))
          found[k] = read_fatbin_sequence(named, ranges[k].begin, ranges[k].end, sections[k].name);
    }
    return found;
  }

  // How the search runs over threads: each chunk's pages are given back once searched,
  // except in the fatbin sections, whose entries are read next.
  ContainerScanSplit search_split(const ByteReader& named,
                                  const std::vector<SearchedSection>& sections,
                                  const std::vector<ScanRange>& ranges,
                                  const MappedFile* mapped) const {
    ContainerScanSplit split{options_.threads, 8 << 20, {}};
    if (!mapped) return split;
    std::vector<ScanRange> keep;
    for (std::size_t k = 0; k < sections.size(); ++k)
      if (sections[k].fatbin) keep.push_back(ranges[k]);
    split.after_chunk = [mapped, all = named.all(), keep](std::span<const std::uint8_t> bytes) {
      const auto offset = static_cast<std::uint64_t>(bytes.data() - all.data());
      for (const ScanRange& k : keep)
        if (offset < k.end && offset + bytes.size() > k.begin) return;
      mapped->release(bytes);
    };
    return split;
  }

  // Whether `containers`, found by the search in the fatbin section `range`, are what
  // reading it as a sequence gives: the section holds them one after another, each whole
  // inside it, with only zero bytes around them. Those bytes (padding) are few.
  static bool tiles(const ByteReader& r, const ScanRange& range,
                    const std::vector<FatbinContainer>& containers) {
    const auto zeros = [&](std::uint64_t from, std::uint64_t to) {
      if (from > to || to > r.size()) return false;
      const auto bytes = r.all().subspan(from, to - from);
      return std::all_of(bytes.begin(), bytes.end(), [](std::uint8_t b) { return b == 0; });
    };
    std::uint64_t p = range.begin;
    for (const FatbinContainer& c : containers) {
      const std::uint64_t at = c.offset - r.origin();
      if (at < p || at > range.end || c.size > range.end - at || !zeros(p, at)) return false;
      p = at + c.size;
    }
    return zeros(p, range.end);
  }

  // The fatbin sections (and bare fatbin files): containers one after another, with zero
  // padding between them; anything else there is an error.
  static std::vector<FatbinContainer> read_fatbin_sequence(const ByteReader& r, std::uint64_t begin,
                                                           std::uint64_t end,
                                                           std::string_view section) {
    std::vector<FatbinContainer> containers;
    const std::string what = section.empty() ? "fatbin" : std::string(section);
    std::uint64_t p = begin;
    while (p < end) {
      if (r.u8(p, "fatbin section") == 0) {
        ++p;
        continue;
      }
      const ByteReader part = r.sub(p, end - p, what);
      containers.push_back(read_fatbin_container(part, 0));
      p += containers.back().size;
    }
    return containers;
  }

  void add_fatbin_sequence(std::size_t file, const ByteReader& r, std::uint64_t begin,
                           std::uint64_t end, const std::string& member, const std::string& section,
                           const MappedFile* mapped) {
    // A bare fatbin (nvcc -fatbin, -dc too) may hold relocatable CUBINs, as an object does.
    host_relocatable_ = true;
    for (const FatbinContainer& c : read_fatbin_sequence(r, begin, end, section))
      add_container(file, c, member, section, r.source(), mapped);
    host_relocatable_ = false;
  }

  void add_container(std::size_t file, const FatbinContainer& c, const std::string& member,
                     const std::string& section, const std::string& source,
                     const MappedFile* mapped, bool leftovers = false) {
    for (const FatbinEntry& e : c.entries) {
      ScannedImage image;
      image.file = file;
      image.member = member;
      image.section = section;
      image.container_offset = c.offset;
      image.offset = e.offset;
      image.kind = e.image_kind();
      if (image.kind != ImageKind::unknown) image.arch = e.arch;
      image.ptx_version = e.ptx_version;
      image.compression = e.compression;
      image.stored_size = e.payload.size();
      image.size = e.decompressed_size;
      image.file_bytes = e.footprint;
      if (leftovers) {
        image.relocatable = true;
        if (!options_.relocatable_leftovers) {
          image.skipped = true;
          if (e.kind == 2) ++result_.files[file].relocatable_leftovers_skipped;
          result_.images.push_back(std::move(image));
          continue;
        }
      }
      if (options_.headers_only) {
        // A PTX entry's text is read where its header records no ISA version (or asked).
        const bool ptx_text = e.kind == 1 && (!e.ptx_version || options_.read_ptx_text);
        const JobRead read = ptx_text                           ? JobRead::ptx_header
                             : e.kind == 2 && host_relocatable_ ? JobRead::elf_header
                                                                : JobRead::kernels;
        if (read != JobRead::kernels) {
          add_image(std::move(image), e, source, mapped, read);
          continue;
        }
      }
      if (e.kind != 2 || options_.headers_only) {
        image.skipped = !options_.arch.empty() && !arch_matches(image.arch, options_.arch);
        result_.images.push_back(std::move(image));
        continue;
      }
      add_image(std::move(image), e, source, mapped);
    }
  }

  void add_image(ScannedImage image, FatbinEntry entry, const std::string& source,
                 const MappedFile* mapped, JobRead read = JobRead::kernels) {
    image.skipped = !options_.arch.empty() && !arch_matches(image.arch, options_.arch);
    const std::size_t index = result_.images.size();
    const bool run = !image.skipped;
    result_.images.push_back(std::move(image));
    if (!run) return;
    if (sources_.empty() || sources_.back() != source) sources_.push_back(source);
    jobs_.push_back({index, read, std::move(entry), &sources_.back(), mapped});
  }

  const ScanOptions& options_;
  ScanResult result_;
  std::vector<Job> jobs_;
  struct EntryExtent {
    const MappedFile* file;
    const std::uint8_t *begin, *end;  // from the first entry's bytes to the last's
  };
  std::vector<EntryExtent> entry_extents_;
  mutable std::atomic<std::uint64_t> entry_bytes_read_{0};
  std::deque<std::string> sources_;  // the jobs' file names (a deque: they never move)
  bool host_relocatable_ = false;    // the host object being added is ET_REL
  DemangleCache names_;              // shared by the workers
};

}  // namespace

std::vector<std::string> container_kernel_names(std::span<const std::uint8_t> bytes,
                                                std::uint64_t container_offset,
                                                const std::string& source) {
  const ByteReader r(bytes, source);
  std::vector<std::string> names;
  if (container_offset == 0 && ElfFile::is_elf(bytes)) {
    for (const KernelResources& k : read_cubin(bytes).kernels) names.push_back(k.demangled);
    return names;
  }
  const FatbinContainer c = read_fatbin_container(r, container_offset);
  const FatbinEntry* best = nullptr;
  for (const int kind : {2, 1}) {
    for (const FatbinEntry& e : c.entries)
      if (e.kind == kind && (!best || e.decompressed_size < best->decompressed_size)) best = &e;
    if (best) break;
  }
  if (!best) return names;
  Decompressor decompressor;
  const auto contents = decompressor.contents(*best, source);
  if (best->kind == 2) {
    for (const KernelResources& k : read_cubin(contents).kernels) names.push_back(k.demangled);
    return names;
  }
  // PTX: each `.entry NAME(` (kernels; `.func` are device functions).
  const std::string_view text(reinterpret_cast<const char*>(contents.data()), contents.size());
  for (std::size_t p = text.find(".entry"); p != std::string_view::npos;
       p = text.find(".entry", p + 6)) {
    std::size_t b = p + 6;
    while (b < text.size() && (text[b] == ' ' || text[b] == '\t')) ++b;
    std::size_t e = b;
    while (e < text.size() &&
           (std::isalnum(static_cast<unsigned char>(text[e])) || text[e] == '_' || text[e] == '$'))
      ++e;
    if (e > b && b > p + 6) names.push_back(demangle(std::string(text.substr(b, e - b))));
  }
  return names;
}

bool arch_matches(const std::optional<Arch>& arch, const std::vector<Arch>& filters) {
  if (!arch) return false;
  for (const Arch& filter : filters)
    if (arch->passes(filter)) return true;
  return false;
}

const ScannedKernel& find_one_kernel(const ScanResult& found, const KernelNameFilter& filter,
                                     const KernelLookup& lookup) {
  const std::string what = std::string(lookup.source) + " " + quote_input(lookup.pattern);
  const ScannedKernel* first = nullptr;
  std::set<std::string> names, archs;
  for (const auto& k : found.kernels)
    if (filter.matches(k.resources)) {
      if (!first) first = &k;
      names.insert(k.resources.demangled);
      if (const auto& arch = found.images[k.image].arch) archs.insert(arch->str());
    }
  if (!first)
    throw UsageError(what + ": no such kernel in " + quote_input(lookup.file) +
                     (lookup.arch ? " for " + quote_input(*lookup.arch) : ""));
  if (names.size() > 1) {
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : "; ") + n;
    throw UsageError(what + " matches " + std::to_string(names.size()) + " kernels (" +
                     printable(list, 300) + "): make it unique");
  }
  if (archs.size() > 1 && !lookup.several_architectures_ok) {
    std::string list;
    for (const auto& a : archs) list += (list.empty() ? "" : ", ") + a;
    throw UsageError(what + " is compiled for " + list + ": choose one with " +
                     std::string(lookup.arch_source));
  }
  return *first;
}

ScanResult scan_binaries(const std::vector<std::string>& paths, const ScanOptions& options) {
  scan_trace().take();  // what a scan that threw left (the Python module scans again)
  scan_trace().step("start");
  std::vector<std::unique_ptr<MappedFile>> files;
  Scanner scanner(options);
  // A file that changed while it was read (MappedFile) is reported as that, whatever its
  // changed bytes made the readers say, and nothing read from it is returned.
  for (const std::string& path : paths) {
    files.push_back(std::make_unique<MappedFile>(path));
    try {
      scanner.add(ByteReader(files.back()->bytes(), path), files.back().get());
    } catch (const std::exception&) {
      files.back()->check_unchanged();
      throw;
    }
  }
  const auto check_files = [&] {
    for (const auto& file : files) file->check_unchanged();
  };
  ScanResult result;
  try {
    result = scanner.run();
  } catch (const std::exception&) {
    check_files();
    throw;
  }
  check_files();
  if (scan_trace().on()) {
    scan_trace().step("done");
    std::fprintf(stderr, "kernels scan: [%s ]\n", scan_trace().take().c_str());
  }
  return result;
}

ScanResult scan_bytes(std::span<const std::uint8_t> bytes, const std::string& name,
                      const ScanOptions& options) {
  Scanner scanner(options);
  if (bytes.empty()) throw InputError(name + ": empty file");
  scanner.add(ByteReader(bytes, name), nullptr);
  return scanner.run();
}

}  // namespace cudatool
