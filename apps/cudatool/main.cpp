// cudatool: parses the command line, runs one subcommand, and maps every error to the
// tool's exit codes (exit_status.hpp) in this one place.
#include <fcntl.h>
#include <unistd.h>

#include <cuda.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <new>
#include <nlohmann/json.hpp>
#include <streambuf>
#include <string>
#include <string_view>
#include <vector>

#include "command.hpp"
#include "cudatool/base/error.hpp"
#include "cudatool/base/text.hpp"
#include "exit_status.hpp"
#include "render.hpp"

namespace {

using cudatool::app::ExitStatus;

// A closed standard descriptor would be reused by the next open(): an output file would
// then receive what is meant for stdout. Each closed one is opened on /dev/null, stdout
// and stderr read-only, so that writing to them still fails and is reported.
void guard_standard_descriptors() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    const int opened = ::open("/dev/null", O_RDONLY | O_NOCTTY);
    if (opened >= 0 && opened != fd) {
      ::dup2(opened, fd);
      ::close(opened);
    }
  }
}

// std::cout's buffer: writes to descriptor 1 and keeps the errno of the first write that
// failed. A stream only remembers that it went bad, and errno is long gone by the time the
// command ends (a full disk under --version or attrs gave "cannot write standard output"
// with no reason). Nothing else writes to stdout (no printf), so nothing is reordered.
class StandardOutput : public std::streambuf {
 public:
  StandardOutput() { setp(buffer_, buffer_ + sizeof buffer_); }
  int error() const { return error_; }

 protected:
  int_type overflow(int_type c) override {
    if (!drain()) return traits_type::eof();
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    *pptr() = traits_type::to_char_type(c);
    pbump(1);
    return c;
  }
  int sync() override { return drain() ? 0 : -1; }

 private:
  bool drain() {
    const char* p = pbase();
    std::size_t left = static_cast<std::size_t>(pptr() - pbase());
    setp(buffer_, buffer_ + sizeof buffer_);
    while (left > 0) {
      const ssize_t n = ::write(STDOUT_FILENO, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        if (error_ == 0) error_ = n < 0 ? errno : EIO;
        return false;
      }
      p += n;
      left -= static_cast<std::size_t>(n);
    }
    return true;
  }

  char buffer_[1 << 16];
  int error_ = 0;
};

// Made once and never destroyed: std::cout is flushed at exit, after function statics are.
StandardOutput& standard_output() {
  static StandardOutput* const buffer = new StandardOutput;
  return *buffer;
}

// Standard output, flushed and checked: everything a command printed must have been
// written. A failure (a full disk, a closed or read-only stdout) is one line on stderr with
// the first failed write's reason and exit 1, unless the command failed already (its own
// status and line stand).
int finish(int status) {
  std::cout.flush();
  if (std::cout.good()) return status;
  const int error = standard_output().error();
  if (status == 0) {
    std::cerr << "cudatool: cannot write standard output"
              << (error != 0 ? std::string(": ") + std::strerror(error) : std::string()) << '\n';
    status = cudatool::app::to_int(ExitStatus::failure);
  }
  return status;
}

// The error document of --json on stdout (cudatool(1), JSON OUTPUT), with what `e` adds
// where it is a CUDA or compile error. Reporting must never fail in turn: the JSON goes
// through print_json (invalid UTF-8 replaced), and anything that still throws here leaves
// the line on stderr as the report.
void print_error_document(ExitStatus status, const std::string& message, const std::exception* e) {
  try {
    nlohmann::json error = {{"status", cudatool::app::exit_status_name(status)},
                            {"exit_code", cudatool::app::to_int(status)},
                            {"message", message}};
    if (const auto* cuda = dynamic_cast<const cudatool::Error*>(e); cuda && cuda->code()) {
      error["call"] = cuda->call();
      error["cuda_error"] = cuda->code_name();
      error["cuda_error_code"] = cuda->code();
    }
    if (const auto* compile = dynamic_cast<const cudatool::CompileError*>(e)) {
      error["log"] = compile->log();
      error["options"] = compile->options();
      error["compiler_version"] = compile->compiler_version();
    }
    cudatool::app::print_json(nlohmann::json{{"error", error}});
  } catch (...) {
  }
}

int report(const std::exception& e, bool json) {
  // A signal while nvcc ran: the shell's convention, 128 + N, and no document (nothing was
  // asked of the run any more).
  if (const auto* interrupted = dynamic_cast<const cudatool::InterruptedError*>(&e)) {
    std::cerr << "cudatool: " << cudatool::app::one_line(e.what()) << '\n';
    return 128 + interrupted->signal_number();
  }
  const ExitStatus status = cudatool::app::exit_status_for(e);
  std::string message;
  try {
    // An allocation that failed where nothing named it: say what happened, not "std::bad_alloc".
    message = dynamic_cast<const std::bad_alloc*>(&e) ? "out of memory (an allocation failed)"
                                                      : cudatool::app::one_line(e.what());
  } catch (...) {
    message = "out of memory while reporting an error";
  }
  std::cerr << "cudatool: " << message << '\n';
  if (json) print_error_document(status, message, &e);
  return cudatool::app::to_int(status);
}

// Whether --json is among the arguments (before a "--" that ends the options): a command
// line that does not parse has no parsed flags to ask, and a script that asked for JSON
// still gets the error document.
bool asks_for_json(const std::vector<std::string>& arguments) {
  for (std::size_t i = 1; i < arguments.size(); ++i) {
    if (arguments[i] == "--") return false;
    if (arguments[i] == "--json") return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  guard_standard_descriptors();
  std::cout.rdbuf(&standard_output());
  if (::isatty(STDOUT_FILENO)) std::cout << std::unitbuf;  // a terminal sees lines as they come
  CLI::App app{"cudatool: the truth about your CUDA GPUs", "cudatool"};
  cudatool::app::GlobalOptions global;
  const std::vector<cudatool::app::Command> commands = cudatool::app::add_commands(app, global);

  std::vector<std::string> arguments(argv, argv + argc);
  if (argc > 1 && arguments[1] == "compile")
    arguments = cudatool::app::normalize_compile_arguments(arguments);
  std::vector<char*> pointers;
  for (auto& a : arguments) pointers.push_back(a.data());
  pointers.push_back(nullptr);

  try {
    app.parse(argc, pointers.data());
  } catch (const CLI::CallForHelp& e) {
    return finish(app.exit(e));
  } catch (const CLI::CallForAllHelp& e) {
    return finish(app.exit(e));
  } catch (const CLI::CallForVersion& e) {
    return finish(app.exit(e));
  } catch (const CLI::ParseError& e) {
    // CLI11's own codes (100-114) become the tool's usage code, with one line on stderr.
    const std::string message = cudatool::app::parse_error_message(app, e, arguments);
    std::cerr << "cudatool: " << message << '\n';
    if (asks_for_json(arguments)) print_error_document(ExitStatus::usage, message, nullptr);
    return finish(cudatool::app::to_int(ExitStatus::usage));
  }

  for (const auto& command : commands) {
    if (!command.app->parsed()) continue;
    int status = 0;
    try {
      status = cudatool::app::to_int(command.run());
    } catch (const std::exception& e) {
      status = report(e, global.json);
    }
    return finish(status);
  }
  return cudatool::app::to_int(ExitStatus::usage);
}
