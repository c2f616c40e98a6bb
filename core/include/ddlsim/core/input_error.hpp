// InputError: the one exception type for bad user input (scenario files, flags, logs).
//
// Its message always names where the problem is (a JSON pointer such as
// "/topology/fabric/spines", or a file and line) and what would fix it. The CLI prints it and
// exits with status 2; anything else that escapes is a bug.
#pragma once

#include <stdexcept>
#include <string>

namespace ddlsim {

class InputError : public std::runtime_error {
public:
  // `where` is a JSON pointer or "file:line"; `what` says what was expected and found.
  InputError(std::string where, const std::string& what)
      : std::runtime_error(where.empty() ? what : where + ": " + what), where_(std::move(where)),
        reason_(what) {}

  const std::string& where() const { return where_; }
  const std::string& reason() const { return reason_; }

private:
  std::string where_;
  std::string reason_;
};

} // namespace ddlsim
