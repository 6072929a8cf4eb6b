// A library opened at run time with dlopen (the CUDA driver, NVRTC, NVML): cudatool links
// none of them, so it starts, and explains what is missing, on a machine without them.
#pragma once

#include <string>
#include <vector>

namespace cudatool {

class DynamicLibrary {
 public:
  DynamicLibrary() = default;
  // Tries each candidate in order (a bare soname goes through the loader's search path);
  // throws LibraryNotFoundError naming `what` and every loader message when none opens.
  static DynamicLibrary open_first(const std::vector<std::string>& candidates,
                                   const std::string& what);
  DynamicLibrary(DynamicLibrary&& other) noexcept;
  DynamicLibrary& operator=(DynamicLibrary&& other) noexcept;
  DynamicLibrary(const DynamicLibrary&) = delete;
  DynamicLibrary& operator=(const DynamicLibrary&) = delete;
  ~DynamicLibrary();

  // The address of `name`, or nullptr.
  void* symbol(const char* name) const;
  const std::string& path() const { return path_; }  // the candidate that opened
  explicit operator bool() const { return handle_ != nullptr; }

 private:
  void* handle_ = nullptr;
  std::string path_;
};

}  // namespace cudatool
