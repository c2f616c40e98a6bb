#include "ddlsim/planning/point_result.hpp"

namespace ddlsim::plan {

Json to_json(const PointMetrics& m) {
  Json kinds = Json::array();
  for (const KindCount& k : m.kinds)
    kinds.push_back({{"kind", k.kind}, {"nodes", k.nodes}, {"gpus", k.gpus}});
  return {{"gpus", m.gpus},
          {"nodes", m.nodes},
          {"kinds", kinds},
          {"iteration_seconds", m.iteration_seconds},
          {"samples_per_second", m.samples_per_second},
          {"scaling_efficiency", m.scaling_efficiency},
          {"train_seconds", m.train_seconds},
          {"what", m.what}};
}

PointMetrics metrics_from_json(const Json& json) {
  JsonObject o(json, "metrics");
  PointMetrics m;
  m.gpus = int(o.required("gpus").integer(0, 1 << 24));
  m.nodes = int(o.required("nodes").integer(0, 1 << 24));
  for (const JsonValue& entry : o.required("kinds").array(0, 1 << 16)) {
    JsonObject k = entry.object();
    KindCount count;
    count.kind = k.required("kind").non_empty_string();
    count.nodes = int(k.required("nodes").integer(0, 1 << 24));
    count.gpus = int(k.required("gpus").integer(0, 1 << 24));
    k.finish();
    m.kinds.push_back(std::move(count));
  }
  m.iteration_seconds = o.required("iteration_seconds").number(0, 1e18);
  m.samples_per_second = o.required("samples_per_second").number(0, 1e18);
  m.scaling_efficiency = o.required("scaling_efficiency").number(-1, 1e3);
  m.train_seconds = o.required("train_seconds").number(0, 1e18);
  m.what = o.required("what").string();
  o.finish();
  return m;
}

Json to_json(const PointResult& r) {
  Json settings = Json::array();
  for (const auto& [pointer, value] : r.settings) settings.push_back({pointer, value});
  Json j = {{"index", r.index}, {"settings", settings}, {"metrics", to_json(r.metrics)}};
  if (!r.ok()) j["error"] = r.error;
  return j;
}

PointResult point_result_from_json(const Json& json, const std::string& where) {
  JsonObject o(json, where);
  PointResult r;
  r.index = std::size_t(o.required("index").integer(0, INT64_MAX));
  for (const JsonValue& setting : o.required("settings").array(0, 64)) {
    const auto pair = setting.array(2, 2);
    r.settings.emplace_back(pair[0].string(), pair[1].raw());
  }
  r.metrics = metrics_from_json(o.required("metrics").raw());
  if (auto v = o.optional("error")) r.error = v->string();
  o.finish();
  return r;
}

} // namespace ddlsim::plan
