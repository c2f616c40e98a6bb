#include "ddlsim/sim/packet/packet_report.hpp"

#include <cstdio>

namespace ddlsim::sim::packet {

std::string link_name(const topo::Topology& topology, topo::LinkId link) {
  const topo::Link& l = topology.link(link);
  return topology.vertex(l.src).name + " -> " + topology.vertex(l.dst).name;
}

Json packet_details(const PacketTiming& t, const topo::Topology& topology) {
  Json links = Json::array();
  for (const LinkStats& s : t.links)
    links.push_back({{"link", link_name(topology, s.link)},
                     {"bytes", s.bytes},
                     {"utilisation", s.utilisation},
                     {"peak_queue_bytes", s.peak_queue_bytes},
                     {"drops", s.drops}});
  Json by_priority = Json::array();
  for (std::uint64_t d : t.drops_by_priority) by_priority.push_back(d);
  Json packets_by_priority = Json::array();
  for (std::uint64_t p : t.data_packets_by_priority) packets_by_priority.push_back(p);
  Json pauses_by_priority = Json::array();
  for (std::uint64_t p : t.pfc_pauses_by_priority) pauses_by_priority.push_back(p);
  return {{"events", t.events},
          {"tx_done_events", t.tx_done_events},
          {"idle_tx_done_events", t.idle_tx_done_events},
          {"data_packets", t.data_packets},
          {"data_packets_by_priority", std::move(packets_by_priority)},
          {"control_packets", t.control_packets},
          {"retransmissions", t.retransmissions},
          {"drops", t.drops},
          {"drops_by_priority", std::move(by_priority)},
          {"bytes_dropped", t.bytes_dropped},
          {"bytes_lost_accepted", t.bytes_lost_accepted},
          {"bytes_late_discarded", t.bytes_late_discarded},
          {"max_lost_fraction", static_cast<double>(t.max_lost_fraction_ppm) * 1e-6},
          {"duplicates", t.duplicates},
          {"reordered", t.reordered},
          {"ecn_marks", t.ecn_marks},
          {"pfc_pauses", t.pfc_pauses},
          {"pfc_pauses_by_priority", std::move(pauses_by_priority)},
          {"headroom_drops", t.headroom_drops},
          {"cnps", t.cnps},
          {"rate_cuts", t.rate_cuts},
          {"links", std::move(links)}};
}

std::string packet_summary(const PacketTiming& t, const topo::Topology& topology) {
  char line[512];
  std::snprintf(
      line, sizeof line,
      "#   packets %llu data + %llu control, %llu retransmitted, %llu dropped (%s), "
      "%llu reordered, %llu ECN marks, %llu PFC pauses",
      static_cast<unsigned long long>(t.data_packets),
      static_cast<unsigned long long>(t.control_packets),
      static_cast<unsigned long long>(t.retransmissions), static_cast<unsigned long long>(t.drops),
      format_bytes(t.bytes_dropped).c_str(), static_cast<unsigned long long>(t.reordered),
      static_cast<unsigned long long>(t.ecn_marks), static_cast<unsigned long long>(t.pfc_pauses));
  std::string out = line;
  if (t.bytes_lost_accepted > 0 || t.bytes_late_discarded > 0) {
    std::snprintf(line, sizeof line,
                  ", %s dropped and accepted as lost, %s given up on in flight (at most %.2f%% "
                  "of a message missing)",
                  format_bytes(t.bytes_lost_accepted).c_str(),
                  format_bytes(t.bytes_late_discarded).c_str(),
                  static_cast<double>(t.max_lost_fraction_ppm) * 1e-4);
    out += line;
  }
  if (t.cnps > 0) {
    std::snprintf(line, sizeof line, ", %llu CNPs", static_cast<unsigned long long>(t.cnps));
    out += line;
  }
  if (t.headroom_drops > 0) {
    std::snprintf(line, sizeof line, ", %llu lossless drops (PFC headroom too small)",
                  static_cast<unsigned long long>(t.headroom_drops));
    out += line;
  }
  out += "\n";
  const LinkStats* busiest = nullptr;
  const LinkStats* deepest = nullptr;
  for (const LinkStats& s : t.links) {
    if (!busiest || s.utilisation > busiest->utilisation) busiest = &s;
    if (!deepest || s.peak_queue_bytes > deepest->peak_queue_bytes) deepest = &s;
  }
  if (busiest) {
    std::snprintf(line, sizeof line, "#   busiest link %s at %.1f%%; deepest queue %s at %s\n",
                  link_name(topology, busiest->link).c_str(), 100 * busiest->utilisation,
                  link_name(topology, deepest->link).c_str(),
                  format_bytes(deepest->peak_queue_bytes).c_str());
    out += line;
  }
  return out;
}

} // namespace ddlsim::sim::packet
