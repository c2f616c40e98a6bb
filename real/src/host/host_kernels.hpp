// The arithmetic of the host backend is the collectives' own (element_kernels.hpp): the same
// reductions, Adasum, scaling and codecs as the reference executor, so a correct run matches the
// reference bit for bit. These names keep the host's spelling.
#pragma once

#include "element_kernels.hpp"

namespace ddlsim::real::host {

using coll::detail::combine;
using coll::detail::run_local_step;
using coll::detail::scale;

} // namespace ddlsim::real::host
