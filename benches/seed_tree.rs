//! What `SeedTree` costs a parallel job (docs/PARALLEL.md): deriving one task's
//! node and seeding its generator, against the draws of one task of the Monte
//! Carlo job that `examples/parallel.rs` and `examples/mpi` run
//! (`examples/common/pi.rs`, 50 000 points, the CI job's size).
//!
//! `cargo bench -p benches --bench seed_tree`

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use rand_core::Rng;
use ratchet_rng::{AesCtrPoolRng, ChaChaKeyErasureRng, SeedTree, TurboShakeRng};

#[allow(dead_code, reason = "the bench uses the job's task only")]
#[path = "../examples/common/pi.rs"]
mod pi;

fn seed_tree(c: &mut Criterion) {
    let root = SeedTree::new(b"ratchet-rng bench");
    let mut group = c.benchmark_group("seed_tree");
    group.bench_function("child", |b| b.iter(|| root.child(black_box(7))));
    group.bench_function("child + ChaChaKeyErasureRng + first u64", |b| {
        b.iter(|| {
            root.child(black_box(7))
                .rng::<ChaChaKeyErasureRng>()
                .next_u64()
        })
    });
    group.bench_function("child + AesCtrPoolRng + first u64", |b| {
        b.iter(|| root.child(black_box(7)).rng::<AesCtrPoolRng>().next_u64())
    });
    group.bench_function("child + TurboShakeRng + first u64", |b| {
        b.iter(|| root.child(black_box(7)).rng::<TurboShakeRng>().next_u64())
    });
    for (name, generator) in [
        ("ChaChaKeyErasureRng", pi::Gen::ChaCha8),
        ("AesCtrPoolRng", pi::Gen::Aes),
        ("TurboShakeRng", pi::Gen::TurboShake),
    ] {
        let job = pi::Job {
            key: b"ratchet-rng bench".to_vec(),
            tasks: 1,
            samples: 50_000,
            generator,
        };
        group.bench_function(format!("task of 50000 points, {name}"), |b| {
            b.iter(|| job.hits(&root.child(black_box(7))))
        });
    }
    group.finish();
}

criterion_group!(benches, seed_tree);
criterion_main!(benches);
