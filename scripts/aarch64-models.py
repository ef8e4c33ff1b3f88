#!/usr/bin/env python3
"""The aarch64 model table of docs/PERFORMANCE.md, and its gate (issue 48).

For every aarch64 kernel of the crate and its RustCrypto peer, this script models the
cycles per output byte of one warm call on each core through LLVM 19's scheduling models
(llvm-mca-19). These are static models, not hardware measurements.

The method, step by step (docs/PERFORMANCE.md, "aarch64: modelled, not measured", says it
in prose):
1. Build .ci/mca (a harness with one `#[no_mangle]` function per kernel call) for
   aarch64-unknown-linux-gnu, release, as a static non-PIE executable, so that every executed
   address, glibc's memcpy included, has its instruction in this one file.
2. Run `harness KERNEL` under `qemu-aarch64 -singlestep -d exec,nochain`: qemu logs the
   address of every executed instruction. The harness calls the kernel twice; the second
   (warm) call is cut out of the log from the function's entry to the `ret` that leaves it,
   following calls (`bl`/`blr` in, `ret` out).
3. Map each address to its instruction with `llvm-objdump-19 -d`: the result is the
   straight-line sequence of the instructions that really executed, loops unrolled and
   branches resolved as they went, which is the input llvm-mca models correctly (it ignores
   branches and takes its input as straight-line code).
4. `llvm-mca-19 -mcpu=CORE -iterations=N` on that sequence: cycles per call are total
   cycles / N; per byte, divided by the call's output bytes (ours counts useful output: a
   ChaCha8 key period gives 992 of its 1024 bytes, an AES pool 4064 of 4096; a Keccak
   permutation 136 bytes, the sponge generators' rate).

The gate: for each job and each trusted core, the kernel the crate's dispatch picks there
must model no slower than the peer's fastest kernel on that core and no slower than our
other kernels for the job. apple-m1 is shown but not gated (see CORES). Every run also
checks that the gate catches planted bad picks (the portable ChaCha8 and AES, the SHA3
Keccak) in every gated cell.

Usage: aarch64-models.py [--repo DIR] [--write | --check] [--target-dir DIR] [--cache DIR] [--jobs N]
  (no flag)  print the table and the gate's verdict; exit 1 if the gate fails.
  --write    also write the table into DIR/docs/PERFORMANCE.md (between the markers) and
             the figures into README.md's line that starts "On aarch64, modelled".
  --check    also fail if either file does not hold this run's figures.
--repo DIR (default: this script's checkout) models DIR's crate: the harness of this
script's checkout is built against DIR's ratchet-rng (a copy of .ci/mca under the target
directory when DIR is another checkout), so other worktrees can be modelled read-only.
Needs cargo with the aarch64-unknown-linux-gnu target, aarch64-linux-gnu-gcc, qemu-aarch64
(7.2), llvm-objdump-19 and llvm-mca-19. Python 3 standard library only.
"""

import argparse
import concurrent.futures
import hashlib
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN = "<!-- scripts/aarch64-models.py: begin (generated; edit the script, not this table) -->"
END = "<!-- scripts/aarch64-models.py: end -->"
TARGET = "aarch64-unknown-linux-gnu"
MCA = "llvm-mca-19"
OBJDUMP = "llvm-objdump-19"
# qemu CPUs: "max" has SHA3, AES and NEON (SVE off, so that glibc's memcpy takes its
# Advanced SIMD path, the one every modelled core without SVE runs); cortex-a72 has AES
# and NEON but no SHA3, where the peer's keccak takes its scalar code.
QEMU_SHA3 = "max,sve=off"
QEMU_NO_SHA3 = "cortex-a72"

# (column name, llvm-mca -mcpu, MIDR_EL1 of the core, has SHA3, gated). The MIDRs are those of
# shipping parts (implementer 0x41 Arm, 0x61 Apple; the part number in bits 15:4).
CORES = [
    ("neoverse-n1", "neoverse-n1", 0x413FD0C1, False, True),
    ("neoverse-v1", "neoverse-v1", 0x411FD401, True, True),
    ("neoverse-v2", "neoverse-v2", 0x410FD4F0, True, True),
    ("neoverse-n2", "neoverse-n2", 0x410FD490, True, True),
    ("cortex-a72", "cortex-a72", 0x410FD083, False, True),
    ("cortex-a76", "cortex-a76", 0x414FD0B1, False, True),
    # Not gated: LLVM's apple-m1 model looks unreliable for scalar code (issue 48;
    # docs/PERFORMANCE.md says why).
    ("apple-m1", "apple-m1", 0x611F0231, True, False),
]

# Jobs: (job, [(row label, side, our backend name or None, harness argument, qemu CPU,
# output bytes per call, needs SHA3)]). Side "ours" rows are candidates for the dispatch's
# pick; "peer" rows are the bar.
JOBS = [
    ("ChaCha8", [
        ("ours aarch64_neon", "ours", "aarch64_neon", "chacha8_ours:aarch64_neon", QEMU_SHA3, 992, False),
        ("ours soft", "ours", "soft", "chacha8_ours:soft", QEMU_SHA3, 992, False),
        ("chacha20 0.10 ChaCha8 (NEON)", "peer", None, "chacha8_peer", QEMU_SHA3, 1024, False),
    ]),
    ("AES-256", [
        ("ours aarch64_aes", "ours", "aarch64_aes", "aes256_ours:aarch64_aes", QEMU_SHA3, 4064, False),
        ("ours soft", "ours", "soft", "aes256_ours:soft", QEMU_SHA3, 4064, False),
        ("aes 0.9 + ctr 0.10 Ctr128BE (ARMv8)", "peer", None, "aes256_peer", QEMU_SHA3, 4096, False),
    ]),
]
for rounds, what in ((12, "TurboSHAKE256"), (24, "SHAKE256")):
    JOBS.append((f"Keccak-p[1600,{rounds}] ({what})", [
        ("ours aarch64_sha3", "ours", "aarch64_sha3", f"keccak{rounds}_ours:aarch64_sha3", QEMU_SHA3, 136, True),
        ("ours soft", "ours", "soft", f"keccak{rounds}_ours:soft", QEMU_SHA3, 136, False),
        ("keccak 0.2 aarch64_sha3", "peer", None, f"keccak{rounds}_peer", QEMU_SHA3, 136, True),
        ("keccak 0.2 soft", "peer", None, f"keccak{rounds}_peer", QEMU_NO_SHA3, 136, False),
    ]))

SHA3_MNEMONICS = {"eor3", "rax1", "xar", "bcax"}
# Total modelled instructions per (trace, core): enough iterations that the pipeline's
# fill and drain are noise, few enough to stay quick.
MIN_MODELLED = 100_000
# llvm-mca gives a call (`bl`, `blr`) a latency of 100 cycles unless told: in a trace a call
# is a taken branch that writes the link register, so it gets the latency of a simple write.
CALL_LATENCY = 1


def run(argv, **kw):
    return subprocess.run(argv, check=True, text=True, capture_output=True, **kw).stdout


def build(repo, target_dir):
    """Build the harness against REPO's crate; return the executable's path."""
    src = os.path.join(HERE, ".ci", "mca")
    manifest = os.path.join(src, "Cargo.toml")
    locked = ["--locked"]
    if os.path.realpath(repo) != os.path.realpath(HERE):
        # Another checkout: a copy of this harness whose path dependency names it.
        copy = os.path.join(target_dir, "harness-copy")
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(src, copy)
        toml = open(manifest).read().replace('path = "../.."', f'path = "{os.path.realpath(repo)}"')
        open(os.path.join(copy, "Cargo.toml"), "w").write(toml + f"\n# Copied for {repo}.\n")
        manifest = os.path.join(copy, "Cargo.toml")
        locked = []  # that checkout's own dependencies may differ from the lock's
    env = dict(os.environ)
    env.setdefault("CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER", "aarch64-linux-gnu-gcc")
    # Static and non-PIE: the trace's addresses are the file's.
    env["RUSTFLAGS"] = "-C target-feature=+crt-static -C relocation-model=static"
    for overriding in ("CARGO_ENCODED_RUSTFLAGS", "CARGO_BUILD_RUSTFLAGS"):
        env.pop(overriding, None)
    argv = ["cargo", "build", "--quiet", "--release", *locked, "--manifest-path", manifest,
            "--target", TARGET, "--target-dir", target_dir]
    subprocess.run(argv, check=True, env=env)
    return os.path.join(target_dir, TARGET, "release", "ratchet-rng-mca")


def disassemble(exe):
    """{address: (mnemonic, operands)} and {symbol: address} of the executable."""
    text = run([OBJDUMP, "-d", "--mattr=+all", "--no-show-raw-insn", exe])
    insns, syms = {}, {}
    sym_re = re.compile(r"^([0-9a-f]+) <(.+)>:$")
    insn_re = re.compile(r"^\s+([0-9a-f]+):\s+(\S+)(?:\s+(.*))?$")
    for line in text.splitlines():
        m = sym_re.match(line)
        if m:
            syms[m.group(2)] = int(m.group(1), 16)
            continue
        m = insn_re.match(line)
        if m:
            insns[int(m.group(1), 16)] = (m.group(2), (m.group(3) or "").strip())
    return insns, syms


def trace(exe, kernel, qemu_cpu, entry, insns):
    """The instructions of the warm call of the harness function at ENTRY, in order."""
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "exec.log")
        # The guest's stack must not depend on the caller: glibc's memcpy and memset (in the
        # portable AES's trace) take a few more or fewer instructions by the alignment of
        # their buffers, and the stack holds the environment and the program's path. So the
        # guest gets no environment but the CPU, and always the same relative path.
        qemu = shutil.which("qemu-aarch64") or sys.exit("qemu-aarch64 not found")
        subprocess.run([qemu, "-singlestep", "-d", "exec,nochain", "-D", log, "./" + os.path.basename(exe), kernel],
                       check=True, env={"QEMU_CPU": qemu_cpu}, cwd=os.path.dirname(exe), stdout=subprocess.DEVNULL)
        pcs = []
        pc_re = re.compile(r"^Trace \d+: 0x[0-9a-f]+ \[[0-9a-f]+/([0-9a-f]+)/")
        with open(log) as f:
            for line in f:
                m = pc_re.match(line)
                if m:
                    pcs.append(int(m.group(1), 16))
    starts = [i for i, pc in enumerate(pcs) if pc == entry]
    if len(starts) < 2:
        sys.exit(f"{kernel}: the harness function ran {len(starts)} times, expected 2")
    out, depth = [], 0
    for pc in pcs[starts[1]:]:
        if pc not in insns:
            sys.exit(f"{kernel}: executed address {pc:#x} is not in the disassembly")
        mnemonic, operands = insns[pc]
        out.append((mnemonic, operands))
        if mnemonic in ("bl", "blr"):
            depth += 1
        elif mnemonic == "ret":
            if depth == 0:
                return out
            depth -= 1
    sys.exit(f"{kernel}: the warm call never returned in the trace")


ADDRESS = re.compile(r"(?<![#\w-])0x[0-9a-f]+(?: <[^>]*>)?")


def assembly(seq):
    """llvm-mca's input: each address operand (branch and adr/adrp/ldr-literal targets)
    becomes a local label, as llvm-mca assembles the text and ignores where branches go."""
    lines = [".text", ".Lt:"]
    for mnemonic, operands in seq:
        lines.append(f"\t{mnemonic}\t{ADDRESS.sub('.Lt', operands)}".rstrip())
    return "\n".join(lines) + "\n"


def model(asm, mcpu, sha3, count, cache):
    """Modelled cycles of one pass over ASM (COUNT instructions) on MCPU. A result is kept
    in CACHE under the sha256 of everything it depends on (llvm-mca's version, its
    arguments, the trace), outside the checkout as CI's other generated outputs are:
    llvm-mca reads a long trace slowly (the soft AES pool's 200,000 instructions take
    seconds per core), and a trace that did not change need not be modelled again."""
    iterations = max(4, math.ceil(MIN_MODELLED / count))
    mattr = "+neon,+aes,+sha2" + (",+sha3" if sha3 else "")
    argv = [MCA, "-mtriple=aarch64", f"-mcpu={mcpu}", f"-mattr={mattr}", f"-iterations={iterations}",
            f"-call-latency={CALL_LATENCY}", "-resource-pressure=0", "-instruction-info=0"]
    key = hashlib.sha256("\0".join([mca_version(), *argv, asm]).encode()).hexdigest()
    path = os.path.join(cache, key)
    try:
        total = int(open(path).read())
    except (OSError, ValueError):
        out = subprocess.run([*argv, "-"], input=asm, check=True, text=True, capture_output=True).stdout
        m = re.search(r"^Total Cycles:\s+(\d+)", out, re.M)
        if not m:
            sys.exit(f"llvm-mca gave no total on {mcpu}:\n{out}")
        total = int(m.group(1))
        os.makedirs(cache, exist_ok=True)
        with open(path + ".tmp", "w") as f:
            f.write(str(total))
        os.replace(path + ".tmp", path)
    return total / iterations


_MCA_VERSION = []


def mca_version():
    if not _MCA_VERSION:
        _MCA_VERSION.append(run([MCA, "--version"]))
    return _MCA_VERSION[0]


def keccak_pick(exe, midr, sha3):
    """The crate's per-core Keccak choice (hazmat::keccak_for_aarch64_core)."""
    return run(["qemu-aarch64", exe, "keccak-pick", f"{midr:#x}", "1" if sha3 else "0"]).strip()


def measure(exe, cache, jobs):
    insns, syms = disassemble(exe)
    pending = []
    cells = {}  # (job, label) -> {core: cycles per byte}
    counts = {}
    for job, rows in JOBS:
        for label, side, backend, kernel, qemu_cpu, nbytes, needs_sha3 in rows:
            fn = "mca_" + kernel.split(":")[0]
            seq = trace(exe, kernel, qemu_cpu, syms[fn], insns)
            has_sha3 = any(m in SHA3_MNEMONICS for m, _ in seq)
            if has_sha3 != needs_sha3:
                sys.exit(f"{kernel} under qemu -cpu {qemu_cpu}: SHA3 instructions {'' if has_sha3 else 'not '}executed")
            asm = assembly(seq)
            counts[(job, label)] = len(seq)
            cells[(job, label)] = {}
            for name, mcpu, _midr, core_sha3, _gated in CORES:
                if not needs_sha3 or core_sha3:
                    pending.append(((job, label), name, nbytes, (asm, mcpu, core_sha3, len(seq), cache)))
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        results = list(pool.map(lambda p: model(*p[3]) / p[2], pending))
    for (cell, name, _n, _a), v in zip(pending, results):
        cells[cell][name] = v
    return cells, counts


def picks(exe):
    """{(job, core): our backend the dispatch picks on that core}. ChaCha8 and AES: what the
    crate detects on qemu's CPU with NEON and AES, as every modelled core has; Keccak: the
    crate's per-core table for the core's MIDR_EL1 and SHA3 flag."""
    chacha, aes = run(["qemu-aarch64", "-cpu", QEMU_SHA3, exe, "detect"]).split()
    out = {}
    for name, _mcpu, midr, sha3, _gated in CORES:
        for job, rows in JOBS:
            if job.startswith("ChaCha"):
                out[(job, name)] = chacha
            elif job.startswith("AES"):
                out[(job, name)] = aes
            else:
                out[(job, name)] = keccak_pick(exe, midr, sha3)
    return out


def gate(cells, chosen):
    """Failing cells, as sentences."""
    fails = []
    for job, rows in JOBS:
        for name, _mcpu, _midr, _sha3, gated in CORES:
            if not gated:
                continue
            pick = chosen[(job, name)]
            ours = {b: cells[(job, l)].get(name) for l, s, b, *_ in rows if s == "ours"}
            peers = {l: cells[(job, l)].get(name) for l, s, *_ in rows if s == "peer"}
            mine = ours.get(pick)
            if mine is None:
                fails.append(f"{job} on {name}: the dispatch picks {pick}, which the core cannot run")
                continue
            for l, v in peers.items():
                if v is not None and mine > v:
                    fails.append(f"{job} on {name}: ours ({pick}) {mine:.3f} c/B is slower than {l} {v:.3f} c/B ({v / mine:.2f}x)")
            for b, v in ours.items():
                if b != pick and v is not None and mine > v:
                    fails.append(f"{job} on {name}: the pick {pick} {mine:.3f} c/B is slower than our {b} {v:.3f} c/B")
    return fails


def md(text):
    """TEXT with its brackets escaped (rustdoc renders the doc, and takes `[x]` for a link)."""
    return text.replace("[", "\\[").replace("]", "\\]")


def table(cells, counts, chosen):
    names = [c[0] for c in CORES]
    lines = [
        "Modelled cycles per output byte (llvm-mca-19; lower is faster). `*` marks the kernel the",
        "crate's dispatch picks on that core; a ratio is the peer's fastest kernel on that core over our",
        "pick (at least 1.00 means ours models no slower); `-`: the core lacks the extension;",
        "instructions per call: the length of the executed trace. apple-m1 is not gated (above).",
        "",
        "| job | kernel | instructions per call | " + " | ".join(names) + " |",
        "|---|---|---:|" + "---:|" * len(names),
    ]
    for job, rows in JOBS:
        for label, side, backend, *_ in rows:
            cols = []
            for name in names:
                v = cells[(job, label)].get(name)
                star = "\\*" if side == "ours" and chosen[(job, name)] == backend and v is not None else ""
                cols.append("-" if v is None else f"{v:.3f}{star}")
            lines.append(f"| {md(job)} | {label} | {counts[(job, label)]} | " + " | ".join(cols) + " |")
        cols = []
        for name in names:
            pick = chosen[(job, name)]
            mine = next(cells[(job, l)].get(name) for l, s, b, *_ in rows if s == "ours" and b == pick)
            peer = [cells[(job, l)].get(name) for l, s, *_ in rows if s == "peer"]
            peer = [v for v in peer if v is not None]
            cols.append(f"{min(peer) / mine:.2f}x" if mine and peer else "-")
        lines.append(f"| {md(job)} | **peer / ours** | | " + " | ".join(cols) + " |")
    return "\n".join(lines) + "\n"


# README.md's aarch64 line (one line, found by its start): the chosen kernels against the peers'
# fastest on three cores, from the same run as the table.
README_PREFIX = "On aarch64, modelled, not measured"
README_CORES = [("neoverse-v1", "Neoverse V1"), ("neoverse-v2", "V2"), ("neoverse-n1", "N1")]
README_JOBS = [("ChaCha8", "ChaCha8"), ("AES-256", "the AES pool"), ("Keccak-p[1600,12] (TurboSHAKE256)", "TurboSHAKE256")]
GUIDE = "https://docs.rs/ratchet-rng/latest/ratchet_rng/guide/performance/index.html#aarch64-modelled-not-measured"


def readme_line(cells, chosen):
    parts = []
    for job, short in README_JOBS:
        rows = dict(JOBS)[job]
        ours, peer = [], []
        for core, _ in README_CORES:
            pick = chosen[(job, core)]
            ours.append(next(cells[(job, l)][core] for l, s, b, *_ in rows if s == "ours" and b == pick))
            peer.append(min(cells[(job, l)][core] for l, s, *_ in rows if s == "peer" and core in cells[(job, l)]))
        fmt = lambda vs: " / ".join(f"{v:.2f}" for v in vs)
        parts.append(f"{short} {fmt(ours)} against {fmt(peer)}")
    cores = " / ".join(name for _, name in README_CORES)
    return (f"{README_PREFIX} (LLVM 19's scheduling models of {cores} through llvm-mca), cycles per byte of the "
            f"kernel each core gets against RustCrypto's: {', '.join(parts)} ([every core]({GUIDE})).")


def splice_readme(doc, line):
    lines = doc.split("\n")
    hits = [i for i, l in enumerate(lines) if l.startswith(README_PREFIX)]
    if len(hits) != 1:
        sys.exit(f"README.md has {len(hits)} lines starting with {README_PREFIX!r}, expected 1")
    lines[hits[0]] = line
    return "\n".join(lines)


def splice(doc, body):
    if BEGIN not in doc or END not in doc:
        sys.exit(f"docs/PERFORMANCE.md has no {BEGIN!r} ... {END!r} markers")
    head, rest = doc.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return head + BEGIN + "\n" + body + END + tail


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repo", default=HERE, help="the checkout whose crate is modelled")
    ap.add_argument("--target-dir", help="cargo's target directory (default: $CARGO_TARGET_DIR, else REPO/target/mca)")
    cache = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "ratchet-rng-ci", "llvm-mca")
    ap.add_argument("--cache", default=cache, help=f"llvm-mca's results, keyed by their inputs (default: {cache})")
    ap.add_argument("--jobs", type=int, default=1, help="llvm-mca processes at once (default 1)")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help="write the table into REPO/docs/PERFORMANCE.md")
    mode.add_argument("--check", action="store_true", help="fail if REPO/docs/PERFORMANCE.md differs")
    args = ap.parse_args()
    repo = os.path.abspath(args.repo)
    target_dir = os.path.abspath(args.target_dir or os.environ.get("CARGO_TARGET_DIR") or os.path.join(repo, "target", "mca"))
    exe = build(repo, target_dir)
    cells, counts = measure(exe, args.cache, args.jobs)
    chosen = picks(exe)
    body = table(cells, counts, chosen)
    print(body, end="")
    line = readme_line(cells, chosen)
    print(f"\nREADME.md: {line}")
    rc = 0
    if args.write or args.check:
        for name, edit in (("docs/PERFORMANCE.md", lambda d: splice(d, body)), ("README.md", lambda d: splice_readme(d, line))):
            path = os.path.join(repo, name)
            doc = open(path).read()
            new = edit(doc)
            if args.write:
                if new != doc:
                    open(path, "w").write(new)
                print(f"wrote {path}")
            elif new != doc:
                print(f"{name} does not hold this run's figures: run `python3 scripts/aarch64-models.py --write`")
                rc = 1
    # The gate's negative control, on this run's cells: a dispatch that picked the portable
    # ChaCha8 and AES and the SHA3 Keccak on every core must fail every gated cell.
    planted = {(job, core): ("aarch64_sha3" if job.startswith("Keccak") else "soft") for job, core in chosen}
    caught = {f.split(": ")[0] for f in gate(cells, planted)}
    expected = {f"{job} on {core[0]}" for job, _ in JOBS for core in CORES if core[4]}
    if caught != expected:
        print(f"gate negative control: planted bad picks not caught in {sorted(expected - caught)}")
        rc = 1
    fails = gate(cells, chosen)
    for f in fails:
        print(f"GATE FAIL: {f}")
    if fails:
        print(f"gate: {len(fails)} cell(s) fail (each chosen kernel must model no slower than its peer and our other kernels on every gated core)")
        rc = 1
    else:
        print("gate: every chosen kernel models no slower than its peer and our other kernels on every gated core")
    return rc


if __name__ == "__main__":
    sys.exit(main())
