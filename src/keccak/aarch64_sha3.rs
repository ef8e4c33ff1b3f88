//! Keccak-p\[1600\] with the ARMv8.2 SHA3 extension, one lane per register.
//!
//! A single sponge is one long dependency chain, so the kernel is built for
//! latency: each of the 25 lanes lives in lane 0 of its own `uint64x2_t` (the
//! 32 NEON registers hold them all), which makes pi a renaming of registers and
//! leaves no shuffles. The SHA3 instructions were designed for exactly this:
//!
//! - theta's column parity is two `EOR3` per column, `D[x] = C[x-1] ^ rot(C[x+1],
//!   1)` is one `RAX1`;
//! - theta's XOR of `D` and rho's rotation are one `XAR` per lane;
//! - chi, `a ^ (!b & c)`, is one `BCAX` per lane.
//!
//! That is 66 vector operations per round. (Packing two lanes per register does
//! not pay: `XAR` takes one rotation count for both halves, and pi would then
//! need shuffles.)
//!
//! Those 66 operations are fast only where the core issues them on every
//! vector pipe, as Apple's do; Arm's own cores (Neoverse V1, V2, N2, V3, ...)
//! issue them on one, where the portable kernel is about twice as fast. So the
//! sponge generators take this kernel only on the cores of
//! `hazmat::keccak_for_aarch64_core`'s table that get it (issue 48); it stays
//! a tested backend wherever the CPU has the extension.
//!
//! The whole ratchet period (8 blocks written, 10 permutations) runs inside one
//! `#[target_feature]` function with the state in registers; the state is read
//! from and written back to memory once per period.

use core::arch::aarch64::{
    uint64x2_t, vbcaxq_u64, vdupq_n_u64, veor3q_u64, veorq_u64, vgetq_lane_u64, vrax1q_u64,
    vxarq_u64,
};

use super::RATE_BYTES;
use super::soft::{LANES, RHO_OFFSETS};

/// The state, lane `(x, y)` in lane 0 of register `x + 5 * y`.
type Lanes = [uint64x2_t; LANES];

#[inline]
#[target_feature(enable = "sha3")]
fn load(state: &[u64; LANES]) -> Lanes {
    let mut a = [vdupq_n_u64(0); LANES];
    for (reg, &lane) in a.iter_mut().zip(state) {
        *reg = vdupq_n_u64(lane);
    }
    a
}

#[inline]
#[target_feature(enable = "sha3")]
fn store(a: &Lanes, state: &mut [u64; LANES]) {
    for (lane, reg) in state.iter_mut().zip(a) {
        *lane = vgetq_lane_u64::<0>(*reg);
    }
}

/// Writes the rate (the first 17 lanes), little-endian.
#[inline]
#[target_feature(enable = "sha3")]
fn write_rate(a: &Lanes, out: &mut [u8; RATE_BYTES]) {
    for (bytes, reg) in out.chunks_exact_mut(8).zip(a) {
        bytes.copy_from_slice(&vgetq_lane_u64::<0>(*reg).to_le_bytes());
    }
}

/// theta's XOR of `D[x]` into lane `(x, y)` and rho's rotation (`XAR` rotates
/// right, so by `64 - offset`), stored where pi moves the lane: `(y, 2x + 3y)`.
/// The rotation count must be a constant, hence a macro over the 25 lanes.
macro_rules! theta_rho_pi {
    ($a:ident, $d:ident, $b:ident; $(($x:literal, $y:literal)),+ $(,)?) => {
        $(
            $b[$y + 5 * ((2 * $x + 3 * $y) % 5)] = vxarq_u64::<
                { ((64 - RHO_OFFSETS[$x + 5 * $y]) % 64) as i32 },
            >($a[$x + 5 * $y], $d[$x]);
        )+
    };
}

/// One round, `iota ∘ chi ∘ pi ∘ rho ∘ theta`, with round constant `rc`.
#[inline]
#[target_feature(enable = "sha3")]
fn round(a: &mut Lanes, rc: u64) {
    // theta: column parities, then D[x] = C[x - 1] ^ rot(C[x + 1], 1).
    let mut c = [vdupq_n_u64(0); 5];
    for (x, cx) in c.iter_mut().enumerate() {
        let t = veor3q_u64(a[x], a[x + 5], a[x + 10]);
        *cx = veor3q_u64(t, a[x + 15], a[x + 20]);
    }
    let mut d = [vdupq_n_u64(0); 5];
    for (x, dx) in d.iter_mut().enumerate() {
        *dx = vrax1q_u64(c[(x + 4) % 5], c[(x + 1) % 5]);
    }
    let mut b = [vdupq_n_u64(0); LANES];
    theta_rho_pi!(a, d, b;
        (0, 0), (1, 0), (2, 0), (3, 0), (4, 0),
        (0, 1), (1, 1), (2, 1), (3, 1), (4, 1),
        (0, 2), (1, 2), (2, 2), (3, 2), (4, 2),
        (0, 3), (1, 3), (2, 3), (3, 3), (4, 3),
        (0, 4), (1, 4), (2, 4), (3, 4), (4, 4),
    );
    // chi along each row (`BCAX(n, m, a) = n ^ (m & !a)`), then iota.
    for y in 0..5 {
        for x in 0..5 {
            a[x + 5 * y] = vbcaxq_u64(b[x + 5 * y], b[(x + 2) % 5 + 5 * y], b[(x + 1) % 5 + 5 * y]);
        }
    }
    a[0] = veorq_u64(a[0], vdupq_n_u64(rc));
}

register_kernel!(features = "sha3", zero = vdupq_n_u64(0));
