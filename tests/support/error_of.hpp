// The message of an input error, shared by every test suite.
#pragma once

#include "ddlsim/core/input_error.hpp"

#include <functional>
#include <string>

namespace ddlsim::test_support {

// The message of the InputError `f` throws, or "no error".
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

} // namespace ddlsim::test_support
