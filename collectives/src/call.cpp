#include "ddlsim/collectives/call.hpp"

namespace ddlsim::coll {

std::string_view to_string(Op op) {
  switch (op) {
  case Op::all_reduce:
    return "all_reduce";
  case Op::reduce_scatter:
    return "reduce_scatter";
  case Op::all_gather:
    return "all_gather";
  case Op::broadcast:
    return "broadcast";
  case Op::reduce:
    return "reduce";
  case Op::all_to_all:
    return "all_to_all";
  case Op::send_recv:
    return "send_recv";
  }
  return "?";
}

std::string_view to_string(DataType type) {
  switch (type) {
  case DataType::fp32:
    return "fp32";
  case DataType::fp16:
    return "fp16";
  case DataType::bf16:
    return "bf16";
  }
  return "?";
}

std::string_view to_string(Reduction reduction) {
  switch (reduction) {
  case Reduction::sum:
    return "sum";
  case Reduction::avg:
    return "avg";
  case Reduction::adasum:
    return "adasum";
  }
  return "?";
}

std::size_t element_size(DataType type) {
  return type == DataType::fp32 ? 4 : 2;
}

} // namespace ddlsim::coll
