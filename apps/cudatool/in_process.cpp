#include "in_process.hpp"

#include <CLI/CLI.hpp>
#include <iostream>
#include <mutex>
#include <ostream>
#include <sstream>

#include "command.hpp"
#include "cudatool/base/error.hpp"
#include "render.hpp"

namespace cudatool::app {
namespace {

// Points the commands' streams (render.hpp) at the caller's for its lifetime. std::cout and
// std::cerr are never touched: another thread of the host may write to them meanwhile.
class UseStreams {
 public:
  UseStreams(std::ostream& out, std::ostream& err) : saved_(command_streams) {
    command_streams = {&out, &err};
  }
  UseStreams(const UseStreams&) = delete;
  UseStreams& operator=(const UseStreams&) = delete;
  ~UseStreams() { command_streams = saved_; }

 private:
  CommandStreams saved_;
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
  std::ostream to_out(out_buffer ? out_buffer : out.rdbuf());
  InProcessRun result;
  {
    const UseStreams streams(to_out, err);
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
