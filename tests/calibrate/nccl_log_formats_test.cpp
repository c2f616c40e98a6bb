// The nccl-tests parser on logs as people publish them (issue 17 item 6): rows elided with
// `...`, tables indented or with the `#` of their comment lines stripped, markdown tables,
// bandwidth-only tables with rounded size labels, several runs of one collective in a file,
// `Rank` lines elided, 0-byte rows, and a table header without rows. Small fixtures in
// tests/calibrate/data/ for each format, and the corpus logs that use them.
#include "ddlsim/calibrate/nccl_log.hpp"
#include "ddlsim/core/input_error.hpp"
#include "error_of.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

using namespace ddlsim;
using namespace ddlsim::calib;
using ddlsim::test_support::error_of;

namespace {

std::string fixture(const std::string& name) {
  return std::string(DDLSIM_TEST_DATA_DIR) + "/../calibrate/data/" + name;
}
std::string corpus(const std::string& name) {
  return std::string(DDLSIM_TEST_DATA_DIR) + "/nccl-tests/" + name;
}

bool has_note(const MeasuredSet& set, const std::string& text) {
  return std::any_of(set.system.notes.begin(), set.system.notes.end(),
                     [&](const std::string& note) { return note.find(text) != std::string::npos; });
}

SystemHints hints_of(coll::Op op, int nodes, int gpus_per_node) {
  SystemHints hints;
  hints.op = op;
  hints.nodes = nodes;
  hints.gpus_per_node = gpus_per_node;
  return hints;
}

} // namespace

TEST_CASE("an elided table keeps the rows after `...` and says what was cut") {
  const NcclLog log = parse_nccl_log_file(fixture("elided-rows.txt"));
  REQUIRE(log.tables.size() == 1);
  const NcclTable& t = log.tables[0];
  REQUIRE(t.rows.size() == 3); // the 0-byte row and the two after the elision
  CHECK(t.rows[1].bytes == 16777216);
  CHECK(t.rows[1].line == 8);
  CHECK(t.rows[2].out_of_place_us == Approx(3000.0));
  REQUIRE(t.notes.size() == 1);
  CHECK(t.notes[0].find("line 7 `...` elides rows between 0 B and 16777216 B") !=
        std::string::npos);
  const MeasuredSet set = to_measured_set(log, {});
  REQUIRE(set.points.size() == 2); // the 0-byte row times a launch: left out, with a note
  CHECK(set.points[0].bytes == 16777216);
  CHECK(set.points[0].ranks == 8); // busbw / algbw = 2 * 7 / 8
  CHECK(has_note(set, "1 row(s) of 0 bytes left out"));
  CHECK(has_note(set, "elides rows between 0 B and 16777216 B"));
}

TEST_CASE("the p5 excerpt of the corpus reads its 6 rows of sizes > 0 across the elision") {
  const NcclLog log = parse_nccl_log_file(corpus("aws-p5.48xlarge-2node-efa-h100-excerpt.txt"));
  REQUIRE(log.tables.size() == 1);
  CHECK(log.tables[0].rows.size() == 7);
  const MeasuredSet set = to_measured_set(log, hints_of(coll::Op::all_reduce, 2, 8));
  REQUIRE(set.points.size() == 6);
  CHECK(set.points.front().bytes == 67108864);
  CHECK(set.points.back().bytes == 2147483648ULL);
  CHECK(set.points.front().ranks == 16);
}

TEST_CASE("an indented table whose `#` lines were stripped parses like the original") {
  const NcclLog log = parse_nccl_log_file(fixture("stripped-hash-indented.txt"));
  REQUIRE(log.tables.size() == 1);
  const NcclTable& t = log.tables[0];
  REQUIRE(t.rows.size() == 4);
  CHECK(t.header_line == 7);
  CHECK(t.rows[0].bytes == 65536);
  CHECK(t.rows[0].out_of_place_us == Approx(40.0));
  CHECK(*t.rows[0].in_place_us == Approx(41.0));
  CHECK(t.rows[3].line == 12);
  CHECK_FALSE(t.op.has_value()); // the page never names the tool: --op says
  const MeasuredSet set = to_measured_set(log, hints_of(coll::Op::all_reduce, 0, 0));
  REQUIRE(set.points.size() == 4);
  CHECK(set.points[3].ranks == 8);
}

TEST_CASE("the corpus logs indented with `#` stripped parse with their rank counts") {
  const MeasuredSet a4 =
      to_measured_set(parse_nccl_log_file(corpus("gcp-a4-highgpu-8g-2node-roce-b200.txt")),
                      hints_of(coll::Op::all_reduce, 2, 8));
  REQUIRE(a4.points.size() == 11);
  CHECK(a4.points.front().bytes == 8388608);
  CHECK(a4.points.front().seconds == Approx(156.9e-6)); // out of place, the default column
  CHECK(a4.points.back().bytes == 8589934592ULL);
  CHECK(a4.system.ranks == 16); // 683.52 / 364.55 = 2 * 15 / 16
  const MeasuredSet gather = to_measured_set(
      parse_nccl_log_file(corpus("gcp-a3-megagpu-8g-2node-tcpxo-h100-all-gather.txt")),
      hints_of(coll::Op::all_gather, 2, 8));
  REQUIRE(gather.points.size() == 11);
  CHECK(gather.points.front().op == coll::Op::all_gather);
  CHECK(gather.system.ranks == 16); // 188.54 / 201.11 = 15 / 16
  CHECK(gather.points.back().seconds == Approx(42713e-6));
}

TEST_CASE("a markdown table of full nccl-tests rows reads as the rows without the bars") {
  const NcclLog log = parse_nccl_log_file(fixture("markdown-full-table.md"));
  REQUIRE(log.tables.size() == 1);
  const NcclTable& t = log.tables[0];
  REQUIRE(t.rows.size() == 4);
  CHECK(t.header_line == 3);
  CHECK(t.rows[0].line == 5);
  CHECK(t.rows[2].bytes == 16777216);
  CHECK(t.rows[2].out_of_place_us == Approx(300.0));
  CHECK(*t.rows[2].in_place_us == Approx(305.0));
  CHECK(t.rows[2].busbw == Approx(97.87));
}

TEST_CASE("a busbw-only table gets its times from busbw and the bus factor, as an inference") {
  const NcclLog log = parse_nccl_log_file(fixture("busbw-only-markdown.md"));
  REQUIRE(log.tables.size() == 1);
  const NcclTable& t = log.tables[0];
  CHECK(t.timing == NcclTiming::from_busbw);
  REQUIRE(t.rows.size() == 6);
  // Rounded labels are the powers of two nccl-tests ran: 65K = 2^16, 132K = 2^17, 134M = 2^27.
  CHECK(t.rows[0].bytes == 1024);
  CHECK(t.rows[1].bytes == 65536);
  CHECK(t.rows[2].bytes == 131072);
  CHECK(t.rows[3].bytes == 1048576);
  CHECK(t.rows[4].bytes == 134217728);
  CHECK(t.rows[5].bytes == 1073741824);
  CHECK(t.rows[5].busbw == Approx(467.58));
  // No rank count in the table: without hints it is an error, with them the time follows.
  CHECK_THAT(error_of([&] {
               to_measured_set(log, {coll::Op::all_reduce, 0, 0});
             }),
             Catch::Contains("busbw-only-markdown.md:5") && Catch::Contains("--gpus-per-node"));
  const MeasuredSet set = to_measured_set(log, hints_of(coll::Op::all_reduce, 1, 8));
  REQUIRE(set.points.size() == 6);
  // time = size / algbw, algbw = busbw / (2 * 7 / 8)
  CHECK(set.points[5].seconds == Approx(1073741824.0 / (467.58e9 / 1.75)));
  CHECK(set.points[5].ranks == 8);
  CHECK(has_note(set, "no time column: time = size / algbw, algbw = busbw / bus factor 2(n-1)/n = "
                      "1.75 for 8 ranks"));
  CHECK(has_note(set, "read as the nearest power of two"));
  CHECK(has_note(set, "column \"ND Example (GB/s)\" read as busbw"));
  // An all-gather's bus factor is (n-1)/n.
  const MeasuredSet gather = to_measured_set(log, hints_of(coll::Op::all_gather, 1, 8));
  CHECK(gather.points[5].seconds == Approx(1073741824.0 / (467.58e9 / 0.875)));
}

TEST_CASE("the corpus's busbw-only Azure H200 table reads 24 sizes from 1 KiB to 8 GiB") {
  const MeasuredSet set =
      to_measured_set(parse_nccl_log_file(corpus("azure-nd-h200-v5-1node-nvswitch-h200-busbw.txt")),
                      hints_of(coll::Op::all_reduce, 1, 8));
  REQUIRE(set.points.size() == 24);
  CHECK(set.points.front().bytes == 1024);
  CHECK(set.points[6].bytes == 65536);  // "65K"
  CHECK(set.points[7].bytes == 131072); // "132K"
  CHECK(set.points.back().bytes == 8589934592ULL);
  CHECK(set.points.back().seconds == Approx(8589934592.0 / (479.98e9 / 1.75)));
}

TEST_CASE("an algbw column of a bandwidth-only table is the algorithm bandwidth itself") {
  const std::string text = "| Size | algbw (GB/s) |\n|---|---|\n| 1M | 10.0 |\n| 2M | 20.0 |\n";
  const NcclLog log = parse_nccl_log(text, "algbw.md");
  REQUIRE(log.tables.size() == 1);
  CHECK(log.tables[0].timing == NcclTiming::from_algbw);
  const MeasuredSet set = to_measured_set(log, hints_of(coll::Op::all_reduce, 1, 8));
  CHECK(set.points[1].seconds == Approx(2097152.0 / 20e9));
}

TEST_CASE("two runs of one collective on the same ranks are not merged: the largest is used") {
  const NcclLog log = parse_nccl_log_file(fixture("two-runs-same-collective.txt"));
  REQUIRE(log.tables.size() == 2);
  const MeasuredSet set = to_measured_set(log, {});
  REQUIRE(set.points.size() == 4); // the second run's 4 rows, not 2 + 4
  CHECK(set.points[0].seconds == Approx(44.0e-6));
  CHECK(set.points[0].where.ends_with("two-runs-same-collective.txt:10"));
  CHECK(has_note(set, "table at line 2 (2 rows) left out: another run of all_reduce on 8 ranks in "
                      "the same file, the table at line 8 (4 rows), is used"));
}

TEST_CASE("a log that keeps only the first and last Rank lines counts ranks from the highest") {
  const NcclLog log = parse_nccl_log_file(fixture("rank-lines-elided.txt"));
  REQUIRE(log.tables.size() == 1);
  CHECK(log.tables[0].system.ranks == 16);
  CHECK(log.tables[0].system.nodes == 0); // two hosts shown, but the lines between are cut
  const MeasuredSet set = to_measured_set(log, hints_of(coll::Op::all_reduce, 2, 8));
  CHECK(set.points[0].ranks == 16);
  CHECK(set.system.nodes == 2);
  CHECK(has_note(set, "`Rank` lines elided (2 lines, highest rank 15): ranks 16"));
}

TEST_CASE("a table header without rows is an error naming the file and line") {
  CHECK_THAT(error_of([] { parse_nccl_log_file(fixture("empty-table.txt")); }),
             Catch::Contains("empty-table.txt:2") &&
                 Catch::Contains("a results table header with no rows"));
  CHECK_THAT(
      error_of([] { parse_nccl_log("| Message Size | busbw (GB/s) |\n|---|---|\n", "e.md"); }),
      Catch::Contains("e.md:1") && Catch::Contains("no rows"));
}

TEST_CASE("a bandwidth-only row that does not parse is an error with its line") {
  CHECK_THAT(error_of([] {
               parse_nccl_log("| Size | busbw (GB/s) |\n|---|---|\n| 1M | fast |\n", "b.md");
             }),
             Catch::Contains("b.md:3") && Catch::Contains("\"fast\""));
}
