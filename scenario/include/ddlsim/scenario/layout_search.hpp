// Loading a scenario for `ddlsim plan`'s large-model layout search.
#pragma once

#include "ddlsim/scenario/scenario.hpp"

namespace ddlsim {

// As load_scenario, except that an llm_training layout that does not fit in the GPUs' memory is
// not an error: the search tries each layout of its own and lists those that do not fit, so the
// layout written in the file need not fit. Every other check is the same.
Scenario load_scenario_for_layout_search(const Json& json, const std::string& origin,
                                         const std::filesystem::path& base_dir);

} // namespace ddlsim
