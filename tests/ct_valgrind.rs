//! Constant-time check under valgrind's memcheck (a `harness = false` test).
//!
//! Memcheck tracks, for every bit, whether it is *defined*; it reports a
//! conditional jump or move that depends on an undefined value ("Conditional jump
//! or move depends on uninitialised value(s)") and an undefined value used as an
//! address ("Use of uninitialised value of size N"). Marking keys, seeds and
//! states *undefined* with memcheck's client request `MAKE_MEM_UNDEFINED` turns
//! these reports into exactly the two ways code leaks a secret through timing on
//! common CPUs: a secret-dependent branch and a secret-dependent memory index
//! (the method of Adam Langley's `ctgrind`, with today's memcheck requests).
//!
//! Every primitive on every backend the CPU (as valgrind shows it) has, the XOFs
//! and every generator's seeding and refill paths run here on secret inputs;
//! outputs are marked defined again (`MAKE_MEM_DEFINED`) before they are compared
//! with the portable backend's. Run as `valgrind --error-exitcode=97 <binary>`:
//! any report fails the run, and the binary prints which check caused it.
//! `<binary> --negative-control` instead runs a deliberately leaky function (a
//! table lookup indexed by a secret byte, a branch on a secret bit): under
//! valgrind it must produce both kinds of report, which proves the check can fail.
//!
//! Without valgrind (as in `cargo test`) the client requests are no-ops and the
//! same code runs as a quick cross-backend test. The client request is written for
//! x86_64 (valgrind's "special instruction preamble"); on other architectures the
//! requests do nothing (CI runs aarch64 under qemu, where valgrind cannot run).
//! `RATCHET_RNG_EXPECT_BACKENDS` (comma-separated backend names) makes the run
//! fail if a named backend was not exercised.

use std::collections::BTreeSet;
use std::hint::black_box;
use std::process::ExitCode;

use rand::{Rng, SeedableRng};
use ratchet_rng::hazmat::{self, Aes256, ChaCha, Keccak};
use ratchet_rng::xof::{Shake256, TurboShake256};
use ratchet_rng::{
    AesCtrPoolRng, ChaCha12KeyErasureRng, ChaCha20KeyErasureRng, ChaChaKeyErasureRng, ShakeRng,
    TurboShakeRng,
};

/// Valgrind client requests (valgrind.h, memcheck.h).
mod valgrind {
    /// `VG_USERREQ__RUNNING_ON_VALGRIND`.
    const RUNNING_ON_VALGRIND: usize = 0x1001;
    /// `VG_USERREQ__COUNT_ERRORS`.
    const COUNT_ERRORS: usize = 0x1201;
    /// `VG_USERREQ_TOOL_BASE('M', 'C')`: memcheck's requests.
    const MEMCHECK_BASE: usize = ((b'M' as usize) << 24) | ((b'C' as usize) << 16);
    /// `VG_USERREQ__MAKE_MEM_UNDEFINED`.
    const MAKE_MEM_UNDEFINED: usize = MEMCHECK_BASE + 1;
    /// `VG_USERREQ__MAKE_MEM_DEFINED`.
    const MAKE_MEM_DEFINED: usize = MEMCHECK_BASE + 2;
    /// `VG_USERREQ__GET_VBITS`.
    const GET_VBITS: usize = MEMCHECK_BASE + 8;

    /// A client request: returns `default` when not running under valgrind.
    #[cfg(target_arch = "x86_64")]
    fn request(default: usize, code: usize, arg1: usize, arg2: usize, arg3: usize) -> usize {
        let args: [usize; 6] = [code, arg1, arg2, arg3, 0, 0];
        let result;
        // SAFETY: on a CPU the sequence is four rotations of `rdi` adding up to 128
        // bits (so `rdi` is unchanged) and an exchange of `rbx` with itself: it only
        // changes flags, and `rdx` keeps `default`. Valgrind recognises it and
        // serves the request in `rax`'s argument block (6 words, alive for the
        // call); the requests used here change memcheck's bookkeeping about the
        // named memory, never its contents. Memory is not declared untouched, so
        // the compiler keeps the order of accesses around the request.
        unsafe {
            core::arch::asm!(
                "rol rdi, 3",
                "rol rdi, 13",
                "rol rdi, 61",
                "rol rdi, 51",
                "xchg rbx, rbx",
                in("rax") args.as_ptr(),
                inout("rdx") default => result,
                options(nostack),
            );
        }
        result
    }

    /// No valgrind client requests on this architecture: every request is a no-op.
    #[cfg(not(target_arch = "x86_64"))]
    fn request(default: usize, _code: usize, _arg1: usize, _arg2: usize, _arg3: usize) -> usize {
        default
    }

    /// Whether the program runs under valgrind.
    pub fn running() -> bool {
        request(0, RUNNING_ON_VALGRIND, 0, 0, 0) != 0
    }

    /// The number of errors valgrind has reported so far (0 without valgrind).
    pub fn errors() -> usize {
        request(0, COUNT_ERRORS, 0, 0, 0)
    }

    /// Marks `value`'s bytes undefined: memcheck reports any branch or address
    /// that depends on them, or on anything computed from them.
    pub fn secret<T: ?Sized>(value: &mut T) {
        request(
            0,
            MAKE_MEM_UNDEFINED,
            (&raw mut *value).cast::<u8>() as usize,
            size_of_val(value),
            0,
        );
        std::hint::black_box(value);
    }

    /// Marks `value`'s bytes defined again (to compare or print them).
    pub fn public<T: ?Sized>(value: &mut T) {
        request(
            0,
            MAKE_MEM_DEFINED,
            (&raw mut *value).cast::<u8>() as usize,
            size_of_val(value),
            0,
        );
        std::hint::black_box(value);
    }

    /// How many of `value`'s bytes memcheck holds (partly) undefined, i.e.
    /// derived from a secret; `None` without valgrind.
    pub fn secret_bytes<T: ?Sized>(value: &T) -> Option<usize> {
        let mut vbits = vec![0u8; size_of_val(value)];
        let status = request(
            0,
            GET_VBITS,
            (&raw const *value).cast::<u8>() as usize,
            vbits.as_mut_ptr() as usize,
            vbits.len(),
        );
        std::hint::black_box(&mut vbits);
        // 1: copied (a set bit is an undefined bit); 0: not under valgrind.
        (status == 1).then(|| vbits.iter().filter(|&&v| v != 0).count())
    }
}

use valgrind::{public, secret};

/// Marks `value` defined after checking, under valgrind, that every byte of it
/// was derived from the secret inputs (so the run did compute on secrets: a
/// check that never saw one could not fail).
fn reveal<T: ?Sized>(value: &mut T) {
    if let Some(tainted) = valgrind::secret_bytes(value) {
        assert_eq!(
            tainted,
            size_of_val(value),
            "output bytes not derived from the secret input"
        );
    }
    public(value);
}

/// A public, reproducible fill: byte `i` of pattern `tag`.
fn pattern<const N: usize>(tag: u8) -> [u8; N] {
    core::array::from_fn(|i| (i as u8).wrapping_mul(167).wrapping_add(tag) ^ (i >> 8) as u8)
}

fn words<const N: usize>(bytes: &[u8]) -> [u32; N] {
    core::array::from_fn(|i| u32::from_le_bytes(bytes[4 * i..4 * i + 4].try_into().unwrap()))
}

fn lanes(bytes: &[u8; 200]) -> [u64; 25] {
    core::array::from_fn(|i| u64::from_le_bytes(bytes[8 * i..8 * i + 8].try_into().unwrap()))
}

/// The checks that ran, with the valgrind errors each caused.
struct Report {
    rows: Vec<(String, usize)>,
    backends: BTreeSet<String>,
}

impl Report {
    /// Runs `f` and records the valgrind errors it caused.
    fn check(&mut self, name: String, f: impl FnOnce()) {
        let before = valgrind::errors();
        f();
        let caused = valgrind::errors() - before;
        println!(
            "{name:<56} {}",
            if caused == 0 {
                "ok".to_string()
            } else {
                format!("{caused} ERROR(S)")
            }
        );
        self.rows.push((name, caused));
    }
}

// ---------------------------------------------------------------------------
// Primitives
// ---------------------------------------------------------------------------

fn keccak(report: &mut Report) {
    let state0 = lanes(&pattern::<200>(1));
    for keccak in Keccak::available() {
        report.backends.insert(keccak.name().to_string());
        report.check(
            format!(
                "keccak {}: permute 12/24, squeeze_period 12/24",
                keccak.name()
            ),
            || {
                let mut expected = [state0; 4];
                Keccak::soft().permute::<12>(&mut expected[0]);
                Keccak::soft().permute::<24>(&mut expected[1]);
                let mut expected_out = [[0u8; 1088]; 2];
                Keccak::soft().squeeze_period::<12>(&mut expected[2], &mut expected_out[0]);
                Keccak::soft().squeeze_period::<24>(&mut expected[3], &mut expected_out[1]);

                let mut state = [state0; 4];
                let mut out = [[0u8; 1088]; 2];
                secret(&mut state);
                keccak.permute::<12>(&mut state[0]);
                keccak.permute::<24>(&mut state[1]);
                keccak.squeeze_period::<12>(&mut state[2], &mut out[0]);
                keccak.squeeze_period::<24>(&mut state[3], &mut out[1]);
                reveal(&mut state);
                reveal(&mut out);
                assert_eq!(state, expected, "{}", keccak.name());
                assert_eq!(out, expected_out, "{}", keccak.name());
            },
        );
    }
}

fn chacha(report: &mut Report) {
    let key0: [u32; 8] = words(&pattern::<32>(2));
    report.check("chacha soft: RFC 8439 block 8/12/20".to_string(), || {
        let nonce0 = [0x0900_0000, 0x4a00_0000, 0];
        let expected = [
            hazmat::chacha_block::<8>(&key0, 1, &nonce0),
            hazmat::chacha_block::<12>(&key0, 1, &nonce0),
            hazmat::chacha_block::<20>(&key0, 1, &nonce0),
        ];
        let (mut key, mut counter, mut nonce) = (key0, 1u32, nonce0);
        secret(&mut key);
        secret(&mut counter);
        secret(&mut nonce);
        let mut blocks = [
            hazmat::chacha_block::<8>(&key, counter, &nonce),
            hazmat::chacha_block::<12>(&key, counter, &nonce),
            hazmat::chacha_block::<20>(&key, counter, &nonce),
        ];
        reveal(&mut blocks);
        assert_eq!(blocks, expected);
    });
    // The 32-bit scalar kernel (the portable one on Cortex-M, rv32, wasm32
    // without simd128), reachable on x86_64 through hazmat.
    report.check("chacha scalar32: key periods 8/12/20".to_string(), || {
        key_periods_match_soft(KeyPeriods::Scalar32, key0)
    });
    for chacha in ChaCha::available() {
        report.backends.insert(chacha.name().to_string());
        report.check(
            format!("chacha {}: key periods 8/12/20", chacha.name()),
            || key_periods_match_soft(KeyPeriods::Backend(chacha), key0),
        );
    }
}

/// A ChaCha kernel that makes key periods (output, then the key erased).
#[derive(Clone, Copy)]
enum KeyPeriods {
    /// `hazmat::chacha_key_period_scalar32`, one period a call.
    Scalar32,
    /// A backend's `key_periods`.
    Backend(ChaCha),
}

/// Two key periods of 8, 12 and 20 rounds by `kernel` from a secret `key0`:
/// the key and the output must be the portable backend's.
fn key_periods_match_soft(kernel: KeyPeriods, key0: [u32; 8]) {
    fn run<const R: usize>(kernel: KeyPeriods, key0: [u32; 8]) {
        let mut expected_key = key0;
        let mut expected = [[0u8; 992]; 2];
        ChaCha::soft().key_periods::<R>(&mut expected_key, &mut expected);
        let mut key = key0;
        let mut out = [[0u8; 992]; 2];
        secret(&mut key);
        let name = match kernel {
            KeyPeriods::Scalar32 => {
                for period in &mut out {
                    hazmat::chacha_key_period_scalar32::<R>(&mut key, period);
                }
                "scalar32"
            }
            KeyPeriods::Backend(chacha) => {
                chacha.key_periods::<R>(&mut key, &mut out);
                chacha.name()
            }
        };
        reveal(&mut key);
        reveal(&mut out);
        assert_eq!((key, out), (expected_key, expected), "{name} {R}");
    }
    run::<8>(kernel, key0);
    run::<12>(kernel, key0);
    run::<20>(kernel, key0);
}

fn aes(report: &mut Report) {
    let key0 = pattern::<32>(3);
    for aes in Aes256::available() {
        report.backends.insert(aes.name().to_string());
        report.check(
            format!("aes {}: key schedule, CTR, pool", aes.name()),
            || {
                // 9 blocks: past every backend's batch of 8, from a counter about to
                // carry into the upper 64 bits.
                let counter0 = u128::from(u64::MAX) - 3;
                let mut expected = [[0u8; 16]; 9];
                Aes256::soft().ctr_keystream(&key0, counter0, &mut expected);
                let mut expected_key = key0;
                let mut expected_pool = [[0u8; 4064]];
                Aes256::soft().fill_pools(&mut expected_key, &mut expected_pool);

                let mut key = key0;
                let mut out = [[0u8; 16]; 9];
                secret(&mut key);
                aes.ctr_keystream(&key, counter0, &mut out);
                let mut pool = [[0u8; 4064]];
                aes.fill_pools(&mut key, &mut pool);
                reveal(&mut key);
                reveal(&mut out);
                reveal(&mut pool);
                assert_eq!(out, expected, "{}", aes.name());
                assert_eq!((key, pool), (expected_key, expected_pool), "{}", aes.name());
            },
        );
    }
}

fn xofs(report: &mut Report) {
    let input0 = pattern::<300>(4);
    report.check(
        "xof: Shake256, TurboShake256 (absorb, squeeze)".to_string(),
        || {
            fn both(input: &[u8]) -> [[u8; 400]; 2] {
                let mut out = [[0u8; 400]; 2];
                let mut shake = Shake256::new();
                shake.absorb(input);
                shake.finalize().squeeze(&mut out[0]);
                let mut turbo = TurboShake256::new(0x1F).unwrap();
                turbo.absorb(&input[..7]);
                turbo.absorb(&input[7..]);
                turbo.finalize().squeeze(&mut out[1]);
                out
            }
            let expected = both(&input0);
            let mut input = input0;
            secret(&mut input);
            let mut out = both(&input);
            reveal(&mut out);
            assert_eq!(out, expected);
        },
    );
}

// ---------------------------------------------------------------------------
// Generators: seeding and refill paths
// ---------------------------------------------------------------------------

/// Reads across refills (`n` bytes each) through every call: a partial fill, whole
/// refills straight into the caller's buffer, `next_u32` and `next_u64`.
fn draw<R: Rng>(rng: &mut R, n: usize) -> Vec<u8> {
    let mut out = vec![0u8; 2 * n + 100];
    let (a, b) = out.split_at_mut(5);
    rng.fill_bytes(a);
    rng.fill_bytes(b);
    let mut ints = [0u8; 12];
    ints[..4].copy_from_slice(&rng.next_u32().to_le_bytes());
    ints[4..].copy_from_slice(&rng.next_u64().to_le_bytes());
    out.extend_from_slice(&ints);
    out
}

/// [`draw`] from a generator seeded with secrets, revealed to compare.
fn draw_secret<R: Rng>(rng: &mut R, n: usize) -> Vec<u8> {
    let mut out = draw(rng, n);
    reveal(out.as_mut_slice());
    out
}

fn generators(report: &mut Report) {
    let key0 = pattern::<40>(7);
    macro_rules! seeded {
        ($ty:ident, $handle:ident, $seed:expr, $n:expr) => {
            for backend in $handle::available() {
                let name = backend.name();
                report.check(
                    format!("{} on {name}: seeding, refills", stringify!($ty)),
                    || {
                        let expected = draw(&mut $ty::from_seed($seed.into()), $n);
                        let mut seed = $seed;
                        secret(&mut seed);
                        let mut rng = $ty::from_seed_with_backend(seed.into(), backend);
                        assert_eq!(draw_secret(&mut rng, $n), expected, "{name}");
                        // Key material of any length, through `from_key`'s derivation.
                        let expected = draw(&mut $ty::from_key(&key0), $n);
                        let mut key = key0;
                        secret(&mut key);
                        let mut rng = $ty::from_key_with_backend(&key, backend);
                        assert_eq!(draw_secret(&mut rng, $n), expected, "{name}");
                    },
                );
            }
        };
    }
    let seed = pattern::<32>(5);
    let sponge_seed = pattern::<136>(6);
    seeded!(ShakeRng, Keccak, sponge_seed, 1088);
    seeded!(TurboShakeRng, Keccak, sponge_seed, 1088);
    seeded!(ChaChaKeyErasureRng, ChaCha, seed, 992);
    seeded!(ChaCha12KeyErasureRng, ChaCha, seed, 992);
    seeded!(ChaCha20KeyErasureRng, ChaCha, seed, 992);
    seeded!(AesCtrPoolRng, Aes256, seed, 4064);
}

// ---------------------------------------------------------------------------
// The negative control
// ---------------------------------------------------------------------------

/// What the crate must never do: index a table with a secret byte, and branch on
/// a secret bit. Under valgrind each must be reported.
fn leaky(report: &mut Report) {
    /// Called only on the taken side of the secret branch (not inlined, so the
    /// branch stays a jump rather than a conditional move).
    #[inline(never)]
    fn taken(x: u32) -> u32 {
        black_box(x.rotate_left(7) ^ 0x5555_5555)
    }
    report.check("negative control: secret-indexed table".to_string(), || {
        let table: [u32; 256] = core::array::from_fn(|i| (i as u32).wrapping_mul(0x9E37_79B9));
        let mut bytes = pattern::<16>(8);
        secret(&mut bytes);
        let mut acc = 0u32;
        for &b in black_box(&bytes) {
            acc ^= black_box(&table)[usize::from(b)];
        }
        let mut acc = [acc];
        public(&mut acc);
        black_box(acc);
    });
    report.check(
        "negative control: secret-dependent branch".to_string(),
        || {
            let mut bytes = pattern::<16>(9);
            secret(&mut bytes);
            let mut acc = 0u32;
            for &b in black_box(&bytes) {
                if b & 1 == 1 {
                    acc = taken(acc);
                }
            }
            let mut acc = [acc];
            public(&mut acc);
            black_box(acc);
        },
    );
}

fn main() -> ExitCode {
    let negative = std::env::args().skip(1).any(|a| a == "--negative-control");
    let on_valgrind = valgrind::running();
    println!(
        "constant-time check: {}",
        if on_valgrind {
            "under valgrind memcheck"
        } else {
            "not under valgrind (client requests are no-ops: a cross-backend run only)"
        }
    );
    let mut report = Report {
        rows: Vec::new(),
        backends: BTreeSet::new(),
    };
    if negative {
        if !on_valgrind {
            eprintln!("--negative-control only means something under valgrind");
            return ExitCode::from(2);
        }
        leaky(&mut report);
        let missed: Vec<&str> = report
            .rows
            .iter()
            .filter(|(_, errors)| *errors == 0)
            .map(|(name, _)| name.as_str())
            .collect();
        if !missed.is_empty() {
            eprintln!("FAILED: memcheck did not report {missed:?}: the check cannot fail");
            return ExitCode::from(3);
        }
        // Valgrind's --error-exitcode turns the reported errors into the exit code.
        println!("negative control: memcheck reported every leak");
        return ExitCode::SUCCESS;
    }

    keccak(&mut report);
    chacha(&mut report);
    aes(&mut report);
    xofs(&mut report);
    generators(&mut report);
    println!(
        "backends exercised: {}",
        report
            .backends
            .iter()
            .cloned()
            .collect::<Vec<_>>()
            .join(", ")
    );

    let mut failed = false;
    if let Ok(expected) = std::env::var("RATCHET_RNG_EXPECT_BACKENDS") {
        for name in expected.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            if !report.backends.contains(name) {
                eprintln!("FAILED: backend {name} was expected but not exercised");
                failed = true;
            }
        }
    }
    let leaks: Vec<&(String, usize)> = report.rows.iter().filter(|(_, e)| *e > 0).collect();
    if !leaks.is_empty() {
        eprintln!("FAILED: memcheck reported secret-dependent branches or addresses in:");
        for (name, errors) in leaks {
            eprintln!("  {name}: {errors} error(s)");
        }
        failed = true;
    }
    if failed {
        return ExitCode::FAILURE;
    }
    println!(
        "{} checks: no secret-dependent branch or address",
        report.rows.len()
    );
    ExitCode::SUCCESS
}
