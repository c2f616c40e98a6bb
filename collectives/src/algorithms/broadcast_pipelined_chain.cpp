// broadcast "pipelined_chain": the buffer flows down the chain root -> root+1 -> ... in
// params.chunks chunks, each rank forwarding chunk j as soon as it has it.
//
// Cost (Thakur, Rabenseifner & Gropp 2005, sec. 4.2 discussion of pipelining; Träff 2008):
// with C chunks, (p - 2 + C)(α + (n/C)β): for large n and C ≈ √(n(p-2)β/α) it approaches nβ,
// independent of p. params.channels runs independent chains over slices of the buffer.
#include "common.hpp"
#include "registry.hpp"

namespace ddlsim::coll::gen {

namespace {

StepStream chain(Shape s) {
  Program prog(s.channel);
  const int v = s.mod(s.rank - s.root);
  const ElementRange slice = s.channel_share(s.all());
  auto piece = [&](int j) { return sub(slice, std::uint64_t(s.chunks), std::uint64_t(j)); };
  const int next = s.mod(s.rank + 1), previous = s.mod(s.rank - 1);
  if (v == 0) {
    co_yield prog.emit(copy_step(s.at(Buffer::input, slice), s.at(Buffer::output, slice)));
    if (s.p > 1)
      for (int j = 0; j < s.chunks; ++j)
        co_yield prog.emit(send_step(next, s.at(Buffer::input, piece(j))));
    co_return;
  }
  for (int j = 0; j < s.chunks; ++j) {
    co_yield prog.emit(recv_step(previous, s.at(Buffer::output, piece(j))));
    if (v + 1 < s.p)
      co_yield prog.emit(send_step(next, s.at(Buffer::output, piece(j))), prog.last());
  }
}

class PipelinedChain final : public Generator {
public:
  PipelinedChain()
      : Generator("pipelined_chain", Op::broadcast,
                  "chunks flow down a chain from the root; (p-2+C)(α + (n/C)β); uses chunks, "
                  "channels (Thakur et al. 2005; Träff 2008)") {}
  void check(const CollectiveCall& call) const override {
    check_common(call, true, true);
    check_params(call, kUsesNone);
  }
  StepStream program(const CollectiveCall& call, int rank, int channel) const override {
    return chain(shape_of(call, rank, channel));
  }
};

} // namespace

const Algorithm& broadcast_pipelined_chain() {
  static const PipelinedChain algorithm;
  return algorithm;
}

} // namespace ddlsim::coll::gen
