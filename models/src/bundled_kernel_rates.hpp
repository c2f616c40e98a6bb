// The measured kernel-rate tables compiled into the library (generated from
// models/kernel-rates/*.tsv by cmake/embed_json.cmake).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ddlsim::models::detail {

std::optional<std::string_view> bundled_kernel_rates_text(std::string_view name);
std::vector<std::string> bundled_kernel_rates_names();

} // namespace ddlsim::models::detail
