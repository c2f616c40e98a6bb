#!/usr/bin/env bash
# End-to-end checks of `ddlsim guide`. Usage: guide_test.sh DDLSIM SCENARIOS
set -u
ddlsim="$1"
scenarios="$2"
source "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"
resnet="$scenarios/resnet50-cloud-vs-dgx.json"
"$ddlsim" guide "$resnet" --gpus 32 >"$work/g.txt" 2>"$work/g.err"
check "guide answers the five questions, each with a formula and a simulated check" bash -c \
  "[ \$(grep -c '^[1-5]\. ' '$work/g.txt') -eq 5 ] && [ \$(grep -c '   answer: ' '$work/g.txt') -eq 5 ] && [ \$(grep -c '   simulated (analytic engine' '$work/g.txt') -ge 4 ] && grep -q 'T_ar = 2(p-1)' '$work/g.txt'"
check "the largest GPU count's simulated efficiency is within 0.1 of the rule's" /usr/bin/python3 -c "
import re
text = open('$work/g.txt').read()
rule = float(re.search(r'GPUs \(\d+ nodes\), E = ([0-9.]+)', text).group(1))
sim = float(re.search(r'E\(\d+\) = ([0-9.]+), E\(', text).group(1))
assert abs(rule - sim) < 0.1, (rule, sim)"
check "a faster NIC raises the largest GPU count" bash -c \
  "a=\$('$ddlsim' guide '$resnet' --no-check | sed -n 's/.*answer: \([0-9]*\) GPUs.*/\1/p'); sed 's/\"preset\": \"cloud-8xv100-25g\", \"count\": 16/\"preset\": \"cloud-8xv100-25g\", \"count\": 16, \"nic_bandwidth_gbps\": 100/' '$resnet' > '$work/fast.json'; b=\$('$ddlsim' guide '$work/fast.json' --no-check | sed -n 's/.*answer: \([0-9]*\) GPUs.*/\1/p'); [ -n \"\$a\" ] && [ -n \"\$b\" ] && [ \"\$b\" -gt \"\$a\" ]"
check "the crossover check shows recursive doubling below and the ring above" bash -c \
  "grep -q 'recursive doubling faster); .* (ring faster)' '$work/g.txt'"
check "a collective scenario is bad input naming the fix" bash -c \
  "'$ddlsim' guide '$scenarios/default.json' 2>'$work/e.txt'; [ \$? -eq 2 ] && grep -q 'workload of type \"training\"' '$work/e.txt'"
check "a target efficiency outside (0, 1) is bad input" bash -c \
  "'$ddlsim' guide '$resnet' --target-efficiency 1.5 2>'$work/e.txt'; [ \$? -eq 2 ] && grep -q 'target-efficiency' '$work/e.txt'"
finish
