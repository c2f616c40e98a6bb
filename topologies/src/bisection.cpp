#include "bisection.hpp"

#include <boost/graph/push_relabel_max_flow.hpp>

#include <cmath>
#include <vector>

namespace ddlsim::topo::detail {
namespace {

using Traits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
using FlowGraph = boost::adjacency_list<
    boost::vecS, boost::vecS, boost::directedS, boost::no_property,
    boost::property<
        boost::edge_capacity_t, std::int64_t,
        boost::property<boost::edge_residual_capacity_t, std::int64_t,
                        boost::property<boost::edge_reverse_t, Traits::edge_descriptor>>>>;

// Capacities in kB/s keep sums of millions of 1.6 Tb/s links inside int64.
constexpr double kUnit = 1000.0;

void add_arc(FlowGraph& graph, std::size_t u, std::size_t v, std::int64_t capacity) {
  const auto forward = boost::add_edge(u, v, graph).first;
  const auto backward = boost::add_edge(v, u, graph).first;
  boost::put(boost::edge_capacity, graph, forward, capacity);
  boost::put(boost::edge_capacity, graph, backward, 0);
  boost::put(boost::edge_reverse, graph, forward, backward);
  boost::put(boost::edge_reverse, graph, backward, forward);
}

} // namespace

double bisection_bytes_per_second(const Topology& topology) {
  const std::size_t nodes = topology.nodes().size();
  if (nodes < 2) return 0;
  const auto half = static_cast<std::int32_t>(nodes / 2);
  // -1 fabric, 0 source side, 1 sink side
  auto side = [&](VertexId v) {
    const std::int32_t node = topology.vertex(v).node;
    return node < 0 ? -1 : node < half ? 0 : 1;
  };
  auto is_gpu = [&](VertexId v) { return topology.vertex(v).kind == VertexKind::gpu; };

  const std::size_t source = topology.vertex_count();
  const std::size_t sink = source + 1;
  FlowGraph graph(topology.vertex_count() + 2);
  std::vector<std::int64_t> gpu_out(topology.vertex_count(), 0), gpu_in(topology.vertex_count(), 0);
  for (const Link& link : topology.links()) {
    const int su = side(link.src), sv = side(link.dst);
    const bool crosses = topology.vertex(link.src).node != topology.vertex(link.dst).node;
    if (crosses && (su == 1 || sv == 0)) continue; // leaves a sink server / enters a source one
    if ((is_gpu(link.dst) && sv == 0) || (is_gpu(link.src) && su == 1)) continue;
    const auto capacity =
        static_cast<std::int64_t>(std::llround(link.bandwidth_bytes_per_second / kUnit));
    add_arc(graph, link.src, link.dst, capacity);
    gpu_out[link.src] += capacity;
    gpu_in[link.dst] += capacity;
  }
  for (VertexId gpu : topology.gpus()) {
    if (side(gpu) == 0)
      add_arc(graph, source, gpu, gpu_out[gpu]);
    else
      add_arc(graph, gpu, sink, gpu_in[gpu]);
  }
  const std::int64_t flow = boost::push_relabel_max_flow(graph, source, sink);
  return static_cast<double>(flow) * kUnit;
}

} // namespace ddlsim::topo::detail
