// Schedule: binds a call to its generator (or to loaded programs) and hands out program streams.
#include "ddlsim/collectives/schedule.hpp"

#include "ddlsim/core/input_error.hpp"
#include "ddlsim/core/suggest.hpp"

#include <stdexcept>

namespace ddlsim::coll {

namespace {

bool reduces(Op op) {
  return op == Op::all_reduce || op == Op::reduce_scatter || op == Op::reduce;
}

StepStream empty_stream() {
  co_return;
}

void check_node_rings(const CollectiveCall& call, const std::string& where) {
  for (const std::vector<int>& ring : call.node_rings) {
    if (ring.empty()) throw InputError(where, "node_rings: a ring must visit at least one rank");
    std::vector<bool> seen(ring.size(), false);
    for (int local : ring) {
      if (local < 0 || std::size_t(local) >= ring.size() || seen[std::size_t(local)])
        throw InputError(where, "node_rings: each ring must visit the local ranks 0.." +
                                    std::to_string(ring.size() - 1) + " once each");
      seen[std::size_t(local)] = true;
    }
    if (ring.size() != call.node_rings.front().size())
      throw InputError(where, "node_rings: every ring must have the same size");
  }
}

// Holds the loaded schedule alive for as long as the stream exists.
StepStream replay(std::shared_ptr<const MaterializedSchedule> loaded, int rank, int channel) {
  for (const Step& step :
       loaded->programs[static_cast<std::size_t>(rank)][static_cast<std::size_t>(channel)])
    co_yield step;
}

} // namespace

void check_call(const CollectiveCall& call) {
  const std::string where = "collective " + std::string(to_string(call.op));
  const std::size_t e = element_size(call.dtype);
  if (call.ranks < 1 || call.ranks > (1 << 24))
    throw InputError(where, "ranks must be from 1 to 16777216, not " + std::to_string(call.ranks));
  if (call.bytes % e != 0)
    throw InputError(where, std::to_string(call.bytes) + " bytes is not a whole number of " +
                                std::string(to_string(call.dtype)) + " elements (" +
                                std::to_string(e) + " B each); use a multiple of " +
                                std::to_string(e));
  if (call.root < 0 || call.root >= call.ranks)
    throw InputError(where, "root " + std::to_string(call.root) + " is not a rank of 0.." +
                                std::to_string(call.ranks - 1));
  if (!reduces(call.op) && call.reduction != Reduction::sum)
    throw InputError(where, "reduction " + std::string(to_string(call.reduction)) +
                                " has no meaning for " + std::string(to_string(call.op)) +
                                "; leave it at sum");
  if (call.params.chunks < 1 || call.params.chunks > 65536)
    throw InputError(where,
                     "chunks must be from 1 to 65536, not " + std::to_string(call.params.chunks));
  if (call.params.channels < 1 || call.params.channels > 256)
    throw InputError(where,
                     "channels must be from 1 to 256, not " + std::to_string(call.params.channels));
  if (call.op == Op::all_to_all && call.elements() % static_cast<std::uint64_t>(call.ranks) != 0)
    throw InputError(where, std::to_string(call.elements()) + " elements do not split evenly " +
                                "among " + std::to_string(call.ranks) +
                                " ranks; all_to_all needs a multiple of the rank count so every "
                                "pair exchanges the same count");
  if (!call.node_of_rank.empty() && call.node_of_rank.size() != std::size_t(call.ranks))
    throw InputError(where, "node_of_rank has " + std::to_string(call.node_of_rank.size()) +
                                " entries for " + std::to_string(call.ranks) + " ranks");
  check_node_rings(call, where);
  check_protocol(call.protocol, where + " protocol");
}

void check_protocol(const Protocol& protocol, const std::string& where) {
  const std::string name = "protocol \"" + protocol.name + "\"";
  // Written so that NaN fails too.
  if (!(protocol.payload_efficiency > 0 && protocol.payload_efficiency <= 1))
    throw InputError(where, name + ": payload_efficiency must be in (0, 1] (payload bytes per " +
                                "wire byte: LL 0.5, LL128 120/128, Simple 1), not " +
                                std::to_string(protocol.payload_efficiency));
  if (!(protocol.switch_efficiency > 0 && protocol.switch_efficiency <= 1))
    throw InputError(where, name + ": switch_efficiency must be in (0, 1] (payload bytes per " +
                                "NVLink byte of a switch step: NCCL's nvlsEfficiency, 0.85 " +
                                "Hopper, 0.74 Blackwell; 1 for none), not " +
                                std::to_string(protocol.switch_efficiency));
  if (protocol.intra_hop_ps < 0 || protocol.inter_hop_ps < 0)
    throw InputError(where, name + ": hop latencies must be at least 0, not " +
                                std::to_string(protocol.intra_hop_ps) + " ps (intra) and " +
                                std::to_string(protocol.inter_hop_ps) + " ps (inter)");
  if (protocol.net_post_ps < 0)
    throw InputError(where, name + ": net_post_ps must be at least 0 (NCCL's network post " +
                                "overhead per step: 1 us on Intel, 2 us on AMD CPUs, x3 for " +
                                "Simple; 0 for none), not " + std::to_string(protocol.net_post_ps) +
                                " ps");
  if (protocol.net_flush_ps < 0)
    throw InputError(where, name + ": net_flush_ps must be at least 0 (the receiving proxy's " +
                                "GPUDirect RDMA flush per network step; 0 for none), not " +
                                std::to_string(protocol.net_flush_ps) + " ps");
}

Schedule Schedule::make(CollectiveCall call) {
  check_call(call);
  const Algorithm* algorithm = find_algorithm(call.op, call.algorithm);
  if (!algorithm) {
    std::vector<std::string> names;
    for (const Algorithm* a : algorithms_for(call.op)) names.emplace_back(a->name());
    throw InputError("algorithm", "unknown " + std::string(to_string(call.op)) + " algorithm \"" +
                                      call.algorithm + "\"" + did_you_mean(call.algorithm, names) +
                                      "; valid: " + join_choices(names));
  }
  algorithm->check(call);
  Schedule schedule;
  schedule.ranks_ = algorithm->total_ranks(call);
  schedule.channels_ = algorithm->channels(call);
  schedule.algorithm_ = algorithm;
  schedule.protocols_ = {call.protocol};
  schedule.call_ = std::move(call);
  return schedule;
}

Schedule Schedule::from_materialized(MaterializedSchedule programs) {
  validate(programs);
  Schedule schedule;
  schedule.call_ = programs.call;
  schedule.protocols_ = programs.protocols.empty() ? std::vector<Protocol>{programs.call.protocol}
                                                   : programs.protocols;
  schedule.ranks_ = programs.ranks;
  schedule.channels_ = programs.channels;
  schedule.loaded_ = std::make_shared<const MaterializedSchedule>(std::move(programs));
  return schedule;
}

Schedule Schedule::composite(CollectiveCall call, std::shared_ptr<const ProgramSource> source) {
  Schedule schedule;
  schedule.protocols_ = source->protocols();
  if (schedule.protocols_.empty()) schedule.protocols_ = {call.protocol};
  for (const Protocol& protocol : schedule.protocols_) check_protocol(protocol, "schedule");
  if (schedule.protocols_.size() > 256)
    throw std::logic_error(
        "composite schedule: more than 256 protocols (Step::protocol is 8 bits)");
  schedule.call_ = std::move(call);
  schedule.ranks_ = source->ranks();
  schedule.channels_ = source->channels();
  schedule.source_ = std::move(source);
  return schedule;
}

std::uint64_t Schedule::buffer_bytes(int rank, Buffer buffer) const {
  if (source_) return source_->buffer_bytes(rank, buffer);
  switch (buffer) {
  case Buffer::input:
    return input_bytes(call_, rank);
  case Buffer::output:
    return output_bytes(call_, rank);
  case Buffer::scratch:
    if (loaded_) return loaded_->scratch_bytes[static_cast<std::size_t>(rank)];
    return algorithm_->scratch_bytes(call_, rank);
  }
  return 0;
}

StepStream Schedule::program(int rank, int channel) const {
  if (rank < 0 || rank >= ranks_ || channel < 0 || channel >= channels_)
    throw std::out_of_range("Schedule::program: no program for rank " + std::to_string(rank) +
                            " channel " + std::to_string(channel));
  if (loaded_) return replay(loaded_, rank, channel);
  if (source_) return source_->program(rank, channel);
  if (call_.bytes == 0) return empty_stream(); // nothing to move: no step at all
  return algorithm_->program(call_, rank, channel);
}

std::string_view Schedule::algorithm_name() const {
  if (source_) return source_->name();
  return algorithm_ ? algorithm_->name() : std::string_view(loaded_->algorithm);
}

MaterializedSchedule materialize(const Schedule& schedule) {
  MaterializedSchedule out;
  out.call = schedule.call();
  out.algorithm = std::string(schedule.algorithm_name());
  out.ranks = schedule.ranks();
  out.channels = schedule.channels();
  if (schedule.protocols().size() != 1 || schedule.protocols().front() != out.call.protocol)
    out.protocols = schedule.protocols();
  out.programs.resize(static_cast<std::size_t>(out.ranks));
  for (int r = 0; r < out.ranks; ++r) {
    out.scratch_bytes.push_back(schedule.buffer_bytes(r, Buffer::scratch));
    for (int c = 0; c < out.channels; ++c) {
      auto& steps = out.programs[static_cast<std::size_t>(r)].emplace_back();
      StepStream stream = schedule.program(r, c);
      for (Step step; stream.next(step);) steps.push_back(step);
    }
  }
  return out;
}

bool has_switch_steps(const Schedule& schedule) {
  for (int r = 0; r < schedule.ranks(); ++r)
    for (int c = 0; c < schedule.channels(); ++c) {
      StepStream stream = schedule.program(r, c);
      for (Step step; stream.next(step);)
        if (step.is_switch()) return true;
    }
  return false;
}

std::uint64_t input_bytes(const CollectiveCall& call, int rank) {
  if (rank < 0 || rank >= call.ranks) return 0;
  const std::uint64_t e = element_size(call.dtype);
  switch (call.op) {
  case Op::all_gather:
    return partition(call.elements(), std::uint64_t(call.ranks), std::uint64_t(rank)).size() * e;
  case Op::broadcast:
    return rank == call.root ? call.bytes : 0;
  case Op::send_recv:
    return rank == 0 ? call.bytes : 0;
  default:
    return call.bytes;
  }
}

std::uint64_t output_bytes(const CollectiveCall& call, int rank) {
  if (rank < 0 || rank >= call.ranks) return 0;
  const std::uint64_t e = element_size(call.dtype);
  switch (call.op) {
  case Op::reduce_scatter:
    return partition(call.elements(), std::uint64_t(call.ranks), std::uint64_t(rank)).size() * e;
  case Op::reduce:
  case Op::send_recv:
    return rank == call.root ? call.bytes : 0;
  default:
    return call.bytes;
  }
}

} // namespace ddlsim::coll
