#!/usr/bin/env bash
# The long fuzz run (issues 10 and 13: at least 10^7 executions per harness, 0 crashes) on a
# machine with many cores, from libFuzzer binaries built elsewhere (tools/fuzz.sh builds them
# into BUILD_DIR/fuzz/). Every harness runs at once, each as several independent processes
# sharing one scratch corpus, so the slow ones get more cores:
#
#   bash tools/fuzz-long.sh FUZZ_BIN_DIR [SECONDS] [PLAN]
#     PLAN: "name:processes ..." (default below, for 16 cores); a harness not named runs as
#     one process. Each process stops after its share of 10^7 executions or after SECONDS
#     (default 540), whichever comes first.
#
#   FUZZ_ONLY="cubin elf"  only these harnesses (to finish a run that fell short)
#   FUZZ_SEED=N            the first process's seed (default 1000; give a second run others)
#   FUZZ_TOTAL=N           executions per harness (default 10^7)
#
# Prints, per harness, the executions summed over its processes, and exits non-zero on any
# crash, leak, timeout or sanitizer report (the inputs are left in $OUT or /tmp/fuzz-long).
set -uo pipefail
cd "$(dirname "$0")/.."
bin=${1:?usage: fuzz-long.sh FUZZ_BIN_DIR [SECONDS] [PLAN]}
seconds=${2:-540}
plan=${3:-"fatbin:7 elf:2"}
total=${FUZZ_TOTAL:-10000000}
out=${OUT:-/tmp/fuzz-long}
work=/tmp/fuzz-long-work
rm -rf "$work"
mkdir -p "$out" "$work"
declare -A procs
only=" ${FUZZ_ONLY:-} "
wanted() { [[ $only == "  " || $only == *" $1 "* ]]; }
for f in "$bin"/fuzz_*; do
  name=$(basename "$f"); name=${name#fuzz_}
  wanted "$name" && procs[$name]=1
done
for item in $plan; do wanted "${item%%:*}" && procs[${item%%:*}]=${item##*:}; done
run_one() {  # name index runs
  local name=$1 i=$2 runs=$3
  mkdir -p "$work/scratch/$name"
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$bin/fuzz_$name" -runs="$runs" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
    -seed=$((${FUZZ_SEED:-1000} + i)) -artifact_prefix="$out/$name-" -print_final_stats=1 \
    "$work/scratch/$name" "fuzz/corpus/$name" >"$work/$name.$i.log" 2>&1
  echo $? >"$work/$name.$i.rc"
}
start=$(date +%s)
for name in "${!procs[@]}"; do
  n=${procs[$name]}
  for ((i = 0; i < n; ++i)); do run_one "$name" "$i" $(( (total + n - 1) / n )) & done
done
wait
status=0
for f in "$bin"/fuzz_*; do
  name=$(basename "$f"); name=${name#fuzz_}
  wanted "$name" || continue
  execs=0; worst=0; n=0
  for log in "$work/$name".*.log; do
    e=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
    execs=$((execs + ${e:-0})); n=$((n + 1))
    rc=$(cat "${log%.log}.rc"); [[ $rc == 0 ]] || { worst=$rc; tail -30 "$log" >&2; }
  done
  cp "$work/$name".*.log "$out/" 2>/dev/null
  printf '%-14s %12d executions in %d processes, exit %s\n' "$name" "$execs" "$n" "$worst"
  [[ $worst == 0 ]] || status=1
done
echo "elapsed $(( $(date +%s) - start )) s on $(nproc) CPUs"
exit $status
