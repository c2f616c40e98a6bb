// Node presets: the servers people buy and rent, with the sources of their numbers in
// presets.cpp.
#pragma once

#include "ddlsim/topologies/cluster_spec.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ddlsim::topo {

// The preset with this name, or nullopt.
std::optional<NodeSpec> find_node_preset(std::string_view name);
// All preset names, sorted.
std::vector<std::string> node_preset_names();

} // namespace ddlsim::topo
