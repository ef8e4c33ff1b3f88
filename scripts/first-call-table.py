#!/usr/bin/env python3
"""Prints docs/PERFORMANCE.md's first-call table from criterion's results.

    cargo bench -p benches --bench thread_rng -- 'first_call|next_u64/(ratchet_rng::u64|rand::rng|rand::rngs::SmallRng|rand_aes::tls|vdso::getrandom)$|fill_bytes/(4096|524288)/(ratchet_rng::fill|rand::rng|vdso::getrandom)$'
    python3 scripts/first-call-table.py

Reads every target/criterion/**/new/{benchmark,estimates}.json of the groups
`first_call_process/*`, `first_call_thread/*`, `next_u64` and
`fill_bytes/{4096,524288}` (the group and function ids are inside
benchmark.json), takes each median, and prints a markdown table: ours, the peer
of the same run, and the ratio of the two times (a fill's cells also give its
GiB/s), under a line naming the CPU (/proc/cpuinfo, where there is one) and the
date of the newest result. A missing result, or results more than 30 minutes
apart (not one run), is reported on stderr. The kernel's vDSO `getrandom`
(`vdso::getrandom`) rows are left out, with a line on stderr, where the bench
left that peer out (no such function in this kernel's vDSO). Python 3 standard
library only.
"""

import argparse
import datetime
import json
import os
import re
import sys

# Our function id in each group: `u64()` where one value is drawn, `fill()` in
# the fill groups.
OURS_U64 = "ratchet_rng::u64"
OURS_FILL = "ratchet_rng::fill"

# The kernel's vDSO getrandom: the bench leaves it out where the kernel has none.
VDSO = "vdso::getrandom"
VDSO_LABEL = "the kernel's vDSO `getrandom`"

# (group id or regex, what the row measures, our function id, peer function id,
# peer label). An empty "what" continues the row above.
ROWS = [
    ("first_call_process/fresh", "first `u64()` of a fresh process",
     OURS_U64, "rand::rng", "`rand::rng()`"),
    ("first_call_process/fresh", "", OURS_U64, VDSO, VDSO_LABEL),
    (re.compile(r"first_call_process/(\d+)GiB resident"),
     "the same after the process touched {0} GiB",
     OURS_U64, "rand::rng", "`rand::rng()`"),
    (re.compile(r"first_call_process/(\d+)GiB resident"), "", OURS_U64, VDSO, VDSO_LABEL),
    ("first_call_thread/fresh", "first call on a new thread, no page to recycle",
     OURS_U64, "rand::rng", "`rand::rng()`"),
    ("first_call_thread/fresh", "", OURS_U64, VDSO, VDSO_LABEL),
    ("first_call_thread/recycled",
     "first call on a new thread, pages recycled (threads exited)",
     OURS_U64, "rand::rng", "`rand::rng()`"),
    ("first_call_thread/recycled", "", OURS_U64, VDSO, VDSO_LABEL),
    ("next_u64", "`u64()` per call",
     OURS_U64, "rand::rngs::SmallRng", "xoshiro256++ (`rand::rngs::SmallRng`)"),
    ("next_u64", "",
     OURS_U64, "rand::rng", "`rand::rng()` held"),
    ("next_u64", "",
     OURS_U64, "rand_aes::tls", "rand_aes's thread-local `rand_u64()` (not for keys, no fork safety)"),
    ("next_u64", "", OURS_U64, VDSO, VDSO_LABEL + ", 8 bytes a call"),
    ("fill_bytes/4096", "`fill()` of 4 KiB", OURS_FILL, "rand::rng", "`rand::rng()` held"),
    ("fill_bytes/4096", "", OURS_FILL, VDSO, VDSO_LABEL),
    ("fill_bytes/524288", "`fill()` of 512 KiB", OURS_FILL, "rand::rng", "`rand::rng()` held"),
    ("fill_bytes/524288", "", OURS_FILL, VDSO, VDSO_LABEL),
]


def read_results(criterion_dir):
    """{(group id, function id): (median ns, mtime, bytes per iteration or None)}."""
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
        throughput = bench.get("throughput") or {}
        results[key] = (estimates["median"]["point_estimate"], mtime, throughput.get("Bytes"))
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


def cell(result, group):
    """A result's median time, and in a fill group its GiB/s."""
    ns, _, size = result
    if group.startswith("fill_bytes/") and size:
        return f"{duration(ns)} ({significant(size / ns * 1e9 / 2**30)} GiB/s)"
    return duration(ns)


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
    # The bench leaves the vDSO peer out where the kernel has none: so do we.
    has_vdso = any(function == VDSO for _, function in results)
    for group, what, ours, peer, peer_label in ROWS:
        if peer == VDSO and not has_vdso:
            continue
        for gid, match in groups_matching(results, group):
            label = what.format(*(match.groups() if match else ()))
            o = results.get((gid, ours))
            p = results.get((gid, peer))
            if o is None or p is None:
                missing.append(f"{gid}: {ours if o is None else peer}")
                continue
            newest = max(newest, o[1], p[1])
            oldest = min(oldest, o[1], p[1])
            lines.append(
                f"| {label} | {cell(o, gid)} | {peer_label} {cell(p, gid)} | {ratio(o[0], p[0])} |"
            )
    cpu = args.cpu or cpu_line() or "CPU not known"
    when = datetime.datetime.fromtimestamp(newest, datetime.timezone.utc) if newest else None
    print(f"{cpu}; criterion medians" + (f", {when:%Y-%m-%d %H:%M} UTC" if when else "") + ":")
    print()
    print("\n".join(lines))
    if newest - oldest > 30 * 60:
        print("\nwarning: these results span more than 30 minutes: not one run "
              "(rerun every group together)", file=sys.stderr)
    if not has_vdso:
        print(f"\nno {VDSO} results: the bench leaves that peer out where the "
              "kernel's vDSO has no getrandom (Linux before 6.11)", file=sys.stderr)
    if missing:
        print("\nmissing (run these groups): " + "; ".join(missing), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
