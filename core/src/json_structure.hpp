// What nlohmann::json's parser does not check in a JSON text: nesting depth (a deep enough
// text makes the recursive destructor and every recursive walk of the value overflow the stack)
// and duplicate keys in one object (the parser keeps the last silently).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace ddlsim::detail {

// Deeper than any real input (scenarios nest ~6 levels, Chrome traces ~5); shallow enough that
// every recursive walk of a parsed value is safe on a default 8 MiB stack.
inline constexpr std::size_t kMaxJsonDepth = 256;

struct TextPosition {
  std::size_t line = 1, column = 1;
  std::string describe() const { return std::to_string(line) + ":" + std::to_string(column); }
};

struct DuplicateKey {
  std::string key; // as written, escapes not decoded
  TextPosition first, second;
};

// Scans `text` (JSON with // and /* */ comments, as parse_json_text accepts) once. Throws
// InputError at `origin`:line:column as soon as arrays/objects nest deeper than kMaxJsonDepth.
// Returns the first key written twice in one object, if any. Tolerates invalid syntax (the parser
// reports that), so call it before parsing and act on the duplicate only once the parse succeeded.
std::optional<DuplicateKey> scan_json_structure(std::string_view text, const std::string& origin);

} // namespace ddlsim::detail
