#include "error_json.hpp"

#include "cudatool/base/error.hpp"
#include "json_stream.hpp"

namespace cudatool::app {

void print_error_document(ExitStatus status, const std::string& message, const std::exception* e,
                          std::ostream& out) {
  try {
    JsonObject error;
    error.set("status", exit_status_name(status))
        .set("exit_code", to_int(status))
        .set("message", message);
    if (const auto* cuda = dynamic_cast<const Error*>(e); cuda && cuda->code())
      error.set("call", cuda->call())
          .set("cuda_error", cuda->code_name())
          .set("cuda_error_code", cuda->code());
    if (const auto* compile = dynamic_cast<const CompileError*>(e))
      error.set("log", compile->log())
          .set("options", compile->options())
          .set("compiler_version", compile->compiler_version());
    out << json_document(JsonObject().set("error", error));
  } catch (...) {
  }
}

}  // namespace cudatool::app
