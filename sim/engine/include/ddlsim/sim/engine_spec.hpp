// EngineSpec: which engine simulates (analytic, flow or packet, each with its own options) and
// the model terms every engine applies alike. A scenario's "engine" section becomes one;
// sim/engine.hpp runs it. Free of SimGrid, so that the scenario library can hold it without
// linking the flow engine.
#pragma once

#include "ddlsim/core/units.hpp"
#include "ddlsim/sim/flow/flow_spec.hpp"
#include "ddlsim/sim/packet/packet_spec.hpp"

#include <string_view>
#include <variant>

namespace ddlsim::sim {

// The analytic engine (sim/analytic_engine.hpp) has no options beyond the model terms.
struct AnalyticEngineSpec {
  bool operator==(const AnalyticEngineSpec&) const = default;
};

// One engine and its own options: alpha-beta with max-min link sharing (analytic), SimGrid's
// fluid models (flow, sim/flow), or packets through NICs, links and switch queues (packet,
// sim/packet).
using EngineKind = std::variant<AnalyticEngineSpec, flow::FlowEngineSpec, packet::PacketEngineSpec>;

struct EngineSpec {
  EngineKind kind; // default: the analytic engine
  // Model terms. The engine layer applies each once: the first three inside every engine, the
  // launch overhead once per collective call (also per collective of a training iteration).
  Picoseconds per_step_overhead = 0;  // software cost of every step
  double reduce_bytes_per_second = 0; // GPU reduction rate; 0 = each GPU model's
  double copy_bytes_per_second = 0;   // GPU copy rate; 0 = each GPU model's
  Picoseconds launch_overhead = 0;    // once per collective call (set by a calibration)
  // Compute slowed by the thread blocks of the communication kernels beside it on its GPU
  // (sim/compute_slowdown.hpp; docs/engines.md). Off by default; the analytic and packet engines
  // model it, the flow engine refuses it (InputError at /engine/compute_slowdown).
  bool compute_slowdown = false;
};

// "analytic", "flow" or "packet": the value of the scenario's "engine.type", and the name
// reports carry (the engine's details sit under it in the JSON report).
std::string_view engine_name(const EngineSpec& spec);

// What the engine's progress callback counts: "events" (packet engine) or "steps".
std::string_view progress_unit(const EngineSpec& spec);

// Whether each simulation runs in a forked child process (the flow engine: SimGrid keeps
// process-wide state). Forking from several threads at once is not safe, so callers run such
// simulations one at a time.
bool runs_in_child_process(const EngineSpec& spec);

} // namespace ddlsim::sim
