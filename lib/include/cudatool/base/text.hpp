// Text that came from outside (arguments, environment variables, file contents) made safe
// to show: the one helper every message that echoes input uses.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace cudatool {

// The longest value a message echoes, in bytes of the input; the rest is cut and replaced
// by "...".
inline constexpr std::size_t kMaxEchoedValue = 80;

// `text` with every control character (below 0x20, 0x7f, and the C1 controls U+0080..U+009F)
// and every byte that is not part of valid UTF-8 written as an escape (\n, \t, \x1b, \xff),
// and every invisible or reordering character (zero-width spaces and joiners, the byte order
// mark, bidirectional embeddings, overrides and isolates, line and paragraph separators, tags)
// written as its code point (\u200b, \ufeff, \u202e, \U000e0001), cut after `max_bytes`
// bytes of the input with "..." appended. The result is valid UTF-8 on one line, and
// nothing in it is hidden or reordered on a terminal.
std::string printable(std::string_view text, std::size_t max_bytes = kMaxEchoedValue);

// `text` with each byte that is not part of valid UTF-8 replaced by U+FFFD, the replacement
// character (as the JSON writer does): for formats that take any UTF-8 but nothing else
// (Prometheus label values).
std::string valid_utf8(std::string_view text);

// printable(text) in double quotes: `"sm_\x1b[31m"`. What every message uses to echo a value (not
// std::quoted).
std::string quote_input(std::string_view text, std::size_t max_bytes = kMaxEchoedValue);

// The entries of a comma-separated list ("sm_80,sm_90"): the one splitter of list-valued
// flags. An empty entry ("", "a,", ",a", "a,,b") throws UsageError
// `<source> "<text>": an empty entry in the list (expected e.g. <example>)`.
std::vector<std::string> split_list(std::string_view text, std::string_view source,
                                    std::string_view example);

}  // namespace cudatool
