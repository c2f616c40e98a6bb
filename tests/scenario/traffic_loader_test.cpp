// The send_recv "traffic" object of a collective workload: patterns drawn at load, flows checked,
// and every bad input named with its JSON pointer and the fix.
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/scenario/scenario.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

using namespace ddlsim;
using Catch::Matchers::Contains;

namespace {

// Two DGX A100 (16 GPUs) with `workload` as the workload section.
Scenario load(const std::string& workload, const std::filesystem::path& base = ".") {
  Json json = Json::parse(R"({
    "topology": {"nodes": [{"preset": "dgx-a100", "count": 2}],
                 "fabric": {"type": "single_switch", "bandwidth_gbps": 200}},
    "engine": {"type": "analytic"}
  })");
  json["workload"] = Json::parse(workload);
  return load_scenario(json, "s.json", base);
}

std::string load_error(const std::string& workload, const std::filesystem::path& base = ".") {
  try {
    load(workload, base);
  } catch (const InputError& e) {
    return e.what();
  }
  return "loaded without error";
}

} // namespace

TEST_CASE("a traffic workload loads its flows or draws its pattern") {
  const Scenario flows = load(R"({"type": "collective", "op": "send_recv", "traffic": {"flows":
      [{"src": 0, "dst": 9, "bytes": "1MiB"}, {"src": 9, "dst": 0, "bytes": 4096}]}})");
  REQUIRE(flows.workload.collective.traffic);
  CHECK(flows.workload.collective.traffic->flows ==
        std::vector<coll::Flow>{{0, 9, 1 << 20}, {9, 0, 4096}});
  CHECK(flows.workload.collective.sizes.empty());
  const Scenario permutation = load(R"({"type": "collective", "op": "send_recv", "ranks": 8,
      "traffic": {"pattern": "permutation", "bytes": "8MiB", "seed": 1}})");
  CHECK(permutation.workload.collective.traffic->flows.size() == 8);
  CHECK(permutation.workload.collective.traffic->flows[0] == coll::Flow{0, 4, 8 << 20});
  const Scenario incast = load(R"({"type": "collective", "op": "send_recv",
      "traffic": {"pattern": "incast", "bytes": "1MiB", "receiver": 3}})");
  CHECK(incast.workload.collective.traffic->flows.size() == 15); // every other rank
}

TEST_CASE("an all_to_all_v matrix is read from a CSV beside the scenario") {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "ddlsim_traffic_test";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "m.csv") << "0,4096,0\n8,0,0\n0,16,0\n";
  const Scenario s = load(R"({"type": "collective", "op": "send_recv", "ranks": 3,
      "traffic": {"pattern": "all_to_all_v", "matrix": "m.csv"}})",
                          dir);
  CHECK(s.workload.collective.traffic->flows ==
        std::vector<coll::Flow>{{0, 1, 4096}, {1, 0, 8}, {2, 1, 16}});
  std::ofstream(dir / "bad.csv") << "0,4\n4,0\n";
  CHECK_THAT(load_error(R"({"type": "collective", "op": "send_recv", "ranks": 3,
      "traffic": {"pattern": "all_to_all_v", "matrix": "bad.csv"}})",
                        dir),
             Contains("bad.csv:1") && Contains("one per rank (3)"));
  CHECK_THAT(load_error(R"({"type": "collective", "op": "send_recv",
      "traffic": {"pattern": "all_to_all_v", "matrix": "none.csv"}})",
                        dir),
             Contains("/workload/traffic/matrix"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("bad traffic names the key and the fix") {
  const auto error = [](const std::string& traffic, const std::string& extra = "") {
    return load_error(R"({"type": "collective", "op": "send_recv", )" + extra + R"("traffic": )" +
                      traffic + "}");
  };
  CHECK_THAT(error(R"({"flows": [{"src": 2, "dst": 2, "bytes": 64}]})"),
             Contains("/workload/traffic/flows/0") && Contains("different ranks"));
  CHECK_THAT(error(R"({"flows": [{"src": 0, "dst": 16, "bytes": 64}]})"),
             Contains("/workload/traffic/flows/0/dst") && Contains("0..15"));
  CHECK_THAT(error(R"({"flows": [{"src": 0, "dst": 1, "bytes": -64}]})"),
             Contains("/workload/traffic/flows/0/bytes"));
  CHECK_THAT(error(R"({"flows": [{"src": 0, "dst": 1, "bytes": 6}]})"), Contains("multiple of 4"));
  CHECK_THAT(error(R"({"flows": [{"src": 0, "dts": 1, "bytes": 64}]})"),
             Contains("missing required key \"dst\"") && Contains("\"dts\""));
  CHECK_THAT(error(R"({"pattern": "permutaton", "bytes": 64})"),
             Contains("/workload/traffic/pattern") && Contains("permutation"));
  CHECK_THAT(error(R"({"pattern": "incast", "bytes": 64, "receiver": 20})"),
             Contains("/workload/traffic/receiver") && Contains("out of range"));
  CHECK_THAT(error(R"({"pattern": "permutation", "bytes": 64})", R"("sizes": ["1MiB"], )"),
             Contains("remove \"sizes\""));
  CHECK_THAT(load_error(R"({"type": "collective", "op": "all_reduce",
      "traffic": {"pattern": "permutation", "bytes": 64}})"),
             Contains("/workload/traffic") && Contains("\"op\": \"send_recv\""));
}
