#include "standard_output.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <streambuf>
#include <string>
#include <string_view>

#include "cudatool/base/file_io.hpp"
#include "exit_status.hpp"

namespace cudatool::app {

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

namespace {

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
  // A block as large as the buffer goes to the descriptor from where it is, after what is
  // buffered: `kernels --json` writes 44 MB of kernels text for libcublasLt, which was
  // copied through the buffer 64 KiB at a time after the scan.
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    if (n < static_cast<std::streamsize>(sizeof buffer_)) return std::streambuf::xsputn(s, n);
    if (!drain() || !write_block(s, static_cast<std::size_t>(n))) return 0;
    return n;
  }

 private:
  bool drain() {
    const char* p = pbase();
    const std::size_t left = static_cast<std::size_t>(pptr() - pbase());
    setp(buffer_, buffer_ + sizeof buffer_);
    return write_block(p, left);
  }

  // The whole block, or false with the first failure's errno kept.
  bool write_block(const char* p, std::size_t size) {
    const int error = write_all(STDOUT_FILENO, std::string_view(p, size));
    if (error != 0 && error_ == 0) error_ = error;
    return error == 0;
  }

  char buffer_[1 << 16];
  int error_ = 0;
};

// Made once and never destroyed: std::cout is flushed at exit, after function statics are.
StandardOutput& standard_output() {
  static StandardOutput* const buffer = new StandardOutput;
  return *buffer;
}

}  // namespace

void use_standard_output() {
  std::cout.rdbuf(&standard_output());
}

int finish(int status) {
  std::cout.flush();
  if (std::cout.good()) return status;
  // Said whatever the status: a command that failed too (a missing file among others, a
  // failed check) also lost what it printed, and its own line does not say so.
  const int error = standard_output().error();
  std::cerr << "cudatool: cannot write standard output"
            << (error != 0 ? std::string(": ") + std::strerror(error) : std::string()) << '\n';
  return status == 0 ? to_int(ExitStatus::failure) : status;
}

}  // namespace cudatool::app
