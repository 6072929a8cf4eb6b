// Where the one JSON writer's values go (json_writer.hpp): the commas, line breaks and
// indents of nlohmann's dump with an indent of 2, written around the values the writer
// appends. Only the layout: what a value's text is, is the writer's.
#pragma once

#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>

#include "json_text.hpp"

namespace cudatool::app {

class JsonLayout {
 public:
  // Writing starts inside an open container `depth` levels deep; `first` is false where
  // the container already holds a value (the next one is preceded by a comma).
  JsonLayout(std::string& out, int depth, bool first) : out_(out), depth_(depth), first_(first) {}

  // An object's member name and ": ", on a line of its own; the value follows.
  void key(std::string_view name) {
    // The common case (a short plain name, not deep) as one append: the comma, the line
    // break, the indent, the quoted name and ": " (a 45,000-kernel document has a million
    // keys).
    const std::size_t indent = this->indent();
    char line[96];
    if (indent <= kMaxIndent && name.size() <= sizeof line - kMaxIndent - 6 && json_plain(name)) {
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
      append_json_string(out_, name);
      out_ += ": ";
    }
    pending_key_ = true;
  }
  // The value that follows is a member's whose key the caller has written already.
  void after_key() { pending_key_ = true; }

  // Before each value: a value in an array starts its own line; one after a key follows it.
  void before_value() {
    if (pending_key_)
      pending_key_ = false;
    else if (depth_ > 0)
      next_line();
  }
  // An object's or an array's opening bracket, as a value; its members one level deeper.
  void open(char bracket) {
    before_value();
    out_ += bracket;
    ++depth_;
    first_ = true;
  }
  // The closing bracket: on a line of its own where the container holds anything.
  void close(char bracket) {
    --depth_;
    if (!first_) {
      const std::size_t indent = this->indent();
      if (indent <= kMaxIndent) {
        out_.append(kLineBreak.data() + 1, 1 + indent);
      } else {
        out_ += '\n';
        out_.append(indent, ' ');
      }
    }
    out_ += bracket;
    first_ = false;
  }
  // The spaces that start a line at this depth.
  std::size_t indent() const { return 2 * static_cast<std::size_t>(depth_); }

 private:
  // ",\n" and the deepest indent key() writes in one piece.
  static constexpr std::size_t kMaxIndent = 32;
  static constexpr std::string_view kLineBreak =
      ",\n                                ";  // 2 + kMaxIndent characters
  static_assert(kLineBreak.size() == 2 + kMaxIndent);

  void next_line() {
    const std::size_t indent = this->indent();
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

  std::string& out_;
  int depth_;
  bool first_;
  bool pending_key_ = false;
};

}  // namespace cudatool::app
