#!/usr/bin/env bash
# ChaCha8 save/restore against Go's math/rand/v2, live (issue 13). Run from the
# repository root (`.ci/run` does); needs `go` and `cargo`; fails on any mismatch.
#   1. Go writes today exactly the frozen vectors of tests/data/go_chacha8_states.txt
#      (which `cargo test --test contracts -- save_restore::` checks without Go).
#   2. For random seeds and positions: ChaChaKeyErasureRng::save() is Go's
#      MarshalBinary byte for byte; a Go-saved state continues in Rust as in Go;
#      a Rust-saved state continues in Go as in Rust (256 bytes each).
#   3. Random corruptions of saved states: Go and Rust accept the same inputs and
#      continue them identically, and refuse the same (Go's panic on a readbuf
#      longer than 8 bytes counts as a refusal).
set -euo pipefail
command -v go >/dev/null || { echo "interop: go is not on PATH (required)" >&2; exit 1; }
ROUNDS=${CHACHA8_INTEROP_ROUNDS:-40}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
GO_BIN=$WORK/chacha8_state_go
(cd tests/go/chacha8_state && go build -o "$GO_BIN" .)
cargo build -q --example chacha8_state
RUST_BIN=target/debug/examples/chacha8_state
go version

# 1. The frozen vectors.
grep -v '^#' tests/data/go_chacha8_states.txt >"$WORK/frozen"
"$GO_BIN" vectors >"$WORK/live"
diff -u "$WORK/frozen" "$WORK/live" || { echo "interop: Go's vectors changed" >&2; exit 1; }
echo "interop: Go writes the frozen vectors ($(wc -l <"$WORK/live") lines)"

rand_hex() { od -An -v -tx1 -N"$1" /dev/urandom | tr -d ' \n'; }
same() { # same WHAT A B
    [ "$2" = "$3" ] || { printf 'interop: %s differs\n  go:   %s\n  rust: %s\n' "$1" "$2" "$3" >&2; exit 1; }
}
checked=0
for i in $(seq "$ROUNDS"); do
    seed=$(rand_hex 32)
    # Positions: whole words (Uint64 = 8 bytes of the stream when no Read is
    # pending), odd reads, across key periods.
    case $((i % 4)) in
        0) ops="u*$((RANDOM % 400))" ;;
        1) ops="r$((RANDOM % 3000))" ;;
        2) ops="r$((RANDOM % 13)),r$((RANDOM % 2000))" ;;
        *) ops="u*$((RANDOM % 130)),r$((RANDOM % 1000)),r$((RANDOM % 9))" ;;
    esac
    go_saved=$("$GO_BIN" save "$seed" "$ops")
    rust_saved=$("$RUST_BIN" save "$seed" "$ops")
    same "save($seed, $ops)" "$go_saved" "$rust_saved"
    state=${go_saved%% *}
    # Go-saved, continued in both; Rust-saved, continued in both.
    go_from_go=$(echo "$state" | "$GO_BIN" continue 256)
    rust_from_go=$(echo "$state" | "$RUST_BIN" continue 256)
    same "continue(go state $state)" "$go_from_go" "$rust_from_go"
    state=${rust_saved%% *}
    go_from_rust=$(echo "$state" | "$GO_BIN" continue 256)
    rust_from_rust=$(echo "$state" | "$RUST_BIN" continue 256)
    same "continue(rust state $state)" "$go_from_rust" "$rust_from_rust"
    # 3. Corruptions: a random hex digit replaced, a byte cut or added, a
    # readbuf of a random length in front.
    for k in 1 2 3 4; do
        case $k in
            1) pos=$((RANDOM % ${#state}))
               bad="${state:0:pos}$(rand_hex 1 | cut -c1)${state:pos+1}" ;;
            2) bad=${state:0:$(((RANDOM % (${#state} / 2)) * 2))} ;;
            3) bad="${state}$(rand_hex 1)" ;;
            *) n=$((RANDOM % 12))
               bad="726561646275663a$(printf '%02x' "$n")$(rand_hex "$n")${state}" ;;
        esac
        go_v=$(echo "$bad" | "$GO_BIN" continue 64 | sed 's/^panic$/error/')
        rust_v=$(echo "$bad" | "$RUST_BIN" continue 64)
        same "verdict on $bad" "$go_v" "$rust_v"
    done
    checked=$((checked + 1))
done
echo "interop: $checked random states: Rust saves Go's bytes, each side continues the other's state, 4 corruptions each judged alike"
