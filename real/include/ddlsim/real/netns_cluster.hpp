// An emulated cluster on one Linux host: one network namespace per rank (its "node") with one
// veth interface into a bridge that lives in a namespace of its own (the "switch"). Both
// directions of every veth are shaped with tc: a token bucket (tbf) at the node's NIC rate, and,
// where the kernel has the netem qdisc, a delay and a loss rate. Ranks listen on addresses this
// cluster assigns (10.77.x.y/16) inside namespaces it created, and nothing else is contacted.
//
// Everything is torn down by the destructor, and on SIGINT, SIGTERM and SIGHUP by a handler
// that deletes the namespaces before the process dies (rank processes die with their parent).
// SIGKILL leaves them behind: the namespaces carry their creator's pid in their names
// (ddlsim<pid>sw, ddlsim<pid>r<rank>), and building a cluster first deletes those whose creator
// is gone.
// Needs root and iproute2; available() says why not otherwise.
#pragma once

#include "ddlsim/real/host_backend.hpp"

#include <string>
#include <vector>

namespace ddlsim::real {

struct LinkShape {
  double rate_gbps = 0;    // per direction; 0 = unshaped
  double delay_us = 0;     // one way, per direction of the node's link
  double loss_percent = 0; // per direction
};

class NetnsCluster {
public:
  // "" when this process may build namespaces, veths, a bridge and tc qdiscs; else why not.
  static std::string unavailable_reason();

  // Builds the cluster: links[r] shapes rank r's link (both directions). Throws
  // std::runtime_error naming the command that failed (after tearing down what was built).
  explicit NetnsCluster(const std::vector<LinkShape>& links);
  ~NetnsCluster();
  NetnsCluster(const NetnsCluster&) = delete;
  NetnsCluster& operator=(const NetnsCluster&) = delete;

  const std::vector<RankPlace>& places() const { return places_; }
  // What is emulated and what is not (e.g. "delay not emulated: no netem qdisc in this kernel").
  const std::string& description() const { return description_; }
  // Whether the kernel had netem, so delays and losses are really applied.
  bool has_netem() const { return has_netem_; }
  // Namespaces of earlier runs killed without cleanup that building this cluster deleted.
  const std::vector<std::string>& reaped() const { return reaped_; }

  // Deletes every namespace named by this class whose creating process no longer exists, and
  // returns their names. Needs root; quietly does nothing without /run/netns.
  static std::vector<std::string> reap_orphans();

private:
  void teardown();

  std::string prefix_;
  std::vector<std::string> namespaces_;
  std::vector<RankPlace> places_;
  std::string description_;
  bool has_netem_ = false;
  std::vector<std::string> reaped_;
};

} // namespace ddlsim::real
