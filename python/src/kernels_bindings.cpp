// kernels(): `cudatool kernels --json`, and with a baseline or sizes its reports, through the
// command's request (kernels_command.hpp) and its streamed JSON renderers, written into the
// bytes object Python gets (bytes_output.hpp); the scan's messages become `warnings`.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <ostream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "bytes_output.hpp"
#include "kernels_command.hpp"

namespace cudatool::python {

using namespace nb::literals;

namespace {

// (exit status, the document as bytes, the warnings).
std::tuple<int, nb::bytes, std::vector<std::string>> kernels(app::KernelsOptions options) {
  options.no_progress = true;
  app::GlobalOptions global;
  global.format = app::Format::json;
  BytesOutput bytes;  // destroyed, if the scan throws, once the GIL is back
  Warnings warnings;
  app::ExitStatus status = app::ExitStatus::success;
  {
    nb::gil_scoped_release unlocked;
    app::KernelsRequest request = app::make_request(options, global);
    std::ostream out(&bytes);
    status = options.baseline || options.sizes
                 ? app::run_report(options, request, out, warnings.sink())
                 : app::write_kernels_json(request, out, warnings.sink());
    out.flush();
  }
  return {app::to_int(status), bytes.take(), std::move(warnings.lines)};
}

}  // namespace

void bind_kernels(nb::module_& m) {
  m.def(
      "kernels",
      [](std::vector<std::string> files, std::vector<std::string> arch,
         std::optional<std::string> kernel, std::optional<std::string> threads,
         std::optional<std::string> jobs, bool relocatable, std::optional<std::string> baseline,
         std::optional<std::string> fail_on, std::optional<std::string> top, bool sizes) {
        app::KernelsOptions o;
        o.files = std::move(files);
        o.arch_lists = std::move(arch);
        o.kernel = std::move(kernel);
        o.threads = std::move(threads);
        o.jobs = std::move(jobs);
        o.relocatable = relocatable;
        o.baseline = std::move(baseline);
        o.fail_on = std::move(fail_on);
        o.top = std::move(top);
        o.sizes = sizes;
        return kernels(std::move(o));
      },
      "files"_a, "arch"_a = std::vector<std::string>(), "kernel"_a.none() = nb::none(),
      "threads"_a.none() = nb::none(), "jobs"_a.none() = nb::none(), "relocatable"_a = false,
      "baseline"_a.none() = nb::none(), "fail_on"_a.none() = nb::none(),
      "top"_a.none() = nb::none(), "sizes"_a = false,
      "`cudatool kernels --json` with these flags' values (--baseline, --sizes: the reports): "
      "(exit status, the document as bytes, the warnings).");
}

}  // namespace cudatool::python
