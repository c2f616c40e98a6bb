// What the packet engine adds to a report: drops, retransmissions, reordering, ECN and PFC
// counts, and per-link utilisation and peak queue, as JSON and as a short text summary.
#pragma once

#include "ddlsim/core/json_reader.hpp"
#include "ddlsim/sim/packet/packet_engine.hpp"
#include "ddlsim/topologies/topology.hpp"

#include <string>

namespace ddlsim::sim::packet {

// {"events", "data_packets", ..., "links": [{"link": "leaf0 -> spine1", "bytes", "utilisation",
// "peak_queue_bytes", "drops"}]} with links ordered by link id.
Json packet_details(const PacketTiming& timing, const topo::Topology& topology);

// One or two lines for under the table, each starting with "#   ".
std::string packet_summary(const PacketTiming& timing, const topo::Topology& topology);

// "node0/nic0 -> leaf0"
std::string link_name(const topo::Topology& topology, topo::LinkId link);

} // namespace ddlsim::sim::packet
