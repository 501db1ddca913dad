#!/usr/bin/env bash
# Whole-program cost of heap profiling, side by side (issue 4): the allocation-heavy workload
# bench/alloc_heavy.cpp run plain, under `nnprof record --memory`, and under heaptrack.
#
#   bench/compare_heaptrack.sh [--ring] [RUNS]        (default 3; run from the repository root)
#
# --ring runs bench/alloc_ring.cpp instead (issue 21: random sizes 16-4,096 B, a 1,024-slot
# ring of live blocks, vectors and strings; defaults ROUNDS 5000000, THREADS 1).
# Without heaptrack installed, the script runs plain and nnprof only.
#
# Environment: BUILD (default build/release), ROUNDS and THREADS (passed to the workload;
# default 10000 and 2), OUT (where profiles go; default a temporary directory), BEFORE (the
# nnprof executable of another build, e.g. a copy of bin/ and lib/ made before a change: it
# runs too, as "before", with its own ../lib first on LD_LIBRARY_PATH).
#
# The three are interleaved (plain, nnprof, heaptrack, plain, ...) so that load from other
# users of the machine falls on all of them alike. Per run it records:
#   wall  elapsed time of the whole command (tool start-up and the writing of its file included)
#   loop  the workload's own loop time (steady_clock, printed by the workload)
#   cpu   user+sys CPU seconds of the command and all its children (/usr/bin/time reports
#         the children it waited for: heaptrack's heaptrack_interpret and zstd are counted)
#   lcpu  the workload's process CPU time over its loop, where it prints one (--ring): what
#         the tool adds per allocation, with neither start-up and exit work nor other
#         processes' load in it (heaptrack's out-of-process interpreter is not in it)
# and prints the medians and the slowdown of each tool against the plain runs' medians.
set -euo pipefail

WORKLOAD=nnprof_alloc_heavy
DEFAULT_ROUNDS=10000 DEFAULT_THREADS=2
if [[ ${1:-} == --ring ]]; then
  WORKLOAD=nnprof_alloc_ring DEFAULT_ROUNDS=5000000 DEFAULT_THREADS=1
  shift
fi
RUNS=${1:-3}
BUILD=${BUILD:-build/release}
ROUNDS=${ROUNDS:-$DEFAULT_ROUNDS}
THREADS=${THREADS:-$DEFAULT_THREADS}
WORK="$BUILD/bin/$WORKLOAD"
NNPROF="$BUILD/bin/nnprof"
OUT=${OUT:-$(mktemp -d /tmp/compare_heaptrack.XXXXXX)}
mkdir -p "$OUT"

for f in "$WORK" "$NNPROF" /usr/bin/time; do
  [[ -x "$f" ]] || { echo "missing $f (cmake --build $BUILD --target $WORKLOAD nnprof_cli nnprof_preload)" >&2; exit 1; }
done

declare -A CMD
CMD[plain]="$WORK $ROUNDS $THREADS"
CMD[nnprof]="$NNPROF record --memory -q -o $OUT/x.nnprof -- $WORK $ROUNDS $THREADS"
CMD[heaptrack]="heaptrack -o $OUT/ht $WORK $ROUNDS $THREADS"
TOOLS=(plain nnprof)
if [[ -n ${BEFORE:-} ]]; then
  CMD[before]="env LD_LIBRARY_PATH=$(dirname "$BEFORE")/../lib $BEFORE record --memory -q -o $OUT/b.nnprof -- $WORK $ROUNDS $THREADS"
  TOOLS+=(before)
fi
if command -v heaptrack >/dev/null; then
  TOOLS+=(heaptrack)
else
  echo "# heaptrack is not installed (apt-get install heaptrack): it is left out" >&2
fi

echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
for t in "${TOOLS[@]}"; do echo "# $t: ${CMD[$t]}"; done
RESULTS="$OUT/results.txt"
: >"$RESULTS"

for ((i = 1; i <= RUNS; ++i)); do
  for t in "${TOOLS[@]}"; do
    case $t in nnprof) rm -f "$OUT"/x.nnprof ;; before) rm -f "$OUT"/b.nnprof ;; heaptrack) rm -f "$OUT"/ht.* ;; esac
    # shellcheck disable=SC2086  # the commands are word lists
    /usr/bin/time -f '%e %U %S' -o "$OUT/time.txt" ${CMD[$t]} >"$OUT/stdout.txt" 2>"$OUT/stderr.txt" || {
      echo "$t failed:" >&2
      cat "$OUT/stderr.txt" >&2
      exit 1
    }
    read -r wall user sys <"$OUT/time.txt"
    loop=$(awk '/^loop_seconds/ { print $2 }' "$OUT/stdout.txt")
    lcpu=$(awk '/^loop_seconds/ { for (i = 1; i < NF; ++i) if ($i == "loop_cpu_seconds") v = $(i + 1) } END { print v == "" ? 0 : v }' "$OUT/stdout.txt")
    case $t in
      nnprof) size=$(stat -c %s "$OUT"/x.nnprof) ;;
      before) size=$(stat -c %s "$OUT"/b.nnprof) ;;
      heaptrack) size=$(stat -c %s "$OUT"/ht.*) ;;
      *) size=- ;;
    esac
    cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
    printf '%-10s run %d  wall %6.2f s  loop %6.2f s  cpu %6.2f s (user %.2f sys %.2f)  lcpu %6.3f s  file %s bytes\n' \
      "$t" "$i" "$wall" "$loop" "$cpu" "$user" "$sys" "$lcpu" "$size"
    echo "$t $wall $loop $cpu $lcpu" >>"$RESULTS"
  done
done

echo "# medians, and slowdown against plain (tool / plain)"
awk -v tools="${TOOLS[*]}" '
  function median(a, n,   i, j, t) {
    for (i = 2; i <= n; ++i) for (j = i; j > 1 && a[j - 1] > a[j]; --j) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  { n[$1]++; w[$1, n[$1]] = $2; l[$1, n[$1]] = $3; c[$1, n[$1]] = $4; lc[$1, n[$1]] = $5 }
  END {
    split(tools, ts, " ")
    for (k = 1; k in ts; ++k) {
      t = ts[k]
      for (i = 1; i <= n[t]; ++i) { a[i] = w[t, i]; b[i] = l[t, i]; d[i] = c[t, i]; e[i] = lc[t, i] }
      mw[t] = median(a, n[t]); ml[t] = median(b, n[t]); mc[t] = median(d, n[t]); mlc[t] = median(e, n[t])
    }
    for (k = 1; k in ts; ++k) {
      t = ts[k]
      printf "%-10s wall %6.2f s (%5.2fx)  loop %6.2f s (%5.2fx)  cpu %6.2f s (%5.2fx)", t,
        mw[t], mw[t] / mw["plain"], ml[t], ml[t] / ml["plain"], mc[t], mc[t] / mc["plain"]
      if (mlc["plain"] > 0) printf "  lcpu %6.3f s (%5.2fx)", mlc[t], mlc[t] / mlc["plain"]
      printf "\n"
    }
    # Slowdown = extra time over plain; the goal compares nnprof extra to heaptrack extra.
    if (!("heaptrack" in n)) exit
    printf "extra time, heaptrack / nnprof: wall %s  loop %s  cpu %s\n",
      extra(mw["heaptrack"], mw["nnprof"], mw["plain"]), extra(ml["heaptrack"], ml["nnprof"], ml["plain"]),
      extra(mc["heaptrack"], mc["nnprof"], mc["plain"])
  }
  function extra(h, x, p) { return x > p ? sprintf("%.1fx", (h - p) / (x - p)) : "n/a (nnprof within noise)" }
  ' "$RESULTS"
echo "# load average at the end: $(cut -d' ' -f1-3 /proc/loadavg); raw results in $RESULTS"
echo "# profiles of the last runs: $OUT/x.nnprof ($NNPROF report), $(echo "$OUT"/ht.*) (heaptrack --analyze)"
