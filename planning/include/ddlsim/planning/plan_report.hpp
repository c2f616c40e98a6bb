// A plan as people read it (ranked table, front, recommendation) and as tools read it (CSV, JSON).
#pragma once

#include "ddlsim/planning/plan.hpp"

#include <ostream>

namespace ddlsim::plan {

void print_plan(const Plan& plan, std::ostream& out);
// One row per point in ranked order; the sweep's JSON pointers are column names.
void write_csv(const Plan& plan, std::ostream& out);
Json to_json(const Plan& plan);

} // namespace ddlsim::plan
