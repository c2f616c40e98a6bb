# Included by ctest (TEST_INCLUDE_FILES, tests/CMakeLists.txt) after the Catch2 suites' discovered
# tests: the COST of the long ones, so that `ctest -j` starts them first. See the COST block of
# tests/CMakeLists.txt for why ctest cannot learn these itself and what the figures are.
foreach(cost_pair
        # seconds  test
        "40 collectives:sweep: every all_reduce generator is correct (shard 1 of 4)"
        "40 collectives:sweep: every all_reduce generator is correct (shard 2 of 4)"
        "40 collectives:sweep: every all_reduce generator is correct (shard 3 of 4)"
        "40 collectives:sweep: every all_reduce generator is correct (shard 4 of 4)"
        "17 collectives:sweep: every reduce_scatter generator is correct (shard 1 of 2)"
        "17 collectives:sweep: every reduce_scatter generator is correct (shard 2 of 2)"
        "100 jobs:network-aware placement is never worse than packed on the bundled traces"
        "27 jobs:jobs that share oversubscribed uplinks slow each other and recover when one ends"
        "20 collectives:sweep (quick): every generator of every op is correct"
        "19 collectives:sweep: every all_gather generator is correct"
        "19 jobs:backfilling shortens the mean wait of small jobs behind a large one"
        "13 scenario:every scenario under scenarios/ loads and its topology builds"
        "9 collectives:nccl_ring: node layouts with chunks and channels"
        "9 runner:trace level: a training trace at each level names its tracks and shrinks")
  # "SECONDS NAME", split by hand: a name may hold a ";", which a CMake list would split.
  string(REGEX REPLACE " .*" "" seconds "${cost_pair}")
  string(REGEX REPLACE "^[0-9]+ " "" name "${cost_pair}")
  # A test renamed or removed since the figure was measured is simply not there: no error.
  set_tests_properties("${name}" PROPERTIES COST ${seconds})
endforeach()
