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

use super::portable::{Lane, State, permute_with};
use super::soft::pi_source;
use super::soft::{RHO_OFFSETS, ROUND_CONSTANTS};
use super::{FULL_ROUNDS, LANES};

/// A lane as its even-numbered and odd-numbered bits. `repr(C)`: the even word,
/// then the odd word, as the assembly kernel (`arm_thumb2.rs`) reads a state.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
#[repr(C)]
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

/// One step of a bit permutation of the 64 bits of a word pair: swaps the bits
/// of `hi` selected by `mask` with those of `lo` `shift` places above them (the
/// "swap-move" of bitsliced code; Hacker's Delight, 2nd ed., section 7-2, across
/// two words). Four instructions on ARMv7-M, whose `eor` shifts an operand.
#[inline(always)]
const fn swap_move(lo: u32, hi: u32, mask: u32, shift: u32) -> (u32, u32) {
    let t = (hi ^ (lo >> shift)) & mask;
    (lo ^ (t << shift), hi ^ t)
}

/// Swaps the high half of `lo` with the low half of `hi`: [`swap_move`] by 16,
/// which ARMv7E-M does in two instructions (`pkhbt`, `pkhtb`).
#[inline(always)]
const fn swap_halves(lo: u32, hi: u32) -> (u32, u32) {
    ((lo & 0xFFFF) | (hi << 16), (lo >> 16) | (hi & 0xFFFF_0000))
}

/// Bit `i` of the 64-bit pair `(lo, hi)` (`i` < 32 in `lo`) to bit `2i` of the
/// result if `i` < 32 and to bit `2(i - 32) + 1` otherwise: from the even and
/// odd bits of a lane to the lane. The bit positions have six index bits, and
/// the permutation rotates them (bit 5, which word, becomes bit 0; bits 0..4
/// move up one): five transpositions of index bits, each with bit 5, so each
/// is one swap between the two words (the cycle written as a star): bit 5 with
/// bit 0, then with 1, 2, 3 and 4. The masks select the bits whose position
/// has bit `j` clear.
#[inline(always)]
const fn interleave(even: u32, odd: u32) -> (u32, u32) {
    let (lo, hi) = swap_move(even, odd, 0x5555_5555, 1);
    let (lo, hi) = swap_move(lo, hi, 0x3333_3333, 2);
    let (lo, hi) = swap_move(lo, hi, 0x0F0F_0F0F, 4);
    let (lo, hi) = swap_move(lo, hi, 0x00FF_00FF, 8);
    swap_halves(lo, hi)
}

/// The inverse of [`interleave`]: the same swaps in the reverse order.
#[inline(always)]
const fn deinterleave(lo: u32, hi: u32) -> (u32, u32) {
    let (even, odd) = swap_halves(lo, hi);
    let (even, odd) = swap_move(even, odd, 0x00FF_00FF, 8);
    let (even, odd) = swap_move(even, odd, 0x0F0F_0F0F, 4);
    let (even, odd) = swap_move(even, odd, 0x3333_3333, 2);
    swap_move(even, odd, 0x5555_5555, 1)
}

impl Interleaved {
    /// The lane `lane`, interleaved.
    #[inline(always)]
    const fn new(lane: u64) -> Self {
        let (even, odd) = deinterleave(lane as u32, (lane >> 32) as u32);
        Self { even, odd }
    }

    /// The lane as a `u64`.
    #[inline(always)]
    const fn lane(self) -> u64 {
        let (low, high) = interleave(self.even, self.odd);
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

    #[inline(always)]
    fn permute<const ROUNDS: usize>(a: &mut State<Self>, scratch: &mut State<Self>) {
        // Compile-time choices: the build's opt-level and the round count.
        if cfg!(ratchet_rng_keccak_lazy) && ROUNDS.is_multiple_of(lazy::LAZY_ROUNDS) {
            super::interleaved_lazy_permute::<ROUNDS>(a, scratch);
        } else {
            permute_with::<Self, ROUNDS>(a, scratch);
        }
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
        let (word, rotation) = rho_pi_word(X, Y, H);
        (word / 2, word / 2 % 5, word % 2 == 1, rotation)
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

/// The word of the state before rho and pi that word `h` of lane `(x, y)` is
/// taken from, and the rotation of that word (see [`theta_rho_pi`]).
const fn rho_pi_word(x: usize, y: usize, h: usize) -> (usize, u32) {
    let source = pi_source(x, y);
    let offset = RHO_OFFSETS[source];
    let (from_odd, rotation) = if offset.is_multiple_of(2) {
        (h == 1, offset / 2)
    } else if h == 0 {
        (true, offset / 2 + 1)
    } else {
        (false, offset / 2)
    };
    (2 * source + from_odd as usize, rotation % 32)
}

/// The lazy kernel ([`lazy::permute_lazy`]): the rounds written out with rho
/// carried in the operand shifter. On Thumb-2 cores its rounds run as assembly
/// (`arm_thumb2.rs`, `keccak.rs` chooses) and it is their reference, tested
/// against the specification on the host; there the build has no caller of it.
#[cfg_attr(
    all(ratchet_rng_arm_thumb2, ratchet_rng_keccak_lazy),
    allow(dead_code, reason = "arm_thumb2.rs runs the lazy rounds")
)]
pub(super) mod lazy {
    use super::*;

    /// Rounds in one written-out block of the lazy kernel ([`permute_lazy`]).
    pub(super) const LAZY_ROUNDS: usize = 12;

    /// Words of a state: word `2 * i + h` is half `h` (0 even, 1 odd) of lane `i`.
    const WORDS: usize = 2 * LANES;

    /// The left rotation that takes a word held in frame `from` to frame `to` (see
    /// [`FRAMES`]).
    const fn reframe(from: u32, to: u32) -> u32 {
        (from + 32 - to) % 32
    }

    /// The frames of the lazy kernel: before round `r` of a block ([`lazy_round`]),
    /// word `w` of the state is held rotated, its value being the held word rotated
    /// left by `FRAMES[r][w]`.
    ///
    /// The Keccak team's "lazy rotation" (XKCP's ARMv7-M code): rho is never
    /// computed. A rotation in the source becomes an amount of the next instruction
    /// that reads the word, which ARM's barrel shifter applies for free (`eor r0, r1,
    /// r2, ror #n`, `bic r0, r1, r2, ror #n`); only the frame of each word changes.
    /// Every operation takes its operands into the frame of one of them, and its
    /// result is held in that frame. After the block's last round every word is back
    /// in frame 0, so that a block of 12 rounds starts and ends in the usual form.
    const FRAMES: [[u32; WORDS]; LAZY_ROUNDS + 1] = {
        let mut frames = [[0; WORDS]; LAZY_ROUNDS + 1];
        let mut r = 0;
        while r + 1 < LAZY_ROUNDS {
            let mut w = 0;
            while w < WORDS {
                let (lane, h) = (w / 2, w % 2);
                frames[r + 1][w] = chi_input_frame(&frames[r], lane % 5, lane / 5, h);
                w += 1;
            }
            r += 1;
        }
        frames
    };

    /// The frame in which word `h` of lane `(x, y)` enters chi: that of the word it
    /// comes from, plus its rho rotation. chi's result is held in the same frame.
    const fn chi_input_frame(frames: &[u32; WORDS], x: usize, y: usize, h: usize) -> u32 {
        let (source, rotation) = rho_pi_word(x, y, h);
        (frames[source] + rotation) % 32
    }

    /// theta's column parity of column `X`, word `H`, before round `R`: in the
    /// frame of the column's first word.
    #[inline(always)]
    fn lazy_column<const R: usize, const X: usize, const H: usize>(a: &Cells) -> u32 {
        let [r1, r2, r3, r4] = const {
            let f = &FRAMES[R];
            let base = f[2 * X + H];
            [
                reframe(f[2 * (X + 5) + H], base),
                reframe(f[2 * (X + 10) + H], base),
                reframe(f[2 * (X + 15) + H], base),
                reframe(f[2 * (X + 20) + H], base),
            ]
        };
        word::<H>(a, X)
            ^ word::<H>(a, X + 5).rotate_left(r1)
            ^ word::<H>(a, X + 10).rotate_left(r2)
            ^ word::<H>(a, X + 15).rotate_left(r3)
            ^ word::<H>(a, X + 20).rotate_left(r4)
    }

    /// [`parity`] before round `R`.
    #[inline(always)]
    fn lazy_parity<const R: usize, const X: usize>(a: &Cells, e: &Cells) {
        e[20 + X].set(Interleaved {
            even: lazy_column::<R, X, 0>(a),
            odd: lazy_column::<R, X, 1>(a),
        });
    }

    /// [`theta_effect`] before round `R`, from parities in their frames: each word
    /// in the frame of the parity of column `X - 1`.
    #[inline(always)]
    fn lazy_theta_effect<const R: usize, const X: usize>(c: &[Interleaved; 5]) -> Interleaved {
        let (left, right) = const { ((X + 4) % 5, (X + 1) % 5) };
        let (to_even, to_odd) = const {
            let (left, right) = ((X + 4) % 5, (X + 1) % 5);
            let f = &FRAMES[R];
            (
                (reframe(f[2 * right + 1], f[2 * left]) + 1) % 32,
                reframe(f[2 * right], f[2 * left + 1]),
            )
        };
        Interleaved {
            even: c[left].even ^ c[right].odd.rotate_left(to_even),
            odd: c[left].odd ^ c[right].even.rotate_left(to_odd),
        }
    }

    /// Word `H` of the lane that lands at `(X, Y)` after theta, rho and pi in round
    /// `R`, held in the frame [`chi_input_frame`]: theta's effect is taken into the
    /// frame of the word, and rho's rotation only changes the frame.
    #[inline(always)]
    fn lazy_theta_rho_pi<const R: usize, const X: usize, const Y: usize, const H: usize>(
        a: &Cells,
        d: &[Interleaved; 5],
    ) -> u32 {
        let (lane, half, effect_rotation) = const {
            let (source, _) = rho_pi_word(X, Y, H);
            let (lane, half) = (source / 2, source % 2);
            // The effects are in the frames of the parities (lazy_theta_effect).
            let effect_frame = FRAMES[R][2 * ((lane % 5 + 4) % 5) + half];
            (lane, half, reframe(effect_frame, FRAMES[R][source]))
        };
        if half == 0 {
            word::<0>(a, lane) ^ d[lane % 5].even.rotate_left(effect_rotation)
        } else {
            word::<1>(a, lane) ^ d[lane % 5].odd.rotate_left(effect_rotation)
        }
    }

    /// [`half_row`] in round `R`: chi takes its operands into each other's frames,
    /// `b0 ^ (!b1 & b2)` as one `bic` in the frame of `b2` and one `eor` into the
    /// frame of `b0`, and the result is held in the frame of `FRAMES[R + 1]` (that
    /// of `b0`, but 0 after the last round of a block).
    #[inline(always)]
    fn lazy_half_row<const R: usize, const Y: usize, const H: usize>(
        a: &Cells,
        d: &[Interleaved; 5],
        e: &Cells,
        rc: u32,
    ) {
        let b = [
            lazy_theta_rho_pi::<R, 0, Y, H>(a, d),
            lazy_theta_rho_pi::<R, 1, Y, H>(a, d),
            lazy_theta_rho_pi::<R, 2, Y, H>(a, d),
            lazy_theta_rho_pi::<R, 3, Y, H>(a, d),
            lazy_theta_rho_pi::<R, 4, Y, H>(a, d),
        ];
        // For each output word k: the rotations taking b[k + 1] into the frame of
        // b[k + 2], the and-not into the frame of b[k], and the result into its
        // frame after the round; then the round constant's rotation into lane 0's.
        let (rotations, rc_rotation) = const {
            let mut fb = [0; 5];
            let mut x = 0;
            while x < 5 {
                fb[x] = chi_input_frame(&FRAMES[R], x, Y, H);
                x += 1;
            }
            let mut rotations = [[0; 3]; 5];
            let mut k = 0;
            while k < 5 {
                let (k1, k2) = ((k + 1) % 5, (k + 2) % 5);
                let out = FRAMES[R + 1][2 * (5 * Y + k) + H];
                rotations[k] = [
                    reframe(fb[k1], fb[k2]),
                    reframe(fb[k2], fb[k]),
                    reframe(fb[k], out),
                ];
                k += 1;
            }
            (rotations, reframe(0, FRAMES[R + 1][2 * (5 * Y) + H]))
        };
        let chi = |k: usize| {
            let [to_b2, to_b0, to_out] = rotations[k];
            let and_not = b[(k + 2) % 5] & !b[(k + 1) % 5].rotate_left(to_b2);
            (b[k] ^ and_not.rotate_left(to_b0)).rotate_left(to_out)
        };
        let y = const { 5 * Y };
        set_word::<H>(e, y, chi(0) ^ rc.rotate_left(rc_rotation));
        set_word::<H>(e, y + 1, chi(1));
        set_word::<H>(e, y + 2, chi(2));
        set_word::<H>(e, y + 3, chi(3));
        set_word::<H>(e, y + 4, chi(4));
    }

    /// Round `R` of a block of the lazy kernel from `a` into `e`: [`round_cells`]
    /// with every word held in its frame of [`FRAMES`]. One function per round, as
    /// the frames differ from round to round.
    #[inline(never)]
    fn lazy_round<const R: usize>(a: &Cells, e: &Cells, rc: Interleaved) {
        lazy_parity::<R, 0>(a, e);
        lazy_parity::<R, 1>(a, e);
        lazy_parity::<R, 2>(a, e);
        lazy_parity::<R, 3>(a, e);
        lazy_parity::<R, 4>(a, e);
        let c = [
            e[20].get(),
            e[21].get(),
            e[22].get(),
            e[23].get(),
            e[24].get(),
        ];
        let d = [
            lazy_theta_effect::<R, 0>(&c),
            lazy_theta_effect::<R, 1>(&c),
            lazy_theta_effect::<R, 2>(&c),
            lazy_theta_effect::<R, 3>(&c),
            lazy_theta_effect::<R, 4>(&c),
        ];
        lazy_half_row::<R, 0, 0>(a, &d, e, rc.even);
        lazy_half_row::<R, 0, 1>(a, &d, e, rc.odd);
        lazy_half_row::<R, 1, 0>(a, &d, e, 0);
        lazy_half_row::<R, 1, 1>(a, &d, e, 0);
        lazy_half_row::<R, 2, 0>(a, &d, e, 0);
        lazy_half_row::<R, 2, 1>(a, &d, e, 0);
        lazy_half_row::<R, 3, 0>(a, &d, e, 0);
        lazy_half_row::<R, 3, 1>(a, &d, e, 0);
        lazy_half_row::<R, 4, 0>(a, &d, e, 0);
        lazy_half_row::<R, 4, 1>(a, &d, e, 0);
    }

    /// Keccak-p\[1600, `ROUNDS`\] (a multiple of 12) of `a`, in blocks of 12
    /// written-out rounds with lazy rotation ([`FRAMES`]); `scratch` as in
    /// [`permute_with`]. Chosen on 32-bit ARM at opt-level 2 and 3
    /// (`cfg(ratchet_rng_keccak_lazy)`, build.rs): on an ARMv7-M core, whose `eor`
    /// and `bic` rotate an operand for free, it saves rho's four dozen rotations a
    /// round (465 -> 414 instructions), for some 15 KiB of code. Not on cores
    /// without that shifter (RV32: each carried rotation would cost three
    /// instructions). On Thumb-2 cores (`cfg(ratchet_rng_arm_thumb2)`) the same
    /// rounds run as assembly (`arm_thumb2.rs`, about 350 instructions a round;
    /// `keccak.rs` chooses), and this kernel is their reference here, tested
    /// against the specification.
    pub(in crate::keccak) fn permute_lazy<const ROUNDS: usize>(
        a: &mut State<Interleaved>,
        scratch: &mut State<Interleaved>,
    ) {
        // Not a `const` assertion: the function is instantiated, unused, for every
        // round count of [`Lane::permute`]. Decided at compile time all the same.
        assert!(ROUNDS.is_multiple_of(LAZY_ROUNDS), "whole blocks of rounds");
        let (a, e) = (cells(a), cells(scratch));
        let round_constants = &<Interleaved as Lane>::ROUND_CONSTANTS[FULL_ROUNDS - ROUNDS..];
        let (blocks, _) = round_constants.as_chunks::<LAZY_ROUNDS>();
        for rc in blocks {
            lazy_round::<0>(a, e, rc[0]);
            lazy_round::<1>(e, a, rc[1]);
            lazy_round::<2>(a, e, rc[2]);
            lazy_round::<3>(e, a, rc[3]);
            lazy_round::<4>(a, e, rc[4]);
            lazy_round::<5>(e, a, rc[5]);
            lazy_round::<6>(a, e, rc[6]);
            lazy_round::<7>(e, a, rc[7]);
            lazy_round::<8>(a, e, rc[8]);
            lazy_round::<9>(e, a, rc[9]);
            lazy_round::<10>(a, e, rc[10]);
            lazy_round::<11>(e, a, rc[11]);
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

    /// The lazy kernel against the specification, whatever the build selects.
    #[test]
    fn lazy_rotation_matches_spec() {
        let mut lane = 0x0123_4567_89AB_CDEF_u64;
        for _ in 0..8 {
            let state: [u64; LANES] = core::array::from_fn(|i| {
                lane = lane.rotate_left(7).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ i as u64;
                lane
            });
            let mut expected12 = state;
            crate::keccak::soft::keccak_p1600::<12>(&mut expected12);
            let mut expected24 = state;
            crate::keccak::soft::keccak_p1600::<24>(&mut expected24);
            let mut a: State<Interleaved> = core::array::from_fn(|i| Interleaved::new(state[i]));
            let mut scratch = [Interleaved::default(); LANES];
            lazy::permute_lazy::<12>(&mut a, &mut scratch);
            assert_eq!(a.map(Interleaved::lane), expected12, "12 rounds");
            let mut a: State<Interleaved> = core::array::from_fn(|i| Interleaved::new(state[i]));
            lazy::permute_lazy::<24>(&mut a, &mut scratch);
            assert_eq!(a.map(Interleaved::lane), expected24, "24 rounds");
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
