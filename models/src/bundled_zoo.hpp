// The zoo files compiled into the library (generated from models/zoo/*.json by
// cmake/embed_json.cmake), so that a model is found by name from any directory.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ddlsim::models::detail {

std::optional<std::string_view> bundled_model_text(std::string_view name);
std::vector<std::string> bundled_model_names();

} // namespace ddlsim::models::detail
