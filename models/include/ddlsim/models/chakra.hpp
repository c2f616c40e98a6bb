// Chakra execution traces (the format ASTRA-sim replays; mlcommons/chakra) as a workload: one
// file per rank, each a GlobalMetadata then Node messages, every message preceded by its length
// as a varint. The nodes of each rank form a dependency graph (data and control dependencies);
// chakra_plan() checks the ranks against each other and lowers them to one plan, and
// chakra_schedule() turns the plan into one coll::Schedule that every engine runs, like the
// training and large-model workloads (docs/workloads.md#chakra-execution-traces).
//
// The lowering, per rank (channels of the schedule):
//  0 the GPU stream: compute nodes in dependency order, one after another (one kernel at a time);
//  1 the CPU: compute nodes with is_cpu_op, one after another;
//  2 point-to-point: sends and receives, posted as their dependencies allow; the k-th send from
//    rank a to rank b meets the k-th receive at b from a, so both sides must list a pair's
//    messages in the same (tag, size) order;
//  3.. one per (process group, collective type): the generator's program of the rank's place in
//    its group. A group's collectives run one after another whatever their type, as NCCL runs a
//    communicator's kernels on one stream; the k-th collective of a group on every member is one
//    call.
// A node waits for all its dependencies: zero-time marker steps on its channel, one per
// dependency, wait for them (step.hpp's cross-program waits), then the node's steps run.
#pragma once

#include "ddlsim/collectives/call.hpp"
#include "ddlsim/collectives/schedule.hpp"
#include "ddlsim/core/units.hpp"
#include "ddlsim/models/gpu.hpp"

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace ddlsim::models {

// What ddlsim does with a node (the Node's type, and is_cpu_op for compute nodes).
enum class ChakraKind : std::uint8_t {
  compute,    // COMP_NODE, or any node with is_cpu_op (ASTRA-sim replays CPU operators by
              // their duration whatever their type): the GPU or the CPU for its duration
  collective, // COMM_COLL_NODE: a collective on its process group
  send,       // COMM_SEND_NODE: a message to comm_dst
  recv,       // COMM_RECV_NODE: a message from comm_src
  skipped     // METADATA_NODE, MEM_LOAD_NODE, MEM_STORE_NODE: no time; dependencies pass through
};

// One node of a rank's trace as ddlsim reads it (attribute names as ASTRA-sim's Chakra feeder,
// mlcommons/chakra src/feeder/et_feeder_node.cpp, reads them).
struct ChakraNode {
  std::uint64_t id = 0;
  std::string name;
  ChakraKind kind = ChakraKind::compute;
  std::string type_name;              // the schema's name of its type, for messages
  std::vector<std::uint64_t> deps;    // data_deps, then ctrl_deps
  std::size_t data_deps = 0;          // how many of `deps` are data_deps
  std::uint64_t duration_micros = 0;  // the measured duration (compute nodes)
  std::uint64_t num_ops = 0;          // FLOPs (compute nodes without a duration)
  std::uint64_t tensor_size = 0;      // bytes the kernel reads and writes (with num_ops)
  bool cpu = false;                   // is_cpu_op
  coll::Op op = coll::Op::all_reduce; // comm_type (collectives)
  std::string comm_type_name;         // the schema's name of comm_type, for messages
  std::uint64_t bytes = 0;            // comm_size
  int peer = -1;                      // send: comm_dst; recv: comm_src
  std::int64_t tag = 0;               // comm_tag
  std::string group;                  // pg_name; empty: every rank of the trace
};

struct ChakraRankTrace {
  std::string file;    // as named, for messages
  std::string version; // GlobalMetadata's
  std::vector<ChakraNode> nodes;
};

// Parses one rank's file contents. Throws InputError naming `file` (and the node id where there
// is one) for a truncated or malformed message, an unknown node type or comm_type, or a
// communication node without the attribute it needs.
ChakraRankTrace parse_chakra_rank(std::string_view bytes, const std::string& file);

// The files of a trace given as a prefix: PREFIX.0.et, PREFIX.1.et, ... up to the first missing
// rank. Throws InputError at `where` when PREFIX.0.et does not exist.
std::vector<std::filesystem::path> chakra_prefix_files(const std::filesystem::path& prefix,
                                                       const std::string& where);

// A writer for tests and tools: nodes as the schema has them (raw type and attribute values, so
// that bad traces can be written too).
struct ChakraAttrOut {
  std::string name;
  std::variant<std::int64_t, std::uint64_t, std::int32_t, bool, std::string> value;
};
struct ChakraNodeOut {
  std::uint64_t id = 0;
  std::string name;
  int type = 4; // COMP_NODE
  std::vector<std::uint64_t> ctrl_deps, data_deps;
  std::uint64_t duration_micros = 0;
  std::vector<ChakraAttrOut> attrs;
};
// One rank's file: GlobalMetadata{version}, then the nodes, each length-delimited.
std::string encode_chakra_rank(const std::vector<ChakraNodeOut>& nodes,
                               const std::string& version = "0.0.4");

// How to lower a trace.
struct ChakraOptions {
  // Process groups by pg_name: the ranks of each (ASTRA-sim's --comm-group-configuration file
  // has the same shape). A collective without pg_name runs on every rank.
  std::map<std::string, std::vector<int>> groups;
  // The generator per collective type (ddlsim's registry names).
  std::map<coll::Op, std::string> algorithms;
  coll::DataType dtype = coll::DataType::bf16;
  std::vector<int> node_of_rank; // the cluster node of each rank (hierarchical generators)
  std::optional<GpuSpec> gpu;    // compute nodes given by num_ops run on its roofline
  // A dependency on a node the rank's file does not have: an error, or (true) dropped. Traces
  // converted from PyTorch keep dependencies on operators the converter filtered out.
  bool ignore_unknown_dependencies = false;
  // Whether ctrl_deps order nodes too (else only data_deps, as ASTRA-sim's feeder reads them:
  // mlcommons/chakra src/feeder/et_feeder.cpp).
  bool control_dependencies = true;
  std::string where = "/workload"; // the scenario's key, for messages
};
// The generator a collective type runs by default: "ring" where ddlsim has one, else the
// direct one (all-to-all: "pairwise"; broadcast: "pipelined_chain", NCCL's chain; reduce:
// "binomial").
std::string default_chakra_algorithm(coll::Op op);

// One operation of a rank's program on one channel.
struct ChakraOp {
  ChakraKind kind = ChakraKind::compute;
  std::uint64_t node = 0;   // the node id
  Picoseconds duration = 0; // compute
  int collective = -1;      // index into ChakraPlan::calls
  int local = 0;            // collective: the rank's place in its group
  int peer = -1;            // send, recv: global rank
  std::uint64_t bytes = 0;  // send, recv
  // What it waits for: (channel, index of the step on that channel) of the same rank.
  std::vector<std::pair<int, std::uint32_t>> deps;
  std::uint32_t last_step = 0; // the index of its last step on its channel
};

// A collective type's figures for the report.
struct ChakraCallKind {
  std::string name; // "all_reduce", ..., "send_recv"
  std::uint64_t calls = 0, bytes = 0;
};

struct ChakraPlan {
  int ranks = 0;
  std::vector<std::string> files; // per rank, for messages
  int channels = 0;
  // Distinct collective calls (on local ranks 0..n-1) and their members (global ranks).
  struct Call {
    coll::CollectiveCall call;
    std::vector<int> members;
  };
  std::vector<Call> calls;
  std::vector<std::vector<std::vector<ChakraOp>>> programs; // [rank][channel] in order
  // The name of each channel from 3 on: "<op> on <group>"; and its kind's index in `kinds`.
  std::vector<std::string> channel_names;
  std::vector<int> channel_kind; // per channel; -1 for compute and CPU
  std::vector<ChakraCallKind> kinds;
  std::uint64_t nodes = 0, skipped = 0, roofline_nodes = 0, cpu_nodes = 0;
  std::uint64_t dropped_dependencies = 0; // on unknown nodes, with ignore_unknown_dependencies
};
inline constexpr int kChakraGpuChannel = 0, kChakraCpuChannel = 1, kChakraP2pChannel = 2,
                     kChakraFirstGroupChannel = 3;

// Checks the ranks against each other and lowers them. Throws InputError naming the file, the
// node id and the fix: a dependency on an unknown node, a cycle, a collective whose ranks
// disagree on its type or size or that its group does not list, a send without a matching
// receive (or one posted in another order), an unknown process group.
ChakraPlan plan_chakra(const std::vector<ChakraRankTrace>& ranks, const ChakraOptions& options);

// Every collective starts with a step of `launch_overhead` (a calibration's; 0: none).
// "FILE: node ID (NAME)" of the node whose steps include step `step` of (rank, channel): where
// a run that cannot finish stopped.
std::string chakra_step_owner(const ChakraPlan& plan, int rank, int channel, std::uint32_t step);

coll::Schedule chakra_schedule(std::shared_ptr<const ChakraPlan> plan,
                               Picoseconds launch_overhead = 0);

// The iteration's figures from its executed steps: per rank, when its GPU stream computed and
// when each channel had a step in flight.
class ChakraRecorder {
public:
  explicit ChakraRecorder(const ChakraPlan& plan);
  void add(int rank, int channel, coll::StepKind kind, Picoseconds start, Picoseconds end);
  void clear();

  struct Interval {
    Picoseconds start = 0, end = 0;
  };
  // [rank][channel]: the intervals of its steps (compute: those that take time).
  const std::vector<std::vector<std::vector<Interval>>>& busy() const { return busy_; }

private:
  std::vector<std::vector<std::vector<Interval>>> busy_;
};

// Per rank (then the max over ranks):
//   compute   the time its GPU stream computed
//   exposed   the time some communication step of it was in flight while its GPU stream did
//             not compute; per kind the same for that kind's steps alone (kinds overlap, so
//             their sum may exceed the total)
struct ChakraIteration {
  Picoseconds time = 0;
  Picoseconds compute = 0, exposed = 0, communication = 0;
  struct Kind {
    ChakraCallKind what;
    Picoseconds busy = 0, exposed = 0;
  };
  std::vector<Kind> kinds;
};
ChakraIteration summarize_chakra(const ChakraPlan& plan, const ChakraRecorder& recorder,
                                 Picoseconds time);

} // namespace ddlsim::models
