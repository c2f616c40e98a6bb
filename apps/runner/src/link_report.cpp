#include "link_report.hpp"

#include "ddlsim/core/units.hpp"

#include <algorithm>
#include <string>

namespace ddlsim::runner {
namespace {

// "25 Gb/s" for network links, "24 GB/s" for links inside a node (their specs' units).
std::string capacity_text(const topo::Link& link) {
  const bool network =
      link.link_class == topo::LinkClass::nic || link.link_class == topo::LinkClass::fabric;
  return network ? format_gbps(link.bandwidth_bytes_per_second)
                 : format_gigabytes_per_second(link.bandwidth_bytes_per_second);
}

} // namespace

Json link_load_json(const topo::Topology& topology, const sim::LinkLoadReport& report,
                    std::uint64_t bytes) {
  Json links = Json::array();
  for (const sim::LinkLoad& load : report.links) {
    const topo::Link& link = topology.link(load.link);
    links.push_back({{"src", topology.vertex(link.src).name},
                     {"dst", topology.vertex(link.dst).name},
                     {"class", std::string(topo::to_string(link.link_class))},
                     {"capacity_gbps", link.bandwidth_bytes_per_second * 8.0 / 1e9},
                     {"bytes", load.bytes},
                     {"transfers", load.transfers},
                     {"busy_us", ps_to_us(load.busy)},
                     {"load_us", load.load_seconds * 1e6},
                     {"utilisation", load.utilisation}});
  }
  return {{"bytes", bytes},
          {"time_us", ps_to_us(report.time)},
          {"switch_bytes", report.switch_bytes},
          {"links", std::move(links)}};
}

void print_busiest_links(const topo::Topology& topology, const sim::LinkLoadReport& report,
                         std::size_t count, std::ostream& out) {
  const std::size_t shown = std::min(count, report.links.size());
  for (std::size_t i = 0; i < shown; ++i) {
    const sim::LinkLoad& load = report.links[i];
    const topo::Link& link = topology.link(load.link);
    out << "#   " << topology.vertex(link.src).name << " -> " << topology.vertex(link.dst).name
        << " (" << topo::to_string(link.link_class) << ", " << capacity_text(link)
        << "): " << format_bytes(load.bytes) << " in " << load.transfers << " transfers, load "
        << format_significant(load.load_seconds * 1e6, 4) << " us, busy "
        << format_significant(ps_to_us(load.busy), 4) << " us, utilisation "
        << format_fixed(100.0 * load.utilisation, 1) << "%\n";
  }
  if (report.links.size() > shown)
    out << "#   (" << report.links.size() - shown << " more links carried bytes: --links FILE)\n";
}

} // namespace ddlsim::runner
