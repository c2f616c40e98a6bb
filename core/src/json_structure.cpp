#include "json_structure.hpp"

#include "ddlsim/core/input_error.hpp"

#include <unordered_map>
#include <vector>

namespace ddlsim::detail {

namespace {

struct Frame {
  bool object = false;
  std::unordered_map<std::string_view, TextPosition> keys; // objects only
};

class Scanner {
public:
  explicit Scanner(std::string_view text) : text_(text) {}

  bool done() const { return i_ >= text_.size(); }
  char peek(std::size_t ahead = 0) const {
    return i_ + ahead < text_.size() ? text_[i_ + ahead] : '\0';
  }
  const TextPosition& position() const { return position_; }
  void advance() {
    if (text_[i_] == '\n') {
      ++position_.line;
      position_.column = 1;
    } else {
      ++position_.column;
    }
    ++i_;
  }
  // Skips a comment starting here ("//" to the end of the line, "/*" to "*/"); false if none.
  bool skip_comment() {
    if (peek() != '/' || (peek(1) != '/' && peek(1) != '*')) return false;
    const bool line = peek(1) == '/';
    advance();
    advance();
    while (!done()) {
      if (line && peek() == '\n') return true;
      if (!line && peek() == '*' && peek(1) == '/') {
        advance();
        advance();
        return true;
      }
      advance();
    }
    return true;
  }
  // Reads a string starting at its opening quote; returns its raw contents.
  std::string_view read_string() {
    advance(); // "
    const std::size_t begin = i_;
    while (!done() && peek() != '"') {
      if (peek() == '\\' && i_ + 1 < text_.size()) advance();
      advance();
    }
    const std::string_view contents = text_.substr(begin, i_ - begin);
    if (!done()) advance(); // closing "
    return contents;
  }

private:
  std::string_view text_;
  std::size_t i_ = 0;
  TextPosition position_;
};

} // namespace

std::optional<DuplicateKey> scan_json_structure(std::string_view text, const std::string& origin) {
  Scanner scan(text);
  std::vector<Frame> stack;
  std::optional<DuplicateKey> duplicate;
  // The last string token and where it began: a key when a ':' follows it.
  std::optional<std::string_view> string;
  TextPosition string_at;
  while (!scan.done()) {
    const char c = scan.peek();
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || scan.skip_comment()) {
      if (!scan.done() && (c == ' ' || c == '\t' || c == '\r' || c == '\n')) scan.advance();
      continue;
    }
    if (c == '"') {
      string_at = scan.position();
      string = scan.read_string();
      continue;
    }
    if (c == ':' && string && !stack.empty() && stack.back().object && !duplicate) {
      auto [it, inserted] = stack.back().keys.emplace(*string, string_at);
      if (!inserted) duplicate = DuplicateKey{std::string(*string), it->second, string_at};
    }
    string.reset();
    if (c == '{' || c == '[') {
      if (stack.size() >= kMaxJsonDepth)
        throw InputError(origin + ":" + scan.position().describe(),
                         "JSON nested deeper than " + std::to_string(kMaxJsonDepth) +
                             " levels; no ddlsim input nests this deep: is it the right file?");
      stack.push_back(Frame{c == '{', {}});
    } else if ((c == '}' || c == ']') && !stack.empty()) {
      stack.pop_back();
    }
    scan.advance();
  }
  return duplicate;
}

} // namespace ddlsim::detail
