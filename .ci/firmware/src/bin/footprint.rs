//! One generator's footprint on a Cortex-M4F or a 32-bit RISC-V core, for the
//! tables in docs/NO_STD.md and CI's benchmark gate (`bash
//! .ci/firmware/measure.sh` builds this once per generator and runs it).
//!
//! The generator is chosen by at most one `fp-*` feature (Cargo.toml); with none,
//! the subject is a stand-in that writes zeros: that build is the baseline whose
//! sizes measure.sh subtracts. Printed, on one `footprint` line:
//!
//! - `text`, `rodata`, `data`, `bss`: this program's sections (link.x symbols);
//! - `size_of`: the generator value (`core::mem::size_of`);
//! - `stack_new`, `stack_refill`: stack bytes used at most by constructing it
//!   from a seed, and by its first `fill_bytes` of one byte (the first refill),
//!   measured by painting the free stack (`stack_use`);
//! - `instructions`, `bytes`: guest instructions for `bytes` bytes of output in
//!   256-byte `fill_bytes` calls, under QEMU's `-icount shift=0`
//!   (`instructions`; 0 if the counter did not count).
#![no_std]
#![no_main]

use ratchet_rng_firmware::{exit, instructions, println, sections, stack_use};

/// Defines `mod subject` for feature `$feature`: the generator type, its
/// constructor from a 32-byte key (or the sponges' 136-byte seed), and `fill`.
macro_rules! subject {
    ($feature:literal, $name:literal, $ty:ty, $new:expr, $fill:expr) => {
        #[cfg(feature = $feature)]
        mod subject {
            pub const NAME: &str = $name;
            pub type G = $ty;
            pub fn new() -> G {
                $new
            }
            pub fn fill(rng: &mut G, out: &mut [u8]) {
                $fill(rng, out)
            }
        }
    };
}

/// A seed of `N` bytes: 0, 1, 2, ...
#[allow(dead_code)] // unused by the baseline
const fn iota<const N: usize>() -> [u8; N] {
    let mut seed = [0u8; N];
    let mut i = 0;
    while i < N {
        seed[i] = i as u8;
        i += 1;
    }
    seed
}

subject!(
    "fp-turboshake",
    "ratchet-rng `TurboShakeRng`",
    ratchet_rng::TurboShakeRng,
    ratchet_rng::rand_core::SeedableRng::from_seed(super::iota::<136>().into()),
    |r: &mut G, o: &mut [u8]| ratchet_rng::rand_core::Rng::fill_bytes(r, o)
);
subject!(
    "fp-shake",
    "ratchet-rng `ShakeRng`",
    ratchet_rng::ShakeRng,
    ratchet_rng::rand_core::SeedableRng::from_seed(super::iota::<136>().into()),
    |r: &mut G, o: &mut [u8]| ratchet_rng::rand_core::Rng::fill_bytes(r, o)
);
subject!(
    "fp-chacha8",
    "ratchet-rng `ChaChaKeyErasureRng` (8 rounds)",
    ratchet_rng::ChaChaKeyErasureRng,
    ratchet_rng::rand_core::SeedableRng::from_seed(super::iota::<32>()),
    |r: &mut G, o: &mut [u8]| ratchet_rng::rand_core::Rng::fill_bytes(r, o)
);
subject!(
    "fp-chacha12",
    "ratchet-rng `ChaCha12KeyErasureRng`",
    ratchet_rng::ChaCha12KeyErasureRng,
    ratchet_rng::rand_core::SeedableRng::from_seed(super::iota::<32>()),
    |r: &mut G, o: &mut [u8]| ratchet_rng::rand_core::Rng::fill_bytes(r, o)
);
subject!(
    "fp-chacha20",
    "ratchet-rng `ChaCha20KeyErasureRng`",
    ratchet_rng::ChaCha20KeyErasureRng,
    ratchet_rng::rand_core::SeedableRng::from_seed(super::iota::<32>()),
    |r: &mut G, o: &mut [u8]| ratchet_rng::rand_core::Rng::fill_bytes(r, o)
);
subject!(
    "fp-aes-ctr-pool",
    "ratchet-rng `AesCtrPoolRng`",
    ratchet_rng::AesCtrPoolRng,
    ratchet_rng::rand_core::SeedableRng::from_seed(super::iota::<32>()),
    |r: &mut G, o: &mut [u8]| ratchet_rng::rand_core::Rng::fill_bytes(r, o)
);
subject!(
    "fp-rand-chacha8",
    "rand_chacha 0.9 `ChaCha8Rng`",
    rand_chacha::ChaCha8Rng,
    rand_chacha::rand_core::SeedableRng::from_seed(super::iota::<32>()),
    |r: &mut G, o: &mut [u8]| rand_chacha::rand_core::RngCore::fill_bytes(r, o)
);
subject!(
    "fp-rand-chacha12",
    "rand_chacha 0.9 `ChaCha12Rng`",
    rand_chacha::ChaCha12Rng,
    rand_chacha::rand_core::SeedableRng::from_seed(super::iota::<32>()),
    |r: &mut G, o: &mut [u8]| rand_chacha::rand_core::RngCore::fill_bytes(r, o)
);
subject!(
    "fp-chacha20-crate-chacha8",
    "chacha20 0.10 `ChaCha8Rng`",
    chacha20::ChaCha8Rng,
    chacha20::rand_core::SeedableRng::from_seed(super::iota::<32>()),
    |r: &mut G, o: &mut [u8]| chacha20::rand_core::Rng::fill_bytes(r, o)
);
subject!(
    "fp-chacha20-crate-chacha12",
    "chacha20 0.10 `ChaCha12Rng`",
    chacha20::ChaCha12Rng,
    chacha20::rand_core::SeedableRng::from_seed(super::iota::<32>()),
    |r: &mut G, o: &mut [u8]| chacha20::rand_core::Rng::fill_bytes(r, o)
);
// AES-256-CTR keystream (RustCrypto `aes` 0.9 + `ctr` 0.10): a cipher, not a
// generator (no output buffer, no key erasure); its keystream over zeros.
subject!(
    "fp-aes-ctr-crates",
    "aes 0.9 + ctr 0.10 `Ctr128BE<Aes256>`",
    ctr::Ctr128BE<aes::Aes256>,
    ctr::cipher::KeyIvInit::new(&super::iota::<32>().into(), &[0u8; 16].into()),
    |r: &mut G, o: &mut [u8]| {
        o.fill(0);
        ctr::cipher::StreamCipher::apply_keystream(r, o)
    }
);

// RustCrypto's TurboSHAKE256 (`turboshake` 0.7, the crate's test oracle) as an
// XOF: the 136-byte seed absorbed, then its reader's output.
subject!(
    "fp-turboshake-crate",
    "turboshake 0.7 `TurboShake256Reader`",
    turboshake::TurboShake256Reader,
    {
        use turboshake::digest::{ExtendableOutput, Update};
        let mut hasher = turboshake::TurboShake256::default();
        hasher.update(&super::iota::<136>());
        hasher.finalize_xof()
    },
    |r: &mut G, o: &mut [u8]| turboshake::digest::XofReader::read(r, o)
);

/// The baseline: everything but a generator.
#[cfg(not(any(
    feature = "fp-turboshake",
    feature = "fp-shake",
    feature = "fp-chacha8",
    feature = "fp-chacha12",
    feature = "fp-chacha20",
    feature = "fp-aes-ctr-pool",
    feature = "fp-rand-chacha8",
    feature = "fp-rand-chacha12",
    feature = "fp-chacha20-crate-chacha8",
    feature = "fp-chacha20-crate-chacha12",
    feature = "fp-aes-ctr-crates",
    feature = "fp-turboshake-crate",
)))]
mod subject {
    pub const NAME: &str = "baseline (no generator)";
    /// Writes zeros.
    pub struct G(u8);
    pub fn new() -> G {
        G(0)
    }
    pub fn fill(rng: &mut G, out: &mut [u8]) {
        out.fill(core::hint::black_box(rng.0));
    }
}

/// Output measured for instructions per byte, and the size of each call.
const MEASURED_BYTES: usize = 32 * 1024;
const CALL_BYTES: usize = 256;

#[unsafe(no_mangle)]
extern "C" fn firmware_main() -> ! {
    let mut slot: Option<subject::G> = None;
    let stack_new = stack_use(&mut || slot = Some(subject::new()));
    let Some(rng) = slot.as_mut() else {
        println!("FAIL: no generator");
        exit(false)
    };
    let mut one = [0u8; 1];
    let stack_refill = stack_use(&mut || subject::fill(rng, &mut one));
    let mut buf = [0u8; CALL_BYTES];
    let count = instructions(&mut || {
        for _ in 0..MEASURED_BYTES / CALL_BYTES {
            subject::fill(rng, &mut buf);
        }
    })
    .unwrap_or(0);
    core::hint::black_box(&buf);
    let s = sections();
    println!(
        "footprint name=\"{}\" text={} rodata={} data={} bss={} size_of={} stack_new={} stack_refill={} instructions={count} bytes={MEASURED_BYTES}",
        subject::NAME,
        s.text,
        s.rodata,
        s.data,
        s.bss,
        core::mem::size_of::<subject::G>(),
        stack_new,
        stack_refill,
    );
    exit(true)
}
