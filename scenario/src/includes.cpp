// `include`: a scenario may start from a bundled preset or another file and override fields.
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/core/suggest.hpp"
#include "ddlsim/scenario/presets.hpp"
#include "ddlsim/scenario/scenario.hpp"

namespace ddlsim {
namespace {

Json resolve(const Json& json, const std::string& origin, const std::filesystem::path& base_dir,
             int depth) {
  if (!json.is_object() || !json.contains("include")) return json;
  const JsonValue include(json.at("include"), "/include");
  const std::string target = include.non_empty_string();
  if (depth >= kMaxIncludeDepth)
    throw InputError(origin + ": /include", "includes nested more than " +
                                                std::to_string(kMaxIncludeDepth) +
                                                " deep (is there a cycle?) at \"" + target + "\"");

  Json base;
  std::filesystem::path next_base_dir = base_dir;
  std::string next_origin;
  if (auto preset = find_scenario_preset(target)) {
    next_origin = "preset " + target;
    base = parse_json_text(*preset, next_origin);
  } else {
    const std::filesystem::path file = base_dir / target;
    if (!std::filesystem::exists(file)) {
      const std::vector<std::string> names = scenario_preset_names();
      throw InputError(origin + ": /include", "\"" + target + "\" is neither a bundled preset" +
                                                  did_you_mean(target, names) +
                                                  " nor a file (looked for " + file.string() +
                                                  "); bundled presets: " + join_choices(names));
    }
    next_origin = file.string();
    next_base_dir = file.parent_path();
    base = parse_json_file(file, "an included scenario");
  }
  base = resolve(base, next_origin, next_base_dir, depth + 1);
  if (!base.is_object())
    throw InputError(next_origin,
                     "an included scenario must be a JSON object, found " + describe_json(base));
  Json overrides = json;
  overrides.erase("include");
  base.merge_patch(overrides);
  return base;
}

} // namespace

Json resolve_includes(const Json& json, const std::string& origin,
                      const std::filesystem::path& base_dir) {
  return resolve(json, origin, base_dir, 0);
}

} // namespace ddlsim
