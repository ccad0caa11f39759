#!/usr/bin/env bash
# Side by side at a million conntrack entries; run inside scale-conntrack.sh:
#   benches/scripts/scale-conntrack.sh 1000000 -- benches/scripts/bench-scale-conntrack.sh
# - conntrack -L > /dev/null: CPU (user+sys) and wall;
# - netlens dump + parse alone (criterion, real ctnetlink, same namespace);
# - netlens snapshot --json --section conntrack (every entry as JSON,
#   streamed): CPU, wall, max RSS;
# - the live Conntrack tab (tmux 200x50): RSS and how long a key takes to
#   show while dumps run on the sampler thread: s (next sort column: one
#   sort of every entry) and j (down: the cached order).
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${NS:?run me inside scale-conntrack.sh}"
BIN=${BIN:-target/release/netlens}
SESSION=scl-ct-$$
cleanup() { tmux kill-session -t "$SESSION" 2>/dev/null || true; }
trap cleanup EXIT
cpu_of() {
  /usr/bin/time -f "%U %S %e %M" "$@" 2>&1 >/dev/null | tail -1 |
    awk '{printf "cpu %.2f s, wall %.2f s, max RSS %d MB\n", $1 + $2, $3, $4 / 1024}'
}
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for _ in 1 2; do echo "conntrack -L: $(cpu_of ip netns exec "$NS" conntrack -L)"; done
echo "netlens snapshot --json --section conntrack: $(cpu_of "$BIN" snapshot --json --section conntrack --no-capture --no-bpf --interval 100ms --netns "$NS")"
if [[ "${CRITERION:-1}" == 1 ]]; then
  NETLENS_BENCH_NETNS="$NS" cargo bench --bench conntrack -- --noplot "real ctnetlink dump" 2>&1 |
    grep -E "real dump|time:"
fi
screen() { tmux capture-pane -p -t "$SESSION"; }
tmux new-session -d -s "$SESSION" -x 200 -y 50 \
  "$BIN --netns $NS --tab conntrack --no-capture --no-bpf --interval 1s"
pid=$(tmux list-panes -t "$SESSION" -F '#{pane_pid}')
start=$(date +%s%N)
for _ in $(seq 1 30000); do screen | grep -q '198\.18\.0\.1' && break; sleep 0.002; done
echo "netlens Conntrack tab: first entries drawn after $(( ($(date +%s%N) - start) / 1000000 )) ms"
sleep 5
for _ in 1 2 3 4 5; do
  before=$(screen | sed -n 3,12p)
  t0=$(date +%s%N)
  tmux send-keys -t "$SESSION" s
  for _ in $(seq 1 5000); do [[ "$(screen | sed -n 3,12p)" != "$before" ]] && break; sleep 0.002; done
  echo "key s (sort) shown after $(( ($(date +%s%N) - t0) / 1000000 )) ms"
  sleep 1.3
done
for _ in 1 2 3; do # a move: the cached order, no sort
  before=$(screen)
  t0=$(date +%s%N)
  tmux send-keys -t "$SESSION" j
  for _ in $(seq 1 5000); do [[ "$(screen)" != "$before" ]] && break; sleep 0.002; done
  echo "key j (down) shown after $(( ($(date +%s%N) - t0) / 1000000 )) ms"
  sleep 0.5
done
echo "netlens live RSS: $(awk '/VmRSS/ {print $2 / 1024 " MB"}' /proc/$pid/status), HWM $(awk '/VmHWM/ {print $2 / 1024 " MB"}' /proc/$pid/status)"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
