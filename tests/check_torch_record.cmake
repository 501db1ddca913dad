# `nnprof record` on the LibTorch example, no code change (issue 19): every operator of the
# run is a scope, with exact counts (3 steps × 2 linear layers), nested in the program's own
# scope, and every operator name counted as often as LibTorch's own profiler counts it;
# --no-torch-ops records none. Run with -DNNPROF=... -DEXAMPLE=... -DWORK=...
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

function(run_checked)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  if(err MATCHES "operators are not recorded")
    message(FATAL_ERROR "the agent did not record operators: ${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

function(expect_query profile sql expected)
  run_checked("${NNPROF}" query "${profile}" "${sql}")
  string(REGEX MATCHALL "[^\n]+" lines "${out}")
  list(GET lines 2 value)  # header, rule, first row
  string(STRIP "${value}" value)
  if(NOT value STREQUAL "${expected}")
    message(FATAL_ERROR "${sql}: expected ${expected}, got '${value}'\n${out}")
  endif()
endfunction()

run_checked("${NNPROF}" record -q -o "${WORK}/ops.nnprof" -- "${EXAMPLE}" --steps 3)
expect_query("${WORK}/ops.nnprof" "select count(*) from slice where name = 'aten::addmm'" "6")
expect_query("${WORK}/ops.nnprof" "select count(*) from slice where name = 'AddmmBackward0'" "6")
expect_query("${WORK}/ops.nnprof" "select count(*) from slice where name = 'train_step'" "3")
# Every addmm carries its shapes and torch's FLOP count: 2·32·64·128 or 2·32·128·10.
expect_query("${WORK}/ops.nnprof"
  "select count(*) from slice s join args a on a.arg_set_id = s.arg_set_id where s.name = 'aten::addmm' and a.key = 'flops' and a.real_value in (524288.0, 81920.0)"
  "6")
expect_query("${WORK}/ops.nnprof"
  "select a.string_value from slice s join args a on a.arg_set_id = s.arg_set_id where s.name = 'aten::addmm' and a.key = 'input_shapes' order by s.ts limit 1"
  "[[128], [32, 64], [64, 128], [], []]")

# Every operator inside the training steps, counted as LibTorch's own profiler counts it.
run_checked("${EXAMPLE}" --steps 3 --torch-profiler-counts)
string(STRIP "${out}" torch_counts)
run_checked("${NNPROF}" query "${WORK}/ops.nnprof"
  "select count(*) || ' ' || s.name as line from slice s join slice t on t.name = 'train_step' and s.utid = t.utid and s.ts >= t.ts and s.ts + s.dur <= t.ts + t.dur and s.id != t.id group by s.name order by s.name")
string(REGEX REPLACE " +\n" "\n" ours "${out}")  # the table pads its column
string(REGEX REPLACE "^line\n-+\n" "" ours "${ours}")
string(REGEX REPLACE "\n[(][0-9]+ rows[)]\n*$" "" ours "${ours}")
string(STRIP "${ours}" ours)
if(NOT ours STREQUAL torch_counts)
  message(FATAL_ERROR "operator counts differ from LibTorch's profiler:\n--- LibTorch\n${torch_counts}\n--- nnprof\n${ours}")
endif()

run_checked("${NNPROF}" record -q --no-torch-ops -o "${WORK}/none.nnprof" -- "${EXAMPLE}" --steps 3)
expect_query("${WORK}/none.nnprof" "select count(*) from slice where name like 'aten::%'" "0")
expect_query("${WORK}/none.nnprof" "select count(*) from slice where name = 'train_step'" "3")
