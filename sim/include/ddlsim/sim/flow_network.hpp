// FlowNetwork: the fluid model of the analytic engine. A flow crosses a path of links; it first
// waits out the path latency, then moves its bytes at a rate that max-min fair sharing gives it
// among all flows active on its links (progressive filling). Rates are recomputed only for the
// flows connected (through shared links) to a flow that started or finished, and only once per
// instant, however many flows changed at that instant; a component (of up to 64 flows) made of
// the same paths as one computed before takes its rates (the same, bit for bit) without filling
// again.
#pragma once

#include "ddlsim/core/units.hpp"
#include "ddlsim/sim/finish_queue.hpp"
#include "ddlsim/sim/huge_page_allocator.hpp"
#include "ddlsim/topologies/topology.hpp"

#include <array>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace ddlsim::sim {

using FlowId = std::uint32_t;

class FlowNetwork {
public:
  explicit FlowNetwork(const topo::Topology& topology);

  // A flow of `bytes` over `path` (link ids; must outlive the flow) starting its transfer phase
  // now. The caller has already waited out the latency. Returns its id; `tag` is handed back on
  // completion.
  FlowId start(const std::vector<topo::LinkId>& path, double bytes, std::uint64_t tag,
               Picoseconds now);

  // Lone flows. In large schedules nearly every flow has each link of its path to itself from
  // its start to its finish, and then its finish is known when it starts: its bytes at the
  // bottleneck bandwidth, exactly as start() would compute it. reserve() starts such a flow
  // outside the network: it only marks its links busy until that finish, which it returns, and
  // collect_finished() never reports it. A flow that wants one of those links before then (in
  // reserve() or start()) overlaps it; the caller must first hand the reserved flow in with
  // adopt(), which gives the network exactly the state start() would have left it in, and the
  // network then reports it like any other flow.
  //
  // If `bytes` > 0, every link of `path` is free (no flow on it, no live reservation) and the
  // flow would not finish at once, reserves them for a flow tagged `tag` starting its transfer
  // now and returns its finish (a reservation is live while its finish is after now).
  // Otherwise reserves nothing, returns INT64_MAX and appends to `overlapped` the tags of the
  // live reservations on `path`, each once: adopt() those before starting the flow with start().
  Picoseconds reserve(const std::vector<topo::LinkId>& path, double bytes, std::uint64_t tag,
                      Picoseconds now, std::vector<std::uint64_t>& overlapped);
  // Takes in the flow that reserve() reserved at `start` with these arguments, whose reservation
  // is still live, as if start() had started it then and it had been alone since: `bytes` left
  // as of `start`, the bottleneck rate, the same finish. A start() of the flow that overlapped
  // it must follow at the same instant (it marks their links for recomputation).
  void adopt(const std::vector<topo::LinkId>& path, double bytes, std::uint64_t tag,
             Picoseconds start);

  // Recomputes the rates of flows touched since the last call and returns the earliest time at
  // which some flow may finish (INT64_MAX when none is active).
  void update_rates(Picoseconds now);
  Picoseconds next_completion() const;

  // Removes every flow that has finished by `now` and appends its tag to `finished`, in the order
  // they finish (ties by flow id).
  void collect_finished(Picoseconds now, std::vector<std::uint64_t>& finished);

  // A hint only: brings the state of `path`'s links into cache before a start() on it.
  void prefetch_path(const std::vector<topo::LinkId>& path) const {
    for (topo::LinkId link : path) __builtin_prefetch(&links_[link], 1, 3);
    // Without a visible effect GCC 12 may take this function for one without side effects and
    // delete the calls to it (ipa-pure-const); the empty volatile asm keeps them.
    asm volatile("");
  }

  std::size_t active_flows() const { return active_count_; }
  // Largest number of flows that shared one link at any time, and bytes carried per link.
  std::size_t peak_flows_per_link() const { return peak_flows_per_link_; }
  const std::vector<double>& bytes_per_link() const;

private:
  struct Flow {
    const std::vector<topo::LinkId>* path = nullptr;
    double remaining = 0; // bytes left at `updated`
    double rate = 0;      // bytes per second
    Picoseconds updated = 0;
    Picoseconds finish = 0;
    std::uint64_t tag = 0;
    bool active = false;
    bool placed = false;           // on its links' lists (flows with bytes and a path)
    std::uint32_t mark = 0;        // epoch in which the component search reached it
    std::uint32_t frozen_mark = 0; // epoch in which progressive filling fixed its rate
    std::uint32_t node_base = 0;   // its nodes in link_nodes_: one per hop of its path
    std::uint32_t node_cap = 0;
    std::uint32_t path_id = 0; // its path's content (path_id()), set when placed
  };
  // The flows on a link form an intrusive doubly linked list through one node per (flow, hop),
  // so that a flow leaves its links in O(1) each, without a search. The order in which a link's
  // flows are visited does not change any rate: progressive filling gives every flow it freezes
  // at one link the same share, and the heaps order by value.
  struct LinkNode {
    FlowId flow;
    std::uint32_t prev;
    std::uint32_t next;
  };
  static constexpr std::uint32_t kNil = 0xffffffffu;

  FlowId new_flow(const std::vector<topo::LinkId>& path, double bytes, std::uint64_t tag,
                  Picoseconds now);
  // Puts flow `id` on the lists of its path's links (count, peak, and its bytes if `count_bytes`).
  void place(FlowId id, double bytes, bool count_bytes);
  void settle(Flow& flow, Picoseconds now);
  // The rate of the flow on `seed` if it is the only flow on each of its links; false (and
  // nothing changed) otherwise.
  bool rate_if_alone(topo::LinkId seed, Picoseconds now);
  void recompute_component(topo::LinkId seed, Picoseconds now);
  // Max-min rates of component_flows_ (settled to `now`) by progressive filling.
  void progressive_filling(Picoseconds now);
  // Progressive filling is a function of the component's multiset of paths alone (the link
  // bandwidths are fixed): the order in which a link's flows are visited changes nothing, and
  // the heap orders by value. So a component made of the same paths as one filled before gets
  // the same rates, bit for bit, and the fill is skipped. reuse_known_rates() gives them (true)
  // or leaves the key for remember_rates() after the fill (false).
  bool reuse_known_rates(Picoseconds now);
  void remember_rates();
  // A number per distinct path content (equal link sequences, equal numbers), so that the key of
  // a component is one number per flow instead of its links. Looked up by the path's address
  // first; the address only saves the content lookup when the links there are still the ones
  // numbered (a path freed and another made at its address is numbered by its own links).
  std::uint32_t path_id(const std::vector<topo::LinkId>& path);
  // A hint only: brings the flows `ids`, their list nodes and links into cache before they leave.
  void prefetch_leaving(const std::vector<FlowId>& ids) const;
  // When a flow with `remaining` bytes at `now` finishes at `rate`: the one formula for it.
  static Picoseconds finish_time(Picoseconds now, double remaining, double rate);
  void schedule_finish(FlowId id, Picoseconds now);

  const topo::Topology& topology_;
  std::vector<Flow> flows_;
  std::vector<FlowId> free_ids_;
  // Everything the engine reads or writes about a link, on one cache line: at 16k ranks the
  // per-link arrays no longer fit in the core's cache and each separate array was a miss.
  struct alignas(64) LinkState {
    std::uint32_t head = kNil;  // first node of its list of flows
    std::uint32_t count = 0;    // flows on it
    std::uint32_t mark = 0;     // epoch in which the component search reached it
    std::uint32_t unfrozen = 0; // progressive filling: flows on it not yet frozen
    double capacity_left = 0;   // progressive filling: bandwidth not yet given out
    double bandwidth = 0;       // bytes per second
    double bytes = 0;           // bytes carried
    // A lone flow's reservation (see reserve()), live while reserved_until > now.
    Picoseconds reserved_until = 0;
    std::uint64_t reserved_tag = 0;
  };
  static_assert(sizeof(LinkState) == 64);
  std::vector<LinkNode> link_nodes_;
  std::vector<LinkState, HugePageAllocator<LinkState>> links_;
  std::vector<topo::LinkId> dirty_links_;
  std::uint32_t epoch_ = 0;
  std::size_t active_count_ = 0;
  std::size_t peak_flows_per_link_ = 0;
  mutable std::vector<double> bytes_per_link_; // filled from links_ on request
  // Finish times of active flows (a flow with a finish is in it once).
  void push_finish(Picoseconds when, FlowId id);
  FinishQueue finishes_;
  std::vector<FlowId> due_; // scratch for collect_finished
  // Scratch for recompute_component, kept to avoid allocation per event.
  std::vector<FlowId> component_flows_;
  std::vector<topo::LinkId> component_links_;
  using ShareEntry = std::pair<double, topo::LinkId>;
  std::vector<ShareEntry> share_heap_;
  // Rates of components filled before, by key (see reuse_known_rates): one per path of the key.
  struct KnownRatesHash {
    std::size_t operator()(const std::vector<std::uint32_t>& key) const;
  };
  std::unordered_map<std::vector<std::uint32_t>, std::vector<double>, KnownRatesHash> known_rates_;
  std::vector<std::pair<std::uint32_t, FlowId>> component_paths_; // scratch: (path_id, flow)
  std::vector<std::uint32_t> known_key_;                          // scratch
  // path_id(): the links of each number, the number of each content, the last number seen at
  // each address.
  std::vector<std::vector<topo::LinkId>> path_links_;
  std::unordered_map<std::vector<topo::LinkId>, std::uint32_t, KnownRatesHash> path_ids_;
  std::unordered_map<const std::vector<topo::LinkId>*, std::uint32_t> path_id_at_;
};

} // namespace ddlsim::sim
