#include "ddlsim/sim/flow_network.hpp"

#include "ddlsim/core/sim_time.hpp"
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

namespace ddlsim::sim {
namespace {

constexpr Picoseconds kNever = std::numeric_limits<Picoseconds>::max();

} // namespace

FlowNetwork::FlowNetwork(const topo::Topology& topology)
    : topology_(topology), links_(topology.link_count()) {
  for (std::size_t link = 0; link < links_.size(); ++link)
    links_[link].bandwidth =
        topology.link(static_cast<topo::LinkId>(link)).bandwidth_bytes_per_second;
}

const std::vector<double>& FlowNetwork::bytes_per_link() const {
  bytes_per_link_.resize(links_.size());
  for (std::size_t link = 0; link < links_.size(); ++link)
    bytes_per_link_[link] = links_[link].bytes;
  return bytes_per_link_;
}

FlowId FlowNetwork::new_flow(const std::vector<topo::LinkId>& path, double bytes, std::uint64_t tag,
                             Picoseconds now) {
  FlowId id;
  if (!free_ids_.empty()) {
    id = free_ids_.back();
    free_ids_.pop_back();
  } else {
    id = static_cast<FlowId>(flows_.size());
    flows_.emplace_back();
  }
  Flow& flow = flows_[id];
  flow.path = &path;
  flow.remaining = bytes;
  flow.rate = 0.0;
  flow.updated = now;
  flow.finish = now;
  flow.tag = tag;
  flow.active = true;
  flow.placed = false;
  flow.mark = 0;
  flow.frozen_mark = 0;
  ++active_count_;
  return id;
}

void FlowNetwork::place(FlowId id, double bytes, bool count_bytes) {
  Flow& flow = flows_[id];
  const std::vector<topo::LinkId>& path = *flow.path;
  if (flow.node_cap < path.size()) {
    // Node blocks only grow with their flow id, so the total stays bounded.
    flow.node_base = static_cast<std::uint32_t>(link_nodes_.size());
    flow.node_cap = static_cast<std::uint32_t>(path.size());
    link_nodes_.resize(link_nodes_.size() + path.size());
  }
  flow.placed = true;
  flow.path_id = path_id(path);
  std::uint32_t node = flow.node_base;
  for (topo::LinkId link : path) {
    LinkState& state = links_[link];
    const std::uint32_t head = state.head;
    link_nodes_[node] = LinkNode{id, kNil, head};
    if (head != kNil) link_nodes_[head].prev = node;
    state.head = node;
    ++node;
    const std::size_t count = ++state.count;
    peak_flows_per_link_ = std::max(peak_flows_per_link_, count);
    if (count_bytes) state.bytes += bytes;
  }
}

FlowId FlowNetwork::start(const std::vector<topo::LinkId>& path, double bytes, std::uint64_t tag,
                          Picoseconds now) {
  const FlowId id = new_flow(path, bytes, tag, now);
  if (bytes <= 0 || path.empty()) {
    // Nothing to share: it finishes at once.
    push_finish(now, id);
    return id;
  }
  place(id, bytes, true);
  // One link is enough: the component search from it reaches this flow and every flow that
  // shares any of its links.
  dirty_links_.push_back(path.front());
  flows_[id].finish = kNever;
  return id;
}

Picoseconds FlowNetwork::reserve(const std::vector<topo::LinkId>& path, double bytes,
                                 std::uint64_t tag, Picoseconds now,
                                 std::vector<std::uint64_t>& overlapped) {
  if (bytes <= 0 || path.empty()) return kNever;
  bool free = true;
  double rate = std::numeric_limits<double>::infinity();
  for (topo::LinkId link : path) {
    const LinkState& state = links_[link];
    if (state.reserved_until > now) {
      free = false;
      if (std::find(overlapped.begin(), overlapped.end(), state.reserved_tag) == overlapped.end())
        overlapped.push_back(state.reserved_tag);
    }
    if (state.count != 0) free = false;
    rate = std::min(rate, state.bandwidth);
  }
  if (!free || !(rate > 0)) return kNever;
  // The finish that start(), update_rates() (rate_if_alone) and schedule_finish() would give it.
  const Picoseconds finish = finish_time(now, bytes, rate);
  // A flow that ends the instant it starts is not reserved: in the network it still shares its
  // links with every flow that starts at this instant (rates are computed once all of them are
  // in), whereas a reservation ending now would look over to them.
  if (finish == now) return kNever;
  for (topo::LinkId link : path) {
    LinkState& state = links_[link];
    state.reserved_until = finish;
    state.reserved_tag = tag;
    state.bytes += bytes;
  }
  peak_flows_per_link_ = std::max<std::size_t>(peak_flows_per_link_, 1);
  return finish;
}

void FlowNetwork::adopt(const std::vector<topo::LinkId>& path, double bytes, std::uint64_t tag,
                        Picoseconds start) {
  const FlowId id = new_flow(path, bytes, tag, start);
  double rate = std::numeric_limits<double>::infinity();
  for (topo::LinkId link : path) {
    LinkState& state = links_[link];
    rate = std::min(rate, state.bandwidth);
    if (state.reserved_tag == tag) state.reserved_until = 0;
  }
  place(id, bytes, false);
  Flow& flow = flows_[id];
  flow.rate = rate;
  flow.finish = finish_time(start, bytes, rate);
  push_finish(flow.finish, id);
}

void FlowNetwork::settle(Flow& flow, Picoseconds now) {
  if (now > flow.updated && flow.rate > 0) {
    flow.remaining -= flow.rate * static_cast<double>(now - flow.updated) / 1e12;
    if (flow.remaining < 0) flow.remaining = 0;
  }
  flow.updated = now;
}

Picoseconds FlowNetwork::finish_time(Picoseconds now, double remaining, double rate) {
  const double seconds = rate > 0 ? remaining / rate : 0.0;
  return checked_later(now, checked_ps(seconds * 1e12));
}

void FlowNetwork::schedule_finish(FlowId id, Picoseconds now) {
  Flow& flow = flows_[id];
  flow.finish = finish_time(now, flow.remaining, flow.rate);
  push_finish(flow.finish, id);
}

void FlowNetwork::update_rates(Picoseconds now) {
  if (dirty_links_.empty()) return;
  ++epoch_;
  for (topo::LinkId link : dirty_links_)
    if (links_[link].mark != epoch_) recompute_component(link, now);
  dirty_links_.clear();
}

bool FlowNetwork::rate_if_alone(topo::LinkId seed, Picoseconds now) {
  const LinkState& seed_state = links_[seed];
  if (seed_state.count != 1) return false;
  const FlowId id = link_nodes_[seed_state.head].flow;
  Flow& flow = flows_[id];
  double rate = std::numeric_limits<double>::infinity();
  for (topo::LinkId link : *flow.path) {
    if (links_[link].count != 1) return false;
    rate = std::min(rate, links_[link].bandwidth);
  }
  // Its links are the whole component: marking them spares the other dirty ones among them a
  // second visit, as the search would.
  for (topo::LinkId link : *flow.path) links_[link].mark = epoch_;
  settle(flow, now);
  if (rate != flow.rate || flow.finish == kNever) {
    flow.rate = rate;
    schedule_finish(id, now);
  }
  return true;
}

void FlowNetwork::recompute_component(topo::LinkId seed, Picoseconds now) {
  // Most flows inside a node, and many across the fabric, have their links to themselves: then
  // the bottleneck link's bandwidth is the rate, without the component search below (which
  // would find exactly this flow and these links, and give the same rate).
  if (rate_if_alone(seed, now)) return;
  // 1. The component: links and flows reachable from `seed` through shared links; each flow's
  //    remaining bytes are brought up to now at its old rate on the way.
  component_links_.clear();
  component_flows_.clear();
  component_links_.push_back(seed);
  links_[seed].mark = epoch_;
  for (std::size_t i = 0; i < component_links_.size(); ++i) {
    for (std::uint32_t node = links_[component_links_[i]].head; node != kNil;
         node = link_nodes_[node].next) {
      const FlowId id = link_nodes_[node].flow;
      Flow& flow = flows_[id];
      if (flow.mark == epoch_) continue;
      flow.mark = epoch_;
      component_flows_.push_back(id);
      settle(flow, now);
      for (topo::LinkId link : *flow.path) {
        LinkState& state = links_[link];
        if (state.mark == epoch_) continue;
        state.mark = epoch_;
        component_links_.push_back(link);
      }
    }
  }
  // 2. Progressive filling: repeatedly saturate the link with the smallest fair share and freeze
  //    its flows at that share. A link's share only grows as other flows freeze, so a lazy heap
  //    of (share, link) is exact: a popped entry whose share has grown is pushed back.
  if (component_flows_.size() == 1) {
    // Alone on its links (the common case inside a node): the bottleneck link's bandwidth.
    const FlowId id = component_flows_.front();
    Flow& flow = flows_[id];
    double rate = std::numeric_limits<double>::infinity();
    for (topo::LinkId link : *flow.path) rate = std::min(rate, links_[link].bandwidth);
    if (rate != flow.rate || flow.finish == kNever) {
      flow.rate = rate;
      schedule_finish(id, now);
    }
    return;
  }
  // The known-rates key costs a sort and a hash of a number per flow, and a large
  // component seldom recurs with exactly the same paths: past this size the fill alone is
  // cheaper (the rates are the same either way). Measured (CPU s, ddlsim run): ByteScheduler's
  // 64 streams as parameter-server exchanges, 8 workers and 5 servers, 1.05 -> 0.59; the
  // 400-job shared-cluster trace of `scripts/bench jobs` (components of a few flows) unchanged
  // (26.1-27.6 either way).
  constexpr std::size_t kMaxKnownFlows = 64;
  if (component_flows_.size() > kMaxKnownFlows) {
    progressive_filling(now);
    return;
  }
  if (reuse_known_rates(now)) return;
  progressive_filling(now);
  remember_rates();
}

void FlowNetwork::progressive_filling(Picoseconds now) {
  constexpr auto kSmallestShareFirst = std::greater<ShareEntry>{};
  auto push_share = [&](double share, topo::LinkId link) {
    share_heap_.emplace_back(share, link);
    std::push_heap(share_heap_.begin(), share_heap_.end(), kSmallestShareFirst);
  };
  // Each flow's own links (those it alone crosses) give the share heap one entry: the smallest
  // (bandwidth, link) among them. An own link's share is its bandwidth until its one flow
  // freezes, so the first of them popped freezes the flow at it (unless a shared link froze it
  // first) and the others would only be popped to be thrown away. (Found here rather than in
  // the component search: most searches end in reuse_known_rates, which needs no heap.)
  share_heap_.clear();
  for (const FlowId id : component_flows_) {
    bool has_own = false;
    ShareEntry own{0.0, 0};
    for (const topo::LinkId link : *flows_[id].path) {
      const LinkState& state = links_[link];
      if (state.count != 1) continue;
      const ShareEntry entry{state.bandwidth, link};
      if (!has_own || entry < own) own = entry;
      has_own = true;
    }
    if (has_own) share_heap_.push_back(own);
  }
  for (topo::LinkId link : component_links_) {
    LinkState& state = links_[link];
    state.capacity_left = state.bandwidth;
    state.unfrozen = state.count;
    // Own links (count 1) have their entries from above.
    if (state.unfrozen > 1) share_heap_.emplace_back(state.capacity_left / state.unfrozen, link);
  }
  // The pops come in (share, link) order, whatever the heap's layout: one entry per link.
  std::make_heap(share_heap_.begin(), share_heap_.end(), kSmallestShareFirst);
  // Once every flow is frozen, the entries left are links with no flow to freeze.
  std::size_t unfrozen_flows = component_flows_.size();
  while (unfrozen_flows != 0) {
    std::pop_heap(share_heap_.begin(), share_heap_.end(), kSmallestShareFirst);
    const auto [share, link] = share_heap_.back();
    share_heap_.pop_back();
    if (links_[link].unfrozen == 0) continue;
    const double current = std::max(0.0, links_[link].capacity_left) / links_[link].unfrozen;
    if (current > share) {
      push_share(current, link);
      continue;
    }
    for (std::uint32_t node = links_[link].head; node != kNil; node = link_nodes_[node].next) {
      const FlowId id = link_nodes_[node].flow;
      Flow& flow = flows_[id];
      if (flow.frozen_mark == epoch_) continue;
      flow.frozen_mark = epoch_;
      --unfrozen_flows;
      const double old_rate = flow.rate;
      flow.rate = current;
      for (topo::LinkId on_path : *flow.path) {
        links_[on_path].capacity_left -= current;
        --links_[on_path].unfrozen;
      }
      if (flow.rate != old_rate || flow.finish == kNever) schedule_finish(id, now);
    }
  }
}

std::uint32_t FlowNetwork::path_id(const std::vector<topo::LinkId>& path) {
  const auto at = path_id_at_.find(&path);
  if (at != path_id_at_.end() && path_links_[at->second] == path) return at->second;
  const auto [known, added] =
      path_ids_.try_emplace(path, static_cast<std::uint32_t>(path_links_.size()));
  if (added) path_links_.push_back(path);
  path_id_at_.insert_or_assign(&path, known->second);
  return known->second;
}

std::size_t FlowNetwork::KnownRatesHash::operator()(const std::vector<std::uint32_t>& key) const {
  // FNV-1a over the numbers, link ids or path_id()s (http://www.isthe.com/chongo/tech/comp/fnv/:
  // the 64-bit offset basis and prime); any hash would give the same rates, only more or fewer
  // hits.
  std::uint64_t hash = 14695981039346656037ull;
  for (const std::uint32_t number : key) hash = (hash ^ number) * 1099511628211ull;
  return static_cast<std::size_t>(hash);
}

bool FlowNetwork::reuse_known_rates(Picoseconds now) {
  // The key: the component's paths as path_id()s, sorted (flows on one path are adjacent, and
  // get the same rate). Equal numbers are equal link sequences, so a key names exactly one
  // multiset of paths, and each sorted position one path of it.
  component_paths_.clear();
  for (FlowId id : component_flows_) component_paths_.emplace_back(flows_[id].path_id, id);
  std::sort(component_paths_.begin(), component_paths_.end());
  known_key_.clear();
  for (const auto& entry : component_paths_) known_key_.push_back(entry.first);
  const auto known = known_rates_.find(known_key_);
  if (known == known_rates_.end()) return false;
  const std::vector<double>& rates = known->second;
  for (std::size_t i = 0; i < component_paths_.size(); ++i) {
    const FlowId id = component_paths_[i].second;
    Flow& flow = flows_[id];
    if (rates[i] != flow.rate || flow.finish == kNever) {
      flow.rate = rates[i];
      schedule_finish(id, now);
    }
  }
  return true;
}

void FlowNetwork::remember_rates() {
  // Bounded: a long run with ever new components keeps at most this many, a few hundred bytes
  // each at the 4 flows of 7 links typical of a shared cluster's components. On the 400-job
  // prefix of `scripts/bench jobs` 4,096 reuse 98.8% of the fills (65,536: 99.1%, at 36 MiB
  // more peak memory).
  constexpr std::size_t kMaxKnownRates = std::size_t{1} << 12;
  if (known_rates_.size() >= kMaxKnownRates) known_rates_.clear();
  std::vector<double> rates;
  rates.reserve(component_paths_.size());
  for (const auto& entry : component_paths_) rates.push_back(flows_[entry.second].rate);
  known_rates_.emplace(known_key_, std::move(rates));
}

Picoseconds FlowNetwork::next_completion() const {
  return finishes_.next();
}

void FlowNetwork::push_finish(Picoseconds when, FlowId id) {
  finishes_.set(id, when);
}

void FlowNetwork::prefetch_leaving(const std::vector<FlowId>& ids) const {
  // At 16k ranks the links a flow leaves have gone cold while it ran, and unlinking it was a
  // string of misses, one per hop. Fetching the flows first, then their list nodes and links,
  // puts the misses of all of an instant's flows in flight together.
  for (const FlowId id : ids) __builtin_prefetch(&flows_[id], 0, 3);
  for (const FlowId id : ids) {
    const Flow& flow = flows_[id];
    if (!flow.placed) continue;
    __builtin_prefetch(&link_nodes_[flow.node_base], 0, 3);
    prefetch_path(*flow.path);
  }
  asm volatile(""); // as in prefetch_path
}

void FlowNetwork::collect_finished(Picoseconds now, std::vector<std::uint64_t>& finished) {
  while (finishes_.next() <= now) {
    // Every flow of the earliest time, in flow id order.
    const Picoseconds when = finishes_.next();
    due_.clear();
    finishes_.take_earliest(due_);
    std::sort(due_.begin(), due_.end());
    prefetch_leaving(due_);
    for (const FlowId id : due_) {
      Flow& flow = flows_[id];
      if (!flow.active || flow.finish != when) continue; // a guard: the queue holds no other
      flow.active = false;
      --active_count_;
      if (flow.placed) { // zero-byte flows were never placed on links
        flow.placed = false;
        std::uint32_t node = flow.node_base;
        for (topo::LinkId link : *flow.path) {
          const LinkNode& n = link_nodes_[node++];
          LinkState& state = links_[link];
          if (n.prev != kNil)
            link_nodes_[n.prev].next = n.next;
          else
            state.head = n.next;
          if (n.next != kNil) link_nodes_[n.next].prev = n.prev;
          // The flows left on this link may speed up; a link left empty has nobody to tell.
          if (--state.count != 0) dirty_links_.push_back(link);
        }
      }
      free_ids_.push_back(id);
      finished.push_back(flow.tag);
    }
  }
}

} // namespace ddlsim::sim
