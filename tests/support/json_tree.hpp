// A renderer's JSON as a tree, so that tests read its fields: the app writes text
// (apps/cudatool/json_writer.hpp), the tests parse it back.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "json_stream.hpp"
#include "occupancy_json.hpp"  // the writers json_tree calls (declared before the template)

namespace cudatool::test {

template <typename T>
nlohmann::json json_tree(const T& value) {
  std::string text;
  app::JsonStream out(text);
  app::write_json(out, value);
  return nlohmann::json::parse(text);
}

}  // namespace cudatool::test
