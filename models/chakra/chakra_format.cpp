// Reading and writing Chakra trace files (et_def.proto beside this file): a varint length, then
// the message, first a GlobalMetadata, then one Node after another. Attribute names and the
// fields ASTRA-sim's feeder reads them from (mlcommons/chakra src/feeder/et_feeder_node.cpp):
// is_cpu_op (bool), num_ops, tensor_size, comm_type, comm_size, comm_src, comm_dst, comm_tag
// (integers; the feeder reads int64_val or int32_val or uint64_val depending on the name and the
// version, and traces in the wild use each, so any integer field is taken), pg_name (string).
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/models/chakra.hpp"
#include "et_def.pb.h"

#include <google/protobuf/io/coded_stream.h>

#include <array>
#include <fstream>
#include <limits>

namespace ddlsim::models {
namespace {

namespace pb = ::ChakraProtoMsg;

std::string node_where(const std::string& file, std::uint64_t id) {
  return file + ": node " + std::to_string(id);
}

// The integer an attribute holds, whichever integer field it uses; nullopt for others.
std::optional<std::int64_t> integer_of(const pb::AttributeProto& a) {
  switch (a.value_case()) {
  case pb::AttributeProto::kInt32Val:
    return a.int32_val();
  case pb::AttributeProto::kInt64Val:
    return a.int64_val();
  case pb::AttributeProto::kUint32Val:
    return a.uint32_val();
  case pb::AttributeProto::kUint64Val:
    if (a.uint64_val() > std::uint64_t(std::numeric_limits<std::int64_t>::max())) return {};
    return static_cast<std::int64_t>(a.uint64_val());
  case pb::AttributeProto::kSint32Val:
    return a.sint32_val();
  case pb::AttributeProto::kSint64Val:
    return a.sint64_val();
  case pb::AttributeProto::kFixed32Val:
    return a.fixed32_val();
  case pb::AttributeProto::kFixed64Val:
    if (a.fixed64_val() > std::uint64_t(std::numeric_limits<std::int64_t>::max())) return {};
    return static_cast<std::int64_t>(a.fixed64_val());
  case pb::AttributeProto::kSfixed32Val:
    return a.sfixed32_val();
  case pb::AttributeProto::kSfixed64Val:
    return a.sfixed64_val();
  default:
    return {};
  }
}

std::int64_t integer_attr(const pb::AttributeProto& a, const std::string& where, std::int64_t min,
                          std::int64_t max) {
  const std::optional<std::int64_t> v = integer_of(a);
  if (!v)
    throw InputError(where, "attribute \"" + a.name() +
                                "\" must hold an integer (int64_val, uint64_val, int32_val...); "
                                "fix the trace's writer");
  if (*v < min || *v > max)
    throw InputError(where, "attribute \"" + a.name() + "\" is " + std::to_string(*v) +
                                ", out of range [" + std::to_string(min) + ", " +
                                std::to_string(max) + "]");
  return *v;
}

// The collective types ddlsim runs, by the schema's CollectiveCommType value.
std::optional<coll::Op> op_of(int comm_type) {
  switch (comm_type) {
  case pb::ALL_REDUCE:
    return coll::Op::all_reduce;
  case pb::REDUCE:
    return coll::Op::reduce;
  case pb::ALL_GATHER:
    return coll::Op::all_gather;
  case pb::BROADCAST:
    return coll::Op::broadcast;
  case pb::ALL_TO_ALL:
    return coll::Op::all_to_all;
  case pb::REDUCE_SCATTER:
    return coll::Op::reduce_scatter;
  default:
    return {};
  }
}

ChakraNode read_node(const pb::Node& n, const std::string& file) {
  const std::string where = node_where(file, n.id());
  ChakraNode node;
  node.id = n.id();
  node.name = n.name();
  node.duration_micros = n.duration_micros();
  node.deps.assign(n.data_deps().begin(), n.data_deps().end());
  node.data_deps = node.deps.size();
  node.deps.insert(node.deps.end(), n.ctrl_deps().begin(), n.ctrl_deps().end());
  const int type = static_cast<int>(n.type());
  if (!pb::NodeType_IsValid(type) || type == pb::INVALID_NODE)
    throw InputError(where, "node type " + std::to_string(type) +
                                " is not one of Chakra's (METADATA_NODE 1 .. COMM_COLL_NODE 7; "
                                "schema/protobuf/et_def.proto); fix the trace's writer");
  node.type_name = pb::NodeType_Name(n.type());
  switch (type) {
  case pb::COMP_NODE:
    node.kind = ChakraKind::compute;
    break;
  case pb::COMM_COLL_NODE:
    node.kind = ChakraKind::collective;
    break;
  case pb::COMM_SEND_NODE:
    node.kind = ChakraKind::send;
    break;
  case pb::COMM_RECV_NODE:
    node.kind = ChakraKind::recv;
    break;
  default:
    node.kind = ChakraKind::skipped;
  }
  constexpr std::int64_t kMaxRank = 1 << 20, kMaxBytes = std::int64_t{1} << 50;
  bool has_type = false, has_size = false, has_peer = false, known_type = false;
  for (const pb::AttributeProto& a : n.attr()) {
    const std::string& name = a.name();
    if (name == "is_cpu_op") {
      if (a.value_case() != pb::AttributeProto::kBoolVal)
        throw InputError(where, "attribute \"is_cpu_op\" must hold bool_val");
      node.cpu = a.bool_val();
    } else if (name == "num_ops") {
      node.num_ops =
          std::uint64_t(integer_attr(a, where, 0, std::numeric_limits<std::int64_t>::max()));
    } else if (name == "tensor_size") {
      node.tensor_size = std::uint64_t(integer_attr(a, where, 0, kMaxBytes));
    } else if (name == "comm_type") {
      const auto v = integer_attr(a, where, 0, std::numeric_limits<int>::max());
      if (!pb::CollectiveCommType_IsValid(int(v)))
        throw InputError(where, "comm_type " + std::to_string(v) +
                                    " is not one of Chakra's (ALL_REDUCE 0 .. BARRIER 9)");
      node.comm_type_name = pb::CollectiveCommType_Name(pb::CollectiveCommType(v));
      const std::optional<coll::Op> op = op_of(int(v));
      if (op) node.op = *op;
      has_type = true;
      known_type = op.has_value();
    } else if (name == "comm_size") {
      node.bytes = std::uint64_t(integer_attr(a, where, 0, kMaxBytes));
      has_size = true;
    } else if (name == "comm_src" && node.kind == ChakraKind::recv) {
      node.peer = int(integer_attr(a, where, 0, kMaxRank));
      has_peer = true;
    } else if (name == "comm_dst" && node.kind == ChakraKind::send) {
      node.peer = int(integer_attr(a, where, 0, kMaxRank));
      has_peer = true;
    } else if (name == "comm_tag") {
      node.tag = integer_attr(a, where, std::numeric_limits<std::int64_t>::min(),
                              std::numeric_limits<std::int64_t>::max());
    } else if (name == "pg_name") {
      if (a.value_case() == pb::AttributeProto::kStringVal)
        node.group = a.string_val();
      else if (const auto v = integer_of(a))
        node.group = std::to_string(*v);
      else
        throw InputError(where, "attribute \"pg_name\" must hold string_val");
    }
  }
  // ASTRA-sim replays a CPU operator by its duration whatever its type (the c10d wrappers
  // PyTorch records around a collective are COMM_COLL_NODEs on the CPU, without comm_type).
  if (node.cpu && node.kind != ChakraKind::skipped) node.kind = ChakraKind::compute;
  const bool communicates = node.kind == ChakraKind::collective || node.kind == ChakraKind::send ||
                            node.kind == ChakraKind::recv;
  if (node.kind == ChakraKind::collective && !has_type)
    throw InputError(where, "a COMM_COLL_NODE needs the attribute \"comm_type\"");
  if (node.kind == ChakraKind::collective && !known_type)
    throw InputError(where, "comm_type " + node.comm_type_name +
                                " is not simulated (ddlsim runs ALL_REDUCE, REDUCE, ALL_GATHER, "
                                "BROADCAST, ALL_TO_ALL and REDUCE_SCATTER)");
  if (communicates && !has_size)
    throw InputError(where, "a " + node.type_name + " needs the attribute \"comm_size\" (bytes)");
  if (communicates && node.kind != ChakraKind::collective && !has_peer)
    throw InputError(where, "a " + node.type_name + " needs the attribute \"" +
                                (node.kind == ChakraKind::send ? "comm_dst" : "comm_src") +
                                "\" (the peer's rank)");
  return node;
}

} // namespace

ChakraRankTrace parse_chakra_rank(std::string_view bytes, const std::string& file) {
  ChakraRankTrace trace;
  trace.file = file;
  if (bytes.size() >= std::size_t(std::numeric_limits<int>::max()))
    throw InputError(file, "larger than protobuf's 2 GiB limit; split the trace");
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const std::uint8_t*>(bytes.data()),
                                            static_cast<int>(bytes.size()));
  in.SetTotalBytesLimit(std::numeric_limits<int>::max());
  bool metadata = true;
  std::uint64_t previous = 0;
  std::size_t count = 0;
  while (in.CurrentPosition() < static_cast<int>(bytes.size())) {
    const int at = in.CurrentPosition();
    const std::string where =
        count == 0 ? file : file + " (after node " + std::to_string(previous) + ")";
    std::uint32_t length = 0;
    if (!in.ReadVarint32(&length))
      throw InputError(where, "truncated: a message length at byte " + std::to_string(at) +
                                  " runs past the end of the file");
    if (length > bytes.size() - std::size_t(in.CurrentPosition()))
      throw InputError(where, "truncated: the message at byte " + std::to_string(at) + " has " +
                                  std::to_string(length) + " bytes but only " +
                                  std::to_string(bytes.size() - std::size_t(in.CurrentPosition())) +
                                  " are left; the file was cut short");
    const auto limit = in.PushLimit(static_cast<int>(length));
    if (metadata) {
      pb::GlobalMetadata m;
      if (!m.ParseFromCodedStream(&in) || !in.ConsumedEntireMessage())
        throw InputError(file, "the first message is not a Chakra GlobalMetadata");
      trace.version = m.version();
      metadata = false;
    } else {
      pb::Node n;
      if (!n.ParseFromCodedStream(&in) || !in.ConsumedEntireMessage())
        throw InputError(where, "the message at byte " + std::to_string(at) +
                                    " is not a Chakra Node (malformed protobuf)");
      trace.nodes.push_back(read_node(n, file));
      previous = n.id();
    }
    in.PopLimit(limit);
    ++count;
  }
  if (metadata)
    throw InputError(file, "empty: a Chakra trace starts with a GlobalMetadata message");
  return trace;
}

std::vector<std::filesystem::path> chakra_prefix_files(const std::filesystem::path& prefix,
                                                       const std::string& where) {
  std::vector<std::filesystem::path> files;
  for (int rank = 0;; ++rank) {
    std::filesystem::path file = prefix;
    file += "." + std::to_string(rank) + ".et";
    if (!std::filesystem::is_regular_file(file)) break;
    files.push_back(std::move(file));
  }
  if (files.empty())
    throw InputError(where, "no trace file " + prefix.string() +
                                ".0.et: a prefix names the files PREFIX.<rank>.et, one per rank "
                                "from 0; check the path (relative to the scenario's folder)");
  return files;
}

std::string encode_chakra_rank(const std::vector<ChakraNodeOut>& nodes,
                               const std::string& version) {
  std::string out;
  auto append = [&out](const google::protobuf::MessageLite& message) {
    std::array<std::uint8_t, 10> prefix{};
    const std::uint8_t* end = google::protobuf::io::CodedOutputStream::WriteVarint32ToArray(
        static_cast<std::uint32_t>(message.ByteSizeLong()), prefix.data());
    out.append(reinterpret_cast<const char*>(prefix.data()), std::size_t(end - prefix.data()));
    out += message.SerializeAsString();
  };
  pb::GlobalMetadata metadata;
  metadata.set_version(version);
  append(metadata);
  for (const ChakraNodeOut& n : nodes) {
    pb::Node node;
    node.set_id(n.id);
    node.set_name(n.name);
    node.set_type(static_cast<pb::NodeType>(n.type));
    for (std::uint64_t d : n.ctrl_deps) node.add_ctrl_deps(d);
    for (std::uint64_t d : n.data_deps) node.add_data_deps(d);
    node.set_duration_micros(n.duration_micros);
    for (const ChakraAttrOut& a : n.attrs) {
      pb::AttributeProto* attr = node.add_attr();
      attr->set_name(a.name);
      if (const auto* v = std::get_if<std::int64_t>(&a.value)) attr->set_int64_val(*v);
      if (const auto* v = std::get_if<std::uint64_t>(&a.value)) attr->set_uint64_val(*v);
      if (const auto* v = std::get_if<std::int32_t>(&a.value)) attr->set_int32_val(*v);
      if (const auto* v = std::get_if<bool>(&a.value)) attr->set_bool_val(*v);
      if (const auto* v = std::get_if<std::string>(&a.value)) attr->set_string_val(*v);
    }
    append(node);
  }
  return out;
}

} // namespace ddlsim::models
