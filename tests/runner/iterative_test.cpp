// workload.type = "iterative": the series forms expand to one value per iteration, bad input
// names the key (or the CSV file and line) and the fix, and the report's iteration times follow
// the sizes: a shrinking vector gives falling iteration times, each iteration is its compute
// plus its steps, and a periodic step shows up only on its iterations.
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/runner/run_report.hpp"
#include "ddlsim/scenario/scenario.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

using namespace ddlsim;

namespace {

Json base_scenario(const Json& workload) {
  return {{"topology",
           {{"nodes", Json::array({{{"preset", "single-gpu-host"}, {"count", 4}}})},
            {"fabric", {{"type", "single_switch"}, {"latency_ns", 1000}}}}},
          {"workload", workload},
          {"engine", {{"type", "analytic"}}}};
}

Json step(const Json& bytes) {
  return {{"op", "all_reduce"}, {"algorithm", "ring"}, {"bytes", bytes}};
}

Scenario load(const Json& workload, const std::filesystem::path& dir = ".") {
  return load_scenario(base_scenario(workload), "test", dir);
}

} // namespace

TEST_CASE("iterative: constant, list and geometric series expand per iteration") {
  const Scenario s =
      load({{"type", "iterative"},
            {"iterations", 4},
            {"compute_seconds", Json::array({0.001, 0.002, 0.003, 0.004})},
            {"steps",
             Json::array({step({{"geometric", {{"start", 4000}, {"factor", 0.5}, {"min", 1000}}}}),
                          step(64)})}});
  const IterativeWorkload& w = s.workload.iterative;
  REQUIRE(w.iterations == 4);
  CHECK(w.compute_seconds == std::vector<double>{0.001, 0.002, 0.003, 0.004});
  CHECK(w.steps[0].bytes == std::vector<std::uint64_t>{4000, 2000, 1000, 1000}); // min holds
  CHECK(w.steps[0].collective.sizes == std::vector<std::uint64_t>{1000, 2000, 4000});
  CHECK(w.steps[1].bytes == std::vector<std::uint64_t>{64, 64, 64, 64});
  CHECK(w.steps[0].name == "all_reduce"); // the op when no name is given
}

TEST_CASE("iterative: sizes round to whole elements and `every` skips iterations") {
  Json periodic = step(1002); // not a whole number of fp32 elements
  periodic["every"] = 2;
  periodic["name"] = "reconstruct";
  const Scenario s =
      load({{"type", "iterative"}, {"iterations", 5}, {"steps", Json::array({periodic})}});
  // 1002 B = 250.5 fp32 elements: to the nearest (away from zero at .5), 251 elements.
  CHECK(s.workload.iterative.steps[0].bytes == std::vector<std::uint64_t>{0, 1004, 0, 1004, 0});
  CHECK(s.workload.iterative.compute_seconds == std::vector<double>(5, 0.0));
}

TEST_CASE("iterative: a CSV column is read by its header name") {
  const auto dir = std::filesystem::temp_directory_path() / "ddlsim-iterative-test";
  std::filesystem::create_directories(dir);
  {
    std::ofstream out(dir / "sizes.csv");
    out << "iteration, bytes ,compute\n# a comment\n1, 4096, 0.5\n2, 2048, 0.25\n";
  }
  const Scenario s =
      load({{"type", "iterative"},
            {"iterations", 2},
            {"compute_seconds", {{"csv", "sizes.csv"}, {"column", "compute"}}},
            {"steps", Json::array({step({{"csv", "sizes.csv"}, {"column", "bytes"}})})}},
           dir);
  CHECK(s.workload.iterative.steps[0].bytes == std::vector<std::uint64_t>{4096, 2048});
  CHECK(s.workload.iterative.compute_seconds == std::vector<double>{0.5, 0.25});

  {
    std::ofstream out(dir / "bad.csv");
    out << "bytes\n4096\nlots\n";
  }
  CHECK_THROWS_WITH(
      load({{"type", "iterative"},
            {"iterations", 2},
            {"steps", Json::array({step({{"csv", "bad.csv"}, {"column", "bytes"}})})}},
           dir),
      Catch::Contains("bad.csv:3") && Catch::Contains("\"lots\""));
  CHECK_THROWS_WITH(
      load({{"type", "iterative"},
            {"iterations", 2},
            {"steps", Json::array({step({{"csv", "sizes.csv"}, {"column", "size"}})})}},
           dir),
      Catch::Contains("no column \"size\""));
  CHECK_THROWS_WITH(
      load({{"type", "iterative"},
            {"iterations", 3},
            {"steps", Json::array({step({{"csv", "sizes.csv"}, {"column", "bytes"}})})}},
           dir),
      Catch::Contains("2 rows but there are 3 iterations"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("iterative: bad input names the step and the fix") {
  auto workload = [](const Json& steps) {
    return Json{{"type", "iterative"}, {"iterations", 3}, {"steps", steps}};
  };
  CHECK_THROWS_WITH(load(workload(Json::array({step(Json::array({64, 64}))}))),
                    Catch::Contains("/workload/steps/0/bytes") &&
                        Catch::Contains("one value per iteration"));
  CHECK_THROWS_WITH(load(workload(Json::array({step(0)}))), Catch::Contains("never moves a byte"));
  Json unknown = step(64);
  unknown["algorithm"] = "rnig";
  CHECK_THROWS_WITH(load(workload(Json::array({step(64), unknown}))),
                    Catch::Contains("/workload/steps/1/algorithm") && Catch::Contains("\"ring\""));
  Json too_many = step(64);
  too_many["ranks"] = 5;
  CHECK_THROWS_WITH(load(workload(Json::array({too_many}))),
                    Catch::Contains("/workload/steps/0/ranks") && Catch::Contains("4 GPUs"));
  CHECK_THROWS_WITH(load(workload(Json::array({step(-1)}))), Catch::Contains("/workload/steps/0"));
  Json sizes = step(64);
  sizes["sizes"] = Json::array({64});
  CHECK_THROWS_WITH(load(workload(Json::array({sizes}))), Catch::Contains("sizes"));
}

TEST_CASE("iterative: a shrinking vector's iteration time falls, each compute plus its steps") {
  Json periodic = step(1 << 20);
  periodic["op"] = "all_gather";
  periodic["every"] = 3;
  periodic["name"] = "reconstruct";
  const Scenario s = load(
      {{"type", "iterative"},
       {"iterations", 6},
       {"compute_seconds", 0.001},
       {"steps",
        Json::array({step({{"geometric", {{"start", 8 << 20}, {"factor", 0.5}}}}), periodic})}});
  const runner::RunReport report = runner::run_scenario(s, "test");
  REQUIRE(report.incomplete.empty());
  const Json& iterations = report.json.at("iterations");
  REQUIRE(iterations.size() == 6);
  double sum = 0;
  for (std::size_t i = 0; i < 6; ++i) {
    const Json& it = iterations[i];
    double parts = it.at("compute_us").get<double>();
    for (const Json& st : it.at("steps")) parts += st.at("time_us").get<double>();
    CHECK(it.at("time_us").get<double>() == Approx(parts));
    sum += it.at("time_us").get<double>();
    // The all-reduce halves every iteration, so its time falls.
    if (i > 0)
      CHECK(it.at("steps")[0].at("time_us").get<double>() <
            iterations[i - 1].at("steps")[0].at("time_us").get<double>());
    // The reconstruction runs on iterations 3 and 6 only.
    CHECK((it.at("steps")[1].at("bytes").get<std::uint64_t>() > 0) == (i == 2 || i == 5));
  }
  CHECK(report.json.at("total_seconds").get<double>() == Approx(sum * 1e-6));
  CHECK(report.json.at("compute_seconds").get<double>() == Approx(0.006));
  CHECK(report.json.at("simulations").get<int>() == 7); // 6 all-reduce sizes + 1 all-gather
  CHECK(report.table.find("reconstruct") != std::string::npos);
}
