// A results row whose size does not parse is an error naming file:line (or, lenient, a warning),
// never prose that silently ends the table and drops the measurement.
#include "ddlsim/calibrate/nccl_log.hpp"
#include "ddlsim/core/input_error.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace ddlsim;

namespace {

const std::string kLog =
    "$ ./build/all_reduce_perf -b 8 -e 16 -g 2\n"
    "#       size         count      type   redop     time   algbw   busbw  error     time   "
    "algbw   busbw  error\n"
    "           8             2     float     sum    10.00    0.00    0.00  0e+00    10.00    "
    "0.00    0.00  0e+00\n"
    "         1M?        262144     float     sum    89.27   11.75   20.56  2e-07    88.45   "
    "11.85   20.75  2e-07\n"
    "          16             4     float     sum    11.00    0.00    0.00  0e+00    11.00    "
    "0.00    0.00  0e+00\n";

} // namespace

TEST_CASE("nccl log: a row whose size does not parse is an error naming file:line") {
  CHECK_THROWS_WITH(calib::parse_nccl_log(kLog, "log.txt"),
                    Catch::Contains("log.txt:4") &&
                        Catch::Contains("expected a size in bytes in column 1, found \"1M?\""));
}

TEST_CASE("nccl log: lenient skips the damaged row with a warning and keeps the rest") {
  const calib::NcclLog log = calib::parse_nccl_log(kLog, "log.txt", true);
  REQUIRE(log.tables.size() == 1);
  CHECK(log.tables[0].rows.size() == 2);
  REQUIRE(log.warnings.size() == 1);
  CHECK(log.warnings[0].find("log.txt:4") != std::string::npos);
}

TEST_CASE("nccl log: prose after a table still ends it") {
  const calib::NcclLog log =
      calib::parse_nccl_log(kLog.substr(0, kLog.find("         1M?")) +
                                "Done: see results above\n# Out of bounds values : 0 OK\n",
                            "log.txt");
  REQUIRE(log.tables.size() == 1);
  CHECK(log.tables[0].rows.size() == 1);
}
