#!/usr/bin/env bash
# The installed package, used as another project would: `cmake --install` into a temporary prefix,
# a consumer program built with find_package(ddlsim) and again with pkg-config, both giving the
# time `ddlsim run --json` reports; the installed `ddlsim` running a bundled scenario from the
# installed share/ddlsim, and `validate --plot` finding its plot script there with output paths
# holding spaces and quotes. Usage: package_test.sh BUILD_DIR SOURCE_DIR
set -u
build="$1"
source_dir="$2"
source "$source_dir/tests/cli/check_lib.sh"
prefix="$work/prefix"

check "cmake --install into a fresh prefix" cmake --install "$build" --prefix "$prefix"
ddlsim="$prefix/bin/ddlsim"
share="$prefix/share/ddlsim"
check "the prefix holds the command, libraries, headers, package files and data" bash -c "
  [[ -x '$ddlsim' && -f '$prefix/lib/libddlsim_core.a' && -f '$prefix/include/ddlsim/sim/analytic_engine.hpp' &&
     -f '$prefix/lib/cmake/ddlsim/ddlsimConfig.cmake' && -f '$prefix/lib/pkgconfig/ddlsim.pc' &&
     -f '$share/scenarios/default.json' && -f '$share/scenarios/presets/cloud-v100-25g.json' &&
     -f '$share/zoo/resnet50.json' && -f '$share/node-presets/dgx-h100.json' && -x '$share/scripts/plot.py' && -x '$share/scripts/plot_validation.py' ]]"
check "no path of the source or build tree is compiled into the installed command" bash -c "
  ! grep -qF '$source_dir' '$ddlsim'"
check "ddlsim --version names version $("$build/apps/ddlsim" --version | cut -d' ' -f2)" bash -c "
  '$ddlsim' --version | grep -q '^ddlsim [0-9]*\.[0-9]*\.[0-9]'"

# The installed command on the installed data, from a folder with no sources around.
check "the installed ddlsim runs a bundled scenario from share/ddlsim" bash -c "
  cd '$work' && '$ddlsim' run '$share/scenarios/default.json' --json '$work/report.json' >'$work/run.txt' &&
  grep -q 'all_reduce on 128 ranks' '$work/run.txt' && [[ -s '$work/report.json' ]]"
expected_ps=$(sed -n 's/^ *"time_ps": \([0-9]*\),$/\1/p' "$work/report.json" | head -1)

# The consumer, built with find_package(ddlsim) from the prefix alone.
consumer_matches() {  # consumer_matches BINARY
  "$1" "$share/scenarios/default.json" >"$work/consumer.txt" || return 1
  grep -q "^all_reduce ring on 128 ranks" "$work/consumer.txt" &&
    grep -qx "time_ps $expected_ps" "$work/consumer.txt" ||
    { echo "expected time_ps $expected_ps (ddlsim run --json)"; cat "$work/consumer.txt"; return 1; }
}
check "a consumer configures with find_package(ddlsim)" \
  cmake -S "$source_dir/tests/package/consumer" -B "$work/consumer" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix"
check "... builds against the exported targets" cmake --build "$work/consumer"
check "... and simulates the time ddlsim run reports ($expected_ps ps)" \
  consumer_matches "$work/consumer/consumer"

# The same program built with the compiler and pkg-config alone.
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
check "pkg-config knows ddlsim $(pkg-config --modversion ddlsim 2>/dev/null)" pkg-config --exists ddlsim
check "a consumer builds with g++ \$(pkg-config --cflags --libs ddlsim)" bash -c "
  \${CXX:-g++} -O1 '$source_dir/tests/package/consumer/consumer.cpp' -o '$work/consumer-pc' \
    \$(pkg-config --cflags --libs ddlsim)"
check "... and simulates the same time" consumer_matches "$work/consumer-pc"

# The Python module, installed beside the rest (where Python was found at build time), imported
# from the prefix by Debian's interpreter and run on an installed scenario.
python_dir=$(find "$prefix/lib" -path '*-packages/ddlsim/__init__.py' -printf '%h\n' 2>/dev/null | head -1)
if [[ -n "$python_dir" ]]; then
  check "the installed Python module runs an installed scenario to the same time" bash -c "
    cd '$work' && PYTHONPATH='$(dirname "$python_dir")' /usr/bin/python3 -c '
import ddlsim, sys
assert str(ddlsim.data_dir()) == sys.argv[1], ddlsim.data_dir()
report = ddlsim.run(ddlsim.bundled_scenario(\"default.json\"))
print(\"time_ps\", report[\"results\"][0][\"time_ps\"])' '$share' | grep -qx 'time_ps $expected_ps'"
fi

# validate --plot runs the installed plot script without a shell: paths with spaces and quotes.
if /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
  odd="$work/it's a \"plot\" dir"
  mkdir -p "$odd"
  check "validate --plot runs share/ddlsim/scripts/plot_validation.py on a path with ' and spaces" \
    "$ddlsim" validate --measured "$source_dir/tests/calibrate/data/v100-sxm2-8gpu-1node-hybrid-cube-mesh.txt" \
    --scenario "$share/scenarios/validation/v100-sxm2-8gpu-1node.json" --plot "$odd/it's.png"
  check "... and the PNG is there" test -s "$odd/it's.png"
  mkdir -p "$work/moved/bin"
  cp "$ddlsim" "$work/moved/bin/ddlsim"
  check "a ddlsim copied away from its data says where it looked (exit 2)" bash -c "
    '$work/moved/bin/ddlsim' validate --measured '$source_dir/tests/calibrate/data/v100-sxm2-8gpu-1node-hybrid-cube-mesh.txt' \
      --scenario '$share/scenarios/validation/v100-sxm2-8gpu-1node.json' --plot '$work/x.png' 2>'$work/moved.err' >/dev/null
    [[ \$? -eq 2 ]] && grep -qF '$work/moved/share/ddlsim/scripts/plot_validation.py' '$work/moved.err'"
fi

finish
