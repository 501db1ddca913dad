#!/usr/bin/env bash
# Side-by-side overhead of CPU profilers on one compute-bound program (bench/cpu_bound.cpp),
# as docs/PERFORMANCE.md reports it: the program's own loop time with no profiler, under
# `nnprof record`, `perf record -g` and gperftools' libprofiler, at the same rates, rounds
# interleaved so that machine noise hits all alike; then the ranking of its top functions by
# nnprof against valgrind's callgrind (instruction counts).
#
# usage: bench/compare_cpu_profilers.sh [build dir] [rounds per run] [repetitions]
# On a shared machine, run it as root under `nice -n -15` so that other jobs disturb it less.
set -euo pipefail
build=${1:-build/release}
rounds=${2:-400}
reps=${3:-5}
prog=$build/bin/nnprof_cpu_bound
nnprof=$build/bin/nnprof
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
profiler_lib=$(ls /usr/lib/x86_64-linux-gnu/libprofiler.so.0 2>/dev/null || true)

loop() { grep -o 'loop_seconds [0-9.]*' | awk '{print $2}'; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

declare -A runs
for ((i = 0; i < reps; i++)); do
  runs[none]+="$("$prog" "$rounds" | loop) "
  for hz in 199 1000 10000; do
    runs[nnprof_$hz]+="$("$nnprof" record -q --sample-hz $hz -o "$tmp/n.nnprof" -- "$prog" "$rounds" 2>/dev/null | loop) "
    if ((hz > 250)); then  # the default above 250 Hz walks stacks in the kernel; this is the in-process walk
      runs[nnprof_libunwind_$hz]+="$("$nnprof" record -q --sample-hz $hz --unwind libunwind -o "$tmp/n.nnprof" -- "$prog" "$rounds" 2>/dev/null | loop) "
    fi
    runs[perf_$hz]+="$(perf record -q -g -F $hz -o "$tmp/perf.data" -- "$prog" "$rounds" 2>/dev/null | loop) "
    if [[ -n $profiler_lib ]]; then
      runs[gperftools_$hz]+="$(CPUPROFILE="$tmp/g.prof" CPUPROFILE_FREQUENCY=$hz LD_PRELOAD=$profiler_lib "$prog" "$rounds" 2>/dev/null | loop) "
    fi
  done
done
base=$(echo ${runs[none]} | tr ' ' '\n' | median)
printf '%-24s %10s %9s\n' profiler "loop (s)" "vs none"
for key in none nnprof_199 perf_199 gperftools_199 nnprof_1000 nnprof_libunwind_1000 perf_1000 gperftools_1000 \
  nnprof_10000 nnprof_libunwind_10000 perf_10000 gperftools_10000; do
  [[ -n ${runs[$key]:-} ]] || continue
  m=$(echo ${runs[$key]} | tr ' ' '\n' | median)
  printf '%-24s %10.4f %8.2f%%\n' "$key" "$m" "$(echo "($m / $base - 1) * 100" | bc -l)"
done

echo
echo "Top functions by nnprof (self samples, 1 kHz) and by callgrind (self instructions):"
"$nnprof" record -q --sample-hz 1000 -o "$tmp/rank.nnprof" -- "$prog" "$rounds" >/dev/null 2>&1
sqlite3 "$tmp/rank.nnprof" "SELECT s.str, count(*) AS samples FROM cpu_profile_stack_sample x
  JOIN stack k ON k.id = x.stack_id JOIN callsite c ON c.id = k.callsite_id JOIN frame f ON f.id = c.frame_id
  JOIN strings s ON s.id = f.function_id GROUP BY s.str ORDER BY samples DESC LIMIT 6" | sed 's/^/  nnprof     /'
valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" "$prog" $((rounds / 5)) >/dev/null 2>&1
callgrind_annotate "$tmp/cg.out" 2>/dev/null | grep -E 'cpu_bound.cpp:' | head -6 | sed 's/^/  callgrind  /'
