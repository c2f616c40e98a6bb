// Running plan points: threads return results in index order, exceptions stay with their point,
// and the result cache returns exactly what was stored for exactly the same point.
#include "ddlsim/planning/point_runner.hpp"
#include "ddlsim/planning/result_cache.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include <stdexcept>
#include <unistd.h>

using namespace ddlsim;
using namespace ddlsim::plan;

TEST_CASE("plan runner: results come back in index order whatever the threads") {
  std::vector<std::size_t> indices;
  for (std::size_t i = 0; i < 50; ++i) indices.push_back(i * 3);
  const auto evaluate = [](std::size_t index) {
    PointResult r;
    r.metrics.gpus = int(index);
    if (index == 9) throw std::runtime_error("point 9 failed");
    return r;
  };
  for (unsigned threads : {1u, 4u, 64u}) {
    const std::vector<PointResult> results = run_points(indices, evaluate, threads);
    REQUIRE(results.size() == indices.size());
    for (std::size_t k = 0; k < results.size(); ++k) {
      CHECK(results[k].index == indices[k]);
      if (indices[k] == 9) {
        CHECK(results[k].error == "point 9 failed");
      } else {
        CHECK(results[k].ok());
        CHECK(results[k].metrics.gpus == int(indices[k]));
      }
    }
  }
}

TEST_CASE("plan cache: a stored point is found again but a different point or version is not") {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("ddlsim-plan-cache-test-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const ResultCache cache(dir, "1.0");
  const Json point = {{"topology", {{"nodes", 4}}}, {"seed", 1}};
  PointMetrics metrics;
  metrics.gpus = 32;
  metrics.iteration_seconds = 0.125;
  metrics.what = "all_reduce 100 MB ring";
  CHECK_FALSE(cache.find(point).has_value());
  cache.store(point, metrics);
  REQUIRE(cache.find(point).has_value());
  CHECK(*cache.find(point) == metrics);
  Json other = point;
  other["seed"] = 2;
  CHECK_FALSE(cache.find(other).has_value());
  CHECK_FALSE(ResultCache(dir, "1.1").find(point).has_value());
  // A damaged entry is a miss, not an error.
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    std::ofstream(entry.path()) << "{not json";
  CHECK_FALSE(cache.find(point).has_value());
  std::filesystem::remove_all(dir);
}
