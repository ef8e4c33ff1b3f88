#!/bin/bash
# Checkpoints a process that uses rng() with CRIU, restores the dump twice, and
# checks that the two restored processes write different values (issue 26,
# part 6). Needs root and a CRIU whose `criu check` passes (Debian 12's 3.17
# fails it on Linux 6.18: "vdso: Unexpected rt vDSO area bounds"; CRIU 4.2 built
# from source passes).
#
#   cargo build --example criu_restore
#   CRIU=/path/to/criu scripts/criu-restore.sh target/debug/examples/criu_restore
#
# Exit status 0: the restores differ; 1: they wrote equal values (the restore
# was not seen); 2: CRIU or the setup failed.
set -u
demo=$(realpath "${1:?usage: criu-restore.sh PATH/TO/criu_restore}")
criu=${CRIU:-criu}
work=$(mktemp -d /tmp/criu-restore.XXXXXX)
cd "$work" || exit 2
mkdir img out
"$criu" check >check.log 2>&1 || { cat check.log; echo "criu check fails here"; exit 2; }
setsid "$demo" "$work/out" </dev/null >/dev/null 2>demo.log &
pid=$!
sleep 1
"$criu" dump -t "$pid" -D img -o dump.log || { grep Error img/dump.log; exit 2; }
wait "$pid" 2>/dev/null
echo "dumped after $(ls out | wc -l) values ($(cat demo.log))"
mv out before
for r in 1 2; do
    mkdir out
    "$criu" restore -D img -o "restore$r.log" --restore-detached ||
        { grep Error "img/restore$r.log"; exit 2; }
    sleep 0.5
    kill -9 "$pid" 2>/dev/null
    for _ in $(seq 50); do [ -e "/proc/$pid" ] || break; sleep 0.1; done
    mv out "after$r"
done
same=0 total=0
for f in $(ls after1); do
    [ -f "after2/$f" ] || continue
    total=$((total + 1))
    cmp -s "after1/$f" "after2/$f" && same=$((same + 1))
done
echo "two restores of one dump wrote $total values at the same positions; $same equal"
for f in $(ls after1 | head -3); do echo "  $f: $(cat "after1/$f") $(cat "after2/$f" 2>/dev/null)"; done
[ "$total" -gt 0 ] || exit 2
[ "$same" -eq 0 ]
