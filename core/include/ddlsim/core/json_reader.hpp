// Strict, path-aware reading of JSON input.
//
// Every scenario section is parsed through JsonObject / JsonValue so that each error names the
// JSON pointer of the offending value, what was expected and what was found, and so that unknown
// keys are errors with a "did you mean" suggestion. Typical use:
//
//   JsonObject fabric = root.required("fabric").object();
//   int spines = fabric.required("spines").integer(1, 4096);
//   double gbps = fabric.optional("bandwidth_gbps").value_or_number(100, 0, 1.6e6) ...
//   fabric.finish();  // throws on keys nobody asked for
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ddlsim {

using Json = nlohmann::json;

class JsonObject;

// One JSON value and the pointer to it. Accessors validate type and range and throw InputError.
class JsonValue {
public:
  JsonValue(const Json& value, std::string path) : value_(&value), path_(std::move(path)) {}

  const Json& raw() const { return *value_; }
  const std::string& path() const { return path_; }

  // Throws InputError at this value's path: "expected <expected>, found <this value>".
  [[noreturn]] void fail_expected(std::string_view expected) const;
  // Throws InputError at this value's path with a free-form reason.
  [[noreturn]] void fail(const std::string& reason) const;

  double number(double min, double max) const; // finite, in [min, max]
  double positive_number(double max) const;    // finite, in (0, max]
  std::int64_t integer(std::int64_t min, std::int64_t max) const;
  bool boolean() const;
  std::string string() const; // any string, possibly empty
  std::string non_empty_string() const;
  // One of `choices`; a near miss is reported with "did you mean".
  std::string choice(std::span<const std::string> choices) const;
  // A byte count: a non-negative integer or a string such as "256MiB", in [min, max].
  std::uint64_t bytes(std::uint64_t min, std::uint64_t max) const;
  JsonObject object() const;
  // The elements of an array with [min_size, max_size] elements, each with its own path.
  std::vector<JsonValue> array(std::size_t min_size, std::size_t max_size) const;

private:
  const Json* value_;
  std::string path_;
};

// A JSON object whose keys must all be consumed: finish() rejects the ones nobody read.
class JsonObject {
public:
  // Throws InputError unless `value` is an object.
  JsonObject(const Json& value, std::string path);

  const std::string& path() const { return path_; }
  std::string child_path(std::string_view key) const;

  bool has(std::string_view key); // also marks the key as known
  std::optional<JsonValue> optional(std::string_view key);
  JsonValue required(std::string_view key);
  // Marks keys as valid without reading them (e.g. handled elsewhere).
  void allow(std::initializer_list<std::string_view> keys);

  // Throws InputError for the first unknown key, suggesting the nearest known one.
  void finish() const;

private:
  void know(std::string_view key);

  const Json* value_;
  std::string path_;
  std::vector<std::string> known_;
};

// A short description of a value for messages: 42, "fast", an object, an array of 3, null.
std::string describe_json(const Json& value);

// Escapes a key for use in a JSON pointer (RFC 6901: "~" -> "~0", "/" -> "~1").
std::string json_pointer_token(std::string_view key);

// Parses JSON text (// and /* */ comments and a UTF-8 byte-order mark allowed); syntax errors,
// a key written twice in one object and nesting deeper than 256 levels become InputError naming
// `origin`, line and column.
Json parse_json_text(std::string_view text, const std::string& origin);
// Reads (read_input_file: a regular file of at most `max_bytes`) and parses a file; a missing,
// unreadable or oversized file is an InputError too. `what` names the kind of file for messages.
Json parse_json_file(const std::filesystem::path& file, std::string_view what = "a JSON file",
                     std::uintmax_t max_bytes = std::uintmax_t{64} << 20);

} // namespace ddlsim
