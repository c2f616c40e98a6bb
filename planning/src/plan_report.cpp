#include "ddlsim/planning/plan_report.hpp"

#include "ddlsim/core/units.hpp"
#include "ddlsim/planning/setting_labels.hpp"

#include <algorithm>
#include <cstdio>
#include <iomanip>
#include <sstream>

namespace ddlsim::plan {
namespace {

// A setting as a table cell: strings without quotes, everything else as JSON.
std::string cell(const Json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

// The table keeps long settings to one readable width (an object by the fields that set it apart
// from the other points' objects); CSV and JSON keep all.
std::string table_cell(const SettingLabels& labels, const std::string& pointer, const Json& value) {
  constexpr std::size_t kWidth = 40;
  std::string text = labels.cell(pointer, value);
  return text.size() <= kWidth ? text : text.substr(0, kWidth - 3) + "...";
}

SettingLabels labels_of(const Plan& plan) {
  std::vector<const PointResult*> points;
  for (const PlanRow& row : plan.rows) points.push_back(&row.point);
  return SettingLabels(points);
}

std::string csv_field(std::string text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::vector<std::string> axis_names(const Plan& plan) {
  std::vector<std::string> names;
  if (!plan.rows.empty())
    for (const auto& [pointer, value] : plan.rows.front().point.settings) names.push_back(pointer);
  return names;
}

} // namespace

// The last segment of a JSON pointer names an axis in a table header; the legend gives the rest.
std::string short_name(const std::string& pointer) {
  const auto slash = pointer.find_last_of('/');
  return slash == std::string::npos ? pointer : pointer.substr(slash + 1);
}

// Costs span orders of magnitude (one all-reduce vs a month of training): 4 significant digits.
void print_plan(const Plan& plan, std::ostream& out) {
  const std::vector<std::string> axes = axis_names(plan);
  const SettingLabels labels = labels_of(plan);
  out << "# plan: " << plan.rows.size() << " points, ranked; time = " << plan.time_axis
      << "; * = on the time-vs-" << plan.cost_unit << " Pareto front\n";
  std::vector<std::size_t> widths;
  for (std::size_t a = 0; a < axes.size(); ++a) {
    out << "# axis " << short_name(axes[a]) << " = " << axes[a] << "\n";
    std::size_t width = short_name(axes[a]).size();
    for (const PlanRow& row : plan.rows)
      width = std::max(width, table_cell(labels, axes[a], row.point.settings.at(a).second).size());
    widths.push_back(width);
  }
  out << "#" << std::setw(4) << "rank";
  for (std::size_t a = 0; a < axes.size(); ++a)
    out << "  " << std::setw(int(widths[a])) << short_name(axes[a]);
  out << std::setw(7) << "GPUs" << std::setw(12) << "time (s)" << std::setw(12) << "samples/s"
      << std::setw(7) << "eff" << std::setw(12) << plan.cost_unit;
  if (plan.has_energy) out << std::setw(12) << "energy(kWh)";
  out << "  front  goals\n";
  for (std::size_t i = 0; i < plan.rows.size(); ++i) {
    const PlanRow& row = plan.rows[i];
    const PointMetrics& m = row.point.metrics;
    out << std::setw(5) << (i + 1);
    for (std::size_t a = 0; a < axes.size(); ++a)
      out << "  " << std::setw(int(widths[a]))
          << table_cell(labels, axes[a], row.point.settings.at(a).second);
    if (!row.point.ok()) {
      out << "  failed: " << row.point.error << "\n";
      continue;
    }
    out << std::setw(7) << m.gpus << std::setw(12) << format_significant(row.time_seconds)
        << std::setw(12) << (m.samples_per_second > 0 ? format_fixed(m.samples_per_second, 1) : "-")
        << std::setw(7) << (m.scaling_efficiency >= 0 ? format_fixed(m.scaling_efficiency, 3) : "-")
        << std::setw(12) << format_significant(row.cost);
    if (plan.has_energy) out << std::setw(12) << format_significant(row.energy_kwh);
    out << (row.on_front ? "    *    " : "         ");
    if (row.unmet.empty()) {
      out << "met";
    } else {
      for (std::size_t u = 0; u < row.unmet.size(); ++u) out << (u ? "; " : "") << row.unmet[u];
    }
    out << "\n";
  }
  out << "# recommendation: " << plan.reason << "\n";
}

void write_csv(const Plan& plan, std::ostream& out) {
  out << "rank,index";
  for (const std::string& axis : axis_names(plan)) out << "," << csv_field(axis);
  out << ",gpus,nodes,iteration_seconds,samples_per_second,scaling_efficiency,train_seconds,"
         "time_seconds,"
      << csv_field(plan.cost_unit) << (plan.has_energy ? ",energy_kwh" : "")
      << ",on_front,feasible,unmet,error\n";
  for (std::size_t i = 0; i < plan.rows.size(); ++i) {
    const PlanRow& row = plan.rows[i];
    const PointMetrics& m = row.point.metrics;
    out << (i + 1) << "," << row.point.index;
    for (const auto& [pointer, value] : row.point.settings) out << "," << csv_field(cell(value));
    std::string unmet;
    for (const std::string& u : row.unmet) unmet += (unmet.empty() ? "" : "; ") + u;
    out << "," << m.gpus << "," << m.nodes << "," << format_fixed(m.iteration_seconds, 9) << ","
        << format_fixed(m.samples_per_second, 3) << "," << format_fixed(m.scaling_efficiency, 6)
        << "," << format_fixed(m.train_seconds, 6) << "," << format_fixed(row.time_seconds, 9)
        << "," << format_fixed(row.cost, 6)
        << (plan.has_energy ? "," + format_fixed(row.energy_kwh, 6) : std::string()) << ","
        << (row.on_front ? 1 : 0) << "," << (row.feasible() ? 1 : 0) << "," << csv_field(unmet)
        << "," << csv_field(row.point.error) << "\n";
  }
}

Json to_json(const Plan& plan) {
  Json rows = Json::array();
  for (const PlanRow& row : plan.rows) {
    Json j = to_json(row.point);
    j["time_seconds"] = row.time_seconds;
    j[plan.cost_unit == "cost" ? "cost" : "gpu_hours"] = row.cost;
    if (plan.has_energy) j["energy_kwh"] = row.energy_kwh;
    j["on_front"] = row.on_front;
    j["feasible"] = row.feasible();
    j["unmet"] = row.unmet;
    rows.push_back(std::move(j));
  }
  Json j = {{"time_axis", plan.time_axis},
            {"cost_unit", plan.cost_unit},
            {"ranked", std::move(rows)},
            {"reason", plan.reason}};
  j["recommended"] = plan.recommended ? Json(plan.rows[*plan.recommended].point.index) : Json();
  return j;
}

} // namespace ddlsim::plan
