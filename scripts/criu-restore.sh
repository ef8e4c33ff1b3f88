#!/bin/bash
# Checkpoints a process that uses rng() with CRIU and restores it, checking that
# restored copies never write the same values (issue 26, part 6):
#   1. the process is dumped (image A);
#   2. A is restored, runs, and is dumped again (image B): a restored process
#      must re-arm what it watches, or a second restore would go unseen;
#   3. A is restored a second time: its values must differ from step 2's;
#   4. B is restored twice: the two must differ from each other.
# Needs root and CRIU 4.2 or later whose `criu check` passes (Debian 12's 3.17
# fails it on Linux 6.18, "vdso: Unexpected rt vDSO area bounds", and knows no
# droppable mappings; CRIU 4.2 built from source passes).
#
#   cargo build --example criu_restore
#   CRIU=/path/to/criu scripts/criu-restore.sh target/debug/examples/criu_restore
#
# Each restored copy runs until it has written at least MIN_VALUES values (30 s
# at most). Exit status 0: every pair differs; 1: a pair wrote equal values (a
# restore was not seen); 2: CRIU or the setup failed.
set -u
demo=$(realpath "${1:?usage: criu-restore.sh PATH/TO/criu_restore}")
criu=${CRIU:-criu}
MIN_VALUES=10
work=$(mktemp -d /tmp/criu-restore.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 2
"$criu" check >check.log 2>&1 || { cat check.log; echo "criu check fails here"; exit 2; }

# wait_values N: until out/ holds N values more than it did (30 s at most).
wait_values() {
    local want=$(($(ls out | wc -l) + $1)) i
    for i in $(seq 300); do
        [ "$(ls out | wc -l)" -ge "$want" ] && return 0
        sleep 0.1
    done
    echo "the process wrote fewer than $1 values in 30 s"
    exit 2
}
# gone: waits until the process with pid $pid has exited (5 s at most).
gone() {
    local i
    for i in $(seq 50); do [ -e "/proc/$pid" ] || return 0; sleep 0.1; done
}
# dump IMAGES: checkpoints $pid into IMAGES (CRIU ends the process).
dump() {
    mkdir "$1"
    "$criu" dump -t "$pid" -D "$1" -o dump.log || { grep Error "$1/dump.log"; exit 2; }
    gone
}
# restore IMAGES: restores the process from IMAGES, writing into a new out/.
restore() {
    mkdir out
    "$criu" restore -D "$1" -o restore.log --restore-detached ||
        { grep Error "$1/restore.log"; exit 2; }
    wait_values "$MIN_VALUES"
}
# differ WHAT DIR1 DIR2: the values both wrote at the same positions differ.
failed=0
differ() {
    local f same=0 total=0
    for f in $(ls "$2"); do
        [ -f "$3/$f" ] || continue
        total=$((total + 1))
        cmp -s "$2/$f" "$3/$f" && same=$((same + 1))
    done
    echo "$1: $total values at the same positions; $same equal"
    for f in $(ls "$2" | head -2); do echo "  $f: $(cat "$2/$f") $(cat "$3/$f" 2>/dev/null)"; done
    [ "$total" -gt 0 ] || exit 2
    [ "$same" -eq 0 ] || failed=1
}

mkdir out
setsid "$demo" "$work/out" </dev/null >/dev/null 2>demo.log &
pid=$!
disown "$pid" # reaped by the shell unreported when CRIU's dump ends it
wait_values "$MIN_VALUES"
dump image-a
echo "dumped after $(ls out | wc -l) values ($(cat demo.log))"
mv out before
restore image-a
dump image-b
mv out a1
restore image-a
kill -9 "$pid" 2>/dev/null
gone
mv out a2
differ "two restores of one dump" a1 a2
for r in 1 2; do
    restore image-b
    kill -9 "$pid" 2>/dev/null
    gone
    mv out "b$r"
done
differ "two restores of a dump of a restored process" b1 b2
exit "$failed"
