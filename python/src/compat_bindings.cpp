// compat(): `cudatool compat --json`, the command's request and answer (compat_report.hpp)
// with its JSON renderer.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "compat_report.hpp"

namespace cudatool::python {

using namespace nb::literals;

void bind_compat(nb::module_& m) {
  m.def(
      "compat",
      [](std::vector<std::string> paths, std::vector<std::string> arch,
         std::optional<std::string> driver, std::optional<std::string> cuda,
         std::optional<std::string> require, std::optional<std::string> ptx_jit, bool python,
         bool containers) {
        app::CompatOptions o;
        o.paths = std::move(paths);
        o.arch = std::move(arch);
        o.driver = std::move(driver);
        o.cuda = std::move(cuda);
        o.require = std::move(require);
        o.ptx_jit = std::move(ptx_jit);
        o.python = python;
        o.containers = containers;
        std::optional<app::CompatAnswer> answer;
        {
          nb::gil_scoped_release unlocked;
          answer.emplace(app::compat_answer(o));
        }
        return std::make_tuple(app::to_int(app::compat_exit_status(*answer)),
                               document(app::compat_json(*answer)));
      },
      "paths"_a, "arch"_a = std::vector<std::string>(), "driver"_a.none() = nb::none(),
      "cuda"_a.none() = nb::none(), "require"_a.none() = nb::none(),
      "ptx_jit"_a.none() = nb::none(), "python"_a = false, "containers"_a = false,
      "`cudatool compat --json` with these flags' values: (exit status, the document).");
}

}  // namespace cudatool::python
