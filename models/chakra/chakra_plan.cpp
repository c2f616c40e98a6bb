// plan_chakra: every rank's dependency graph in a dependency order, checked against the other
// ranks (collectives of a group agree, every send meets its receive), and lowered to ordered
// operations per channel (chakra.hpp says which channel runs what).
//
// The order: a rank's nodes in topological order, ties broken by their place in the file (the
// order the trace recorded them in: PyTorch's execution trace records operators as they run).
// Nodes ddlsim skips (metadata, memory) pass their dependencies on to the nodes that wait for
// them.
#include "ddlsim/collectives/algorithm.hpp"
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/core/sim_time.hpp"
#include "ddlsim/models/chakra.hpp"

#include <algorithm>
#include <cmath>
#include <queue>
#include <set>
#include <unordered_map>

namespace ddlsim::models {
namespace {

std::string at_node(const ChakraRankTrace& t, const ChakraNode& n) {
  return t.file + ": node " + std::to_string(n.id) + (n.name.empty() ? "" : " (" + n.name + ")");
}

std::string group_label(const std::string& group) {
  return group.empty() ? "every rank" : "process group \"" + group + "\"";
}

// The nodes of one rank in dependency order (positions into trace.nodes), each with the
// positions of the non-skipped nodes it waits for.
struct Ordered {
  std::vector<std::size_t> order;
  std::vector<std::vector<std::size_t>> waits; // per position
};

Ordered order_rank(const ChakraRankTrace& t, const ChakraOptions& options, std::uint64_t& dropped) {
  const std::size_t n = t.nodes.size();
  std::unordered_map<std::uint64_t, std::size_t> position;
  position.reserve(n);
  for (std::size_t i = 0; i < n; ++i)
    if (!position.emplace(t.nodes[i].id, i).second)
      throw InputError(at_node(t, t.nodes[i]),
                       "a second node with this id; every node of a rank's file needs its own id");
  std::vector<std::vector<std::size_t>> children(n);
  std::vector<std::vector<std::size_t>> parents(n);
  std::vector<std::size_t> pending(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<std::size_t>& p = parents[i];
    const ChakraNode& node = t.nodes[i];
    const std::size_t followed = options.control_dependencies ? node.deps.size() : node.data_deps;
    for (std::size_t d = 0; d < followed; ++d) {
      const std::uint64_t dep = node.deps[d];
      const auto it = position.find(dep);
      if (it == position.end()) {
        if (options.ignore_unknown_dependencies) {
          ++dropped;
          continue;
        }
        throw InputError(at_node(t, t.nodes[i]),
                         "depends on node " + std::to_string(dep) +
                             ", which this file does not have; remove the dependency or add "
                             "the node (dependencies name nodes of the same rank), or set " +
                             options.where +
                             "/ignore_unknown_dependencies to drop such "
                             "dependencies");
      }
      if (it->second == i) continue; // a node after itself: PyTorch's converter writes some
      p.push_back(it->second);
    }
    std::sort(p.begin(), p.end());
    p.erase(std::unique(p.begin(), p.end()), p.end());
    pending[i] = p.size();
    for (std::size_t q : p) children[q].push_back(i);
  }
  Ordered out;
  out.waits.resize(n);
  std::priority_queue<std::size_t, std::vector<std::size_t>, std::greater<>> ready;
  for (std::size_t i = 0; i < n; ++i)
    if (pending[i] == 0) ready.push(i);
  while (!ready.empty()) {
    const std::size_t i = ready.top();
    ready.pop();
    out.order.push_back(i);
    std::vector<std::size_t>& w = out.waits[i];
    for (std::size_t q : parents[i]) {
      if (t.nodes[q].kind == ChakraKind::skipped)
        w.insert(w.end(), out.waits[q].begin(), out.waits[q].end());
      else
        w.push_back(q);
    }
    std::sort(w.begin(), w.end());
    w.erase(std::unique(w.begin(), w.end()), w.end());
    for (std::size_t c : children[i])
      if (--pending[c] == 0) ready.push(c);
  }
  if (out.order.size() != n)
    for (std::size_t i = 0; i < n; ++i)
      if (pending[i] > 0)
        throw InputError(at_node(t, t.nodes[i]),
                         std::string("is on a dependency cycle (it waits, through its "
                                     "dependencies, for itself); remove one dependency of the "
                                     "cycle") +
                             (options.control_dependencies
                                  ? ", or set " + options.where +
                                        "/dependencies to \"data\" to follow data_deps only, as "
                                        "ASTRA-sim's feeder does"
                                  : ""));
  return out;
}

Picoseconds compute_time(const ChakraRankTrace& t, const ChakraNode& n,
                         const ChakraOptions& options, bool& roofline) {
  roofline = false;
  if (n.duration_micros > 0) {
    if (n.duration_micros > std::uint64_t(kMaxSimulatedPs / kPsPerUs))
      throw InputError(at_node(t, n), "duration_micros " + std::to_string(n.duration_micros) +
                                          " is longer than a simulation can last");
    return static_cast<Picoseconds>(n.duration_micros) * kPsPerUs;
  }
  if (n.num_ops == 0) return 0;
  if (!options.gpu)
    throw InputError(at_node(t, n), "gives num_ops but no duration_micros: its time comes from "
                                    "the GPU's roofline, and the cluster's GPUs have no model; "
                                    "name a gpu_model the presets know");
  // The roofline ASTRA-sim's feeder applies to such nodes: the slower of the peak compute and
  // the memory traffic. Peaks are the datasheet's (dense 16-bit tensor FLOP/s, memory
  // bandwidth), so this is the kernel at its best.
  roofline = true;
  const GpuSpec& gpu = *options.gpu;
  const double seconds = std::max(static_cast<double>(n.num_ops) / gpu.fp16_flops,
                                  static_cast<double>(n.tensor_size) / gpu.memory_bytes_per_second);
  return checked_ps(seconds * static_cast<double>(kPsPerSecond));
}

struct Ref {
  int channel = 0;
  std::uint32_t op = 0; // index among the channel's ops
};

} // namespace

std::string default_chakra_algorithm(coll::Op op) {
  switch (op) {
  case coll::Op::all_to_all:
    return "pairwise";
  case coll::Op::broadcast:
    return "pipelined_chain";
  case coll::Op::reduce:
    return "binomial";
  default:
    return "ring";
  }
}

ChakraPlan plan_chakra(const std::vector<ChakraRankTrace>& traces, const ChakraOptions& options) {
  ChakraPlan plan;
  plan.ranks = static_cast<int>(traces.size());
  for (const ChakraRankTrace& t : traces) plan.files.push_back(t.file);
  const std::size_t ranks = traces.size();
  std::vector<int> everyone(ranks);
  for (std::size_t r = 0; r < ranks; ++r) everyone[r] = static_cast<int>(r);
  for (const auto& [name, members] : options.groups) {
    std::set<int> seen;
    for (int m : members)
      if (m < 0 || m >= plan.ranks || !seen.insert(m).second)
        throw InputError(options.where + "/process_groups/" + name,
                         "rank " + std::to_string(m) +
                             (m < 0 || m >= plan.ranks
                                  ? " is not one of the trace's " + std::to_string(ranks) + " ranks"
                                  : " is listed twice"));
  }
  auto members_of = [&](const ChakraRankTrace& t, const ChakraNode& n) -> const std::vector<int>& {
    if (n.group.empty()) return everyone;
    const auto it = options.groups.find(n.group);
    if (it == options.groups.end())
      throw InputError(at_node(t, n), "pg_name \"" + n.group +
                                          "\" names no process group; give its ranks under " +
                                          options.where + "/process_groups");
    return it->second;
  };

  // Order every rank; gather the (group, type) pairs the collectives use.
  std::vector<Ordered> ordered(ranks);
  std::set<std::pair<std::string, coll::Op>> lanes;
  bool p2p = false;
  for (std::size_t r = 0; r < ranks; ++r) {
    ordered[r] = order_rank(traces[r], options, plan.dropped_dependencies);
    for (const ChakraNode& n : traces[r].nodes) {
      if (n.kind == ChakraKind::collective) {
        const std::vector<int>& members = members_of(traces[r], n);
        if (std::find(members.begin(), members.end(), int(r)) == members.end())
          throw InputError(at_node(traces[r], n),
                           "is a collective on " + group_label(n.group) +
                               ", which does not list rank " + std::to_string(r) +
                               "; fix the group's ranks or the node's pg_name");
        lanes.insert({n.group, n.op});
      }
      if (n.kind == ChakraKind::send || n.kind == ChakraKind::recv) {
        if (n.peer >= plan.ranks || n.peer == int(r))
          throw InputError(at_node(traces[r], n),
                           std::string(n.kind == ChakraKind::send ? "comm_dst" : "comm_src") +
                               " is " + std::to_string(n.peer) +
                               ": the peer must be another of "
                               "the trace's " +
                               std::to_string(ranks) + " ranks");
        p2p = true;
      }
    }
  }
  std::map<std::pair<std::string, coll::Op>, int> lane_channel;
  std::map<std::string, int> kind_index;
  auto kind_of = [&](const std::string& name) {
    auto [it, added] = kind_index.emplace(name, static_cast<int>(plan.kinds.size()));
    if (added) plan.kinds.push_back({name, 0, 0});
    return it->second;
  };
  plan.channel_names = {"gpu", "cpu", "send_recv"};
  plan.channel_kind = {-1, -1, p2p ? kind_of("send_recv") : -1};
  for (const auto& lane : lanes) {
    lane_channel[lane] = static_cast<int>(plan.channel_names.size());
    const std::string op(coll::to_string(lane.second));
    plan.channel_names.push_back(op + " on " + (lane.first.empty() ? "all" : lane.first));
    plan.channel_kind.push_back(kind_of(op));
  }
  plan.channels = static_cast<int>(plan.channel_names.size());

  // Lower each rank: its ops per channel with their dependencies (still as op refs).
  plan.programs.assign(ranks, std::vector<std::vector<ChakraOp>>(std::size_t(plan.channels)));
  std::vector<std::vector<std::pair<int, std::vector<Ref>>>> refs(ranks); // node -> op
  // Per rank and group, its collective ops in order (for matching across ranks).
  std::vector<std::map<std::string, std::vector<std::pair<Ref, std::size_t>>>> group_ops(ranks);
  std::vector<std::vector<Ref>> node_ref(ranks);
  for (std::size_t r = 0; r < ranks; ++r) {
    const ChakraRankTrace& t = traces[r];
    auto& programs = plan.programs[r];
    node_ref[r].assign(t.nodes.size(), Ref{-1, 0});
    std::array<std::optional<Ref>, 2> stream_last; // GPU, CPU
    std::map<std::string, Ref> group_last;
    for (std::size_t i : ordered[r].order) {
      const ChakraNode& n = t.nodes[i];
      ++plan.nodes;
      if (n.kind == ChakraKind::skipped) {
        ++plan.skipped;
        continue;
      }
      ChakraOp op;
      op.kind = n.kind;
      op.node = n.id;
      std::vector<Ref> deps;
      for (std::size_t q : ordered[r].waits[i]) deps.push_back(node_ref[r][q]);
      int channel = kChakraP2pChannel;
      if (n.kind == ChakraKind::compute) {
        channel = n.cpu ? kChakraCpuChannel : kChakraGpuChannel;
        bool roofline = false;
        op.duration = compute_time(t, n, options, roofline);
        plan.roofline_nodes += roofline ? 1 : 0;
        plan.cpu_nodes += n.cpu ? 1 : 0;
        std::optional<Ref>& last = stream_last[std::size_t(channel)];
        if (last) deps.push_back(*last); // one kernel after another
        last = Ref{channel, std::uint32_t(programs[std::size_t(channel)].size())};
      } else if (n.kind == ChakraKind::collective) {
        channel = lane_channel.at({n.group, n.op});
        const auto it = group_last.find(n.group);
        if (it != group_last.end()) deps.push_back(it->second); // the communicator's stream
        const Ref self{channel, std::uint32_t(programs[std::size_t(channel)].size())};
        group_last[n.group] = self;
        group_ops[r][n.group].push_back({self, i});
      } else {
        op.peer = n.peer;
        op.bytes = n.bytes;
      }
      std::sort(deps.begin(), deps.end(), [](const Ref& a, const Ref& b) {
        return a.channel != b.channel ? a.channel < b.channel : a.op < b.op;
      });
      deps.erase(std::unique(deps.begin(), deps.end(),
                             [](const Ref& a, const Ref& b) {
                               return a.channel == b.channel && a.op == b.op;
                             }),
                 deps.end());
      for (const Ref& d : deps) op.deps.push_back({d.channel, d.op});
      node_ref[r][i] = Ref{channel, std::uint32_t(programs[std::size_t(channel)].size())};
      programs[std::size_t(channel)].push_back(std::move(op));
    }
  }

  // Collectives: the k-th of a group on every member is one call.
  std::map<std::tuple<std::string, coll::Op, std::uint64_t>, int> call_index;
  std::set<std::string> groups;
  for (std::size_t r = 0; r < ranks; ++r)
    for (const auto& g : group_ops[r]) groups.insert(g.first);
  for (const std::string& group : groups) {
    const std::vector<int>& members = group.empty() ? everyone : options.groups.at(group);
    const int first = members.front();
    const auto& reference = group_ops[std::size_t(first)][group];
    for (std::size_t m = 0; m < members.size(); ++m) {
      const std::size_t r = std::size_t(members[m]);
      const auto& mine = group_ops[r][group];
      const std::size_t common = std::min(mine.size(), reference.size());
      for (std::size_t k = 0; k < common; ++k) {
        const ChakraNode& a = traces[std::size_t(first)].nodes[reference[k].second];
        const ChakraNode& b = traces[r].nodes[mine[k].second];
        if (a.op != b.op || a.bytes != b.bytes)
          throw InputError(at_node(traces[r], b),
                           "collective number " + std::to_string(k + 1) + " of " +
                               group_label(group) + " on this rank is " + b.comm_type_name +
                               " of " + std::to_string(b.bytes) + " bytes, but on rank " +
                               std::to_string(first) + " (" +
                               at_node(traces[std::size_t(first)], a) + ") " + a.comm_type_name +
                               " of " + std::to_string(a.bytes) +
                               " bytes; a group's members must issue the same collectives in "
                               "the same order");
      }
      if (mine.size() != reference.size()) {
        const bool more = mine.size() > reference.size();
        const std::size_t rr = more ? r : std::size_t(first);
        const auto& extra = (more ? mine : reference)[common];
        throw InputError(at_node(traces[rr], traces[rr].nodes[extra.second]),
                         "collective number " + std::to_string(common + 1) + " of " +
                             group_label(group) + " has no counterpart on rank " +
                             std::to_string(more ? first : int(r)) + ", which issues " +
                             std::to_string(std::min(mine.size(), reference.size())) +
                             " collectives on the group; every member must issue each one");
      }
    }
    for (std::size_t k = 0; k < reference.size(); ++k) {
      const ChakraRankTrace& t = traces[std::size_t(first)];
      const ChakraNode& n = t.nodes[reference[k].second];
      const auto key = std::make_tuple(group, n.op, n.bytes);
      auto it = call_index.find(key);
      if (it == call_index.end()) {
        ChakraPlan::Call c;
        c.members = members;
        c.call.op = n.op;
        c.call.ranks = static_cast<int>(members.size());
        c.call.dtype = options.dtype;
        const std::uint64_t element = coll::element_size(options.dtype);
        c.call.bytes = (n.bytes + element - 1) / element * element; // whole elements
        const auto a = options.algorithms.find(n.op);
        c.call.algorithm =
            a != options.algorithms.end() ? a->second : default_chakra_algorithm(n.op);
        if (!options.node_of_rank.empty())
          for (int m : members) c.call.node_of_rank.push_back(options.node_of_rank[std::size_t(m)]);
        const coll::Algorithm* algorithm = coll::find_algorithm(n.op, c.call.algorithm);
        const std::string key_where =
            options.where + "/algorithms/" + std::string(coll::to_string(n.op));
        if (!algorithm)
          throw InputError(key_where, "no " + std::string(coll::to_string(n.op)) +
                                          " generator is named \"" + c.call.algorithm +
                                          "\" (`ddlsim schedule --list` lists them)");
        try {
          algorithm->check(c.call);
        } catch (const InputError& e) {
          throw InputError(at_node(t, n), "its " + c.call.algorithm + " " +
                                              std::string(coll::to_string(n.op)) + " on " +
                                              group_label(group) + " cannot run: " + e.what() +
                                              " (change " + key_where + ")");
        }
        if (algorithm->channels(c.call) != 1)
          throw InputError(key_where, "\"" + c.call.algorithm +
                                          "\" runs on several channels; a trace's collective "
                                          "runs on one: name a one-channel generator");
        it = call_index.emplace(key, static_cast<int>(plan.calls.size())).first;
        plan.calls.push_back(std::move(c));
      }
      ChakraCallKind& kind = plan.kinds[std::size_t(kind_of(std::string(coll::to_string(n.op))))];
      ++kind.calls;
      kind.bytes += n.bytes;
      for (std::size_t m = 0; m < members.size(); ++m) {
        const Ref self = group_ops[std::size_t(members[m])][group][k].first;
        ChakraOp& op = plan.programs[std::size_t(members[m])][std::size_t(self.channel)][self.op];
        op.collective = it->second;
        op.local = static_cast<int>(m);
      }
    }
  }

  // Point-to-point: per ordered pair, the sender's messages in order meet the receiver's.
  if (p2p) {
    std::map<std::pair<int, int>, std::vector<std::pair<std::size_t, std::size_t>>> sends, recvs;
    for (std::size_t r = 0; r < ranks; ++r) {
      const ChakraRankTrace& t = traces[r];
      for (std::size_t i : ordered[r].order) {
        const ChakraNode& n = t.nodes[i];
        if (n.kind == ChakraKind::send) sends[{int(r), n.peer}].push_back({r, i});
        if (n.kind == ChakraKind::recv) recvs[{n.peer, int(r)}].push_back({r, i});
      }
    }
    ChakraCallKind& kind = plan.kinds[std::size_t(kind_of("send_recv"))];
    auto check_pair = [&](std::pair<int, int> pair) {
      const auto& s = sends[pair];
      const auto& v = recvs[pair];
      for (std::size_t k = 0; k < std::max(s.size(), v.size()); ++k) {
        if (k >= v.size() || k >= s.size()) {
          const bool send = k < s.size();
          const auto [r, i] = send ? s[k] : v[k];
          const ChakraNode& n = traces[r].nodes[i];
          throw InputError(at_node(traces[r], n),
                           std::string(send ? "a send to rank " : "a receive from rank ") +
                               std::to_string(n.peer) + " (tag " + std::to_string(n.tag) + ", " +
                               std::to_string(n.bytes) + " bytes) has no matching " +
                               (send ? "COMM_RECV_NODE on rank " : "COMM_SEND_NODE on rank ") +
                               std::to_string(n.peer) + "; add it or remove this node");
        }
        const ChakraNode& a = traces[s[k].first].nodes[s[k].second];
        const ChakraNode& b = traces[v[k].first].nodes[v[k].second];
        if (a.tag != b.tag || a.bytes != b.bytes)
          throw InputError(at_node(traces[s[k].first], a),
                           "message number " + std::to_string(k + 1) + " from rank " +
                               std::to_string(pair.first) + " to rank " +
                               std::to_string(pair.second) + " is tag " + std::to_string(a.tag) +
                               ", " + std::to_string(a.bytes) + " bytes, but the receiver's (" +
                               at_node(traces[v[k].first], b) + ") is tag " +
                               std::to_string(b.tag) + ", " + std::to_string(b.bytes) +
                               " bytes; a pair's messages are matched in order, so both ranks "
                               "must list them in the same order with the same sizes");
        ++kind.calls;
        kind.bytes += a.bytes;
      }
    };
    for (const auto& s : sends) check_pair(s.first);
    for (const auto& v : recvs)
      if (!sends.count(v.first)) check_pair(v.first);
  }

  // Dependencies as step indices: each op's steps are its markers (one per dependency), then
  // its body (collectives: the launch, the generator's steps, a join). An op's last step ends it.
  std::vector<std::vector<std::vector<std::uint32_t>>> last_step(ranks);
  std::map<std::pair<int, int>, std::uint32_t> generator_steps;
  for (std::size_t r = 0; r < ranks; ++r) {
    last_step[r].resize(std::size_t(plan.channels));
    for (int c = 0; c < plan.channels; ++c) {
      std::uint32_t index = 0;
      for (ChakraOp& op : plan.programs[r][std::size_t(c)]) {
        index += static_cast<std::uint32_t>(op.deps.size());
        if (op.kind == ChakraKind::collective) {
          auto [it, added] = generator_steps.try_emplace({op.collective, op.local}, 0);
          if (added) { // the generator's steps for this place in this call, counted once
            const ChakraPlan::Call& call = plan.calls[std::size_t(op.collective)];
            const coll::Algorithm* algorithm =
                coll::find_algorithm(call.call.op, call.call.algorithm);
            coll::StepStream stream = algorithm->program(call.call, op.local, 0);
            for (coll::Step s; stream.next(s);) ++it->second;
          }
          index += it->second + 2; // launch, generator steps, join
        } else {
          index += 1;
        }
        last_step[r][std::size_t(c)].push_back(index - 1);
        op.last_step = index - 1;
      }
    }
    for (auto& program : plan.programs[r])
      for (ChakraOp& op : program)
        for (auto& dep : op.deps) dep.second = last_step[r][std::size_t(dep.first)][dep.second];
  }
  return plan;
}

std::string chakra_step_owner(const ChakraPlan& plan, int rank, int channel, std::uint32_t step) {
  if (rank < 0 || rank >= plan.ranks || channel < 0 || channel >= plan.channels)
    return "rank " + std::to_string(rank);
  const std::string& file = plan.files[std::size_t(rank)];
  for (const ChakraOp& op : plan.programs[std::size_t(rank)][std::size_t(channel)])
    if (step <= op.last_step) return file + ": node " + std::to_string(op.node);
  return file;
}

} // namespace ddlsim::models
