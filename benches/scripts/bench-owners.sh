#!/usr/bin/env bash
# Socket owners on a host holding a million open files elsewhere:
# 52 processes x 19,500 descriptors of /dev/null in one namespace, and a
# small watched namespace (a listener and one connection: 3 sockets).
#
# 1. CPU (user + system, getrusage of the finished child) of
#    `snapshot --count 1` of the small namespace: start-up, the baseline
#    sample and the printed one. Budget: 0.5 s. Beside it, `ss -tanp` in
#    the namespace (which reads every fd of every process on the host).
# 2. Under churn (a new connection every 100 ms in the watched namespace),
#    what a new socket adds to a sample: CPU per sample of 20 samples at
#    200 ms with churn minus without, and the latest sample (largest gap
#    between consecutive samples' times minus the interval). Budget: 5 ms.
#    Beside it, what the owners thread alone gains (its /proc task stat):
#    the rest is the sampler's own work for the new sockets.
# Each figure is the median of RUNS runs (default 5): the CPU time of a
# run varies with the load the machine is under.
# Each is run with the eBPF iterator (default) and the /proc walk
# (NETLENS_OWNERS=proc); MODES="proc" runs one.
# NEAR=1 puts the holders in the watched namespace: a busy server's
# million open files, every one of them listed by a scan of every process
# (the first sample reads each link, as `ss -tanp` does).
# SECTION (default sockets) is the snapshot's --section: interfaces,
# tcp and dns name no process, so no owner is looked up. Loopback only, in namespaces this script creates
# and removes on exit; every process it starts is killed by PID. Root.
# Usage: [RUNS=5] benches/scripts/bench-owners.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
HOLDERS=52
RUNS=${RUNS:-5}
MODES=${MODES:-bpf proc}
FILES=19500   # under the hard RLIMIT_NOFILE (20,000 here)
PIDS=()
FAR=nlo-bench-far-$$
NS=nlo-bench-w-$$
[ "$(id -u)" = 0 ] || { echo "needs root (network namespaces)" >&2; exit 1; }
if [ -z "${NETLENS:-}" ]; then
  cargo build --release --quiet
  NETLENS=$(realpath "${CARGO_TARGET_DIR:-target}/release/netlens")
fi
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  ip netns del "$FAR" 2>/dev/null || true
  ip netns del "$NS" 2>/dev/null || true
}
trap cleanup EXIT
ip netns add "$FAR"
ip netns add "$NS"
ip -n "$NS" link set lo up

# The holders: FILES descriptors each, for at most 600 s.
HOLD_NS=$FAR; [ "${NEAR:-0}" = 1 ] && HOLD_NS=$NS
for _ in $(seq 1 "$HOLDERS"); do
  ip netns exec "$HOLD_NS" python3 -c "
import os, resource, time
hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
fds = [os.open('/dev/null', os.O_RDONLY) for _ in range($FILES)]
open('/dev/shm/nlo-bench-$$-' + str(os.getpid()), 'w').close()
time.sleep(600)" &
  PIDS+=($!)
done
until [ "$(ls /dev/shm/nlo-bench-$$-* 2>/dev/null | wc -l)" -ge "$HOLDERS" ]; do sleep 0.5; done
rm -f /dev/shm/nlo-bench-$$-*
echo "open files on the host: $(cut -f1 /proc/sys/fs/file-nr)"

# The watched namespace: a listener and one connection (3 sockets); it
# accepts the churn's connections, keeping the newest 4.
ip netns exec "$NS" python3 -c "
import socket, threading, time
s = socket.socket(); s.bind(('127.0.0.1', 7200)); s.listen(64)
c = socket.create_connection(('127.0.0.1', 7200)); first, _ = s.accept()
held = []
def serve():  # the churn's connections: the newest 4 kept
    while True:
        held.append(s.accept()[0])
        if len(held) > 4: held.pop(0).close()
threading.Thread(target=serve, daemon=True).start()
time.sleep(600)" &
PIDS+=($!)
sleep 1

# cpu [ENV...] -- ARGS: CPU seconds of `netlens snapshot ARGS`, the
# largest gap between consecutive samples, the sample count, and the CPU
# seconds of its owners thread alone (its /proc task stat, polled).
cpu() {
  env "$@" python3 - "$NETLENS" "$NS" <<'PY'
import json, os, resource, subprocess, sys, tempfile, time
netlens, ns = sys.argv[1], sys.argv[2]
args = os.environ["ARGS"].split()
tick = os.sysconf("SC_CLK_TCK")
before = resource.getrusage(resource.RUSAGE_CHILDREN)
with tempfile.TemporaryFile() as out:
    section = os.environ.get("SECTION", "sockets")
    child = subprocess.Popen([netlens, "snapshot", "--json", "--no-capture", "--section", section,
                              "--netns", ns] + args, stdout=out)
    owners = {}  # tid -> utime + stime, the last read
    while child.poll() is None:
        task = f"/proc/{child.pid}/task"
        for tid in os.listdir(task) if os.path.isdir(task) else []:
            try:
                stat = open(f"{task}/{tid}/stat").read()
            except OSError:
                continue
            if stat[stat.index("(") + 1:stat.rindex(")")] == "owners":
                fields = stat[stat.rindex(")") + 2:].split()
                owners[tid] = int(fields[11]) + int(fields[12])
        time.sleep(0.02)
    assert child.returncode == 0, child.returncode
    out.seek(0)
    lines = out.read().decode().splitlines()
after = resource.getrusage(resource.RUSAGE_CHILDREN)
t = [json.loads(l)["t"] for l in lines if l.strip()]
gap = max((b - a for a, b in zip(t, t[1:])), default=0)
cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
print(f"{cpu:.3f} {gap:.3f} {len(t)} {sum(owners.values()) / tick:.3f}")
PY
}

# median NUMBERS...: the middle one (the mean of the two middle ones).
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print (v[int((NR + 1) / 2)] + v[int(NR / 2) + 1]) / 2}'; }

echo "== first sample (snapshot --count 1, 1 s interval), median of $RUNS =="
for mode in $MODES; do
  envs=(ARGS="--count 1"); [ "$mode" = proc ] && envs+=(NETLENS_OWNERS=proc)
  cs=(); os=()
  for _ in $(seq 1 "$RUNS"); do
    read -r c _ _ o < <(cpu "${envs[@]}")
    cs+=("$c"); os+=("$o")
  done
  echo "netlens ($mode): $(median "${cs[@]}") s CPU (budget 0.5 s; runs: ${cs[*]}), its owners thread $(median "${os[@]}") s"
done
python3 - "$NS" <<'PY'
import resource, subprocess, sys, time
before = resource.getrusage(resource.RUSAGE_CHILDREN); t0 = time.time()
subprocess.run(["ip", "netns", "exec", sys.argv[1], "ss", "-tanp"], stdout=subprocess.DEVNULL, check=True)
after = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
print(f"ss -tanp: {cpu:.3f} s CPU, {time.time() - t0:.3f} s wall")
PY

# NEAR=1: the first scan takes seconds; 1 s samples see past it.
INTERVAL_MS=${INTERVAL_MS:-200}; [ "${NEAR:-0}" = 1 ] && INTERVAL_MS=${INTERVAL_MS_NEAR:-1000}
PER_SAMPLE=$((INTERVAL_MS / 100))   # the churn opens a connection every 100 ms
echo "== churn: 20 samples at $INTERVAL_MS ms =="
churn() {
  ip netns exec "$NS" python3 -c "
import socket, time
end = time.time() + 30
held = []
for _ in range(600):
    if time.time() > end: break
    held.append(socket.create_connection(('127.0.0.1', 7200)))
    if len(held) > 4: held.pop(0).close()
    time.sleep(0.1)" &
  CHURN=$!
  PIDS+=($CHURN)
}
echo "(median of $RUNS; CPU per sample, the owners thread's in brackets)"
for mode in $MODES; do
  envs=(ARGS="--count 20 --interval ${INTERVAL_MS}ms"); [ "$mode" = proc ] && envs+=(NETLENS_OWNERS=proc)
  gains=(); own_gains=(); quiets=(); gaps=()
  for _ in $(seq 1 "$RUNS"); do
    read -r quiet qgap _ qown < <(cpu "${envs[@]}")
    churn
    read -r busy bgap _ bown < <(cpu "${envs[@]}")
    kill "$CHURN" 2>/dev/null || true
    wait "$CHURN" 2>/dev/null || true
    quiets+=("$(awk "BEGIN {print $quiet / 20 * 1000}")")
    gains+=("$(awk "BEGIN {print ($busy - $quiet) / 20 * 1000}")")
    own_gains+=("$(awk "BEGIN {print ($bown - $qown) / 20 * 1000}")")
    gaps+=("$(awk "BEGIN {print ($bgap > $qgap ? $bgap : $qgap) * 1000}")")
  done
  echo "netlens ($mode): $(median "${quiets[@]}") ms per sample quiet;" \
    "with churn +$(median "${gains[@]}") ms (+$(median "${own_gains[@]}") ms)" \
    "per sample ($PER_SAMPLE new connections a sample; budget 5 ms a socket; runs: ${gains[*]});" \
    "largest gap $(median "${gaps[@]}") ms (interval $INTERVAL_MS ms)"
done
