//! Throughput of the generators against baselines, in the same criterion groups:
//! `rand`'s `StdRng` and RustCrypto's SHAKE256 / TurboSHAKE256 XOF readers.
//!
//! `cargo bench` (default build flags: no `target-cpu=native`); HTML reports with
//! plots land in `target/criterion/report/index.html`. Group names are the
//! operation (`fill_bytes/4096`, `next_u64`, `seeding`), functions the generator.

use std::hint::black_box;

use aes::cipher::{KeyIvInit, StreamCipher};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use rand::rngs::StdRng;
use rand_core::{Rng, SeedableRng};
use ratchet_rng::{AesCtrPoolRng, ShakeRng, TurboShakeRng};
use shake::{ExtendableOutput, Update, XofReader};

/// Request sizes of the `fill_bytes` groups: small, page, bulk.
const FILL_SIZES: [usize; 3] = [32, 4096, 512 * 1024];

fn turboshake_reader() -> turboshake::TurboShake256Reader {
    let mut h = turboshake::TurboShake256::default();
    h.update(&[7u8; 136]);
    h.finalize_xof()
}

fn shake_reader() -> shake::Shake256Reader {
    let mut h = shake::Shake256::default();
    h.update(&[7u8; 136]);
    h.finalize_xof()
}

fn fill_bytes(c: &mut Criterion) {
    for size in FILL_SIZES {
        let mut group = c.benchmark_group(format!("fill_bytes/{size}"));
        group.throughput(Throughput::Bytes(size as u64));
        let mut buf = vec![0u8; size];

        let mut rng = TurboShakeRng::seed_from_u64(1);
        group.bench_function(BenchmarkId::from_parameter("TurboShakeRng"), |b| {
            b.iter(|| rng.fill_bytes(black_box(&mut buf)))
        });
        let mut rng = ShakeRng::seed_from_u64(1);
        group.bench_function(BenchmarkId::from_parameter("ShakeRng"), |b| {
            b.iter(|| rng.fill_bytes(black_box(&mut buf)))
        });
        let mut rng = StdRng::seed_from_u64(1);
        group.bench_function(BenchmarkId::from_parameter("rand StdRng"), |b| {
            b.iter(|| rng.fill_bytes(black_box(&mut buf)))
        });
        let mut rng = AesCtrPoolRng::seed_from_u64(1);
        group.bench_function(BenchmarkId::from_parameter("AesCtrPoolRng"), |b| {
            b.iter(|| rng.fill_bytes(black_box(&mut buf)))
        });
        // The AES baseline: the AES-256-CTR keystream XORed into a buffer that
        // starts zeroed (XOR costs the same whatever the buffer holds later).
        let mut stream = ctr::Ctr128BE::<aes::Aes256>::new(&[7u8; 32].into(), &[0u8; 16].into());
        let mut zeros = vec![0u8; size];
        group.bench_function(
            BenchmarkId::from_parameter("RustCrypto Ctr128BE<Aes256>"),
            |b| b.iter(|| stream.apply_keystream(black_box(&mut zeros))),
        );
        let mut reader = turboshake_reader();
        group.bench_function(
            BenchmarkId::from_parameter("RustCrypto TurboShake256 reader"),
            |b| b.iter(|| reader.read(black_box(&mut buf))),
        );
        let mut reader = shake_reader();
        group.bench_function(
            BenchmarkId::from_parameter("RustCrypto Shake256 reader"),
            |b| b.iter(|| reader.read(black_box(&mut buf))),
        );
        group.finish();
    }
}

fn next_u64(c: &mut Criterion) {
    let mut group = c.benchmark_group("next_u64");
    group.throughput(Throughput::Bytes(8));
    let mut rng = TurboShakeRng::seed_from_u64(1);
    group.bench_function("TurboShakeRng", |b| b.iter(|| black_box(rng.next_u64())));
    let mut rng = ShakeRng::seed_from_u64(1);
    group.bench_function("ShakeRng", |b| b.iter(|| black_box(rng.next_u64())));
    let mut rng = StdRng::seed_from_u64(1);
    group.bench_function("rand StdRng", |b| b.iter(|| black_box(rng.next_u64())));
    let mut rng = AesCtrPoolRng::seed_from_u64(1);
    group.bench_function("AesCtrPoolRng", |b| b.iter(|| black_box(rng.next_u64())));
    let mut reader = turboshake_reader();
    group.bench_function("RustCrypto TurboShake256 reader", |b| {
        b.iter(|| {
            let mut v = [0u8; 8];
            reader.read(&mut v);
            black_box(u64::from_le_bytes(v))
        })
    });
    group.finish();
}

/// Construction from a seed plus the first 8 bytes (the first refill), which is
/// what "seeding" costs a user.
fn seeding(c: &mut Criterion) {
    let mut group = c.benchmark_group("seeding");
    group.bench_function("TurboShakeRng", |b| {
        b.iter(|| TurboShakeRng::from_seed(black_box([7u8; 136]).into()).next_u64())
    });
    group.bench_function("ShakeRng", |b| {
        b.iter(|| ShakeRng::from_seed(black_box([7u8; 136]).into()).next_u64())
    });
    group.bench_function("rand StdRng", |b| {
        b.iter(|| StdRng::from_seed(black_box([7u8; 32])).next_u64())
    });
    group.bench_function("RustCrypto TurboShake256 reader", |b| {
        b.iter(|| {
            let mut h = turboshake::TurboShake256::default();
            h.update(black_box(&[7u8; 136]));
            let mut v = [0u8; 8];
            h.finalize_xof().read(&mut v);
            black_box(v)
        })
    });
    group.finish();
}

criterion_group!(benches, fill_bytes, next_u64, seeding);
criterion_main!(benches);
