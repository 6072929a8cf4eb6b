// Internal: the one atomic write, below a directory handle. write_atomically (file_io.hpp)
// and the cache store (cache_store.hpp) both write through it.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace cudatool::detail {

struct AtomicWriteOutcome {
  int error = 0;         // 0, or the errno of the step that failed (the temporary is gone)
  bool created = false;  // the temporary was created (a failure after it, not of it)
};
// Writes `data` to a new temporary beside `name` (".<name>.<pid>.<n>.tmp", cut to fit
// NAME_MAX; never through a link; created with `create_mode` less the umask, then given
// `set_mode` where set) and renames it over `name`, so `name` is whole or untouched.
AtomicWriteOutcome write_atomically_at(int dir, const std::string& name, std::string_view data,
                                       unsigned create_mode, std::optional<unsigned> set_mode);

}  // namespace cudatool::detail
