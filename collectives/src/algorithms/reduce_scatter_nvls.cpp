// reduce_scatter "nvls": NCCL's NVLS reduce-scatter inside one NVSwitch domain (NCCL 2.30.7
// src/device/reduce_scatter.h, RunWorkColl<ncclFuncReduceScatter, ..., NCCL_ALGO_NVLS, ...>;
// PTX ISA multimem.ld_reduce): rank i reads the sum of block i over all p GPUs from the switch
// (switch_reduce owned by i), chunk by chunk, one chunk per block in the switch at a time.
// Per GPU: n bytes up (every block once), n/p down; T ≈ C·2α + n/B·(1 + 1/C)-ish once the
// uplinks are the bottleneck (C = 1: 2α + n/B). avg: each owner scales its block. One node only
// (node_of_rank, when given, must name one node).
#include "nvls.hpp"
#include "phases.hpp"
#include "registry.hpp"

namespace ddlsim::coll::gen {
namespace {

StepStream nvls_reduce_scatter(Shape s) {
  Program prog(s.channel);
  const Place in{Buffer::input, 0, s.e};
  const std::uint64_t mine = s.block(s.rank).begin;
  const Place out{Buffer::output, 0, s.e};
  // Two chunks per block in the switch at a time, as nvls_all_reduce (nvls.cpp, kInFlight).
  std::vector<std::uint32_t> last(2 * std::size_t(s.p), kNoStep);
  Step step;
  for (int j = 0; j < s.chunks; ++j)
    for (int i = 0; i < s.p; ++i) {
      const ElementRange r =
          sub(s.channel_share(s.block(i)), std::uint64_t(s.chunks), std::uint64_t(j));
      if (r.size() == 0) continue;
      const bool owner = i == s.rank;
      const BufferRange dst = owner ? out.at(shift(r, mine)) : BufferRange{};
      if (s.p == 1)
        step = copy_step(in.at(r), dst);
      else
        step = switch_reduce_step(i, in.at(r), dst, s.p);
      std::uint32_t& previous = last[std::size_t(j % 2) * std::size_t(s.p) + std::size_t(i)];
      co_yield prog.emit(std::move(step), previous);
      previous = prog.last();
      if (owner && s.avg()) {
        step = scale_step(dst, 1.0 / s.p);
        co_yield prog.emit(std::move(step), prog.last());
      }
    }
}

class NvlsReduceScatter final : public OneDomainNvlsGenerator {
public:
  NvlsReduceScatter()
      : OneDomainNvlsGenerator(
            "nvls", Op::reduce_scatter,
            "NVSwitch in-switch reduction (NVLink SHARP) in one node: each rank "
            "reads the sum of its block from the switch; ≈ 2Cα + n·β (n up, n/p down per GPU); "
            "uses chunks, channels (NCCL src/device/reduce_scatter.h, NVLS)") {}

  StepStream program(const CollectiveCall& call, int rank, int channel) const override {
    return nvls_reduce_scatter(shape_of(call, rank, channel));
  }
};

} // namespace

const Algorithm& reduce_scatter_nvls() {
  static const NvlsReduceScatter algorithm;
  return algorithm;
}

} // namespace ddlsim::coll::gen
