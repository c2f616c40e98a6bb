// One test per error class of the scenario loader: each message must name the JSON path, say
// what is wrong, and where it can, suggest the fix.
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/scenario/scenario.hpp"

#include <catch2/catch.hpp>

using namespace ddlsim;
using Catch::Matchers::Contains;

namespace {

// A valid base scenario; `patch` (JSON merge patch) breaks one thing.
std::string load_error(const std::string& patch) {
  Json json = Json::parse(R"({
    "topology": {"nodes": [{"preset": "dgx-a100", "count": 2}],
                 "fabric": {"type": "single_switch", "bandwidth_gbps": 200}},
    "workload": {"type": "collective", "op": "all_reduce", "algorithm": "ring", "sizes": ["1MiB"]},
    "engine": {"type": "analytic"}
  })");
  json.merge_patch(Json::parse(patch));
  try {
    load_scenario(json, "s.json", ".");
  } catch (const InputError& e) {
    return e.what();
  }
  return "loaded without error";
}

} // namespace

TEST_CASE("the base scenario of these tests is valid") {
  CHECK(load_error("{}") == "loaded without error");
}

TEST_CASE("unknown top-level key suggests the nearest") {
  const std::string e = load_error(R"({"worklaod": {}})");
  CHECK_THAT(e, Contains("s.json: /worklaod"));
  CHECK_THAT(e, Contains("did you mean \"workload\"?"));
}

TEST_CASE("missing required section") {
  CHECK_THAT(load_error(R"({"workload": null})"), Contains("missing required key \"workload\""));
}

TEST_CASE("unknown workload op suggests the nearest") {
  const std::string e = load_error(R"({"workload": {"op": "allreduce"}})");
  CHECK_THAT(e, Contains("/workload/op"));
  CHECK_THAT(e, Contains("did you mean \"all_reduce\"?"));
}

TEST_CASE("unknown algorithm lists the valid ones") {
  const std::string e = load_error(R"({"workload": {"algorithm": "rnig"}})");
  CHECK_THAT(e, Contains("/workload/algorithm"));
  CHECK_THAT(e, Contains("did you mean \"ring\"?"));
}

TEST_CASE("byte sizes that are not sizes") {
  const std::string e = load_error(R"({"workload": {"sizes": ["12 parsecs"]}})");
  CHECK_THAT(e, Contains("/workload/sizes/0"));
  CHECK_THAT(e, Contains("\"256MiB\""));
  CHECK_THAT(load_error(R"({"workload": {"sizes": {"from": "1MiB", "to": "1KiB"}}})"),
             Contains("/workload/sizes/to"));
}

TEST_CASE("a size that is not a whole number of elements") {
  const std::string e = load_error(R"({"workload": {"sizes": [6], "dtype": "fp32"}})");
  CHECK_THAT(e, Contains("/workload/sizes"));
  CHECK_THAT(e, Contains("element size (4 B)"));
}

TEST_CASE("more ranks than the cluster has GPUs") {
  const std::string e = load_error(R"({"workload": {"ranks": 17}})");
  CHECK_THAT(e, Contains("/workload/ranks"));
  CHECK_THAT(e, Contains("16 GPUs"));
  CHECK_THAT(load_error(R"({"workload": {"root": 16}})"), Contains("/workload/root"));
}

TEST_CASE("an engine this version does not have") {
  const std::string e = load_error(R"({"engine": {"type": "fluid"}})");
  CHECK_THAT(e, Contains("/engine/type"));
  CHECK_THAT(e, Contains("analytic, flow or packet"));
  CHECK_THAT(load_error(R"({"engine": {"type": "analytc"}})"),
             Contains("did you mean \"analytic\"?"));
}

TEST_CASE("absurd values are rejected with their range") {
  CHECK_THAT(load_error(R"({"seed": -1})"), Contains("/seed"));
  CHECK_THAT(load_error(R"({"engine": {"per_step_overhead_ns": -5}})"),
             Contains("/engine/per_step_overhead_ns"));
  CHECK_THAT(load_error(R"({"workload": {"params": {"density": 0}}})"),
             Contains("/workload/params/density"));
  CHECK_THAT(load_error(R"({"workload": {"params": {"chunks": 1e9}}})"),
             Contains("/workload/params/chunks"));
}

TEST_CASE("unknown include names the presets") {
  const std::string e = load_error(R"({"include": "cloud-v100-25"})");
  CHECK_THAT(e, Contains("/include"));
  CHECK_THAT(e, Contains("did you mean \"cloud-v100-25g\"?"));
}

TEST_CASE("sweep axes are checked point by point") {
  CHECK_THAT(load_error(R"({"sweep": [{"set": "topology/fabric", "values": [1]}]})"),
             Contains("/sweep/0/set"));
  const std::string e =
      load_error(R"({"sweep": [{"set": "/topology/fabric/bandwidth_gbps", "values": [100, -1]}]})");
  CHECK_THAT(e, Contains("/topology/fabric/bandwidth_gbps=-1"));
  CHECK_THAT(load_error(R"({"sweep": [{"set": "/x", "values": [1], "valeus": [2]}]})"),
             Contains("did you mean \"values\"?"));
}

TEST_CASE("output keys are checked") {
  CHECK_THAT(load_error(R"({"output": {"jsn": "a.json"}})"), Contains("did you mean \"json\"?"));
}

TEST_CASE("syntax errors name file / line and column") {
  try {
    parse_json_text("{\"topology\": {,}}", "bad.json");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK_THAT(std::string(e.what()), Contains("bad.json:1:"));
  }
}

TEST_CASE("topology errors carry their path through the loader") {
  const std::string e = load_error(R"({"topology": {"fabric": {"type": "fat_tre"}}})");
  CHECK_THAT(e, Contains("/topology/fabric/type"));
  CHECK_THAT(e, Contains("fat_tree"));
}

TEST_CASE("packet engine options belong to the packet engine") {
  CHECK_THAT(load_error(R"({"engine": {"type": "analytic", "mtu_bytes": 4096}})"),
             Contains("/engine/mtu_bytes"));
  CHECK_THAT(load_error(R"({"engine": {"type": "packet", "switch": {"drop_policy": "red"}}})"),
             Contains("/engine/switch/drop_policy"));
  CHECK_THAT(load_error(R"({"engine": {"type": "packet", "transport": {"rto": 5}}})"),
             Contains("/engine/transport/rto: unknown key"));
}
