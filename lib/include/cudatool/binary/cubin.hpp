// What a kernel costs, read from the CUBIN itself: no driver, no GPU. A CUBIN is an ELF64
// file (EM_CUDA); cudatool reads it with its own reader and takes, for each kernel (a
// FUNC symbol marked as an entry point and defined in the image: an undefined one is a
// kernel of another image that this one launches):
//
//   num_regs               EIATTR_REGCOUNT, or for a kernel without it (hand-written SASS)
//                          the top byte of its .text.<kernel> section's sh_info
//   local_size_bytes       EIATTR_MIN_STACK_SIZE in .nv.info (0x12), the per-thread stack
//                          the driver reserves; EIATTR_FRAME_SIZE (0x11) where it is absent,
//                          0 in a relocatable (-dc) CUBIN, whose stack the linker sizes.
//                          0xffffffff is nvlink's "cannot be statically determined"
//                          (recursion): the driver reports 0 (it runs such a kernel on the
//                          context's stack limit), and stack_unknown says so
//   shared_size_bytes      the size of .nv.shared.<kernel> (a size only: NOBITS, or
//                          SHT_CUDA_SHARED in relocatable CUBINs), less the 1 KiB
//                          block-reserved area that a loadable (ET_EXEC) sm_90+ image lays
//                          out at the start of every kernel's shared window: ptxas and
//                          nvlink both put it there, with or without the
//                          .nv.shared.reserved.0 marker (nvlink-linked images, CUDA 11.x
//                          have none). A relocatable image has no reserve yet (the device
//                          link adds it). Static shared memory only
//   const_size_bytes       the size of .nv.constant3, the module's __constant__ data
//   max_threads_per_block  the launch bounds (EIATTR_MAX_THREADS 0x05 in .nv.info.<kernel>),
//                          the device's 1024, and the largest block whose registers fit the
//                          64 K per block, as the hardware counts them (per warp rounded up
//                          to 256, warps rounded up to the SM's 4 sub-partitions). Not a
//                          required block size (EIATTR_REQNTID 0x10): the driver's attribute
//                          ignores it, and KernelBounds::reqntid carries it
//   num_barriers           EIATTR_NUM_BARRIERS (0x4c), for occupancy
//   code_size_bytes        the size of .text.<kernel>: the kernel's machine code
//   spill_store_bytes,     the bytes of register spills stored and loaded, as ptxas -v counts
//   spill_load_bytes       them: ptxas marks each spill instruction (EIATTR_ANNOTATIONS 0x55,
//                          type 1 "SpillRefill", at an offset into .text.<kernel>), and each
//                          marked STL/LDL adds its width (sm_70+ encoding: opcode in bits
//                          0-11, 0x387 STL, 0x983 LDL; width code in bits 73-75). Matches
//                          ptxas -v on sm_75 to sm_120 (CUDA 13.0). 0 without marks where
//                          the kernel has no stack frame or its toolkit marks every spill
//                          (EIATTR_CUDA_API_VERSION 128 and up); unknown (nullopt) otherwise,
//                          and where a mark is not a spill this reader decodes
//
// These are the names (and the JSON keys) of PyCUDA's function_attribute. The driver may
// still see it differently (cuFuncGetAttribute after loading is the truth; `cudatool
// compile --load` and tools/kernels_vs_driver compare the two).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cudatool/base/arch.hpp"

namespace cudatool {

struct KernelResources {
  std::string name;       // as in the CUBIN (mangled for C++ kernels)
  std::string demangled;  // abi::__cxa_demangle's, or `name` when it is not mangled
  int num_regs = 0;
  int shared_size_bytes = 0;
  int local_size_bytes = 0;
  int const_size_bytes = 0;
  int max_threads_per_block = 0;
  // Not a function attribute, but what occupancy needs: named barriers per block
  // (EIATTR_NUM_BARRIERS 0x4c in .nv.info.<kernel>; 0 when absent).
  int num_barriers = 0;
  // The linker could not size the stack (recursion, EIATTR_MIN_STACK_SIZE 0xffffffff):
  // local_size_bytes is the driver's 0, and the kernel runs on the context's stack limit.
  bool stack_unknown = false;
  // Not function attributes either: the kernel's machine code, and its register spills.
  std::uint64_t code_size_bytes = 0;
  std::optional<int> spill_store_bytes, spill_load_bytes;
  friend bool operator==(const KernelResources&, const KernelResources&) = default;
};

// What the image says about how a kernel may be launched (not function attributes).
struct KernelBounds {
  std::optional<int> max_threads;             // EIATTR_MAX_THREADS (__launch_bounds__)
  std::optional<std::array<int, 3>> reqntid;  // EIATTR_REQNTID: the required block size
  std::optional<std::array<int, 3>> cluster;  // EIATTR_CTA_PER_CLUSTER (__cluster_dims__)
  std::optional<int> max_registers;           // EIATTR_MAXREG_COUNT (__maxnreg__, -maxrregcount)
  friend bool operator==(const KernelBounds&, const KernelBounds&) = default;
};

struct CubinInfo {
  Arch arch;  // the target, sm_90 (the ELF header holds no variant)
  // A relocatable (-dc, ET_REL) image: registers and stack are final only after the device
  // link, and the driver does not load it as it is.
  bool relocatable = false;
  std::vector<KernelResources> kernels;  // in symbol-table order
  std::vector<KernelBounds> bounds;      // one per kernel, same order
};

// Throws InputError("not a CUBIN: ...") for anything that is not a well-formed CUDA ELF64.
CubinInfo read_cubin(std::span<const std::uint8_t> image);

}  // namespace cudatool
