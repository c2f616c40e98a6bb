// Reader of `ddlsim real --json` reports (and `ddlsim run --json`, the same format: sim/report.hpp
// to_json, plus "backend", "machine" and per-step "timelines" for real runs) into a MeasuredSet.
#pragma once

#include "ddlsim/calibrate/measurement.hpp"
#include "ddlsim/core/json_reader.hpp"

#include <filesystem>
#include <string>

namespace ddlsim::calib {

// Reads "op", "ranks" and "results" rows ("bytes", "type", "redop", "algorithm", and "time_ps"
// or "time_us"). Other keys of the report (seed, timelines, backend details) are left alone:
// a report is tool output whose extra fields are not ours to police. Missing or malformed
// required fields are InputErrors naming the file and JSON pointer.
MeasuredSet read_real_report(const Json& report, const std::string& source);
MeasuredSet read_real_report_file(const std::filesystem::path& file);

} // namespace ddlsim::calib
