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
  EXPECT_EQ(select_kinds(std::nullopt, std::nullopt).size(), 7u);
  EXPECT_EQ(select_kinds(std::nullopt, std::string("peer,health")),
            (std::set<Kind>{Kind::identity, Kind::occupancy, Kind::compute, Kind::memory,
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
  EXPECT_THROW(select_kinds(std::string("compute"), std::string("peer")), UsageError);
}
