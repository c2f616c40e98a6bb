// all_reduce "parameter_server": the sharded parameter server (Li et al. 2014, "Scaling
// distributed machine learning with the parameter server", OSDI; the push/pull of BytePS and
// TensorFlow's PS). The buffer is cut into S = params.servers shards (partition()); every worker
// pushes shard s to server s, the server sums the pushes in place, one after another
// (receive-reduce chain; server s starts with worker s+1, so that in each round the workers
// push to different servers), and sends the summed shard back to every worker (pull).
//
//  - co-located (default): servers are workers 0..S-1 (S <= ranks); server s adds the other
//    p-1 workers' shard s to its own input, in its output.
//  - dedicated (params.dedicated_servers): S extra ranks p..p+S-1 after the workers
//    (total_ranks = p + S), with no input or output, only a scratch buffer of one shard. On a
//    topology they run on the GPUs after the workers' (model a dedicated server host as a node).
// params.servers = 0 means one server (the classic single parameter server).
//
// Cost: a worker pushes (S-1)n/S (dedicated: n) bytes and pulls as much; a server receives
// (p-1)n/S (dedicated: pn/S) bytes one worker after another and sends as much back to all
// workers at once: about (p-1)(α + n/S·(β + γ)) + α + (p-1)n/S·β per server, and the workers'
// links carry 2n(S-1)/S. With S = 1 the server's link carries (p-1)n each way: the PS bottleneck.
// With S = p co-located it is a direct reduce-scatter + all-gather. params.channels runs
// independent copies over slices of every shard; chunks must be 1. avg: each server scales its
// shard.
#include "phases.hpp"
#include "registry.hpp"

namespace ddlsim::coll::gen {

namespace {

struct Servers {
  int count = 1;          // S
  bool dedicated = false; // servers are ranks p..p+S-1
  int rank_of(int shard, int workers) const { return dedicated ? workers + shard : shard; }
};

StepStream parameter_server(Shape s, Servers servers) {
  Program prog(s.channel);
  const int p = s.p, S = servers.count;
  // Channel c's slice of shard k.
  auto piece = [&s, S](int k) {
    return sub(partition(s.n, std::uint64_t(S), std::uint64_t(k)), std::uint64_t(s.channels),
               std::uint64_t(s.channel));
  };
  const Place in{Buffer::input, 0, s.e}, out{Buffer::output, 0, s.e};
  const bool worker = s.rank < p;
  const int shard = worker ? (servers.dedicated || s.rank >= S ? -1 : s.rank) : s.rank - p;

  if (worker) // push every shard that lives elsewhere
    for (int k = 0; k < S; ++k)
      if (k != shard) co_yield prog.emit(send_step(servers.rank_of(k, p), in.at(piece(k))));
  if (shard >= 0) { // serve shard `shard`: sum the pushes in place, then send it to every worker
    const ElementRange mine = piece(shard);
    // A dedicated server keeps the sum in its scratch, which holds the whole shard.
    const Place acc = worker ? out : Place{Buffer::scratch, 0, s.e};
    const std::uint64_t origin =
        worker ? 0 : partition(s.n, std::uint64_t(S), std::uint64_t(shard)).begin;
    const ElementRange at = shift(mine, origin);
    std::uint32_t last = kNoStep;
    if (worker && p == 1) {
      co_yield prog.emit(copy_step(in.at(mine), acc.at(at)));
      last = prog.last();
    }
    // Server k takes the pushes from workers k+1, k+2, ... (dedicated: k, k+1, ...), so that in
    // each round the workers push to different servers instead of queueing at one worker.
    for (int i = 0; i < p; ++i) {
      const int w = (shard + i + (worker ? 1 : 0)) % p;
      if (w == s.rank) continue;
      const bool first = last == kNoStep && !worker;
      if (first)
        co_yield prog.emit(recv_step(w, acc.at(at)));
      else
        co_yield prog.emit(
            recv_reduce_step(w, last == kNoStep ? in.at(mine) : acc.at(at), acc.at(at)), last);
      last = prog.last();
    }
    if (s.avg()) {
      co_yield prog.emit(scale_step(acc.at(at), 1.0 / p), last);
      last = prog.last();
    }
    for (int w = 0; w < p; ++w)
      if (w != s.rank) co_yield prog.emit(send_step(w, acc.at(at)), last);
  }
  if (worker) // pull every shard served elsewhere
    for (int k = 0; k < S; ++k)
      if (k != shard) co_yield prog.emit(recv_step(servers.rank_of(k, p), out.at(piece(k))));
}

class ParameterServer final : public PhasedGenerator {
public:
  ParameterServer()
      : PhasedGenerator("parameter_server", Op::all_reduce,
                        "push shards to S servers (co-located or dedicated), servers sum and send "
                        "back; ≈ (p-1)(α + n/S·(β + γ)) + (p-1)n/S·β; uses servers, "
                        "dedicated_servers, channels (Li et al. 2014)") {}
  void check(const CollectiveCall& call) const override {
    check_common(call, false, true);
    check_params(call, kUsesServers);
    const int S = call.params.servers;
    if (S < 0) reject("servers must be at least 1 (0 means 1), not " + std::to_string(S));
    if (!call.params.dedicated_servers && S > call.ranks)
      reject(std::to_string(S) + " co-located servers need at least as many ranks, not " +
             std::to_string(call.ranks) + "; use at most " + std::to_string(call.ranks) +
             " servers or set dedicated_servers");
    if (call.params.dedicated_servers && S > (1 << 20))
      reject("at most 1048576 dedicated servers, not " + std::to_string(S));
  }
  int total_ranks(const CollectiveCall& call) const override {
    return call.ranks + (call.params.dedicated_servers ? servers(call).count : 0);
  }
  std::uint64_t scratch_bytes(const CollectiveCall& call, int rank) const override {
    const Servers sv = servers(call);
    if (!sv.dedicated || rank < call.ranks) return 0;
    return partition(call.elements(), std::uint64_t(sv.count), std::uint64_t(rank - call.ranks))
               .size() *
           element_size(call.dtype);
  }
  StepStream program(const CollectiveCall& call, int rank, int channel) const override {
    return parameter_server(shape_of(call, rank, channel), servers(call));
  }

private:
  static Servers servers(const CollectiveCall& call) {
    return {call.params.servers == 0 ? 1 : call.params.servers, call.params.dedicated_servers};
  }
};

} // namespace

const Algorithm& all_reduce_parameter_server() {
  static const ParameterServer algorithm;
  return algorithm;
}

} // namespace ddlsim::coll::gen
