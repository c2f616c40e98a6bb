// Short labels for a plan's settings. A sweep axis may set a whole object (scenarios/papers/
// gradientflow-alexnet.json sweeps two complete /workload objects); printed whole, one point's
// setting is a line of JSON that hides the two or three fields that set it apart. A label names
// only the leaves (JSON pointers below the axis) whose values differ between the points.
#pragma once

#include "ddlsim/planning/point_result.hpp"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace ddlsim::plan {

class SettingLabels {
public:
  // Learns, for every object-valued axis of `points`, the leaves that differ between them.
  explicit SettingLabels(const std::vector<const PointResult*>& points);

  // "pointer=value", or for an object value "pointer/leaf=value, ..." over its differing leaves
  // (the whole object when none differs).
  std::string label(const std::string& pointer, const Json& value) const;
  // The value alone as a table cell: strings unquoted; an object as "leaf=value ...".
  std::string cell(const std::string& pointer, const Json& value) const;
  // Every setting of `point`, comma-separated ("the scenario as given" without settings).
  std::string describe(const PointResult& point) const;

private:
  std::vector<std::pair<std::string, Json>> differing(const std::string& pointer,
                                                      const Json& value) const;
  std::map<std::string, std::set<std::string>> leaves_; // by axis pointer
};

} // namespace ddlsim::plan
