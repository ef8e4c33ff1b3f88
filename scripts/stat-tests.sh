#!/usr/bin/env bash
# Statistical batteries on every generator's output: rngtest (FIPS 140-2, Debian
# rng-tools5) and dieharder (Debian dieharder, -g 200 = raw bytes on stdin), fed by
# `cargo run --release --example stream`.
#
#   scripts/stat-tests.sh [--quick | --full | --self-test] [GEN...]
#
#   --quick      (default; CI) rngtest on 25000 blocks (50 MB) per generator and
#                8 dieharder tests that run in seconds; about 1-2 minutes for all 7
#                on 2 cores (STAT_TESTS_JOBS generators at a time; default: nproc).
#   --full       rngtest on 500000 blocks (1 GB) and `dieharder -a` per generator;
#                hours (see docs/STATISTICS.md).
#   --self-test  the negative control: the same judges on two bad sources (all
#                zero bytes; chacha8 output with bytes 0x80-0x8f mapped to
#                0x00-0x0f, i.e. 1/16 of the bytes lose their top bit). Succeeds
#                only if every judge rejects both.
#   --cache DIR  (CI) reuse a passing verdict on a seeded generator whose judged
#                bytes are the ones judged before: see "Cached verdicts" below.
#   GEN...       a subset of: turboshake shake chacha8 chacha12 chacha20 aes thread
#                (default: all, in that order).
#
# Seeds: every generator except `thread` is seeded with --seed 00..00 (its
# from_seed stream pinned in tests/data/golden_streams.txt), so runs are
# reproducible; re-runs (below) use --seed dede..de. `thread` is OS-seeded on each
# run. Raw tool output goes to $STAT_TESTS_LOG (default target/stat-tests/MODE/).
#
# Cached verdicts (--cache DIR; quick and full modes): a judge's verdict is a
# function of the bytes it read, the judges and this script, nothing else. A
# seeded generator that passed stores under DIR the most bytes N any of its
# readers took (re-runs included) and the SHA-256 of the first N bytes of its
# main and re-run streams, keyed by the SHA-256 of this script and of both
# judges' binaries. A later run regenerates those 2N bytes (about a second)
# and reuses the row only if both digests match: every judge would read the
# same bytes and give the same verdict. Anything else (a changed stream, script
# or tool; a failure; `thread`, OS-seeded; the self-test) is judged afresh.
#
# How results are judged (a good generator fails a CI run with probability < 1e-4):
# - rngtest: each 20000-bit block fails one of its five FIPS 140-2 tests with
#   probability FIPS_BLOCK_FAIL_RATE = 7.79e-4 even for ideal random bits
#   (computed by scripts/fips-expected-rate.py; rngtest on 2 GiB of /dev/urandom
#   gave 678 failures in 858993 blocks, 7.89e-4). The number of failed blocks is
#   then Binomial(blocks, rate); the run fails if it exceeds the count that a good
#   generator exceeds with probability < 1e-6.
# - dieharder: each result line is PASSED, WEAK (p < 0.005 or p > 0.995: 1 % of
#   lines for a good generator) or FAILED (p < 1e-6 or p > 1 - 1e-6). A WEAK or
#   FAILED line is re-run once with a fresh seed, in dieharder's own "resolve
#   ambiguity" mode (-Y 1: add p-samples until the result is PASSED or FAILED;
#   with -k 2, the exact KS statistic, as `dieharder -h` asks for -Y 1); the
#   generator fails only if the re-run ends FAILED.
# Exit status: 0 all judged good; 1 a real failure; 2 usage; 3 a tool misbehaved.
set -euo pipefail
SELF=$(realpath "$0") # the cache's key hashes this file, wherever it was called from
cd "$(dirname "$0")/.."

ALL_GENS=(turboshake shake chacha8 chacha12 chacha20 aes thread)
FIPS_BLOCK_FAIL_RATE=7.79e-4
ALPHA=1e-6
QUICK_DIEHARDER=(0 1 8 100 202 203 204 209)
SELF_TEST_DIEHARDER=(100 205)

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
die() { echo "stat-tests: $*" >&2; exit 3; }

mode=quick
gens=()
cache="" cache_next=""
for arg in "$@"; do
    if [ -n "$cache_next" ]; then cache=$arg cache_next=""; continue; fi
    case $arg in
        --quick) mode=quick ;;
        --full) mode=full ;;
        --self-test) mode=self-test ;;
        --cache) cache_next=1 ;;
        -h | --help) usage; exit 0 ;;
        -*) echo "stat-tests: unknown option $arg" >&2; exit 2 ;;
        *)
            [[ " ${ALL_GENS[*]} " == *" $arg "* ]] ||
                { echo "stat-tests: unknown generator $arg (one of ${ALL_GENS[*]})" >&2; exit 2; }
            gens+=("$arg")
            ;;
    esac
done
[ -z "$cache_next" ] || { echo "stat-tests: --cache needs a directory" >&2; exit 2; }
[ ${#gens[@]} -gt 0 ] || gens=("${ALL_GENS[@]}")
case $mode in
    quick) rng_blocks=25000 ;;
    full) rng_blocks=500000 ;;
    self-test) rng_blocks=2000; gens=(zeros biased) ;;
esac

# --- tools -------------------------------------------------------------------------
need_apt=()
command -v rngtest >/dev/null || need_apt+=(rng-tools5)
command -v dieharder >/dev/null || need_apt+=(dieharder)
if [ ${#need_apt[@]} -gt 0 ]; then
    echo "stat-tests: apt-get install ${need_apt[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi
command -v rngtest >/dev/null && command -v dieharder >/dev/null ||
    die "rngtest / dieharder still missing after apt-get"

cargo build --release --example stream -q
STREAM="${CARGO_TARGET_DIR:-target}/release/examples/stream"
[ -x "$STREAM" ] || die "no $STREAM after cargo build"

LOG=${STAT_TESTS_LOG:-target/stat-tests/$mode}
mkdir -p "$LOG"

# --- sources -------------------------------------------------------------------------
# hex BYTE COUNT: COUNT copies of the hex byte BYTE.
hex() { local out="" i; for ((i = 0; i < $2; i++)); do out+=$1; done; printf '%s' "$out"; }

# source_stream GEN VARIANT: writes GEN's stream to stdout until the reader closes
# it. VARIANT is `main` (seed 00..00) or `rerun` (seed de..de). The stream's
# `--report` line (bytes the reader accepted) is appended to $LOG/GEN.bytes.txt.
source_stream() {
    local gen=$1 byte=00 report=${BYTES_REPORT:-$LOG/$1.bytes.txt}
    [ "$2" = rerun ] && byte=de
    case $gen in
        thread) "$STREAM" thread --report 2>>"$report" ;;
        turboshake | shake) "$STREAM" "$gen" --seed "$(hex $byte 136)" --report 2>>"$report" ;;
        zeros) cat /dev/zero ;;
        biased) "$STREAM" chacha8 --seed "$(hex $byte 32)" | tr '\200-\217' '\000-\017' ;;
        *) "$STREAM" "$gen" --seed "$(hex $byte 32)" --report 2>>"$report" ;;
    esac
}

# bytes_used GEN: total bytes written to GEN's readers so far (rngtest, dieharder
# and re-runs; each reader may leave up to a pipe buffer, 64 KiB, unread).
bytes_used() {
    awk '/^stream: wrote/ { n += $3 } END { printf "%.0f", n }' "$LOG/$1.bytes.txt" 2>/dev/null || echo 0
}

# seed_note GEN: how GEN is seeded, for the logs.
seed_note() {
    case $1 in
        thread) echo "OS-seeded (ratchet_rng::fill)" ;;
        zeros) echo "/dev/zero" ;;
        biased) echo "chacha8 --seed 00..00 | tr '\\200-\\217' '\\000-\\017'" ;;
        *) echo "--seed 00..00 (re-runs: --seed de..de)" ;;
    esac
}

# --- rngtest ---------------------------------------------------------------------------
# binomial_limit N P ALPHA: the smallest k with P(Binomial(N, P) > k) < ALPHA.
binomial_limit() {
    awk -v n="$1" -v p="$2" -v alpha="$3" 'BEGIN {
        q = 1 - p; pmf = exp(n * log(q)); cdf = pmf; k = 0
        while (1 - cdf >= alpha && k < n) { pmf *= (n - k) / (k + 1) * p / q; k++; cdf += pmf }
        print k
    }'
}

# run_rngtest GEN: sets rng_summary (table cells) and returns 1 on a real failure.
run_rngtest() {
    local gen=$1 out="$LOG/$1.rngtest.txt" ok fail limit expected
    { source_stream "$gen" main || true; } | rngtest -c "$rng_blocks" >"$out" 2>&1 || true
    ok=$(sed -n 's/^rngtest: FIPS 140-2 successes: //p' "$out")
    fail=$(sed -n 's/^rngtest: FIPS 140-2 failures: //p' "$out")
    [ -n "$ok" ] && [ -n "$fail" ] || die "rngtest printed no summary for $gen (see $out)"
    [ $((ok + fail)) -eq "$rng_blocks" ] ||
        die "rngtest judged $((ok + fail)) blocks of $gen, not $rng_blocks (see $out)"
    limit=$(binomial_limit "$rng_blocks" "$FIPS_BLOCK_FAIL_RATE" "$ALPHA")
    expected=$(awk -v n="$rng_blocks" -v p="$FIPS_BLOCK_FAIL_RATE" 'BEGIN { printf "%.1f", n * p }')
    rng_summary="$rng_blocks $fail $expected $limit"
    [ "$fail" -le "$limit" ]
}

# --- dieharder --------------------------------------------------------------------------
# dieharder's short test names and their -d numbers (dieharder 3.31.1, `dieharder -l`).
declare -A DH_NUMBER=(
    [diehard_birthdays]=0 [diehard_operm5]=1 [diehard_rank_32x32]=2 [diehard_rank_6x8]=3
    [diehard_bitstream]=4 [diehard_opso]=5 [diehard_oqso]=6 [diehard_dna]=7
    [diehard_count_1s_str]=8 [diehard_count_1s_byt]=9 [diehard_parking_lot]=10
    [diehard_2dsphere]=11 [diehard_3dsphere]=12 [diehard_squeeze]=13 [diehard_sums]=14
    [diehard_runs]=15 [diehard_craps]=16 [marsaglia_tsang_gcd]=17 [sts_monobit]=100
    [sts_runs]=101 [sts_serial]=102 [rgb_bitdist]=200 [rgb_minimum_distance]=201
    [rgb_permutations]=202 [rgb_lagged_sum]=203 [rgb_kstest_test]=204
    [dab_bytedistrib]=205 [dab_dct]=206 [dab_filltree]=207 [dab_filltree2]=208
    [dab_monobit2]=209
)

# Result lines: "name|ntup|tsamples|psamples|p-value|ASSESSMENT", blanks removed.
results() { grep -E '[|] *(PASSED|WEAK|FAILED) *$' "$1" | tr -d ' ' || true; }

# run_dieharder GEN: sets dh_summary (table cells) and returns 1 on a real failure.
run_dieharder() {
    local gen=$1 out="$LOG/$1.dieharder.txt" rerun_log="$LOG/$1.dieharder-reruns.txt"
    : >"$out"
    : >"$rerun_log"
    if [ "$mode" = full ]; then
        { source_stream "$gen" main || true; } | dieharder -a -g 200 >>"$out" 2>&1 || true
    else
        local tests=("${QUICK_DIEHARDER[@]}") d
        [ "$mode" = self-test ] && tests=("${SELF_TEST_DIEHARDER[@]}")
        for d in "${tests[@]}"; do
            { source_stream "$gen" main || true; } | dieharder -d "$d" -g 200 >>"$out" 2>&1 || true
        done
    fi
    local lines passed weak failed resolved=0 confirmed=0 line name ntup verdict
    lines=$(results "$out")
    [ -n "$lines" ] || die "dieharder printed no results for $gen (see $out)"
    passed=$(grep -c '|PASSED$' <<<"$lines" || true)
    weak=$(grep -c '|WEAK$' <<<"$lines" || true)
    failed=$(grep -c '|FAILED$' <<<"$lines" || true)
    while IFS='|' read -r -u 3 name ntup _ _ _ verdict; do
        [ "$verdict" = PASSED ] && continue
        local d=${DH_NUMBER[$name]:-}
        [ -n "$d" ] || die "unknown dieharder test name $name"
        echo "### re-run of $name ntup $ntup ($verdict): dieharder -d $d -n $ntup -k 2 -Y 1, fresh seed" >>"$rerun_log"
        local tmp="$LOG/$gen.rerun.tmp" again
        { source_stream "$gen" rerun || true; } | dieharder -d "$d" -n "$ntup" -k 2 -Y 1 -g 200 >"$tmp" 2>&1 || true
        cat "$tmp" >>"$rerun_log"
        again=$(results "$tmp" | awk -F'|' -v n="$name" -v t="$ntup" '$1 == n && $2 == t { print $6 }')
        rm -f "$tmp"
        [ -n "$again" ] || die "re-run of $name ntup $ntup printed no result (see $rerun_log)"
        if grep -qv '^PASSED$' <<<"$again"; then
            confirmed=$((confirmed + 1))
        else
            resolved=$((resolved + 1))
        fi
    done 3<<<"$lines"
    dh_summary="$passed $weak $failed $resolved $confirmed"
    [ "$confirmed" -eq 0 ]
}

# --- run ------------------------------------------------------------------------------------
echo "stat-tests: mode $mode, generators: ${gens[*]}; logs in $LOG"
{
    echo "mode $mode, $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -m)"
    echo "$(dieharder -l 2>&1 | sed -n 's/^# *\(dieharder version [0-9.]*\).*/\1/p'), rngtest $(rngtest --version 2>&1 | head -1 | awk '{print $2}')"
    for gen in "${gens[@]}"; do echo "$gen: $(seed_note "$gen")"; done
} >"$LOG/README.txt"

# --- cached verdicts (--cache) ----------------------------------------------------------
# The entries' key: this script and both judges' binaries, hashed once.
CACHE_KEY=$(cat "$SELF" "$(command -v dieharder)" "$(command -v rngtest)" | sha256sum | cut -c1-16)
# cache_entry GEN: GEN's entry in the cache directory; nothing if GEN is never cached.
cache_entry() {
    [ -n "$cache" ] && [ "$mode" != self-test ] && [ "$1" != thread ] || return 0
    printf '%s/%s-%s-%s' "$cache" "$mode" "$1" "$CACHE_KEY"
}
# digest GEN VARIANT N: the SHA-256 of the first N bytes of GEN's VARIANT stream.
digest() {
    { BYTES_REPORT=/dev/null source_stream "$1" "$2" || true; } | head -c "$3" | sha256sum | cut -c1-64
}
# reuse GEN: if GEN's entry matches its streams, writes and prints its row, returns 0.
reuse() {
    local gen=$1 entry n main rerun row
    entry=$(cache_entry "$gen")
    [ -n "$entry" ] && [ -f "$entry" ] || return 1
    { read -r n main rerun && IFS= read -r row; } <"$entry" || return 1
    [ "$(digest "$gen" main "$n")" = "$main" ] && [ "$(digest "$gen" rerun "$n")" = "$rerun" ] || return 1
    printf '%s  cached: these %s bytes passed before\n' "$row" "$n" | tee "$LOG/$gen.row"
}
# remember GEN: stores GEN's passing row with the digests of what its judges read.
remember() {
    local gen=$1 entry n
    entry=$(cache_entry "$gen")
    [ -n "$entry" ] || return 0
    n=$(sed -n 's/^stream: wrote \([0-9]*\) bytes$/\1/p' "$LOG/$gen.bytes.txt" | sort -n | tail -1)
    [ -n "$n" ] || die "no byte count for $gen in $LOG/$gen.bytes.txt"
    mkdir -p "$cache"
    printf '%s %s %s\n%s\n' "$n" "$(digest "$gen" main "$n")" "$(digest "$gen" rerun "$n")" "$(cat "$LOG/$gen.row")" >"$entry.tmp"
    mv "$entry.tmp" "$entry"
}

# judge GEN: both judges on GEN; writes its table row to $LOG/GEN.row and returns 1
# if a judge failed it (a `die` inside returns 3).
judge() {
    local gen=$1 start=$SECONDS rng_ok=pass dh_ok=pass
    rm -f "$LOG/$gen.bytes.txt" "$LOG/$gen.row"
    reuse "$gen" && return 0
    run_rngtest "$gen" || rng_ok=FAIL
    run_dieharder "$gen" || dh_ok=FAIL
    read -r blocks fail expected limit <<<"$rng_summary"
    read -r passed weak failed resolved confirmed <<<"$dh_summary"
    mib=$(awk -v b="$(bytes_used "$gen")" 'BEGIN { printf "%.0f", b / 1048576 }')
    printf '%-10s | %7s %6s %8s %6s  %-4s | %4s %4s %4s %8s %9s  %-4s | %5ss %7s\n' \
        "$gen" "$blocks" "$fail" "$expected" "$limit" "$rng_ok" \
        "$passed" "$weak" "$failed" "$resolved" "$confirmed" "$dh_ok" $((SECONDS - start)) "$mib" \
        >"$LOG/$gen.row"
    cat "$LOG/$gen.row"
    [ "$rng_ok$dh_ok" = passpass ] || return 1
    remember "$gen"
}

# The generators are judged $JOBS at a time (each judge is one process on one
# core; default: the cores there are), rows in the order of the generators.
JOBS=${STAT_TESTS_JOBS:-$(nproc)}
table=()
bad=0
running=()
# collect: waits for the oldest running judge; a judge's failure marks the run bad.
collect() {
    local job=${running[0]} rc=0
    running=("${running[@]:1}")
    wait "${job%%:*}" || rc=$?
    [ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] || die "judging ${job#*:} failed (exit $rc)"
    [ "$rc" -eq 0 ] || bad=1
}
for gen in "${gens[@]}"; do
    judge "$gen" &
    running+=("$!:$gen")
    while [ "${#running[@]}" -ge "$JOBS" ]; do collect; done
done
while [ "${#running[@]}" -gt 0 ]; do collect; done
for gen in "${gens[@]}"; do
    table+=("$(cat "$LOG/$gen.row")")
done

header=$(printf '%-10s | %7s %6s %8s %6s  %-4s | %4s %4s %4s %8s %9s  %-4s | %6s %7s' \
    generator blocks failed expected limit "" passed weak FAILED resolved confirmed "" time MiB)
{
    echo
    echo "                         rngtest (FIPS 140-2)          |              dieharder"
    echo "$header"
    printf '%s\n' "${table[@]}"
    echo "(limit: most failed blocks a good generator exceeds with p < $ALPHA; resolved /"
    echo " confirmed: WEAK or FAILED lines whose -Y 1 re-run with a fresh seed PASSED / FAILED;"
    echo " MiB: generator output read by rngtest, dieharder and re-runs, from stream --report)"
} | tee "$LOG/summary.txt"

if [ "$mode" = self-test ]; then
    # Every judge must have rejected every bad source.
    if grep -E '^(zeros|biased) ' "$LOG/summary.txt" | grep -q ' pass '; then
        echo "stat-tests: SELF-TEST FAILED: a judge accepted a bad source" >&2
        exit 1
    fi
    # And the verdict cache takes a row only for the bytes it was judged on: an
    # entry whose main-stream digest is one hex digit off must be refused, the
    # same entry with the right digest taken.
    cache=$(mktemp -d) mode=quick
    main=$(digest chacha8 main 4096) rerun=$(digest chacha8 rerun 4096)
    printf '4096 %s %s\nchacha8 row\n' "$(tr 0-9a-f 1-9a-f0 <<<"$main")" "$rerun" >"$(cache_entry chacha8)"
    if reuse chacha8 >/dev/null; then
        echo "stat-tests: SELF-TEST FAILED: the verdict cache took a row for other bytes" >&2
        exit 1
    fi
    printf '4096 %s %s\nchacha8 row\n' "$main" "$rerun" >"$(cache_entry chacha8)"
    reuse chacha8 >/dev/null || { echo "stat-tests: SELF-TEST FAILED: the verdict cache refused its own bytes" >&2; exit 1; }
    rm -r "$cache"
    echo "stat-tests: self-test passed: both judges reject both bad sources; the cache refuses other bytes"
    exit 0
fi
if [ "$bad" -ne 0 ]; then
    echo "stat-tests: FAILED: see the table and $LOG" >&2
    exit 1
fi
echo "stat-tests: all generators passed"
