#!/usr/bin/env python3
"""Prints docs/PERFORMANCE.md's first-call table from criterion's results.

    cargo bench -p benches --bench thread_rng -- 'first_call|next_u64/(ratchet_rng::u64|rand::rng|rand::rngs::SmallRng|rand_aes::tls)$'
    python3 scripts/first-call-table.py

Reads every target/criterion/**/new/{benchmark,estimates}.json of the groups
`first_call_process/*`, `first_call_thread/*` and `next_u64` (the group and
function ids are inside benchmark.json), takes each median, and prints a
markdown table: ours, the peer of the same run, and the ratio of the two times,
under a line naming the CPU (/proc/cpuinfo, where there is one) and the date of
the newest result. A missing result, or results more than 30 minutes apart
(not one run), is reported on stderr. Python 3 standard library only.
"""

import argparse
import datetime
import json
import os
import re
import sys

OURS = "ratchet_rng::u64"

# (group id or regex, what the row measures, peer function id, peer label).
ROWS = [
    ("first_call_process/fresh", "first `u64()` of a fresh process",
     "rand::rng", "`rand::rng()`"),
    (re.compile(r"first_call_process/(\d+)GiB resident"),
     "the same after the process touched {0} GiB",
     "rand::rng", "`rand::rng()`"),
    ("first_call_thread/fresh", "first call on a new thread, no page to recycle",
     "rand::rng", "`rand::rng()`"),
    ("first_call_thread/recycled",
     "first call on a new thread, pages recycled (threads exited)",
     "rand::rng", "`rand::rng()`"),
    ("next_u64", "`u64()` per call",
     "rand::rngs::SmallRng", "xoshiro256++ (`rand::rngs::SmallRng`)"),
    ("next_u64", "",
     "rand::rng", "`rand::rng()` held"),
    ("next_u64", "",
     "rand_aes::tls", "rand_aes's thread-local `rand_u64()` (not for keys, no fork safety)"),
]


def read_results(criterion_dir):
    """{(group id, function id): (median ns, mtime)}."""
    results = {}
    for root, dirs, files in os.walk(criterion_dir):
        if os.path.basename(root) != "new" or "benchmark.json" not in files:
            continue
        try:
            with open(os.path.join(root, "benchmark.json")) as f:
                bench = json.load(f)
            with open(os.path.join(root, "estimates.json")) as f:
                estimates = json.load(f)
        except (FileNotFoundError, json.JSONDecodeError):
            continue  # an aborted run
        key = (bench["group_id"], bench["function_id"])
        mtime = os.path.getmtime(os.path.join(root, "estimates.json"))
        results[key] = (estimates["median"]["point_estimate"], mtime)
    return results


def significant(x):
    """`x` with three significant digits, trailing zeros kept (5.00, 394)."""
    return f"{x:,.0f}" if x >= 100 else f"{x:#.3g}"


def duration(ns):
    """ns, µs or ms with three significant digits."""
    for unit, scale in (("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return f"{significant(ns / scale)} {unit}"
    return f"{significant(ns)} ns"


def ratio(ours, peer):
    return f"{significant(ours / peer)}×"


def cpu_line():
    """`model name, family F model M, N cores` from /proc/cpuinfo, or None."""
    try:
        with open("/proc/cpuinfo") as f:
            info = f.read()
    except OSError:
        return None

    def field(name):
        m = re.search(rf"^{name}\s*:\s*(.*)$", info, re.MULTILINE)
        return m.group(1).strip() if m else "?"

    cores = len(re.findall(r"^processor\s*:", info, re.MULTILINE))
    return f"{field('model name')}, family {field('cpu family')} model {field('model')}, {cores} cores"


def groups_matching(results, group):
    """[(group id, regex match or None)] for a row's group spec, sorted."""
    if isinstance(group, str):
        return [(group, None)]
    ids = sorted({g for g, _ in results})
    return [(g, m) for g in ids for m in [group.fullmatch(g)] if m] or [(group.pattern, None)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--criterion-dir", default="target/criterion",
                        help="criterion's output directory (default: %(default)s)")
    parser.add_argument("--cpu", help="the CPU line (default: read /proc/cpuinfo)")
    args = parser.parse_args()
    if not os.path.isdir(args.criterion_dir):
        sys.exit(f"no {args.criterion_dir}: run `cargo bench -p benches --bench thread_rng` first")
    results = read_results(args.criterion_dir)

    lines = ["| what | ours | peer, same run | ratio |", "|---|---:|---:|---:|"]
    newest, oldest = 0.0, float("inf")
    missing = []
    for group, what, peer, peer_label in ROWS:
        for gid, match in groups_matching(results, group):
            label = what.format(*(match.groups() if match else ()))
            o = results.get((gid, OURS))
            p = results.get((gid, peer))
            if o is None or p is None:
                missing.append(f"{gid}: {OURS if o is None else peer}")
                continue
            newest = max(newest, o[1], p[1])
            oldest = min(oldest, o[1], p[1])
            lines.append(
                f"| {label} | {duration(o[0])} | {peer_label} {duration(p[0])} | {ratio(o[0], p[0])} |"
            )
    cpu = args.cpu or cpu_line() or "CPU not known"
    when = datetime.datetime.fromtimestamp(newest, datetime.timezone.utc) if newest else None
    print(f"{cpu}; criterion medians" + (f", {when:%Y-%m-%d %H:%M} UTC" if when else "") + ":")
    print()
    print("\n".join(lines))
    if newest - oldest > 30 * 60:
        print("\nwarning: these results span more than 30 minutes: not one run "
              "(rerun every group together)", file=sys.stderr)
    if missing:
        print("\nmissing (run these groups): " + "; ".join(missing), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
