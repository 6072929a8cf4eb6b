// cudatool._cudatool: the C++ half of the Python module. Each command's request, the
// library's answer and the CLI's own JSON renderer are bound directly (the files named in
// bindings.hpp): no command line is run and no process-wide stream is touched, and every
// document equals `cudatool ... --json` because the same renderer writes it. C++ exceptions
// become the Python classes of cudatool/_errors.py (errors.cpp). Nothing here loads libcuda:
// the library opens it at the first call that needs it.
#include <nanobind/nanobind.h>

#include "bindings.hpp"

namespace cudatool::python {

nb::object json_loads(std::string_view text) {
  return nb::module_::import_("json").attr("loads")(nb::str(text.data(), text.size()));
}

}  // namespace cudatool::python

NB_MODULE(_cudatool, m) {
  using namespace cudatool::python;
  m.doc() = "cudatool's C++ core (libcudatool and the CLI's renderers); use the cudatool package.";
  m.attr("__version__") = CUDATOOL_VERSION;
  register_errors(m);
  bind_devices(m);
  bind_device_data(m);
  bind_occupancy(m);
  bind_kernels(m);
  bind_compat(m);
  bind_compile(m);
  bind_check(m);
}
