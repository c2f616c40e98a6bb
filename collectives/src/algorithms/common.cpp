#include "common.hpp"

#include "ddlsim/core/input_error.hpp"

#include <algorithm>
#include <bit>
#include <utility>

namespace ddlsim::coll::gen {

Shape shape_of(const CollectiveCall& call, int rank, int channel) {
  Shape s;
  s.p = call.ranks;
  s.rank = rank;
  s.channel = channel;
  s.channels = call.params.channels;
  s.chunks = call.params.chunks;
  s.root = call.root;
  s.n = call.elements();
  s.block_base = s.n / std::uint64_t(s.p);
  s.block_extra = s.n % std::uint64_t(s.p);
  s.e = element_size(call.dtype);
  s.reduction = call.reduction;
  return s;
}

ElementRange shift(ElementRange range, std::uint64_t origin) {
  return {range.begin - origin, range.end - origin};
}

ElementRange parts_span(std::uint64_t total, std::uint64_t parts, std::uint64_t a,
                        std::uint64_t b) {
  auto begin = [&](std::uint64_t i) {
    return i >= parts ? total : partition(total, parts, i).begin;
  };
  return {begin(a), begin(b)};
}

int log2_floor(int x) {
  return std::bit_width(static_cast<unsigned>(x)) - 1;
}
int pow2_floor(int x) {
  return 1 << log2_floor(x);
}

Fold::Fold(int ranks, bool keep_odd_rank)
    : p(ranks), pow2(pow2_floor(ranks)), rem(ranks - pow2_floor(ranks)), keep_odd(keep_odd_rank) {}

void Generator::reject(const std::string& why) const {
  throw InputError("algorithm " + std::string(name_), why);
}

void Generator::check_common(const CollectiveCall& call, bool uses_chunks, bool uses_channels,
                             bool supports_adasum) const {
  const std::string who = std::string(to_string(op_)) + " " + std::string(name_);
  if (!uses_chunks && call.params.chunks != 1)
    reject(who + " does not pipeline in chunks; set chunks to 1 (it is " +
           std::to_string(call.params.chunks) + ")");
  if (!uses_channels && call.params.channels != 1)
    reject(who + " runs on one channel; set channels to 1 (it is " +
           std::to_string(call.params.channels) + ")");
  if (!supports_adasum && call.reduction == Reduction::adasum)
    reject(who + " does not support adasum; use all_reduce recursive_doubling on a "
                 "power-of-two rank count");
}

void Generator::check_params(const CollectiveCall& call, unsigned uses) const {
  const std::string who = std::string(to_string(op())) + " " + std::string(name());
  const AlgorithmParams defaults;
  const AlgorithmParams& p = call.params;
  if (!(uses & kUsesGroupSizes) && !p.group_sizes.empty())
    reject(who + " does not use group_sizes; leave them empty (they shape blueconnect and "
                 "torus2d)");
  if (!(uses & kUsesServers) && (p.servers != 0 || p.dedicated_servers))
    reject(who + " has no servers; leave servers at 0 and dedicated_servers off (they shape "
                 "parameter_server)");
  if (!(uses & kUsesDensity) && p.density != defaults.density)
    reject(who + " is dense; leave density at its default " + std::to_string(defaults.density) +
           " (it shapes topk, hierarchical_topk and coarse_sparse)");
  if (!(uses & kUsesChunkBytes) && p.chunk_bytes != 0)
    reject(who + " does not use chunk_bytes; leave it at 0 (it shapes coarse_sparse)");
  if ((uses & kUsesDensity) && !(p.density > 0 && p.density <= 1))
    reject(who + " needs a density in (0, 1], the fraction of the data kept, not " +
           std::to_string(p.density));
}

} // namespace ddlsim::coll::gen
