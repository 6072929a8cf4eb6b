// The documents: JsonObject (an object whose keys are set in any order and written sorted,
// for documents made of parts) and print_json, over the one writer (json_writer.hpp).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "json_writer.hpp"
#include "render.hpp"

namespace cudatool::app {

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

}  // namespace cudatool::app
