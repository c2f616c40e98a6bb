// Steps: the instructions of a rank's program in a Schedule.
//
// A Schedule gives every (rank, channel) pair a program: an ordered list of Steps. Execution rules,
// the same for every executor:
//  1. A step may start once the previous step of the same program has started (in-order issue),
//     every step listed in `deps` (indices into the same program) has completed, and, when
//     `wait_channel` is set, step `wait_step` of the program (same rank, wait_channel) has
//     completed. Cross-program waits are how a training workload joins its compute stream to its
//     communication streams (a bucket's all-reduce waits for the backward step that filled it).
//  2. The k-th send from rank a to rank b on channel c matches the k-th recv / recv_reduce at b
//     from a on channel c. Matching sends and receives carry the same byte count.
//     A send and its receive belong to one call and carry the same `protocol`.
//  3. A send completes when its matching receive has completed; a receive completes when all its
//     bytes have arrived (and, for recv_reduce, been reduced); local steps complete when their
//     compute is done.
//  4. Switch steps (switch_reduce, switch_multicast) are group operations done by a reducing
//     switch (NVSwitch NVLS): every member of the group, the owner `peer` included, posts one step
//     of the same kind naming the owner, the group size (param) and the byte count. The k-th
//     switch step of a kind from rank m to owner o on channel c belongs to instance k of
//     (o, c, kind); the instance runs once all `param` members (the owner among them) posted,
//     and every member's step completes when it is done (switch_groups.hpp).
// Byte counts are explicit so that executors need no knowledge of the algorithm.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace ddlsim::coll {

// The buffers of a rank. input and output are the collective's; scratch is generator-owned
// temporary memory whose size the Schedule declares per rank.
enum class Buffer : std::uint8_t { input, output, scratch };

struct BufferRange {
  Buffer buffer = Buffer::input;
  std::uint64_t offset = 0; // bytes
  std::uint64_t bytes = 0;

  std::uint64_t end() const { return offset + bytes; }
  bool operator==(const BufferRange&) const = default;
};

enum class StepKind : std::uint8_t {
  send,        // send src to peer
  recv,        // receive from peer into dst
  recv_reduce, // receive from peer, dst = src (op) incoming
  reduce,      // dst = dst (op) src, local
  copy,        // dst = src, local
  scale,       // dst = src * param, local (average = sum scaled by 1/ranks)
  compress,    // dst = codec(src [, aux]), local
  decompress,  // dst = dst (op) inverse_codec(src [, aux]), local
  compute,     // the rank's GPU computes for `param` picoseconds (forward, backward, optimizer
               // work of a training workload); touches no buffer, bytes = 0
  // In-switch reduction (rule 4): each member's src is read by the switch, which reduces them
  // (sum) and writes the result to the owner's dst. Non-owners have no dst. Wire: each member's
  // path to the switch carries `bytes` once; the switch's path to the owner carries it once.
  switch_reduce,
  // In-switch multicast (rule 4): the owner's src goes up to the switch once, which writes it
  // to every member's dst (the owner's dst may be empty: NVLS writes it anyway, so the owner's
  // downlink is charged). Non-owners have no src.
  switch_multicast,
};

// How compress/decompress transform data. Byte layouts (element size e of the call's dtype):
//  topk:          compress: the k largest-magnitude elements of src as (uint32 index, value)
//                 pairs, k = dst.bytes / (4 + e), ties broken by lower index; decompress:
//                 scatter-adds the pairs of src into the dense dst (indices relative to dst).
//  fp16_cast:     compress: src values rounded to fp16 (2 bytes each); decompress: dst += them.
//  chunk_norms:   compress: for each chunk of `param` bytes of src, its L2 norm as fp32 in dst.
//  chunk_select:  compress: from src (dense, chunks of `param` bytes) the chunks whose norms in
//                 aux (fp32 per chunk) are the largest, count = dst.bytes / param, in ascending
//                 chunk order (ties by lower index); decompress: writes them back into dst at
//                 their chunks (chosen again from aux, which must hold the same norms).
enum class Codec : std::uint8_t { none, topk, fp16_cast, chunk_norms, chunk_select };

inline constexpr std::size_t kMaxStepDeps = 4;
// Step::wait_channel when the step waits for no other program.
inline constexpr std::uint16_t kNoWait = 0xFFFF;

struct Step {
  StepKind kind = StepKind::send;
  Codec codec = Codec::none;
  std::uint8_t dep_count = 0;
  std::uint8_t protocol = 0; // index into Schedule::protocols(): the call's protocol (0 for a
                             // generator's steps; a composite gives each collective its own)
  std::uint16_t channel = 0;
  std::uint16_t wait_channel = kNoWait; // rule 1: also wait for step wait_step of this channel's
  std::int32_t peer = -1;               // send, recv, recv_reduce; switch steps: the owner
  std::uint32_t wait_step = 0;          // program (same rank); see wait_channel
  BufferRange src{};       // send: data sent; recv_reduce / reduce: local operand; copy, scale,
                           // compress, decompress: input
  BufferRange dst{};       // recv, recv_reduce, reduce, copy, scale, compress, decompress: output
  BufferRange aux{};       // chunk_select only: the norms
  std::uint64_t bytes = 0; // bytes on the wire (send / recv) or bytes processed (local steps)
  double param = 0;        // scale: factor; chunk_norms / chunk_select: chunk bytes;
                           // compute: duration in picoseconds (an integral value);
                           // switch steps: members in the group (an integer >= 2)
  std::array<std::uint32_t, kMaxStepDeps> deps{}; // deps[dep_count..] stay zero
  // compute: the share of its duration (0..1) spent in memory-bound kernels (norms,
  // elementwise, casts, their launch gaps), which communication kernels beside it slow far less
  // than tensor-core GEMMs (sim/compute_slowdown.hpp); 0: all GEMM-like. Other kinds: 0.
  double memory_bound_share = 0;

  bool is_send() const { return kind == StepKind::send; }
  bool is_receive() const { return kind == StepKind::recv || kind == StepKind::recv_reduce; }
  bool is_switch() const {
    return kind == StepKind::switch_reduce || kind == StepKind::switch_multicast;
  }
  bool is_local() const { return !is_send() && !is_receive() && !is_switch(); }
  bool has_wait() const { return wait_channel != kNoWait; }
  // Field-wise; unused fields must hold their defaults (generators and loaders keep them so).
  bool operator==(const Step&) const = default;
};

std::string_view to_string(StepKind kind);
std::string_view to_string(Buffer buffer);
std::string_view to_string(Codec codec);

} // namespace ddlsim::coll
