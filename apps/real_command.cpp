// `ddlsim real`: run a collective's Schedule for real (host backend: processes or threads over
// TCP, on loopback or an emulated cluster) and print the nccl-tests table with the #wrong column
// the reference executor's check fills; `--json` writes the `ddlsim run --json` report plus the
// backend, the machine and per-step timelines, for calibrate.
#include "call_flags.hpp"
#include "commands.hpp"
#include "ddlsim/collectives/dump.hpp"
#include "ddlsim/collectives/schedule.hpp"
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/core/input_file.hpp"
#include "ddlsim/core/suggest.hpp"
#include "ddlsim/core/units.hpp"
#include "ddlsim/real/host_backend.hpp"
#include "number_checks.hpp"
#ifdef DDLSIM_WITH_CUDA
#include "ddlsim/real/cuda_backend.hpp"
#endif
#ifdef DDLSIM_WITH_NCCL
#include "ddlsim/real/nccl_backend.hpp"
#endif
#include "ddlsim/real/gpu_layout.hpp"
#include "ddlsim/real/link_rate.hpp"
#include "ddlsim/real/machine.hpp"
#include "ddlsim/real/netns_cluster.hpp"
#include "ddlsim/scenario/scenario.hpp"
#include "ddlsim/sim/report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>

namespace ddlsim::cli {
namespace {

// Where the ranks run: loopback, or (with --emulate) the namespaces of an emulated cluster
// whose links take the scenario's NIC rate and latency (one rank per node, one switch).
class EmulatedCluster {
public:
  EmulatedCluster(const std::string& scenario_file, int ranks, double loss_percent) {
    if (scenario_file.empty()) return;
    const Scenario scenario = load_scenario_file(scenario_file);
    const topo::ClusterSpec& cluster = scenario.topology;
    if (cluster.fabric.type != topo::FabricType::single_switch)
      throw InputError(scenario_file + ": /topology/fabric/type",
                       "--emulate builds one switch; use a single_switch fabric");
    std::vector<real::LinkShape> links;
    for (const topo::NodeGroup& group : cluster.node_groups)
      for (int i = 0; i < group.count && int(links.size()) < ranks; ++i) {
        double bytes_per_second = group.spec.nic_bytes_per_second * group.spec.nics;
        if (cluster.fabric.link_bytes_per_second > 0)
          bytes_per_second = std::min(bytes_per_second, cluster.fabric.link_bytes_per_second);
        const double delay_us = ps_to_us(group.spec.nic_latency + cluster.fabric.link_latency / 2);
        links.push_back({bytes_per_second * 8 / 1e9, delay_us, loss_percent});
      }
    if (int(links.size()) < ranks)
      throw InputError(scenario_file + ": /topology/nodes",
                       "--emulate runs one rank per node: " + std::to_string(ranks) +
                           " ranks need " + std::to_string(ranks) + " nodes, the scenario has " +
                           std::to_string(links.size()));
    const std::string why = real::NetnsCluster::unavailable_reason();
    if (!why.empty()) {
      fallback_ = "loopback, no link emulation (--emulate fell back: " + why + ")";
      std::fprintf(stderr, "ddlsim real: cannot emulate the cluster (%s); running on loopback\n",
                   why.c_str());
      return;
    }
    try {
      cluster_.emplace(links);
      for (const real::LinkShape& link : links) configured_gbps_.push_back(link.rate_gbps);
    } catch (const std::runtime_error& error) {
      throw InputError("--emulate",
                       std::string("building the emulated cluster failed: ") + error.what());
    }
    if (!cluster_->reaped().empty())
      std::fprintf(stderr,
                   "ddlsim real: deleted %zu network namespace(s) left by an earlier run that "
                   "was killed (%s, ...)\n",
                   cluster_->reaped().size(), cluster_->reaped().front().c_str());
  }
  std::vector<real::RankPlace> places() const {
    return cluster_ ? cluster_->places() : std::vector<real::RankPlace>{};
  }
  std::string description() const {
    return cluster_            ? "emulated: " + cluster_->description()
           : fallback_.empty() ? "loopback, no link emulation"
                               : fallback_;
  }

  // Each rank's shaped link rate (Gbit/s per direction); empty when not emulated.
  const std::vector<double>& configured_gbps() const { return configured_gbps_; }

private:
  std::optional<real::NetnsCluster> cluster_;
  std::string fallback_;
  std::vector<double> configured_gbps_;
};

struct RealOptions {
  std::string backend = "host";
  std::string op = "all_reduce";
  std::string algorithm = "ring";
  int ranks = 4;
  std::string min_bytes = "8";
  std::string max_bytes = "8MiB";
  double factor = 2;
  std::string dtype = "fp32";
  std::string reduction = "sum";
  int root = 0;
  coll::AlgorithmParams params;
  std::string chunk_bytes;
  std::vector<int> nodes;
  std::string schedule; // a JSON dump to run instead of a generator
  int iterations = 5;
  int warmup = 1;
  bool threads = false;
  double timeout_seconds = 10;
  std::string check_limit = "256MiB";
  std::string fault;
  std::string emulate;
  double loss_percent = 0;
  real::LinkPace pace; // cuda: every transfer paced to this virtual link
  int gpus = 0;        // cuda: GPUs the virtual ranks spread over (0: all visible)
  std::string json;
};

// What a GPU backend measured beyond the host backend's outcome: NCCL's own collective.
struct Baseline {
  std::string name;
  double seconds = 0;
};

coll::CollectiveCall base_call(const RealOptions& o) {
  coll::CollectiveCall call;
  set_call_names(call, o.op, o.dtype, o.reduction);
  call.ranks = o.ranks;
  call.root = o.root;
  call.algorithm = o.algorithm;
  call.params = o.params;
  if (!o.chunk_bytes.empty())
    call.params.chunk_bytes = parse_size_flag("--chunk-bytes", o.chunk_bytes);
  for (std::size_t node = 0; node < o.nodes.size(); ++node)
    for (int i = 0; i < o.nodes[node]; ++i) call.node_of_rank.push_back(static_cast<int>(node));
  if (!o.nodes.empty() && static_cast<int>(call.node_of_rank.size()) != call.ranks)
    throw InputError("--nodes", "the ranks per node add up to " +
                                    std::to_string(call.node_of_rank.size()) + ", not --ranks " +
                                    std::to_string(call.ranks));
  return call;
}

// nccl-tests sizes: from -b to -e multiplying by -f, each rounded down to whole elements (and to
// a multiple of the rank count where the op splits the buffer into equal blocks).
std::vector<std::uint64_t> sweep_sizes(const RealOptions& o, const coll::CollectiveCall& call) {
  const std::uint64_t low = parse_nccl_tests_size_flag("-b", o.min_bytes),
                      high = parse_nccl_tests_size_flag("-e", o.max_bytes);
  if (low > high) throw InputError("-b", "the first size is larger than -e");
  if (!(o.factor > 1) && low != high)
    throw InputError("-f", "the size factor must be greater than 1");
  std::uint64_t unit = coll::element_size(call.dtype);
  if (call.op == coll::Op::all_to_all) unit *= std::uint64_t(call.ranks);
  std::vector<std::uint64_t> sizes;
  for (double size = double(low); size <= double(high) && sizes.size() < 200; size *= o.factor) {
    const std::uint64_t bytes = std::uint64_t(size) / unit * unit;
    if (sizes.empty() || sizes.back() != bytes) sizes.push_back(bytes);
    if (low == high) break;
  }
  return sizes;
}

real::HostFault parse_fault(const std::string& text) {
  real::HostFault fault;
  if (text.empty()) return fault;
  int rank = -1;
  unsigned long long step = 0;
  char kind[16] = {};
  if (std::sscanf(text.c_str(), "%d:%llu:%15s", &rank, &step, kind) != 3 ||
      (std::string(kind) != "crash" && std::string(kind) != "stall") || rank < 0)
    throw InputError("--fault",
                     "expected RANK:STEP:crash or RANK:STEP:stall, found \"" + text + "\"");
  fault.kind =
      std::string(kind) == "crash" ? real::HostFault::Kind::crash : real::HostFault::Kind::stall;
  fault.rank = rank;
  fault.step = step;
  return fault;
}

// Steps `rank` starts in one run of `schedule`, counted up to `limit` (a fault's step index is
// compared with it, so counting further would only cost time on a large schedule).
std::uint64_t steps_started_per_run(const coll::Schedule& schedule, int rank, std::uint64_t limit) {
  std::uint64_t steps = 0;
  for (int channel = 0; channel < schedule.channels() && steps < limit; ++channel) {
    coll::StepStream program = schedule.program(rank, channel);
    while (steps < limit && program.next() != nullptr) ++steps;
  }
  return steps;
}

// A fault that would never fire injects nothing, and the run would "pass" the test the user
// meant to fail: refuse it. A rank starts the same steps in every warm-up and timed run (the
// host backend counts them across runs), so the reachable indices are [0, steps x runs).
void check_fault_reachable(const real::HostOptions& host,
                           const std::vector<coll::Schedule>& schedules) {
  const real::HostFault& fault = host.fault;
  if (fault.kind == real::HostFault::Kind::none) return;
  const int ranks = schedules.front().ranks();
  if (fault.rank >= ranks)
    throw InputError("--fault", "rank " + std::to_string(fault.rank) + " is not below " +
                                    std::to_string(ranks) + "; choose a rank in [0, " +
                                    std::to_string(ranks - 1) + "]");
  const auto runs = std::uint64_t(host.warmup + host.iterations);
  for (const coll::Schedule& schedule : schedules) {
    const std::uint64_t per_run = fault.step / runs + 1;
    const std::uint64_t steps = steps_started_per_run(schedule, fault.rank, per_run);
    if (steps * runs > fault.step) continue;
    throw InputError("--fault", "step " + std::to_string(fault.step) + " is never reached: rank " +
                                    std::to_string(fault.rank) + " starts " +
                                    std::to_string(steps) + " steps per run at " +
                                    std::to_string(schedule.call().bytes) + " B, " +
                                    std::to_string(runs) + (runs == 1 ? " run" : " runs") +
                                    " (warm-up + timed) make " + std::to_string(steps * runs) +
                                    "; choose a step below that");
  }
}

Json timeline_json(const real::HostRun& run, std::uint64_t bytes) {
  Json ranks = Json::array();
  for (const real::RankOutcome& rank : run.ranks) {
    Json steps = Json::array();
    for (const real::StepTiming& t : rank.timeline)
      steps.push_back({{"channel", t.channel},
                       {"index", t.index},
                       {"kind", coll::to_string(t.kind)},
                       {"peer", t.peer},
                       {"bytes", t.bytes},
                       {"start_ps", t.start_ns * 1000},
                       {"end_ps", t.end_ns * 1000}});
    ranks.push_back({{"rank", rank.rank}, {"steps", std::move(steps)}});
  }
  return {{"bytes", bytes}, {"ranks", std::move(ranks)}};
}

// What the ranks' sends achieved (real/link_rate.hpp), for the row's JSON; beside the
// configured rate of the links (the slowest, as a ring runs at it) when they are emulated.
Json achieved_rate_json(const real::AchievedRate& rate, const std::vector<double>& configured) {
  Json ranks = Json::array();
  for (const real::RankSendRate& r : rate.ranks)
    ranks.push_back(
        {{"rank", r.rank}, {"bytes", r.bytes}, {"busy_ns", r.busy_ns}, {"gbps", r.gbps()}});
  Json out = {{"median_gbps", rate.median_gbps},
              {"min_gbps", rate.min_gbps},
              {"max_gbps", rate.max_gbps},
              {"ranks", std::move(ranks)}};
  if (!configured.empty()) {
    const double slowest = *std::min_element(configured.begin(), configured.end());
    out["configured_gbps"] = slowest;
    out["fraction_of_configured"] = rate.median_gbps / slowest;
  }
  return out;
}

void print_achieved_rate(const real::AchievedRate& rate, const std::vector<double>& configured) {
  const double slowest = *std::min_element(configured.begin(), configured.end());
  std::printf("#   links: sends achieved %.3f Gbit/s (median over ranks; min %.3f, max %.3f) of "
              "the configured %.3f Gbit/s (%.0f%%)\n",
              rate.median_gbps, rate.min_gbps, rate.max_gbps, slowest,
              100 * rate.median_gbps / slowest);
}

void print_header(const std::string& title, bool baseline) {
  std::printf("# %s\n", title.c_str());
  std::printf("#%12s %12s %6s %6s %12s %10s %10s %8s", "size", "count", "type", "redop", "time(us)",
              "algbw", "busbw", "#wrong");
  if (baseline) std::printf(" %12s %10s", "nccl(us)", "nccl_busbw");
  std::printf("  %s\n", "algorithm");
  std::printf("#%12s %12s %6s %6s %12s %10s %10s", "(B)", "(elements)", "", "", "", "(GB/s)",
              "(GB/s)");
  if (baseline) std::printf(" %8s %12s %10s", "", "", "(GB/s)");
  std::printf("\n");
}

void print_row(const sim::CollectiveRow& row, double factor, const real::HostRun& run,
               const Baseline* baseline) {
  const double algbw = row.algbw_gbytes_per_second();
  const std::string wrong = !run.ok && run.wrong == 0 ? "failed"
                            : run.checked             ? std::to_string(run.wrong)
                                                      : "n/a";
  std::printf(
      " %12llu %12llu %6s %6s %12.2f %10.3f %10.3f %8s", static_cast<unsigned long long>(row.bytes),
      static_cast<unsigned long long>(row.count), std::string(coll::to_string(row.dtype)).c_str(),
      std::string(coll::to_string(row.reduction)).c_str(), ps_to_us(row.time), algbw,
      algbw * factor, wrong.c_str());
  if (baseline && baseline->seconds > 0)
    std::printf(" %12.2f %10.3f", baseline->seconds * 1e6,
                double(row.bytes) / baseline->seconds / 1e9 * factor);
  else if (baseline)
    std::printf(" %12s %10s", "n/a", "n/a");
  std::printf("  %s\n", row.algorithm.c_str());
  std::fflush(stdout);
}

// A GPU backend's result (real::CudaRun or real::NcclRun) in the host backend's terms: one
// outcome, no per-rank timelines.
template <class GpuRun> real::HostRun as_host_run(const GpuRun& gpu) {
  real::HostRun run;
  run.ok = gpu.ok;
  run.error = gpu.error;
  run.checked = gpu.checked;
  run.seconds = gpu.seconds;
  run.wrong = gpu.wrong;
  run.steps = gpu.steps;
  run.bytes_sent = gpu.bytes_sent;
  return run;
}

// The CUDA backend's result in the host backend's terms.
real::HostRun run_on_gpu([[maybe_unused]] const coll::Schedule& schedule,
                         [[maybe_unused]] const real::HostOptions& host,
                         [[maybe_unused]] const RealOptions& o) {
#ifdef DDLSIM_WITH_CUDA
  real::CudaOptions options;
  options.pace = o.pace;
  options.devices = o.gpus;
  options.iterations = host.iterations;
  options.warmup = host.warmup;
  options.check_limit_bytes = host.check_limit_bytes;
  return as_host_run(real::run_cuda(schedule, options));
#else
  return {};
#endif
}

#ifdef DDLSIM_WITH_NCCL
// The NCCL backend's result in the host backend's terms, and NCCL's collective beside it.
real::HostRun run_on_nccl(const coll::Schedule& schedule, const real::HostOptions& host,
                          const real::MpiSession& mpi, Baseline& baseline) {
  real::NcclOptions options;
  options.iterations = host.iterations;
  options.warmup = host.warmup;
  options.check_limit_bytes = host.check_limit_bytes;
  options.timeout = host.timeout;
  const real::NcclRun nccl = real::run_nccl(schedule, options, mpi);
  baseline = {nccl.baseline, nccl.baseline_seconds};
  return as_host_run(nccl);
}
#endif

void run(const RealOptions& o) {
  if (o.backend != "host" && o.backend != "cuda" && o.backend != "nccl")
    throw InputError("--backend",
                     "unknown backend \"" + o.backend + "\"; expected host, cuda or nccl");
  if (const std::string why = real::pace_problem(o.pace); !why.empty())
    throw InputError(o.pace.latency_us < 0 || !(o.pace.latency_us <= 1e6) ? "--pace-latency-us"
                                                                          : "--pace-gbps",
                     why);
  if (o.backend != "cuda" && (o.pace.active() || o.gpus != 0))
    throw InputError(o.pace.active() ? "--pace-gbps" : "--gpus",
                     "pacing and --gpus apply to the cuda backend's virtual ranks; the " +
                         o.backend + " backend's links are " +
                         (o.backend == "host" ? "shaped with --emulate" : "the real ones"));
  if (o.backend != "host" && (!o.emulate.empty() || !o.fault.empty() || o.threads))
    throw InputError(!o.emulate.empty() ? "--emulate"
                     : !o.fault.empty() ? "--fault"
                                        : "--threads",
                     "applies to the host backend only");
#ifndef DDLSIM_WITH_CUDA
  if (o.backend == "cuda")
    throw InputError("--backend", "this ddlsim was built without CUDA (configure with "
                                  "-DDDLSIM_CUDA=ON where nvcc is installed); use --backend host");
#else
  if (const std::string why = real::cuda_unavailable_reason(); o.backend != "host" && !why.empty())
    throw InputError("--backend", "no usable GPU (" + why + "); use --backend host");
#endif
#ifndef DDLSIM_WITH_NCCL
  if (o.backend == "nccl")
    throw InputError("--backend",
                     "this ddlsim was built without the NCCL backend: it needs CUDA, NCCL and MPI "
                     "at configure time (nvcc on PATH or CUDA_HOME, NCCL_HOME where libnccl is "
                     "not in the toolkit, libopenmpi-dev; cmake -DDDLSIM_CUDA=ON); use --backend "
                     "host");
#endif
  if (!(o.timeout_seconds > 0 && o.timeout_seconds <= 3600))
    throw InputError("--timeout", "expected seconds in (0, 3600]");
  real::HostOptions host;
  host.mode = o.threads ? real::HostMode::threads : real::HostMode::processes;
  host.iterations = o.iterations;
  host.warmup = o.warmup;
  host.timeout = std::chrono::milliseconds(std::llround(o.timeout_seconds * 1000));
  host.check_limit_bytes = parse_size_flag("--check-limit", o.check_limit);
  host.fault = parse_fault(o.fault);

  std::vector<coll::Schedule> schedules;
  if (!o.schedule.empty()) {
    const Json dump = parse_json_file(o.schedule, "a schedule dump", kMaxScheduleDumpBytes);
    schedules.push_back(
        coll::Schedule::from_materialized(coll::schedule_from_json(JsonValue(dump, ""))));
  } else {
    const coll::CollectiveCall call = base_call(o);
    for (std::uint64_t bytes : sweep_sizes(o, call)) {
      coll::CollectiveCall sized = call;
      sized.bytes = bytes;
      schedules.push_back(coll::Schedule::make(sized));
    }
  }
  const coll::CollectiveCall& first = schedules.front().call();
  check_fault_reachable(host, schedules);

  EmulatedCluster cluster(o.emulate, schedules.front().ranks(), o.loss_percent);
  host.places = cluster.places();

#ifdef DDLSIM_WITH_NCCL
  std::optional<real::MpiSession> mpi;
  if (o.backend == "nccl") mpi.emplace();
  // One table per job: rank 0 prints and writes the JSON, the other ranks only run.
  const bool printer = !mpi || mpi->rank() == 0;
#else
  const bool printer = true;
#endif
  sim::CollectiveReport report{"ddlsim real", o.backend, first.op, first.ranks, 0, {}};
  const double factor = sim::bus_bandwidth_factor(first.op, first.ranks);
  std::string backend_text = "host backend (" + std::string(o.threads ? "threads" : "processes") +
                             ", " + cluster.description() + ")";
  if (o.backend == "cuda")
    backend_text =
        "cuda backend (virtual ranks on " +
        (o.gpus > 0 ? std::to_string(o.gpus) + " GPUs" : std::string("every visible GPU")) +
        (o.pace.active() ? ", links paced to " + std::to_string(o.pace.gbps) + " Gbit/s + " +
                               std::to_string(o.pace.latency_us) + " us"
                         : std::string()) +
        ")";
  if (o.backend == "nccl")
    backend_text = "nccl backend (one rank per GPU and MPI process; grouped ncclSend/ncclRecv, "
                   "our reduce kernels)";
  if (printer)
    print_header(std::string(coll::to_string(first.op)) + " on " + std::to_string(first.ranks) +
                     " ranks, " + backend_text + ", " + std::to_string(o.warmup) + " warm-up + " +
                     std::to_string(o.iterations) + " timed iterations",
                 o.backend == "nccl");
#ifdef DDLSIM_WITH_NCCL
  if (printer && mpi && mpi->size() == 1 && schedules.front().ranks() == 1)
    std::printf("# one MPI process: the degenerate single-rank case; more ranks need one GPU "
                "each (NCCL refuses two ranks on one GPU): mpirun -np N ddlsim real --backend "
                "nccl --ranks N\n");
#endif
  Json rows = Json::array(), timelines = Json::array();
  std::string failure;
  for (const coll::Schedule& schedule : schedules) {
    Baseline baseline;
    real::HostRun run;
    if (o.backend == "cuda") run = run_on_gpu(schedule, host, o);
#ifdef DDLSIM_WITH_NCCL
    else if (o.backend == "nccl")
      run = run_on_nccl(schedule, host, *mpi, baseline);
#endif
    else
      run = real::run_host(schedule, host);
    sim::CollectiveRow row;
    row.bytes = schedule.call().bytes;
    row.count = schedule.call().elements();
    row.dtype = schedule.call().dtype;
    row.reduction = schedule.call().reduction;
    row.algorithm = std::string(schedule.algorithm_name());
    row.time = static_cast<Picoseconds>(std::llround(run.seconds * 1e12));
    row.steps = run.steps;
    row.bytes_sent = run.bytes_sent;
    if (printer) print_row(row, factor, run, o.backend == "nccl" ? &baseline : nullptr);
    report.rows.push_back(row);
    rows.push_back({{"bytes", row.bytes},
                    {"time_ps", row.time},
                    {"time_us", ps_to_us(row.time)},
                    {"ok", run.ok},
                    {"checked", run.checked},
                    {"wrong", run.wrong},
                    {"error", run.error}});
    if (o.backend == "nccl") {
      rows.back()["nccl_baseline"] = baseline.name;
      rows.back()["nccl_time_ps"] = std::llround(baseline.seconds * 1e12);
    }
    if (const std::optional<real::AchievedRate> rate = real::achieved_send_rate(run)) {
      rows.back()["achieved_send"] = achieved_rate_json(*rate, cluster.configured_gbps());
      if (printer && !cluster.configured_gbps().empty())
        print_achieved_rate(*rate, cluster.configured_gbps());
    }
    timelines.push_back(timeline_json(run, row.bytes));
    if (!run.ok) {
      failure = "size " + std::to_string(row.bytes) + " B: " + run.error;
      break; // the rows so far are kept (and written below)
    }
  }
  if (!o.json.empty() && printer) {
    Json out = sim::to_json(report);
    out["backend"] = o.backend;
    out["mode"] = o.threads ? "threads" : "processes";
    out["iterations"] = o.iterations;
    out["warmup"] = o.warmup;
    out["machine"] = real::describe_machine(cluster.description());
    if (!cluster.configured_gbps().empty()) out["configured_link_gbps"] = cluster.configured_gbps();
    out["rows"] = std::move(rows);
    out["timelines"] = std::move(timelines);
    std::ofstream file(o.json);
    if (!file) throw InputError(o.json, "cannot open the --json file for writing");
    file << out.dump(1) << "\n";
    std::printf("# wrote %s\n", o.json.c_str());
  }
  if (!failure.empty()) throw RealRunFailed(failure);
}

} // namespace

void add_real_command(CLI::App& app) {
  auto o = std::make_shared<RealOptions>();
  auto* cmd = app.add_subcommand(
      "real", "Run a collective's Schedule for real (host backend: one process or thread per "
              "rank over TCP, loopback or an emulated cluster) and check it against the reference");
  cmd->add_option("--backend", o->backend,
                  "host, cuda (virtual ranks on this machine's GPUs) or nccl (one MPI process "
                  "per rank and GPU: mpirun -np N ddlsim real --backend nccl ...)")
      ->capture_default_str();
  cmd->add_option("--op", o->op,
                  "all_reduce, reduce_scatter, all_gather, broadcast, reduce, all_to_all or "
                  "send_recv")
      ->capture_default_str();
  cmd->add_option("--algo,--algorithm", o->algorithm, "Generator name (ddlsim schedule --list)")
      ->capture_default_str();
  cmd->add_option("--ranks,-n", o->ranks, "Number of ranks")
      ->check(checks::range(1, 256))
      ->capture_default_str();
  cmd->add_option("-b,--minbytes", o->min_bytes, "First size (nccl-tests meaning: 1K = 1024)")
      ->capture_default_str();
  cmd->add_option("-e,--maxbytes", o->max_bytes, "Last size")->capture_default_str();
  // At least 1.01 as a scenario's "factor": a factor barely above 1 made no progress for ~1e11
  // iterations of the size loop.
  cmd->add_option("-f,--stepfactor", o->factor, "Size multiplier (1.01 to 1024)")
      ->check(checks::range(1.01, 1024))
      ->capture_default_str();
  cmd->add_option("--dtype,-d", o->dtype, "fp32, fp16 or bf16")->capture_default_str();
  cmd->add_option("--reduction,-o", o->reduction, "sum, avg or adasum")->capture_default_str();
  cmd->add_option("--root,-r", o->root, "Root rank (broadcast, reduce; send_recv's receiver)")
      ->capture_default_str();
  cmd->add_option("--chunks", o->params.chunks, "Pipeline chunks")
      ->check(checks::range(1, 1 << 16));
  cmd->add_option("--channels", o->params.channels, "Parallel channels")
      ->check(checks::range(1, 64));
  cmd->add_option("--group-sizes", o->params.group_sizes, "Hierarchy, innermost first")
      ->expected(1, 8);
  cmd->add_option("--servers", o->params.servers, "Parameter servers");
  cmd->add_flag("--dedicated-servers", o->params.dedicated_servers, "Servers are extra ranks");
  cmd->add_option("--density", o->params.density, "Top-k density")->check(checks::range(1e-9, 1.0));
  cmd->add_option("--chunk-bytes", o->chunk_bytes, "Coarse-sparse chunk size");
  cmd->add_option("--nodes", o->nodes, "Ranks per node, e.g. 4 4 (hierarchical algorithms)");
  cmd->add_option("--schedule", o->schedule,
                  "Run this JSON dump (ddlsim schedule --json) instead of a generator");
  cmd->add_option("--iters,-i", o->iterations, "Timed iterations per size")
      ->check(checks::range(1, 100000))
      ->capture_default_str();
  cmd->add_option("--warmup,-w", o->warmup, "Untimed iterations first")
      ->check(checks::range(0, 100000))
      ->capture_default_str();
  cmd->add_flag("--threads", o->threads, "Ranks are threads of this process, not processes");
  cmd->add_option("--timeout", o->timeout_seconds,
                  "Seconds without progress after which a rank gives up (names the step)")
      ->capture_default_str();
  cmd->add_option("--check-limit", o->check_limit,
                  "Check against the reference executor while ranks x size is at most this")
      ->capture_default_str();
  cmd->add_option("--fault", o->fault,
                  "Inject a failure: RANK:STEP:crash or RANK:STEP:stall (for testing)");
  cmd->add_option("--emulate", o->emulate,
                  "Scenario whose NIC rate and latency shape the links between the ranks "
                  "(network namespaces, veth, bridge, tc; needs root)");
  // --loss shapes the emulated links; without them it would be silently ignored.
  cmd->add_option("--loss", o->loss_percent, "Packet loss per link direction, percent (--emulate)")
      ->check(checks::range(0.0, 100.0))
      ->needs("--emulate");
  cmd->add_option("--pace-gbps", o->pace.gbps,
                  "cuda: limit every transfer to this rate, Gbit/s (a virtual link standing in "
                  "for a slower one)");
  cmd->add_option("--pace-latency-us", o->pace.latency_us,
                  "cuda: and add this latency to every transfer, microseconds");
  cmd->add_option("--gpus", o->gpus,
                  "cuda: spread the virtual ranks over this many GPUs (default: every visible one)")
      ->check(checks::range(0, 1024));
  cmd->add_option("--json", o->json, "Write the report, machine and per-step timelines to FILE");
  cmd->callback([o] { run(*o); });
}

} // namespace ddlsim::cli
