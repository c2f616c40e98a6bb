// Scenario presets bundled into the binary (scenarios/presets/*.json), so that `include` by name
// works wherever ddlsim is run from.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ddlsim {

// The JSON text of the bundled scenario preset `name`, or nullopt.
std::optional<std::string_view> find_scenario_preset(std::string_view name);
std::vector<std::string> scenario_preset_names();

} // namespace ddlsim
