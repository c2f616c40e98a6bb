// Where a training job's compute times come from. The default is the roofline of gpu.hpp, which
// needs no measurement but can be tens of percent off for a given model, framework and GPU
// (cuDNN's algorithm choice, kernel fusion, TF32 and the input pipeline are not modelled). A user
// who has measured their GPU can give ddlsim that measurement instead:
//
//  measured_throughput: the samples/s one GPU reaches alone at the job's batch and precision
//      (a 1-GPU run of the same script). Every compute step of the roofline (forward and
//      backward per layer, the optimizer) is scaled by one factor so that one GPU's compute time
//      per iteration is exactly batch x accumulation steps / throughput: the roofline's
//      proportions between layers (which decide when each gradient is ready) are kept, its
//      absolute speed is replaced by the measurement. When the 1-GPU run accumulated another
//      number of steps than the job (NVIDIA's BERT tables measure 1 GPU at 32 accumulation
//      steps and 32 nodes at 1), `accumulation_steps` says how many: the factor is solved at
//      that run's steps, so the job's optimizer step weighs as often as the job runs it.
//  layer_profile: per-layer forward and backward times from a profile, taken at `batch` samples
//      per GPU; a GPU running another batch scales them linearly (the times are for that batch,
//      not a model of batch size effects). Layers the profile does not name keep their roofline
//      time, and the optimizer too unless the profile has an `optimizer` entry.
//
// Profile formats (times in microseconds):
//  CSV: a header `layer,forward_us,backward_us`, then one row per layer, named as the model's
//       layers are (models/zoo/*.json); a row `optimizer` gives the optimizer step as the sum of
//       its two columns. Empty lines and lines starting with '#' are skipped.
//  Chrome trace JSON (torch.profiler's export_chrome_trace, or any {"traceEvents": [...]} or
//       bare array of events): complete events ("ph": "X", "dur" in us) named
//       `forward:LAYER`, `backward:LAYER` or `optimizer`, as `torch.profiler.record_function`
//       labels them from module hooks. When the trace has GPU-side annotations
//       (cat "gpu_user_annotation") only those count, since the CPU-side range of an
//       asynchronous launch is not the kernel's time; several events of one name (several
//       profiled iterations) are averaged.
#pragma once

#include "ddlsim/core/json_reader.hpp"
#include "ddlsim/core/units.hpp"
#include "ddlsim/models/gpu.hpp"
#include "ddlsim/models/zoo.hpp"

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ddlsim::models {

enum class ComputeSource : std::uint8_t { roofline, measured_throughput, layer_profile };
std::string_view to_string(ComputeSource source);

struct LayerProfile {
  std::string origin;                            // the file, for the report and messages
  int batch = 1;                                 // samples per GPU the times were taken at
  std::vector<std::optional<LayerTimes>> layers; // per model layer; empty: not profiled
  std::optional<Picoseconds> optimizer;
  int measured_layers() const;
};

struct MeasuredCompute {
  ComputeSource source = ComputeSource::roofline;
  // measured_throughput: samples/s of each GPU of the job alone (one entry per GPU).
  std::vector<double> samples_per_second;
  // measured_throughput: the accumulation steps of the 1-GPU run that measured it (0: the job's).
  // A run with more steps amortizes its optimizer step over more samples, so the same GPU's
  // samples/s depends on it; the passes' time is solved from the measurement at these steps.
  int accumulation_steps = 0;
  std::shared_ptr<const LayerProfile> profile; // layer_profile
};

// Parses a profile of `model` (formats above). Errors throw InputError at `where` naming the
// origin and line or event, and the nearest layer name for a misspelt one.
LayerProfile parse_layer_profile_csv(std::string_view text, const Model& model,
                                     const std::string& origin, const std::string& where);
LayerProfile parse_layer_profile_trace(const Json& trace, const Model& model,
                                       const std::string& origin, const std::string& where);
// Reads `path` (relative to base_dir): .csv or .json by its extension.
LayerProfile load_layer_profile(const std::string& path, const std::filesystem::path& base_dir,
                                const Model& model, const std::string& where);

// The compute source in a few words, for reports: "measured 1-GPU throughput 367 samples/s".
std::string describe(const MeasuredCompute& compute, const Model& model);

} // namespace ddlsim::models
