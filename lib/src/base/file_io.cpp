#include "cudatool/base/file_io.hpp"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "cudatool/base/error.hpp"
#include "cudatool/base/text.hpp"

namespace cudatool {
namespace {

// Closes a descriptor on every path out.
class Descriptor {
 public:
  explicit Descriptor(int fd) : fd_(fd) {}
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  ~Descriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  int release_and_close() {
    const int result = ::close(fd_);
    fd_ = -1;
    return result;
  }

 private:
  int fd_;
};

struct FileContent {
  std::string data;
  std::string error;  // empty on success
};

FileContent read_regular(const std::filesystem::path& path, std::size_t max_bytes) {
  FileContent r;
  // O_NONBLOCK: opening a FIFO for reading returns at once instead of waiting for a writer
  // (and fstat then refuses it); O_NOCTTY: a terminal never becomes the controlling one.
  Descriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (fd.get() < 0) {
    r.error = std::strerror(errno);
    return r;
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    r.error = std::strerror(errno);
    return r;
  }
  if (S_ISDIR(st.st_mode)) {
    r.error = "is a directory, not a file";
    return r;
  }
  if (!S_ISREG(st.st_mode)) {
    r.error = S_ISFIFO(st.st_mode)   ? "is a FIFO, not a regular file"
              : S_ISCHR(st.st_mode)  ? "is a character device, not a regular file"
              : S_ISBLK(st.st_mode)  ? "is a block device, not a regular file"
              : S_ISSOCK(st.st_mode) ? "is a socket, not a regular file"
                                     : "is not a regular file";
    return r;
  }
  const auto too_large = [&] {
    r.data.clear();
    r.error = "larger than " + std::to_string(max_bytes) + " bytes";
  };
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes) {
    too_large();
    return r;
  }
  r.data.reserve(static_cast<std::size_t>(st.st_size));
  char buffer[65536];
  for (;;) {
    const ReadOutcome got = read_some(fd.get(), buffer);
    if (got.error != 0) {
      r.data.clear();
      r.error = std::strerror(got.error);
      return r;
    }
    if (got.bytes == 0) break;
    // The file may grow while it is read: the bound holds for what is read, not just the
    // size fstat saw.
    if (r.data.size() + got.bytes > max_bytes) {
      too_large();
      return r;
    }
    r.data.append(buffer, got.bytes);
  }
  return r;
}

[[noreturn]] void cannot_write(std::string_view what, const std::filesystem::path& path,
                               const std::string& reason) {
  throw UsageError(std::string(what) + " " + quote_input(path.string()) +
                   ": cannot write: " + reason);
}

// A FIFO or character device: written in place. O_NONBLOCK on open makes a FIFO without a
// reader fail (ENXIO) instead of waiting; the writes themselves then block as usual.
void write_in_place(const std::filesystem::path& path, std::string_view data,
                    std::string_view what) {
  Descriptor fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (fd.get() < 0)
    cannot_write(what, path, errno == ENXIO ? "a FIFO with no reader" : std::strerror(errno));
  const int flags = ::fcntl(fd.get(), F_GETFL);
  if (flags < 0 || ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK) != 0)
    cannot_write(what, path, std::strerror(errno));
  int error = write_all(fd.get(), data);
  if (fd.release_and_close() != 0 && error == 0) error = errno;
  if (error != 0) cannot_write(what, path, std::strerror(error));
}

// The temporary's name: ".<name>.<pid>.<n>.tmp" beside the target, with <name> cut so the
// whole stays within NAME_MAX.
std::filesystem::path temporary_for(const std::filesystem::path& target) {
  static std::atomic<unsigned> counter{0};
  // Appended, not "." + std::string: GCC 12's -O3 warns (-Wrestrict) about the
  // literal-plus-temporary operator+ (a false positive).
  std::string suffix = ".";
  suffix += std::to_string(::getpid());
  suffix += '.';
  suffix += std::to_string(counter.fetch_add(1));
  suffix += ".tmp";
  std::string name = target.filename().string();
  const std::size_t room = NAME_MAX - suffix.size() - 1;  // 1 for the leading dot
  if (name.size() > room) name.resize(room);
  return target.parent_path() / ("." + name + suffix);
}

}  // namespace

int write_all(int fd, std::string_view data) noexcept {
  std::size_t written = 0;
  while (written < data.size()) {
    const ssize_t n = ::write(fd, data.data() + written, data.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return EIO;
    written += static_cast<std::size_t>(n);
  }
  return 0;
}

ReadOutcome read_some(int fd, std::span<char> buffer) noexcept {
  for (;;) {
    const ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n >= 0) return {static_cast<std::size_t>(n), 0};
    if (errno != EINTR) return {0, errno};
  }
}

ReadOutcome read_full(int fd, std::span<char> buffer) noexcept {
  ReadOutcome r;
  while (r.bytes < buffer.size()) {
    const ReadOutcome got = read_some(fd, buffer.subspan(r.bytes));
    if (got.error != 0) return {r.bytes, got.error};
    if (got.bytes == 0) break;
    r.bytes += got.bytes;
  }
  return r;
}

std::string read_input_file(const std::filesystem::path& path, std::string_view what,
                            std::size_t max_bytes) {
  FileContent r = read_regular(path, max_bytes);
  if (!r.error.empty())
    throw UsageError(std::string(what) + " " + quote_input(path.string()) + ": " +
                     (r.error.starts_with("is ") || r.error.starts_with("larger")
                          ? r.error
                          : "cannot read: " + r.error));
  return std::move(r.data);
}

bool is_regular_file(const std::filesystem::path& path) noexcept {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

void write_atomically(const std::filesystem::path& path, std::string_view data,
                      std::string_view what) {
  if (path.empty()) cannot_write(what, path, "empty file name");
  // A device or a FIFO at the end of the links, /dev/stdout on a pipe included: its last
  // link (/proc/self/fd/1 -> "pipe:[N]") names nothing a path can reach, but opening the
  // path itself reaches it.
  if (struct stat end{};
      ::stat(path.c_str(), &end) == 0 && (S_ISCHR(end.st_mode) || S_ISFIFO(end.st_mode)))
    return write_in_place(path, data, what);
  // Through symbolic links, one hop at a time (a dangling link names the file to create).
  std::filesystem::path target = path;
  struct stat st {};
  for (int hops = 0; ::lstat(target.c_str(), &st) == 0 && S_ISLNK(st.st_mode); ++hops) {
    if (hops == 40) cannot_write(what, path, std::strerror(ELOOP));
    std::error_code ec;
    const std::filesystem::path next = std::filesystem::read_symlink(target, ec);
    if (ec) cannot_write(what, path, ec.message());
    target = next.is_absolute() ? next : target.parent_path() / next;
  }
  bool exists = false;
  if (::stat(target.c_str(), &st) == 0) {
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) return write_in_place(target, data, what);
    if (S_ISDIR(st.st_mode)) cannot_write(what, path, "is a directory");
    if (!S_ISREG(st.st_mode))
      cannot_write(what, path, "not a regular file, a character device or a FIFO");
    exists = true;
  }
  const std::filesystem::path temporary = temporary_for(target);
  // A new file gets 0666 less the umask, as any program's; a replaced one keeps its mode.
  Descriptor fd(::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666));
  if (fd.get() < 0) cannot_write(what, path, std::strerror(errno));
  int error = exists && ::fchmod(fd.get(), st.st_mode & 0777) != 0 ? errno : 0;
  if (error == 0) error = write_all(fd.get(), data);
  if (fd.release_and_close() != 0 && error == 0) error = errno;
  if (error == 0 && ::rename(temporary.c_str(), target.c_str()) != 0) error = errno;
  if (error != 0) {
    ::unlink(temporary.c_str());
    cannot_write(what, path, std::strerror(error));
  }
}

}  // namespace cudatool

namespace cudatool::detail {

std::optional<std::string> read_file(const std::filesystem::path& path, std::size_t max_bytes) {
  FileContent r = read_regular(path, max_bytes);
  if (!r.error.empty()) return std::nullopt;
  return std::move(r.data);
}

}  // namespace cudatool::detail
