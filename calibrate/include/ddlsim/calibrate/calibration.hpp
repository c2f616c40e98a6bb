// A calibration: what `ddlsim calibrate` fits and a scenario references with
// "calibration": "file.json". It sets, per link class, the latency and the efficiency of the
// cluster spec's links (the fraction of the link's nominal rate a collective reaches), and the
// engine's per-step overhead, launch overhead and GPU reduction rate, so every engine that reads
// the scenario inherits it. Efficiencies are relative: applied to another system they scale
// that system's nominal rates, so a calibration fitted on one system carries over to a similar
// one; latencies and overheads are absolute, belong to the GPU generation and transport they
// were fitted on, and `fitted_on` records that system so that applying the calibration to a
// different one warns (calibration_differences). Files of the first format
// ("ddlsim-calibration-1") stored absolute rates and are still read as such. Protocols model NCCL's
// LL / LL128 / Simple: each scales every bandwidth and replaces the per-step overhead; the first
// protocol is the one `ddlsim run` applies (the bandwidth protocol), and the model of measured
// points (point_model.hpp) takes the fastest, as NCCL's tuner does.
//
// A calibration may target node groups (`node_groups`: selectors of the scenario's
// topology.nodes entries, by preset, GPU model or "/topology/nodes/N"; empty = every group), so
// that a heterogeneous cluster carries one calibration per kind of node. Several calibrations apply
// together (apply_calibrations): each sets its groups' links; the engine-wide values combine as a
// synchronous collective sees them (the largest per-step and launch overheads, the slowest
// reduction rate), because the slowest participant paces every step.
#pragma once

#include "ddlsim/core/json_reader.hpp"
#include "ddlsim/core/units.hpp"
#include "ddlsim/topologies/cluster_spec.hpp"

#include <array>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ddlsim::calib {

// The link classes calibrated separately: NVLink / NVSwitch, PCIe, NIC / fabric.
enum class LinkGroup : std::uint8_t { nvlink, pcie, network };
inline constexpr std::array<LinkGroup, 3> kLinkGroups{LinkGroup::nvlink, LinkGroup::pcie,
                                                      LinkGroup::network};
std::string_view to_string(LinkGroup group);

struct LinkCalibration {
  bool set = false;        // false: the scenario's own values stay
  Picoseconds latency = 0; // per link, as the spec's *_latency_ns
  // Effective per-link bandwidth on the system it was fitted on (the spec's *_bandwidth_gbps);
  // applied as such only by a format-1 (absolute) calibration.
  double bytes_per_second = 0;
  // bytes_per_second / the fitted system's nominal rate: what a (relative) calibration applies,
  // times the target node's own nominal rate.
  double efficiency = 0;
};

// The system a calibration was fitted on (its first node group), as the scenario or the logs
// describe it. Empty / 0 fields are unknown.
struct FittedOn {
  std::string gpu_model;      // e.g. "H100-SXM5-80GB"
  int compute_capability = 0; // x10, e.g. 90; 0 = not an NVIDIA GPU ddlsim knows
  int gpus_per_node = 0;
  int nics_per_node = 0;
  std::string intra;     // "nvswitch", "nvlink_hybrid_cube_mesh", ...
  std::string transport; // "ib", "socket", ...
  int nodes = 0;
  std::string nccl_version; // as the log says, e.g. "NCCL 2.18.5+cuda12.2"; "" = not said
};

// What a node group of a cluster is, in FittedOn's terms (nccl_version left empty).
FittedOn fitted_on(const topo::NodeSpec& node, int nodes);

struct ProtocolCalibration {
  std::string name = "simple";
  double bandwidth_factor = 1.0; // multiplies every link's bandwidth
  Picoseconds per_step_overhead = 0;
};

struct Calibration {
  std::array<LinkCalibration, 3> links; // indexed by LinkGroup
  Picoseconds launch_overhead = 0;      // once per collective call
  double reduce_bytes_per_second = 0;   // 0 = the GPU model's
  std::vector<ProtocolCalibration> protocols{ProtocolCalibration{}};
  // Node groups this calibration applies to (node_group_matches); empty = all.
  std::vector<std::string> node_groups;
  Json source = Json::object(); // what it was fitted from, residuals, assumptions (free form)
  // false: a format-1 file, whose link rates are absolute (they replace the target's).
  bool relative = true;
  std::optional<FittedOn> fitted_on; // absent in format-1 files

  LinkCalibration& link(LinkGroup g) { return links[static_cast<std::size_t>(g)]; }
  const LinkCalibration& link(LinkGroup g) const { return links[static_cast<std::size_t>(g)]; }
};

// What a calibration sets in the engine options.
struct EngineCalibration {
  Picoseconds per_step_overhead = 0;
  Picoseconds launch_overhead = 0;
  double reduce_bytes_per_second = 0; // 0 = leave the engine's
};

// Sets the calibrated link classes of the node groups the calibration targets (NVLink, PCIe,
// NIC rate and latency; on a single_switch fabric the port rate follows the NIC) under
// `protocol` (index into calibration.protocols; its bandwidth factor scales them): each rate is
// the target node's nominal rate times the calibrated efficiency (format 1: the absolute rate).
// Throws InputError (at "/node_groups") when a selector matches no group.
EngineCalibration apply_calibration(const Calibration& calibration, topo::ClusterSpec& spec,
                                    std::size_t protocol = 0);

// Several calibrations, each on its own node groups. Protocol `protocol` is the first
// calibration's; the others run their protocol of the same name (else their first). Throws
// InputError when two calibrations claim one node group, or a selector matches none.
EngineCalibration apply_calibrations(std::span<const Calibration> calibrations,
                                     topo::ClusterSpec& spec, std::size_t protocol = 0);

// True when `selector` names node group `index` of `spec`: its preset (e.g. "dgx1-v100"), its
// GPU model (e.g. "A100-SXM4-80GB"), or its JSON pointer "/topology/nodes/INDEX".
bool node_group_matches(const topo::ClusterSpec& spec, std::size_t index,
                        const std::string& selector);

// One line per way the node groups a calibration applies to differ from the system it was
// fitted on (GPU model or generation, GPUs or NICs per node, intra-node kind, transport), each
// naming both values; a line for a format-1 calibration (absolute rates, no record of its
// system). Empty = the same kind of system. Callers print these as warnings: a calibration
// carried to another system is a documented workflow, not an error.
std::vector<std::string> calibration_differences(const Calibration& calibration,
                                                 const topo::ClusterSpec& spec);

// The nominal (uncalibrated) per-link rate of a group in a node spec, for efficiencies.
double nominal_bytes_per_second(const topo::NodeSpec& node, LinkGroup group);
Picoseconds nominal_latency(const topo::NodeSpec& node, LinkGroup group);

Json to_json(const Calibration& calibration);
// Strict: unknown keys are errors naming the JSON pointer (under `origin`).
Calibration calibration_from_json(const Json& json, const std::string& origin);
Calibration read_calibration_file(const std::filesystem::path& file);
void write_calibration_file(const Calibration& calibration, const std::filesystem::path& file);

} // namespace ddlsim::calib
