// Documents written member by member as they are produced (kernels --json, kernels
// --baseline --json): large arrays rendered in chunks on all threads.
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "cudatool/base/parallel.hpp"
#include "json_stream.hpp"

namespace cudatool::app {

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

// Writes a --json document whose members are written one after another to `out`, with
// schema_version added as print_json adds it: members must come in sorted key order.
inline void print_json_streamed(std::vector<StreamedMember> members, std::ostream& out) {
  std::string version;
  JsonStream(version).value(kJsonSchemaVersion);
  const auto at =
      std::lower_bound(members.begin(), members.end(), std::string("schema_version"),
                       [](const StreamedMember& m, const std::string& key) { return m.key < key; });
  members.insert(at, {"schema_version", [version](std::ostream& out) { out << version; }});
  out << '{';
  for (std::size_t i = 0; i < members.size(); ++i) {
    std::string key;
    append_json_string(key, members[i].key);
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
