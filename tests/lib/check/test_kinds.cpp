// `cudatool check`: the kinds of check and --only/--skip (lib/src/check/kinds.cpp), from plain
// structs (no GPU).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "cudatool/base/error.hpp"
#include "cudatool/check/check.hpp"

using namespace cudatool;
using namespace cudatool::check;

TEST(CheckKinds, ParsesListsAndRejectsUnknownNames) {
  EXPECT_EQ(parse_kind_list("compute,memory", "--only"),
            (std::set<Kind>{Kind::compute, Kind::memory}));
  EXPECT_EQ(select_kinds(std::nullopt, "--only", std::nullopt, "--skip").size(), 8u);
  EXPECT_EQ(select_kinds(std::nullopt, "--only", std::string("peer,health"), "--skip"),
            (std::set<Kind>{Kind::identity, Kind::occupancy, Kind::xid, Kind::compute, Kind::memory,
                            Kind::hostlink}));
  EXPECT_EQ(parse_kind_list("occupancy", "--only"), (std::set<Kind>{Kind::occupancy}));
  try {
    parse_kind_list("compute,gpu-burn", "--only");
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown check \"gpu-burn\""), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("hostlink"), std::string::npos);
  }
  EXPECT_THROW(parse_kind_list("", "--only"), UsageError);
  EXPECT_THROW(parse_kind_list("compute,", "--only"), UsageError);
  // An empty entry as every list flag says it (base/text.hpp split_list).
  try {
    parse_kind_list("compute,,memory", "--skip");
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(),
                 "--skip \"compute,,memory\": an empty entry in the list (expected e.g. "
                 "compute,memory)");
  }
  try {
    select_kinds(std::string("compute"), "only", std::string("peer"), "skip");
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "only and skip exclude each other");  // the caller's names
  }
  try {
    select_kinds(std::nullopt, "--only", std::string("gpu-burn"), "--skip");
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("--skip \"gpu-burn\": unknown check", 0), 0u) << e.what();
  }
}
