// Sizes as people write and read them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace cudatool {

// "79.6 GiB", "48 KiB", "512 B": binary units, at most one decimal.
std::string format_bytes(std::uint64_t bytes);
// format_bytes(bytes), with the exact count added where it would read the same as `other`'s
// and the two differ: "80 GiB (85899345920 bytes)" beside "80.0 GiB (85899345921 bytes)",
// where a comparison is printed.
std::string format_bytes_beside(std::uint64_t bytes, std::uint64_t other);

// Parses a byte count: "49152", "48K", "48KiB", "48k", "1.5GiB", "64M". K, M, G, T (with
// or without "i"/"iB") are powers of 1024; "KB", "MB", "GB", "TB" are powers of 1000.
// Throws UsageError naming `source` for anything else, a negative value or an overflow.
std::uint64_t parse_size(std::string_view text, std::string_view source);

}  // namespace cudatool
