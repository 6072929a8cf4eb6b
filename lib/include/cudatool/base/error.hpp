// The error hierarchy of cudatool, after PyCUDA's: Error at the root, then LogicError,
// RuntimeError, MemoryError, LaunchError and CompileError. The tool's own refinements
// (a missing library, a missing device, a malformed value or file) derive from those, so a caller
// that only knows PyCUDA's classes still catches everything.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace cudatool {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
  // A failed driver call: `call` is the entry point ("cuDeviceGetName"), `code` the
  // CUresult, `code_name` its name ("CUDA_ERROR_INVALID_DEVICE"), `message` the driver's
  // description of it.
  Error(std::string call, int code, std::string code_name, std::string message);

  const std::string& call() const { return call_; }
  int code() const { return code_; }  // CUresult; 0 when the error is not a driver result
  const std::string& code_name() const { return code_name_; }
  const std::string& driver_message() const { return driver_message_; }

 private:
  std::string call_;
  int code_ = 0;
  std::string code_name_;
  std::string driver_message_;
};

// A call made wrongly: invalid value, handle or context. Fix the caller.
class LogicError : public Error {
 public:
  using Error::Error;
};

// Something in the environment failed: the driver, the device, the file system.
class RuntimeError : public Error {
 public:
  using Error::Error;
};

// Out of memory: device or page-locked host memory, or the process's own (an allocation that
// failed, std::bad_alloc, reported with what it was for and for which file).
class MemoryError : public Error {
 public:
  using Error::Error;
};

// A kernel launch or the work it started failed.
class LaunchError : public Error {
 public:
  using Error::Error;
};

// A compilation failed; carries the compiler's log, the options and the compiler version.
class CompileError : public Error {
 public:
  CompileError(const std::string& what, std::string log, std::vector<std::string> options,
               std::string compiler_version)
      : Error(what),
        log_(std::move(log)),
        options_(std::move(options)),
        compiler_version_(std::move(compiler_version)) {}
  const std::string& log() const { return log_; }
  const std::vector<std::string>& options() const { return options_; }
  const std::string& compiler_version() const { return compiler_version_; }

 private:
  std::string log_;
  std::vector<std::string> options_;
  std::string compiler_version_;
};

// A run-time library (libcuda.so.1, NVRTC, NVML) is missing, or too old for an entry
// point this build needs.
class LibraryNotFoundError : public RuntimeError {
 public:
  LibraryNotFoundError(const std::string& what, std::string library)
      : RuntimeError(what), library_(std::move(library)) {}
  const std::string& library() const { return library_; }

 private:
  std::string library_;
};

// No device is visible, or the one asked for does not exist.
class DeviceNotFoundError : public RuntimeError {
 public:
  using RuntimeError::RuntimeError;
};

// A device set does not meet what was required of it (count, compute capability, memory).
class RequirementError : public RuntimeError {
 public:
  using RuntimeError::RuntimeError;
};

// A signal (SIGINT, SIGTERM, SIGHUP, SIGQUIT) arrived while cudatool waited for a child
// process it had started (nvcc): the child's process group got it too and has ended, and
// the files it was writing are removed as this unwinds. main exits 128 + signal_number().
class InterruptedError : public RuntimeError {
 public:
  InterruptedError(const std::string& what, int signal_number)
      : RuntimeError(what), signal_number_(signal_number) {}
  int signal_number() const { return signal_number_; }

 private:
  int signal_number_;
};

// A malformed value from the user: a flag, an environment variable, a path that names
// nothing, a name or pattern that matches nothing.
class UsageError : public LogicError {
 public:
  using LogicError::LogicError;
};

// A file whose contents are malformed: bytes that are not the format they claim (a truncated
// ELF, corrupt zstd data, a JSON document of the wrong shape), an empty file, or one that
// changed while it was read. The fix is another file, not another command line; the message
// names the file and, where there is one, the offset. It refines UsageError so that the exit
// code (2, "usage"), the Python class (UsageError, a ValueError) and every existing catch stay
// as they were; catch InputError first to tell a bad file from a bad flag.
class InputError : public UsageError {
 public:
  using UsageError::UsageError;
};

}  // namespace cudatool
