// A compiled image loaded into a context (cuModuleLoadDataEx), and what the driver says
// about its kernels: the truth the offline CUBIN reader (cubin.hpp) is checked against.
// Loaded modules are memoised per context, like PyCUDA's context_dependent_memoize.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cudatool/binary/cubin.hpp"
#include "cudatool/device/context.hpp"
#include "cudatool/driver/handles.hpp"

namespace cudatool {

class Module {
 public:
  // Loads `image` (CUBIN, PTX or fatbin) into `context`, which is made current. Throws
  // the driver's error (LogicError for an invalid image).
  Module(const Context& context, std::string_view image);
  Module(Module&& other) noexcept;
  Module& operator=(Module&& other) noexcept;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  ~Module();  // unloads, in its context

  ModuleHandle handle() const { return module_; }     // CUmodule
  ContextHandle context() const { return context_; }  // CUcontext
  // Throws LogicError (CUDA_ERROR_NOT_FOUND) when the module has no such kernel.
  FunctionHandle function(const std::string& name) const;  // CUfunction
  // cuFuncGetAttribute's NUM_REGS, SHARED_SIZE_BYTES, LOCAL_SIZE_BYTES, CONST_SIZE_BYTES
  // and MAX_THREADS_PER_BLOCK of the kernel `name` (name and demangled as given).
  KernelResources resources(const std::string& name, const std::string& demangled = "") const;

 private:
  void unload() noexcept;
  ModuleHandle module_ = nullptr;
  ContextHandle context_ = nullptr;
};

// The module of `image` in `context`, loaded once per (context, image content) for the
// life of the process or until clear_module_memo().
std::shared_ptr<const Module> load_module_memoized(const Context& context, std::string_view image);
// Forgets (and, once unused elsewhere, unloads) every memoised module; returns how many.
std::size_t clear_module_memo();
std::size_t module_memo_size();

// One attribute on which the CUBIN and the driver disagree.
struct ResourceDifference {
  std::string kernel;
  std::string attribute;  // "num_regs", "shared_size_bytes", ...
  long long offline = 0;
  long long loaded = 0;
};

// Every difference in the five function attributes, kernel by kernel (matched by name);
// a kernel present on one side only is a difference with attribute "present".
std::vector<ResourceDifference> compare_resources(const std::vector<KernelResources>& offline,
                                                  const std::vector<KernelResources>& loaded);

}  // namespace cudatool
