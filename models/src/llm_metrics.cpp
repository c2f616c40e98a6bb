// What an executed LLM iteration means to a user (llm.hpp, LlmIteration): the compute stream of
// each GPU is one chain, so its step ends, sorted, are in program order, and the time between a
// marker's end and the end of the step before it is how long the stream waited for what the
// marker names.
#include "ddlsim/models/llm.hpp"

#include <algorithm>
#include <map>

namespace ddlsim::models {

LlmRecorder::LlmRecorder(int ranks) : ranks_(static_cast<std::size_t>(std::max(ranks, 0))) {}

void LlmRecorder::add(int rank, int channel, coll::StepKind kind, int peer, Picoseconds start,
                      Picoseconds end) {
  Rank& r = ranks_[static_cast<std::size_t>(rank)];
  if (channel == kLlmComputeChannel) {
    r.compute_ends.push_back(end);
  } else if (channel == kLlmPpChannel) {
    r.pipeline.push_back({kind == coll::StepKind::send, peer, start, end});
  }
}

void LlmRecorder::clear() {
  for (Rank& r : ranks_) r = Rank{};
}

namespace {

using Transfers = std::map<std::pair<bool, int>, std::vector<LlmRecorder::Transfer>>;

// A rank's pipeline transfers by (send, peer), each list in program order.
Transfers by_peer(const LlmRecorder::Rank& rank) {
  Transfers out;
  for (const LlmRecorder::Transfer& t : rank.pipeline) out[{t.send, t.peer}].push_back(t);
  for (auto& [key, list] : out)
    std::sort(list.begin(), list.end(), [](const auto& a, const auto& b) {
      return a.start != b.start ? a.start < b.start : a.end < b.end;
    });
  return out;
}

struct GpuTimes {
  Picoseconds compute = 0, tp = 0, pp = 0, dp = 0, ep = 0;
};

} // namespace

LlmIteration summarize_llm(const LlmPlan& plan, const LlmRecorder& recorder) {
  const LlmSpec& spec = plan.spec;
  const int gpus = spec.parallel.gpus();
  LlmIteration out;
  std::vector<std::vector<Picoseconds>> ends(static_cast<std::size_t>(gpus));
  std::vector<Transfers> transfers(static_cast<std::size_t>(gpus));
  for (int r = 0; r < gpus; ++r) {
    const LlmRecorder::Rank& rank =
        recorder.ranks()[static_cast<std::size_t>(spec.gpus[static_cast<std::size_t>(r)])];
    ends[std::size_t(r)] = rank.compute_ends;
    std::sort(ends[std::size_t(r)].begin(), ends[std::size_t(r)].end());
    transfers[std::size_t(r)] = by_peer(rank);
    if (!ends[std::size_t(r)].empty()) out.time = std::max(out.time, ends[std::size_t(r)].back());
  }
  double bubble_sum = 0;
  double collectives = 0;
  for (int r = 0; r < gpus; ++r) {
    const LlmCoords c = llm_coords(spec.parallel, r);
    const std::vector<LlmOp>& ops = plan.stages[static_cast<std::size_t>(c.pp)];
    const std::vector<Picoseconds>& e = ends[std::size_t(r)];
    std::size_t k = 0;
    auto gap = [&]() -> Picoseconds {
      if (k >= e.size()) return 0;
      const Picoseconds g = e[k] - (k > 0 ? e[k - 1] : 0);
      ++k;
      return g;
    };
    GpuTimes t;
    std::map<int, std::size_t> received; // per peer (global): receives so far
    for (const LlmOp& op : ops) {
      switch (op.kind) {
      case LlmOpKind::compute:
        t.compute += op.duration;
        ++k;
        break;
      case LlmOpKind::tp:
        t.tp += gap();
        break;
      case LlmOpKind::ep:
        t.ep += gap();
        break;
      case LlmOpKind::dp_wait:
        t.dp += gap();
        break;
      case LlmOpKind::pp_recv: {
        const Picoseconds wait = gap();
        LlmCoords from = c;
        from.pp = llm_pipeline_peer(spec.parallel, c.pp, op.forward_dir, false);
        const int peer_job = llm_rank(spec.parallel, from);
        const int peer = spec.gpus[static_cast<std::size_t>(peer_job)];
        const int self = spec.gpus[static_cast<std::size_t>(r)];
        const std::size_t j = received[peer]++;
        const auto& mine = transfers[std::size_t(r)][{false, peer}];
        const auto& theirs = transfers[std::size_t(peer_job)][{true, self}];
        if (j < mine.size() && j < theirs.size()) {
          // The message was on its way from when both sides were ready until it arrived; the
          // rest of the wait is the other stage still computing (the bubble).
          const Picoseconds transfer = mine[j].end - std::max(mine[j].start, theirs[j].start);
          t.pp += std::clamp<Picoseconds>(transfer, 0, wait);
        }
        break;
      }
      case LlmOpKind::optimizer:
        t.dp += gap();
        t.pp += gap();
        break;
      case LlmOpKind::pp_send:
        break;
      case LlmOpKind::dp:
        break;
      }
      if (op.kind == LlmOpKind::tp || op.kind == LlmOpKind::ep || op.kind == LlmOpKind::dp) {
        const LlmCollective& coll = plan.collectives[static_cast<std::size_t>(op.collective)];
        collectives += 1.0 / coll.call.ranks;
      }
    }
    out.compute = std::max(out.compute, t.compute);
    out.exposed_tp = std::max(out.exposed_tp, t.tp);
    out.exposed_pp = std::max(out.exposed_pp, t.pp);
    out.exposed_dp = std::max(out.exposed_dp, t.dp);
    out.exposed_ep = std::max(out.exposed_ep, t.ep);
    const Picoseconds busy = t.compute + t.tp + t.pp + t.dp + t.ep;
    bubble_sum += static_cast<double>(std::max<Picoseconds>(0, out.time - busy));
  }
  out.bubble = static_cast<Picoseconds>(bubble_sum / std::max(gpus, 1));
  out.collectives = static_cast<std::uint64_t>(collectives + 0.5);
  const double seconds = ps_to_seconds(out.time);
  if (seconds > 0) {
    out.bubble_fraction = static_cast<double>(out.bubble) / static_cast<double>(out.time);
    out.tokens_per_second = static_cast<double>(spec.global_batch) * spec.shape.seq_len / seconds;
    const double per_gpu = plan.model_flops_per_iteration / (seconds * gpus);
    out.model_tflops_per_gpu = per_gpu / 1e12;
    const double peak =
        spec.precision == LlmPrecision::fp8 ? spec.gpu.fp8_flops : spec.gpu.fp16_flops;
    out.mfu = peak > 0 ? per_gpu / peak : 0;
  }
  return out;
}

} // namespace ddlsim::models
