#include "ddlsim/models/measured_compute.hpp"
#include "ddlsim/core/input_file.hpp"

#include "ddlsim/core/input_error.hpp"
#include "ddlsim/core/suggest.hpp"

#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

namespace ddlsim::models {
namespace {

// Longest time a profile entry may claim: an hour per layer is a unit mistake, not a layer.
constexpr double kMaxMicroseconds = 3.6e9;

std::vector<std::string> layer_names(const Model& model) {
  std::vector<std::string> names;
  for (const Layer& layer : model.layers) names.push_back(layer.name);
  return names;
}

// The index of `name` among the model's layers, or an error with the nearest name.
std::size_t layer_index(const Model& model, std::string_view name, const std::string& where,
                        const std::string& context) {
  for (std::size_t l = 0; l < model.layers.size(); ++l)
    if (model.layers[l].name == name) return l;
  const std::vector<std::string> names = layer_names(model);
  throw InputError(where, context + ": model " + model.name + " has no layer \"" +
                              std::string(name) + "\"" + did_you_mean(name, names) +
                              "; name layers as the model file does (or \"optimizer\")");
}

Picoseconds from_us(double us) {
  return static_cast<Picoseconds>(std::llround(us * static_cast<double>(kPsPerUs)));
}

std::string trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return "";
  const auto last = text.find_last_not_of(" \t\r");
  return std::string(text.substr(first, last - first + 1));
}

std::vector<std::string> split_csv(std::string_view line) {
  std::vector<std::string> fields;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = line.find(',', start);
    fields.push_back(trim(line.substr(start, comma - start)));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return fields;
}

double parse_us(const std::string& field, const std::string& where, const std::string& context) {
  double value = 0;
  const char* end = field.data() + field.size();
  const auto [ptr, ec] = std::from_chars(field.data(), end, value);
  if (ec != std::errc() || ptr != end || !std::isfinite(value) || value < 0 ||
      value > kMaxMicroseconds)
    throw InputError(where, context + ": \"" + field +
                                "\" is not a time in microseconds (a number from 0 to 3.6e9)");
  return value;
}

// Per (layer, direction) sums and counts; the optimizer as layer -1.
struct Accumulator {
  std::map<std::pair<long, bool>, std::pair<double, int>> sums;
  void add(long layer, bool backward, double us) {
    auto& [sum, count] = sums[{layer, backward}];
    sum += us;
    ++count;
  }
  LayerProfile finish(const Model& model, std::string origin) const {
    LayerProfile profile;
    profile.origin = std::move(origin);
    profile.layers.assign(model.layers.size(), std::nullopt);
    for (const auto& [key, value] : sums) {
      const double mean = value.first / value.second;
      if (key.first < 0) {
        profile.optimizer = profile.optimizer.value_or(0) + from_us(mean);
        continue;
      }
      LayerTimes& times = profile.layers[std::size_t(key.first)].emplace(
          profile.layers[std::size_t(key.first)].value_or(LayerTimes{}));
      (key.second ? times.backward : times.forward) = from_us(mean);
    }
    return profile;
  }
};

} // namespace

std::string_view to_string(ComputeSource source) {
  switch (source) {
  case ComputeSource::roofline:
    return "roofline";
  case ComputeSource::measured_throughput:
    return "measured_throughput";
  case ComputeSource::layer_profile:
    return "layer_profile";
  }
  return "?";
}

int LayerProfile::measured_layers() const {
  int count = 0;
  for (const auto& layer : layers) count += layer.has_value();
  return count;
}

LayerProfile parse_layer_profile_csv(std::string_view text, const Model& model,
                                     const std::string& origin, const std::string& where) {
  Accumulator acc;
  bool header = false;
  int line_number = 0;
  std::istringstream lines{std::string(text)};
  for (std::string line; std::getline(lines, line);) {
    ++line_number;
    const std::string content = trim(line);
    if (content.empty() || content.front() == '#') continue;
    const std::string context = origin + ":" + std::to_string(line_number);
    const std::vector<std::string> fields = split_csv(content);
    if (!header) {
      if (fields != std::vector<std::string>{"layer", "forward_us", "backward_us"})
        throw InputError(where, context + ": expected the header \"layer,forward_us,backward_us\"");
      header = true;
      continue;
    }
    if (fields.size() != 3)
      throw InputError(where, context +
                                  ": expected 3 fields (layer, forward_us, backward_us), "
                                  "found " +
                                  std::to_string(fields.size()));
    const double forward = parse_us(fields[1], where, context);
    const double backward = parse_us(fields[2], where, context);
    if (fields[0] == "optimizer") {
      acc.add(-1, false, forward + backward);
      continue;
    }
    const auto l = static_cast<long>(layer_index(model, fields[0], where, context));
    if (acc.sums.count({l, false}))
      throw InputError(where, context + ": layer \"" + fields[0] + "\" is listed twice");
    acc.add(l, false, forward);
    acc.add(l, true, backward);
  }
  if (!header)
    throw InputError(where, origin + ": empty; expected \"layer,forward_us,backward_us\"");
  LayerProfile profile = acc.finish(model, origin);
  if (profile.measured_layers() == 0)
    throw InputError(where, origin + ": no layer rows after the header");
  return profile;
}

LayerProfile parse_layer_profile_trace(const Json& trace, const Model& model,
                                       const std::string& origin, const std::string& where) {
  const Json* events = &trace;
  if (trace.is_object() && trace.contains("traceEvents")) events = &trace["traceEvents"];
  if (!events->is_array())
    throw InputError(where, origin + ": not a Chrome trace; expected {\"traceEvents\": [...]} or "
                                     "an array of events");
  bool gpu_side = false;
  for (const Json& event : *events)
    if (event.is_object() && event.value("cat", "") == "gpu_user_annotation") gpu_side = true;
  Accumulator acc;
  for (std::size_t i = 0; i < events->size(); ++i) {
    const Json& event = (*events)[i];
    if (!event.is_object() || event.value("ph", "") != "X" || !event.contains("name") ||
        !event["name"].is_string())
      continue;
    if (gpu_side && event.value("cat", "") != "gpu_user_annotation") continue;
    const std::string name = event["name"].get<std::string>();
    const bool forward = name.starts_with("forward:");
    const bool backward = name.starts_with("backward:");
    if (!forward && !backward && name != "optimizer") continue;
    const std::string context = origin + ": traceEvents/" + std::to_string(i) + " (" + name + ")";
    const Json* dur = event.contains("dur") ? &event["dur"] : nullptr;
    if (!dur || !dur->is_number() || !std::isfinite(dur->get<double>()) || dur->get<double>() < 0 ||
        dur->get<double>() > kMaxMicroseconds)
      throw InputError(where, context + ": needs \"dur\", its duration in microseconds");
    if (name == "optimizer") {
      acc.add(-1, false, dur->get<double>());
      continue;
    }
    const std::string layer = name.substr(forward ? 8 : 9);
    acc.add(static_cast<long>(layer_index(model, layer, where, context)), backward,
            dur->get<double>());
  }
  LayerProfile profile = acc.finish(model, origin);
  if (profile.measured_layers() == 0)
    throw InputError(where, origin + ": no complete events named \"forward:LAYER\" or "
                                     "\"backward:LAYER\"; label each module's passes with "
                                     "torch.profiler.record_function (docs/training.md)");
  return profile;
}

LayerProfile load_layer_profile(const std::string& path, const std::filesystem::path& base_dir,
                                const Model& model, const std::string& where) {
  const std::filesystem::path file = base_dir / path;
  const std::string extension = file.extension().string();
  if (extension != ".json" && extension != ".csv")
    throw InputError(where, "\"" + path +
                                "\": a layer profile is a .csv (layer,forward_us,backward_us) or "
                                "a Chrome trace .json");
  // A file that cannot be read is reported at the scenario key that names it.
  auto read = [&](std::string_view what, std::uintmax_t limit) {
    try {
      return read_input_file(file, what, limit);
    } catch (const InputError& e) {
      throw InputError(where, std::string("layer profile ") + e.what());
    }
  };
  if (extension == ".json")
    return parse_layer_profile_trace(
        parse_json_text(read("a Chrome trace", kMaxTraceInputBytes), file.string()), model,
        file.string(), where);
  return parse_layer_profile_csv(read("a layer-profile CSV", kMaxLogInputBytes), model,
                                 file.string(), where);
}

std::string describe(const MeasuredCompute& compute, const Model& model) {
  switch (compute.source) {
  case ComputeSource::roofline:
    return "roofline";
  case ComputeSource::measured_throughput: {
    std::string text = "measured 1-GPU throughput ";
    const double first = compute.samples_per_second.front();
    bool same = true;
    for (double x : compute.samples_per_second) same = same && x == first;
    text += same ? format_fixed(first, 1) + " samples/s" : "per GPU";
    if (compute.accumulation_steps > 0)
      text += " at " + std::to_string(compute.accumulation_steps) + " accumulation steps";
    return text;
  }
  case ComputeSource::layer_profile: {
    const LayerProfile& p = *compute.profile;
    return "layer profile " + p.origin + " at batch " + std::to_string(p.batch) + " (" +
           std::to_string(p.measured_layers()) + " of " + std::to_string(model.layers.size()) +
           " layers measured, the rest from the roofline" +
           (p.optimizer ? ")" : "; optimizer from the roofline)");
  }
  }
  return "?";
}

} // namespace ddlsim::models
