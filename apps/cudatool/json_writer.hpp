// The one JSON writer (json_stream.hpp has the objects and the documents made with it):
// every --json document (errors included) and the Python module's to_dict() are written
// here, as they are produced, so that a document too large to build first (`kernels --json`
// on a library of 45,000 kernels) costs no more than its text. The text is nlohmann's dump
// with an indent of 2 (json_layout.hpp lays it out, nlohmann formats the numbers,
// json_text.hpp escapes the strings), keys in sorted order; the tests compare it with nlohmann's
// for the same values. JsonStream does not sort: its callers write each object's keys in sorted
// order, or set them on a JsonObject, which sorts.
#pragma once

#include <array>
#include <charconv>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "json_layout.hpp"
#include "json_text.hpp"

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
      : out_(out), layout_(out, depth, first) {}

  // For the value of a member whose key the caller has written already.
  JsonStream& after_key() {
    layout_.after_key();
    return *this;
  }

  JsonStream& begin_object() {
    layout_.open('{');
    return *this;
  }
  JsonStream& end_object() {
    layout_.close('}');
    return *this;
  }
  JsonStream& begin_array() {
    layout_.open('[');
    return *this;
  }
  JsonStream& end_array() {
    layout_.close(']');
    return *this;
  }

  // An object's member name; the value follows.
  JsonStream& key(std::string_view name) {
    layout_.key(name);
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
    layout_.before_value();
    const std::size_t indent = layout_.indent();
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

 private:
  void before_value() { layout_.before_value(); }
  void string_text(std::string_view text) { append_json_string(out_, text); }

  std::string& out_;
  JsonLayout layout_;
};

}  // namespace cudatool::app
