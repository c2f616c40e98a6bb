// The communication libraries of a training iteration as people run them: NCCL's own choice per
// bucket (the default on NVIDIA GPUs), steady state over several iterations, Horovod with fusion
// off, MG-WFBP's merge rule and ByteScheduler's priority partitions.
#include "ddlsim/collectives/reference.hpp"
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/sim/engine.hpp"
#include "error_of.hpp"
#include "training_harness.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <set>

using namespace ddlsim;
using namespace ddlsim::models;
using namespace ddlsim::models::test;

namespace {

// Runs the scenario as `ddlsim run` does (the engine layer: steady state, NCCL's overheads).
std::vector<JobIteration> run_engine(const std::string& text, int iterations = 0) {
  const Scenario scenario = load_text(text);
  const topo::Topology topology = topo::build_topology(scenario.topology);
  topo::Router router(topology);
  return sim::simulate(sim::TrainingIteration{scenario.workload.training.jobs, iterations},
                       topology, router, scenario.engine, sim::CommonOptions{})
      .jobs;
}

std::string resnet(const std::string& framework) {
  return R"("model": "resnet50", "batch_per_gpu": 32, "framework": )" + framework;
}

int dense_layers(const Model& model) {
  int count = 0;
  for (const Layer& layer : model.layers) count += layer.parameters > 0 ? 1 : 0;
  return count;
}

// The communication-bound cluster of the scheduling tests: 8 single-V100 nodes on 1 Gb/s.
std::string slow(const std::string& workload) {
  return cluster(8, 1, workload);
}

} // namespace

TEST_CASE("NCCL's own choice is the default on NVIDIA GPUs and a named algorithm still wins") {
  const Scenario s = load_text(cluster(4, 25, resnet(R"({"type": "ddp"})")));
  const JobSpec& job = s.workload.training.jobs.at(0);
  CHECK(job.algorithm == "nccl");
  REQUIRE(job.nccl);
  const TrainingPlan plan = plan_training(s.workload.training.jobs);
  std::set<std::string> generators;
  for (const PlannedCollective& c : plan.jobs[0].collectives) {
    generators.insert(c.call.algorithm);
    CHECK_FALSE(c.nccl_choice.empty());
    CHECK(c.call_overhead > 0);
    // The bucket's protocol is NCCL's choice for its size, indexed in the plan's list.
    REQUIRE(c.protocol < plan.protocols.size());
    CHECK(plan.protocols[c.protocol] == c.call.protocol);
    CHECK(c.call.protocol ==
          nccl_protocol(job.nccl->system(),
                        job.nccl->choose(coll::Op::all_reduce, c.call.bytes).algorithm,
                        job.nccl->choose(coll::Op::all_reduce, c.call.bytes).protocol));
  }
  for (const std::string& g : generators) CHECK(g.rfind("nccl_", 0) == 0);
  CHECK(plan.protocols.size() >= 2); // the default, then NCCL's

  const Scenario named =
      load_text(cluster(4, 25, resnet(R"({"type": "ddp"})") + R"(, "algorithm": "ring")"));
  CHECK(named.workload.training.jobs.at(0).algorithm == "ring");
  CHECK_FALSE(named.workload.training.jobs.at(0).nccl);
}

TEST_CASE("every step of a bucket carries the bucket's protocol into the schedule") {
  const Scenario s = load_text(cluster(4, 25, resnet(R"({"type": "ddp"})")));
  auto plan = std::make_shared<const TrainingPlan>(plan_training(s.workload.training.jobs));
  const coll::Schedule schedule = iteration_schedule(plan);
  REQUIRE(schedule.protocols() == plan->protocols);
  std::set<std::uint8_t> seen;
  coll::StepStream stream = schedule.program(0, 1);
  for (coll::Step step; stream.next(step);)
    if (step.is_send() || step.is_receive()) seen.insert(step.protocol);
  std::set<std::uint8_t> planned;
  for (const PlannedCollective& c : plan->jobs[0].collectives) planned.insert(c.protocol);
  CHECK(seen == planned);
  // NCCL's protocols make the same buckets cost what NCCL's kernels cost: not the ring's.
  const JobIteration nccl = run_training(s).jobs[0];
  const JobIteration ring =
      run_training(cluster(4, 25, resnet(R"({"type": "ddp"})") + R"(, "algorithm": "ring")"))
          .jobs[0];
  CHECK(nccl.max_communication != ring.max_communication);
}

TEST_CASE("a bucket's join waits for its NVLS switch steps, not only its local ones") {
  // One DGX H100: NCCL picks NVLS for large buckets.
  const std::string text =
      R"({"topology": {"nodes": [{"preset": "dgx-h100", "count": 1}]},
          "workload": {"type": "training", "model": "bert_large", "batch_per_gpu": 8,
                       "precision": "fp16"}})";
  const Scenario s = load_text(text);
  auto plan = std::make_shared<const TrainingPlan>(plan_training(s.workload.training.jobs));
  bool nvls = false;
  for (const PlannedCollective& c : plan->jobs[0].collectives)
    nvls = nvls || c.call.algorithm.rfind("nvls", 0) == 0;
  REQUIRE(nvls);
  const coll::Schedule schedule = iteration_schedule(plan);
  for (int channel = 1; channel < schedule.channels(); ++channel) {
    std::vector<coll::Step> steps;
    coll::StepStream stream = schedule.program(0, channel);
    for (coll::Step step; stream.next(step);) steps.push_back(step);
    // Every join (a zero-length compute step after a collective's steps) depends on the last
    // switch step since the previous join.
    std::uint32_t last_switch = UINT32_MAX;
    for (std::uint32_t i = 0; i < steps.size(); ++i) {
      const coll::Step& step = steps[i];
      if (step.is_switch()) last_switch = i;
      if (step.kind == coll::StepKind::compute && step.param == 0 && i > 0 &&
          !steps[i - 1].has_wait() && last_switch != UINT32_MAX) {
        bool waits = false;
        for (std::uint8_t d = 0; d < step.dep_count; ++d)
          waits = waits || step.deps[d] == last_switch;
        CHECK(waits);
        last_switch = UINT32_MAX;
      }
    }
  }
  // And the iteration runs: every bucket ends before the optimizer.
  const JobIteration it = run_training(s).jobs[0];
  CHECK(it.time > it.max_compute);
}

TEST_CASE("an NVLS-Tree bucket's programs keep their waits for one another in the iteration") {
  // Two DGX H100: NCCL picks NVLS-Tree for large buckets, whose generator runs four programs per
  // channel that wait for one another (all_reduce_nvls_tree.cpp). Re-emitted on the iteration's
  // channels, each wait must land on the same collective's step on the other channel: a
  // generator step of the same bucket (its protocol), never a marker or another bucket's.
  const std::string text =
      R"({"topology": {"nodes": [{"preset": "dgx-h100", "count": 2}]},
          "workload": {"type": "training", "model": "bert_large", "batch_per_gpu": 8,
                       "precision": "fp16", "iterations": 2}})";
  const Scenario s = load_text(text);
  auto plan = std::make_shared<const TrainingPlan>(plan_training(s.workload.training.jobs));
  bool tree = false;
  for (const PlannedCollective& c : plan->jobs[0].collectives)
    tree = tree || c.call.algorithm == "nvls_tree";
  REQUIRE(tree);
  const coll::Schedule schedule = iteration_schedule(plan);
  std::vector<std::vector<coll::Step>> programs(std::size_t(schedule.channels()));
  for (int channel = 0; channel < schedule.channels(); ++channel) {
    coll::StepStream stream = schedule.program(0, channel);
    for (coll::Step step; stream.next(step);) programs[std::size_t(channel)].push_back(step);
  }
  int waits = 0;
  for (int channel = 1; channel < schedule.channels(); ++channel)
    for (const coll::Step& step : programs[std::size_t(channel)]) {
      if (step.kind == coll::StepKind::compute || !step.has_wait() || step.wait_channel == 0)
        continue;
      REQUIRE(step.wait_step < programs[step.wait_channel].size());
      const coll::Step& awaited = programs[step.wait_channel][step.wait_step];
      CHECK(awaited.protocol == step.protocol);
      // Channel k runs generator channel k - 1: lane (k - 1) mod 4. The switch lane hands on
      // switch reduces, the down lane the final shards it received, the up lane its sums.
      const int lane = (step.wait_channel - 1) % 4;
      using K = coll::StepKind;
      if (lane == 0) CHECK(awaited.kind == K::switch_reduce);
      if (lane == 2) CHECK(awaited.kind == K::recv);
      if (lane == 1)
        CHECK((awaited.kind == K::send || awaited.kind == K::reduce || awaited.kind == K::scale));
      CHECK(lane != 3);
      ++waits;
    }
  CHECK(waits > 0);
  // And both iterations run to their end, the second as long as the first.
  const std::vector<JobIteration> two = run_engine(text, 2);
  REQUIRE(two.at(0).iteration_times.size() == 2);
  CHECK(static_cast<double>(two[0].iteration_times[1]) ==
        Approx(static_cast<double>(two[0].iteration_times[0])).epsilon(1e-3));
}

TEST_CASE(
    "steady state: the optimizer's barrier repeats the iteration and samples/s uses the last") {
  const std::string text = cluster(4, 10, resnet(R"({"type": "ddp"})"));
  const std::vector<JobIteration> three = run_engine(text, 3);
  REQUIRE(three.at(0).iteration_times.size() == 3);
  for (Picoseconds t : three[0].iteration_times)
    CHECK(static_cast<double>(t) == Approx(static_cast<double>(three[0].time)).epsilon(1e-3));
  CHECK(three[0].samples_per_second ==
        Approx(three[0].samples / ps_to_seconds(three[0].iteration_times.back())));
  for (const GpuIteration& g : three[0].gpus)
    CHECK(g.compute + g.exposed + g.idle == three[0].time);
  // "auto" stops once two iterations agree: two here.
  CHECK(run_engine(text).at(0).iteration_times.size() == 2);
  // One iteration is what the iteration alone takes.
  const std::vector<JobIteration> one = run_engine(text, 1);
  CHECK(static_cast<double>(one[0].time) ==
        Approx(static_cast<double>(three[0].iteration_times.front())).epsilon(1e-9));
}

TEST_CASE("Horovod with fusion off all-reduces each layer alone and pays per-tensor latency") {
  const Model model = load_model("resnet50", ".", "x");
  auto run = [](const std::string& fusion) {
    return run_engine(cluster(4, 100,
                              resnet(R"({"type": "horovod", "fusion_threshold": )" + fusion + "}")),
                      1)
        .at(0);
  };
  const JobIteration off = run("0");
  const JobIteration on = run("\"64MiB\"");
  CHECK(off.collectives == dense_layers(model));
  CHECK(on.collectives < off.collectives);
  // The same bytes in more calls: each pays NCCL's launch and its protocol's hops.
  CHECK(off.gradient_bytes == on.gradient_bytes);
  CHECK(off.max_communication > on.max_communication);
}

TEST_CASE("MG-WFBP merges a layer when the next gradient comes before its all-reduce would end") {
  const Model model = load_model("resnet50", ".", "x");
  auto groups = [](const std::string& cost) {
    return run_training(slow(resnet(R"({"type": "mgwfbp", )" + cost + "}"))).jobs.at(0).collectives;
  };
  // No startup cost and an all-reduce faster than any layer: nothing waits, nothing merges.
  CHECK(groups(R"("startup_us": 0, "bandwidth_gbps": 1e6)") == dense_layers(model));
  // A startup longer than the whole backward pass: everything merges into one all-reduce.
  CHECK(groups(R"("startup_us": 1e6, "bandwidth_gbps": 1)") == 1);
  // Monotonic: a larger startup never makes more groups.
  int previous = 1 << 30;
  for (double a : {0.0, 10.0, 100.0, 1000.0, 10000.0}) {
    const int n = groups(R"("startup_us": )" + std::to_string(a) + R"(, "bandwidth_gbps": 1)");
    CHECK(n <= previous);
    previous = n;
  }
  // Without a cost model and without NCCL's, it says what to give.
  const std::string error = test_support::error_of(
      [] { (void)load_text(slow(resnet(R"({"type": "mgwfbp"})") + R"(, "algorithm": "ring")")); });
  CHECK_THAT(error, Catch::Contains("startup_us") && Catch::Contains("bandwidth_gbps"));
}

TEST_CASE(
    "ByteScheduler shortens the steady-state iteration when communication is the bottleneck") {
  const std::string model = R"("model": "vgg16", "batch_per_gpu": 32, "framework": )";
  const JobIteration ddp = run_engine(slow(model + R"({"type": "ddp"})"), 4).at(0);
  const JobIteration bs = run_engine(slow(model + R"({"type": "bytescheduler"})"), 4).at(0);
  REQUIRE(ddp.max_communication > ddp.max_compute); // communication-bound
  CHECK(bs.time < ddp.time);
  // The next forward pass overlaps the previous iteration's all-reduces: the period is less than
  // compute plus what DDP leaves exposed, and never less than the communication alone.
  CHECK(bs.max_exposed < ddp.max_exposed);
  CHECK(bs.time >= bs.max_communication - 1);
  // Partitions of at most 1,000,000 parameters, posted front layers first.
  const Scenario s = load_text(slow(model + R"({"type": "bytescheduler"})"));
  const TrainingPlan plan = plan_training(s.workload.training.jobs);
  for (const PlannedCollective& c : plan.jobs[0].collectives) CHECK(c.parameters <= 1'000'000);
  CHECK(plan.jobs[0].gate_collective.size() == s.workload.training.jobs[0].model->layers.size());
}

TEST_CASE("ByteScheduler's iterations still all-reduce the whole gradient buffer") {
  auto tiny = std::make_shared<Model>();
  tiny->name = "tiny";
  for (int l = 0; l < 5; ++l)
    tiny->layers.push_back(
        {"l" + std::to_string(l), LayerKind::linear, std::uint64_t(40 + 13 * l), 1e3, 2e3, 64});
  tiny->total_parameters = tiny->parameters();
  JobSpec job;
  job.model = tiny;
  job.gpus = {0, 1, 2, 3};
  job.node_of_gpu = {0, 0, 1, 1};
  job.gpu.assign(4, find_gpu("V100", "x"));
  job.speed.assign(4, 1.0);
  job.batch.assign(4, 4);
  job.framework.type = Framework::bytescheduler;
  job.framework.partition_parameters = 30;
  job.framework.startup = 5 * kPsPerUs;
  job.framework.bytes_per_second = 1e9;
  auto plan = std::make_shared<const TrainingPlan>(plan_training({job}));
  REQUIRE(plan->jobs[0].collectives.size() > 5);
  const coll::ReferenceResult result = coll::run_reference(iteration_schedule(plan));
  INFO(result.error);
  CHECK(result.ok);
}

TEST_CASE("a ByteScheduler partition starts only after its layer's backward step, on any stream") {
  // The compute program has gate markers before the gated forward steps: a partition's wait for
  // its layer's backward step must count them (it used to name a step that many too early).
  for (int streams : {1, 4}) {
    const TrainingRun run =
        run_training(slow(R"("model": "resnet50", "batch_per_gpu": 32, "framework":
                             {"type": "bytescheduler", "streams": )" +
                          std::to_string(streams) + "}"));
    const JobPlan& job = run.plan->jobs.at(0);
    const ComputeProfile& profile = job.profiles.at(0);
    // Rank 0's compute records in program order, and its first step on each channel > 0.
    std::vector<Picoseconds> compute_end;
    std::map<int, Picoseconds> first_start;
    for (const sim::StepRecord& r : run.timing.steps_recorded) {
      if (r.rank != 0) continue;
      if (r.channel == 0)
        compute_end.push_back(r.end);
      else if (!first_start.count(r.channel) || r.start < first_start[r.channel])
        first_start[r.channel] = r.start;
    }
    // The first collective of each stream (collective s, stream s) waits for its layer.
    const int width = streams > 1 ? job.collectives.at(1).first_channel - 1 : 0;
    for (int s = 0; s < streams; ++s) {
      const PlannedCollective& c = job.collectives.at(static_cast<std::size_t>(s));
      REQUIRE(c.first_channel == 1 + s * width);
      const std::uint32_t ready = c.ready_step.at(0);
      REQUIRE(profile.steps.at(ready).backward);
      REQUIRE(profile.steps.at(ready).layer == c.first_layer);
      // Every gated forward step comes before the backward pass, with a marker per
      // communication channel before each.
      std::size_t gated = 0;
      for (std::size_t l = 0; l < job.gate_collective.size(); ++l)
        gated += job.gate_collective[l] >= 0 ? 1 : 0;
      const std::size_t markers = std::size_t(iteration_channels(*run.plan) - 1);
      const std::size_t index = ready + gated * markers;
      REQUIRE(index < compute_end.size());
      CHECK(first_start.at(c.first_channel) >= compute_end[index]);
    }
  }
}
