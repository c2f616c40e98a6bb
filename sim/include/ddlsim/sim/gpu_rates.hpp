// How fast a GPU does the local steps of a schedule (reduce, copy, compress), derived from its
// memory bandwidth until the GPU models of models/ replace this table.
#pragma once

#include "ddlsim/collectives/step.hpp"
#include "ddlsim/topologies/topology.hpp"

#include <string_view>
#include <vector>

namespace ddlsim::sim {

struct GpuRates {
  double memory_bytes_per_second = 0;
  double reduce_bytes_per_second = 0; // dst = a + b: reads 2 bytes, writes 1 per byte reduced
  double copy_bytes_per_second = 0;   // reads 1, writes 1
  double codec_bytes_per_second = 0;  // top-k / norms / casts: several passes over the input
  int sms = 0; // streaming multiprocessors (models::GpuSpec::sms); 0 = no published figure
};

// The rate at which a GPU runs a local step of `kind`, in bytes per second: a reduce at its
// reduction rate, a copy or scale at its copy rate, a codec step (compress, decompress) at its
// codec rate. Every engine times local steps with it.
inline double local_step_rate(const GpuRates& rates, coll::StepKind kind) {
  if (kind == coll::StepKind::reduce) return rates.reduce_bytes_per_second;
  if (kind == coll::StepKind::copy || kind == coll::StepKind::scale)
    return rates.copy_bytes_per_second;
  return rates.codec_bytes_per_second;
}

// Rates for a GPU model name such as "V100-SXM2-32GB" or "A100-SXM4-80GB" (any name
// models::find_gpu knows); an unknown model throws InputError listing the known ones.
GpuRates gpu_rates(std::string_view gpu_model);

// The rates of ranks 0..ranks-1 (rank r on the topology's r-th GPU), with a calibration's reduce
// or copy rate in place of the model's where one is given (> 0). Every engine takes its local
// step rates from here. Throws InputError (at "schedule") when there are more ranks than GPUs.
std::vector<GpuRates> rank_rates(const topo::Topology& topology, int ranks,
                                 double reduce_bytes_per_second, double copy_bytes_per_second);

} // namespace ddlsim::sim
