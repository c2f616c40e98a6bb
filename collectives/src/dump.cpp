// The stable dump format of a Schedule. JSON (format "ddlsim-schedule", version 1):
//   {"format": "ddlsim-schedule", "version": 1, "call": {...every CollectiveCall field...},
//    "algorithm": "ring", "ranks": 4, "channels": 1, "scratch_bytes": [0, 0, 0, 0],
//    "programs": [{"rank": 0, "channel": 0, "steps": [
//       {"kind": "send", "peer": 1, "src": ["input", 0, 256], "bytes": 256, "deps": [1]}, ...]}]}
// A step lists only the fields its kind uses (src / dst / aux as [buffer, offset, bytes];
// codec, param, memory_bound_share, deps, wait = [channel, step] and protocol when set), so a dump
// reads like the text form and loads back equal. The call's "protocol" and the list "protocols"
// (what a step's "protocol" index names, when a composite's steps use several) appear only when
// set.
#include "ddlsim/collectives/dump.hpp"

#include "step_rules.hpp"

#include "ddlsim/core/input_error.hpp"

#include <array>
#include <string>

namespace ddlsim::coll {

namespace {

constexpr std::uint64_t kMaxBytes = std::uint64_t(1) << 62;

template <typename Enum, std::size_t N>
Enum parse_enum(const JsonValue& value, const std::array<Enum, N>& all) {
  std::vector<std::string> names;
  for (Enum e : all) names.emplace_back(to_string(e));
  const std::string name = value.choice(names);
  for (Enum e : all)
    if (to_string(e) == name) return e;
  return all[0];
}

constexpr std::array kOps{Op::all_reduce, Op::reduce_scatter, Op::all_gather, Op::broadcast,
                          Op::reduce,     Op::all_to_all,     Op::send_recv};
constexpr std::array kTypes{DataType::fp32, DataType::fp16, DataType::bf16};
constexpr std::array kReductions{Reduction::sum, Reduction::avg, Reduction::adasum};
constexpr std::array kKinds{
    StepKind::send,    StepKind::recv,          StepKind::recv_reduce,     StepKind::reduce,
    StepKind::copy,    StepKind::scale,         StepKind::compress,        StepKind::decompress,
    StepKind::compute, StepKind::switch_reduce, StepKind::switch_multicast};
constexpr std::array kBuffers{Buffer::input, Buffer::output, Buffer::scratch};
constexpr std::array kCodecs{Codec::none, Codec::topk, Codec::fp16_cast, Codec::chunk_norms,
                             Codec::chunk_select};

// switch_efficiency and blocks_per_program are written only where they are not 1 (only NVLS
// calls have the first; only NCCL-tuned calls the second), and net_post_ps and net_flush_ps only
// where they are not 0 (NCCL-tuned calls), so dumps of the other protocols keep their form.
Json protocol_json(const Protocol& protocol) {
  Json j = {{"name", protocol.name},
            {"payload_efficiency", protocol.payload_efficiency},
            {"intra_hop_ps", protocol.intra_hop_ps},
            {"inter_hop_ps", protocol.inter_hop_ps},
            {"reduce_in_flight", protocol.reduce_in_flight}};
  if (protocol.switch_efficiency != 1.0) j["switch_efficiency"] = protocol.switch_efficiency;
  if (protocol.blocks_per_program != 1.0) j["blocks_per_program"] = protocol.blocks_per_program;
  if (protocol.net_post_ps != 0) j["net_post_ps"] = protocol.net_post_ps;
  if (protocol.net_flush_ps != 0) j["net_flush_ps"] = protocol.net_flush_ps;
  return j;
}

Protocol parse_protocol(const JsonValue& value) {
  JsonObject o = value.object();
  Protocol protocol;
  protocol.name = o.required("name").string();
  protocol.payload_efficiency = o.required("payload_efficiency").number(0, 1);
  protocol.intra_hop_ps = o.required("intra_hop_ps").integer(0, INT64_MAX);
  protocol.inter_hop_ps = o.required("inter_hop_ps").integer(0, INT64_MAX);
  protocol.reduce_in_flight = o.required("reduce_in_flight").boolean();
  if (auto v = o.optional("switch_efficiency")) protocol.switch_efficiency = v->number(0, 1);
  if (auto v = o.optional("blocks_per_program")) protocol.blocks_per_program = v->number(0, 1e6);
  if (auto v = o.optional("net_post_ps")) protocol.net_post_ps = v->integer(0, INT64_MAX);
  if (auto v = o.optional("net_flush_ps")) protocol.net_flush_ps = v->integer(0, INT64_MAX);
  o.finish();
  check_protocol(protocol, "protocol");
  return protocol;
}

Json call_json(const CollectiveCall& call) {
  const AlgorithmParams& p = call.params;
  Json j = {{"op", to_string(call.op)},
            {"ranks", call.ranks},
            {"bytes", call.bytes},
            {"dtype", to_string(call.dtype)},
            {"reduction", to_string(call.reduction)},
            {"root", call.root},
            {"algorithm", call.algorithm},
            {"params",
             {{"chunks", p.chunks},
              {"channels", p.channels},
              {"group_sizes", p.group_sizes},
              {"servers", p.servers},
              {"dedicated_servers", p.dedicated_servers},
              {"density", p.density},
              {"chunk_bytes", p.chunk_bytes}}},
            {"node_of_rank", call.node_of_rank}};
  // Only when set: dumps of calls without a protocol read as they always did.
  if (call.protocol != Protocol{}) j["protocol"] = protocol_json(call.protocol);
  if (!call.node_rings.empty()) j["node_rings"] = call.node_rings;
  return j;
}

CollectiveCall parse_call(const JsonValue& value) {
  JsonObject o = value.object();
  CollectiveCall call;
  call.op = parse_enum(o.required("op"), kOps);
  call.ranks = int(o.required("ranks").integer(1, 1 << 24));
  call.bytes = o.required("bytes").bytes(0, kMaxBytes);
  call.dtype = parse_enum(o.required("dtype"), kTypes);
  call.reduction = parse_enum(o.required("reduction"), kReductions);
  call.root = int(o.required("root").integer(0, call.ranks - 1));
  call.algorithm = o.required("algorithm").string();
  JsonObject p = o.required("params").object();
  call.params.chunks = int(p.required("chunks").integer(1, 65536));
  call.params.channels = int(p.required("channels").integer(1, 256));
  for (const JsonValue& g : p.required("group_sizes").array(0, 64))
    call.params.group_sizes.push_back(int(g.integer(1, 1 << 24)));
  call.params.servers = int(p.required("servers").integer(0, 1 << 24));
  call.params.dedicated_servers = p.required("dedicated_servers").boolean();
  call.params.density = p.required("density").number(0, 1);
  call.params.chunk_bytes = p.required("chunk_bytes").bytes(0, kMaxBytes);
  p.finish();
  for (const JsonValue& node : o.required("node_of_rank").array(0, std::size_t(call.ranks)))
    call.node_of_rank.push_back(int(node.integer(0, 1 << 24)));
  if (auto v = o.optional("protocol")) call.protocol = parse_protocol(*v);
  if (auto v = o.optional("node_rings"))
    for (const JsonValue& ring : v->array(0, 256)) {
      std::vector<int>& locals = call.node_rings.emplace_back();
      for (const JsonValue& local : ring.array(1, 1 << 16))
        locals.push_back(int(local.integer(0, 1 << 16)));
    }
  o.finish();
  return call;
}

Json range_json(const BufferRange& r) {
  return Json::array({to_string(r.buffer), r.offset, r.bytes});
}

BufferRange parse_range(const JsonValue& value) {
  const auto parts = value.array(3, 3);
  return {parse_enum(parts[0], kBuffers), parts[1].bytes(0, kMaxBytes),
          parts[2].bytes(0, kMaxBytes)};
}

Json step_json(const Step& step) {
  Json j = {{"kind", to_string(step.kind)}};
  if (step.peer != -1) j["peer"] = step.peer;
  if (step.codec != Codec::none) j["codec"] = to_string(step.codec);
  if (step.src != BufferRange{}) j["src"] = range_json(step.src);
  if (step.dst != BufferRange{}) j["dst"] = range_json(step.dst);
  if (step.aux != BufferRange{}) j["aux"] = range_json(step.aux);
  j["bytes"] = step.bytes;
  if (step.param != 0) j["param"] = step.param;
  if (step.memory_bound_share != 0) j["memory_bound_share"] = step.memory_bound_share;
  if (step.dep_count > 0)
    j["deps"] = std::vector<std::uint32_t>(step.deps.begin(), step.deps.begin() + step.dep_count);
  if (step.has_wait()) j["wait"] = {step.wait_channel, step.wait_step};
  if (step.protocol != 0) j["protocol"] = step.protocol;
  return j;
}

Step parse_step(const JsonValue& value, int channel) {
  JsonObject o = value.object();
  Step step;
  step.kind = parse_enum(o.required("kind"), kKinds);
  step.channel = static_cast<std::uint16_t>(channel);
  if (auto v = o.optional("peer")) step.peer = int(v->integer(-1, 1 << 24));
  if (auto v = o.optional("codec")) step.codec = parse_enum(*v, kCodecs);
  if (auto v = o.optional("src")) step.src = parse_range(*v);
  if (auto v = o.optional("dst")) step.dst = parse_range(*v);
  if (auto v = o.optional("aux")) step.aux = parse_range(*v);
  step.bytes = o.required("bytes").bytes(0, kMaxBytes);
  if (auto v = o.optional("param")) step.param = v->number(-1e300, 1e300);
  if (auto v = o.optional("memory_bound_share")) step.memory_bound_share = v->number(0, 1);
  if (auto v = o.optional("deps")) {
    const auto deps = v->array(0, kMaxStepDeps);
    for (const JsonValue& d : deps)
      step.deps[step.dep_count++] = std::uint32_t(d.integer(0, UINT32_MAX));
  }
  if (auto v = o.optional("wait")) {
    const auto wait = v->array(2, 2); // [channel, step]
    step.wait_channel = std::uint16_t(wait[0].integer(0, kNoWait - 1));
    step.wait_step = std::uint32_t(wait[1].integer(0, UINT32_MAX));
  }
  if (auto v = o.optional("protocol")) step.protocol = std::uint8_t(v->integer(0, 255));
  o.finish();
  return step;
}

} // namespace

Json to_json(const MaterializedSchedule& s) {
  Json programs = Json::array();
  Json protocols = Json::array();
  for (const Protocol& protocol : s.protocols) protocols.push_back(protocol_json(protocol));
  for (int r = 0; r < s.ranks; ++r)
    for (int c = 0; c < s.channels; ++c) {
      Json steps = Json::array();
      for (const Step& step : s.programs[std::size_t(r)][std::size_t(c)])
        steps.push_back(step_json(step));
      programs.push_back({{"rank", r}, {"channel", c}, {"steps", std::move(steps)}});
    }
  Json j = {{"format", "ddlsim-schedule"},
            {"version", 1},
            {"call", call_json(s.call)},
            {"algorithm", s.algorithm},
            {"ranks", s.ranks},
            {"channels", s.channels},
            {"scratch_bytes", s.scratch_bytes},
            {"programs", std::move(programs)}};
  if (!s.protocols.empty()) j["protocols"] = std::move(protocols);
  return j;
}

MaterializedSchedule schedule_from_json(const JsonValue& dump) {
  JsonObject o = dump.object();
  const JsonValue format = o.required("format");
  if (format.string() != "ddlsim-schedule") format.fail_expected("\"ddlsim-schedule\"");
  o.required("version").integer(1, 1);
  MaterializedSchedule s;
  s.call = parse_call(o.required("call"));
  s.algorithm = o.required("algorithm").string();
  s.ranks = int(o.required("ranks").integer(s.call.ranks, 1 << 24));
  s.channels = int(o.required("channels").integer(1, 256));
  for (const JsonValue& b :
       o.required("scratch_bytes").array(std::size_t(s.ranks), std::size_t(s.ranks)))
    s.scratch_bytes.push_back(b.bytes(0, kMaxBytes));
  s.programs.assign(std::size_t(s.ranks), std::vector<std::vector<Step>>(std::size_t(s.channels)));
  std::vector<bool> seen(std::size_t(s.ranks) * std::size_t(s.channels));
  const std::size_t count = std::size_t(s.ranks) * std::size_t(s.channels);
  for (const JsonValue& program : o.required("programs").array(count, count)) {
    JsonObject p = program.object();
    const int r = int(p.required("rank").integer(0, s.ranks - 1));
    const int c = int(p.required("channel").integer(0, s.channels - 1));
    if (seen[std::size_t(r * s.channels + c)])
      program.fail("a second program for rank " + std::to_string(r) + " channel " +
                   std::to_string(c));
    seen[std::size_t(r * s.channels + c)] = true;
    for (const JsonValue& step : p.required("steps").array(0, SIZE_MAX))
      s.programs[std::size_t(r)][std::size_t(c)].push_back(parse_step(step, c));
    p.finish();
  }
  if (auto v = o.optional("protocols"))
    for (const JsonValue& protocol : v->array(1, 256))
      s.protocols.push_back(parse_protocol(protocol));
  o.finish();
  validate(s);
  return s;
}

void write_text(const MaterializedSchedule& s, std::ostream& out) {
  const CollectiveCall& call = s.call;
  out << "# " << to_string(call.op) << ' ' << s.algorithm << ": " << call.ranks << " ranks";
  if (s.ranks != call.ranks) out << " + " << (s.ranks - call.ranks) << " servers";
  out << ", " << s.channels << (s.channels == 1 ? " channel, " : " channels, ") << call.bytes
      << " B " << to_string(call.dtype) << ' ' << to_string(call.reduction) << ", chunks "
      << call.params.chunks << '\n';
  for (int r = 0; r < s.ranks; ++r) {
    if (s.scratch_bytes[std::size_t(r)] > 0)
      out << "rank " << r << " scratch " << s.scratch_bytes[std::size_t(r)] << " B\n";
    for (int c = 0; c < s.channels; ++c) {
      const auto& steps = s.programs[std::size_t(r)][std::size_t(c)];
      for (std::size_t i = 0; i < steps.size(); ++i)
        out << "rank " << r << " ch " << c << " #" << i << ' ' << detail::describe(steps[i])
            << '\n';
    }
  }
}

} // namespace ddlsim::coll
