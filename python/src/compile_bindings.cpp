// compile(): `cudatool compile --json`, the command's flags (compile_command.hpp; the Python
// arguments and `options` parsed as the executable parses them), the compiles through the
// cache, and its JSON renderer; the cache's notes become `warnings`, and a failed compile
// raises CompileError with the compiler's log.
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "command.hpp"
#include "compile_command.hpp"

namespace cudatool::python {

using namespace nb::literals;

void bind_compile(nb::module_& m) {
  m.def(
      "compile",
      [](const std::vector<std::string>& arguments) {
        // nvcc's spellings (-rdc, -Xptxas V) as the executable takes them after its name and
        // the command's.
        std::vector<std::string> command_line{"cudatool", "compile"};
        command_line.insert(command_line.end(), arguments.begin(), arguments.end());
        command_line = app::normalize_compile_arguments(command_line);
        command_line.erase(command_line.begin(), command_line.begin() + 2);
        CLI::App parser{"", "compile"};
        app::CompileFlags flags;
        app::add_compile_options(parser, flags);
        app::parse_command_options(parser, command_line);
        Warnings warnings;
        std::optional<app::CompileRun> run;
        app::ExitStatus status = app::ExitStatus::success;
        {
          nb::gil_scoped_release unlocked;
          run.emplace(app::compile_targets(flags, true, warnings.sink(),
                                           [](const CompileError&, const CompileRequest&) {}));
          status = app::differences_status(*run, warnings.sink());
        }
        return std::make_tuple(app::to_int(status),
                               document(app::compile_json(run->targets, flags, *run->cache),
                                        app::kCompileSchemaVersion),
                               std::move(warnings.lines));
      },
      "arguments"_a,
      "`cudatool compile --json ARGUMENTS...`: (exit status, the document, the warnings).");
}

}  // namespace cudatool::python
