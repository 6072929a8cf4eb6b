#include "cudatool/compile/module.hpp"

#include <map>
#include <mutex>
#include <utility>

#include "binary/cubin_reader.hpp"
#include "cudatool/base/sha256.hpp"
#include "driver/driver_api.hpp"

namespace cudatool {

Module::Module(const Context& context, std::string_view image) : context_(context.handle()) {
  context.make_current();
  // The driver reads a CUBIN by its ELF header and a PTX image up to its NUL.
  std::string data(image);
  data.push_back('\0');
  CUDATOOL_CU(cuModuleLoadDataEx, &module_, static_cast<const void*>(data.data()), 0u,
              static_cast<CUjit_option*>(nullptr), static_cast<void**>(nullptr));
}

Module::Module(Module&& other) noexcept
    : module_(std::exchange(other.module_, nullptr)),
      context_(std::exchange(other.context_, nullptr)) {}

Module& Module::operator=(Module&& other) noexcept {
  if (this != &other) {
    unload();
    module_ = std::exchange(other.module_, nullptr);
    context_ = std::exchange(other.context_, nullptr);
  }
  return *this;
}

Module::~Module() {
  unload();
}

void Module::unload() noexcept {
  if (module_ == nullptr) return;
  // Nowhere for an error to go from here; the driver reclaims modules with the context.
  try {
    const auto& api = driver::api();
    if (api.cuCtxPushCurrent && api.cuCtxPushCurrent(context_) == CUDA_SUCCESS) {
      if (api.cuModuleUnload) api.cuModuleUnload(module_);
      CUcontext popped = nullptr;
      if (api.cuCtxPopCurrent) api.cuCtxPopCurrent(&popped);
    }
  } catch (...) {
  }
  module_ = nullptr;
}

CUfunction Module::function(const std::string& name) const {
  CUfunction function = nullptr;
  CUDATOOL_CU(cuModuleGetFunction, &function, module_, name.c_str());
  return function;
}

KernelResources Module::resources(const std::string& name, const std::string& demangled) const {
  const CUfunction f = function(name);
  auto attribute = [&](CUfunction_attribute a) {
    int value = 0;
    CUDATOOL_CU(cuFuncGetAttribute, &value, a, f);
    return value;
  };
  KernelResources k;
  k.name = name;
  k.demangled = demangled.empty() ? demangle(name) : demangled;
  k.num_regs = attribute(CU_FUNC_ATTRIBUTE_NUM_REGS);
  k.shared_size_bytes = attribute(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
  k.local_size_bytes = attribute(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES);
  k.const_size_bytes = attribute(CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES);
  k.max_threads_per_block = attribute(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  return k;
}

namespace {

struct ModuleMemo {
  std::mutex mutex;
  std::map<std::pair<CUcontext, std::string>, std::shared_ptr<const Module>> modules;
};

ModuleMemo& module_memo() {
  static ModuleMemo m;
  return m;
}

}  // namespace

std::shared_ptr<const Module> load_module_memoized(const Context& context, std::string_view image) {
  auto key = std::make_pair(context.handle(), sha256_hex(image));
  ModuleMemo& m = module_memo();
  std::lock_guard lock(m.mutex);
  if (auto it = m.modules.find(key); it != m.modules.end()) return it->second;
  auto module = std::make_shared<const Module>(context, image);
  m.modules.emplace(std::move(key), module);
  return module;
}

std::size_t clear_module_memo() {
  ModuleMemo& m = module_memo();
  std::lock_guard lock(m.mutex);
  const std::size_t n = m.modules.size();
  m.modules.clear();
  return n;
}

std::size_t module_memo_size() {
  ModuleMemo& m = module_memo();
  std::lock_guard lock(m.mutex);
  return m.modules.size();
}

std::vector<ResourceDifference> compare_resources(const std::vector<KernelResources>& offline,
                                                  const std::vector<KernelResources>& loaded) {
  std::vector<ResourceDifference> differences;
  std::map<std::string, const KernelResources*> by_name;
  for (const auto& k : loaded) by_name[k.name] = &k;
  for (const auto& a : offline) {
    auto it = by_name.find(a.name);
    if (it == by_name.end()) {
      differences.push_back({a.name, "present", 1, 0});
      continue;
    }
    const KernelResources& b = *it->second;
    auto check = [&](const char* attribute, int x, int y) {
      if (x != y) differences.push_back({a.name, attribute, x, y});
    };
    check("num_regs", a.num_regs, b.num_regs);
    check("shared_size_bytes", a.shared_size_bytes, b.shared_size_bytes);
    check("local_size_bytes", a.local_size_bytes, b.local_size_bytes);
    check("const_size_bytes", a.const_size_bytes, b.const_size_bytes);
    check("max_threads_per_block", a.max_threads_per_block, b.max_threads_per_block);
    by_name.erase(it);
  }
  for (const auto& [name, k] : by_name) differences.push_back({name, "present", 0, 1});
  return differences;
}

}  // namespace cudatool
