#include "ddlsim/core/json_reader.hpp"

#include "ddlsim/core/input_error.hpp"
#include "ddlsim/core/input_file.hpp"
#include "ddlsim/core/suggest.hpp"
#include "ddlsim/core/units.hpp"
#include "json_structure.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

namespace ddlsim {

std::string describe_json(const Json& value) {
  switch (value.type()) {
  case Json::value_t::null:
    return "null";
  case Json::value_t::object:
    return "an object";
  case Json::value_t::array:
    return "an array of " + std::to_string(value.size());
  case Json::value_t::string: {
    std::string s = value.get<std::string>();
    if (s.size() > 40) s = s.substr(0, 37) + "...";
    return Json(s).dump();
  }
  case Json::value_t::boolean:
    return value.get<bool>() ? "true" : "false";
  default:
    return value.dump();
  }
}

std::string json_pointer_token(std::string_view key) {
  std::string out;
  for (char c : key) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

void JsonValue::fail_expected(std::string_view expected) const {
  throw InputError(path_,
                   "expected " + std::string(expected) + ", found " + describe_json(*value_));
}

void JsonValue::fail(const std::string& reason) const {
  throw InputError(path_, reason);
}

namespace {

std::string format_number(double x) {
  std::ostringstream out;
  out << x;
  return out.str();
}

} // namespace

double JsonValue::number(double min, double max) const {
  const std::string expected = "a number from " + format_number(min) + " to " + format_number(max);
  if (!value_->is_number()) fail_expected(expected);
  const double x = value_->get<double>();
  if (!std::isfinite(x) || x < min || x > max) fail_expected(expected);
  return x;
}

double JsonValue::positive_number(double max) const {
  const std::string expected = "a number greater than 0 and at most " + format_number(max);
  if (!value_->is_number()) fail_expected(expected);
  const double x = value_->get<double>();
  if (!std::isfinite(x) || x <= 0 || x > max) fail_expected(expected);
  return x;
}

std::int64_t JsonValue::integer(std::int64_t min, std::int64_t max) const {
  const std::string expected =
      "an integer from " + std::to_string(min) + " to " + std::to_string(max);
  if (value_->is_number_integer()) {
    // Unsigned values above int64 max would wrap; read them as such and reject.
    if (value_->is_number_unsigned() &&
        value_->get<std::uint64_t>() > static_cast<std::uint64_t>(max))
      fail_expected(expected);
    const std::int64_t x = value_->get<std::int64_t>();
    if (x < min || x > max) fail_expected(expected);
    return x;
  }
  if (value_->is_number_float()) {
    const double x = value_->get<double>();
    if (std::isfinite(x) && x == std::floor(x) && x >= static_cast<double>(min) &&
        x <= static_cast<double>(max))
      return static_cast<std::int64_t>(x);
  }
  fail_expected(expected);
}

bool JsonValue::boolean() const {
  if (!value_->is_boolean()) fail_expected("true or false");
  return value_->get<bool>();
}

std::string JsonValue::string() const {
  if (!value_->is_string()) fail_expected("a string");
  return value_->get<std::string>();
}

std::string JsonValue::non_empty_string() const {
  if (!value_->is_string() || value_->get_ref<const std::string&>().empty())
    fail_expected("a non-empty string");
  return value_->get<std::string>();
}

std::string JsonValue::choice(std::span<const std::string> choices) const {
  const std::string expected = "one of " + join_choices(choices);
  if (!value_->is_string()) fail_expected(expected);
  const std::string& s = value_->get_ref<const std::string&>();
  if (std::find(choices.begin(), choices.end(), s) != choices.end()) return s;
  throw InputError(path_, "unknown value " + describe_json(*value_) + did_you_mean(s, choices) +
                              "; expected " + join_choices(choices));
}

std::uint64_t JsonValue::bytes(std::uint64_t min, std::uint64_t max) const {
  const std::string expected = "a byte size from " + format_bytes(min) + " to " +
                               format_bytes(max) + " (a number or a string such as \"256MiB\")";
  std::optional<std::uint64_t> bytes;
  if (value_->is_number_unsigned())
    bytes = value_->get<std::uint64_t>();
  else if (value_->is_number_integer() && value_->get<std::int64_t>() >= 0)
    bytes = static_cast<std::uint64_t>(value_->get<std::int64_t>());
  else if (value_->is_number_float()) {
    const double x = value_->get<double>();
    if (std::isfinite(x) && x >= 0 && x < 9.2e18 && x == std::floor(x))
      bytes = static_cast<std::uint64_t>(x);
  } else if (value_->is_string())
    bytes = parse_byte_size(value_->get_ref<const std::string&>());
  if (!bytes || *bytes < min || *bytes > max) fail_expected(expected);
  return *bytes;
}

JsonObject JsonValue::object() const {
  return JsonObject(*value_, path_);
}

std::vector<JsonValue> JsonValue::array(std::size_t min_size, std::size_t max_size) const {
  const std::string expected =
      "an array of " + std::to_string(min_size) + " to " + std::to_string(max_size) + " elements";
  if (!value_->is_array() || value_->size() < min_size || value_->size() > max_size)
    fail_expected(expected);
  std::vector<JsonValue> elements;
  elements.reserve(value_->size());
  for (std::size_t i = 0; i < value_->size(); ++i)
    elements.emplace_back((*value_)[i], path_ + "/" + std::to_string(i));
  return elements;
}

JsonObject::JsonObject(const Json& value, std::string path)
    : value_(&value), path_(std::move(path)) {
  if (!value.is_object())
    throw InputError(path_.empty() ? "/" : path_,
                     "expected an object, found " + describe_json(value));
}

std::string JsonObject::child_path(std::string_view key) const {
  return path_ + "/" + json_pointer_token(key);
}

void JsonObject::know(std::string_view key) {
  if (std::find(known_.begin(), known_.end(), key) == known_.end()) known_.emplace_back(key);
}

bool JsonObject::has(std::string_view key) {
  know(key);
  return value_->contains(key);
}

std::optional<JsonValue> JsonObject::optional(std::string_view key) {
  know(key);
  auto it = value_->find(key);
  if (it == value_->end()) return std::nullopt;
  return JsonValue(*it, child_path(key));
}

JsonValue JsonObject::required(std::string_view key) {
  if (auto value = optional(key)) return *value;
  // A misspelt required key is the usual cause: name the written key it resembles.
  std::vector<std::string> present;
  for (const auto& item : value_->items())
    if (std::find(known_.begin(), known_.end(), item.key()) == known_.end())
      present.push_back(item.key());
  std::string hint;
  if (const std::string near = nearest_match(key, present); !near.empty())
    hint = " (found \"" + near + "\": a misspelling?)";
  throw InputError(path_.empty() ? "/" : path_,
                   "missing required key \"" + std::string(key) + "\"" + hint);
}

void JsonObject::allow(std::initializer_list<std::string_view> keys) {
  for (std::string_view key : keys) know(key);
}

void JsonObject::finish() const {
  for (const auto& [key, value] : value_->items()) {
    if (std::find(known_.begin(), known_.end(), key) != known_.end()) continue;
    std::vector<std::string> sorted = known_;
    std::sort(sorted.begin(), sorted.end());
    throw InputError(child_path(key), "unknown key \"" + key + "\"" + did_you_mean(key, known_) +
                                          "; valid keys here: " + join_choices(sorted));
  }
}

Json parse_json_text(std::string_view text, const std::string& origin) {
  const std::optional<detail::DuplicateKey> duplicate = detail::scan_json_structure(text, origin);
  try {
    Json json = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/true,
                            /*ignore_comments=*/true);
    if (duplicate)
      throw InputError(origin + ":" + duplicate->second.describe(),
                       "duplicate key \"" + duplicate->key + "\" (first at line " +
                           duplicate->first.describe() +
                           "); JSON keeps only one of them: remove or rename one");
    return json;
  } catch (const Json::parse_error& e) {
    // Turn nlohmann's byte offset into line:column, which editors understand.
    std::size_t line = 1, column = 1;
    const std::size_t end = std::min<std::size_t>(e.byte == 0 ? 0 : e.byte - 1, text.size());
    for (std::size_t i = 0; i < end; ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    std::string detail = e.what();
    // Keep only the human part after nlohmann's "[json.exception.parse_error.101] " prefix.
    if (auto pos = detail.find("] "); pos != std::string::npos) detail = detail.substr(pos + 2);
    throw InputError(origin + ":" + std::to_string(line) + ":" + std::to_string(column),
                     "invalid JSON: " + detail);
  } catch (const Json::exception& e) {
    // Not a syntax error but still unreadable, e.g. a number too large for a double
    // (out_of_range 406). Found by the fuzzer.
    std::string detail = e.what();
    if (auto pos = detail.find("] "); pos != std::string::npos) detail = detail.substr(pos + 2);
    throw InputError(origin, "invalid JSON: " + detail);
  }
}

Json parse_json_file(const std::filesystem::path& file, std::string_view what,
                     std::uintmax_t max_bytes) {
  return parse_json_text(read_input_file(file, what, max_bytes), file.string());
}

} // namespace ddlsim
