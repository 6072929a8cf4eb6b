// C++ exceptions as the Python classes of cudatool/_errors.py, with the CLI's one-line message,
// its exit code and status, and what the error carries (the failed CUDA call, the compiler's
// log, the missing library, the unknown value).
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <exception>
#include <new>
#include <string>

#include "bindings.hpp"
#include "cudatool/base/error.hpp"
#include "cudatool/occupancy/occupancy.hpp"
#include "exit_status.hpp"
#include "render.hpp"

namespace cudatool::python {
namespace {

// Raises the Python class of cudatool._errors that matches `e`, with the CLI's one-line
// message and what the error carries.
void raise_translated(const std::exception& e) {
  const char* name = "Error";
  if (dynamic_cast<const UnknownValueError*>(&e))
    name = "UnknownValueError";
  else if (dynamic_cast<const RequirementError*>(&e))
    name = "RequirementError";
  else if (dynamic_cast<const DeviceNotFoundError*>(&e))
    name = "NoDevice";
  else if (dynamic_cast<const LibraryNotFoundError*>(&e))
    name = "DriverNotFound";
  else if (dynamic_cast<const InputError*>(&e))
    name = "InputError";
  else if (dynamic_cast<const UsageError*>(&e))
    name = "UsageError";
  else if (dynamic_cast<const CompileError*>(&e))
    name = "CompileError";
  else if (dynamic_cast<const LaunchError*>(&e))
    name = "LaunchError";
  else if (dynamic_cast<const MemoryError*>(&e) || dynamic_cast<const std::bad_alloc*>(&e))
    name = "MemoryError";
  else if (dynamic_cast<const LogicError*>(&e))
    name = "LogicError";
  else if (dynamic_cast<const RuntimeError*>(&e))
    name = "RuntimeError";
  const app::ExitStatus status = app::exit_status_for(e);
  nb::object errors = nb::module_::import_("cudatool._errors");
  nb::object cls = errors.attr(name);
  nb::object error = cls(nb::str(app::one_line(e.what()).c_str()));
  error.attr("exit_code") = app::to_int(status);
  error.attr("status") = nb::str(std::string(app::exit_status_name(status)).c_str());
  if (const auto* cuda = dynamic_cast<const Error*>(&e); cuda && cuda->code()) {
    error.attr("call") = cuda->call();
    error.attr("cuda_error") = cuda->code_name();
    error.attr("cuda_error_code") = cuda->code();
  }
  if (const auto* compile = dynamic_cast<const CompileError*>(&e)) {
    error.attr("log") = compile->log();
    error.attr("options") = compile->options();
    error.attr("compiler_version") = compile->compiler_version();
  }
  if (const auto* missing = dynamic_cast<const LibraryNotFoundError*>(&e))
    error.attr("library") = missing->library();
  if (const auto* unknown = dynamic_cast<const UnknownValueError*>(&e)) {
    error.attr("unknown") = to_python(unknown->unknown());
  }
  PyErr_SetObject(cls.ptr(), error.ptr());
}

}  // namespace

void register_errors(nb::module_&) {
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const nb::builtin_exception&) {
      throw;
    } catch (const nb::python_error&) {
      throw;
    } catch (const std::exception& e) {
      raise_translated(e);
    }
  });
}

}  // namespace cudatool::python
