// The packet engine's run: wires the elements of the network together and owns the event loop.
//
//   switch_port.hpp        ports: crossing a link, buffers and admission, drops, ECN, PFC
//   sender.hpp             transport, sending side: round robin, loss recovery, ACK handling
//   congestion_control.hpp DCTCP's window and DCQCN's rate
//   receiver.hpp           transport, receiving side: completion (loss-tolerant too), ACK/NACK/CNP
//   schedule_driver.hpp    the Schedule's programs: steps start, rendezvous and complete
//
// The elements share the Network (network.hpp) and call each other through the run, whose
// type they take as a template parameter: every call is resolved at compile time (no virtual
// call), and one switch over the event kind dispatches an event to its element.
#include "ddlsim/sim/packet/packet_engine.hpp"

#include "congestion_control.hpp"
#include "network.hpp"
#include "receiver.hpp"
#include "schedule_driver.hpp"
#include "sender.hpp"
#include "switch_port.hpp"

#include <algorithm>

namespace ddlsim::sim::packet {
namespace {

// The run is the network and its elements: it derives from each element class (which takes
// the run's type as a template parameter), so that an element reaches the shared state and the
// other elements at fixed offsets from one object. (Elements holding references to them cost
// a tenth of the packet rate: every access loaded the reference again.)
class PacketRun : public Network,
                  public SwitchPorts<PacketRun>,
                  public Sender<PacketRun>,
                  public Congestion<PacketRun>,
                  public Receiver<PacketRun>,
                  public ScheduleDriver<PacketRun> {
public:
  PacketRun(const topo::Topology& topology, topo::Router& router, const coll::Schedule& schedule,
            const PacketOptions& options)
      : Network(topology, router, schedule, options), ScheduleDriver<PacketRun>(network()) {
    switch_ports().build();
  }

  PacketTiming run() {
    Network& net = network();
    driver().start();
    bool stopped = false;
    while (!net.events.empty() && !stopped) {
      // Once per instant, before time moves on: compute steps get their new ends.
      if (net.events.next_time() != net.now && driver().apply_slowdowns()) continue;
      net.now = net.events.next_time();
      const Event event = net.events.pop();
      prefetch_ahead();
      if (++net.result.events % kProgressInterval == 0 && net.options.progress &&
          !net.options.progress(net.now, net.result.events))
        stopped = true;
      handle(event);
    }
    if (stopped)
      net.result.complete = false;
    else
      driver().check_finished();
    net.result.time = net.last_completion;
    collect_link_stats();
    return std::move(net.result);
  }

  // How the elements reach each other.
  Network& network() { return *this; }
  const Network& network() const { return *this; }
  SwitchPorts<PacketRun>& switch_ports() { return *this; }
  Sender<PacketRun>& sender() { return *this; }
  Congestion<PacketRun>& congestion() { return *this; }
  Receiver<PacketRun>& receiver() { return *this; }
  ScheduleDriver<PacketRun>& driver() { return *this; }

private:
  // An arrival's packet, the port it arrives at and the lossless port after that (whose room it
  // checks when it is sent on at once) were last touched thousands of events ago at 1,024 GPUs:
  // fetching them a few events ahead overlaps those misses with the handlers before it. A hint
  // only: the order is the queue's.
  void prefetch_ahead() {
    constexpr std::size_t kDistance = 4;
    const Event* soon = network().events.ahead(kDistance);
    if (soon == nullptr || soon->kind != EventKind::arrive) return;
    __builtin_prefetch(&network().pool[soon->arrive.packet]);
    if (soon->arrive.next_port != kNil)
      __builtin_prefetch(&network().ports[soon->arrive.next_port]);
    if (soon->arrive.credit_port != kNil)
      __builtin_prefetch(&network().ports[soon->arrive.credit_port]);
  }

  void handle(const Event& event) {
    Network& net = network();
    switch (event.kind) {
    case EventKind::tx_done:
      switch_ports().on_tx_done(event.port.port);
      break;
    case EventKind::arrive:
      // The packet and the port it arrives at are both likely cold: start fetching the port
      // while the packet loads.
      if (event.arrive.next_port != kNil) __builtin_prefetch(&net.ports[event.arrive.next_port]);
      switch_ports().on_arrive(event.arrive.packet);
      break;
    case EventKind::local_done:
      driver().complete(StepRef{event.step.program, event.step.index});
      break;
    case EventKind::reduce_done:
      driver().finish_steps(event.message.message);
      break;
    case EventKind::timeout:
      sender().on_timeout(event.timer);
      break;
    case EventKind::message_start:
      sender().activate(event.message.message);
      break;
    case EventKind::pace:
      sender().on_pace(event.port.port);
      break;
    case EventKind::pfc_frame:
      switch_ports().on_pfc_frame(event.pfc);
      break;
    case EventKind::rate_timer:
      congestion().on_rate_timer(event.timer);
      break;
    case EventKind::loss_timeout:
      receiver().on_loss_timeout(event.timer);
      break;
    case EventKind::compute_done:
      driver().complete(StepRef{event.step.program, event.step.index}, false);
      break;
    case EventKind::slowed_done:
      driver().finish_slowed(event.timer.message, event.timer.generation);
      break;
    }
  }

  void collect_link_stats() {
    Network& net = network();
    // Until the last packet left its port: retransmissions and ACKs may still be on the wire
    // after the last step completed (pending timers are not).
    const double span = static_cast<double>(
        std::max<Picoseconds>(std::max(net.last_completion, net.last_tx_end), 1));
    for (topo::LinkId id = 0; id < net.ports.size(); ++id) {
      const Port& port = net.ports[id];
      if (port.tx_bytes == 0 && port.drops == 0) continue;
      net.result.links.push_back(
          LinkStats{id, port.tx_bytes, static_cast<double>(port.tx_bytes) * port.ps_per_byte / span,
                    port.peak_queued, port.drops});
    }
  }
};

} // namespace

PacketTiming simulate_packet(const topo::Topology& topology, topo::Router& router,
                             const coll::Schedule& schedule, const PacketOptions& options) {
  return PacketRun(topology, router, schedule, options).run();
}

} // namespace ddlsim::sim::packet
