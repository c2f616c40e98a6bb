// The nccl-tests parser on the three shared real logs (values checked against the lines of the
// files) and on synthetic logs for the other formats: rank prefixes, NCCL_DEBUG lines, the
// other *_perf tools, old and new column layouts, N/A in-place columns, and malformed input.
#include "ddlsim/calibrate/nccl_log.hpp"
#include "ddlsim/core/input_error.hpp"
#include "error_of.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

using namespace ddlsim;
using namespace ddlsim::calib;

namespace {

std::string data(const std::string& name) {
  return std::string(DDLSIM_TEST_DATA_DIR) + "/../calibrate/data/" + name;
}

using ddlsim::test_support::error_of;

} // namespace

TEST_CASE("the V100 cube-mesh log parses: one all_reduce table of 25 rows on 8 ranks of one host") {
  const NcclLog log = parse_nccl_log_file(data("v100-sxm2-8gpu-1node-hybrid-cube-mesh.txt"));
  REQUIRE(log.tables.size() == 1);
  const NcclTable& t = log.tables[0];
  CHECK(t.tool == "all_reduce_perf");
  REQUIRE(t.op);
  CHECK(*t.op == coll::Op::all_reduce);
  REQUIRE(t.rows.size() == 25);
  CHECK(t.rows.front().bytes == 8);
  CHECK(t.rows.front().count == 2);
  CHECK(t.rows.front().line == 44);
  CHECK(t.rows.front().out_of_place_us == Approx(48.46));
  CHECK(*t.rows.front().in_place_us == Approx(48.17));
  CHECK(t.rows.back().bytes == 134217728);
  CHECK(t.rows.back().line == 68);
  CHECK(t.rows.back().out_of_place_us == Approx(1818.8));
  CHECK(t.rows.back().busbw == Approx(129.14));
  CHECK(*t.rows.back().in_place_us == Approx(1821.9));
  CHECK(t.system.ranks == 8);
  CHECK(t.system.nodes == 1);
  CHECK(t.system.gpus_per_node == 8);
  CHECK(t.system.gpu_name == "Tesla V100-SXM2-16GB");
  const MeasuredSet set = to_measured_set(log, {});
  REQUIRE(set.points.size() == 25);
  CHECK(set.points.back().seconds == Approx(1818.8e-6));
  CHECK(set.points.back().ranks == 8);
  CHECK(set.points.back().where.ends_with("v100-sxm2-8gpu-1node-hybrid-cube-mesh.txt:68"));
}

TEST_CASE("the p4de log parses through its srun prefix and ranks come from busbw / algbw") {
  const NcclLog log = parse_nccl_log_file(data("aws-p4de.24xlarge-2node-efa-a100.txt"));
  REQUIRE(log.tables.size() == 1);
  const NcclTable& t = log.tables[0];
  REQUIRE(t.rows.size() == 29);
  CHECK(t.rows[0].root == -1);
  CHECK(t.rows[0].out_of_place_us == Approx(164.3));
  CHECK(t.rows[25].bytes == 268435456);
  CHECK(t.rows[25].out_of_place_us == Approx(7201.7));
  CHECK(t.rows.back().bytes == 2147483648ULL);
  CHECK(t.rows.back().out_of_place_us == Approx(51406));
  CHECK(t.rows.back().line == 35);
  CHECK(t.system.ranks == 0); // no device lines: the table alone
  const MeasuredSet set = to_measured_set(log, {});
  CHECK(set.system.ranks == 16); // 78.33 / 41.78 = 2 * 15 / 16
  CHECK(set.system.nodes == 0);  // nothing says how many nodes
  SystemHints hints;
  hints.nodes = 2;
  hints.gpus_per_node = 8;
  const MeasuredSet hinted = to_measured_set(log, hints);
  CHECK(hinted.system.nodes == 2);
  CHECK(hinted.system.gpus_per_node == 8);
}

TEST_CASE("the g5 log parses into its three runs: two single-GPU baselines and the 2-node run") {
  const NcclLog log = parse_nccl_log_file(data("aws-g5.2xlarge-2node-tcp-socket-a10g.txt"));
  REQUIRE(log.tables.size() == 3);
  CHECK(log.tables[0].rows.size() == 25);
  CHECK(log.tables[0].rows[0].line == 16);
  CHECK(log.tables[0].rows[0].out_of_place_us == Approx(4.17));
  CHECK(log.tables[0].system.ranks == 1);
  CHECK(log.tables[0].system.hosts == std::vector<std::string>{"ip-10-0-139-244"});
  CHECK(log.tables[1].rows[0].out_of_place_us == Approx(4.41));
  CHECK(log.tables[1].system.hosts == std::vector<std::string>{"ip-10-0-142-242"});
  const NcclTable& run = log.tables[2];
  REQUIRE(run.rows.size() == 25);
  CHECK(run.rows[0].line == 138);
  CHECK(run.rows[0].out_of_place_us == Approx(172.7));
  CHECK(*run.rows[0].in_place_us == Approx(168.9));
  CHECK(run.rows[20].line == 158);
  CHECK(run.rows[20].out_of_place_us == Approx(12668));
  CHECK(*run.rows[20].in_place_us == Approx(11719));
  CHECK(run.system.ranks == 2);
  CHECK(run.system.nodes == 2);
  CHECK(run.system.gpus_per_node == 1);
  CHECK(run.system.gpu_name == "NVIDIA A10G");
  CHECK(run.system.library_version == "NCCL 2.11.4+cuda11.4");
  CHECK(run.system.transport == "NET/Socket");
  // The two 1-rank runs are the same collective on the same rank count: not merged, the first
  // (of equal length) stands for both, and a note says so.
  const MeasuredSet set = to_measured_set(log, {}, NcclColumn::in_place);
  REQUIRE(set.points.size() == 50);
  CHECK(set.points[0].where.ends_with(":16"));
  CHECK(set.points[25 + 20].seconds == Approx(11719e-6));
  CHECK(set.system.ranks == 2); // the widest run
  CHECK(std::find_if(set.system.notes.begin(), set.system.notes.end(), [](const std::string& n) {
          return n.starts_with("table at line 56 (25 rows) left out: another run of all_reduce "
                               "on 1 ranks in the same file, the table at line 14");
        }) != set.system.notes.end());
  CHECK(to_measured_set(log, {}, NcclColumn::mean).points[45].seconds ==
        Approx((12668 + 11719) / 2.0 * 1e-6));
}

TEST_CASE("srun-prefixed reduce_scatter_perf with NCCL_DEBUG lines and Group columns") {
  const NcclLog log = parse_nccl_log_file(data("srun-reduce-scatter-2node.txt"));
  REQUIRE(log.tables.size() == 1);
  const NcclTable& t = log.tables[0];
  CHECK(t.tool == "reduce_scatter_perf");
  CHECK(*t.op == coll::Op::reduce_scatter);
  REQUIRE(t.rows.size() == 7);
  CHECK(t.rows[3].bytes == 65536);
  CHECK(t.rows[3].out_of_place_us == Approx(52.47));
  CHECK(*t.rows[3].in_place_us == Approx(51.80));
  CHECK(t.system.ranks == 4);
  CHECK(t.system.nodes == 2); // nNodes 2, and two hosts
  CHECK(t.system.gpus_per_node == 2);
  CHECK(t.system.gpu_name == "NVIDIA A100-SXM4-40GB");
  CHECK(t.system.library_version == "NCCL 2.18.3+cuda12.2");
  CHECK(t.system.transport == "NET/IB");
}

TEST_CASE("mpirun --tag-output all_gather_perf in the old layout without redop") {
  const NcclLog log = parse_nccl_log_file(data("mpirun-tagged-all-gather.txt"));
  REQUIRE(log.tables.size() == 1);
  const NcclTable& t = log.tables[0];
  CHECK(*t.op == coll::Op::all_gather);
  REQUIRE(t.rows.size() == 5);
  CHECK(t.rows[4].bytes == 1048576);
  CHECK(t.rows[4].type == "float");
  CHECK(t.rows[4].redop == "none");
  CHECK(t.rows[4].out_of_place_us == Approx(66.30));
  CHECK(t.system.ranks == 4);
  CHECK(t.system.nodes == 1);
  CHECK(t.system.gpu_name == "Tesla V100-SXM2-32GB");
}

TEST_CASE("broadcast_perf and alltoall_perf in one file with N/A in-place columns") {
  const NcclLog log = parse_nccl_log_file(data("broadcast-and-alltoall.txt"));
  REQUIRE(log.tables.size() == 2);
  CHECK(*log.tables[0].op == coll::Op::broadcast);
  CHECK(log.tables[0].rows[0].root == 0);
  CHECK(log.tables[0].rows[2].out_of_place_us == Approx(105.20));
  CHECK(*log.tables[1].op == coll::Op::all_to_all);
  REQUIRE(log.tables[1].rows.size() == 3);
  CHECK_FALSE(log.tables[1].rows[0].in_place_us.has_value());
  CHECK(log.tables[1].rows[1].out_of_place_us == Approx(98.40));
  // Broadcast's bus factor is 1: no rank count from the table; --nodes / --gpus-per-node give it.
  CHECK_THAT(error_of([&] { to_measured_set(log, {}); }),
             Catch::Contains("broadcast-and-alltoall.txt:5") &&
                 Catch::Contains("--nodes and --gpus-per-node"));
  SystemHints hints;
  hints.nodes = 1;
  hints.gpus_per_node = 8;
  const MeasuredSet set = to_measured_set(log, hints);
  REQUIRE(set.points.size() == 6);
  CHECK(set.points[3].op == coll::Op::all_to_all);
  CHECK(set.points[3].ranks == 8);
  // In-place N/A falls back to the out-of-place time.
  CHECK(to_measured_set(log, hints, NcclColumn::in_place).points[3].seconds == Approx(61.00e-6));
}

TEST_CASE("malformed logs are errors naming file:line") {
  CHECK_THAT(error_of([] { parse_nccl_log_file(data("bad-short-row.txt")); }),
             Catch::Contains("bad-short-row.txt:4") && Catch::Contains("columns"));
  CHECK_THAT(error_of([] { parse_nccl_log_file(data("bad-time.txt")); }),
             Catch::Contains("bad-time.txt:3") && Catch::Contains("\"fast\""));
  CHECK_THAT(error_of([] { parse_nccl_log("no table here\n", "empty.txt"); }),
             Catch::Contains("empty.txt") && Catch::Contains("no nccl-tests results table"));
  const NcclLog unnamed = parse_nccl_log_file(data("no-tool-named.txt"));
  CHECK_THAT(error_of([&] { to_measured_set(unnamed, {}); }),
             Catch::Contains("no-tool-named.txt:1") && Catch::Contains("--op"));
  SystemHints hints;
  hints.op = coll::Op::all_reduce;
  CHECK(to_measured_set(unnamed, hints).points.at(0).ranks == 8); // 22.94 / 13.11 = 2 * 7 / 8
  CHECK(looks_like_nccl_log("0: #  size  count  type redop root time algbw busbw #wrong time\n"));
  CHECK_FALSE(looks_like_nccl_log("{\"results\": []}"));
}
