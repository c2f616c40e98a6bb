// Issue 17's log-parsing leftovers: a row that does not parse is an error naming file:line, or a
// warning under --lenient (the row skipped, the others kept); a results row after prose split
// its table is never dropped silently; the `NCCL version` and `nccl-library` headers are read.
#include "ddlsim/calibrate/nccl_log.hpp"
#include "ddlsim/core/input_error.hpp"
#include "error_of.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace ddlsim;
using namespace ddlsim::calib;
using ddlsim::test_support::error_of;

namespace {

const std::string kHeader =
    "# nThread 1 nGpus 1 minBytes 1024 maxBytes 4096 step: 2(factor) warmup iters: 5 iters: 20\n"
    "#  Rank  0 Group  0 Pid 1 on node1 device  0 [0x07] NVIDIA A100-SXM4-80GB\n"
    "#  Rank  1 Group  0 Pid 2 on node1 device  1 [0x0b] NVIDIA A100-SXM4-80GB\n"
    "#       size   count   type   redop  root   time  algbw  busbw #wrong   time  algbw  busbw "
    "#wrong\n"
    "#        (B) (elements)                      (us) (GB/s) (GB/s)          (us) (GB/s) (GB/s)\n";

std::string row(int bytes, const std::string& time) {
  return "        " + std::to_string(bytes) + "  " + std::to_string(bytes / 4) +
         "  float  sum  -1  " + time + "  0.10  0.10  0  " + time + "  0.10  0.10  0\n";
}

} // namespace

TEST_CASE("a row that does not parse is an error with file:line, a warning with lenient") {
  const std::string text = kHeader + row(1024, "10.5") +
                           "        2048  512  float  sum  -1  11.0  0.19\n" + // cut short
                           row(4096, "12.5");
  CHECK_THAT(error_of([&] { parse_nccl_log(text, "cut.txt"); }),
             Catch::StartsWith("cut.txt:7") && Catch::Contains("columns"));
  const NcclLog log = parse_nccl_log(text, "cut.txt", true);
  REQUIRE(log.tables.size() == 1);
  REQUIRE(log.tables[0].rows.size() == 2); // the rows on both sides are kept
  CHECK(log.tables[0].rows[1].bytes == 4096);
  REQUIRE(log.warnings.size() == 1);
  CHECK_THAT(log.warnings[0],
             Catch::StartsWith("cut.txt:7: ") && Catch::Contains("row skipped: --lenient"));
  SystemHints hints;
  hints.op = coll::Op::all_reduce;
  const MeasuredSet set = to_measured_set(log, hints);
  CHECK(set.points.size() == 2);
  CHECK(set.warnings == log.warnings);
}

TEST_CASE("a results row after prose split its table is an error, a warning with lenient") {
  const std::string text = kHeader + row(1024, "10.5") + "NCCL warning: something happened\n" +
                           row(2048, "11.0") + row(4096, "12.5");
  CHECK_THAT(error_of([&] { parse_nccl_log(text, "split.txt"); }),
             Catch::StartsWith("split.txt:8") && Catch::Contains("after its table ended") &&
                 Catch::Contains("line 7") && Catch::Contains("--lenient"));
  const NcclLog log = parse_nccl_log(text, "split.txt", true);
  REQUIRE(log.tables.size() == 1);
  CHECK(log.tables[0].rows.size() == 1);
  CHECK(log.warnings.size() == 2); // both rows after the split, each named
  // Two complete runs one after the other are no split: each has its own header.
  const std::string two =
      kHeader + row(1024, "10.5") + "# Avg bus bandwidth : 0.1\n" + kHeader + row(1024, "10.4");
  CHECK(parse_nccl_log(two, "two.txt").tables.size() == 2);
}

TEST_CASE("the NCCL version and nccl-library headers are read and reported") {
  const NcclLog plain =
      parse_nccl_log("# NCCL version 2.18.5+cuda12.2\n" + kHeader + row(1024, "10.5"), "v.txt");
  CHECK(plain.tables.at(0).system.library_version == "NCCL 2.18.5+cuda12.2");
  const NcclLog code =
      parse_nccl_log("# nccl-tests version 2.18.2 nccl-headers=23007 nccl-library=23007\n" +
                         kHeader + row(1024, "10.5"),
                     "c.txt");
  CHECK(code.tables.at(0).system.library_version == "NCCL 2.30.7");
  bool noted = false;
  for (const std::string& note : code.tables.at(0).system.notes)
    noted = noted || note.find("NCCL 2.30.7 from the `nccl-library` header") != std::string::npos;
  CHECK(noted);
  const NcclLog old_code =
      parse_nccl_log("# nccl-library=2708\n" + kHeader + row(1024, "10.5"), "o.txt");
  CHECK(old_code.tables.at(0).system.library_version == "NCCL 2.7.8"); // before 2.9: x1000
  const NcclLog dotted =
      parse_nccl_log("nccl-library: 2.21.5\n" + kHeader + row(1024, "10.5"), "d.txt");
  CHECK(dotted.tables.at(0).system.library_version == "NCCL 2.21.5");
}
