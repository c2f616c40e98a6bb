// Node presets: the servers people buy and rent, as data (topologies/presets/*.json, compiled
// in), each figure with its source.
#pragma once

#include "ddlsim/topologies/cluster_spec.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ddlsim::topo {

// The preset with this name, or nullopt.
std::optional<NodeSpec> find_node_preset(std::string_view name);
// Parses the text of a node preset file named `name` (topologies/presets/ has the format):
// "name" (the file's name), "description", "node" (a node group's keys, all the ones a group
// without a preset must give), "sources" (one non-empty string per key of "node"). Throws
// InputError naming the file and key.
NodeSpec parse_node_preset(std::string_view name, std::string_view text);
// All preset names, sorted.
std::vector<std::string> node_preset_names();

} // namespace ddlsim::topo
