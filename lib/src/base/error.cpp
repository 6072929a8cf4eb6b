#include "cudatool/base/error.hpp"

namespace cudatool {
namespace {

std::string compose(const std::string& call, const std::string& name, const std::string& msg) {
  std::string what = call + " failed: " + name;
  if (!msg.empty()) what += " (" + msg + ")";
  return what;
}

}  // namespace

Error::Error(std::string call, int code, std::string code_name, std::string message)
    : std::runtime_error(compose(call, code_name, message)),
      call_(std::move(call)),
      code_(code),
      code_name_(std::move(code_name)),
      driver_message_(std::move(message)) {}

}  // namespace cudatool
