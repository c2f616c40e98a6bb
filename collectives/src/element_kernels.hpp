// The element arithmetic of step.hpp, written once: the reduction of two operands (sum, or the
// Adasum combination), scaling, and every local step on host memory. The reference executor and
// the host backend both run these, so a correct real run matches the reference bit for bit.
#pragma once

#include "ddlsim/collectives/call.hpp"
#include "ddlsim/collectives/step.hpp"

#include <cstddef>
#include <span>

namespace ddlsim::coll::detail {

// out = a (op) b over whole elements of `type`; out may alias a or b. sum and avg add (avg
// scales in a later step); adasum combines the two vectors of this range (Maleki et al.), with
// guards for zero norms, so it must see the whole range at once.
void combine(Reduction reduction, DataType type, std::span<const std::byte> a,
             std::span<const std::byte> b, std::span<std::byte> out);

// dst = src * factor, rounded to the dtype.
void scale(DataType type, double factor, std::span<const std::byte> src, std::span<std::byte> dst);

// Runs a local step (reduce, copy, scale, compress, decompress; compute touches no buffer) on
// spans of one rank's buffers. Throws std::runtime_error for a data-dependent codec problem.
void run_local_step(const Step& step, Reduction reduction, DataType type,
                    std::span<const std::byte> src, std::span<const std::byte> aux,
                    std::span<std::byte> dst);

} // namespace ddlsim::coll::detail
