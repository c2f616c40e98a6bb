// Algorithm: a collective generator. Each lives in its own file under collectives/src/algorithms/
// with its alpha-beta-gamma cost and its source in the file comment, and registers itself in
// registry.cpp. Nothing outside collectives/ knows how any algorithm works.
#pragma once

#include "ddlsim/collectives/call.hpp"
#include "ddlsim/collectives/step_stream.hpp"

#include <string_view>
#include <vector>

namespace ddlsim::coll {

class Algorithm {
public:
  virtual ~Algorithm() = default;

  virtual std::string_view name() const = 0; // e.g. "ring", "rabenseifner"
  virtual Op op() const = 0;
  // One line for `ddlsim schedule --list`: what it does, its cost, its source.
  virtual std::string_view summary() const = 0;

  // Throws InputError (where = "algorithm <name>") when the call cannot be done by this
  // algorithm, saying why and what to change (e.g. adasum needs a power-of-two rank count).
  virtual void check(const CollectiveCall& call) const = 0;
  // Ranks in the schedule: call.ranks plus any dedicated servers.
  virtual int total_ranks(const CollectiveCall& call) const { return call.ranks; }
  virtual int channels(const CollectiveCall& call) const { return call.params.channels; }
  virtual std::uint64_t scratch_bytes(const CollectiveCall& /*call*/, int /*rank*/) const {
    return 0;
  }
  // The program of one (rank, channel); a fresh stream on every call. The stream may outlive
  // `call`: copy what it needs into the coroutine (small scalars; never a per-rank table), do not
  // keep a reference to `call`. Only called for calls that passed check() and with bytes > 0
  // (a zero-byte collective has empty programs).
  virtual StepStream program(const CollectiveCall& call, int rank, int channel) const = 0;

  // The outputs this algorithm promises for `inputs` ([rank][element], rank < call.ranks), used
  // by the reference executor's check. Default: the exact collective (exact_outputs). Lossy
  // algorithms (top-k, coarse-grained sparse) override it with their defined approximation.
  virtual std::vector<std::vector<double>>
  expected_outputs(const CollectiveCall& call,
                   const std::vector<std::vector<double>>& inputs) const;
};

// The mathematical result of the collective: out[rank][element] for every rank < call.ranks
// (for reduce, only the root's output is defined; other ranks get an empty vector).
std::vector<std::vector<double>> exact_outputs(const CollectiveCall& call,
                                               const std::vector<std::vector<double>>& inputs);

// The registered algorithm for (op, name), or nullptr.
const Algorithm* find_algorithm(Op op, std::string_view name);
// All registered algorithms for an op, in a fixed order.
std::vector<const Algorithm*> algorithms_for(Op op);
// All registered algorithms.
std::vector<const Algorithm*> all_algorithms();

} // namespace ddlsim::coll
