//! Keccak-p\[1600\]: the permutation, the sponge, and the sponge generators' refill.
//!
//! This parent module is the only place that selects a backend; the backends live
//! in `keccak/`, one file each. Today there is the portable [`soft`] backend (also
//! the specification the others are tested against); SIMD backends plug into
//! [`squeeze_period`]'s `match`.

pub(crate) mod soft;

use crate::backend::KeccakBackend;
pub(crate) use soft::{FULL_ROUNDS, LANES, Sponge};

/// Rate of SHAKE256 and TurboSHAKE256, in bytes (capacity 512 bits).
pub(crate) const RATE_BYTES: usize = 136;

/// Rate blocks squeezed per ratchet period of the sponge generators.
pub(crate) const BLOCKS_PER_PERIOD: usize = 8;

/// Output bytes between two ratchets of the sponge generators: 8 rate blocks.
pub(crate) const RATCHET_PERIOD_BYTES: usize = RATE_BYTES * BLOCKS_PER_PERIOD;

/// Bytes of state zeroed by a ratchet (the first four lanes).
pub(crate) const RATCHET_ZERO_BYTES: usize = 32;

/// One ratchet period of a sponge generator.
///
/// On entry `state` is ready to be read (just permuted). Each of the 8 rate blocks
/// is written to `out` and the state is permuted after it is read; then the
/// ratchet zeroes the first [`RATCHET_ZERO_BYTES`] of the state and permutes once
/// more, so the state no longer determines the bytes just written.
pub(crate) fn squeeze_period<const ROUNDS: usize>(
    backend: KeccakBackend,
    state: &mut [u64; LANES],
    out: &mut [u8; RATCHET_PERIOD_BYTES],
) {
    match backend {
        KeccakBackend::Soft => squeeze_period_soft::<ROUNDS>(state, out),
    }
}

fn squeeze_period_soft<const ROUNDS: usize>(
    state: &mut [u64; LANES],
    out: &mut [u8; RATCHET_PERIOD_BYTES],
) {
    let (blocks, _) = out.as_chunks_mut::<RATE_BYTES>();
    for block in blocks {
        soft::write_rate(state, block);
        soft::keccak_p1600::<ROUNDS>(state);
    }
    ratchet::<ROUNDS>(state);
}

/// Zeroes the first [`RATCHET_ZERO_BYTES`] of the state and permutes.
fn ratchet<const ROUNDS: usize>(state: &mut [u64; LANES]) {
    state[..RATCHET_ZERO_BYTES / 8].fill(0);
    soft::keccak_p1600::<ROUNDS>(state);
}
