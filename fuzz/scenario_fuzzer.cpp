// libFuzzer target for the scenario loader: any byte string must either load (and, when small
// enough, build its topology) or fail with InputError. Anything else (a crash, another exception,
// a sanitizer report) is a bug; each input that found one goes to tests/data/fuzz-regressions/.
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/scenario/scenario.hpp"
#include "ddlsim/topologies/builders.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const ddlsim::Json json = ddlsim::parse_json_text(text, "fuzz");
    const ddlsim::Scenario scenario = ddlsim::load_scenario(json, "fuzz", ".");
    long gpus = 0;
    for (const auto& group : scenario.topology.node_groups)
      gpus += static_cast<long>(group.count) * group.spec.gpus;
    if (gpus <= 4096) (void)ddlsim::topo::build_topology(scenario.topology);
  } catch (const ddlsim::InputError&) {
    // Rejected with a message: the expected outcome for bad input.
  }
  return 0;
}
