#include "error_json.hpp"

#include <nlohmann/json.hpp>

#include "cudatool/base/error.hpp"
#include "render.hpp"

namespace cudatool::app {

void print_error_document(ExitStatus status, const std::string& message, const std::exception* e) {
  try {
    nlohmann::json error = {
        {"status", exit_status_name(status)}, {"exit_code", to_int(status)}, {"message", message}};
    if (const auto* cuda = dynamic_cast<const Error*>(e); cuda && cuda->code()) {
      error["call"] = cuda->call();
      error["cuda_error"] = cuda->code_name();
      error["cuda_error_code"] = cuda->code();
    }
    if (const auto* compile = dynamic_cast<const CompileError*>(e)) {
      error["log"] = compile->log();
      error["options"] = compile->options();
      error["compiler_version"] = compile->compiler_version();
    }
    print_json(nlohmann::json{{"error", error}});
  } catch (...) {
  }
}

}  // namespace cudatool::app
