//! The thread-local generator against `rand::rng()` (rand 0.10's `ThreadRng`,
//! ChaCha12 reseeded every 64 KiB, not fork-safe), in the same criterion groups.
//!
//! Contenders in each group:
//! - `ratchet_rng::rng` — a `ThreadRng` handle (one thread-local access and the
//!   fork check per call), and `ratchet_rng::fill` / `::u64` (the free functions);
//! - `rand::rng` — `rand`'s handle, obtained once outside the loop;
//! - `direct/ChaChaKeyErasureRng`, `direct/AesCtrPoolRng` — the generators the
//!   handle wraps, owned and used directly: no thread-local, no fork check, no
//!   reseed budget. `ratchet_rng::rng` minus the one the handle uses (ChaCha while
//!   the CPU has no AES backend, AES otherwise) is the cost of the thread-local
//!   access plus the fork check;
//! - `fill_bytes/0` isolates that overhead: an empty request still makes the
//!   thread-local access and the fork check, and the direct generator's empty
//!   request costs a few instructions;
//! - `plain thread-local buffer (no fork or signal safety)` — a baseline built
//!   here from public API: an 8 KiB buffer in a plain thread-local, refilled by
//!   `ratchet_rng::fill` and read 8 bytes at a time, wiping what it serves, with
//!   no wipe-on-fork page, no in-use mark and no re-validation: its difference to
//!   `ratchet_rng::u64` is what the fork and signal safety cost per call;
//! - `ratchet_rng::rng() per call` / `rand::rng() per call` — the handle taken on
//!   every call, as `rng().next_u64()` is written (rand's clones an `Rc`);
//! - `bound/AES-256 rounds only` (x86_64 with VAES: 512-bit with AVX-512, else
//!   256-bit) — in the fill groups, the AES rounds of that many bytes and
//!   nothing else: no AES-CTR generator can be faster on this CPU;
//! - `first_use` — the first call on a new thread (state creation and seeding from
//!   the OS), timed inside the thread so thread creation is not counted.
//!
//! `cargo bench --bench thread_rng`; HTML reports land in `target/criterion/`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, Throughput, criterion_group, criterion_main};
use rand_core::{Rng, SeedableRng};
use ratchet_rng::{AesCtrPoolRng, ChaChaKeyErasureRng};

/// `fill_bytes` request sizes: nothing (the per-call overhead alone), one key,
/// bulk.
const FILL_SIZES: [usize; 3] = [0, 32, 512 * 1024];

fn next_u64(c: &mut Criterion) {
    let mut group = c.benchmark_group("next_u64");
    group.throughput(Throughput::Bytes(8));
    let mut ours = ratchet_rng::rng();
    group.bench_function("ratchet_rng::rng", |b| b.iter(|| ours.next_u64()));
    group.bench_function("ratchet_rng::u64", |b| b.iter(ratchet_rng::u64));
    group.bench_function(
        "plain thread-local buffer (no fork or signal safety)",
        |b| b.iter(plain::u64),
    );
    let mut theirs = rand::rng();
    group.bench_function("rand::rng", |b| b.iter(|| theirs.next_u64()));
    // The handle taken on every call, as `rng().next_u64()` is written: ours is a
    // zero-sized token, rand's clones and drops an `Rc`.
    group.bench_function("ratchet_rng::rng() per call", |b| {
        b.iter(|| ratchet_rng::rng().next_u64())
    });
    group.bench_function("rand::rng() per call", |b| {
        b.iter(|| rand::rng().next_u64())
    });
    direct(&mut group, |rng| rng.next_u64());
    group.finish();
}

/// The baseline without fork or signal safety, from public API only: the
/// least a thread-local buffer that wipes what it serves can do per call (one
/// thread-local count, one 8-byte load and one 8-byte store).
mod plain {
    use std::cell::{Cell, UnsafeCell};

    const BUFFER_BYTES: usize = 8128;

    thread_local! {
        static LEFT: Cell<usize> = const { Cell::new(0) };
        static BUF: UnsafeCell<[u8; BUFFER_BYTES]> = const { UnsafeCell::new([0; BUFFER_BYTES]) };
    }

    #[cold]
    #[inline(never)]
    fn refill() {
        // SAFETY: this thread's own buffer; no other reference to it is live
        // (`ratchet_rng::fill` never reaches it, and nothing here reenters).
        BUF.with(|buf| ratchet_rng::fill(unsafe { &mut *buf.get() }));
        LEFT.set(BUFFER_BYTES);
    }

    #[inline]
    pub fn u64() -> u64 {
        let x = loop {
            match LEFT.get().checked_sub(8) {
                Some(x) => break x,
                None => refill(),
            }
        };
        let out = BUF.with(|buf| {
            // SAFETY: as in `refill`; `x + 8 <= BUFFER_BYTES` (`x = LEFT - 8`).
            unsafe {
                let src = buf.get().cast::<u8>().add(x).cast::<[u8; 8]>();
                let out = src.read();
                src.write([0; 8]);
                out
            }
        });
        LEFT.set(x);
        u64::from_le_bytes(out)
    }
}

/// The generators inside the handle, used directly.
fn direct<R>(group: &mut BenchmarkGroup<'_, WallTime>, mut op: impl FnMut(&mut dyn Rng) -> R) {
    let mut chacha = ChaChaKeyErasureRng::from_seed(black_box([7; 32]));
    group.bench_function("direct/ChaChaKeyErasureRng", |b| {
        b.iter(|| op(black_box(&mut chacha)))
    });
    let mut aes = Box::new(AesCtrPoolRng::from_seed(black_box([7; 32])));
    group.bench_function("direct/AesCtrPoolRng", |b| {
        b.iter(|| op(black_box(&mut *aes)))
    });
}

fn fill_bytes(c: &mut Criterion) {
    for size in FILL_SIZES {
        let mut group = c.benchmark_group(format!("fill_bytes/{size}"));
        if size > 0 {
            group.throughput(Throughput::Bytes(size as u64));
        }
        let mut buf = vec![0u8; size];
        let mut ours = ratchet_rng::rng();
        group.bench_function("ratchet_rng::rng", |b| {
            b.iter(|| ours.fill_bytes(black_box(&mut buf)))
        });
        group.bench_function("ratchet_rng::fill", |b| {
            b.iter(|| ratchet_rng::fill(black_box(&mut buf)))
        });
        let mut theirs = rand::rng();
        group.bench_function("rand::rng", |b| {
            b.iter(|| theirs.fill_bytes(black_box(&mut buf)))
        });
        let mut chacha = ChaChaKeyErasureRng::from_seed([7; 32]);
        group.bench_function("direct/ChaChaKeyErasureRng", |b| {
            b.iter(|| chacha.fill_bytes(black_box(&mut buf)))
        });
        let mut aes = Box::new(AesCtrPoolRng::from_seed([7; 32]));
        group.bench_function("direct/AesCtrPoolRng", |b| {
            b.iter(|| aes.fill_bytes(black_box(&mut buf)))
        });
        // Bulk only: the bound rounds up to whole 512-byte batches.
        if size >= 4096 {
            aes_bound::bench(&mut group, size);
        }
        group.finish();
    }
}

/// The hardware bound of any AES-256-CTR generator on this CPU: the 14 AES rounds
/// of `size / 16` blocks alone (eight independent vector registers covering the
/// instruction's latency: VAES-512, four blocks each, where the CPU has AVX-512,
/// else VAES-256, two blocks each), with no counters, no key schedule, no loads
/// and no stores. `bound/AES-256 rounds only` in the group; skipped on a CPU
/// without VAES.
#[cfg(target_arch = "x86_64")]
mod aes_bound {
    use std::arch::x86_64::{
        __m256i, __m512i, _mm256_aesenc_epi128, _mm256_set1_epi64x, _mm256_storeu_si256,
        _mm256_xor_si256, _mm512_aesenc_epi128, _mm512_set1_epi64, _mm512_storeu_si512,
        _mm512_xor_si512,
    };
    use std::hint::black_box;

    use criterion::BenchmarkGroup;
    use criterion::measurement::WallTime;

    const LANES: usize = 8;
    const ROUNDS: usize = 14;

    /// `$name(batches, seed)`: `batches` batches of `LANES` registers of
    /// `$words / 2` blocks each, 14 rounds each, folded into one register.
    macro_rules! rounds_only {
        ($name:ident, $features:literal, $reg:ty, $words:literal,
         $set1:ident, $xor:ident, $aesenc:ident, $storeu:ident) => {
            #[target_feature(enable = $features)]
            fn $name(batches: usize, seed: i64) -> [u64; $words] {
                let key = $set1(seed);
                let mut lanes: [$reg; LANES] = [key; LANES];
                for (i, l) in lanes.iter_mut().enumerate() {
                    *l = $xor(*l, $set1(i as i64));
                }
                for _ in 0..batches {
                    for _ in 0..ROUNDS {
                        for l in lanes.iter_mut() {
                            *l = $aesenc(*l, key);
                        }
                    }
                }
                let mut acc = lanes[0];
                for l in &lanes[1..] {
                    acc = $xor(acc, *l);
                }
                let mut out = [0u64; $words];
                // SAFETY: `out` is one register's bytes, writable; `storeu` needs
                // no alignment; the register's features are enabled on this
                // function.
                unsafe { $storeu(out.as_mut_ptr().cast(), acc) };
                out
            }
        };
    }

    rounds_only!(
        rounds_only_512,
        "avx512f,vaes",
        __m512i,
        8,
        _mm512_set1_epi64,
        _mm512_xor_si512,
        _mm512_aesenc_epi128,
        _mm512_storeu_si512
    );
    rounds_only!(
        rounds_only_256,
        "avx2,vaes",
        __m256i,
        4,
        _mm256_set1_epi64x,
        _mm256_xor_si256,
        _mm256_aesenc_epi128,
        _mm256_storeu_si256
    );

    pub fn bench(group: &mut BenchmarkGroup<'_, WallTime>, size: usize) {
        let vaes = std::is_x86_feature_detected!("vaes");
        if vaes && std::is_x86_feature_detected!("avx512f") {
            let batches = size.div_ceil(16 * LANES * 4);
            group.bench_function("bound/AES-256 rounds only", |b| {
                // SAFETY: AVX512F and VAES were detected on this CPU above.
                b.iter(|| unsafe { rounds_only_512(black_box(batches), black_box(7)) })
            });
        } else if vaes && std::is_x86_feature_detected!("avx2") {
            let batches = size.div_ceil(16 * LANES * 2);
            group.bench_function("bound/AES-256 rounds only", |b| {
                // SAFETY: AVX2 and VAES were detected on this CPU above.
                b.iter(|| unsafe { rounds_only_256(black_box(batches), black_box(7)) })
            });
        }
    }
}

#[cfg(not(target_arch = "x86_64"))]
mod aes_bound {
    pub fn bench(
        _: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
        _: usize,
    ) {
    }
}

/// Total time of the first `op` on `iters` new threads, each timed inside its
/// thread.
fn first_call_on_new_threads(iters: u64, op: fn() -> u64) -> Duration {
    (0..iters)
        .map(|_| {
            std::thread::spawn(move || {
                let start = Instant::now();
                black_box(op());
                start.elapsed()
            })
            .join()
            .unwrap()
        })
        .sum()
}

fn first_use(c: &mut Criterion) {
    let mut group = c.benchmark_group("first_use");
    group.bench_function("ratchet_rng::rng", |b| {
        b.iter_custom(|iters| first_call_on_new_threads(iters, || ratchet_rng::rng().next_u64()))
    });
    group.bench_function("rand::rng", |b| {
        b.iter_custom(|iters| first_call_on_new_threads(iters, || rand::rng().next_u64()))
    });
    group.finish();
}

criterion_group!(benches, next_u64, fill_bytes, first_use);
criterion_main!(benches);
