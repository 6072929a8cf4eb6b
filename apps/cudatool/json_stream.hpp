// The one JSON writer: every --json document (errors included) and the Python module's
// to_dict() are written here, as they are produced, so that a document too large to build
// first (`kernels --json` on a library of 45,000 kernels) costs no more than its text. The
// text is nlohmann's dump with an indent of 2 (nlohmann formats the numbers and escapes the
// strings that are not plain), keys in sorted order and bytes that are not UTF-8 replaced by
// U+FFFD; the tests compare it with nlohmann's for the same values. JsonStream does not
// sort: its callers write each object's keys in sorted order, or set them on a JsonObject,
// which sorts.
#pragma once

#include <array>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "cudatool/base/parallel.hpp"
#include "render.hpp"

namespace cudatool::app {

class JsonObject;

// Appends one JSON value at a time to a string, pretty-printed like print_json. A struct is
// written by its write_json(JsonStream&, const T&), found by argument-dependent lookup (the
// app's writers are in this namespace).
class JsonStream {
 public:
  // Writing starts inside an open container `depth` levels deep; `first` is false where
  // the container already holds a value (the next one is preceded by a comma).
  explicit JsonStream(std::string& out, int depth = 0, bool first = true)
      : out_(out), depth_(depth), first_(first) {}

  // For the value of a member whose key the caller has written already.
  JsonStream& after_key() {
    pending_key_ = true;
    return *this;
  }

  JsonStream& begin_object() { return open('{'); }
  JsonStream& end_object() { return close('}'); }
  JsonStream& begin_array() { return open('['); }
  JsonStream& end_array() { return close(']'); }

  // An object's member name; the value follows.
  JsonStream& key(std::string_view name) {
    // The common case (a short plain name, not deep) as one append: the comma, the line
    // break, the indent, the quoted name and ": " (a 45,000-kernel document has a million
    // keys).
    const std::size_t indent = 2 * static_cast<std::size_t>(depth_);
    char line[96];
    if (indent <= kMaxIndent && name.size() <= sizeof line - kMaxIndent - 6 && is_plain(name)) {
      const std::size_t lead = first_ ? 1 : 2;  // "\n" or ",\n"
      std::size_t n = lead + indent;
      std::memcpy(line, kLineBreak.data() + 2 - lead, n);
      line[n++] = '"';
      std::memcpy(line + n, name.data(), name.size());
      n += name.size();
      std::memcpy(line + n, "\": ", 3);
      out_.append(line, n + 3);
      first_ = false;
    } else {
      next_line();
      string_text(name);
      out_ += ": ";
    }
    pending_key_ = true;
    return *this;
  }

  JsonStream& value(std::string_view text) {
    before_value();
    string_text(text);
    return *this;
  }
  JsonStream& value(const char* text) { return value(std::string_view(text)); }
  JsonStream& value(const std::string& text) { return value(std::string_view(text)); }
  JsonStream& value(bool b) {
    before_value();
    out_.append(b ? std::string_view("true") : std::string_view("false"));
    return *this;
  }
  JsonStream& value(std::nullptr_t) {
    before_value();
    out_ += "null";
    return *this;
  }
  JsonStream& value(double d) {
    before_value();
    out_ += nlohmann::json(d).dump();  // nlohmann's shortest round-trip form
    return *this;
  }
  template <class Int>
  requires(std::is_integral_v<Int> && !std::is_same_v<Int, bool>) JsonStream& value(Int n) {
    before_value();
    char text[24];
    const auto end = std::to_chars(text, text + sizeof text, n).ptr;
    out_.append(text, end);
    return *this;
  }
  template <class T>
  JsonStream& value(const std::optional<T>& v) {
    return v ? value(*v) : value(nullptr);
  }
  template <class T>
  JsonStream& value(const std::vector<T>& values) {
    begin_array();
    for (const T& v : values) value(v);
    return end_array();
  }
  template <class T, std::size_t N>
  JsonStream& value(const std::array<T, N>& values) {
    begin_array();
    for (const T& v : values) value(v);
    return end_array();
  }
  // An object of a map's entries, in the map's (sorted) order.
  template <class T>
  JsonStream& value(const std::map<std::string, T, std::less<>>& entries) {
    begin_object();
    for (const auto& [name, v] : entries) key(name).value(v);
    return end_object();
  }
  JsonStream& value(const JsonObject& object);
  template <class T>
  requires requires(JsonStream& out, const T& v) { write_json(out, v); }
  JsonStream& value(const T& v) {
    write_json(*this, v);
    return *this;
  }
  // A value rendered alone (by a JsonStream at depth 0), placed here: each of its lines after
  // the first indented to this depth. JSON text has no line break inside a string, so every
  // '\n' in it is the writer's.
  JsonStream& rendered(std::string_view text) {
    before_value();
    const std::size_t indent = 2 * static_cast<std::size_t>(depth_);
    for (std::size_t at = 0;;) {
      const std::size_t line_end = text.find('\n', at);
      if (line_end == std::string_view::npos) {
        out_.append(text.substr(at));
        break;
      }
      out_.append(text.substr(at, line_end + 1 - at));
      out_.append(indent, ' ');
      at = line_end + 1;
    }
    return *this;
  }
  // A member in one call.
  template <class T>
  JsonStream& member(std::string_view name, const T& v) {
    return key(name).value(v);
  }
  // A text member that is null where the text is empty (an absent section, no error).
  JsonStream& text_or_null(std::string_view name, const std::string& text) {
    return text.empty() ? member(name, nullptr) : member(name, text);
  }

  // True where the text is written as it is between quotes: no control character, quote,
  // backslash, DEL or byte above 0x7f (bytes that nlohmann escapes or checks as UTF-8).
  // Eight bytes at a time (the kernels' names are most of a kernels document): a byte
  // below 0x20, or equal to '"', '\\' or 0x7f, is a zero byte of w - 0x20.., w ^ '"'..,
  // w ^ '\\'.. or w ^ 0x7f.. (the exact test for a zero byte), and one above 0x7f has
  // its top bit set.
  static bool is_plain(std::string_view text) {
    constexpr std::uint64_t kOnes = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
    const auto has_zero = [](std::uint64_t w) { return (w - kOnes) & ~w & kHigh; };
    const char* p = text.data();
    std::size_t left = text.size();
    for (; left >= 8; p += 8, left -= 8) {
      std::uint64_t w;
      std::memcpy(&w, p, sizeof w);
      if (((w - 0x20 * kOnes) & ~w & kHigh) | (w & kHigh) | has_zero(w ^ ('"' * kOnes)) |
          has_zero(w ^ ('\\' * kOnes)) | has_zero(w ^ (0x7f * kOnes)))
        return false;
    }
    for (; left > 0; ++p, --left) {
      const auto u = static_cast<unsigned char>(*p);
      if (u < 0x20 || u >= 0x7f || u == '"' || u == '\\') return false;
    }
    return true;
  }

  // A JSON string's text, quotes included, as nlohmann writes it.
  static void append_string(std::string& out, std::string_view text) {
    if (is_plain(text)) {
      out += '"';
      out += text;
      out += '"';
    } else {
      out += nlohmann::json(std::string(text))
                 .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
  }

 private:
  // ",\n" and the deepest indent key() writes in one piece.
  static constexpr std::size_t kMaxIndent = 32;
  static constexpr std::string_view kLineBreak =
      ",\n                                ";  // 2 + kMaxIndent characters
  static_assert(kLineBreak.size() == 2 + kMaxIndent);

  JsonStream& open(char bracket) {
    before_value();
    out_ += bracket;
    ++depth_;
    first_ = true;
    return *this;
  }
  JsonStream& close(char bracket) {
    --depth_;
    if (!first_) {
      const std::size_t indent = 2 * static_cast<std::size_t>(depth_);
      if (indent <= kMaxIndent) {
        out_.append(kLineBreak.data() + 1, 1 + indent);
      } else {
        out_ += '\n';
        out_.append(indent, ' ');
      }
    }
    out_ += bracket;
    first_ = false;
    return *this;
  }
  // A value in an array starts its own line; one after a key follows it.
  void before_value() {
    if (pending_key_)
      pending_key_ = false;
    else if (depth_ > 0)
      next_line();
  }
  void next_line() {
    const std::size_t indent = 2 * static_cast<std::size_t>(depth_);
    if (indent <= kMaxIndent) {
      const std::size_t lead = first_ ? 1 : 2;
      out_.append(kLineBreak.data() + 2 - lead, lead + indent);
    } else {
      if (!first_) out_ += ',';
      out_ += '\n';
      out_.append(indent, ' ');
    }
    first_ = false;
  }
  void string_text(std::string_view text) { append_string(out_, text); }

  std::string& out_;
  int depth_;
  bool first_;
  bool pending_key_ = false;
};

// An object whose members are set in any order, a later set of a key replacing the earlier,
// and written in sorted key order (byte order, as nlohmann's trees are): for objects made of
// parts (a struct's members, then a command's keys). Each value is rendered as it is set.
class JsonObject {
 public:
  template <class T>
  JsonObject& set(std::string_view name, const T& v) {
    std::string text;
    JsonStream(text).value(v);
    members_.insert_or_assign(std::string(name), std::move(text));
    return *this;
  }
  // A text member that is null where the text is empty.
  JsonObject& text_or_null(std::string_view name, const std::string& text) {
    return text.empty() ? set(name, nullptr) : set(name, text);
  }
  // Every member of `other`, replacing this object's of the same key.
  JsonObject& merge(const JsonObject& other) {
    for (const auto& [name, text] : other.members_) members_.insert_or_assign(name, text);
    return *this;
  }
  JsonObject& erase(std::string_view name) {
    if (const auto at = members_.find(name); at != members_.end()) members_.erase(at);
    return *this;
  }
  void write(JsonStream& out) const {
    out.begin_object();
    for (const auto& [name, text] : members_) out.key(name).rendered(text);
    out.end_object();
  }
  // The object as a document's text (depth 0, no final line break).
  std::string text() const {
    std::string text;
    JsonStream out(text);
    write(out);
    return text;
  }

 private:
  std::map<std::string, std::string, std::less<>> members_;
};

inline JsonStream& JsonStream::value(const JsonObject& object) {
  object.write(*this);
  return *this;
}

// One --json document, an object, with its schema_version, as text: every document but the
// streamed ones (print_json_streamed, which adds the same key) is made here (the Python
// module's to_dict() too).
inline std::string json_document(JsonObject document, int schema_version = kJsonSchemaVersion) {
  document.set("schema_version", schema_version);
  std::string text = document.text();
  text += '\n';
  return text;
}
inline void print_json(JsonObject document, int schema_version = kJsonSchemaVersion) {
  command_out() << json_document(std::move(document), schema_version);
}

// One member of a streamed document: its key and what writes its value (at depth 1).
struct StreamedMember {
  std::string key;
  std::function<void(std::ostream&)> write;
};

// A member of a streamed document whose value is written whole (at depth 1).
template <class T>
StreamedMember streamed_value(std::string key, T value) {
  return {std::move(key), [value = std::move(value)](std::ostream& out) {
            std::string text;
            JsonStream(text, 1).after_key().value(value);
            out << text;
          }};
}

// Prints a --json document whose members are written one after another, with
// schema_version added as print_json adds it: members must come in sorted key order.
inline void print_json_streamed(std::vector<StreamedMember> members) {
  std::string version;
  JsonStream(version).value(kJsonSchemaVersion);
  const auto at =
      std::lower_bound(members.begin(), members.end(), std::string("schema_version"),
                       [](const StreamedMember& m, const std::string& key) { return m.key < key; });
  members.insert(at, {"schema_version", [version](std::ostream& out) { out << version; }});
  std::ostream& out = command_out();
  out << '{';
  for (std::size_t i = 0; i < members.size(); ++i) {
    std::string key;
    JsonStream::append_string(key, members[i].key);
    out << (i ? ",\n  " : "\n  ") << key << ": ";
    members[i].write(out);
  }
  out << (members.empty() ? "}\n" : "\n}\n");
}

// Writes a JSON array of `count` elements at depth 1 of a document, rendering them in
// chunks on all cores (element(stream, i) writes element i through the stream) and writing
// the chunks in order, each freed once written.
template <class Element>
void write_json_array_parallel(std::ostream& out, std::size_t count, unsigned threads,
                               Element&& element) {
  if (count == 0) {
    out << "[]";
    return;
  }
  constexpr std::size_t kPerChunk = 512;
  std::vector<std::string> chunks((count + kPerChunk - 1) / kPerChunk);
  parallel_for_blocks(count, kPerChunk, threads,
                      [&](std::size_t c, std::size_t begin, std::size_t end) {
                        JsonStream stream(chunks[c], 2, c == 0);
                        for (std::size_t i = begin; i < end; ++i) element(stream, i);
                      });
  out << '[';
  for (std::string& chunk : chunks) {
    out.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    std::string().swap(chunk);
  }
  out << "\n  ]";
}

}  // namespace cudatool::app
