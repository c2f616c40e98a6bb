// Reading measurement files of either kind, and the cluster a measurement implies when no
// scenario describes it.
#pragma once

#include "ddlsim/calibrate/nccl_log.hpp"
#include "ddlsim/calibrate/real_report.hpp"
#include "ddlsim/topologies/cluster_spec.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace ddlsim::calib {

// A JSON report (first non-space character '{') or an nccl-tests log (`lenient`: rows that do
// not parse are skipped with a warning in MeasuredSet::warnings, parse_nccl_log).
MeasuredSet read_measured_file(const std::filesystem::path& file, const SystemHints& hints,
                               NcclColumn column = NcclColumn::out_of_place, bool lenient = false);

// A generic cluster for a system no scenario describes: `nodes` nodes of `gpus_per_node` GPUs
// (NVSwitch-like uniform NVLink when > 1 GPU, else PCIe), one NIC each, on one switch, with
// nominal rates the fit then scales (100 GB/s NVLink, 16 GB/s PCIe, 100 Gb/s NIC). Appends what
// it assumed to `notes`. Throws InputError when nodes or GPUs per node are unknown.
topo::ClusterSpec generic_cluster(const MeasuredSystem& system, std::vector<std::string>& notes);

} // namespace ddlsim::calib
