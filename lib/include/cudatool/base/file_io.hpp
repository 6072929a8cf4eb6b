// Whole-file reads shared by the compiler and its cache (internal to the library).
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace cudatool::detail {

// The whole file, or nullopt when it cannot be opened or read.
std::optional<std::string> read_file(const std::filesystem::path& path);

}  // namespace cudatool::detail
