// The codecs of step.hpp (top-k, fp16 cast, chunk norms, chunk select) for the reference
// executor: the byte layouts are defined in step.hpp; this is their one implementation.
#pragma once

#include "ddlsim/collectives/call.hpp"
#include "ddlsim/collectives/step.hpp"

#include <cstddef>
#include <span>
#include <string>

namespace ddlsim::coll::detail {

// Empty when the sizes of a compress / decompress step fit its codec, else what is wrong.
std::string codec_problem(const Step& step, DataType dtype);

// dst = codec(src [, aux]). Throws std::runtime_error for data-dependent problems.
void compress(const Step& step, DataType dtype, std::span<const std::byte> src,
              std::span<const std::byte> aux, std::span<std::byte> dst);
// dst = dst (op) inverse_codec(src [, aux]); chunk_select writes the chunks back (no op).
void decompress(const Step& step, DataType dtype, std::span<const std::byte> src,
                std::span<const std::byte> aux, std::span<std::byte> dst);

} // namespace ddlsim::coll::detail
