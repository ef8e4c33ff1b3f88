//! Keccak-p\[1600\] with AVX2, one lane per `xmm` register.
//!
//! The same register layout as the AVX-512 kernel (`x86_avx512.rs`): each of the
//! 25 lanes in the low 64 bits of its own register, so pi is a renaming and there
//! are no shuffles. Without `vpternlogq` and `vprolq`, a rotation is two shifts
//! and an OR and chi is `vpandn` + `vpxor`: about 190 vector operations per
//! round on three ports, against about 130 scalar ones on four, and only 16
//! `ymm`/`xmm` registers, so lanes spill. It is therefore slower than the
//! portable code on the CPUs measured (see `backend.rs`), which is why
//! `KeccakBackend::detect()` does not choose it; it is kept as a tested backend.
//!
//! The whole ratchet period (8 blocks written, 10 permutations) runs inside one
//! `#[target_feature]` function; the state is read from and written back to
//! memory once per period.

use core::arch::x86_64::{
    __m128i, _mm_andnot_si128, _mm_cvtsi64_si128, _mm_cvtsi128_si64, _mm_or_si128,
    _mm_setzero_si128, _mm_sll_epi64, _mm_srl_epi64, _mm_xor_si128,
};

use super::RATE_BYTES;
use super::soft::{LANES, RHO_OFFSETS};

/// The state, lane `(x, y)` in the low half of register `x + 5 * y`.
type Lanes = [__m128i; LANES];

#[inline]
#[target_feature(enable = "avx2")]
fn load(state: &[u64; LANES]) -> Lanes {
    let mut a = [_mm_setzero_si128(); LANES];
    for (reg, &lane) in a.iter_mut().zip(state) {
        *reg = _mm_cvtsi64_si128(lane as i64);
    }
    a
}

#[inline]
#[target_feature(enable = "avx2")]
fn store(a: &Lanes, state: &mut [u64; LANES]) {
    for (lane, reg) in state.iter_mut().zip(a) {
        *lane = _mm_cvtsi128_si64(*reg) as u64;
    }
}

/// Writes the rate (the first 17 lanes), little-endian.
#[inline]
#[target_feature(enable = "avx2")]
fn write_rate(a: &Lanes, out: &mut [u8; RATE_BYTES]) {
    for (bytes, reg) in out.chunks_exact_mut(8).zip(a) {
        bytes.copy_from_slice(&(_mm_cvtsi128_si64(*reg) as u64).to_le_bytes());
    }
}

/// Rotates the low lane left by `n` (a public constant; 0 is the identity).
#[inline]
#[target_feature(enable = "avx2")]
fn rotate_left(v: __m128i, n: u32) -> __m128i {
    if n == 0 {
        return v;
    }
    let left = _mm_sll_epi64(v, _mm_cvtsi64_si128(i64::from(n)));
    let right = _mm_srl_epi64(v, _mm_cvtsi64_si128(i64::from(64 - n)));
    _mm_or_si128(left, right)
}

/// One round, `iota ∘ chi ∘ pi ∘ rho ∘ theta`, with round constant `rc`.
#[inline]
#[target_feature(enable = "avx2")]
fn round(a: &mut Lanes, rc: u64) {
    // theta: column parities, then D[x] = C[x - 1] ^ rot(C[x + 1], 1).
    let mut c = [_mm_setzero_si128(); 5];
    for (x, cx) in c.iter_mut().enumerate() {
        let t = _mm_xor_si128(_mm_xor_si128(a[x], a[x + 5]), a[x + 10]);
        *cx = _mm_xor_si128(_mm_xor_si128(t, a[x + 15]), a[x + 20]);
    }
    let mut d = [_mm_setzero_si128(); 5];
    for (x, dx) in d.iter_mut().enumerate() {
        *dx = _mm_xor_si128(c[(x + 4) % 5], rotate_left(c[(x + 1) % 5], 1));
    }
    // theta's XOR of D, rho's rotation, and pi's move of lane (x, y) to
    // (y, 2x + 3y): pi costs nothing, it only chooses the destination register.
    let mut b = [_mm_setzero_si128(); LANES];
    for y in 0..5 {
        for x in 0..5 {
            let i = x + 5 * y;
            let t = _mm_xor_si128(a[i], d[x]);
            b[y + 5 * ((2 * x + 3 * y) % 5)] = rotate_left(t, RHO_OFFSETS[i]);
        }
    }
    // chi along each row, then iota.
    for y in 0..5 {
        for x in 0..5 {
            let not_b_and_c = _mm_andnot_si128(b[(x + 1) % 5 + 5 * y], b[(x + 2) % 5 + 5 * y]);
            a[x + 5 * y] = _mm_xor_si128(b[x + 5 * y], not_b_and_c);
        }
    }
    a[0] = _mm_xor_si128(a[0], _mm_cvtsi64_si128(rc as i64));
}

register_kernel!(features = "avx2", zero = _mm_setzero_si128());
