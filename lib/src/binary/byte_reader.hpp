// The one checked primitive under every read of a compiled binary: a byte span with the
// name of where it came from. Every access is offset + length, overflow-checked against
// the span, and loads are little-endian and safe at any alignment (memcpy). A failed
// check throws InputError naming the source, the offset and what was being read, e.g.
// "libfoo.so: section header 12 at offset 0x1f400 (64 bytes) runs past the end (0x1f420 bytes)".
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

namespace cudatool {

class ByteReader {
 public:
  ByteReader() = default;
  // `origin` is the offset of bytes[0] in the source, so that errors name file offsets.
  ByteReader(std::span<const std::uint8_t> bytes, std::string source, std::uint64_t origin = 0)
      : bytes_(bytes),
        source_(std::make_shared<const std::string>(std::move(source))),
        origin_(origin) {}

  std::size_t size() const { return bytes_.size(); }
  std::span<const std::uint8_t> all() const { return bytes_; }
  const std::string& source() const { return source_ ? *source_ : no_source(); }
  std::uint64_t origin() const { return origin_; }

  // True when [offset, offset + length) lies inside the span (no overflow possible).
  bool contains(std::uint64_t offset, std::uint64_t length) const {
    return offset <= bytes_.size() && length <= bytes_.size() - offset;
  }
  // The checked primitive: the bytes [offset, offset + length), or an error naming `what`.
  std::span<const std::uint8_t> bytes(std::uint64_t offset, std::uint64_t length,
                                      std::string_view what) const {
    if (!contains(offset, length)) past_end(offset, length, what);
    return bytes_.subspan(static_cast<std::size_t>(offset), static_cast<std::size_t>(length));
  }
  // A reader over a part of this one; offsets in its errors stay those of the source.
  ByteReader sub(std::uint64_t offset, std::uint64_t length, std::string_view what) const {
    return ByteReader(bytes(offset, length, what), source_, origin_ + offset);
  }
  // The same where the part is known to be inside (no check, no message to make).
  ByteReader part(std::span<const std::uint8_t> inside, std::uint64_t offset) const {
    return ByteReader(inside, source_, origin_ + offset);
  }
  // A little-endian unsigned integer at any alignment.
  template <class T>
  T le(std::uint64_t offset, std::string_view what) const {
    return load_le<T>(bytes(offset, sizeof(T), what).data());
  }
  // The same at `p`, unchecked: for the fields of a table whose bounds were checked whole.
  // One load on a little-endian host (the byte loop is not merged into one by GCC -O2).
  template <class T>
  static T load_le(const std::uint8_t* p) {
    static_assert(std::is_unsigned_v<T>);
    T value = 0;
    if constexpr (std::endian::native == std::endian::little) {
      std::memcpy(&value, p, sizeof(T));
    } else {
      for (std::size_t i = 0; i < sizeof(T); ++i) value |= static_cast<T>(T(p[i]) << (8 * i));
    }
    return value;
  }
  std::uint8_t u8(std::uint64_t o, std::string_view w) const { return le<std::uint8_t>(o, w); }
  std::uint16_t u16(std::uint64_t o, std::string_view w) const { return le<std::uint16_t>(o, w); }
  std::uint32_t u32(std::uint64_t o, std::string_view w) const { return le<std::uint32_t>(o, w); }
  std::uint64_t u64(std::uint64_t o, std::string_view w) const { return le<std::uint64_t>(o, w); }
  // The NUL-terminated string at `offset`; the terminator must be inside the span.
  std::string_view c_string(std::uint64_t offset, std::string_view what) const {
    if (offset >= bytes_.size()) past_end(offset, 1, what);
    const auto* begin = reinterpret_cast<const char*>(bytes_.data()) + offset;
    const void* end = std::memchr(begin, 0, bytes_.size() - static_cast<std::size_t>(offset));
    if (end == nullptr) fail(offset, std::string(what) + " is not NUL-terminated");
    return std::string_view(begin, static_cast<std::size_t>(static_cast<const char*>(end) - begin));
  }

  // Throws InputError "<source>: <message> at offset 0x<origin + offset>".
  [[noreturn]] void fail(std::uint64_t offset, const std::string& message) const;
  [[noreturn]] void past_end(std::uint64_t offset, std::uint64_t length,
                             std::string_view what) const;

 private:
  // Parts share their source's name: a reader is made per section and record, and the
  // name (a file and an entry) would otherwise be copied for each.
  ByteReader(std::span<const std::uint8_t> bytes, std::shared_ptr<const std::string> source,
             std::uint64_t origin)
      : bytes_(bytes), source_(std::move(source)), origin_(origin) {}
  static const std::string& no_source();

  std::span<const std::uint8_t> bytes_;
  std::shared_ptr<const std::string> source_;
  std::uint64_t origin_ = 0;
};

std::string hex(std::uint64_t value);  // "0x1f400"

}  // namespace cudatool
