#include "ddlsim/planning/setting_labels.hpp"

namespace ddlsim::plan {
namespace {

// Every leaf of `value` (a non-object, or an empty object) by its JSON pointer below `at`.
void collect_leaves(const Json& value, const std::string& at, std::map<std::string, Json>& out) {
  if (value.is_object() && !value.empty()) {
    for (const auto& [key, member] : value.items()) collect_leaves(member, at + "/" + key, out);
    return;
  }
  out[at] = value;
}

std::string unquoted(const Json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

} // namespace

SettingLabels::SettingLabels(const std::vector<const PointResult*>& points) {
  std::map<std::string, std::vector<std::map<std::string, Json>>> by_axis;
  for (const PointResult* point : points)
    for (const auto& [pointer, value] : point->settings) {
      if (!value.is_object()) continue;
      collect_leaves(value, "", by_axis[pointer].emplace_back());
    }
  for (const auto& [pointer, all] : by_axis) {
    std::set<std::string> paths;
    for (const auto& leaves : all)
      for (const auto& entry : leaves) paths.insert(entry.first);
    for (const std::string& path : paths) {
      const Json* first = nullptr;
      bool differs = false;
      for (const auto& leaves : all) {
        const auto it = leaves.find(path);
        if (it == leaves.end() || (first && *first != it->second)) {
          differs = true;
          break;
        }
        first = &it->second;
      }
      if (differs) leaves_[pointer].insert(path);
    }
  }
}

std::vector<std::pair<std::string, Json>> SettingLabels::differing(const std::string& pointer,
                                                                   const Json& value) const {
  std::vector<std::pair<std::string, Json>> out;
  const auto axis = leaves_.find(pointer);
  if (!value.is_object() || axis == leaves_.end()) return out;
  std::map<std::string, Json> leaves;
  collect_leaves(value, "", leaves);
  for (const std::string& path : axis->second)
    if (const auto it = leaves.find(path); it != leaves.end()) out.emplace_back(path, it->second);
  return out;
}

std::string SettingLabels::label(const std::string& pointer, const Json& value) const {
  const auto leaves = differing(pointer, value);
  if (leaves.empty()) return pointer + "=" + value.dump();
  std::string text;
  for (const auto& [path, leaf] : leaves)
    text += (text.empty() ? "" : ", ") + pointer + path + "=" + leaf.dump();
  return text;
}

std::string SettingLabels::cell(const std::string& pointer, const Json& value) const {
  const auto leaves = differing(pointer, value);
  if (leaves.empty()) return unquoted(value);
  std::string text;
  for (const auto& [path, leaf] : leaves)
    text += (text.empty() ? "" : " ") + path.substr(1) + "=" + unquoted(leaf);
  return text;
}

std::string SettingLabels::describe(const PointResult& point) const {
  std::string text;
  for (const auto& [pointer, value] : point.settings)
    text += (text.empty() ? "" : ", ") + label(pointer, value);
  return text.empty() ? "the scenario as given" : text;
}

} // namespace ddlsim::plan
