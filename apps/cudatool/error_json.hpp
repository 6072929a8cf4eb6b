// The error document of --json on stdout (share/schemas/error.schema.json, cudatool(1),
// JSON OUTPUT): the status and message, with what `e` adds where it is a CUDA or compile
// error (the failed call and its error; the compiler's log, options and version).
#pragma once

#include <exception>
#include <string>

#include "exit_status.hpp"
#include "render.hpp"

namespace cudatool::app {

// Reporting must never fail in turn: the JSON goes through print_json (invalid UTF-8
// replaced), and anything that still throws here leaves the line on stderr as the report.
// `e` may be null (a command line that does not parse).
void print_error_document(ExitStatus status, const std::string& message, const std::exception* e,
                          std::ostream& out = command_out());

}  // namespace cudatool::app
