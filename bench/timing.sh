# Shared by the whole-process benchmark scripts (sourced, not run): interleaved rounds,
# so drift of the machine hits every command alike, and their statistics.

# time_rounds ROUNDS DIR NAME...: runs ${commands[NAME]} (an associative array the caller
# defines) once each as a warm-up, then ROUNDS rounds in the given order, appending each
# run's wall time in microseconds to DIR/NAME. Bash's own clock (EPOCHREALTIME) puts no
# process of its own inside the timed interval.
time_rounds() {
  local rounds=$1 dir=$2 name start end r
  shift 2
  [[ -n ${EPOCHREALTIME:-} ]] || { echo "time_rounds: needs bash 5 (EPOCHREALTIME)" >&2; return 1; }
  for name in "$@"; do ${commands[$name]} >/dev/null; done
  for ((r = 0; r < rounds; ++r)); do
    for name in "$@"; do
      start=$EPOCHREALTIME
      ${commands[$name]} >/dev/null
      end=$EPOCHREALTIME
      echo "$((${end/./} - ${start/./}))" >>"$dir/$name"
    done
  done
}

# sample_stats FILE [DECIMALS]: "MEDIAN P90" of FILE's microsecond samples, in ms.
sample_stats() {
  sort -n "$1" | awk -v d="${2:-1}" '{a[NR]=$1} END {
    m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2; p = a[int(NR * 0.9 + 0.5)]
    fmt = "%." d "f %." d "f\n"; printf fmt, m / 1000, p / 1000 }'
}
