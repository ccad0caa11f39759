#!/usr/bin/env python3
"""First paint and first data of netlens and of the tools users would pick
instead, side by side, in a detached 80x24 tmux window polled every 2 ms.

Usage: benches/scripts/first-screen.py [ROUNDS] [NETLENS]
  ROUNDS   runs of each tool, taken in turn (default 11)
  NETLENS  the binary (default target/release/netlens)

For each tool: ms from `tmux new-session` to the first non-blank screen
(paint), to the first screen that shows what the tool measures (data), and
for netlens also to the first rates (its second sample). Tools not installed
are left out (Debian: btop iftop bmon nethogs). Root, for the capture tools.
Medians and ranges are printed as a Markdown table. Nothing is sent.
"""

import re
import shutil
import statistics
import subprocess
import sys
import time

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 11
NETLENS = sys.argv[2] if len(sys.argv) > 2 else "target/release/netlens"

# name, command, data pattern, rates pattern (None: the data is the rates).
TOOLS = [
    # The Interfaces tab's rows (names, states), then rates in the header.
    ("netlens", f"{NETLENS} --interval 1s", r"^lo +up", r" RX "),
    ("netlens --no-capture", f"{NETLENS} --interval 1s --no-capture", r"^lo +up", r" RX "),
    # The CPU box's load average.
    ("btop", "btop", r"LAV: \d", None),
    # The totals line under the scale.
    ("iftop", "iftop -n -N -i lo", r"^TX: .*cum:", None),
    # The loopback row with its rates.
    ("bmon", "bmon", r"^ +\+?lo +x +\S", None),
    # The TOTAL line under the process list.
    ("nethogs", "nethogs -a -d 1 lo", r"^ +TOTAL ", None),
]


def one(command, data, rates):
    session = f"fs{time.time_ns()}"
    start = time.monotonic()
    subprocess.run(
        ["tmux", "new-session", "-d", "-s", session, "-x", "80", "-y", "24", command],
        check=True,
    )
    paint = shown = rated = None
    deadline = start + 15
    try:
        while time.monotonic() < deadline:
            screen = subprocess.run(
                ["tmux", "capture-pane", "-p", "-t", session],
                capture_output=True,
                text=True,
            ).stdout
            now = (time.monotonic() - start) * 1000
            if paint is None and screen.strip():
                paint = now
            if shown is None and re.search(data, screen, re.M):
                shown = now
            if rates and rated is None and re.search(rates, screen, re.M):
                rated = now
            if shown is not None and (rates is None or rated is not None):
                break
            time.sleep(0.002)
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
    time.sleep(0.3)
    return paint, shown, rated


def cell(values):
    values = [v for v in values if v is not None]
    if not values:
        return "never"
    return f"{statistics.median(values):.0f} ({min(values):.0f}-{max(values):.0f})"


def main():
    tools = [t for t in TOOLS if shutil.which(t[1].split()[0])]
    results = {t[0]: [] for t in tools}
    for round in range(ROUNDS):
        for name, command, data, rates in tools:
            results[name].append(one(command, data, rates))
        print(f"round {round + 1}/{ROUNDS}", file=sys.stderr)
    print(f"| tool | first paint, ms | first data, ms | first rates, ms |")
    print("|---|---|---|---|")
    for name, *_ in tools:
        runs = results[name]
        rates = cell([r[2] for r in runs]) if TOOLS[[t[0] for t in TOOLS].index(name)][3] else "(with the data)"
        print(f"| {name} | {cell([r[0] for r in runs])} | {cell([r[1] for r in runs])} | {rates} |")


main()
