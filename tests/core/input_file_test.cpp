// Bounded input: every file ddlsim reads is a regular file under a size limit, and JSON text is
// checked for nesting depth and duplicate keys (issue "hostile input").
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/core/input_file.hpp"
#include "ddlsim/core/json_reader.hpp"
#include "error_of.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

using namespace ddlsim;
using Catch::Matchers::Contains;
using ddlsim::test_support::error_of;

namespace {

std::filesystem::path temp_file(const std::string& name, const std::string& contents) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() /
      ("ddlsim_input_file_test_" + std::to_string(::getpid()) + "_" + name);
  std::ofstream(path, std::ios::binary) << contents;
  return path;
}

} // namespace

TEST_CASE("a regular file under the limit is read whole") {
  const auto path = temp_file("ok.json", R"({"a": [1, 2, 3]})");
  CHECK(read_input_file(path, "a test file", 1024) == R"({"a": [1, 2, 3]})");
  CHECK(parse_json_file(path, "a test file").at("a").size() == 3);
  std::filesystem::remove(path);
}

TEST_CASE("a file above its limit is refused with its size and the limit, before reading") {
  const auto path = temp_file("big.log", std::string(3000, 'x'));
  const std::string message = error_of([&] { read_input_file(path, "an nccl-tests log", 2048); });
  CHECK_THAT(message, Contains(path.string()));
  CHECK_THAT(message, Contains("2.93 KiB"));
  CHECK_THAT(message, Contains("limit of 2 KiB for an nccl-tests log"));
  std::filesystem::remove(path);
}

TEST_CASE("devices, FIFOs, directories and missing files are refused, not read") {
  CHECK_THAT(error_of([] { read_input_file("/dev/zero", "a scenario", kMaxJsonInputBytes); }),
             Contains("not a regular file"));
  CHECK_THAT(error_of([] { read_input_file("/tmp", "a scenario", kMaxJsonInputBytes); }),
             Contains("is a directory"));
  CHECK_THAT(error_of([] { read_input_file("/no/such/file.json", "a scenario", 1); }),
             Contains("does not exist"));
  const std::filesystem::path fifo = std::filesystem::temp_directory_path() /
                                     ("ddlsim_input_file_test_fifo_" + std::to_string(::getpid()));
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_THAT(error_of([&] { parse_json_file(fifo, "a scenario"); }),
             Contains("not a regular file"));
  std::filesystem::remove(fifo);
}

TEST_CASE("JSON nested deeper than the limit is an error at its line and column, not a crash") {
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  const std::string message = error_of([&] { parse_json_text(deep, "deep.json"); });
  CHECK_THAT(message, Contains("deep.json:1:257"));
  CHECK_THAT(message, Contains("nested deeper than 256 levels"));
  // Exactly at the limit still parses.
  const std::string ok = std::string(256, '[') + std::string(256, ']');
  CHECK_NOTHROW(parse_json_text(ok, "ok.json"));
  // Brackets inside strings and comments do not count.
  CHECK_NOTHROW(parse_json_text("{\"a\": \"" + std::string(1000, '[') + "\" // " +
                                    std::string(1000, '{') + "\n}",
                                "strings.json"));
}

TEST_CASE("a key written twice in one object is an error naming both places") {
  const std::string text = "{\n  \"seed\": 1,\n  \"w\": {\"seed\": 3},\n  \"seed\": 2\n}";
  const std::string message = error_of([&] { parse_json_text(text, "dup.json"); });
  CHECK_THAT(message, Contains("dup.json:4:3"));
  CHECK_THAT(message, Contains("duplicate key \"seed\" (first at line 2:3)"));
  // The same key in different objects, or as a value, is fine.
  CHECK_NOTHROW(parse_json_text(R"({"a": {"x": 1}, "b": {"x": "a"}, "c": ["a", "a"]})", "ok"));
  // A syntax error is reported as such even when a key repeats.
  CHECK_THAT(error_of([] { parse_json_text(R"({"a": 1, "a": })", "bad.json"); }),
             Contains("invalid JSON"));
}
