#include "call_flags.hpp"

#include "ddlsim/core/input_error.hpp"
#include "ddlsim/core/suggest.hpp"
#include "ddlsim/core/units.hpp"

#include <cctype>
#include <initializer_list>
#include <vector>

namespace ddlsim::cli {
namespace {

template <typename Enum>
Enum parse_name(const std::string& flag, const std::string& text, std::initializer_list<Enum> all) {
  std::vector<std::string> names;
  for (Enum e : all) {
    if (coll::to_string(e) == text) return e;
    names.emplace_back(coll::to_string(e));
  }
  throw InputError(flag, "unknown value \"" + text + "\"" + did_you_mean(text, names) +
                             "; expected " + join_choices(names));
}

} // namespace

void set_call_names(coll::CollectiveCall& call, const std::string& op, const std::string& dtype,
                    const std::string& reduction) {
  call.op = parse_name("--op", op,
                       {coll::Op::all_reduce, coll::Op::reduce_scatter, coll::Op::all_gather,
                        coll::Op::broadcast, coll::Op::reduce, coll::Op::all_to_all,
                        coll::Op::send_recv});
  call.dtype = parse_name("--dtype", dtype,
                          {coll::DataType::fp32, coll::DataType::fp16, coll::DataType::bf16});
  call.reduction =
      parse_name("--reduction", reduction,
                 {coll::Reduction::sum, coll::Reduction::avg, coll::Reduction::adasum});
}

std::uint64_t parse_size_flag(const std::string& flag, const std::string& text) {
  const auto bytes = parse_byte_size(text);
  if (!bytes)
    throw InputError(flag,
                     "expected a byte size such as 8, 4096 or \"1GiB\", found \"" + text + "\"");
  return *bytes;
}

std::uint64_t parse_nccl_tests_size_flag(const std::string& flag, const std::string& text) {
  std::string trimmed;
  for (char c : text)
    if (!std::isspace(static_cast<unsigned char>(c))) trimmed.push_back(c);
  if (!trimmed.empty()) {
    const char unit = static_cast<char>(std::toupper(static_cast<unsigned char>(trimmed.back())));
    const bool digit_before =
        trimmed.size() > 1 && std::isdigit(static_cast<unsigned char>(trimmed[trimmed.size() - 2]));
    if (digit_before && (unit == 'K' || unit == 'M' || unit == 'G' || unit == 'T'))
      return parse_size_flag(flag, trimmed.substr(0, trimmed.size() - 1) + unit + "iB");
  }
  return parse_size_flag(flag, text);
}

} // namespace ddlsim::cli
