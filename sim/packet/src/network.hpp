// Network: the state every element of the packet engine shares — the clock and the event
// queue, the ports, the packets and the messages in flight, the settings and the result being
// filled. It is plain data, part of the run (no globals): the run derives from it and from
// every element (packet_engine.cpp); an element reaches it through the run and keeps its own
// state apart.
#pragma once

#include "ddlsim/collectives/schedule.hpp"
#include "ddlsim/core/sim_time.hpp"
#include "ddlsim/sim/packet/packet_engine.hpp"
#include "ddlsim/topologies/ecmp.hpp"
#include "ddlsim/topologies/router.hpp"
#include "ddlsim/topologies/topology.hpp"
#include "delay_queue.hpp"
#include "event.hpp"
#include "packet_pool.hpp"
#include "port.hpp"
#include "transport.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace ddlsim::sim::packet {

constexpr Picoseconds kNever = std::numeric_limits<Picoseconds>::max();

// The time `bytes` take at `bytes_per_second`, rounded to the picosecond.
inline Picoseconds duration(std::uint64_t bytes, double bytes_per_second) {
  return checked_transfer_ps(static_cast<double>(bytes), bytes_per_second);
}

struct Network {
  Network(const topo::Topology& topology_in, topo::Router& router_in,
          const coll::Schedule& schedule_in, const PacketOptions& options_in)
      : topology(topology_in), router(router_in), schedule(schedule_in), options(options_in),
        spec(options_in.spec), sw(options_in.spec.switch_spec),
        rng(topo::mix64(options_in.seed ^ 0x5eed5eedull)) {}

  // The message bytes a packet carries: a data packet's size less its header (not stored, so
  // that a packet stays one cache line).
  std::uint32_t payload_of(const Packet& packet) const {
    return packet.kind == PacketKind::data ? packet.bytes - spec.header_bytes : 0;
  }

  const topo::Topology& topology;
  topo::Router& router;
  const coll::Schedule& schedule;
  const PacketOptions& options;
  const PacketEngineSpec& spec;
  const SwitchSpec& sw;
  std::uint64_t rng; // spraying, adaptive routing's ties
  DelayQueue<Event> events;
  Picoseconds now = 0;
  PacketPool pool;
  Ports ports; // one per directed link, indexed by its LinkId
  // The port of the opposite direction, per port: a control packet walks its data packet's
  // path back through these. Apart from the ports (52 KiB at 1,024 GPUs, where the ports are
  // 5 MiB) so that finding an ACK's next port does not load the forward port too.
  std::vector<std::uint32_t> reverse_of;
  // Port::lossless per port, apart from the ports for the same reason: a packet starting to
  // cross a link checks whether its next port gives credit; a switch port does not, and is not
  // loaded then.
  std::vector<std::uint8_t> lossless;
  std::vector<Message> messages;   // indexed by message id; free ids are reused
  Picoseconds last_completion = 0; // when the last step completed
  Picoseconds last_tx_end = 0;     // when the last packet left its port
  PacketTiming result;
};

} // namespace ddlsim::sim::packet
