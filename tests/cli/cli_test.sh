#!/usr/bin/env bash
# End-to-end checks of the `ddlsim` command as a user runs it. Usage: cli_test.sh DDLSIM SCENARIOS
# Prints "N passed, M failed" and exits non-zero on any failure.
set -u
ddlsim="$1"
scenarios="$2"
source "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"

check "--version names the program" bash -c "'$ddlsim' --version | grep -q '^ddlsim [0-9]'"
check "--help lists every subcommand" bash -c \
  "'$ddlsim' --help | grep -q run && '$ddlsim' --help | grep -q schedule && '$ddlsim' --help | grep -q topo && '$ddlsim' --help | grep -q check"
check "no subcommand is bad input (exit 2)" expect_error 2 "subcommand" 
# scenarios/llm-corpus/ holds published layouts written from their sources alone; the memory
# model may refuse one, which scripts/validate-llm lists as unscored (validate_llm_test.sh).
check "check accepts every bundled scenario" bash -c \
  "find '$scenarios' -name '*.json' -not -path '*/schema/*' -not -path '*/presets/*' -not -path '*/llm-corpus/*' -print0 | xargs -0 '$ddlsim' check"

# A typo in a scenario: exit 2, the path and the suggestion on stderr, nothing on stdout.
cat >"$work/typo.json" <<'JSON'
{"include": "cloud-v100-25g", "topology": {"fabric": {"type": "single_switch", "latncy_ns": 5}}}
JSON
check "a typo names the path and the nearest key" expect_error 2 'did you mean "latency_ns"' run "$work/typo.json"
check "a missing file is bad input" expect_error 2 "scenario" run "$work/missing.json"
check "a bad flag value is bad input" expect_error 2 "did you mean \"all_reduce\"" schedule --op allreduce

# Determinism: the same scenario and seed give a byte-identical report.
check "run writes a JSON report" "$ddlsim" run "$scenarios/default.json" --json "$work/a.json"
check "run again writes the same bytes" "$ddlsim" run "$scenarios/default.json" --json "$work/b.json"
check "the two reports are byte-identical" cmp "$work/a.json" "$work/b.json"
check "the table has the nccl-tests columns" bash -c \
  "'$ddlsim' run '$scenarios/default.json' | grep -q 'size.*count.*type.*redop.*time(us).*algbw.*busbw'"
check "run --trace writes a Chrome trace" bash -c \
  "'$ddlsim' run '$scenarios/examples/custom-two-switches.json' --trace '$work/t.json' >/dev/null && /usr/bin/python3 -c \"import json,sys; d=json.load(open('$work/t.json')); assert any(e['ph']=='X' for e in d['traceEvents']); names={(e['pid'], e['tid']): e['args']['name'] for e in d['traceEvents'] if e['ph']=='M' and e['name']=='thread_name'}; tracks={(e['pid'], e['tid']) for e in d['traceEvents'] if e['ph']=='X'}; assert tracks <= set(names), tracks - set(names); assert names[(0, 1000)] == 'rank 1 (node1/gpu0, V100-SXM2-16GB) \u00b7 channel 0', names\""
check "run --links writes per-link loads, busiest first, and names them under the table" bash -c \
  "'$ddlsim' run '$scenarios/examples/custom-two-switches.json' --links '$work/l.json' | grep -q '^# busiest links' && /usr/bin/python3 -c \"import json; d=json.load(open('$work/l.json')); s=d['sizes'][-1]; u=[l['utilisation'] for l in s['links']]; assert u and u==sorted(u, reverse=True) and all(l['bytes']>0 for l in s['links'])\""
check "run --links rejects a training workload" expect_error 2 "--links" run "$scenarios/resnet50-cloud-vs-dgx.json" --links "$work/l2.json"
check "auto explains its choice" bash -c "'$ddlsim' run '$scenarios/dgx-a100.json' --algorithm auto | grep -q 'auto chose'"
cat >"$work/nccl.json" <<'JSON'
{ "topology": { "nodes": [{ "preset": "dgx-h100", "count": 2 }], "fabric": { "type": "single_switch" } },
  "workload": { "type": "collective", "op": "all_reduce", "algorithm": "ring", "sizes": ["1MiB"] } }
JSON
check "--algorithm nccl says what NCCL's model chose per size" bash -c \
  "'$ddlsim' run '$work/nccl.json' --algorithm nccl | grep -q '^#   nccl chose 1 MiB: .*, [0-9]* channel'"

# The flow engine (SimGrid in a child process per size): same seed, same bytes; SimGrid says
# nothing on stdout; a trace comes back from the child.
flow="$scenarios/examples/flow-leaf-spine-lv08.json"
check "flow: run writes a JSON report" "$ddlsim" run "$flow" --json "$work/fa.json"
check "flow: run again writes the same bytes" "$ddlsim" run "$flow" --json "$work/fb.json"
check "flow: the two reports are byte-identical" cmp "$work/fa.json" "$work/fb.json"
check "flow: stdout holds only the report" bash -c \
  "'$ddlsim' run '$flow' 2>/dev/null | grep -v '^#' | grep -Evq '^ +[0-9]+ +[0-9]+ +fp32' && exit 1 || exit 0"
check "flow: run --trace writes a Chrome trace" bash -c \
  "'$ddlsim' run '$flow' --trace '$work/ft.json' >/dev/null && /usr/bin/python3 -c \"import json,sys; d=json.load(open('$work/ft.json')); assert any(e['ph']=='X' for e in d['traceEvents'])\""

check "--max-wall-seconds stops cleanly with exit 4" expect_error 4 "stopped at --max-wall-seconds" \
  run "$scenarios/examples/fat-tree-k16-dgx-h100.json" --max-wall-seconds 0.05

check "topo describe prints the figures" bash -c \
  "'$ddlsim' topo describe '$scenarios/default.json' | grep -q 'bisection bandwidth'"
check "topo describe --dot writes Graphviz" bash -c \
  "'$ddlsim' topo describe '$scenarios/default.json' --dot '$work/c.dot' >/dev/null && grep -q '^graph\|^digraph' '$work/c.dot'"
check "schedule --check proves a ring correct" bash -c \
  "'$ddlsim' schedule --op all_reduce --algo ring --ranks 5 --bytes 4KiB --check | grep -q 'reference executor: correct'"
check "schedule --json dumps a loadable schedule" bash -c \
  "'$ddlsim' schedule --algo rabenseifner --ranks 6 --bytes 1KiB --json '$work/s.json' >/dev/null && /usr/bin/python3 -c \"import json; json.load(open('$work/s.json'))\""

# Training workloads: the iteration table, a deterministic report, a trace with both streams.
training="$scenarios/resnet50-cloud-vs-dgx.json"
check "a training run prints samples/s and efficiency" bash -c \
  "'$ddlsim' run '$training' | grep -q 'iteration(ms).*compute(ms).*comm(ms).*exposed(ms).*idle(ms).*samples/s.*efficiency'"
check "training reports are byte-identical" bash -c \
  "'$ddlsim' run '$training' --json '$work/t1.json' >/dev/null && '$ddlsim' run '$training' --json '$work/t2.json' >/dev/null && cmp '$work/t1.json' '$work/t2.json'"
check "a training trace has compute and communication tracks" bash -c \
  "'$ddlsim' run '$training' --trace '$work/tt.json' >/dev/null && /usr/bin/python3 -c \"import json; d=json.load(open('$work/tt.json')); ch={e['args']['channel'] for e in d['traceEvents'] if e['ph']=='X'}; assert 0 in ch and 1 in ch\""
check "a training trace at --trace-level iterations names its tracks" bash -c \
  "'$ddlsim' run '$training' --trace '$work/ti.json' --trace-level iterations >/dev/null && /usr/bin/python3 -c \"import json; d=json.load(open('$work/ti.json')); e=d['traceEvents']; names={(x['pid'], x['tid']) for x in e if x['ph']=='M' and x['name']=='thread_name'}; spans=[x for x in e if x['ph']=='X']; assert spans and all((x['pid'], x['tid']) in names for x in spans); assert any(x['name']=='iteration 1' for x in spans)\""
cat >"$work/badmodel.json" <<'JSON'
{"include": "cloud-v100-25g", "workload": {"type": "training", "model": "resnet5", "batch_per_gpu": 32}}
JSON
check "an unknown model names the key and the nearest" expect_error 2 'did you mean "resnet50"' run "$work/badmodel.json"

# The packet engine: same seed, same bytes; the summary under the table; queue counters in the trace.
cat >"$work/packet.json" <<JSON
{"include": "$(cd "$scenarios" && pwd)/examples/packet-cloud-v100.json", "workload": {"sizes": ["64KiB"]}}
JSON
check "packet run writes a JSON report" "$ddlsim" run "$work/packet.json" --json "$work/p1.json"
check "packet run again writes the same bytes" "$ddlsim" run "$work/packet.json" --json "$work/p2.json"
check "the two packet reports are byte-identical" cmp "$work/p1.json" "$work/p2.json"
check "the packet report has drops and links" bash -c \
  "/usr/bin/python3 -c \"import json; r=json.load(open('$work/p1.json'))['results'][0]['packet']; assert 'drops' in r and r['links']\""
check "packet run prints its summary under the table" bash -c \
  "'$ddlsim' run '$work/packet.json' | grep -q 'retransmitted.*dropped'"
check "packet run --trace writes queue counters" bash -c \
  "'$ddlsim' run '$work/packet.json' --trace '$work/pt.json' >/dev/null && /usr/bin/python3 -c \"import json; d=json.load(open('$work/pt.json')); assert any(e['ph']=='C' for e in d['traceEvents'])\""
check "packet run stops at --max-wall-seconds with exit 4" expect_error 4 "stopped at --max-wall-seconds" \
  run "$scenarios/examples/packet-cloud-v100.json" --max-wall-seconds 0.05
check "packet engine with auto is bad input" expect_error 2 "/workload/algorithm" \
  run "$work/packet.json" --algorithm auto

# A training iteration on the flow engine: SimGrid's CM02 without cross traffic and with a huge
# TCP window is alpha-beta, so it must give the analytic engine's iteration time.
cat >"$work/train-flow.json" <<'JSON'
{"include": "cloud-v100-25g",
 "topology": {"nodes": [{"preset": "cloud-8xv100-25g", "count": 2}]},
 "workload": {"type": "training", "op": null, "sizes": null, "dtype": null, "model": "resnet50",
              "batch_per_gpu": 16, "precision": "fp16", "algorithm": "ring"},
 "engine": {"type": "flow", "network_model": "cm02", "crosstraffic": false, "tcp_gamma_bytes": 1e12}}
JSON
sed 's/"engine": {"type": "flow".*}}$/"engine": {"type": "analytic"}}/' "$work/train-flow.json" >"$work/train-analytic.json"
check "a training iteration on the flow engine (CM02) takes the analytic engine's time" bash -c \
  "'$ddlsim' run '$work/train-flow.json' --json '$work/tf.json' >/dev/null && '$ddlsim' run '$work/train-analytic.json' --json '$work/ta.json' >/dev/null && /usr/bin/python3 -c \"import json; f = json.load(open('$work/tf.json')); a = json.load(open('$work/ta.json')); assert f['engine'] == 'flow' and a['engine'] == 'analytic'; x, y = f['jobs'][0]['iteration_s'], a['jobs'][0]['iteration_s']; assert abs(x - y) <= 1e-6 * y, (x, y)\""

# A training iteration on the packet engine (DCQCN, per-class PFC, shared buffer, by_layer): the
# same compute, communication a little slower than the analytic engine's (headers, queues).
cat >"$work/train-packet-analytic.json" <<JSON
{"include": "$scenarios/examples/packet-training-resnet50.json", "engine": {"type": "analytic", "switch": null, "transport": null}}
JSON
check "a training iteration on the packet engine is within 5% of the analytic one, not faster" bash -c \
  "'$ddlsim' run '$scenarios/examples/packet-training-resnet50.json' --json '$work/tp.json' >/dev/null && '$ddlsim' run '$work/train-packet-analytic.json' --json '$work/tpa.json' >/dev/null && /usr/bin/python3 -c \"import json; p = json.load(open('$work/tp.json')); a = json.load(open('$work/tpa.json')); assert p['engine'] == 'packet' and a['engine'] == 'analytic'; x, y = p['jobs'][0]['iteration_s'], a['jobs'][0]['iteration_s']; assert y <= x <= 1.05 * y, (x, y); assert p['jobs'][0]['compute_s'] == a['jobs'][0]['compute_s']; assert p['packet']['data_packets'] > 0 and p['packet']['drops'] == 0; assert 'packet' not in a\""

# --algorithm auto is for collective workloads: on a training scenario the error names the file
# and says what a training workload takes instead.
expect_error 2 "packet-training-resnet50.json has a training workload" \
  run "$scenarios/examples/packet-training-resnet50.json" --algorithm auto
expect_error 2 "nccl (NCCL's own choice per bucket)" \
  run "$scenarios/examples/packet-training-resnet50.json" --algorithm auto

finish
