#include "in_process.hpp"

#include <CLI/CLI.hpp>
#include <iostream>
#include <mutex>
#include <sstream>

#include "command.hpp"
#include "cudatool/base/error.hpp"

namespace cudatool::app {
namespace {

// Points a standard stream at a string for its lifetime.
class Redirect {
 public:
  Redirect(std::ostream& stream, std::streambuf* to) : stream_(stream), saved_(stream.rdbuf(to)) {}
  Redirect(const Redirect&) = delete;
  Redirect& operator=(const Redirect&) = delete;
  ~Redirect() {
    stream_.rdbuf(saved_);
    stream_.clear();
  }

 private:
  std::ostream& stream_;
  std::streambuf* saved_;
};

}  // namespace

InProcessRun run_in_process(const std::vector<std::string>& command_line,
                            std::streambuf* out_buffer) {
  static std::mutex one_at_a_time;
  const std::lock_guard<std::mutex> lock(one_at_a_time);

  CLI::App app{"cudatool: the truth about your CUDA GPUs", "cudatool"};
  GlobalOptions global;
  const std::vector<Command> commands = add_commands(app, global);
  std::vector<std::string> arguments{"cudatool"};
  arguments.insert(arguments.end(), command_line.begin(), command_line.end());
  if (arguments.size() > 1 && arguments[1] == "compile")
    arguments = normalize_compile_arguments(arguments);
  std::vector<char*> pointers;
  for (auto& a : arguments) pointers.push_back(a.data());
  pointers.push_back(nullptr);

  std::ostringstream out, err;
  InProcessRun result;
  {
    const Redirect to_out(std::cout, out_buffer ? out_buffer : out.rdbuf());
    const Redirect to_err(std::cerr, err.rdbuf());
    try {
      app.parse(static_cast<int>(arguments.size()), pointers.data());
    } catch (const CLI::ParseError& e) {
      throw UsageError(parse_error_message(app, e, arguments));
    }
    for (const auto& command : commands) {
      if (!command.app->parsed()) continue;
      result.status = command.run();
      break;
    }
  }
  result.out = std::move(out).str();
  result.err = std::move(err).str();
  return result;
}

}  // namespace cudatool::app
