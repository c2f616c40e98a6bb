// all_to_all "direct": every rank posts all p-1 sends at once, then all p-1 receives, with no
// ordering between them (NCCL's grouped ncclSend/ncclRecv all-to-all).
//
// Cost: α + n(p-1)/p·β when the network gives every rank its full injection bandwidth; on a
// shared fabric the p(p-1) concurrent flows contend (incast at every receiver), which is what
// the engines model. Sends go to r+1, r+2, ... and receives come from r-1, r-2, ... so that the
// k-th message of every rank has a different target.
#include "common.hpp"
#include "registry.hpp"

namespace ddlsim::coll::gen {

namespace {

StepStream direct(Shape s) {
  Program prog(s.channel);
  const int r = s.rank;
  co_yield prog.emit(copy_step(s.at(Buffer::input, s.block(r)), s.at(Buffer::output, s.block(r))));
  for (int step = 1; step < s.p; ++step)
    co_yield prog.emit(send_step(s.mod(r + step), s.at(Buffer::input, s.block(s.mod(r + step)))));
  for (int step = 1; step < s.p; ++step)
    co_yield prog.emit(recv_step(s.mod(r - step), s.at(Buffer::output, s.block(s.mod(r - step)))));
}

class Direct final : public Generator {
public:
  Direct()
      : Generator("direct", Op::all_to_all,
                  "all sends and receives posted at once; α + n(p-1)/p·β without contention "
                  "(NCCL-style grouped send/recv)") {}
  void check(const CollectiveCall& call) const override {
    check_common(call, false, false);
    check_params(call, kUsesNone);
  }
  StepStream program(const CollectiveCall& call, int rank, int channel) const override {
    return direct(shape_of(call, rank, channel));
  }
};

} // namespace

const Algorithm& all_to_all_direct() {
  static const Direct algorithm;
  return algorithm;
}

} // namespace ddlsim::coll::gen
