// Reading and writing files, for the whole project: the one way to read an input file and
// the one atomic writer.
//
// Reading refuses what is not a regular file (a FIFO, a device, a directory, a socket),
// opens with O_NONBLOCK so that nothing it opens can block, and bounds how much it reads,
// so /dev/zero or a huge file never grows memory without bound.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace cudatool {

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
