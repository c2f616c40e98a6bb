#include "ddlsim/planning/result_cache.hpp"

#include "ddlsim/core/input_error.hpp"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include <unistd.h>

namespace ddlsim::plan {
namespace {

constexpr int kCacheFormat = 2; // 2: metrics carry the node kinds a point uses

std::uint64_t fnv1a(const std::string& text) {
  std::uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

} // namespace

ResultCache::ResultCache(std::filesystem::path directory, std::string version)
    : directory_(std::move(directory)), version_(std::move(version)) {}

Json ResultCache::key(const Json& point) const {
  return {{"format", kCacheFormat}, {"ddlsim", version_}, {"point", point}};
}

std::filesystem::path ResultCache::file_for(const Json& key) const {
  char name[32];
  std::snprintf(name, sizeof name, "%016llx.json",
                static_cast<unsigned long long>(fnv1a(key.dump())));
  return directory_ / name;
}

std::optional<PointMetrics> ResultCache::find(const Json& point) const {
  const Json k = key(point);
  std::ifstream in(file_for(k));
  if (!in) return std::nullopt;
  try {
    const Json entry = Json::parse(in);
    if (entry.at("key") != k) return std::nullopt; // a hash collision
    return metrics_from_json(entry.at("metrics"));
  } catch (const std::exception&) {
    return std::nullopt; // unreadable entry: recompute (and overwrite) it
  }
}

void ResultCache::store(const Json& point, const PointMetrics& metrics) const {
  std::error_code error;
  std::filesystem::create_directories(directory_, error);
  if (error)
    throw InputError(directory_.string(), "cannot create the plan cache directory (" +
                                              error.message() +
                                              "); pass --cache DIR or --no-cache");
  const Json k = key(point);
  const std::filesystem::path file = file_for(k);
  std::ostringstream unique;
  unique << file.string() << ".tmp." << std::this_thread::get_id() << "." << ::getpid();
  const std::filesystem::path temporary = unique.str();
  {
    std::ofstream out(temporary);
    out << Json{{"key", k}, {"metrics", to_json(metrics)}}.dump() << "\n";
    if (!out)
      throw InputError(temporary.string(), "cannot write a plan cache entry; pass --cache DIR or "
                                           "--no-cache");
  }
  std::filesystem::rename(temporary, file, error);
  if (error)
    throw InputError(file.string(), "cannot store a plan cache entry (" + error.message() + ")");
}

} // namespace ddlsim::plan
