//! Portable Keccak-p\[1600, n_r\] and sponge: the specification backend.
//!
//! Written as FIPS 202 section 3 reads: the state is 25 little-endian 64-bit lanes,
//! lane `(x, y)` at index `x + 5 * y`; a round is `iota ∘ chi ∘ pi ∘ rho ∘ theta`;
//! Keccak-p\[1600, n_r\] runs the *last* `n_r` rounds of Keccak-f\[1600\] (round
//! indices `24 - n_r ..= 23`). The round constants and rotation offsets are not
//! typed in: they are computed at compile time by FIPS 202 algorithms 5 (`rc`) and
//! 2 (the `rho` walk), so this file is checkable against the standard's text.
//!
//! Everything here is `const fn`, so hashing works in constant evaluation (a test
//! asserts a TurboSHAKE256 known answer at compile time). There is no secret-
//! dependent branch or index: every loop bound and index is public.

#![forbid(unsafe_code)]

/// Number of 64-bit lanes in the Keccak-p\[1600\] state.
pub(crate) const LANES: usize = 25;

/// Rounds of Keccak-f\[1600\] (SHA-3, SHAKE).
pub(crate) const FULL_ROUNDS: usize = 24;

/// FIPS 202 algorithm 5: the output bit `rc(t)` of the degree-8 LFSR.
const fn rc(t: usize) -> u64 {
    if t.is_multiple_of(255) {
        return 1;
    }
    // Bit k of `r` is R[k] of the specification.
    let mut r: u16 = 0b0000_0001;
    let mut i = 1;
    while i <= t % 255 {
        r <<= 1; // R = 0 || R
        let r8 = (r >> 8) & 1;
        r ^= r8 | (r8 << 4) | (r8 << 5) | (r8 << 6);
        r &= 0xFF; // Trunc_8
        i += 1;
    }
    (r & 1) as u64
}

/// FIPS 202 algorithm 6, steps 2–3: the round constant of round index `ir`.
const fn round_constant(ir: usize) -> u64 {
    let mut rc_lane = 0u64;
    let mut j = 0;
    while j <= 6 {
        rc_lane |= rc(j + 7 * ir) << ((1 << j) - 1);
        j += 1;
    }
    rc_lane
}

/// The 24 round constants of Keccak-f\[1600\], by round index.
pub(crate) const ROUND_CONSTANTS: [u64; FULL_ROUNDS] = {
    let mut table = [0u64; FULL_ROUNDS];
    let mut ir = 0;
    while ir < FULL_ROUNDS {
        table[ir] = round_constant(ir);
        ir += 1;
    }
    table
};

/// FIPS 202 algorithm 2: rho's rotation offset of each lane, by lane index.
pub(crate) const RHO_OFFSETS: [u32; LANES] = {
    let mut table = [0u32; LANES];
    let (mut x, mut y) = (1usize, 0usize);
    let mut t = 0;
    while t < 24 {
        table[x + 5 * y] = (((t + 1) * (t + 2) / 2) % 64) as u32;
        let next_y = (2 * x + 3 * y) % 5;
        x = y;
        y = next_y;
        t += 1;
    }
    table
};

/// theta: XOR each lane with the parities of two neighbouring columns.
#[inline(always)]
const fn theta(a: &mut [u64; LANES]) {
    let mut c = [0u64; 5];
    let mut x = 0;
    while x < 5 {
        c[x] = a[x] ^ a[x + 5] ^ a[x + 10] ^ a[x + 15] ^ a[x + 20];
        x += 1;
    }
    let mut x = 0;
    while x < 5 {
        let d = c[(x + 4) % 5] ^ c[(x + 1) % 5].rotate_left(1);
        let mut y = 0;
        while y < 5 {
            a[x + 5 * y] ^= d;
            y += 1;
        }
        x += 1;
    }
}

/// rho: rotate each lane by its offset.
#[inline(always)]
const fn rho(a: &mut [u64; LANES]) {
    let mut i = 0;
    while i < LANES {
        a[i] = a[i].rotate_left(RHO_OFFSETS[i]);
        i += 1;
    }
}

/// The index of the lane that pi moves to position `(x, y)`:
/// `A'[x, y] = A[(x + 3y) mod 5, x]`.
pub(crate) const fn pi_source(x: usize, y: usize) -> usize {
    (x + 3 * y) % 5 + 5 * x
}

/// pi: permute the lanes, `A'[x, y] = A[(x + 3y) mod 5, x]`.
#[inline(always)]
const fn pi(a: &mut [u64; LANES]) {
    let old = *a;
    let mut y = 0;
    while y < 5 {
        let mut x = 0;
        while x < 5 {
            a[x + 5 * y] = old[(x + 3 * y) % 5 + 5 * x];
            x += 1;
        }
        y += 1;
    }
}

/// chi: the only non-linear step, `A[x] ^= !A[x + 1] & A[x + 2]` along each row.
#[inline(always)]
const fn chi(a: &mut [u64; LANES]) {
    let mut y = 0;
    while y < 5 {
        let row = [
            a[5 * y],
            a[5 * y + 1],
            a[5 * y + 2],
            a[5 * y + 3],
            a[5 * y + 4],
        ];
        let mut x = 0;
        while x < 5 {
            a[x + 5 * y] = row[x] ^ (!row[(x + 1) % 5] & row[(x + 2) % 5]);
            x += 1;
        }
        y += 1;
    }
}

/// iota: XOR the round constant of round index `ir` into lane (0, 0).
#[inline(always)]
const fn iota(a: &mut [u64; LANES], ir: usize) {
    a[0] ^= ROUND_CONSTANTS[ir];
}

/// Keccak-p\[1600, `ROUNDS`\]: the last `ROUNDS` rounds of Keccak-f\[1600\]
/// (`ROUNDS` = 24 for SHAKE, 12 for TurboSHAKE).
#[inline]
pub(crate) const fn keccak_p1600<const ROUNDS: usize>(a: &mut [u64; LANES]) {
    const { assert!(ROUNDS >= 1 && ROUNDS <= FULL_ROUNDS) };
    let mut ir = FULL_ROUNDS - ROUNDS;
    while ir < FULL_ROUNDS {
        theta(a);
        rho(a);
        pi(a);
        chi(a);
        iota(a, ir);
        ir += 1;
    }
}

/// A Keccak sponge over Keccak-p\[1600, `ROUNDS`\] with a rate of `RATE` bytes, in
/// the byte-oriented form of FIPS 202 / RFC 9861 (domain byte, then `pad10*1`).
///
/// `pos` is the next byte of the rate to absorb into or squeeze from. Absorbing
/// permutes as soon as a block is full; squeezing permutes before reading past the
/// end of a block. It has no `Drop`: the owners (XOFs, generators) wipe it, which
/// keeps every method usable in `const` context.
///
/// No input can make it panic: between calls `pos < RATE` (it is reset to 0 as
/// soon as it reaches `RATE`), so `state[pos / 8]` is in bounds; whole lanes are
/// read from `data` / written to `out` only when at least 8 bytes remain; and no
/// byte count is kept, so any amount of input or output is fine.
#[derive(Clone)]
pub(crate) struct Sponge<const ROUNDS: usize, const RATE: usize> {
    state: [u64; LANES],
    pos: usize,
}

impl<const ROUNDS: usize, const RATE: usize> Sponge<ROUNDS, RATE> {
    /// The empty sponge (all-zero state).
    pub(crate) const fn new() -> Self {
        const { assert!(RATE.is_multiple_of(8) && RATE > 0 && RATE < 8 * LANES) };
        Self {
            state: [0; LANES],
            pos: 0,
        }
    }

    /// XORs `data` into the rate, permuting after every full block.
    pub(crate) const fn absorb(&mut self, data: &[u8]) {
        let mut rest = data;
        while !rest.is_empty() {
            rest = self.xor_in(rest);
            if self.pos == RATE {
                keccak_p1600::<ROUNDS>(&mut self.state);
                self.pos = 0;
            }
        }
    }

    /// [`absorb`](Self::absorb) with `permute` as the permutation: a faster
    /// kernel of Keccak-p\[1600, `ROUNDS`\], which must give the same result.
    pub(crate) fn absorb_with(&mut self, data: &[u8], mut permute: impl FnMut(&mut [u64; LANES])) {
        let mut rest = data;
        while !rest.is_empty() {
            rest = self.xor_in(rest);
            if self.pos == RATE {
                permute(&mut self.state);
                self.pos = 0;
            }
        }
    }

    /// XORs the first bytes of `data` into the rate, up to its end, without
    /// permuting; returns the bytes left over.
    const fn xor_in<'a>(&mut self, data: &'a [u8]) -> &'a [u8] {
        let mut i = 0;
        while i < data.len() && self.pos < RATE {
            if self.pos.is_multiple_of(8) && data.len() - i >= 8 {
                // Whole lane at a time.
                let b = [
                    data[i],
                    data[i + 1],
                    data[i + 2],
                    data[i + 3],
                    data[i + 4],
                    data[i + 5],
                    data[i + 6],
                    data[i + 7],
                ];
                self.state[self.pos / 8] ^= u64::from_le_bytes(b);
                self.pos += 8;
                i += 8;
            } else {
                self.state[self.pos / 8] ^= (data[i] as u64) << (8 * (self.pos % 8));
                self.pos += 1;
                i += 1;
            }
        }
        data.split_at(i).1
    }

    /// Ends absorbing: XORs the domain byte (which carries the first padding bit)
    /// at the current position and the final `0x80` padding bit at the end of the
    /// rate, then permutes. The sponge is then ready to squeeze from byte 0.
    pub(crate) const fn finalize(&mut self, domain: u8) {
        self.pad(domain);
        keccak_p1600::<ROUNDS>(&mut self.state);
        self.pos = 0;
    }

    /// [`finalize`](Self::finalize) with `permute` as the permutation (see
    /// [`absorb_with`](Self::absorb_with)).
    pub(crate) fn finalize_with(&mut self, domain: u8, permute: impl FnOnce(&mut [u64; LANES])) {
        self.pad(domain);
        permute(&mut self.state);
        self.pos = 0;
    }

    /// XORs the domain byte at the current position and the final padding bit.
    const fn pad(&mut self, domain: u8) {
        self.state[self.pos / 8] ^= (domain as u64) << (8 * (self.pos % 8));
        self.state[(RATE - 1) / 8] ^= 0x80 << (8 * ((RATE - 1) % 8));
    }

    /// Copies the next `out.len()` bytes of output, permuting between blocks.
    pub(crate) const fn squeeze(&mut self, out: &mut [u8]) {
        let mut i = 0;
        while i < out.len() {
            if self.pos == RATE {
                keccak_p1600::<ROUNDS>(&mut self.state);
                self.pos = 0;
            }
            if self.pos.is_multiple_of(8) && out.len() - i >= 8 {
                let b = self.state[self.pos / 8].to_le_bytes();
                let mut k = 0;
                while k < 8 {
                    out[i + k] = b[k];
                    k += 1;
                }
                self.pos += 8;
                i += 8;
            } else {
                out[i] = (self.state[self.pos / 8] >> (8 * (self.pos % 8))) as u8;
                self.pos += 1;
                i += 1;
            }
        }
    }

    /// Hands the state over to a generator: only valid right after
    /// [`finalize`](Self::finalize), when the sponge is at output byte 0. Wipes
    /// this copy.
    pub(crate) fn take_squeezing_state(&mut self) -> [u64; LANES] {
        debug_assert!(self.pos == 0);
        let state = self.state;
        self.wipe();
        state
    }

    /// Zeroes the state.
    pub(crate) fn wipe(&mut self) {
        zeroize::Zeroize::zeroize(&mut self.state);
        self.pos = 0;
    }
}

/// Writes the first `RATE` bytes of the state (its rate) to `out`, little-endian
/// (the tests' reference period; the kernels write their own).
#[cfg(test)]
#[inline(always)]
pub(crate) fn write_rate<const RATE: usize>(state: &[u64; LANES], out: &mut [u8; RATE]) {
    for (lane, bytes) in state.iter().zip(out.chunks_exact_mut(8)) {
        bytes.copy_from_slice(&lane.to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Keccak team's published round constants (keccak.team, "Keccak
    /// specifications summary"), to check the LFSR derivation above.
    #[test]
    fn round_constants_match_published_table() {
        assert_eq!(ROUND_CONSTANTS[0], 0x0000_0000_0000_0001);
        assert_eq!(ROUND_CONSTANTS[1], 0x0000_0000_0000_8082);
        assert_eq!(ROUND_CONSTANTS[2], 0x8000_0000_0000_808A);
        assert_eq!(ROUND_CONSTANTS[11], 0x0000_0000_8000_000A);
        assert_eq!(ROUND_CONSTANTS[12], 0x0000_0000_8000_808B);
        assert_eq!(ROUND_CONSTANTS[23], 0x8000_0000_8000_8008);
    }

    /// The rotation offsets table of FIPS 202 table 2.
    #[test]
    fn rho_offsets_match_fips202_table2() {
        assert_eq!(
            RHO_OFFSETS,
            [
                0, 1, 62, 28, 27, 36, 44, 6, 55, 20, 3, 10, 43, 25, 39, 41, 45, 15, 21, 8, 18, 2,
                61, 56, 14
            ]
        );
    }

    /// Keccak-f\[1600\] applied to the all-zero state, from the Keccak team's
    /// `KeccakF-1600-IntermediateValues.txt` (first and last lanes).
    #[test]
    fn keccak_f1600_of_zero_state() {
        let mut a = [0u64; LANES];
        keccak_p1600::<24>(&mut a);
        assert_eq!(a[0], 0xF125_8F79_40E1_DDE7);
        assert_eq!(a[1], 0x84D5_CCF9_33C0_478A);
        assert_eq!(a[24], 0xEAF1_FF7B_5CEC_A249);
        // Applied a second time.
        keccak_p1600::<24>(&mut a);
        assert_eq!(a[0], 0x2D5C_954D_F96E_CB3C);
        assert_eq!(a[24], 0x20D0_6CD2_6A8F_BF5C);
    }

    #[test]
    fn sponge_squeeze_is_split_invariant() {
        let mut whole = Sponge::<12, 136>::new();
        whole.absorb(b"split");
        whole.finalize(0x1F);
        let mut split = Sponge::<12, 136>::new();
        split.absorb(b"sp");
        split.absorb(b"");
        split.absorb(b"lit");
        split.finalize(0x1F);
        let mut a = [0u8; 300];
        whole.squeeze(&mut a);
        let mut b = [0u8; 300];
        for chunk in b.chunks_mut(7) {
            split.squeeze(chunk);
        }
        assert_eq!(a, b);
    }
}
