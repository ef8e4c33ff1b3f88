//! Keccak-p\[1600\] with AVX-512F + AVX-512VL, one lane per `xmm` register.
//!
//! A single sponge is one long dependency chain, so the kernel is built for
//! latency and port pressure rather than width: each of the 25 lanes lives in the
//! low 64 bits of its own `xmm` register (AVX-512VL gives 32 of them), which
//! makes pi a renaming of registers and leaves no shuffles at all. What AVX-512
//! adds over scalar code is the instruction set:
//!
//! - theta's five-way column parity is two `vpternlogq` (XOR3) per column, and
//!   the XOR of `D[x] = C[x-1] ^ rot(C[x+1], 1)` into a lane is one more XOR3;
//! - rho is one `vprolq` per lane (non-destructive, immediate count);
//! - chi, `a ^ (!b & c)`, is one `vpternlogq` per lane.
//!
//! That is about 90 single-cycle vector operations per round, spread over three
//! ports, against about 130 for scalar code on four.
//!
//! The whole ratchet period (8 blocks written, 10 permutations) runs inside one
//! `#[target_feature]` function with the state in registers; the state is read
//! from and written back to memory once per period.

use core::arch::x86_64::{
    __m128i, _mm_cvtsi64_si128, _mm_cvtsi128_si64, _mm_rol_epi64, _mm_rolv_epi64, _mm_set1_epi64x,
    _mm_setzero_si128, _mm_ternarylogic_epi64, _mm_xor_si128,
};

use super::RATE_BYTES;
use super::soft::{LANES, RHO_OFFSETS};

/// `vpternlogq` truth table of `a ^ b ^ c`.
const XOR3: i32 = 0x96;
/// `vpternlogq` truth table of chi's `a ^ (!b & c)`.
const CHI: i32 = 0xD2;

/// The state, lane `(x, y)` in the low half of register `x + 5 * y`.
type Lanes = [__m128i; LANES];

#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
fn load(state: &[u64; LANES]) -> Lanes {
    let mut a = [_mm_setzero_si128(); LANES];
    for (reg, &lane) in a.iter_mut().zip(state) {
        *reg = _mm_cvtsi64_si128(lane as i64);
    }
    a
}

#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
fn store(a: &Lanes, state: &mut [u64; LANES]) {
    for (lane, reg) in state.iter_mut().zip(a) {
        *lane = _mm_cvtsi128_si64(*reg) as u64;
    }
}

/// Writes the rate (the first 17 lanes), little-endian.
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
fn write_rate(a: &Lanes, out: &mut [u8; RATE_BYTES]) {
    for (bytes, reg) in out.chunks_exact_mut(8).zip(a) {
        bytes.copy_from_slice(&(_mm_cvtsi128_si64(*reg) as u64).to_le_bytes());
    }
}

/// One round, `iota ∘ chi ∘ pi ∘ rho ∘ theta`, with round constant `rc`.
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
fn round(a: &mut Lanes, rc: u64) {
    // theta: column parities, then D[x] = C[x - 1] ^ rot(C[x + 1], 1).
    let mut c = [_mm_setzero_si128(); 5];
    for (x, cx) in c.iter_mut().enumerate() {
        let t = _mm_ternarylogic_epi64::<XOR3>(a[x], a[x + 5], a[x + 10]);
        *cx = _mm_ternarylogic_epi64::<XOR3>(t, a[x + 15], a[x + 20]);
    }
    let mut c_next_rot = [_mm_setzero_si128(); 5];
    for (x, r) in c_next_rot.iter_mut().enumerate() {
        *r = _mm_rol_epi64::<1>(c[(x + 1) % 5]);
    }
    // theta's XOR of D, rho's rotation, and pi's move of lane (x, y) to
    // (y, 2x + 3y): pi costs nothing, it only chooses the destination register.
    let mut b = [_mm_setzero_si128(); LANES];
    for y in 0..5 {
        for x in 0..5 {
            let i = x + 5 * y;
            let t = _mm_ternarylogic_epi64::<XOR3>(a[i], c[(x + 4) % 5], c_next_rot[x]);
            // A constant count: LLVM emits `vprolq` with an immediate.
            let rotated = _mm_rolv_epi64(t, _mm_set1_epi64x(i64::from(RHO_OFFSETS[i])));
            b[y + 5 * ((2 * x + 3 * y) % 5)] = rotated;
        }
    }
    // chi along each row, then iota.
    for y in 0..5 {
        for x in 0..5 {
            a[x + 5 * y] = _mm_ternarylogic_epi64::<CHI>(
                b[x + 5 * y],
                b[(x + 1) % 5 + 5 * y],
                b[(x + 2) % 5 + 5 * y],
            );
        }
    }
    a[0] = _mm_xor_si128(a[0], _mm_cvtsi64_si128(rc as i64));
}

register_kernel!(features = "avx512f,avx512vl", zero = _mm_setzero_si128());
