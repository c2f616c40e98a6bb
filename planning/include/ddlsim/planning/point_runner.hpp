// Runs plan points on worker threads. Each point is independent (its own topology, router and
// engine), so points run in parallel without sharing state; results come back in the order of
// `indices`, whatever order the threads finish in.
#pragma once

#include "ddlsim/planning/point_result.hpp"

#include <cstddef>
#include <functional>
#include <vector>

namespace ddlsim::plan {

using EvaluatePoint = std::function<PointResult(std::size_t index)>;
// Called from the worker threads (serialised by the runner) after each point: (done, total).
using PointProgress = std::function<void(std::size_t done, std::size_t total)>;

// Evaluates every index with `threads` workers (0 = one per hardware thread). An exception from
// `evaluate` becomes that point's error; the other points still run.
std::vector<PointResult> run_points(const std::vector<std::size_t>& indices,
                                    const EvaluatePoint& evaluate, unsigned threads,
                                    const PointProgress& progress = {});

} // namespace ddlsim::plan
