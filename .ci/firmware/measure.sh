#!/usr/bin/env bash
# Measures the footprint tables of docs/NO_STD.md, and is CI's benchmark gate.
#
# For each configuration (a core and an opt-level), builds src/bin/footprint.rs
# once per generator and once with none (the baseline), release profile of
# Cargo.toml (fat LTO, one codegen unit, panic = abort) with the opt-level
# overridden, runs each under QEMU with -icount shift=0 (one guest nanosecond per
# instruction: the counts are deterministic), and prints one Markdown table per
# configuration. Ours and the peers (rand_chacha, chacha20, aes + ctr, turboshake)
# are built by the same program, so every row of a table is measured the same way.
#
#   bash .ci/firmware/measure.sh [CONFIG...]
#       the tables of docs/NO_STD.md (default: m4:s m4:3 rv:s rv:3); paste them.
#   bash .ci/firmware/measure.sh --check [THRESHOLDS]
#       the gate (.ci/run): measures only the configurations and rows that
#       THRESHOLDS (default: thresholds.txt, beside this script) names, prints
#       their tables and one line per limit, and exits 1 if any limit is
#       exceeded. The measurements are kept in target/firmware/measured.txt.
#   bash .ci/firmware/measure.sh --negative-control [THRESHOLDS]
#       no builds: re-checks target/firmware/measured.txt (from --check) with
#       every limit of THRESHOLDS set just below the value measured, and
#       requires every line to fail (so that no line of the gate is dead).
#
# CONFIG is CORE:OPT, CORE one of m4 (thumbv7em-none-eabihf on qemu-system-arm's
# mps2-an386, a Cortex-M4F) and rv (riscv32imac-unknown-none-elf on
# qemu-system-riscv32's virt), OPT an opt-level (s, 3, z, ...).
set -euo pipefail
SCRIPT=$(realpath "$0")
# A THRESHOLDS file named on the command line, resolved before the cd below.
[ $# -lt 2 ] || [ "${1:0:2}" != -- ] || set -- "$1" "$(realpath "$2")"
cd "$(dirname "$SCRIPT")"
# The target dir (relative to this directory), shared with the firmware steps of .ci/run.
TARGET_DIR=${MEASURE_TARGET_DIR:-../../target/firmware}
MEASURED=$TARGET_DIR/measured.txt

# Every row, in table order: ours, then the peers. ROW is the build's feature
# without its `fp-` prefix.
ALL_ROWS=(turboshake shake chacha8 chacha12 chacha20 aes-ctr-pool
    rand-chacha8 rand-chacha12 chacha20-crate-chacha8 chacha20-crate-chacha12
    aes-ctr-crates turboshake-crate)

target_of() {
    case $1 in
    m4) echo thumbv7em-none-eabihf ;;
    rv) echo riscv32imac-unknown-none-elf ;;
    *) echo "unknown core $1 (m4 or rv)" >&2; return 1 ;;
    esac
}

# footprint CORE OPT ROW: the `footprint` line of that build (ROW "" = baseline).
footprint() {
    local target elf out
    target=$(target_of "$1")
    CARGO_PROFILE_RELEASE_OPT_LEVEL=$2 cargo build -q --locked --release --target "$target" \
        --target-dir "$TARGET_DIR" --bin footprint ${3:+--features "fp-$3"}
    elf=$TARGET_DIR/$target/release/footprint
    case $1 in
    m4) out=$(timeout 120 qemu-system-arm -M mps2-an386 -cpu cortex-m4 -nographic \
        -monitor none -serial none -semihosting-config enable=on,target=native \
        -icount shift=0 -kernel "$elf" 2>&1) ;;
    rv) out=$(timeout 120 qemu-system-riscv32 -M virt -cpu rv32 -bios none -nographic \
        -monitor none -serial none -semihosting-config enable=on,target=native \
        -icount shift=0 -kernel "$elf" 2>&1) ;;
    esac || { printf '%s\n' "$out" >&2; return 1; }
    grep '^footprint ' <<<"$out" || { printf '%s\n' "$out" >&2; return 1; }
}

# field LINE KEY: the value of KEY=... in LINE.
field() { sed -n "s/.* $2=\"\{0,1\}\([^\" ]*\)\"\{0,1\}.*/\1/p" <<<"$1"; }
name() { sed -n 's/.*name="\([^"]*\)".*/\1/p' <<<"$1"; }

# measure CORE OPT ROW...: prints the table of that configuration, and appends one
# line per row to $MEASURED: `CORE OPT ROW flash=B ram=B size_of=B stack_new=B
# stack_refill=B ipb=X`.
measure() {
    local core=$1 opt=$2 base base_flash row line flash ram instr bytes ipb cpu
    shift 2
    base=$(footprint "$core" "$opt" "")
    base_flash=$(($(field "$base" text) + $(field "$base" rodata)))
    case $core in
    m4) cpu="Cortex-M4F ($(target_of m4)), $(qemu-system-arm --version | head -1)" ;;
    rv) cpu="RISC-V rv32imac ($(target_of rv)), $(qemu-system-riscv32 --version | head -1)" ;;
    esac
    echo
    echo "$cpu; opt-level \"$opt\"; $(rustc --version)"
    echo "baseline (start-up, semihosting, formatting, measuring code): .text $(field "$base" text) B, .rodata $(field "$base" rodata) B"
    echo
    echo "| generator | flash (B) | .data + .bss (B) | \`size_of\` (B) | stack: construct (B) | stack: one refill (B) | instructions per byte |"
    echo "|---|---:|---:|---:|---:|---:|---:|"
    for row in "$@"; do
        line=$(footprint "$core" "$opt" "$row")
        flash=$(($(field "$line" text) + $(field "$line" rodata) - base_flash))
        ram=$(($(field "$line" data) + $(field "$line" bss)))
        instr=$(field "$line" instructions)
        bytes=$(field "$line" bytes)
        [ "$instr" -gt 0 ] || { echo "$row: the counter did not count under -icount" >&2; return 1; }
        ipb=$(awk -v i="$instr" -v b="$bytes" 'BEGIN { printf "%.2f", i / b }')
        echo "| $(name "$line") | $flash | $ram | $(field "$line" size_of) | $(field "$line" stack_new) | $(field "$line" stack_refill) | $(awk -v x="$ipb" 'BEGIN { printf "%.1f", x }') |"
        echo "$core $opt $row flash=$flash ram=$ram size_of=$(field "$line" size_of) stack_new=$(field "$line" stack_new) stack_refill=$(field "$line" stack_refill) ipb=$ipb" >>"$MEASURED"
    done
}

# measured CORE OPT ROW METRIC: that value in $MEASURED (empty if not measured).
measured() {
    awk -v c="$1" -v o="$2" -v r="$3" -v m="$4" '$1 == c && $2 == o && $3 == r {
        for (i = 4; i <= NF; i++) { split($i, kv, "="); if (kv[1] == m) print kv[2] } }' "$MEASURED"
}

# limits THRESHOLDS: its lines without comments and blank lines.
limits() { sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$1"; }

# check THRESHOLDS [below]: checks $MEASURED against every line of THRESHOLDS
# (`CORE OPT ROW METRIC PEER LIMIT TARGET`, see thresholds.txt), one line of
# output each; returns the number of failed lines (capped at 255). With `below`,
# each LIMIT is replaced by the value measured minus 1% (the negative control).
check() {
    local file=$1 mode=${2:-} failed=0 core opt row metric peer limit target ours theirs value verdict what
    while read -r core opt row metric peer limit target; do
        ours=$(measured "$core" "$opt" "$row" "$metric")
        [ -n "$ours" ] || { echo "FAIL $core:$opt $row $metric: not measured"; failed=$((failed + 1)); continue; }
        if [ "$peer" = - ]; then
            value=$ours
        else
            theirs=$(measured "$core" "$opt" "$peer" "$metric")
            [ -n "$theirs" ] || { echo "FAIL $core:$opt $peer $metric: not measured"; failed=$((failed + 1)); continue; }
            # instructions per byte: ours / peer's; bytes: ours - peer's.
            case $metric in
            ipb) value=$(awk -v a="$ours" -v b="$theirs" 'BEGIN { printf "%.3f", a / b }') ;;
            *) value=$((ours - theirs)) ;;
            esac
        fi
        [ "$mode" != below ] || limit=$(awk -v v="$value" 'BEGIN { printf "%.3f", v - (v < 0 ? -v : v) / 100 - 0.001 }')
        verdict=$(awk -v v="$value" -v l="$limit" 'BEGIN { print (v <= l) ? "ok  " : "FAIL" }')
        [ "$verdict" = "ok  " ] || failed=$((failed + 1))
        case $peer:$metric in
        -:*) what="$row $metric" ;;
        *:ipb) what="$row ipb / $peer ipb" ;;
        *) what="$row $metric - $peer $metric (B)" ;;
        esac
        echo "$verdict $core:$opt $what: $value (limit $limit; issue 25's target $target)"
    done < <(limits "$file")
    return $((failed > 255 ? 255 : failed))
}

case ${1:-} in
--check)
    thresholds=${2:-thresholds.txt}
    [ "$(limits "$thresholds" | wc -l)" -gt 0 ] || { echo "no limit in $thresholds" >&2; exit 1; }
    mkdir -p "$TARGET_DIR"
    : >"$MEASURED"
    # The configurations and rows the thresholds name (ours and peers), each
    # built once.
    for config in $(limits "$thresholds" | awk '{ print $1 ":" $2 }' | sort -u); do
        rows=()
        for row in "${ALL_ROWS[@]}"; do
            if limits "$thresholds" | awk -v c="${config%%:*}" -v o="${config#*:}" -v r="$row" \
                '$1 == c && $2 == o && ($3 == r || $5 == r) { found = 1 } END { exit !found }'; then
                rows+=("$row")
            fi
        done
        measure "${config%%:*}" "${config#*:}" "${rows[@]}"
    done
    echo
    rc=0
    check "$thresholds" || rc=$?
    [ "$rc" -eq 0 ] || { echo "benchmark gate: $rc limit(s) of $thresholds exceeded" >&2; exit 1; }
    echo "benchmark gate: every limit of $thresholds holds"
    ;;
--negative-control)
    thresholds=${2:-thresholds.txt}
    [ -s "$MEASURED" ] || { echo "no $MEASURED: run --check first" >&2; exit 1; }
    n=$(limits "$thresholds" | wc -l)
    rc=0
    check "$thresholds" below || rc=$?
    [ "$rc" -eq "$n" ] || { echo "negative control: $rc of $n lines failed with limits below the measured values; every one must" >&2; exit 1; }
    echo "negative control caught: each of the $n limits fails when set below its measured value"
    ;;
-*) sed -n '2,/^set -euo/p' "$SCRIPT" | sed '$d' >&2; exit 2 ;;
*)
    mkdir -p "$TARGET_DIR"
    : >"$MEASURED"
    [ $# -gt 0 ] || set -- m4:s m4:3 rv:s rv:3
    for config in "$@"; do
        measure "${config%%:*}" "${config#*:}" "${ALL_ROWS[@]}"
    done
    ;;
esac
