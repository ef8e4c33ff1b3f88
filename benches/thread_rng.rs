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
//! - `rand::rngs::SmallRng` (xoshiro256++, not cryptographic) held, and
//!   `rand_aes::tls` (rand_aes's thread-local AES-128-CTR: not for keys, no fork
//!   safety, seeded once per thread by hand) — in `next_u64`, the per-call peers;
//! - `vdso::getrandom` — the kernel's `vgetrandom` in the vDSO (Linux 6.11+),
//!   called directly with a state per thread as glibc 2.41 calls it (`vdso.rs`):
//!   8 bytes a call in `next_u64`, the whole request in the fill groups, and in
//!   every first-call group. Where the vDSO has no such function, the bench
//!   prints one line saying so and leaves it out; where it has, its output is
//!   checked before any group runs (`vdso.rs`, `check`).
//!
//! First calls, `ratchet_rng::u64` beside `rand::rng` (`rand::rng().next_u64()`)
//! and `vdso::getrandom` (8 bytes; the process's first also finds the symbol
//! and asks for the state's size, a thread's first maps or takes a state) in
//! each group, each timed around the call alone:
//! - `first_call_process/fresh` and `first_call_process/4GiB resident` — the first
//!   call of a process. Each is a child process of the bench (the bench binary run
//!   again with `RATCHET_RNG_BENCH_CHILD` set), which touches nothing, or first
//!   allocates 4 GiB and writes a byte in each page (`RATCHET_RNG_BENCH_RESIDENT_GIB`
//!   sets the size; the group is skipped when `/proc/meminfo` shows less than that
//!   plus 2 GiB available), then times its first call and prints the nanoseconds.
//!   One child per iteration and one iteration per sample: criterion warns that
//!   it cannot complete the samples in the target time, which is expected. 20
//!   samples fresh, 10 at 4 GiB (such a child takes 1–2 s to touch its memory);
//! - `first_call_thread/fresh` — the first call on a new thread of a process in
//!   which no thread has exited, so there is no page to recycle: child processes
//!   of the bench that each make one call on their main thread, then start up to
//!   64 threads one after another, kept alive to the end, and time each one's first
//!   call;
//! - `first_call_thread/recycled` — the first call on a new thread when earlier
//!   threads have exited (each thread is joined before the next starts), in the
//!   bench process itself.
//!
//! Thread creation is never counted, nor a child's start. `python3
//! scripts/first-call-table.py` prints these groups' medians as the table of
//! docs/PERFORMANCE.md.
//!
//! `cargo bench -p benches --bench thread_rng`; HTML reports land in `target/criterion/`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, SamplingMode, Throughput, criterion_group};
use rand_core::{Rng, SeedableRng};
use ratchet_rng::{AesCtrPoolRng, ChaChaKeyErasureRng};

mod vdso;

/// `fill_bytes` request sizes: nothing (the per-call overhead alone), one key,
/// a page, bulk.
const FILL_SIZES: [usize; 4] = [0, 32, 4096, 512 * 1024];

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
    let mut small = rand::rngs::SmallRng::seed_from_u64(black_box(7));
    group.bench_function("rand::rngs::SmallRng", |b| b.iter(|| small.next_u64()));
    // rand_aes's thread-local generator must be seeded by hand in each thread.
    rand_aes::tls::rand_seed_from_entropy();
    group.bench_function("rand_aes::tls", |b| b.iter(rand_aes::tls::rand_u64));
    if vdso::unavailable().is_none() {
        group.bench_function(vdso::NAME, |b| b.iter(vdso::u64));
    }
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
        if vdso::unavailable().is_none() {
            group.bench_function(vdso::NAME, |b| b.iter(|| vdso::fill(black_box(&mut buf))));
        }
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
/// thread, each thread joined before the next starts (so that from the second on
/// a thread finds the pages of one that exited).
fn first_call_on_recycled_threads(iters: u64, op: fn() -> u64) -> Duration {
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

/// A contender of the first-call groups: (function name, child's name, call).
type FirstCall = (&'static str, &'static str, fn() -> u64);

const FIRST_CALLS: [FirstCall; 3] = [
    ("ratchet_rng::u64", "ours", ratchet_rng::u64),
    ("rand::rng", "rand", || rand::rng().next_u64()),
    (vdso::NAME, "vdso", vdso::u64),
];

/// The contenders this machine has (the vDSO's only where the kernel has it).
fn first_calls() -> impl Iterator<Item = FirstCall> {
    FIRST_CALLS
        .into_iter()
        .filter(|&(name, _, _)| name != vdso::NAME || vdso::unavailable().is_none())
}

/// A first call on a new thread: microseconds, while creating and joining the
/// thread costs several times that in wall time; short targets keep the run
/// to seconds (criterion's targets count the measured time only).
fn thread_group<'a>(c: &'a mut Criterion, name: &str) -> BenchmarkGroup<'a, WallTime> {
    let mut group = c.benchmark_group(name);
    group
        .warm_up_time(Duration::from_millis(100))
        .measurement_time(Duration::from_millis(300))
        .sample_size(20);
    group
}

fn first_call_thread(c: &mut Criterion) {
    let mut group = thread_group(c, "first_call_thread/fresh");
    for (name, child, _) in first_calls() {
        group.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                let mut left = iters;
                while left > 0 {
                    let threads = left.min(child::THREADS_PER_CHILD);
                    total += child::spawn(&format!("threads:{child}:{threads}"));
                    left -= threads;
                }
                total
            })
        });
    }
    group.finish();
    let mut group = thread_group(c, "first_call_thread/recycled");
    for (name, _, op) in first_calls() {
        group.bench_function(name, |b| {
            b.iter_custom(|iters| first_call_on_recycled_threads(iters, op))
        });
    }
    group.finish();
}

fn first_call_process(c: &mut Criterion) {
    let gib = child::resident_gib();
    for (label, gib, samples) in [
        ("fresh".to_owned(), 0, 20),
        (format!("{gib}GiB resident"), gib, 10),
    ] {
        if gib > 0 && !child::memory_available(gib) {
            eprintln!(
                "first_call_process/{label}: skipped, less than {} GiB available",
                gib + 2
            );
            continue;
        }
        let mut group = c.benchmark_group(format!("first_call_process/{label}"));
        // One child process per iteration and one iteration per sample: the
        // measured time is the first call alone, a small part of a child's life.
        group
            .sampling_mode(SamplingMode::Flat)
            .sample_size(samples)
            .warm_up_time(Duration::from_nanos(1))
            .measurement_time(Duration::from_nanos(1));
        for (name, child, _) in first_calls() {
            group.bench_function(name, |b| {
                b.iter_custom(|iters| {
                    (0..iters)
                        .map(|_| child::spawn(&format!("process:{child}:{gib}")))
                        .sum()
                })
            });
        }
        group.finish();
    }
}

/// The child processes of the first-call groups: the bench binary run again with
/// [`child::VAR`] set to `process:<rng>:<GiB>` or `threads:<rng>:<count>`, where
/// `<rng>` is `ours`, `rand` or `vdso` ([`FIRST_CALLS`]). A child prints the
/// nanoseconds its first calls took (their sum) on stdout and exits.
mod child {
    use std::hint::black_box;
    use std::process::{Command, Stdio};
    use std::sync::{Arc, Barrier, mpsc};
    use std::time::{Duration, Instant};

    /// Set in a child's environment: what it measures.
    pub const VAR: &str = "RATCHET_RNG_BENCH_CHILD";
    /// The GiB a child of `first_call_process` touches before its first call.
    const RESIDENT_VAR: &str = "RATCHET_RNG_BENCH_RESIDENT_GIB";
    const RESIDENT_GIB: usize = 4;
    /// Threads timed per child of `first_call_thread/fresh`.
    pub const THREADS_PER_CHILD: u64 = 64;

    pub fn resident_gib() -> usize {
        std::env::var(RESIDENT_VAR).map_or(RESIDENT_GIB, |v| {
            v.parse()
                .unwrap_or_else(|_| panic!("{RESIDENT_VAR}={v:?}: expected a whole number of GiB"))
        })
    }

    /// Whether `/proc/meminfo` shows `gib` GiB available and 2 GiB to spare
    /// (true where there is no `/proc/meminfo`).
    pub fn memory_available(gib: usize) -> bool {
        let Ok(meminfo) = std::fs::read_to_string("/proc/meminfo") else {
            return true;
        };
        let available_kib = meminfo
            .lines()
            .find_map(|line| line.strip_prefix("MemAvailable:"))
            .and_then(|rest| {
                rest.trim()
                    .trim_end_matches("kB")
                    .trim()
                    .parse::<usize>()
                    .ok()
            });
        available_kib.is_none_or(|kib| kib >= (gib + 2) << 20)
    }

    /// Runs one child measuring `what`; its reported time.
    pub fn spawn(what: &str) -> Duration {
        let exe = std::env::current_exe().expect("the bench binary's path");
        let out = Command::new(exe)
            .env(VAR, what)
            .stdin(Stdio::null())
            .stderr(Stdio::inherit())
            .output()
            .expect("cannot start a child of the bench");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "child {what}: {}: {text}", out.status);
        Duration::from_nanos(
            text.trim()
                .parse()
                .unwrap_or_else(|_| panic!("child {what}: expected nanoseconds, got {text:?}")),
        )
    }

    /// The child's side: measures, prints, exits (without freeing what it touched).
    pub fn run(what: &str) -> ! {
        let fields: Vec<&str> = what.split(':').collect();
        let [kind, rng, count] = fields[..] else {
            panic!("{VAR}={what:?}: expected <kind>:<rng>:<count>");
        };
        let Some(&(_, _, first)) = super::FIRST_CALLS
            .iter()
            .find(|(_, child, _)| *child == rng)
        else {
            panic!("{VAR}={what:?}: unknown generator {rng:?}");
        };
        let count: usize = count.parse().expect("a count");
        let took = match kind {
            "process" => {
                let memory = touch_gib(count);
                let start = Instant::now();
                black_box(first());
                let took = start.elapsed();
                black_box(&memory);
                took
            }
            "threads" => fresh_threads(count, first),
            _ => panic!("{VAR}={what:?}: unknown kind {kind:?}"),
        };
        println!("{}", took.as_nanos());
        std::process::exit(0)
    }

    /// `gib` GiB, a byte written in each 4 KiB: resident, as a loaded program's
    /// data is.
    fn touch_gib(gib: usize) -> Vec<u8> {
        // `vec!` of zeros maps fresh pages (calloc) without touching them.
        let mut memory = vec![0u8; gib << 30];
        for i in (0..memory.len()).step_by(4096) {
            memory[i] = 1;
        }
        black_box(&mut memory);
        memory
    }

    /// The first call of `count` new threads, started one after another in a
    /// process where no thread has exited (after one call on the main thread,
    /// so that the process's first call is not counted), all kept alive to the
    /// end: no thread finds a page another left.
    fn fresh_threads(count: usize, first: fn() -> u64) -> Duration {
        black_box(first());
        let all_timed = Arc::new(Barrier::new(count + 1));
        let (report, timed) = mpsc::channel();
        let mut total = Duration::ZERO;
        let threads: Vec<_> = (0..count)
            .map(|_| {
                let all_timed = Arc::clone(&all_timed);
                let report = report.clone();
                let thread = std::thread::spawn(move || {
                    let start = Instant::now();
                    black_box(first());
                    report.send(start.elapsed()).unwrap();
                    all_timed.wait();
                });
                total += timed.recv().unwrap();
                thread
            })
            .collect();
        all_timed.wait();
        for thread in threads {
            thread.join().unwrap();
        }
        total
    }
}

criterion_group!(
    benches,
    next_u64,
    fill_bytes,
    first_call_thread,
    first_call_process
);

fn main() {
    if let Ok(what) = std::env::var(child::VAR) {
        child::run(&what);
    }
    vdso::announce();
    benches();
    Criterion::default().configure_from_args().final_summary();
}
