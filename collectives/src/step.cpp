#include "ddlsim/collectives/step.hpp"

namespace ddlsim::coll {

std::string_view to_string(StepKind kind) {
  switch (kind) {
  case StepKind::send:
    return "send";
  case StepKind::recv:
    return "recv";
  case StepKind::recv_reduce:
    return "recv_reduce";
  case StepKind::reduce:
    return "reduce";
  case StepKind::copy:
    return "copy";
  case StepKind::scale:
    return "scale";
  case StepKind::compress:
    return "compress";
  case StepKind::decompress:
    return "decompress";
  case StepKind::compute:
    return "compute";
  case StepKind::switch_reduce:
    return "switch_reduce";
  case StepKind::switch_multicast:
    return "switch_multicast";
  }
  return "?";
}

std::string_view to_string(Buffer buffer) {
  switch (buffer) {
  case Buffer::input:
    return "input";
  case Buffer::output:
    return "output";
  case Buffer::scratch:
    return "scratch";
  }
  return "?";
}

std::string_view to_string(Codec codec) {
  switch (codec) {
  case Codec::none:
    return "none";
  case Codec::topk:
    return "topk";
  case Codec::fp16_cast:
    return "fp16_cast";
  case Codec::chunk_norms:
    return "chunk_norms";
  case Codec::chunk_select:
    return "chunk_select";
  }
  return "?";
}

} // namespace ddlsim::coll
