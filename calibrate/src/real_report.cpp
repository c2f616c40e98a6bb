#include "ddlsim/calibrate/real_report.hpp"
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/core/units.hpp"

namespace ddlsim::calib {
namespace {

template <typename Enum> Enum enum_named(const JsonValue& value, std::initializer_list<Enum> all) {
  std::vector<std::string> names;
  for (Enum e : all) names.emplace_back(coll::to_string(e));
  const std::string name = value.choice(names);
  for (Enum e : all)
    if (coll::to_string(e) == name) return e;
  return *all.begin();
}

} // namespace

MeasuredSet read_real_report(const Json& report, const std::string& source) {
  MeasuredSet set;
  set.source = source;
  set.kind = "ddlsim-report";
  try {
    JsonObject root(report, "");
    const coll::Op op = enum_named(root.required("op"),
                                   {coll::Op::all_reduce, coll::Op::reduce_scatter,
                                    coll::Op::all_gather, coll::Op::broadcast, coll::Op::reduce,
                                    coll::Op::all_to_all, coll::Op::send_recv});
    const int ranks = static_cast<int>(root.required("ranks").integer(1, 1 << 20));
    set.system.ranks = ranks;
    set.system.notes.push_back("ranks " + std::to_string(ranks) + " from the report's \"ranks\"");
    if (auto backend = root.optional("backend"); backend && backend->raw().is_string())
      set.system.transport = backend->raw().get<std::string>();
    if (auto machine = root.optional("machine"); machine && machine->raw().is_string())
      set.system.gpu_name = machine->raw().get<std::string>();
    for (const JsonValue& row_value : root.required("results").array(1, 1 << 20)) {
      JsonObject row = row_value.object();
      MeasuredPoint point;
      point.op = op;
      point.ranks = ranks;
      point.bytes = row.required("bytes").bytes(0, std::uint64_t{1} << 50);
      if (auto v = row.optional("type"))
        point.dtype =
            enum_named(*v, {coll::DataType::fp32, coll::DataType::fp16, coll::DataType::bf16});
      if (auto v = row.optional("redop"))
        point.reduction =
            enum_named(*v, {coll::Reduction::sum, coll::Reduction::avg, coll::Reduction::adasum});
      if (auto v = row.optional("algorithm")) point.algorithm = v->non_empty_string();
      if (auto v = row.optional("time_ps"))
        point.seconds = ps_to_seconds(v->integer(1, INT64_MAX));
      else if (auto us = row.optional("time_us"))
        point.seconds = us->positive_number(1e12) * 1e-6;
      else
        row_value.fail("a result row needs \"time_ps\" or \"time_us\"");
      point.where = source + ":" + row_value.path();
      set.points.push_back(point);
    }
  } catch (const InputError& e) {
    throw InputError(e.where().starts_with(source) ? e.where() : source + ": " + e.where(),
                     e.reason());
  }
  return set;
}

MeasuredSet read_real_report_file(const std::filesystem::path& file) {
  return read_real_report(parse_json_file(file, "a `ddlsim real --json` report"), file.string());
}

} // namespace ddlsim::calib
