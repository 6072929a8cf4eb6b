// Reading and writing files, for the whole project: whole-file reads (the compiler and its
// cache) and the atomic writer (`compile -o`).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace cudatool::detail {

// The whole file, or nullopt when it cannot be opened or read.
std::optional<std::string> read_file(const std::filesystem::path& path);

}  // namespace cudatool::detail

namespace cudatool {

// Writes `data` to `path` through a temporary file in the same directory and a rename: the
// file is whole or untouched. Throws UsageError naming `path` and the system's reason.
void write_atomically(const std::filesystem::path& path, std::string_view data);

}  // namespace cudatool
