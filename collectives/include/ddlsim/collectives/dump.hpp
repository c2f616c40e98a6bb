// The stable dump format of a Schedule: JSON (for tools and the real backends, which load it
// back) and text (for people: "what does a ring of 4 do?").
#pragma once

#include "ddlsim/collectives/schedule.hpp"
#include "ddlsim/core/json_reader.hpp"

#include <ostream>

namespace ddlsim::coll {

Json to_json(const MaterializedSchedule& schedule);
// Parses a dump written by to_json; errors name the JSON path. The result is validated.
MaterializedSchedule schedule_from_json(const JsonValue& dump);
// One line per step, grouped by rank and channel:
//   rank 0 ch 0 #3 recv_reduce from 3  input[256,512) -> output[256,512)  256 B  deps 1
void write_text(const MaterializedSchedule& schedule, std::ostream& out);

} // namespace ddlsim::coll
