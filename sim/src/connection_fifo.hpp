// ConnectionFifo: the bytes of the transfers of one connection move one after another.
//
// NCCL moves the data of one (sender, receiver, channel) connection through its NCCL_STEPS = 8
// buffer slots in order (src/include/device.h, src/device/prims_simple.h: the sender waits for
// slot `step` to be free, fills it, posts the tail; the receiver consumes slot after slot), so the
// steps of one connection are serialised on its link while their latencies overlap: the proxy
// and the NIC already carry step k while step k+1's data is prepared. The analytic evaluations
// therefore let the transfers of one connection wait out their latencies together but start their
// bytes only when the previous transfer of the same connection has put all of its bytes through;
// transfers of different connections still share a link's bandwidth (max-min). Without this,
// the chunks of one step share the link and all arrive at its end, so the next hop of a pipeline
// cannot start on the first chunk while the others are still moving.
//
// A connection is a (sending program, receiving program) pair: programs are (rank, channel) and a
// send matches a receive on the same channel (rule 2 of step.hpp). Switch steps are group
// operations, not connections, and never pass through here.
#pragma once

#include "ring_window.hpp"

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace ddlsim::sim::detail {

class ConnectionFifo {
public:
  explicit ConnectionFifo(std::size_t programs) : first_(programs) {}

  // Transfer `id` of the connection (sender, receiver) is ready to move its bytes: true if it may
  // start now (the connection was idle; it is now busy), false if it was queued behind the
  // transfer in progress.
  bool acquire(std::uint32_t sender, std::uint32_t receiver, std::uint32_t id) {
    Connection& connection = find(sender, receiver);
    if (!connection.busy) {
      connection.busy = true;
      return true;
    }
    connection.queue.push_back(id);
    return false;
  }
  // The transfer in progress on (sender, receiver) has put its bytes through: true with the next
  // queued transfer in `next` (the connection stays busy with it), false if none is queued (the
  // connection is idle).
  bool release(std::uint32_t sender, std::uint32_t receiver, std::uint32_t& next) {
    Connection& connection = find(sender, receiver);
    if (connection.queue.empty()) {
      connection.busy = false;
      return false;
    }
    next = connection.queue.front();
    connection.queue.pop_front();
    return true;
  }

private:
  struct Connection {
    bool busy = false;
    RingWindow<std::uint32_t> queue;
  };
  struct First {
    std::uint32_t receiver = kNone;
    Connection connection;
  };
  static constexpr std::uint32_t kNone = 0xFFFFFFFFu;

  // Most programs send to one peer: its connection sits in the sender's slot, the others in a
  // map.
  Connection& find(std::uint32_t sender, std::uint32_t receiver) {
    First& first = first_[sender];
    if (first.receiver == receiver) return first.connection;
    if (first.receiver == kNone) {
      first.receiver = receiver;
      return first.connection;
    }
    return rest_[(std::uint64_t{sender} << 32) | receiver];
  }

  std::vector<First> first_;
  std::unordered_map<std::uint64_t, Connection> rest_;
};

} // namespace ddlsim::sim::detail
