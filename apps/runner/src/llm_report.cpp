// A large-model training workload's run report: the layout, memory per GPU, the collectives
// NCCL chose, and the iteration's figures (time, tokens/s, model TFLOP/s per GPU, MFU, exposed
// communication by kind, pipeline bubble).
#include "ddlsim/core/units.hpp"
#include "ddlsim/topologies/builders.hpp"
#include "workload_reports.hpp"

#include <sstream>

namespace ddlsim::runner {
namespace {

std::string ms(Picoseconds t) {
  return format_fixed(ps_to_seconds(t) * 1e3, 3);
}
std::string gib(double bytes) {
  return format_fixed(bytes / (1024.0 * 1024 * 1024), 2);
}

// The data-parallel gradients' dtype as the scenario spells it (16 bits: the model's own).
std::string grad_dtype(const models::LlmSpec& spec) {
  if (spec.grad_reduce_dtype() == coll::DataType::fp32) return "fp32";
  return spec.precision == models::LlmPrecision::fp16 ? "fp16" : "bf16";
}

std::string describe_layout(const models::LlmSpec& spec) {
  const models::LlmParallel& p = spec.parallel;
  std::string text = "tp " + std::to_string(p.tp) + ", pp " + std::to_string(p.pp) + ", dp " +
                     std::to_string(p.dp);
  if (p.ep > 1) text += ", ep " + std::to_string(p.ep);
  text += ", ZeRO-" + std::to_string(p.zero);
  if (p.sequence_parallel) text += ", sequence parallel";
  if (p.tp_comm_overlap) text += ", TP communication overlap";
  if (p.vpp > 1)
    return text + ", interleaved 1F1B (" + std::to_string(p.vpp) + " chunks per stage)";
  return text + ", 1F1B";
}

Json to_json(const Scenario& scenario, const std::string& label, const models::LlmPlan& plan,
             const models::LlmIteration& it) {
  const models::LlmSpec& spec = plan.spec;
  Json collectives = Json::array();
  for (const models::LlmCollective& c : plan.collectives) {
    Json row = {{"group", c.group == models::LlmGroup::tp   ? "tp"
                          : c.group == models::LlmGroup::dp ? "dp"
                          : c.group == models::LlmGroup::ep ? "ep"
                                                            : "expert_dp"},
                {"op", std::string(coll::to_string(c.call.op))},
                {"ranks", c.call.ranks},
                {"bytes", c.call.bytes},
                {"algorithm", c.call.algorithm}};
    if (!c.nccl_choice.empty()) row["nccl_choice"] = c.nccl_choice;
    collectives.push_back(row);
  }
  return {{"scenario", label},
          {"engine", std::string(sim::engine_name(scenario.engine))},
          {"seed", scenario.seed},
          {"workload", "llm_training"},
          {"model", spec.shape.name},
          {"parameters", spec.shape.parameters()},
          {"gpus", spec.parallel.gpus()},
          {"gpu", spec.gpu.name},
          {"parallel",
           {{"tp", spec.parallel.tp},
            {"pp", spec.parallel.pp},
            {"vpp", spec.parallel.vpp},
            {"dp", spec.parallel.dp},
            {"ep", spec.parallel.ep},
            {"zero", spec.parallel.zero},
            {"sequence_parallel", spec.parallel.sequence_parallel}}},
          {"global_batch", spec.global_batch},
          {"micro_batch", spec.micro_batch},
          {"micro_batches", spec.micro_batches()},
          {"seq_len", spec.shape.seq_len},
          {"precision", std::string(models::to_string(spec.precision))},
          {"grad_reduce_dtype", grad_dtype(spec)},
          {"recompute", std::string(models::to_string(spec.recompute))},
          {"model_flops_per_iteration", plan.model_flops_per_iteration},
          {"iteration_s", ps_to_seconds(it.time)},
          {"tokens_per_second", it.tokens_per_second},
          {"model_tflops_per_gpu", it.model_tflops_per_gpu},
          {"mfu", it.mfu},
          {"compute_s", ps_to_seconds(it.compute)},
          {"exposed_tp_s", ps_to_seconds(it.exposed_tp)},
          {"exposed_pp_s", ps_to_seconds(it.exposed_pp)},
          {"exposed_dp_s", ps_to_seconds(it.exposed_dp)},
          {"exposed_ep_s", ps_to_seconds(it.exposed_ep)},
          {"bubble_s", ps_to_seconds(it.bubble)},
          {"bubble_fraction", it.bubble_fraction},
          {"memory_per_gpu_bytes",
           {{"weights", plan.memory.parameters},
            {"gradients", plan.memory.gradients},
            {"optimizer", plan.memory.optimizer},
            {"activations", plan.memory.activations},
            {"total", plan.memory.total()},
            {"capacity", spec.gpu.memory_capacity_bytes},
            {"stage", plan.memory.stage}}},
          {"collectives", collectives}};
}

void print(const models::LlmPlan& plan, const models::LlmIteration& it, const std::string& label,
           const std::string& engine, std::ostream& out) {
  const models::LlmSpec& spec = plan.spec;
  const models::LlmShape& m = spec.shape;
  out << "# " << label << ": llm_training iteration, " << engine << " engine\n";
  out << "iteration(ms)  tokens/s  TFLOP/s/GPU    MFU  compute(ms)  exposed tp/pp/dp/ep(ms)  "
         "bubble\n";
  char line[256];
  const std::string exposed = ms(it.exposed_tp) + "/" + ms(it.exposed_pp) + "/" +
                              ms(it.exposed_dp) + "/" + ms(it.exposed_ep);
  std::snprintf(line, sizeof line, "%13s %9s %12s %6s %12s %24s %7s\n", ms(it.time).c_str(),
                format_fixed(it.tokens_per_second, 0).c_str(),
                format_fixed(it.model_tflops_per_gpu, 1).c_str(),
                (format_fixed(it.mfu * 100, 1) + "%").c_str(), ms(it.compute).c_str(),
                exposed.c_str(), (format_fixed(it.bubble_fraction * 100, 1) + "%").c_str());
  out << line;
  out << "# model " << m.name << ": " << format_fixed(static_cast<double>(m.parameters()) / 1e9, 2)
      << " B parameters, " << m.layers << " layers, hidden " << m.hidden << ", " << m.heads
      << " heads (" << m.kv_heads << " KV), FFN " << m.ffn << ", vocabulary " << m.vocab
      << ", sequence " << m.seq_len;
  if (m.moe)
    out << ", " << m.moe->experts << " experts (top " << m.moe->top_k << ", FFN "
        << m.moe->expert_ffn << ")";
  out << "\n";
  out << "# " << spec.parallel.gpus() << " x " << spec.gpu.name << ": " << describe_layout(spec)
      << "; global batch " << spec.global_batch << " sequences, micro-batch " << spec.micro_batch
      << " (" << spec.micro_batches() << " per pipeline), " << models::to_string(spec.precision)
      << " (gradients reduced in " << grad_dtype(spec) << "), recompute "
      << models::to_string(spec.recompute) << "\n";
  out << "# model FLOPs per iteration " << format_fixed(plan.model_flops_per_iteration / 1e15, 2)
      << " PFLOP (" << format_fixed(m.model_flops_per_token() / 1e9, 2)
      << " GFLOP per token); MFU against "
      << format_fixed((spec.precision == models::LlmPrecision::fp8 ? spec.gpu.fp8_flops
                                                                   : spec.gpu.fp16_flops) /
                          1e12,
                      1)
      << " TFLOP/s dense per GPU\n";
  out << "# memory per GPU (stage " << plan.memory.stage << "): " << gib(plan.memory.total())
      << " GiB of " << gib(spec.gpu.memory_capacity_bytes) << " (weights "
      << gib(plan.memory.parameters) << ", gradients " << gib(plan.memory.gradients)
      << ", optimizer " << gib(plan.memory.optimizer) << ", activations "
      << gib(plan.memory.activations) << ")\n";
  out << "# " << it.collectives << " collective calls per iteration, each group's counted once\n";
  for (const models::LlmCollective& c : plan.collectives) {
    const char* group = c.group == models::LlmGroup::tp   ? "TP"
                        : c.group == models::LlmGroup::dp ? "DP"
                        : c.group == models::LlmGroup::ep ? "EP"
                                                          : "expert DP";
    out << "#   " << group << " " << coll::to_string(c.call.op) << " " << format_bytes(c.call.bytes)
        << " on " << c.call.ranks << " GPUs: "
        << (c.nccl_choice.empty() ? c.call.algorithm
                                  : "NCCL " + c.nccl_choice + " -> " + c.call.algorithm)
        << "\n";
  }
}

} // namespace

RunReport llm_report(const Scenario& scenario, const std::string& label,
                     const RunSettings& settings) {
  const topo::Topology topology = topo::build_topology(scenario.topology);
  topo::Router router(topology);
  if (settings.begin)
    settings.begin("llm training iteration", sim::progress_unit(scenario.engine), -1.0);
  sim::EngineResult result =
      sim::simulate(sim::LlmTraining{scenario.workload.llm}, topology, router, scenario.engine,
                    common_options(scenario, settings));
  const bool go_on = !settings.end || settings.end();
  RunReport report;
  if (!result.complete || !go_on) report.incomplete = "while simulating the llm training iteration";
  if (!result.complete) return report;
  const std::string engine(sim::engine_name(scenario.engine));
  std::ostringstream text;
  print(*result.llm_plan, result.llm, label, engine, text);
  if (!result.details.summary.empty())
    text << "# " << engine << " engine:\n" << result.details.summary;
  if (!scenario.sweep.empty())
    text << "# note: this scenario's sweep (" << sweep_point_count(scenario)
         << " points) was not run: `ddlsim plan` searches large-model layouts itself\n";
  report.table = text.str();
  report.json = to_json(scenario, label, *result.llm_plan, result.llm);
  if (!result.details.json.is_null()) report.json[engine] = std::move(result.details.json);
  if (settings.trace)
    report.trace.push_back({"llm training iteration", std::move(result.steps_recorded), {}, {}});
  return report;
}

} // namespace ddlsim::runner
