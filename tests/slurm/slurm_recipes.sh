#!/usr/bin/env bash
# docs/fleet.md's Slurm recipes, run as written in a real one-node Slurm cluster (Debian's munge,
# slurmctld and slurmd, started here on free local ports in a temporary directory):
#   1. HealthCheckProgram=, with the fake driver and NVML making one GPU fail (lost to NVML):
#      slurmd runs it, and the node is drained with cudatool's reason (scontrol show node);
#   2. the same once the GPU answers again: the node is resumed;
#   3. Prolog=, with the GPU failing: a job's step runs the prolog, which drains the node
#      with cudatool's reason;
#   4. node_exporter's textfile recipe on the drained node's failure: the file parses and
#      keeps the failing node (tests/prometheus/textfile_recipe.sh checks the rest).
# The recipes are extracted from docs/fleet.md (they cannot drift); only their paths change
# (/run -> the temporary directory) and a PATH line is added where slurmd runs them, naming a
# `cudatool` that runs the real binary with the fake libraries.
#
# Usage: slurm_recipes.sh CUDATOOL FAKE_LIBCUDA FAKE_LIBNVML SOURCE_DIR [PYTHON3]
# Exit 77 (skipped, with the reason) where the cluster cannot start: Slurm or munge missing,
# not root (slurmd runs prologs as root), a daemon that does not come up. Every wait is
# bounded; the daemons are stopped on every way out.
set -euo pipefail
cudatool=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
fake_libcuda=$2 fake_libnvml=$3 source_dir=$4 python=${5:-python3}

skip() {
  echo "SKIPPED: $*"
  exit 77
}
for tool in munged slurmctld slurmd scontrol srun "$python"; do
  command -v "$tool" >/dev/null 2>&1 || [ -x "/usr/sbin/$tool" ] ||
    skip "$tool is not installed (Debian: munge, slurmctld, slurmd, slurm-client; tools/install-deps.sh)"
done
PATH=$PATH:/usr/sbin
[ "$(id -u)" -eq 0 ] || skip "not root: slurmd runs HealthCheckProgram and Prolog as root"

work=$(mktemp -d /tmp/cudatool-slurm.XXXXXX)
chmod 0755 "$work"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT

failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}
logs() {
  for f in "$work"/log/*.log; do
    echo "--- $f" >&2
    tail -n 15 "$f" >&2 || true
  done
}

# ---- the recipes, from docs/fleet.md ---------------------------------------------------
# extract FIRST_LINE_PATTERN: the ```sh block whose second line (after #!/bin/sh) matches.
extract() {
  awk -v want="$1" '
    /^```sh$/ { block = 1; n = 0; text = ""; next }
    block && /^```$/ { if (take) { printf "%s", text; exit } block = 0; next }
    block { n++; if (n == 2 && $0 ~ want) take = 1; text = text $0 "\n" }
  ' "$source_dir/docs/fleet.md"
}
mkdir -p "$work/bin" "$work/run" "$work/log" "$work/state" "$work/spool" "$work/textfile"
for recipe in health:'^# Slurm HealthCheckProgram=' prolog:'^# Slurm Prolog='; do
  name=${recipe%%:*}
  extract "${recipe#*:}" > "$work/$name.readme"
  [ -s "$work/$name.readme" ] || { echo "FAIL: no $name recipe in docs/fleet.md" >&2; exit 1; }
  # As written, but /run is ours and slurmd's PATH finds our cudatool (and scontrol).
  {
    head -n 1 "$work/$name.readme"
    echo "PATH=$work/bin:/usr/bin:/bin:/usr/sbin:/sbin; export PATH"
    tail -n +2 "$work/$name.readme" | sed "s|/run/|$work/run/|g"
  } > "$work/$name.sh"
  chmod 0755 "$work/$name.sh"
done

# `cudatool`: the real binary with the fake driver and NVML, configured by $work/fake.env
# (rewritten between the steps; a GPU fails or none does).
cat > "$work/bin/cudatool" <<EOF
#!/bin/sh
. "$work/fake.env"
exec "$cudatool" "\$@"
EOF
chmod 0755 "$work/bin/cudatool"
# `scontrol`: this cluster's (slurmd runs HealthCheckProgram with SLURMD_NODENAME alone in
# its environment; a real node's scontrol finds /etc/slurm/slurm.conf).
scontrol_path=$(command -v scontrol)
cat > "$work/bin/scontrol" <<EOF
#!/bin/sh
SLURM_CONF="$work/slurm.conf" exec "$scontrol_path" "\$@"
EOF
chmod 0755 "$work/bin/scontrol"
# A kernel log without XIDs (this host's own is not this test's business).
echo "6,1,100000,-;Linux version 6.1.0 (test)" > "$work/kmsg"
gpu_fails() {
  cat > "$work/fake.env" <<EOF
export CUDATOOL_LIBCUDA="$fake_libcuda" CUDATOOL_LIBNVML="$fake_libnvml"
export CUDATOOL_TEST_KMSG="$work/kmsg" FAKE_NVML_LOST=2
unset CUDATOOL_NO_NVML CUDA_VISIBLE_DEVICES
EOF
}
gpu_answers() {
  cat > "$work/fake.env" <<EOF
export CUDATOOL_LIBCUDA="$fake_libcuda" CUDATOOL_LIBNVML="$fake_libnvml"
export CUDATOOL_TEST_KMSG="$work/kmsg"
unset CUDATOOL_NO_NVML CUDA_VISIBLE_DEVICES FAKE_NVML_LOST
EOF
}
gpu_fails
# The recipe's check itself, before Slurm: fails (exit 9) naming the lost GPU.
status=0
"$work/bin/cudatool" check --only identity,health,xid > "$work/direct.txt" 2>&1 || status=$?
[ "$status" -eq 9 ] || fail "the check exited $status on the failing GPU, expected 9: $(tail -n 3 "$work/direct.txt")"
grep -q "NVML_ERROR_GPU_IS_LOST" "$work/direct.txt" || fail "the check does not name the lost GPU"

# ---- a one-node cluster ------------------------------------------------------------------
free_ports=$("$python" -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(" ".join(str(x.getsockname()[1]) for x in s))')
read -r ctld_port slurmd_port <<< "$free_ports"
host=$(hostname -s)
node=cudatooltest1

# munge: a key of our own, a socket in our directory.
dd if=/dev/urandom of="$work/munge.key" bs=1024 count=1 status=none
chmod 0400 "$work/munge.key"
munged --foreground --key-file="$work/munge.key" --socket="$work/munge.socket" \
  --pid-file="$work/munged.pid" --log-file="$work/log/munged.log" --seed-file="$work/munge.seed" \
  --force > "$work/log/munged.out.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -S "$work/munge.socket" ] && break; sleep 0.1; done
[ -S "$work/munge.socket" ] || { logs; skip "munged did not start"; }

cat > "$work/slurm.conf" <<EOF
ClusterName=cudatooltest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$work/munge.socket
CredType=cred/munge
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool/%n
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
SlurmdTimeout=30
HealthCheckProgram=$work/health.sh
HealthCheckInterval=2
HealthCheckNodeState=ANY
Prolog=$work/prolog.sh
NodeName=$node NodeHostname=$host NodeAddr=127.0.0.1 CPUs=1 RealMemory=100 State=UNKNOWN
PartitionName=test Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$work/slurm.conf

slurmctld -D -i -f "$work/slurm.conf" > "$work/log/slurmctld.out.log" 2>&1 &
pids+=($!)
slurmd -D -N "$node" -f "$work/slurm.conf" > "$work/log/slurmd.out.log" 2>&1 &
pids+=($!)

node_line() { timeout 10 scontrol show node "$node" 2>/dev/null | tr '\n' ' '; }
# wait_for SECONDS PATTERN: until `scontrol show node` matches (extended regex).
wait_for() {
  local deadline=$((SECONDS + $1))
  while [ $SECONDS -lt $deadline ]; do
    node_line | grep -Eq "$2" && return 0
    sleep 0.5
  done
  return 1
}
if ! wait_for 60 "State=[A-Z+]*(IDLE|DRAIN)"; then
  logs
  skip "the one-node cluster did not come up in 60 s: $(node_line | head -c 300)"
fi
echo "cluster up: slurmctld :$ctld_port, slurmd :$slurmd_port, node $node"

# 1. HealthCheckProgram on the failing GPU: drained, with cudatool's reason.
if wait_for 60 "State=[A-Z+]*DRAIN.*Reason=cudatool"; then
  reason=$(node_line | sed -n 's/.*Reason=\(.*\)/\1/p')
  echo "health check drained the node: Reason=$reason"
  case $reason in
    *"remediation: reboot_node"*"device 1 (0000:02:00.0) nvml: NVML cannot reach the GPU: NVML_ERROR_GPU_IS_LOST"*) ;;
    *) fail "the drain reason is not cudatool's finding: $reason" ;;
  esac
else
  fail "the health check did not drain the node in 60 s: $(node_line)"
  logs
fi

# 2. The GPU answers again: the health check resumes the node.
gpu_answers
if wait_for 60 "State=IDLE "; then
  echo "health check resumed the node: $(node_line | grep -o 'State=[^ ]*')"
  node_line | grep -q "Reason=" && fail "a reason is left after the resume: $(node_line)"
else
  fail "the health check did not resume the node in 60 s: $(node_line)"
  logs
fi

# 3. Prolog: a job starts while the GPU fails; its prolog drains the node.
# The health check is taken out of the way first (it would drain the node itself).
printf '#!/bin/sh\nexit 0\n' > "$work/health.sh"
gpu_fails
timeout 60 srun --nodes=1 --nodelist="$node" --immediate=30 --time=1 true \
  > "$work/log/srun.log" 2>&1 || true
if wait_for 30 "State=[A-Z+]*DRAIN.*Reason=cudatool"; then
  reason=$(node_line | sed -n 's/.*Reason=\(.*\)/\1/p')
  echo "prolog drained the node: Reason=$reason"
  case $reason in
    *"cudatool remediation: reboot_node"*NVML_ERROR_GPU_IS_LOST*) ;;
    *) fail "the prolog's drain reason is not cudatool's finding: $reason" ;;
  esac
  [ -s "$work/run/cudatool-prolog.json" ] || fail "the prolog left no JSON report"
else
  fail "the prolog did not drain the node in 30 s: $(node_line); srun: $(tail -n 3 "$work/log/srun.log")"
  logs
fi

# 4. node_exporter's textfile recipe on this failing node: it parses and keeps the node.
awk '
  /^```sh$/ { block = 1; first = 1; text = ""; next }
  block && /^```$/ { if (take) { printf "%s", text; exit } block = 0; next }
  block { if (first && $0 ~ /^# node_exporter textfile collector/) take = 1; first = 0; text = text $0 "\n" }
' "$source_dir/docs/fleet.md" | sed "s|/var/lib/node_exporter/textfile|$work/textfile|g" > "$work/textfile.sh"
status=0
PATH="$work/bin:$PATH" sh "$work/textfile.sh" > /dev/null 2>&1 || status=$?
[ "$status" -eq 9 ] || fail "the textfile recipe exited $status on the failing node, expected 9"
if "$python" -c 'import prometheus_client.parser' 2>/dev/null; then
  "$python" - "$work/textfile/cudatool.prom" <<'PY' || fail "the textfile does not keep the failing node"
import sys
from prometheus_client.parser import text_string_to_metric_families
families = {f.name: f for f in text_string_to_metric_families(open(sys.argv[1]).read())}
def value(name, **labels):
    for s in families[name].samples:
        if all(s.labels.get(k) == v for k, v in labels.items()):
            return s.value
    raise SystemExit(f"no {name} {labels}")
for f in families.values():  # node_exporter refuses a metric whose samples differ in label names
    assert len({tuple(sorted(s.labels)) for s in f.samples}) == 1, f"{f.name}: label names differ"
assert value("cudatool_check_success") == 0
assert value("cudatool_check_gpu_verdict", pci_bus_id="00000000:02:00.0", verdict="fail") == 1
assert value("cudatool_check_remediation", action="reboot_node") == 1
print(f"textfile: {len(families)} families parsed, the failing GPU and the node's remediation kept")
PY
else
  echo "python3-prometheus-client missing: the textfile's parse is left to prometheus_textfile_recipe"
fi

if [ "$failures" -ne 0 ]; then
  echo "slurm recipes: $failures failures" >&2
  exit 1
fi
echo "slurm recipes: docs/fleet.md's HealthCheckProgram drained and resumed, its Prolog drained, in a one-node Slurm"
