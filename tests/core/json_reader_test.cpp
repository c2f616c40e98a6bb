#include "ddlsim/core/input_error.hpp"
#include "ddlsim/core/json_reader.hpp"
#include "ddlsim/core/suggest.hpp"
#include "error_of.hpp"

#include <catch2/catch.hpp>

using namespace ddlsim;
using Catch::Matchers::Contains;

using ddlsim::test_support::error_of;

TEST_CASE("unknown keys are errors naming the path and the nearest key") {
  const Json j = Json::parse(R"({"fabric": {"bandwith_gbps": 100}})");
  const std::string message = error_of([&] {
    JsonObject root(j, "");
    JsonObject fabric = root.required("fabric").object();
    fabric.optional("bandwidth_gbps");
    fabric.optional("latency_ns");
    fabric.finish();
  });
  CHECK_THAT(message, Contains("/fabric/bandwith_gbps"));
  CHECK_THAT(message, Contains("did you mean \"bandwidth_gbps\"?"));
}

TEST_CASE("range errors say what was expected and what was found") {
  const Json j = Json::parse(R"({"spines": -3, "name": 5, "size": "12 parsecs"})");
  JsonObject root(j, "/fabric");
  const std::string spines = error_of([&] { root.required("spines").integer(1, 4096); });
  CHECK_THAT(spines, Contains("/fabric/spines"));
  CHECK_THAT(spines, Contains("from 1 to 4096"));
  CHECK_THAT(spines, Contains("found -3"));
  CHECK_THAT(error_of([&] { root.required("name").string(); }), Contains("found 5"));
  CHECK_THAT(error_of([&] { root.required("size").bytes(0, 1 << 30); }),
             Contains("\"12 parsecs\""));
  CHECK_THAT(error_of([&] { root.required("missing"); }), Contains("missing required key"));
}

TEST_CASE("choices suggest the nearest valid value") {
  const Json j = Json::parse(R"("leaf_spin")");
  const std::vector<std::string> choices{"single_switch", "leaf_spine", "fat_tree"};
  CHECK_THAT(error_of([&] { JsonValue(j, "/topology/fabric/type").choice(choices); }),
             Contains("did you mean \"leaf_spine\"?"));
}

TEST_CASE("syntax errors name the file / line and column") {
  const std::string message =
      error_of([] { parse_json_text("{\n  \"a\": 1,\n  \"b\": }\n", "s.json"); });
  CHECK_THAT(message, Contains("s.json:3:"));
  CHECK_THAT(message, Contains("invalid JSON"));
}

TEST_CASE("nearest match only suggests plausible typos") {
  const std::vector<std::string> keys{"bandwidth_gbps", "latency_ns", "type"};
  CHECK(nearest_match("latncy_ns", keys) == "latency_ns");
  CHECK(nearest_match("typ", keys) == "type");
  CHECK(nearest_match("zzzzzzzz", keys).empty());
}

TEST_CASE("a number too large for a double is an input error not a crash") {
  // Found by scripts/fuzz: nlohmann throws out_of_range, not parse_error, for 1e956.
  CHECK_THAT(error_of([] { parse_json_text("888888e956", "f.json"); }), Contains("invalid JSON"));
}

TEST_CASE("a misspelt required key is named next to the one that is missing") {
  const Json j = Json::parse(R"({"topolgy": {}, "seed": 1})");
  JsonObject root(j, "");
  root.optional("seed");
  const std::string message = error_of([&] { root.required("topology"); });
  CHECK_THAT(message, Contains("missing required key \"topology\""));
  CHECK_THAT(message, Contains("(found \"topolgy\": a misspelling?)"));
  // No hint when nothing written resembles it.
  const Json k = Json::parse(R"({"zzz": 1})");
  JsonObject other(k, "/w");
  CHECK_THAT(error_of([&] { other.required("topology"); }), !Contains("misspelling"));
}
