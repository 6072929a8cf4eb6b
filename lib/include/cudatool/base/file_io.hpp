// Reading and writing files, for the whole project: the one way to read an input file, the
// one atomic writer, and the one pair of EINTR-safe loops over a descriptor.
//
// Reading refuses what is not a regular file (a FIFO, a device, a directory, a socket),
// opens with O_NONBLOCK so that nothing it opens can block, and bounds how much it reads,
// so /dev/zero or a huge file never grows memory without bound.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace cudatool {

// Writes all of `data` to the descriptor `fd`, going on after EINTR and short writes: 0, or
// the errno of the failure (EIO for a write that wrote nothing).
int write_all(int fd, std::string_view data) noexcept;

struct ReadOutcome {
  std::size_t bytes = 0;  // read into the buffer's start
  int error = 0;          // 0, or the errno of the failed read
};
// Reads from `fd` into `buffer` until it is full or the input ends, going on after EINTR and
// short reads (bytes < buffer.size() with error 0: the end of the input).
ReadOutcome read_full(int fd, std::span<char> buffer) noexcept;
// One read(2) of up to buffer.size() bytes, repeated while it is interrupted (EINTR): for
// streams (a pipe, stdin) read piece by piece. bytes 0 with error 0: the end of the input.
ReadOutcome read_some(int fd, std::span<char> buffer) noexcept;

// Bounds for read_input_file: a small configuration file (~/.cuda-device) and any other
// input (a source, a binary, a cache entry, compile_commands.json).
inline constexpr std::size_t kMaxConfigFileBytes = 4096;
inline constexpr std::size_t kMaxInputFileBytes = std::size_t{1} << 30;  // 1 GiB

// The whole content of the regular file `path`. Throws UsageError
// `<what> "<path>": <reason>` (the path quoted as text.hpp's quote_input() does) when it does not
// exist, cannot be opened or read, is not a regular file, or is larger than `max_bytes`.
std::string read_input_file(const std::filesystem::path& path, std::string_view what,
                            std::size_t max_bytes = kMaxInputFileBytes);

// True when `path` names a regular file (after following symbolic links). For checks before
// handing a path to something that would block on a FIFO (dlopen).
bool is_regular_file(const std::filesystem::path& path) noexcept;

// Writes `data` to `path` (the -o of a command; `what` names it in messages, "-o"):
//  - a regular file, or a path where nothing is yet: through a temporary file in the same
//    directory and a rename, so the file is whole or untouched. A replaced file keeps its
//    permission bits (a 0600 file stays 0600); a new one gets 0666 less the umask. A
//    symbolic link is written through: its target is replaced (or, for a dangling link,
//    created), the link stays. The temporary's name is cut to fit NAME_MAX.
//  - a character device or a FIFO (/dev/null, /dev/stdout, a pipe): written in place, never
//    replaced; a FIFO with no reader is an error, not a wait.
//  - anything else (a directory, a block device, a socket): refused.
// Throws UsageError `<what> "<path>": cannot write: <reason>`.
void write_atomically(const std::filesystem::path& path, std::string_view data,
                      std::string_view what = "-o");

}  // namespace cudatool

namespace cudatool::detail {

// read_input_file without the exception: nullopt for anything read_input_file refuses.
std::optional<std::string> read_file(const std::filesystem::path& path,
                                     std::size_t max_bytes = kMaxInputFileBytes);

}  // namespace cudatool::detail
