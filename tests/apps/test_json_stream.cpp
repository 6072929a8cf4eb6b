// The streamed JSON of large documents (apps/cudatool/json_stream.hpp) must be the very
// text print_json writes for the same values: compared here, byte for byte, with
// nlohmann's dump over random documents (odd strings included: bytes that are not UTF-8,
// control characters, quotes), and through the parallel array writer and the document
// printer with its schema_version.
#include <gtest/gtest.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>

#include "json_streamed.hpp"
#include "render.hpp"

namespace cudatool::app {
namespace {

// Writes `j` through the stream, as a caller would (objects' keys come sorted from
// nlohmann's std::map).
void write(JsonStream& out, const nlohmann::json& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::object:
      out.begin_object();
      for (const auto& [key, value] : j.items()) {
        out.key(key).after_key();
        write(out, value);
      }
      out.end_object();
      break;
    case nlohmann::json::value_t::array:
      out.begin_array();
      for (const auto& value : j) write(out, value);
      out.end_array();
      break;
    case nlohmann::json::value_t::string:
      out.value(j.get_ref<const std::string&>());
      break;
    case nlohmann::json::value_t::boolean:
      out.value(j.get<bool>());
      break;
    case nlohmann::json::value_t::number_integer:
      out.value(j.get<std::int64_t>());
      break;
    case nlohmann::json::value_t::number_unsigned:
      out.value(j.get<std::uint64_t>());
      break;
    case nlohmann::json::value_t::number_float:
      out.value(j.get<double>());
      break;
    default:
      out.value(nullptr);
  }
}

std::string odd_string(std::mt19937& rng) {
  static const std::string pieces[] = {"plain", "\"",   "\\",       "\n",       "\x01",
                                       "\x7f",  "\xff", "\xc3\xa9", "\xe2\x82", "\xf0\x9f\x98\x80",
                                       "/",     " "};
  std::string s;
  const int n = static_cast<int>(rng() % 6);
  for (int i = 0; i < n; ++i) s += pieces[rng() % std::size(pieces)];
  return s;
}

nlohmann::json random_value(std::mt19937& rng, int depth) {
  switch (rng() % (depth > 3 ? 6 : 8)) {
    case 0:
      return nullptr;
    case 1:
      return rng() % 2 == 0;
    case 2:
      return static_cast<std::int64_t>(rng()) - (1LL << 31);
    case 3:
      return static_cast<std::uint64_t>(rng()) << 20;
    case 4:
      return static_cast<double>(rng() % 10000) / 64.0;
    case 5:
      return odd_string(rng);
    case 6: {
      nlohmann::json a = nlohmann::json::array();
      for (int i = static_cast<int>(rng() % 4); i > 0; --i)
        a.push_back(random_value(rng, depth + 1));
      return a;
    }
    default: {
      nlohmann::json o = nlohmann::json::object();
      for (int i = static_cast<int>(rng() % 5); i > 0; --i)
        o[odd_string(rng) + std::to_string(i)] = random_value(rng, depth + 1);
      return o;
    }
  }
}

// A value already written at depth 0 (JsonStream::rendered places it).
struct RenderedForTest {
  std::string text;
};
void write_json(JsonStream& out, const RenderedForTest& r) {
  out.rendered(r.text);
}

std::string nlohmann_text(const nlohmann::json& j) {
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

TEST(JsonStream, WritesWhatNlohmannWritesForRandomDocuments) {
  std::mt19937 rng(1234);
  for (int n = 0; n < 2000; ++n) {
    nlohmann::json doc = nlohmann::json::object();
    for (int i = static_cast<int>(rng() % 6); i > 0; --i)
      doc["k" + odd_string(rng)] = random_value(rng, 0);
    std::string text;
    JsonStream out(text);
    write(out, doc);
    ASSERT_EQ(text, nlohmann_text(doc)) << "document " << n;
  }
}

// The plain-text test reads eight bytes at a time: each byte that must be escaped or
// checked as UTF-8, at every position of strings up to three words long, as a value and as
// a key; keys longer than the one-append path takes, and nesting deeper than its indent.
TEST(JsonStream, EscapesEveryOddByteAtEveryPositionAndDeepOrLongKeys) {
  const std::string odd[] = {"\x00", "\x01", "\x1f",     "\"",  "\\",
                             "\x7f", "\x80", "\xc3\xa9", "\xff"};
  const std::string fine = "azAZ09 !#/~_.:";  // bytes 0x20-0x7e that are written as they are
  for (std::size_t length = 0; length <= 24; ++length) {
    std::string base;
    for (std::size_t i = 0; i < length; ++i) base += fine[i % fine.size()];
    nlohmann::json doc = nlohmann::json::object();
    doc[base] = base;
    for (std::size_t at = 0; at < length; ++at)
      for (const std::string& o : odd) {
        std::string s = base;
        s.replace(at, 1, o);
        doc["v" + std::to_string(at) + s] = s;
        doc[s + "k"] = nlohmann::json::array({s});
      }
    std::string text;
    JsonStream out(text);
    write(out, doc);
    ASSERT_EQ(text, nlohmann_text(doc)) << "length " << length;
  }
  nlohmann::json deep = {
      {std::string(200, 'k'), 1}, {std::string(58, 'x'), 2}, {std::string(59, 'y'), 3}};
  for (int depth = 0; depth < 20; ++depth)
    deep = {{"level" + std::to_string(depth), deep}, {"z", nlohmann::json::array({depth, "a"})}};
  std::string text;
  JsonStream out(text);
  write(out, deep);
  EXPECT_EQ(text, nlohmann_text(deep));
}

TEST(JsonStream, EmptyContainersAndTopLevelScalars) {
  for (const nlohmann::json& j :
       {nlohmann::json::object(), nlohmann::json::array(), nlohmann::json(nullptr),
        nlohmann::json("\xff"), nlohmann::json({{"a", nlohmann::json::array()}})}) {
    std::string text;
    JsonStream out(text);
    write(out, j);
    EXPECT_EQ(text, nlohmann_text(j));
  }
}

TEST(JsonStream, StreamedDocumentEqualsPrintJson) {
  std::mt19937 rng(99);
  // Arrays of more elements than one chunk (512) holds, on several threads, and empty.
  for (std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{511}, std::size_t{1300}}) {
    std::vector<nlohmann::json> elements;
    for (std::size_t i = 0; i < count; ++i) elements.push_back(random_value(rng, 2));
    const std::string note = odd_string(rng);
    std::string expected, streamed;
    {
      nlohmann::json document = {{"a_note", note}, {"elements", elements}, {"zeta", true}};
      document["schema_version"] = kJsonSchemaVersion;
      expected = nlohmann_text(document) + "\n";
    }
    {
      std::ostringstream out;
      print_json_streamed({{"a_note",
                            [&](std::ostream& os) {
                              std::string text;
                              JsonStream(text, 1).after_key().value(note);
                              os << text;
                            }},
                           {"elements",
                            [&](std::ostream& os) {
                              write_json_array_parallel(
                                  os, elements.size(), 3,
                                  [&](JsonStream& out, std::size_t i) { write(out, elements[i]); });
                            }},
                           {"zeta", [&](std::ostream& os) { os << "true"; }}},
                          out);
      streamed = out.str();
    }
    ASSERT_EQ(streamed, expected) << count << " elements";
  }
}

// A random object as a JsonObject whose keys are set in reverse order (its own order, not
// the caller's, is the document's), nested objects as JsonObjects too.
JsonObject object_of(const nlohmann::json& j) {
  JsonObject object;
  std::vector<std::pair<std::string, const nlohmann::json*>> members;
  for (const auto& [key, value] : j.items()) members.emplace_back(key, &value);
  for (auto at = members.rbegin(); at != members.rend(); ++at) {
    const nlohmann::json& value = *at->second;
    if (value.is_object()) {
      object.set(at->first, object_of(value));
    } else {
      std::string text;
      JsonStream stream(text);
      write(stream, value);
      object.set(at->first, RenderedForTest{text});
    }
  }
  return object;
}

TEST(JsonObject, WritesWhatNlohmannWritesWhateverTheOrderOfItsKeys) {
  std::mt19937 rng(7);
  for (int i = 0; i < 300; ++i) {
    nlohmann::json j = nlohmann::json::object();
    for (int n = static_cast<int>(rng() % 6); n > 0; --n)
      j[odd_string(rng) + std::to_string(n)] = random_value(rng, 1);
    ASSERT_EQ(object_of(j).text(), nlohmann_text(j)) << nlohmann_text(j);
    // Nested in an array, at depth 2, as documents hold them.
    std::string text;
    JsonStream stream(text);
    stream.begin_array().value(std::vector<JsonObject>{object_of(j), JsonObject()}).end_array();
    ASSERT_EQ(text, nlohmann_text(nlohmann::json::array(
                        {nlohmann::json::array({j, nlohmann::json::object()})})));
  }
}

TEST(JsonObject, ALaterSetReplacesAndMergeOverwrites) {
  JsonObject a;
  a.set("b", 1).set("a", "x").set("b", nullptr).text_or_null("c", "");
  EXPECT_EQ(a.text(), "{\n  \"a\": \"x\",\n  \"b\": null,\n  \"c\": null\n}");
  a.merge(JsonObject().set("a", 2.5).set("d", std::vector<int>{})).erase("c");
  EXPECT_EQ(a.text(), "{\n  \"a\": 2.5,\n  \"b\": null,\n  \"d\": []\n}");
  EXPECT_EQ(json_document(JsonObject()), "{\n  \"schema_version\": 1\n}\n");
}

}  // namespace
}  // namespace cudatool::app
