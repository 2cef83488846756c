#include "core/json.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace verdict {
namespace {

TEST(Json, ParsesAndNamesTheSourceOnError) {
  EXPECT_EQ(parse_json("{\"a\": [1, 2]}", "x.json")["a"][1], 2);
  try {
    parse_json("{\"a\": ", "config.json");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("config.json: invalid JSON"), std::string::npos) << e.what();
  }
}

TEST(Json, DeepNestingIsRefusedNotAStackOverflow) {
  std::string deep(100000, '[');
  EXPECT_THROW(parse_json(deep, "deep.json"), Error);
  std::string ok = std::string(100, '[') + std::string(100, ']');
  EXPECT_NO_THROW(parse_json(ok, "ok.json"));
  // Brackets inside strings do not count.
  EXPECT_NO_THROW(parse_json("\"" + std::string(5000, '[') + "\"", "s.json"));
}

}  // namespace
}  // namespace verdict
