//! Bit-interleaved lanes for 32-bit cores: the Keccak team's technique of their
//! 32-bit implementations in XKCP (`inplace32BI`; "Keccak implementation
//! overview", section 2.1).
//!
//! A 64-bit lane is kept as two 32-bit words: its even-numbered bits (bit `2i` of
//! the lane is bit `i` of `even`) and its odd-numbered bits. Rotating the lane by
//! an even `2k` rotates both words by `k`; rotating it by an odd `2k + 1` moves the
//! odd bits to even positions and back: `even' = odd <<< (k + 1)`,
//! `odd' = even <<< k`. Either way a lane rotation is two 32-bit rotations (or
//! one, or none), where a `u64` rotation costs four instructions on ARMv7-M or
//! RV32. XOR, AND and NOT act on the words independently.
//!
//! Converting a lane costs a few dozen instructions, so the state is converted
//! once per ratchet period (9 permutations) and the rate lanes once per block
//! written ([`super::portable::squeeze_period`]).

#![forbid(unsafe_code)]

use zeroize::Zeroize;

use super::FULL_ROUNDS;
use super::portable::Lane;
use super::soft::ROUND_CONSTANTS;

/// A lane as its even-numbered and odd-numbered bits.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Interleaved {
    even: u32,
    odd: u32,
}

impl Zeroize for Interleaved {
    fn zeroize(&mut self) {
        self.even.zeroize();
        self.odd.zeroize();
    }
}

/// One step of a bit permutation: swaps the bits of `x` selected by `mask` with
/// those `shift` places above them (Hacker's Delight, 2nd ed., section 7-2).
#[inline(always)]
const fn swap_bits(x: u32, mask: u32, shift: u32) -> u32 {
    let t = (x ^ (x >> shift)) & mask;
    x ^ t ^ (t << shift)
}

/// Gathers the even-numbered bits of `x` into its low half and the odd-numbered
/// bits into its high half, each in order.
#[inline(always)]
const fn unshuffle(x: u32) -> u32 {
    let x = swap_bits(x, 0x2222_2222, 1);
    let x = swap_bits(x, 0x0C0C_0C0C, 2);
    let x = swap_bits(x, 0x00F0_00F0, 4);
    swap_bits(x, 0x0000_FF00, 8)
}

/// The inverse of [`unshuffle`]: the same swaps in the reverse order.
#[inline(always)]
const fn shuffle(x: u32) -> u32 {
    let x = swap_bits(x, 0x0000_FF00, 8);
    let x = swap_bits(x, 0x00F0_00F0, 4);
    let x = swap_bits(x, 0x0C0C_0C0C, 2);
    swap_bits(x, 0x2222_2222, 1)
}

impl Interleaved {
    /// The lane `lane`, interleaved.
    #[inline(always)]
    const fn new(lane: u64) -> Self {
        let low = unshuffle(lane as u32);
        let high = unshuffle((lane >> 32) as u32);
        Self {
            even: (low & 0xFFFF) | (high << 16),
            odd: (low >> 16) | (high & 0xFFFF_0000),
        }
    }

    /// The lane as a `u64`.
    #[inline(always)]
    const fn lane(self) -> u64 {
        let low = shuffle((self.even & 0xFFFF) | (self.odd << 16));
        let high = shuffle((self.even >> 16) | (self.odd & 0xFFFF_0000));
        ((high as u64) << 32) | low as u64
    }
}

impl Lane for Interleaved {
    const ROUND_CONSTANTS: [Self; FULL_ROUNDS] = {
        let mut table = [Self { even: 0, odd: 0 }; FULL_ROUNDS];
        let mut ir = 0;
        while ir < FULL_ROUNDS {
            table[ir] = Self::new(ROUND_CONSTANTS[ir]);
            ir += 1;
        }
        table
    };

    #[inline(always)]
    fn from_u64(lane: u64) -> Self {
        Self::new(lane)
    }

    #[inline(always)]
    fn to_u64(self) -> u64 {
        self.lane()
    }

    #[inline(always)]
    fn xor(self, other: Self) -> Self {
        Self {
            even: self.even ^ other.even,
            odd: self.odd ^ other.odd,
        }
    }

    #[inline(always)]
    fn and_not(self, other: Self) -> Self {
        Self {
            even: !self.even & other.even,
            odd: !self.odd & other.odd,
        }
    }

    #[inline(always)]
    fn rotate_left(self, n: u32) -> Self {
        // `n` is a constant at every use (rho's offsets, theta's 1): this branch
        // is resolved at compile time and depends on no secret.
        let half = n / 2;
        if n.is_multiple_of(2) {
            Self {
                even: self.even.rotate_left(half),
                odd: self.odd.rotate_left(half),
            }
        } else {
            Self {
                even: self.odd.rotate_left(half + 1),
                odd: self.even.rotate_left(half),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The interleaving written bit by bit.
    fn interleave_bit_by_bit(lane: u64) -> Interleaved {
        let mut i = Interleaved::default();
        for bit in 0..32 {
            i.even |= (((lane >> (2 * bit)) & 1) as u32) << bit;
            i.odd |= (((lane >> (2 * bit + 1)) & 1) as u32) << bit;
        }
        i
    }

    const SAMPLES: [u64; 6] = [
        0,
        u64::MAX,
        1,
        1 << 63,
        0x0123_4567_89AB_CDEF,
        0xF0E1_D2C3_B4A5_9687,
    ];

    #[test]
    fn interleaving_matches_bit_by_bit_and_inverts() {
        for lane in SAMPLES.into_iter().chain((0..64).map(|b| 1u64 << b)) {
            let i = Interleaved::new(lane);
            assert!(i == interleave_bit_by_bit(lane), "{lane:#018x}");
            assert_eq!(i.lane(), lane);
        }
    }

    #[test]
    fn rotation_matches_u64_rotation() {
        for lane in SAMPLES {
            for n in 0..64 {
                let rotated = Interleaved::new(lane).rotate_left(n).lane();
                assert_eq!(rotated, lane.rotate_left(n), "{lane:#018x} <<< {n}");
            }
        }
    }
}
