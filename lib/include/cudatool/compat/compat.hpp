// `cudatool compat`: will the CUDA code in these files run on these GPUs, how, and if not,
// why. Offline and from headers only: the fatbin containers of every file (the unit the
// CUDA runtime registers and the driver loads), their entries' kinds and architectures, and
// of each PTX entry its `.version` and `.target`; no SASS is decompressed.
//
// The driver's decision for one container and one GPU (compute capability T), as NVIDIA
// documents it (CUDA C++ Programming Guide, "Binary Compatibility" and "PTX Compatibility";
// nvcc's "GPU Feature List" for the a and f variants), checked against the driver itself by
// tools/compat_vs_driver:
//  - SASS sm_XY runs on X.z for z >= Y (same major); sm_XYa only on X.Y exactly; sm_XYf on
//    the family, X.z for z >= Y. A relocatable CUBIN (-dc, ET_REL) is not loadable as it is.
//  - PTX compute_XY is JIT-compiled for any T >= X.Y; compute_XYa only for T = X.Y;
//    compute_XYf for X.z, z >= Y. Only where the driver knows the PTX's ISA version
//    (`.version`; a driver of CUDA 13.0 knows up to 9.0) and JIT is not disabled.
//  - LTO-IR (code=lto_XY) is never loaded as it is.
//  - SASS that runs is taken over PTX (the best: the highest minor); PTX is JIT-compiled only
//    where no SASS runs (the newest architecture that applies).
//  - CUDA_FORCE_PTX_JIT=1: SASS is ignored; CUDA_DISABLE_PTX_JIT=1: PTX is never compiled.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cudatool/base/arch.hpp"
#include "cudatool/binary/image_format.hpp"
#include "cudatool/binary/kernel_scan.hpp"

namespace cudatool {

// ---- The tables (share/cuda-releases.json, share/gpus.json), compiled in. ----

struct CudaRelease {
  int major = 0, minor = 0;  // 13, 0
  std::string driver;        // the oldest Linux driver of the release: "580.65.06"
  PtxVersion ptx;            // the PTX ISA it introduced (the newest its driver compiles)
  std::string str() const { return std::to_string(major) + "." + std::to_string(minor); }
};
const std::vector<CudaRelease>& cuda_releases();  // oldest first
// The CUDA release a driver of this version supports: the newest whose driver is not newer
// (580.159.04 -> 13.0); nullptr for a malformed version or one older than every release.
const CudaRelease* cuda_release_for_driver(std::string_view driver_version);
// The release named "12.4" (or the newest one before it: 12.7 -> 12.6); nullptr if none.
const CudaRelease* cuda_release_named(std::string_view version);
// The first release whose driver compiles PTX of ISA `ptx`; nullptr where none known does.
const CudaRelease* first_release_for_ptx(PtxVersion ptx);

struct GpuProduct {
  std::string name;  // "H100"
  ComputeCapability cc;
  std::vector<std::string> aliases;
};
const std::vector<GpuProduct>& gpu_products();
// By name or alias: case, spaces, hyphens and a leading "NVIDIA"/"GeForce"/"Tesla" ignored.
const GpuProduct* find_gpu_product(std::string_view name);

// ---- The question. ----

// A GPU the code is judged for.
struct CompatTarget {
  std::string name;  // "NVIDIA H200", "H100", "sm_90"
  ComputeCapability cc;
  std::string source;  // "device 0", "--arch", "product table"
};

// The architectures, compute capabilities or product names of a list (--arch H100,sm_80,8.6).
// Throws UsageError naming `source` for a name that is none of them.
std::vector<CompatTarget> compat_targets_named(const std::vector<std::string>& names,
                                               std::string_view source);

// The driver the code would meet: its CUDA version decides which PTX it can compile.
struct CompatDriver {
  CudaRelease cuda;     // the release it supports (its ptx: the newest PTX ISA it compiles)
  std::string release;  // "580.159.04", "" where not known
  std::string source;   // "this machine", "--driver", "--cuda", "assumed"
};
// From a driver version (535.104.05) or a CUDA version (12.2); UsageError naming `source`.
CompatDriver compat_driver_from_release(std::string_view driver_version, std::string_view source);
CompatDriver compat_driver_from_cuda(std::string_view cuda_version, std::string_view source);
// The newest release in the table, for where no driver is known (source "assumed").
CompatDriver compat_driver_newest();
// This machine's driver (/proc/driver/nvidia/version or NVML; no cuInit), else the newest.
CompatDriver machine_compat_driver();

// The visible GPUs (from the device cache where it serves: no cuInit), one target per
// product and compute capability ("devices 0, 1"). Throws as Device::all() does where there
// is no driver or no device.
std::vector<CompatTarget> visible_gpu_targets(bool fresh, std::string_view fresh_source);

enum class JitPolicy { normal, force_ptx_jit, disable_ptx_jit };
// As the driver reads its environment: CUDA_FORCE_PTX_JIT=1 or CUDA_DISABLE_PTX_JIT=1.
JitPolicy jit_policy_from_environment();

// ---- The driver's decision for one container. ----

enum class LoadOutcome {
  native,        // SASS runs
  jit,           // PTX is JIT-compiled
  no_binary,     // nothing for this GPU (CUDA_ERROR_NO_BINARY_FOR_GPU)
  ptx_too_new,   // the PTX that applies needs a newer driver (CUDA_ERROR_UNSUPPORTED_PTX_VERSION)
  jit_disabled,  // only PTX applies and JIT is disabled (CUDA_ERROR_JIT_COMPILATION_DISABLED)
};

struct ContainerDecision {
  LoadOutcome outcome = LoadOutcome::no_binary;
  // The entry used (native, jit) or refused (ptx_too_new, jit_disabled): an index into the
  // container's entries; nullopt for no_binary.
  std::optional<std::size_t> entry;
  // Whether the container holds code meant for this GPU (SASS or PTX that applies to it by
  // architecture, whatever the driver's version and the JIT policy): a container that fails
  // without any is code for other GPUs.
  bool holds_code_for_target = false;
};

// Whether an image of `arch` applies to a GPU of `target` by architecture alone (the rules
// above; PTX's ISA version not considered).
bool sass_runs_on(const Arch& arch, ComputeCapability target);
bool ptx_compiles_for(const Arch& arch, ComputeCapability target);

// The decision for the entries of one container (images of a headers-only scan).
ContainerDecision decide_container(const std::vector<const ScannedImage*>& entries,
                                   ComputeCapability target, const CompatDriver& driver,
                                   JitPolicy policy);

// ---- The answer. ----

// One fatbin container (or a bare CUBIN or fatbin file).
struct CompatContainer {
  std::size_t file = 0;      // into CompatReport::files
  std::string member;        // archive member, "" otherwise
  std::string section;       // ".nv_fatbin", "__nv_relfatbin", ".data", ...; "" for a bare file
  std::uint64_t offset = 0;  // of the container in the file (or member)
  bool registered = false;   // in .nv_fatbin: registered by the CUDA runtime at start
  std::vector<ScannedImage> entries;
  std::vector<ContainerDecision> decisions;  // per target
};

// How a file fares on one target, worst first.
enum class CompatVerdict {
  cannot_run,   // some code meant for this GPU, or all of it, cannot run
  jit,          // runs, some of it only by JIT-compiling PTX
  native,       // runs from SASS
  no_cuda_code  // nothing to judge
};

// Why a file cannot run, where it cannot.
enum class CompatGap {
  none,
  predates,         // only code for older GPUs (SASS of an older major, no PTX that applies)
  other_gpus_only,  // only code for other GPUs (newer, or architecture-specific elsewhere)
  ptx_too_new,      // PTX that applies needs a newer driver
  jit_disabled,     // only PTX applies, and JIT is disabled
  not_loadable,     // only LTO-IR or relocatable code
  runtime_too_new,  // links a CUDA runtime of a newer major than the driver supports
};

struct CompatFileTarget {
  CompatVerdict verdict = CompatVerdict::no_cuda_code;
  CompatGap gap = CompatGap::none;
  std::size_t native = 0, jit = 0;       // containers that run, by how
  std::size_t other_gpus = 0;            // containers that hold only code for other GPUs, beside
                                         // ones that run here: a specialisation, not a fault
  std::size_t failed = 0;                // containers that cannot run and count against the file
  std::size_t unloadable = 0;            // containers of LTO-IR alone (or damaged entries): loaded
                                         // by no driver as they are, only through the program's
                                         // own JIT link (cuFFT's LTO callbacks); said, not failed
  std::size_t empty = 0;                 // containers that cannot run but hold no kernel
  std::uint64_t jit_ptx_bytes = 0;       // PTX to compile (decompressed), over the jit containers
  std::optional<PtxVersion> ptx_needed;  // ptx_too_new: the oldest ISA among the refused PTX
  std::vector<std::string> kernels;      // the kernels that cannot run (demangled)
};

struct CompatFile {
  std::string path;                // as reached (a wheel's member: "wheel.whl!torch/lib/x.so")
  std::size_t package = SIZE_MAX;  // into CompatReport::packages, SIZE_MAX for none
  std::uint64_t size = 0;
  bool has_cuda_code = false;
  std::string note;   // why not
  std::string error;  // "" or why the file could not be read (it is then not judged)
  std::size_t unreadable_entries = 0;
  std::vector<std::string> cuda_runtimes;  // DT_NEEDED libcudart.so.N
  std::vector<Arch> sass, ptx, lto_ir;     // what it holds, sorted, each once
  std::size_t containers = 0;
  std::vector<CompatFileTarget> targets;  // per target
};

struct CompatPackage {
  std::string name, version;  // "torch", "2.11.0" (a wheel's or a .dist-info's)
  std::string location;       // the .dist-info directory or the wheel
  std::string cuda_runtime;   // the libcudart it ships: "12.8.90" (its file's name), or ""
};

struct CompatReport {
  std::vector<CompatTarget> targets;
  CompatDriver driver;
  JitPolicy policy = JitPolicy::normal;
  std::vector<CompatFile> files;  // in the order reached
  std::vector<CompatPackage> packages;
  std::vector<CompatContainer> containers;  // every container, by file (CompatRequest::containers)
  std::size_t files_examined = 0;           // candidate files opened (the walk's), CUDA code or not
};

struct CompatRequest {
  // Files, directories (walked; symbolic links followed, each directory and file once),
  // wheels (.whl: read in memory), Python environments (an interpreter: its site-packages).
  std::vector<std::string> paths;
  std::vector<CompatTarget> targets;
  CompatDriver driver;
  JitPolicy policy = JitPolicy::normal;
  unsigned threads = 0;     // 0: one per hardware thread
  bool containers = false;  // keep every container in the report (else the files' roll-up only)
  // Read each PTX entry's text for `.version`/`.target` even where its header records the
  // version (tools/compat_vs_driver checks the two agree).
  bool read_ptx_text = false;
};

// Throws UsageError for a path that does not exist or a named file that is no CUDA binary,
// wheel or interpreter; files met in a directory walk that are not CUDA binaries are left
// out, and one that cannot be read is reported with its error.
CompatReport check_compat(const CompatRequest& request);

// The site-packages directories of a Python interpreter (a venv's, a conda environment's or
// a system one's), found from its path and the files beside it: nothing is run.
std::vector<std::string> python_site_packages(const std::string& interpreter);
// The active environment's interpreter: $VIRTUAL_ENV, $CONDA_PREFIX, else python3 on PATH;
// "" where there is none.
std::string active_python();

// Whether this build reads wheels (it was built with libzip).
bool compat_reads_wheels();

}  // namespace cudatool
