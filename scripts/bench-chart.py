#!/usr/bin/env python3
"""Draws docs/throughput.svg from criterion's results for the 512 KiB bulk fill.

    cargo bench -p benches --bench generators -- 'fill_bytes/524288'
    cargo bench -p benches --bench thread_rng -- 'fill_bytes/524288'     # optional: rng() bars
    python3 scripts/bench-chart.py --caption-note "quiet machine"

Reads target/criterion/fill_bytes_524288/<function>/new/{estimates,benchmark}.json
(the median time per fill and the byte throughput criterion recorded) and writes a
horizontal bar chart, GiB/s, this crate's generators against the baselines that
ran in the same group. Python 3 standard library only.
"""

import argparse
import datetime
import html
import json
import os
import platform
import sys

GROUP_DIR = "fill_bytes_524288"

# Criterion function ids of the group, in the chart's order: (id, label, ours).
# Functions found but not listed here are drawn after these, as baselines.
KNOWN = [
    ("AesCtrPoolRng", "AesCtrPoolRng", True),
    ("ChaChaKeyErasureRng", "ChaChaKeyErasureRng (ChaCha8)", True),
    ("ratchet_rng::rng", "ratchet_rng::rng() (thread-local)", True),
    ("ChaCha12KeyErasureRng", "ChaCha12KeyErasureRng", True),
    ("ChaCha20KeyErasureRng", "ChaCha20KeyErasureRng", True),
    ("TurboShakeRng", "TurboShakeRng", True),
    ("ShakeRng", "ShakeRng", True),
    ("RustCrypto AES-256-CTR", "aes + ctr AES-256-CTR", False),
    ("chacha20 ChaCha8Rng", "chacha20 ChaCha8Rng", False),
    ("rand StdRng", "rand StdRng (ChaCha12)", False),
    ("rand::rng", "rand::rng() (ThreadRng)", False),
    ("chacha20 ChaCha12Rng", "chacha20 ChaCha12Rng", False),
    ("RustCrypto TurboShake256 reader", "turboshake TurboShake256 reader", False),
    ("RustCrypto Shake256 reader", "shake Shake256 reader", False),
    ("getrandom::fill", "getrandom::fill (OS)", False),
]
# Measured by the benches but not drawn: repeats of bars above.
SKIP = {"ratchet_rng::fill", "direct/AesCtrPoolRng", "direct/ChaChaKeyErasureRng"}


def read_group(criterion_dir):
    """{function id: (GiB/s, mtime)} for every function of the group."""
    group = os.path.join(criterion_dir, GROUP_DIR)
    if not os.path.isdir(group):
        sys.exit(f"no {group}: run `cargo bench -p benches --bench generators -- 'fill_bytes/524288'`")
    results = {}
    for entry in sorted(os.listdir(group)):
        new = os.path.join(group, entry, "new")
        try:
            with open(os.path.join(new, "benchmark.json")) as f:
                bench = json.load(f)
            with open(os.path.join(new, "estimates.json")) as f:
                estimates = json.load(f)
        except FileNotFoundError:
            continue  # criterion's `report` directory, or an aborted run
        nbytes = (bench.get("throughput") or {}).get("Bytes")
        if not nbytes:
            continue
        ns = estimates["median"]["point_estimate"]
        gib_s = nbytes / ns * 1e9 / 2**30
        mtime = os.path.getmtime(os.path.join(new, "estimates.json"))
        results[bench["function_id"]] = (gib_s, mtime)
    if not results:
        sys.exit(f"no results with a byte throughput under {group}")
    return results


def bars(results):
    """[(label, GiB/s, ours)] in the chart's order."""
    out = []
    for fid, label, ours in KNOWN:
        if fid in results:
            out.append((label, results[fid][0], ours))
    known = {fid for fid, _, _ in KNOWN}
    for fid in sorted(results):
        if fid not in known and fid not in SKIP:
            out.append((fid, results[fid][0], False))
    return out


def svg(rows, caption_lines):
    label_w, bar_w, row_h, top, value_w = 290, 420, 24, 46, 90
    width = label_w + bar_w + value_w
    height = top + row_h * len(rows) + 22 + 16 * len(caption_lines)
    peak = max(v for _, v, _ in rows)
    esc = html.escape
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="13">',
        f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
        f'<text x="10" y="22" font-size="16" font-weight="bold">'
        f"fill_bytes into a 512 KiB buffer: throughput, GiB/s (higher is better)</text>",
        f'<rect x="{label_w}" y="30" width="12" height="10" fill="#2f6db5"/>'
        f'<text x="{label_w + 16}" y="39" font-size="11">ratchet-rng</text>'
        f'<rect x="{label_w + 100}" y="30" width="12" height="10" fill="#a0a0a0"/>'
        f'<text x="{label_w + 116}" y="39" font-size="11">baselines</text>',
    ]
    for i, (label, value, ours) in enumerate(rows):
        y = top + i * row_h
        w = max(1.0, bar_w * value / peak)
        colour = "#2f6db5" if ours else "#a0a0a0"
        out.append(
            f'<text x="{label_w - 8}" y="{y + 16}" text-anchor="end">{esc(label)}</text>'
        )
        out.append(
            f'<rect x="{label_w}" y="{y + 4}" width="{w:.1f}" height="{row_h - 8}" fill="{colour}"/>'
        )
        text = f"{value:.2f}" if value >= 0.995 else f"{value:.3f}"
        out.append(f'<text x="{label_w + w + 6:.1f}" y="{y + 16}">{text}</text>')
    y = top + row_h * len(rows) + 18
    for line in caption_lines:
        out.append(f'<text x="10" y="{y}" font-size="11" fill="#444444">{esc(line)}</text>')
        y += 16
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--criterion-dir", default="target/criterion")
    parser.add_argument("--output", default="docs/throughput.svg")
    parser.add_argument("--machine", default=f"{platform.machine()} {platform.system()}",
                        help="machine description for the caption")
    parser.add_argument("--caption-note", default="",
                        help="an extra caption line (e.g. how loaded the machine was)")
    args = parser.parse_args()

    results = read_group(args.criterion_dir)
    rows = bars(results)
    newest = max(mtime for _, mtime in results.values())
    day = datetime.datetime.fromtimestamp(newest, datetime.timezone.utc).strftime("%Y-%m-%d")
    caption = [
        f"criterion medians, run of {day}, default build flags (no target-cpu=native).",
        f"Machine: {args.machine}.",
        "Regenerate: cargo bench -p benches --bench generators -- 'fill_bytes/524288', then "
        "python3 scripts/bench-chart.py",
    ]
    if args.caption_note:
        caption.insert(2, args.caption_note)
    os.makedirs(os.path.dirname(args.output) or ".", exist_ok=True)
    with open(args.output, "w") as f:
        f.write(svg(rows, caption))
    for label, value, _ in rows:
        print(f"{label:40} {value:7.3f} GiB/s")
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
