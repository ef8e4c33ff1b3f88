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
//! Converting a lane costs a few dozen instructions, so a generator keeps its
//! state interleaved from one ratchet period to the next
//! ([`super::portable::keep`]; converted at construction, save and restore) and
//! converts only the rate lanes it writes out
//! ([`super::portable::squeeze_period_kept`]).

#![forbid(unsafe_code)]

use core::cell::Cell;

use zeroize::Zeroize;

use super::portable::{Lane, State, pi_source};
use super::soft::{RHO_OFFSETS, ROUND_CONSTANTS};
use super::{FULL_ROUNDS, LANES};

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
    fn to_kept(self) -> u64 {
        ((self.odd as u64) << 32) | self.even as u64
    }

    #[inline(always)]
    fn from_kept(kept: u64) -> Self {
        Self {
            even: kept as u32,
            odd: (kept >> 32) as u32,
        }
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

    #[inline(always)]
    fn round(a: &mut State<Self>, e: &mut State<Self>, rc: Self) {
        round(a, e, rc);
    }
}

/// The state as cells: the representation the round works on (see [`round`]).
type Cells = [Cell<Interleaved>; LANES];

/// `state` as cells.
#[inline(always)]
fn cells(state: &mut State<Interleaved>) -> &Cells {
    let cells: &[Cell<Interleaved>] = Cell::from_mut(&mut state[..]).as_slice_of_cells();
    match cells.try_into() {
        Ok(cells) => cells,
        Err(_) => unreachable!("a slice of a state has its length"),
    }
}

/// Word `H` of lane `i`: 0 its even bits, 1 its odd bits.
#[inline(always)]
fn word<const H: usize>(a: &Cells, i: usize) -> u32 {
    let lane = a[i].get();
    if H == 0 { lane.even } else { lane.odd }
}

/// Sets word `H` of lane `i`.
#[inline(always)]
fn set_word<const H: usize>(e: &Cells, i: usize, value: u32) {
    let mut lane = e[i].get();
    if H == 0 {
        lane.even = value;
    } else {
        lane.odd = value;
    }
    e[i].set(lane);
}

/// theta's column parity of column `X`, word `H`.
#[inline(always)]
fn column<const X: usize, const H: usize>(a: &Cells) -> u32 {
    word::<H>(a, X)
        ^ word::<H>(a, X + 5)
        ^ word::<H>(a, X + 10)
        ^ word::<H>(a, X + 15)
        ^ word::<H>(a, X + 20)
}

/// theta's effect on column `X`, from the column parities `c`: `c[X - 1] ^
/// (c[X + 1] <<< 1)`, whose even word takes the odd word of `c[X + 1]` rotated by
/// one and whose odd word takes its even word as it is.
#[inline(always)]
fn theta_effect<const X: usize>(c: &[Interleaved; 5]) -> Interleaved {
    let (left, right) = const { ((X + 4) % 5, (X + 1) % 5) };
    Interleaved {
        even: c[left].even ^ c[right].odd.rotate_left(1),
        odd: c[left].odd ^ c[right].even,
    }
}

/// Word `H` of the lane that lands at `(X, Y)` after theta, rho and pi: rotating
/// a lane by an even `2k` rotates each word by `k`; by an odd `2k + 1`, the even
/// word is the odd one rotated by `k + 1` and the odd word the even one rotated
/// by `k`.
#[inline(always)]
fn theta_rho_pi<const X: usize, const Y: usize, const H: usize>(
    a: &Cells,
    d: &[Interleaved; 5],
) -> u32 {
    let (source, column, from_odd, rotation) = const {
        let source = pi_source(X, Y);
        let offset = RHO_OFFSETS[source];
        let (from_odd, rotation) = if offset.is_multiple_of(2) {
            (H == 1, offset / 2)
        } else if H == 0 {
            (true, offset / 2 + 1)
        } else {
            (false, offset / 2)
        };
        (source, source % 5, from_odd, rotation)
    };
    let (lane, effect) = if from_odd {
        (word::<1>(a, source), d[column].odd)
    } else {
        (word::<0>(a, source), d[column].even)
    };
    (lane ^ effect).rotate_left(rotation)
}

/// Word `H` of row `Y` of the next state: theta, rho and pi of the five words it
/// is made of, then chi, and iota's `rc` (word `H`) into lane 0 (`rc` is zero
/// for the other rows). Only a half row is live at a time (five words and their
/// theta effects), which fits the 13 registers of an ARMv7-M core.
#[inline(always)]
fn half_row<const Y: usize, const H: usize>(a: &Cells, d: &[Interleaved; 5], e: &Cells, rc: u32) {
    let b0 = theta_rho_pi::<0, Y, H>(a, d);
    let b1 = theta_rho_pi::<1, Y, H>(a, d);
    let b2 = theta_rho_pi::<2, Y, H>(a, d);
    let b3 = theta_rho_pi::<3, Y, H>(a, d);
    let b4 = theta_rho_pi::<4, Y, H>(a, d);
    let y = const { 5 * Y };
    set_word::<H>(e, y, b0 ^ (!b1 & b2) ^ rc);
    set_word::<H>(e, y + 1, b1 ^ (!b2 & b3));
    set_word::<H>(e, y + 2, b2 ^ (!b3 & b4));
    set_word::<H>(e, y + 3, b3 ^ (!b4 & b0));
    set_word::<H>(e, y + 4, b4 ^ (!b0 & b1));
}

/// One round over interleaved lanes from `a` into `e`.
#[inline(always)]
fn round(a: &mut State<Interleaved>, e: &mut State<Interleaved>, rc: Interleaved) {
    round_cells(cells(a), cells(e), rc);
}

/// One round over interleaved lanes, the way XKCP's `inplace32BI` arranges it:
/// the column parities first, then the next state half row by half row (the
/// even and odd words of a lane never meet within chi), so that only about a
/// dozen words are live at a time.
///
/// The states are cells, which may alias as far as the compiler knows, and the
/// function is not inlined (where it would learn that they do not): each word
/// written into `e` forces the words of `a` that come after it to be read again.
/// With shared references the compiler would keep all 50 words of `a` read for
/// the column parities until their second use, and on a core of 13 registers
/// spill most of them to the stack and back.
#[inline(never)]
fn round_cells(a: &Cells, e: &Cells, rc: Interleaved) {
    // theta's column parities and effects go through the last row of `e`
    // (written last): each store orders the reads of `a` around it, so that a
    // column is read and summed before the next one is read.
    parity::<0>(a, e);
    parity::<1>(a, e);
    parity::<2>(a, e);
    parity::<3>(a, e);
    parity::<4>(a, e);
    let c = [
        e[20].get(),
        e[21].get(),
        e[22].get(),
        e[23].get(),
        e[24].get(),
    ];
    let d = [
        theta_effect::<0>(&c),
        theta_effect::<1>(&c),
        theta_effect::<2>(&c),
        theta_effect::<3>(&c),
        theta_effect::<4>(&c),
    ];
    half_row::<0, 0>(a, &d, e, rc.even);
    half_row::<0, 1>(a, &d, e, rc.odd);
    half_row::<1, 0>(a, &d, e, 0);
    half_row::<1, 1>(a, &d, e, 0);
    half_row::<2, 0>(a, &d, e, 0);
    half_row::<2, 1>(a, &d, e, 0);
    half_row::<3, 0>(a, &d, e, 0);
    half_row::<3, 1>(a, &d, e, 0);
    half_row::<4, 0>(a, &d, e, 0);
    half_row::<4, 1>(a, &d, e, 0);
}

/// Stores theta's column parity of column `X` in lane `(X, 4)` of `e`.
#[inline(always)]
fn parity<const X: usize>(a: &Cells, e: &Cells) {
    e[20 + X].set(Interleaved {
        even: column::<X, 0>(a),
        odd: column::<X, 1>(a),
    });
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
