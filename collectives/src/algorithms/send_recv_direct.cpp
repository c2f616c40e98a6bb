// send_recv "direct": rank 0 sends its buffer to `root` in one message.
//
// Cost: α + nβ. With root 0 the message stays on rank 0 as a local copy; ranks other than 0 and
// the root have empty programs.
#include "common.hpp"
#include "registry.hpp"

namespace ddlsim::coll::gen {

namespace {

StepStream direct(Shape s) {
  Program prog(s.channel);
  const BufferRange in = s.at(Buffer::input, s.all()), out = s.at(Buffer::output, s.all());
  if (s.root == 0) {
    if (s.rank == 0) co_yield prog.emit(copy_step(in, out));
  } else if (s.rank == 0) {
    co_yield prog.emit(send_step(s.root, in));
  } else if (s.rank == s.root) {
    co_yield prog.emit(recv_step(0, out));
  }
}

class Direct final : public Generator {
public:
  Direct() : Generator("direct", Op::send_recv, "one message from rank 0 to root; α + nβ") {}
  void check(const CollectiveCall& call) const override {
    check_common(call, false, false);
    check_params(call, kUsesNone);
  }
  StepStream program(const CollectiveCall& call, int rank, int channel) const override {
    return direct(shape_of(call, rank, channel));
  }
};

} // namespace

const Algorithm& send_recv_direct() {
  static const Direct algorithm;
  return algorithm;
}

} // namespace ddlsim::coll::gen
