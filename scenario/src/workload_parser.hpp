// Parsing of the "workload" and "engine" sections (private to the scenario library).
#pragma once

#include "ddlsim/scenario/scenario.hpp"

namespace ddlsim::detail {

WorkloadSpec parse_workload(const JsonValue& section);
EngineSpec parse_engine(const JsonValue& section);
std::vector<std::uint64_t> parse_sizes(const JsonValue& sizes);

} // namespace ddlsim::detail
