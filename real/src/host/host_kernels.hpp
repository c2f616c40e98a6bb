// The arithmetic of the host backend: element-wise reductions and scaling on the call's dtype
// encoding, and the compress / decompress codecs (delegated to the collectives' one
// implementation). They round exactly as the reference executor does, so a correct run matches
// the reference bit for bit.
#pragma once

#include "ddlsim/collectives/call.hpp"
#include "ddlsim/collectives/step.hpp"

#include <cstddef>
#include <span>

namespace ddlsim::real::host {

// out = a (op) b over whole elements; out may alias a or b. sum and avg add; adasum combines
// the two vectors of this range (Maleki et al.), so it must see the whole range at once.
void combine(coll::Reduction reduction, coll::DataType type, std::span<const std::byte> a,
             std::span<const std::byte> b, std::span<std::byte> out);

// dst = src * factor, rounded to the dtype.
void scale(coll::DataType type, double factor, std::span<const std::byte> src,
           std::span<std::byte> dst);

// Runs a local step (reduce, copy, scale, compress, decompress) on spans of the rank's buffers.
// Throws std::runtime_error for a data-dependent codec problem.
void run_local_step(const coll::Step& step, coll::Reduction reduction, coll::DataType type,
                    std::span<const std::byte> src, std::span<const std::byte> aux,
                    std::span<std::byte> dst);

} // namespace ddlsim::real::host
