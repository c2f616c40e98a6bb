// all_gather "nvls": NCCL's NVLS all-gather inside one NVSwitch domain (NCCL 2.30.7
// src/device/all_gather.h, RunWorkColl<ncclFuncAllGather, ..., NCCL_ALGO_NVLS, ...>; PTX ISA
// multimem.st): rank i sends its block up to the switch once (switch_multicast owned by i) and
// the switch writes it to every GPU's output, chunk by chunk. Per GPU: n/p bytes up, n down;
// C = 1: 2α + n/B. One node only (node_of_rank, when given, must name one node).
#include "nvls.hpp"
#include "phases.hpp"
#include "registry.hpp"

namespace ddlsim::coll::gen {
namespace {

StepStream nvls_all_gather(Shape s) {
  Program prog(s.channel);
  const Place in{Buffer::input, 0, s.e}, out{Buffer::output, 0, s.e};
  const std::uint64_t mine = s.block(s.rank).begin;
  // Two chunks per block in the switch at a time, as nvls_all_reduce (nvls.cpp, kInFlight).
  std::vector<std::uint32_t> last(2 * std::size_t(s.p), kNoStep);
  Step step;
  for (int j = 0; j < s.chunks; ++j)
    for (int i = 0; i < s.p; ++i) {
      const ElementRange r =
          sub(s.channel_share(s.block(i)), std::uint64_t(s.chunks), std::uint64_t(j));
      if (r.size() == 0) continue;
      const bool owner = i == s.rank;
      if (s.p == 1)
        step = copy_step(in.at(shift(r, mine)), out.at(r));
      else
        step = switch_multicast_step(i, owner ? in.at(shift(r, mine)) : BufferRange{}, out.at(r),
                                     r.size() * s.e, s.p);
      std::uint32_t& previous = last[std::size_t(j % 2) * std::size_t(s.p) + std::size_t(i)];
      co_yield prog.emit(std::move(step), previous);
      previous = prog.last();
    }
}

class NvlsAllGather final : public OneDomainNvlsGenerator {
public:
  NvlsAllGather()
      : OneDomainNvlsGenerator(
            "nvls", Op::all_gather,
            "NVSwitch multicast (NVLink SHARP) in one node: each rank sends its "
            "block to the switch once, which writes it to every GPU; n/p·β up, n·β "
            "down per GPU, ≈ 2Cα + n·β; uses chunks, channels (NCCL "
            "src/device/all_gather.h, NVLS)") {}

  StepStream program(const CollectiveCall& call, int rank, int channel) const override {
    return nvls_all_gather(shape_of(call, rank, channel));
  }
};

} // namespace

const Algorithm& all_gather_nvls() {
  static const NvlsAllGather algorithm;
  return algorithm;
}

} // namespace ddlsim::coll::gen
