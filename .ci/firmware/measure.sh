#!/usr/bin/env bash
# Measures the footprint tables of docs/NO_STD.md: builds src/bin/footprint.rs
# once per generator (and once with none, the baseline), release profile of
# Cargo.toml (fat LTO, one codegen unit, panic = abort) at opt-level OPT (default
# "s", as in Cargo.toml), for thumbv7em-none-eabihf, runs each under
# qemu-system-arm (mps2-an386, Cortex-M4F) with -icount shift=0, and prints the
# Markdown table. Not run by CI (a dozen builds, about a minute warm); rerun it
# when the generators change, and paste its output.
#
#   bash .ci/firmware/measure.sh [OPT]      # OPT: s (default), 3, z, ...
set -euo pipefail
cd "$(dirname "$0")"
export CARGO_PROFILE_RELEASE_OPT_LEVEL=${1:-s}
TARGET=thumbv7em-none-eabihf
TARGET_DIR=../../target/firmware
ELF=$TARGET_DIR/$TARGET/release/footprint

# footprint FEATURE: the `footprint` line of the build with FEATURE ("" = none).
footprint() {
    cargo build -q --locked --release --target "$TARGET" --target-dir "$TARGET_DIR" \
        --bin footprint ${1:+--features "$1"}
    local out
    out=$(timeout 120 qemu-system-arm -M mps2-an386 -cpu cortex-m4 -nographic \
        -monitor none -serial none -semihosting-config enable=on,target=native \
        -icount shift=0 -kernel "$ELF" 2>&1) || { printf '%s\n' "$out" >&2; return 1; }
    grep '^footprint ' <<<"$out" || { printf '%s\n' "$out" >&2; return 1; }
}

# field LINE KEY: the value of KEY=... in LINE.
field() { sed -n "s/.* $2=\"\{0,1\}\([^\" ]*\)\"\{0,1\}.*/\1/p" <<<"$1"; }
name() { sed -n 's/.*name="\([^"]*\)".*/\1/p' <<<"$1"; }

base=$(footprint "")
base_flash=$(($(field "$base" text) + $(field "$base" rodata)))

echo "opt-level $CARGO_PROFILE_RELEASE_OPT_LEVEL; $(rustc --version); $(qemu-system-arm --version | head -1)"
echo "baseline (start-up, semihosting, formatting, measuring code): .text $(field "$base" text) B, .rodata $(field "$base" rodata) B"
echo
echo "| generator | flash (B) | .data + .bss (B) | \`size_of\` (B) | stack: construct (B) | stack: one refill (B) | instructions per byte |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for f in fp-turboshake fp-shake fp-chacha8 fp-chacha12 fp-chacha20 fp-aes-ctr-pool \
    fp-rand-chacha8 fp-rand-chacha12 fp-chacha20-crate-chacha8 fp-chacha20-crate-chacha12 \
    fp-aes-ctr-crates; do
    line=$(footprint "$f")
    flash=$(($(field "$line" text) + $(field "$line" rodata) - base_flash))
    ram=$(($(field "$line" data) + $(field "$line" bss)))
    instr=$(field "$line" instructions)
    bytes=$(field "$line" bytes)
    [ "$instr" -gt 0 ] || { echo "$f: SysTick did not count under -icount" >&2; exit 1; }
    ipb=$(awk -v i="$instr" -v b="$bytes" 'BEGIN { printf "%.1f", i / b }')
    echo "| $(name "$line") | $flash | $ram | $(field "$line" size_of) | $(field "$line" stack_new) | $(field "$line" stack_refill) | $ipb |"
done
