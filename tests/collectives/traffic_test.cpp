// Traffic workloads (collectives/traffic.hpp): the patterns' flows, their Schedule run by the
// reference executor (every flow's bytes land where the receiver expects them), and the errors.
#include "ddlsim/collectives/reference.hpp"
#include "ddlsim/collectives/traffic.hpp"
#include "error_of.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <sstream>

using namespace ddlsim;
using namespace ddlsim::coll;
using Catch::Matchers::Contains;
using test_support::error_of;

namespace {

// Runs the flows' Schedule on the reference executor with distinct values in every input
// element, and checks each flow's output range holds its sender's input range.
void check_reference(const std::vector<Flow>& flows, int ranks) {
  const Schedule schedule = traffic_schedule(flows, ranks, DataType::fp32);
  // (validate() checks a materialized schedule's buffers against its call's sizes, which a
  // composite source does not follow; the run below checks the ranges against the source's.)
  std::vector<std::vector<double>> inputs(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    inputs[static_cast<std::size_t>(r)].resize(schedule.buffer_bytes(r, Buffer::input) / 4);
    for (std::size_t e = 0; e < inputs[static_cast<std::size_t>(r)].size(); ++e)
      inputs[static_cast<std::size_t>(r)][e] = static_cast<double>(r * 1000 + int(e % 1000));
  }
  const ReferenceRun run = execute_reference(schedule, inputs);
  REQUIRE(run.status.ok);
  CHECK(run.status.steps_executed == 2 * flows.size());
  const std::vector<FlowRanges> ranges = flow_ranges(flows, ranks);
  for (std::size_t f = 0; f < flows.size(); ++f) {
    INFO("flow " << f << ": " << flows[f].src << " -> " << flows[f].dst);
    const auto& in = inputs[static_cast<std::size_t>(flows[f].src)];
    const auto& out = run.outputs[static_cast<std::size_t>(flows[f].dst)];
    for (std::uint64_t e = 0; e < flows[f].bytes / 4; ++e)
      REQUIRE(out[ranges[f].out.offset / 4 + e] == in[ranges[f].in.offset / 4 + e]);
  }
}

} // namespace

TEST_CASE("a permutation is a derangement and deterministic from its seed") {
  for (int ranks : {2, 3, 7, 64, 1024}) {
    INFO(ranks << " ranks");
    const std::vector<int> target = permutation_targets(ranks, 42);
    CHECK(permutation_targets(ranks, 42) == target);
    const std::set<int> distinct(target.begin(), target.end());
    CHECK(static_cast<int>(distinct.size()) == ranks);
    CHECK(*distinct.begin() == 0);
    CHECK(*distinct.rbegin() == ranks - 1);
    for (int r = 0; r < ranks; ++r) CHECK(target[static_cast<std::size_t>(r)] != r);
  }
  CHECK(permutation_targets(2, 7) == std::vector<int>{1, 0});
  CHECK(permutation_targets(64, 1) != permutation_targets(64, 2));
  // The draw is written out over mt19937_64, whose output the standard fixes: these targets
  // are the same with every standard library.
  CHECK(permutation_targets(8, 1) == std::vector<int>{4, 6, 3, 5, 1, 7, 2, 0});
}

TEST_CASE("incast and matrix patterns make the flows they describe") {
  const std::vector<Flow> incast = incast_flows(6, 3, 2, 64);
  CHECK(incast == std::vector<Flow>{{0, 2, 64}, {1, 2, 64}, {3, 2, 64}});
  std::istringstream csv("# bytes from row to column\n0,8,0\n4, 0 ,12\n\n0,0,0\n");
  CHECK(matrix_flows(csv, 3, "m.csv") == std::vector<Flow>{{0, 1, 8}, {1, 0, 4}, {1, 2, 12}});
}

TEST_CASE("the reference executor moves every flow's bytes to its receiver") {
  check_reference(permutation_flows(16, 64, 3), 16);
  check_reference(incast_flows(8, 7, 5, 32), 8);
  // Several flows between one pair, both ways, and of different sizes.
  check_reference({{0, 1, 16}, {1, 0, 8}, {0, 1, 4}, {2, 1, 12}, {0, 2, 4}}, 3);
  std::istringstream csv("0,8,16,4\n4,0,4,4\n8,8,0,0\n4,4,4,0\n");
  check_reference(matrix_flows(csv, 4, "m.csv"), 4);
}

TEST_CASE("bad flows and matrices name what to fix") {
  const std::string where = "/workload/traffic/flows";
  CHECK_THAT(error_of([&] {
               check_flows({{0, 1, 8}, {2, 2, 8}}, 4, DataType::fp32, where);
             }),
             Contains("/workload/traffic/flows/1") && Contains("different ranks"));
  CHECK_THAT(error_of([&] {
               check_flows({{0, 4, 8}}, 4, DataType::fp32, where);
             }),
             Contains("/workload/traffic/flows/0/dst") && Contains("out of range"));
  CHECK_THAT(error_of([&] {
               check_flows({{0, 1, 6}}, 4, DataType::fp32, where);
             }),
             Contains("/workload/traffic/flows/0/bytes") && Contains("multiple of 4"));
  CHECK_THAT(error_of([&] { check_flows({}, 4, DataType::fp32, where); }), Contains("no flow"));
  CHECK_THAT(error_of([] { incast_flows(4, 4, 0, 8); }), Contains("/workload/traffic/senders"));
  CHECK_THAT(error_of([] { incast_flows(4, 2, 4, 8); }), Contains("/workload/traffic/receiver"));
  CHECK_THAT(error_of([] { permutation_targets(1, 1); }), Contains("at least 2 ranks"));
  const auto matrix_error = [](const std::string& text) {
    return error_of([&] {
      std::istringstream csv(text);
      matrix_flows(csv, 2, "m.csv");
    });
  };
  CHECK_THAT(matrix_error("0,1\n1,0\n1,1\n"), Contains("m.csv:3") && Contains("more than 2 rows"));
  CHECK_THAT(matrix_error("0,1\n"), Contains("has 1 rows"));
  CHECK_THAT(matrix_error("0,1,2\n1,0\n"), Contains("m.csv:1") && Contains("more than 2 columns"));
  CHECK_THAT(matrix_error("0\n1,0\n"), Contains("has 1 columns"));
  CHECK_THAT(matrix_error("0,-4\n1,0\n"), Contains("column 2") && Contains("non-negative"));
  CHECK_THAT(matrix_error("0,4KiB\n1,0\n"), Contains("\"4KiB\""));
  CHECK_THAT(matrix_error("8,4\n1,0\n"), Contains("diagonal"));
}
