#include "cudatool/base/file_io.hpp"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "base/atomic_write_at.hpp"
#include "base/unique_fd.hpp"
#include "cudatool/base/error.hpp"
#include "cudatool/base/text.hpp"

namespace cudatool {
namespace {

struct FileContent {
  std::string data;
  std::string error;  // empty on success
};

FileContent read_regular(const std::filesystem::path& path, std::size_t max_bytes) {
  FileContent r;
  // O_NONBLOCK: opening a FIFO for reading returns at once instead of waiting for a writer
  // (and fstat then refuses it); O_NOCTTY: a terminal never becomes the controlling one.
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
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
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (fd.get() < 0)
    cannot_write(what, path, errno == ENXIO ? "a FIFO with no reader" : std::strerror(errno));
  const int flags = ::fcntl(fd.get(), F_GETFL);
  if (flags < 0 || ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK) != 0)
    cannot_write(what, path, std::strerror(errno));
  int error = write_all(fd.get(), data);
  if (const int closed = fd.close(); closed != 0 && error == 0) error = closed;
  if (error != 0) cannot_write(what, path, std::strerror(error));
}

// The temporary's name: ".<name>.<pid>.<n>.tmp" beside the target, with <name> cut so the
// whole stays within NAME_MAX.
std::string temporary_for(std::string_view name) {
  static std::atomic<unsigned> counter{0};
  // Appended, not "." + std::string: GCC 12's -O3 warns (-Wrestrict) about the
  // literal-plus-temporary operator+ (a false positive).
  std::string suffix = ".";
  suffix += std::to_string(::getpid());
  suffix += '.';
  suffix += std::to_string(counter.fetch_add(1));
  suffix += ".tmp";
  const std::size_t room = NAME_MAX - suffix.size() - 1;  // 1 for the leading dot
  std::string temporary = ".";
  temporary.append(name.substr(0, room));
  temporary += suffix;
  return temporary;
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
  // Relative to the directory's handle (O_PATH: a directory one may write but not list).
  const std::filesystem::path parent = target.parent_path();
  UniqueFd dir(::open(parent.empty() ? "." : parent.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!dir) cannot_write(what, path, std::strerror(errno));
  // A new file gets 0666 less the umask, as any program's; a replaced one keeps its mode.
  const int error = detail::write_atomically_at(
                        dir.get(), target.filename().string(), data, 0666,
                        exists ? std::optional<unsigned>(st.st_mode & 0777) : std::nullopt)
                        .error;
  if (error != 0) cannot_write(what, path, std::strerror(error));
}

}  // namespace cudatool

namespace cudatool::detail {

AtomicWriteOutcome write_atomically_at(int dir, const std::string& name, std::string_view data,
                                       unsigned create_mode, std::optional<unsigned> set_mode) {
  // A name another writer's temporary holds (a process of the same id in another PID
  // namespace sharing the directory, a temporary left by a killed one): the next name.
  std::string temporary;
  UniqueFd fd;
  for (int attempt = 0; attempt < 8 && !fd; ++attempt) {
    temporary = temporary_for(name);
    fd = UniqueFd(::openat(dir, temporary.c_str(),
                           O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, create_mode));
    if (!fd && errno != EEXIST) return {errno, false};
  }
  if (!fd) return {EEXIST, false};
  int error = set_mode && ::fchmod(fd.get(), *set_mode) != 0 ? errno : 0;
  if (error == 0) error = write_all(fd.get(), data);
  if (const int closed = fd.close(); closed != 0 && error == 0) error = closed;
  if (error == 0 && ::renameat(dir, temporary.c_str(), dir, name.c_str()) != 0) error = errno;
  if (error != 0) ::unlinkat(dir, temporary.c_str(), 0);
  return {error, true};
}

std::optional<std::string> read_file(const std::filesystem::path& path, std::size_t max_bytes) {
  FileContent r = read_regular(path, max_bytes);
  if (!r.error.empty()) return std::nullopt;
  return std::move(r.data);
}

}  // namespace cudatool::detail
