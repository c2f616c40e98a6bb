// The node preset files compiled into the library (generated from topologies/presets/*.json by
// cmake/embed_json.cmake), so that a preset is found by name from any directory.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ddlsim::topo::detail {

std::optional<std::string_view> bundled_node_preset_text(std::string_view name);
std::vector<std::string> bundled_node_preset_names(); // sorted

} // namespace ddlsim::topo::detail
