// check_compat: the inputs (compat_inputs.cpp), each read by a headers-only scan on its own
// thread (largest first), then each container judged for each target (load_rules.cpp) and
// rolled up per file.
#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <set>

#include "compat/compat_inputs.hpp"
#include "compat/wheel.hpp"
#include "cudatool/base/error.hpp"
#include "cudatool/base/mapped_file.hpp"
#include "cudatool/base/parallel.hpp"
#include "cudatool/base/text.hpp"
#include "cudatool/compat/compat.hpp"
#include "cudatool/device/device.hpp"
#include "cudatool/device/device_cache.hpp"
#include "cudatool/driver/driver_release.hpp"

namespace cudatool {
namespace {

using detail::Input;

// The newest architecture (by compute capability) of what a container holds.
std::optional<ComputeCapability> newest(const std::vector<const ScannedImage*>& entries) {
  std::optional<ComputeCapability> best;
  for (const ScannedImage* e : entries)
    if (e->arch && (e->kind == ImageKind::elf || e->kind == ImageKind::ptx) &&
        (!best || e->arch->cc > *best))
      best = e->arch->cc;
  return best;
}

int runtime_major(const std::string& name) {
  // libcudart.so.12 -> 12
  const std::string prefix = "libcudart.so.";
  if (!name.starts_with(prefix)) return 0;
  int major = 0;
  for (std::size_t i = prefix.size();
       i < name.size() && std::isdigit(static_cast<unsigned char>(name[i])); ++i)
    major = major * 10 + (name[i] - '0');
  return major;
}

}  // namespace

std::vector<CompatTarget> compat_targets_named(const std::vector<std::string>& names,
                                               std::string_view source) {
  std::vector<CompatTarget> targets;
  for (const std::string& name : names) {
    if (const auto arch = Arch::try_parse(name)) {
      targets.push_back({arch->cc.str() == name
                             ? arch->cc.sm()
                             : Arch{Arch::Code::sass, arch->cc, Arch::Variant::none}.str(),
                         arch->cc, std::string(source)});
      continue;
    }
    if (const GpuProduct* p = find_gpu_product(name)) {
      targets.push_back({p->name, p->cc, "product table"});
      continue;
    }
    std::string known;
    for (const GpuProduct& p : gpu_products()) known += (known.empty() ? "" : ", ") + p.name;
    throw UsageError(std::string(source) + " " + quote_input(name) +
                     ": neither an architecture (sm_90, 9.0) nor a GPU the table knows (" +
                     printable(known, 400) + ")");
  }
  return targets;
}

CompatDriver compat_driver_from_release(std::string_view driver_version, std::string_view source) {
  const CudaRelease* r = cuda_release_for_driver(driver_version);
  if (r == nullptr)
    throw UsageError(std::string(source) + " " + quote_input(driver_version) +
                     ": expected a Linux driver version such as 535.104.05 (" +
                     cuda_releases().front().driver + " or newer)");
  return {*r, std::string(driver_version), std::string(source)};
}

CompatDriver compat_driver_from_cuda(std::string_view cuda_version, std::string_view source) {
  const CudaRelease* r = cuda_release_named(cuda_version);
  if (r == nullptr)
    throw UsageError(std::string(source) + " " + quote_input(cuda_version) +
                     ": expected a CUDA version such as 12.4 (" + cuda_releases().front().str() +
                     " or newer)");
  return {*r, "", std::string(source)};
}

CompatDriver compat_driver_newest() {
  return {cuda_releases().back(), "", "assumed"};
}

CompatDriver machine_compat_driver() {
  if (const auto release = driver_release(false))
    if (const CudaRelease* r = cuda_release_for_driver(*release))
      return {*r, *release, "this machine"};
  return compat_driver_newest();
}

std::vector<CompatTarget> visible_gpu_targets(bool fresh, std::string_view fresh_source) {
  use_device_cache(fresh, fresh_source);
  std::vector<CompatTarget> targets;
  for (const Device& d : Device::all()) {
    const std::string name = d.name();
    const ComputeCapability cc = d.compute_capability();
    const std::string ordinal = std::to_string(d.ordinal());
    const auto same = std::find_if(targets.begin(), targets.end(), [&](const CompatTarget& t) {
      return t.name == name && t.cc == cc;
    });
    if (same != targets.end()) {
      same->source = (same->source.starts_with("devices ") ? same->source
                                                           : "devices " + same->source.substr(7)) +
                     ", " + ordinal;
      continue;
    }
    targets.push_back({name, cc, "device " + ordinal});
  }
  return targets;
}

namespace {

// Reads one input (a file mapped, or a wheel's member in memory) headers-only, and judges
// each of its containers for each target. Runs on a worker thread; `inner` threads scan.
struct Judged {
  CompatFile file;
  std::vector<CompatContainer> containers;  // kept where the request asks
  bool not_cuda_binary = false;             // not ELF, fatbin or archive: left out of a walk
  bool malformed = false;                   // file.error is about its contents (InputError)
};

bool is_not_cuda_binary(const std::string& error) {
  // Any file named like a library is opened in a walk: not ELF, fatbin or archive, empty,
  // or an ELF of another class or byte order (a 32-bit helper) is no CUDA binary; a
  // damaged one is reported.
  for (const char* what :
       {"not a CUDA binary", "empty file", "not a 64-bit ELF file", "not a little-endian ELF file"})
    if (error.find(what) != std::string::npos) return true;
  return false;
}

// An input's bytes while it is judged: a file mapped, or a wheel's member in memory.
struct InputBytes {
  std::unique_ptr<MappedFile> mapped;
  std::vector<std::uint8_t> member;
  std::span<const std::uint8_t> bytes;
};

// The input read headers-only into `held`. Throws UsageError (InputError for bad contents)
// where it cannot be read.
ScanResult scan_input(const Input& in, const CompatRequest& request, unsigned inner,
                      InputBytes& held) {
  if (in.member.empty()) {
    held.mapped = std::make_unique<MappedFile>(in.path);
    held.bytes = held.mapped->bytes();
  } else {
    held.member = detail::read_wheel_member(in.path, in.member);
    held.bytes = held.member;
  }
  ScanOptions options;
  options.headers_only = true;
  options.read_ptx_text = request.read_ptx_text;
  options.threads = inner;
  options.keep_kernels = false;
  try {
    return scan_bytes(held.bytes, in.shown, options);
  } catch (const std::exception&) {
    if (held.mapped) held.mapped->check_unchanged();
    throw;
  }
}

// The containers: consecutive images of one (member, section, container offset), less the
// relocatable leftovers of a linked file (never loaded); and what the file holds, into
// `file`.
std::vector<CompatContainer> group_containers(const std::vector<ScannedImage>& images,
                                              CompatFile& file) {
  std::vector<CompatContainer> containers;
  std::set<Arch> sass, ptx, lto;
  for (const ScannedImage& image : images) {
    if (image.skipped) continue;
    if (!image.error.empty()) ++file.unreadable_entries;
    if (image.arch) {
      if (image.kind == ImageKind::elf) sass.insert(*image.arch);
      if (image.kind == ImageKind::ptx) ptx.insert(*image.arch);
      if (image.kind == ImageKind::lto_ir) lto.insert(*image.arch);
    }
    if (containers.empty() || containers.back().member != image.member ||
        containers.back().section != image.section ||
        containers.back().offset != image.container_offset) {
      CompatContainer c;
      c.member = image.member;
      c.section = image.section;
      c.offset = image.container_offset;
      c.registered = image.section == ".nv_fatbin";
      containers.push_back(std::move(c));
    }
    containers.back().entries.push_back(image);
  }
  file.sass.assign(sass.begin(), sass.end());
  file.ptx.assign(ptx.begin(), ptx.end());
  file.lto_ir.assign(lto.begin(), lto.end());
  file.containers = containers.size();
  return containers;
}

// What the driver does with each container of a file on each target, and what that needs
// to know of the containers.
struct ContainerJudgement {
  ContainerJudgement(const std::vector<CompatContainer>& containers, const CompatRequest& request)
      : linked(containers.size()),
        entries(containers.size()),
        decisions(containers.size()),
        unloadable(containers.size()) {
    // Relocatable CUBINs (of objects and archives: -dc) are judged as what the device link
    // will load: code for their architecture.
    for (std::size_t c = 0; c < containers.size(); ++c) {
      linked[c] = containers[c].entries;
      for (ScannedImage& e : linked[c]) e.relocatable = false;
      for (const ScannedImage& e : linked[c]) entries[c].push_back(&e);
    }
    for (std::size_t c = 0; c < containers.size(); ++c)
      for (const CompatTarget& t : request.targets)
        decisions[c].push_back(decide_container(entries[c], t.cc, request.driver, request.policy));
    // Containers that hold nothing the driver loads: LTO-IR alone (for the program's own JIT
    // link, cuFFT's callbacks) or damaged entries.
    for (std::size_t c = 0; c < containers.size(); ++c)
      unloadable[c] = std::none_of(entries[c].begin(), entries[c].end(), [](const ScannedImage* e) {
        return e->error.empty() && (e->kind == ImageKind::elf || e->kind == ImageKind::ptx);
      });
  }
  ContainerJudgement(const ContainerJudgement&) = delete;
  ContainerJudgement& operator=(const ContainerJudgement&) = delete;

  // The kernels of a container that cannot run where it could matter (nothing for a target
  // runs, or code for it fails): read from its smallest image. A container without kernels
  // (a translation unit with no device code) cannot fail anything.
  void read_failing_kernels(const std::vector<CompatContainer>& containers,
                            std::span<const std::uint8_t> bytes, const std::string& shown) {
    const std::size_t targets = containers.empty() ? 0 : decisions[0].size();
    for (std::size_t t = 0; t < targets; ++t) {
      bool runs = false;
      for (std::size_t c = 0; c < containers.size(); ++c)
        runs = runs || decisions[c][t].outcome == LoadOutcome::native ||
               decisions[c][t].outcome == LoadOutcome::jit;
      for (std::size_t c = 0; c < containers.size(); ++c) {
        const ContainerDecision& d = decisions[c][t];
        const bool fails = d.outcome != LoadOutcome::native && d.outcome != LoadOutcome::jit &&
                           !unloadable[c] && (d.holds_code_for_target || !runs);
        if (!fails || kernels.count(c) || !containers[c].member.empty()) continue;
        try {
          kernels[c] = container_kernel_names(bytes, containers[c].offset, shown);
        } catch (const std::exception&) {
          kernels[c] = {"(its kernels could not be read)"};
        }
      }
    }
  }

  std::vector<std::vector<ScannedImage>> linked;            // the entries judged, as linked
  std::vector<std::vector<const ScannedImage*>> entries;    // per container, into `linked`
  std::vector<std::vector<ContainerDecision>> decisions;    // per container, per target
  std::vector<char> unloadable;                             // per container
  std::map<std::size_t, std::vector<std::string>> kernels;  // of the containers that fail
};

// How a file fares on target `t`: its containers counted by outcome, then the verdict and
// the most actionable reason.
void judge_target(std::size_t t, const CompatRequest& request, const ContainerJudgement& judged,
                  const CompatFile& file, CompatFileTarget& v) {
  const ComputeCapability cc = request.targets[t].cc;
  const std::size_t containers = judged.decisions.size();
  for (std::size_t c = 0; c < containers; ++c) {
    if (judged.decisions[c][t].outcome == LoadOutcome::native) ++v.native;
    if (judged.decisions[c][t].outcome == LoadOutcome::jit) ++v.jit;
  }
  const bool runs_here = v.native + v.jit > 0;
  bool any_older = false, any_other = false, too_new = false, disabled = false;
  for (std::size_t c = 0; c < containers; ++c) {
    const ContainerDecision& d = judged.decisions[c][t];
    const auto& entries = judged.entries[c];
    if (d.outcome == LoadOutcome::jit) v.jit_ptx_bytes += entries[*d.entry]->size;
    if (d.outcome == LoadOutcome::native || d.outcome == LoadOutcome::jit) continue;
    if (judged.unloadable[c]) {
      ++v.unloadable;
      continue;
    }
    if (!d.holds_code_for_target && runs_here) {
      ++v.other_gpus;
      continue;
    }
    const auto names = judged.kernels.find(c);
    if (names != judged.kernels.end() && names->second.empty()) {
      ++v.empty;
      continue;
    }
    ++v.failed;
    if (names != judged.kernels.end())
      v.kernels.insert(v.kernels.end(), names->second.begin(), names->second.end());
    if (d.outcome == LoadOutcome::ptx_too_new) {
      too_new = true;
      const PtxVersion needed = *entries[*d.entry]->ptx_version;
      if (!v.ptx_needed || needed < *v.ptx_needed) v.ptx_needed = needed;
    } else if (d.outcome == LoadOutcome::jit_disabled) {
      disabled = true;
    } else {
      const auto n = newest(entries);
      (n && *n < cc ? any_older : any_other) = true;
    }
  }
  // A file none of whose containers loads at all (only LTO-IR or damaged) cannot run.
  if (!runs_here && v.failed == 0 && v.unloadable > 0 && v.empty == 0) {
    v.failed = v.unloadable;
    v.gap = CompatGap::not_loadable;
  }
  // The most actionable reason: a driver upgrade, then the JIT switch, then the build.
  if (v.failed > 0 && v.gap == CompatGap::none)
    v.gap = too_new                   ? CompatGap::ptx_too_new
            : disabled                ? CompatGap::jit_disabled
            : any_older && !any_other ? CompatGap::predates
                                      : CompatGap::other_gpus_only;
  for (const std::string& lib : file.cuda_runtimes)
    if (runtime_major(lib) > request.driver.cuda.major) {
      v.gap = CompatGap::runtime_too_new;
      if (v.failed == 0) v.failed = 1;
    }
  v.verdict = v.failed > 0                     ? CompatVerdict::cannot_run
              : v.jit > 0                      ? CompatVerdict::jit
              : runs_here                      ? CompatVerdict::native
              : containers == 0 || v.empty > 0 ? CompatVerdict::no_cuda_code
                                               : CompatVerdict::native;
}

Judged judge(const Input& in, const CompatRequest& request, unsigned inner) {
  Judged j;
  CompatFile& file = j.file;
  file.path = in.shown;
  file.package = in.package;
  file.size = in.size;
  file.targets.resize(request.targets.size());
  InputBytes held;
  ScanResult found;
  try {
    found = scan_input(in, request, inner, held);
  } catch (const UsageError& e) {
    file.error = e.what();
    j.not_cuda_binary = is_not_cuda_binary(file.error);
    j.malformed = dynamic_cast<const InputError*>(&e) != nullptr;
    return j;
  }
  const ScannedFile& f = found.files.at(0);
  file.has_cuda_code = f.has_cuda_code;
  file.note = f.note;
  for (const std::string& lib : f.needed_libraries)
    if (lib.starts_with("libcudart.so")) file.cuda_runtimes.push_back(lib);
  j.containers = group_containers(found.images, file);
  ContainerJudgement judged(j.containers, request);
  judged.read_failing_kernels(j.containers, held.bytes, in.shown);
  for (std::size_t t = 0; t < request.targets.size(); ++t)
    judge_target(t, request, judged, file, file.targets[t]);
  if (request.containers)
    for (std::size_t c = 0; c < j.containers.size(); ++c)
      j.containers[c].decisions = judged.decisions[c];
  else
    j.containers.clear();
  return j;
}

}  // namespace

CompatReport check_compat(const CompatRequest& request) {
  if (request.targets.empty()) throw UsageError("compat: no target GPU to judge the code for");
  detail::Inputs inputs = detail::expand_inputs(request.paths);
  CompatReport report;
  report.targets = request.targets;
  report.driver = request.driver;
  report.policy = request.policy;
  report.packages = std::move(inputs.packages);
  report.files_examined = inputs.files.size();

  // Largest first on all threads, each input read on one; a single input on all.
  std::vector<std::size_t> order(inputs.files.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return inputs.files[a].size > inputs.files[b].size;
  });
  std::vector<Judged> judged(inputs.files.size());
  // A file of more than a quarter of a thread's share (libtorch_cuda.so among 846 libraries)
  // would leave the other threads idle at the end: those are read one at a time, each on all
  // threads (the scan searches a file's sections in chunks), the rest one per thread.
  std::uint64_t total = 0;
  for (const Input& in : inputs.files) total += in.size;
  const unsigned workers = worker_count(request.threads, inputs.files.size());
  const std::uint64_t large = total / (4 * std::max(1u, workers));
  std::size_t first_small = 0;
  while (first_small < order.size() &&
         (inputs.files[order[first_small]].size > large || order.size() == 1)) {
    judged[order[first_small]] = judge(inputs.files[order[first_small]], request, request.threads);
    ++first_small;
  }
  parallel_for(order.size() - first_small, request.threads, [&](std::size_t n) {
    const std::size_t i = order[first_small + n];
    judged[i] = judge(inputs.files[i], request, 1);
  });
  // A file named by the user that is not readable as a CUDA binary is an error, as kernels
  // says it; one met in a walk is left out (no CUDA binary) or reported (damaged).
  for (std::size_t i = 0; i < inputs.files.size(); ++i)
    if (inputs.files[i].named && !judged[i].file.error.empty()) {
      if (judged[i].malformed) throw InputError(judged[i].file.error);
      throw UsageError(judged[i].file.error);
    }
  for (Judged& j : judged) {
    if (j.not_cuda_binary) continue;
    const std::size_t index = report.files.size();
    for (CompatContainer& c : j.containers) {
      c.file = index;
      report.containers.push_back(std::move(c));
    }
    report.files.push_back(std::move(j.file));
  }
  // The CUDA runtime each package ships: nvidia-cuda-runtime-cuXX's version, else the
  // numbers of its libcudart file's name.
  for (std::size_t p = 0; p < report.packages.size(); ++p) {
    CompatPackage& pkg = report.packages[p];
    for (const std::string& lib : inputs.runtime_files[p]) {
      if (pkg.name.starts_with("nvidia_cuda_runtime") ||
          pkg.name.starts_with("nvidia-cuda-runtime"))
        pkg.cuda_runtime = pkg.version;
      else if (lib.size() > 13 && std::count(lib.begin(), lib.end(), '.') >= 4)
        pkg.cuda_runtime = lib.substr(13);
      else if (pkg.cuda_runtime.empty())
        pkg.cuda_runtime = lib.substr(std::min<std::size_t>(13, lib.size()));
    }
  }
  return report;
}

}  // namespace cudatool
