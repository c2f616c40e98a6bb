// The per-link load report of `ddlsim run --links FILE` (RunSettings::links): the JSON of one
// size's sim::LinkLoadReport, and the lines that name the busiest links under the table.
#pragma once

#include "ddlsim/core/json_reader.hpp"
#include "ddlsim/sim/link_load.hpp"
#include "ddlsim/topologies/topology.hpp"

#include <cstdint>
#include <ostream>

namespace ddlsim::runner {

// {"bytes", "time_us", "switch_bytes", "links": [...]} for a collective of `bytes`.
Json link_load_json(const topo::Topology& topology, const sim::LinkLoadReport& report,
                    std::uint64_t bytes);

// "#   node0/gpu1 -> node0/pcie0 (pcie, 24 GB/s): 1 GiB, load 44.7 us, busy 50.1 us, 89.2%" for
// the `count` busiest links, each line starting with "#   ".
void print_busiest_links(const topo::Topology& topology, const sim::LinkLoadReport& report,
                         std::size_t count, std::ostream& out);

} // namespace ddlsim::runner
