//! Throughput of the generators against baselines, in the same criterion groups:
//! `rand`'s `StdRng` (ChaCha12), RustCrypto's `ChaCha8Rng` / `ChaCha12Rng`, its
//! SHAKE256 / TurboSHAKE256 XOF readers, its AES-256-CTR (`aes` + `ctr`), and the
//! operating system's generator (`getrandom::fill`).
//!
//! `cargo bench -p benches --bench generators` (default build flags: no
//! `target-cpu=native`); HTML reports with plots land in
//! `target/criterion/report/index.html`. Group names are the operation
//! (`fill_bytes/4096`, `next_u64`, `seeding`), functions the generator.

use std::hint::black_box;

use aes::cipher::{KeyIvInit, StreamCipher};
use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, Throughput, criterion_group, criterion_main};
use rand::rngs::StdRng;
use rand_core::{Rng, SeedableRng};
use ratchet_rng::{
    AesCtrPoolRng, ChaCha12KeyErasureRng, ChaCha20KeyErasureRng, ChaChaKeyErasureRng, ShakeRng,
    TurboShakeRng,
};
use shake::{ExtendableOutput, Update, XofReader};

/// Request sizes of the `fill_bytes` groups: small, page, bulk.
const FILL_SIZES: [usize; 3] = [32, 4096, 512 * 1024];

type Aes256Ctr = ctr::Ctr128BE<aes::Aes256>;

/// Something that writes pseudorandom bytes: a generator or a baseline keystream.
trait Source {
    fn fill(&mut self, buf: &mut [u8]);
    fn u64(&mut self) -> u64 {
        let mut v = [0u8; 8];
        self.fill(&mut v);
        u64::from_le_bytes(v)
    }
}

/// A `rand_core` generator.
struct Gen<R>(R);

impl<R: Rng> Source for Gen<R> {
    fn fill(&mut self, buf: &mut [u8]) {
        self.0.fill_bytes(buf);
    }
    fn u64(&mut self) -> u64 {
        self.0.next_u64()
    }
}

impl Source for turboshake::TurboShake256Reader {
    fn fill(&mut self, buf: &mut [u8]) {
        self.read(buf);
    }
}

impl Source for shake::Shake256Reader {
    fn fill(&mut self, buf: &mut [u8]) {
        self.read(buf);
    }
}

/// AES-256-CTR keystream: `apply_keystream` on a zeroed buffer, as a user of the
/// `aes` crate would get random bytes from it.
impl Source for Aes256Ctr {
    fn fill(&mut self, buf: &mut [u8]) {
        buf.fill(0);
        self.apply_keystream(buf);
    }
}

/// The operating system's generator through `getrandom::fill` (one system call
/// per request on Linux): the baseline that `from_os_rng` seeds from, not a
/// user-space generator.
struct OsFill;

impl Source for OsFill {
    fn fill(&mut self, buf: &mut [u8]) {
        getrandom::fill(buf).expect("the OS generator works");
    }
}

/// What a group measures.
enum Op<'a> {
    /// `fill_bytes` into this buffer.
    Fill(&'a mut [u8]),
    /// One `u64`.
    U64,
}

/// Benches one contender (statically dispatched, as a user's code would be).
fn bench<S: Source>(group: &mut BenchmarkGroup<'_, WallTime>, name: &str, mut s: S, op: &mut Op) {
    match op {
        Op::Fill(buf) => group.bench_function(name, |b| b.iter(|| s.fill(black_box(buf)))),
        Op::U64 => group.bench_function(name, |b| b.iter(|| black_box(s.u64()))),
    };
}

/// Every contender, freshly seeded, in one group.
fn bench_all(group: &mut BenchmarkGroup<'_, WallTime>, mut op: Op) {
    let op = &mut op;
    // The seeded generators, ours and the baselines, each from `seed_from_u64(1)`.
    macro_rules! bench_seeded {
        ($($name:literal => $generator:ty),* $(,)?) => {
            $(bench(group, $name, Gen(<$generator>::seed_from_u64(1)), op);)*
        };
    }
    bench_seeded!(
        "TurboShakeRng" => TurboShakeRng,
        "ShakeRng" => ShakeRng,
        "ChaChaKeyErasureRng" => ChaChaKeyErasureRng,
        "ChaCha12KeyErasureRng" => ChaCha12KeyErasureRng,
        "ChaCha20KeyErasureRng" => ChaCha20KeyErasureRng,
        "AesCtrPoolRng" => AesCtrPoolRng,
        "rand StdRng" => StdRng,
        "chacha20 ChaCha8Rng" => chacha20::ChaCha8Rng,
        "chacha20 ChaCha12Rng" => chacha20::ChaCha12Rng,
    );
    let mut turbo = turboshake::TurboShake256::default();
    turbo.update(&[7u8; 136]);
    bench(
        group,
        "RustCrypto TurboShake256 reader",
        turbo.finalize_xof(),
        op,
    );
    let mut shake = shake::Shake256::default();
    shake.update(&[7u8; 136]);
    bench(
        group,
        "RustCrypto Shake256 reader",
        shake.finalize_xof(),
        op,
    );
    let ctr = Aes256Ctr::new(&[7u8; 32].into(), &[0u8; 16].into());
    bench(group, "RustCrypto AES-256-CTR", ctr, op);
    bench(group, "getrandom::fill", OsFill, op);
}

fn fill_bytes(c: &mut Criterion) {
    for size in FILL_SIZES {
        let mut group = c.benchmark_group(format!("fill_bytes/{size}"));
        group.throughput(Throughput::Bytes(size as u64));
        let mut buf = vec![0u8; size];
        bench_all(&mut group, Op::Fill(&mut buf));
        group.finish();
    }
}

fn next_u64(c: &mut Criterion) {
    let mut group = c.benchmark_group("next_u64");
    group.throughput(Throughput::Bytes(8));
    bench_all(&mut group, Op::U64);
    group.finish();
}

/// Construction from a fixed seed plus the first 8 bytes (the first refill): what
/// seeding costs a user.
fn seeding(c: &mut Criterion) {
    fn first<R: Rng>(mut rng: R) -> u64 {
        rng.next_u64()
    }
    let mut group = c.benchmark_group("seeding");
    group.bench_function("TurboShakeRng", |b| {
        b.iter(|| first(TurboShakeRng::from_seed(black_box([7u8; 136]).into())))
    });
    group.bench_function("ShakeRng", |b| {
        b.iter(|| first(ShakeRng::from_seed(black_box([7u8; 136]).into())))
    });
    group.bench_function("ChaChaKeyErasureRng", |b| {
        b.iter(|| first(ChaChaKeyErasureRng::from_seed(black_box([7u8; 32]))))
    });
    group.bench_function("AesCtrPoolRng", |b| {
        b.iter(|| first(AesCtrPoolRng::from_seed(black_box([7u8; 32]))))
    });
    group.bench_function("rand StdRng", |b| {
        b.iter(|| first(StdRng::from_seed(black_box([7u8; 32]))))
    });
    group.finish();
}

criterion_group!(benches, fill_bytes, next_u64, seeding);
criterion_main!(benches);
