// The one cache store: what every on-disk cache of cudatool (the compile cache, the device
// cache) goes through to find its directory, trust what is there, and read and write its
// entries. A cache decides what to keep and when; the store decides how it is kept.
//
// - Where: cache_home(), the XDG Base Directory rule ($XDG_CACHE_HOME when absolute, else
//   $HOME/.cache).
// - Trust, as ssh treats its files: a directory or an entry that someone else owns, or that
//   others may write, is not trusted (untrusted()). Each cache names its rule (CacheTrust).
// - Paths below a cache's directory are opened relative to a directory handle and never
//   through a symbolic link.
// - One entry format for every cache: a short text header and the payload,
//     cudatool-cache 2\n  key <1..64 hex digits>\n  size <decimal>\n  sha256 <64 hex digits>\n
//   where the key is the entry's own (an entry copied over another's name is refused) and the
//   size and checksum cover the payload. decode_cache_entry() reads it bounds-checked and
//   accepts exactly what encode_cache_entry() writes.
// - Writes go through a temporary file renamed into place (atomic_write_at.hpp, as file_io's
// write_atomically), so
//   a reader sees a whole entry or none, and any number of processes may write at once.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "base/atomic_write_at.hpp"
#include "base/unique_fd.hpp"

namespace cudatool {

// ---- where ---------------------------------------------------------------------------------

struct CacheHome {
  std::string variable;         // "XDG_CACHE_HOME" or "HOME"; empty where neither is set
  std::filesystem::path value;  // the variable's value
  std::filesystem::path dir;    // the cache home: value, or value/.cache for HOME
};
// $XDG_CACHE_HOME when it is set and absolute (the spec: a relative one is invalid and
// ignored), else $HOME (any non-empty value; a caller that needs an absolute one checks).
CacheHome cache_home();

// `path` and its missing parents, each created 0700 (a cache holds what the user's work
// produced); what exists already is left as it is.
std::error_code make_private_directories(const std::filesystem::path& path);

// ---- trust ---------------------------------------------------------------------------------

struct CacheTrust {
  bool root_may_own = false;            // a file of root's is trusted too
  mode_t forbidden_mode = 077;          // permission bits a trusted file may not have
  bool sticky_top_may_be_open = false;  // a cache's own top directory may be open to others
                                        // when sticky (a shared 1777 directory like /tmp)
};
// The compile cache's rule (ssh's): the user's or root's, not writable by group or others.
inline constexpr CacheTrust kTrustNotWritableByOthers{true, S_IWGRP | S_IWOTH, true};
// The device cache's rule: the user's own, open to nobody else.
inline constexpr CacheTrust kTrustPrivate{false, 077, false};

struct CacheDistrust {
  enum class Reason { owner, mode } reason;
  uid_t owner = 0;
  mode_t mode = 0;  // permission bits, 07777
  // "owned by uid N, not by you (uid M)", "writable by others (mode 0777)"
  std::string message() const;
};
// Why a file of `info` is not to be trusted under `rule`; nullopt when it is. `top`: the
// cache's own directory.
std::optional<CacheDistrust> untrusted(const struct stat& info, const CacheTrust& rule,
                                       bool top = false);
// The same for an open descriptor, as a message (fstat's error where it fails).
std::optional<std::string> untrusted_message(int fd, const CacheTrust& rule, bool top = false);

// ---- directories, never through a link ------------------------------------------------------

// The cache's own directory (through links: HOME may be one).
UniqueFd open_cache_directory(const std::filesystem::path& path);
// A directory below `at`.
UniqueFd open_directory_at(int at, const char* name);
// A directory below `at`, created 0700 when absent; a link or file in its place is replaced.
UniqueFd make_directory_at(int at, const char* name);
// Removes `name` below `at` whatever it is (a directory with what is in it), never following
// a link.
void remove_at(int at, const char* name);
// The names in the directory `fd`, "." and ".." left out.
std::vector<std::string> list_directory(int fd);

// ---- entry files -----------------------------------------------------------------------------

struct CacheFile {
  UniqueFd fd;
  struct stat info {};
  int error = 0;  // open's or fstat's errno: ELOOP for a symbolic link, ENOENT for none
};
// The file `name` below `dir`, opened for reading: never through a link, never blocking (a
// FIFO), never becoming a terminal.
CacheFile open_cache_file_at(int dir, const std::string& name);
// The whole content of an opened regular file of at most `max_bytes`; nullopt when it is not
// a regular file, is larger, or cannot be read whole (truncated while read).
std::optional<std::string> read_cache_file(const CacheFile& file, std::uint64_t max_bytes);
// Writes `data` as `name` below `dir` (mode 0600): a temporary beside it renamed over the
// name (a link there is replaced, a directory there is removed first). error 0, or the
// errno: ENOENT after `created` where the temporary went meanwhile (a clear of the cache).
detail::AtomicWriteOutcome write_cache_file_at(int dir, const std::string& name,
                                               std::string_view data);
// Whether `name` is a temporary of write_cache_file_at for the file `target`.
bool is_temporary_for(std::string_view name, std::string_view target);

// ---- the entry format --------------------------------------------------------------------

// 1..64 lower-case hex digits.
bool valid_cache_key(std::string_view key);

std::string encode_cache_entry(std::string_view key, std::string_view payload);

enum class CacheEntryDamage {
  none,
  header,    // not an entry of this store
  format,    // an entry of another version of the format
  fields,    // its key, size or checksum line is malformed
  key,       // another key's entry
  size,      // truncated or extended
  checksum,  // the payload is not what was written
};
struct DecodedCacheEntry {
  CacheEntryDamage damage = CacheEntryDamage::header;
  std::string_view payload;  // valid where damage is none (views into the decoded bytes)
  std::string_view digest;
  bool ok() const { return damage == CacheEntryDamage::none; }
};
// The header checked (format, key, size), the checksum not yet: a caller may start work on
// the payload beside the digest, then verify_cache_entry() before trusting it.
DecodedCacheEntry decode_cache_entry_unverified(std::string_view bytes,
                                                std::string_view expected_key);
// Checks the payload against its checksum; damage becomes `checksum` where it differs.
bool verify_cache_entry(DecodedCacheEntry& entry);
// Both: the payload of a whole, unchanged entry for `expected_key`. Never throws.
DecodedCacheEntry decode_cache_entry(std::string_view bytes, std::string_view expected_key);
// The key an entry's header names (the fuzz harnesses try it), or "".
std::string_view claimed_cache_key(std::string_view bytes);

}  // namespace cudatool
