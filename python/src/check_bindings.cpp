// check(): `cudatool check --json`, the command's flags (check_command.hpp; the Python
// arguments and `options` parsed as the executable parses them), its request, the library's
// run, and its JSON renderer.
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "check_command.hpp"
#include "command.hpp"
#include "render_check.hpp"

namespace cudatool::python {

using namespace nb::literals;

void bind_check(nb::module_& m) {
  m.def(
      "check",
      [](const std::vector<std::string>& arguments) {
        CLI::App parser{"", "check"};
        app::CheckOptions options;
        app::add_check_options(parser, options);
        app::parse_command_options(parser, arguments);
        check::Options request = app::check_request(options);
        std::optional<check::Report> report;
        {
          nb::gil_scoped_release unlocked;
          app::add_devices(options.devices, request);
          report.emplace(check::run_check(request));
        }
        const int status = app::to_int(app::check_exit_status(*report, options.strict));
        return std::make_tuple(
            status, document(app::check_json(*report, status), app::kCheckSchemaVersion));
      },
      "arguments"_a,
      "`cudatool check --json ARGUMENTS...`: (exit status, the document). The driver is "
      "opened here, once for the process.");
}

}  // namespace cudatool::python
