#!/usr/bin/env bash
# The engine layer (sim/engine) owns the choice of engine: no file under apps/ or planning/ may
# compare or name an engine type, an engine's options, or an engine's own entry point. They call
# sim::simulate with the scenario's EngineSpec and present the EngineResult.
# Usage: engine_choice_test.sh SOURCE_ROOT. Checks first that the scan catches violations (and
# passes benign words), then scans SOURCE_ROOT/apps and SOURCE_ROOT/planning.
set -uo pipefail
root="$1"

# Engine names as string literals ("packet", not "packets" or "the packet engine"), the engines'
# option and spec types, their entry points and namespaces, and their headers.
pattern='"(analytic|flow|packet)"'
pattern+='|\b(Analytic|Flow|Packet)(Options|EngineSpec|Timing)\b'
pattern+='|\bsimulate_(analytic|flow|packet|dependency_order)\b|\bchoose_algorithm\b'
pattern+='|\bsim::(flow|packet)::'
pattern+='|ddlsim/sim/(flow/|packet/|analytic_engine\.hpp|auto_select\.hpp)'

# Prints every offending line under the given folders; returns 0 when there is none.
scan() {
  local found
  found=$(grep -rnE --include='*.cpp' --include='*.hpp' --include='*.h' "$pattern" "$@")
  [[ -z "$found" ]] && return 0
  printf '%s\n' "$found"
  return 1
}

# The scan must catch each of these lines and pass the benign file.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
violations=(
  'if (scenario.engine.type == "packet") {'
  'const bool forks = name == "flow";'
  'sim::AnalyticOptions engine;'
  'sim::packet::PacketOptions options;'
  'result = sim::simulate_analytic(topology, router, schedule, engine);'
  'auto timing = simulate_flow(topology, router, schedule, options);'
  '#include "ddlsim/sim/packet/packet_report.hpp"'
  'call.algorithm = sim::choose_algorithm(topology, router, call, engine).algorithm;'
)
for line in "${violations[@]}"; do
  mkdir -p "$work/bad"
  printf '%s\n' "$line" >"$work/bad/violation.cpp"
  if scan "$work/bad" >/dev/null; then
    echo "FAIL: the scan missed a violation: $line"
    exit 1
  fi
done
mkdir -p "$work/good"
cat >"$work/good/benign.cpp" <<'BENIGN'
// packets, flows and the analytic engine are words, not engine names
out << "simulated (analytic engine, this scenario): " << packets << " packets";
const std::string unit(sim::progress_unit(scenario.engine)); // "events" or "steps"
BENIGN
if ! scan "$work/good"; then
  echo "FAIL: the scan flags benign words (above)"
  exit 1
fi

if ! scan "$root/apps" "$root/planning"; then
  echo "FAIL: apps/ and planning/ must not choose or name an engine (lines above); call"
  echo "sim::simulate (sim/engine/include/ddlsim/sim/engine.hpp) with the scenario's EngineSpec"
  exit 1
fi
echo "ok: apps/ and planning/ name no engine"
