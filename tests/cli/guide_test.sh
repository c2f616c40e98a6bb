#!/usr/bin/env bash
# End-to-end checks of `ddlsim guide`. Usage: guide_test.sh DDLSIM SCENARIOS
set -u
ddlsim="$1"
scenarios="$2"
source "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"
resnet="$scenarios/resnet50-cloud-vs-dgx.json"
"$ddlsim" guide "$resnet" --gpus 32 --max-check-gpus 256 >"$work/g.txt" 2>"$work/g.err"
check "guide answers the five questions, each simulated and with the rule beside it" bash -c \
  "[ \$(grep -c '^[1-5]\. ' '$work/g.txt') -eq 5 ] && [ \$(grep -c '   answer: ' '$work/g.txt') -eq 5 ] && [ \$(grep -c '   simulated: ' '$work/g.txt') -eq 5 ] && [ \$(grep -c '   rule estimate: ' '$work/g.txt') -eq 5 ] && grep -q 'T_ar = 2(p-1)' '$work/g.txt'"
check "the largest GPU count holds the target and one more node misses it" /usr/bin/python3 -c "
import re
text = open('$work/g.txt').read()
m = re.search(r'answer: (\d+) GPUs.*\n   simulated: E\((\d+)\) = ([0-9.]+) >= 0.8, E\((\d+)\) = ([0-9.]+) < 0.8', text)
assert m, text
p, at, e_at, nxt, e_next = int(m.group(1)), int(m.group(2)), float(m.group(3)), int(m.group(4)), float(m.group(5))
assert p == at and nxt == p + 8 and e_at >= 0.8 > e_next, m.group(0)"
check "an answer beyond --max-check-gpus says it is a bound" bash -c \
  "'$ddlsim' guide '$resnet' --target-efficiency 0.5 --max-check-gpus 64 | grep -q 'answer: at least 64 GPUs (8 nodes): the search stops at --max-check-gpus 64'"
check "a faster NIC raises the largest GPU count" bash -c \
  "a=\$('$ddlsim' guide '$resnet' --no-check | sed -n 's/.*answer: \([0-9]*\) GPUs.*/\1/p'); sed 's/\"preset\": \"cloud-8xv100-25g\", \"count\": 16/\"preset\": \"cloud-8xv100-25g\", \"count\": 16, \"nic_bandwidth_gbps\": 100/' '$resnet' > '$work/fast.json'; b=\$('$ddlsim' guide '$work/fast.json' --no-check | sed -n 's/.*answer: \([0-9]*\) GPUs.*/\1/p'); [ -n \"\$a\" ] && [ -n \"\$b\" ] && [ \"\$b\" -gt \"\$a\" ]"
check "the crossover is a boundary: the ring is faster at it and recursive doubling just below" /usr/bin/python3 -c "
import re
m = re.search(r'simulated: [0-9.]+ KiB: ring ([0-9.]+) ms, recursive doubling ([0-9.]+) ms; [0-9.]+ KiB: ring ([0-9.]+) ms, recursive doubling ([0-9.]+) ms', open('$work/g.txt').read())
ring, rd, ring_below, rd_below = map(float, m.groups())
assert ring <= rd and ring_below > rd_below, m.group(0)"
check "a collective scenario is bad input naming the fix" bash -c \
  "'$ddlsim' guide '$scenarios/default.json' 2>'$work/e.txt'; [ \$? -eq 2 ] && grep -q 'workload of type \"training\"' '$work/e.txt'"
check "a target efficiency outside (0, 1) is bad input" bash -c \
  "'$ddlsim' guide '$resnet' --target-efficiency 1.5 2>'$work/e.txt'; [ \$? -eq 2 ] && grep -q 'target-efficiency' '$work/e.txt'"
finish
