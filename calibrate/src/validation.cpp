#include "ddlsim/calibrate/validation.hpp"
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/core/units.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace ddlsim::calib {
namespace {

double percentile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  // Nearest rank: the smallest value with at least q of the values at or below it.
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(values.size())));
  return values[std::clamp<std::size_t>(rank, 1, values.size()) - 1];
}

ValidationRow row_of(const MeasuredPoint& point, const Prediction& prediction, bool predicted) {
  return {point, prediction, 100.0 * (prediction.seconds - point.seconds) / point.seconds,
          predicted};
}

void finish(ValidationReport& report) {
  report.all = summarize(report.rows, 0);
  report.large = summarize(report.rows, report.min_bytes);
}

} // namespace

ErrorSummary summarize(std::span<const ValidationRow> rows, std::uint64_t min_bytes) {
  std::vector<double> errors;
  for (const ValidationRow& row : rows)
    if (row.predicted && row.point.bytes >= min_bytes)
      errors.push_back(std::abs(row.error_percent));
  ErrorSummary s;
  s.points = errors.size();
  if (errors.empty()) return s;
  std::vector<double> sorted = errors;
  std::sort(sorted.begin(), sorted.end());
  const std::size_t n = sorted.size();
  s.median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  s.p90 = percentile(errors, 0.9);
  s.max = sorted.back();
  return s;
}

ValidationReport validate(const PointModel& model, const Calibration& calibration,
                          std::span<const MeasuredPoint> points, std::uint64_t min_bytes) {
  return validate(model, std::span<const Calibration>(&calibration, 1), points, min_bytes);
}

ValidationReport validate(const PointModel& model, std::span<const Calibration> calibrations,
                          std::span<const MeasuredPoint> points, std::uint64_t min_bytes) {
  ValidationReport report;
  report.min_bytes = min_bytes;
  const std::vector<Prediction> predictions = model.predict(calibrations, points);
  for (std::size_t i = 0; i < points.size(); ++i)
    report.rows.push_back(row_of(points[i], predictions[i], true));
  finish(report);
  return report;
}

CrossValidation parse_cross_validation(const std::string& text) {
  CrossValidation how;
  how.text = text;
  const auto colon = text.find(':');
  const std::string kind = text.substr(0, colon);
  const std::string arg = colon == std::string::npos ? "" : text.substr(colon + 1);
  auto fail = [&](const std::string& why) {
    throw InputError("--cross-validate " + text,
                     why + "; expected kfold:K (K >= 2), sizes:A,B,... (e.g. sizes:64KiB,256MiB) "
                           "or ranks:N");
  };
  if (kind == "kfold") {
    how.kind = CrossValidation::Kind::kfold;
    try {
      how.folds = std::stoi(arg);
    } catch (const std::exception&) {
      fail("K is not a number");
    }
    if (how.folds < 2 || how.folds > 1000) fail("K must be 2..1000");
  } else if (kind == "sizes") {
    how.kind = CrossValidation::Kind::sizes;
    std::istringstream in(arg);
    for (std::string item; std::getline(in, item, ',');) {
      const auto bytes = parse_byte_size(item);
      if (!bytes) fail("\"" + item + "\" is not a byte size");
      how.sizes.push_back(*bytes);
    }
    if (how.sizes.empty()) fail("no sizes given");
  } else if (kind == "ranks") {
    how.kind = CrossValidation::Kind::ranks;
    try {
      how.ranks = std::stoi(arg);
    } catch (const std::exception&) {
      fail("N is not a number");
    }
    if (how.ranks < 1) fail("N must be >= 1");
  } else {
    fail("unknown mode \"" + kind + "\"");
  }
  return how;
}

ValidationReport cross_validate(const PointModel& model, std::span<const MeasuredPoint> points,
                                const CrossValidation& how, const FitOptions& options,
                                std::uint64_t min_bytes) {
  ValidationReport report;
  report.mode = "cross-validation " + how.text;
  report.min_bytes = min_bytes;
  report.rows.resize(points.size());
  // fold[i] = the fold point i is predicted in; -1 = always in the fit set.
  std::vector<int> fold(points.size(), 0);
  int folds = 1;
  if (how.kind == CrossValidation::Kind::kfold) {
    // Folds by size order, so each fold spans all sizes.
    std::vector<std::size_t> order(points.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return points[a].bytes < points[b].bytes;
    });
    for (std::size_t k = 0; k < order.size(); ++k) fold[order[k]] = static_cast<int>(k) % how.folds;
    folds = how.folds;
  } else {
    for (std::size_t i = 0; i < points.size(); ++i) {
      const bool train =
          how.kind == CrossValidation::Kind::sizes
              ? std::find(how.sizes.begin(), how.sizes.end(), points[i].bytes) != how.sizes.end()
              : points[i].ranks == how.ranks;
      fold[i] = train ? -1 : 0;
    }
  }
  for (int f = 0; f < folds; ++f) {
    std::vector<MeasuredPoint> train, test;
    std::vector<std::size_t> test_index, train_index;
    for (std::size_t i = 0; i < points.size(); ++i) {
      if (fold[i] == f) {
        test.push_back(points[i]);
        test_index.push_back(i);
      } else {
        train.push_back(points[i]);
        train_index.push_back(i);
      }
    }
    if (train.empty())
      throw InputError("--cross-validate " + how.text, "leaves no points to fit on");
    if (test.empty())
      throw InputError("--cross-validate " + how.text, "leaves no points to predict");
    const FitReport fit = fit_calibration(model, train, options);
    if (!fit.protocol_selection.empty())
      report.notes.push_back("fit " + std::to_string(f + 1) + ": " + fit.protocol_selection);
    if (!fit.impossible.empty()) {
      std::string values;
      for (const ImpossibleValue& value : fit.impossible)
        values += (values.empty() ? "" : "; ") + describe(value);
      report.mismatches.push_back("fit " + std::to_string(f + 1) + ": " + values);
    }
    const std::vector<Prediction> predicted = model.predict(fit.calibration, test);
    for (std::size_t k = 0; k < test.size(); ++k)
      report.rows[test_index[k]] = row_of(test[k], predicted[k], true);
    if (how.kind != CrossValidation::Kind::kfold)
      for (std::size_t k = 0; k < train.size(); ++k)
        report.rows[train_index[k]] = row_of(train[k], fit.predictions[k], false);
  }
  finish(report);
  return report;
}

void print_validation(const ValidationReport& report, std::ostream& out) {
  out << "# " << report.mode << "\n";
  for (const std::string& note : report.notes) out << "# " << note << "\n";
  for (const std::string& line : report.mismatches)
    out << "# warning: model mismatch (physically impossible fitted value), " << line << "\n";
  out << "#        size  ranks   measured(us)  simulated(us)   error%  algorithm/protocol\n";
  char line[256];
  for (const ValidationRow& row : report.rows) {
    std::snprintf(line, sizeof line, "%13llu %6d %14.2f %14.2f %8.2f%s  %s/%s\n",
                  static_cast<unsigned long long>(row.point.bytes), row.point.ranks,
                  row.point.seconds * 1e6, row.simulated.seconds * 1e6, row.error_percent,
                  row.predicted ? " " : "*", row.simulated.algorithm.c_str(),
                  row.simulated.protocol.c_str());
    out << line;
  }
  auto summary = [&](const char* what, const ErrorSummary& s) {
    if (s.points == 0) { // no median of nothing: never a perfect 0.00% for no data
      out << "# |error| " << what << ": 0 points (no median)\n";
      return;
    }
    std::snprintf(line, sizeof line,
                  "# |error| %s: %zu points, median %.2f%%, p90 %.2f%%, max %.2f%%\n", what,
                  s.points, s.median, s.p90, s.max);
    out << line;
  };
  if (std::any_of(report.rows.begin(), report.rows.end(),
                  [](const ValidationRow& r) { return !r.predicted; }))
    out << "# * = a point the fit saw (not counted in the summary)\n";
  summary("all sizes", report.all);
  const std::string large = ">= " + format_bytes(report.min_bytes);
  summary(large.c_str(), report.large);
}

Json to_json(const ValidationReport& report) {
  Json rows = Json::array();
  for (const ValidationRow& row : report.rows)
    rows.push_back({{"bytes", row.point.bytes},
                    {"ranks", row.point.ranks},
                    {"measured_us", row.point.seconds * 1e6},
                    {"simulated_us", row.simulated.seconds * 1e6},
                    {"error_percent", row.error_percent},
                    {"predicted", row.predicted},
                    {"algorithm", row.simulated.algorithm},
                    {"protocol", row.simulated.protocol},
                    {"where", row.point.where}});
  auto summary = [](const ErrorSummary& s) {
    return Json{{"points", s.points},
                {"median_abs_error_percent", s.median},
                {"p90_abs_error_percent", s.p90},
                {"max_abs_error_percent", s.max}};
  };
  return {{"mode", report.mode},
          {"min_bytes", report.min_bytes},
          {"rows", rows},
          {"summary_all", summary(report.all)},
          {"summary_large", summary(report.large)},
          {"notes", report.notes},
          {"model_mismatch", report.mismatches}};
}

} // namespace ddlsim::calib
