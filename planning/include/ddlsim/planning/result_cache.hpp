// Results of plan points on disk, keyed by the point's whole resolved scenario, so that a re-run
// with one more axis value simulates only the new points.
//
// One file per point, named by a 64-bit FNV-1a hash of the key; the file keeps the key itself and
// a lookup compares it, so a hash collision is a miss, never a wrong result. The key includes
// ddlsim's version and the cache format: a new version recomputes everything. Files are written
// to a temporary name and renamed, so concurrent writers (threads, MPI ranks) never leave a torn
// file.
#pragma once

#include "ddlsim/planning/point_result.hpp"

#include <filesystem>
#include <optional>
#include <string>

namespace ddlsim::plan {

class ResultCache {
public:
  // `directory` is created on the first store. `version` names the code that made the results.
  ResultCache(std::filesystem::path directory, std::string version);

  // The cached metrics of the point whose resolved scenario is `point`, if any. A cache entry
  // that cannot be read is a miss.
  std::optional<PointMetrics> find(const Json& point) const;
  // Stores the metrics of a point that ran; throws InputError if the directory is not writable.
  void store(const Json& point, const PointMetrics& metrics) const;

  const std::filesystem::path& directory() const { return directory_; }

private:
  Json key(const Json& point) const;
  std::filesystem::path file_for(const Json& key) const;

  std::filesystem::path directory_;
  std::string version_;
};

} // namespace ddlsim::plan
