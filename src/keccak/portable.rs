//! The fast portable Keccak-p\[1600\]: rounds written out over a [`Lane`] type,
//! for cores without SIMD.
//!
//! The same round serves two lane representations, chosen at compile time by
//! the parent module: plain `u64` lanes on 64-bit targets and wasm32 (whose
//! `i64` rotations are native), and the Keccak team's bit-interleaved pairs of
//! `u32` ([`super::interleaved32::Interleaved`]) on 32-bit cores, where a 64-bit
//! rotation would cost four instructions and an interleaved one costs two 32-bit
//! rotations. Each representation may arrange whole rounds and permutations its
//! own way ([`Lane::round`], [`Lane::permute`]): the `u64` lanes keep six lanes
//! inverted ([`COMPLEMENTED`]) so that chi needs 5 NOTs a round instead of 25
//! (but on aarch64, which has and-not, they run `portable_lazy.rs`),
//! and the interleaved ones carry rho's rotations lazily on 32-bit ARM at
//! opt-level 2 and 3.
//!
//! Everything that depends on a lane's position is a constant of the source: the
//! columns of theta, the lane taken by pi, its rho offset and the row of chi are
//! `const` blocks over the const parameters `X` and `Y`, so no `% 5` index and no
//! loop over lanes is left for the optimiser to unroll (or, at opt-level "s", not
//! to). A round reads one state and writes the next into another, so pi is a
//! renaming and no state is copied; two rounds go back and forth. The result is
//! checked against the specification, [`super::soft`], by the parent's tests.

#![forbid(unsafe_code)]

use zeroize::Zeroize;

use super::soft::{RHO_OFFSETS, ROUND_CONSTANTS, pi_source};
use super::{
    BLOCKS_PER_PERIOD, FULL_ROUNDS, LANES, RATCHET_PERIOD_BYTES, RATCHET_ZERO_BYTES, RATE_BYTES,
};

/// A 64-bit Keccak lane in some representation, with the operations of a round.
pub(crate) trait Lane: Copy + Default + Zeroize {
    /// The 24 round constants of Keccak-f\[1600\] in this representation.
    const ROUND_CONSTANTS: [Self; FULL_ROUNDS];

    /// The lane `lane` (bit `i` of the `u64` is bit `i` of the lane).
    fn from_u64(lane: u64) -> Self;

    /// The lane as a `u64`, the inverse of [`from_u64`](Self::from_u64).
    fn to_u64(self) -> u64;

    /// The lane packed into a `u64` as it is kept between two periods (see
    /// [`keep`]): no conversion, only a packing.
    fn to_kept(self) -> u64;

    /// The inverse of [`to_kept`](Self::to_kept).
    fn from_kept(kept: u64) -> Self;

    /// Bitwise exclusive or.
    fn xor(self, other: Self) -> Self;

    /// `!self & other`, chi's non-linear term.
    fn and_not(self, other: Self) -> Self;

    /// Rotation of the 64-bit lane left by `n` (`n < 64`); always inlined, so
    /// that `n` is a constant where it is used.
    fn rotate_left(self, n: u32) -> Self;

    /// One round (theta, rho, pi, chi, iota with constant `rc`) from `a` into
    /// `e`: [`round`] unless the representation has a better arrangement.
    #[inline(always)]
    fn round(a: &mut State<Self>, e: &mut State<Self>, rc: Self) {
        round(a, e, rc);
    }

    /// The lanes that [`permute`](Self::permute) takes and leaves inverted
    /// (lane complementing, see [`COMPLEMENTED`]): callers invert them on the
    /// way in and out ([`invert_marked`]), once a ratchet period rather than
    /// once a permutation. None by default.
    const INVERTED: &'static [usize] = &[];

    /// Keccak-p\[1600, `ROUNDS`\] of `a` (with its lanes [`INVERTED`](Self::INVERTED)
    /// inverted), using `scratch` as [`permute_with`] does: [`permute_with`]
    /// unless the representation has a better arrangement of whole
    /// permutations.
    #[inline(always)]
    fn permute<const ROUNDS: usize>(a: &mut State<Self>, scratch: &mut State<Self>) {
        permute_with::<Self, ROUNDS>(a, scratch);
    }

    /// Keccak-p\[1600, `ROUNDS`\] of `a` (with its lanes [`INVERTED`](Self::INVERTED)
    /// inverted) on its own: [`permute`](Self::permute) with a scratch state
    /// that is wiped afterwards, unless the representation needs none.
    #[inline(always)]
    fn permute_alone<const ROUNDS: usize>(a: &mut State<Self>) {
        let mut scratch = [Self::default(); LANES];
        Self::permute::<ROUNDS>(a, &mut scratch);
        wipe(&mut scratch);
    }

    /// `state` as a state of this representation, if it is the usual one
    /// (`u64` lanes as they are).
    #[inline(always)]
    fn as_state(_state: &mut [u64; LANES]) -> Option<&mut State<Self>> {
        None
    }
}

impl Lane for u64 {
    const ROUND_CONSTANTS: [Self; FULL_ROUNDS] = ROUND_CONSTANTS;

    #[inline(always)]
    fn as_state(state: &mut [u64; LANES]) -> Option<&mut State<Self>> {
        Some(state)
    }

    #[inline(always)]
    fn from_u64(lane: u64) -> Self {
        lane
    }

    #[inline(always)]
    fn to_u64(self) -> u64 {
        self
    }

    #[inline(always)]
    fn to_kept(self) -> u64 {
        self
    }

    #[inline(always)]
    fn from_kept(kept: u64) -> Self {
        kept
    }

    #[inline(always)]
    fn xor(self, other: Self) -> Self {
        self ^ other
    }

    #[inline(always)]
    fn and_not(self, other: Self) -> Self {
        !self & other
    }

    #[inline(always)]
    fn rotate_left(self, n: u32) -> Self {
        u64::rotate_left(self, n)
    }

    #[cfg(not(target_arch = "aarch64"))]
    const INVERTED: &'static [usize] = &COMPLEMENTED;

    /// On aarch64, the rounds of [`super::portable_lazy`]: rho's rotations
    /// carried in the free rotation of the logical instructions' operands, chi
    /// with `bic`, no lane complemented, and no scratch state.
    #[cfg(target_arch = "aarch64")]
    #[inline(always)]
    fn permute<const ROUNDS: usize>(a: &mut State<Self>, _scratch: &mut State<Self>) {
        super::portable_lazy::permute::<ROUNDS>(a);
    }

    #[cfg(target_arch = "aarch64")]
    #[inline(always)]
    fn permute_alone<const ROUNDS: usize>(a: &mut State<Self>) {
        super::portable_lazy::permute::<ROUNDS>(a);
    }

    /// The rounds work on a state whose lanes [`COMPLEMENTED`] are inverted
    /// (the callers see to it, [`Lane::INVERTED`]). Four rounds a
    /// loop iteration rather than two: on x86-64 (AMD Zen 5) the register
    /// allocator spills less, 5% faster at 12 and 24 rounds; all twelve
    /// written out were slower at 24 rounds.
    #[cfg(not(target_arch = "aarch64"))]
    #[inline(always)]
    fn permute<const ROUNDS: usize>(a: &mut State<Self>, scratch: &mut State<Self>) {
        const { assert!(ROUNDS >= 1 && ROUNDS <= FULL_ROUNDS) };
        let round_constants = &ROUND_CONSTANTS[FULL_ROUNDS - ROUNDS..];
        let (fours, rest) = round_constants.as_chunks::<4>();
        for rc in fours {
            round_complemented(a, scratch, rc[0]);
            round_complemented(scratch, a, rc[1]);
            round_complemented(a, scratch, rc[2]);
            round_complemented(scratch, a, rc[3]);
        }
        // Round counts that are not a multiple of four (the tests' one round).
        for &rc in rest {
            round_complemented(a, scratch, rc);
            *a = *scratch;
        }
    }
}

/// The lanes that the `u64` kernel holds inverted between rounds: the Keccak
/// team's "lane complementing" ("Keccak implementation overview", section 2.2;
/// XKCP's 64-bit code), `(1, 0), (2, 0), (3, 1), (2, 2), (2, 3), (0, 4)`.
///
/// chi's `b0 ^ (!b1 & b2)` costs a NOT for each of the 25 lanes where the core
/// has no and-not instruction (x86-64 without BMI1, WebAssembly). With these
/// lanes inverted, the operands of chi arrive inverted in a known pattern
/// (theta carries the pattern through its column parities), and each output
/// lane can be written as `x0 ^ (x1 & x2)` or `x0 ^ (x1 | x2)` of the operands
/// as they are, but for one operand per row that is inverted: 5 NOTs a round,
/// and the outputs come out inverted in the same pattern.
#[cfg(not(target_arch = "aarch64"))]
const COMPLEMENTED: [usize; 6] = [1, 2, 8, 12, 17, 20];

/// `lane` inverted.
#[inline(always)]
fn invert<L: Lane>(lane: L) -> L {
    lane.xor(L::from_u64(u64::MAX))
}

/// Inverts the lanes [`Lane::INVERTED`] of `a`: into the form of
/// [`Lane::permute`] and back. Nothing for a representation without them.
#[inline(always)]
fn invert_marked<L: Lane>(a: &mut State<L>) {
    for &i in L::INVERTED {
        a[i] = invert(a[i]);
    }
}

/// How chi computes output lane `k` of a row from the operands `b` as they
/// arrive under lane complementing: `x0 ^ (x1 & x2)`, or `x0 ^ (x1 | x2)` if
/// `or`, where `xj` is `b[k + j]`, inverted if `not[j]`.
#[cfg(not(target_arch = "aarch64"))]
#[derive(Clone, Copy)]
struct ChiForm {
    not: [bool; 3],
    or: bool,
}

/// Shorthands for the table below.
#[cfg(not(target_arch = "aarch64"))]
const fn and(not: [u8; 3]) -> ChiForm {
    ChiForm {
        not: [not[0] == 1, not[1] == 1, not[2] == 1],
        or: false,
    }
}
#[cfg(not(target_arch = "aarch64"))]
const fn or(not: [u8; 3]) -> ChiForm {
    ChiForm {
        not: [not[0] == 1, not[1] == 1, not[2] == 1],
        or: true,
    }
}

/// chi under lane complementing, row by row: the operand inverted (once) in
/// each row, and the form of each output lane. Found by trying the 16 forms on
/// each output lane's truth table, with the inversions that theta, rho and pi
/// bring to each operand (rows 0 to 4: `b0, b2, b3`; `b0, b2`; `b0, b2`; `b1,
/// b3, b4`; `b0, b3`) and those wanted at the output ([`COMPLEMENTED`]); the
/// parent's tests check the kernel against the specification.
#[cfg(not(target_arch = "aarch64"))]
const CHI_COMPLEMENTED: [(usize, [ChiForm; 5]); 5] = [
    (
        2,
        [
            or([0, 0, 0]),
            or([0, 1, 0]),
            and([0, 0, 0]),
            or([0, 0, 0]),
            and([0, 0, 0]),
        ],
    ),
    (
        4,
        [
            or([0, 0, 0]),
            and([0, 0, 0]),
            or([0, 0, 1]),
            or([0, 0, 0]),
            and([0, 0, 0]),
        ],
    ),
    (
        3,
        [
            or([0, 0, 0]),
            and([0, 0, 0]),
            and([0, 1, 0]),
            or([1, 0, 0]),
            and([0, 0, 0]),
        ],
    ),
    (
        3,
        [
            and([0, 0, 0]),
            or([0, 0, 0]),
            or([0, 1, 0]),
            and([1, 0, 0]),
            or([0, 0, 0]),
        ],
    ),
    (
        1,
        [
            and([0, 1, 0]),
            or([1, 0, 0]),
            and([0, 0, 0]),
            or([0, 0, 0]),
            and([0, 0, 0]),
        ],
    ),
];

/// [`row`] on a state under lane complementing ([`COMPLEMENTED`]).
#[cfg(not(target_arch = "aarch64"))]
#[inline(always)]
fn row_complemented<const Y: usize>(a: &State<u64>, d: &[u64; 5], e: &mut State<u64>) {
    let b = [
        theta_rho_pi::<u64, 0, Y>(a, d),
        theta_rho_pi::<u64, 1, Y>(a, d),
        theta_rho_pi::<u64, 2, Y>(a, d),
        theta_rho_pi::<u64, 3, Y>(a, d),
        theta_rho_pi::<u64, 4, Y>(a, d),
    ];
    // Constants of the source: every `if` below is resolved at compile time.
    let (inverted, forms) = const { CHI_COMPLEMENTED[Y] };
    let b_inverted = !b[inverted];
    let operand = |j: usize, not: bool| {
        debug_assert!(!not || j == inverted);
        if not { b_inverted } else { b[j] }
    };
    let chi = |k: usize| {
        let form = forms[k];
        let x0 = operand(k, form.not[0]);
        let x1 = operand((k + 1) % 5, form.not[1]);
        let x2 = operand((k + 2) % 5, form.not[2]);
        if form.or {
            x0 ^ (x1 | x2)
        } else {
            x0 ^ (x1 & x2)
        }
    };
    let y = const { 5 * Y };
    e[y] = chi(0);
    e[y + 1] = chi(1);
    e[y + 2] = chi(2);
    e[y + 3] = chi(3);
    e[y + 4] = chi(4);
}

/// [`round`] on a state under lane complementing ([`COMPLEMENTED`]): theta,
/// rho and pi are linear and the same; chi is [`row_complemented`]; iota's
/// constant goes into lane 0, which is not inverted.
#[cfg(not(target_arch = "aarch64"))]
#[inline(always)]
fn round_complemented(a: &State<u64>, e: &mut State<u64>, rc: u64) {
    let c = [
        column::<u64, 0>(a),
        column::<u64, 1>(a),
        column::<u64, 2>(a),
        column::<u64, 3>(a),
        column::<u64, 4>(a),
    ];
    let d = [
        theta_effect::<u64, 0>(&c),
        theta_effect::<u64, 1>(&c),
        theta_effect::<u64, 2>(&c),
        theta_effect::<u64, 3>(&c),
        theta_effect::<u64, 4>(&c),
    ];
    row_complemented::<0>(a, &d, e);
    row_complemented::<1>(a, &d, e);
    row_complemented::<2>(a, &d, e);
    row_complemented::<3>(a, &d, e);
    row_complemented::<4>(a, &d, e);
    e[0] ^= rc;
}

/// The state, lane `(x, y)` at index `x + 5 * y` as in the specification.
pub(crate) type State<L> = [L; LANES];

/// theta's column parity of column `X`.
#[inline(always)]
fn column<L: Lane, const X: usize>(a: &State<L>) -> L {
    a[X].xor(a[X + 5])
        .xor(a[X + 10])
        .xor(a[X + 15])
        .xor(a[X + 20])
}

/// theta's effect on column `X`, from the column parities `c`.
#[inline(always)]
fn theta_effect<L: Lane, const X: usize>(c: &[L; 5]) -> L {
    let (left, right) = const { ((X + 4) % 5, (X + 1) % 5) };
    c[left].xor(c[right].rotate_left(1))
}

/// The lane that lands at `(X, Y)` after theta, rho and pi.
#[inline(always)]
fn theta_rho_pi<L: Lane, const X: usize, const Y: usize>(a: &State<L>, d: &[L; 5]) -> L {
    let (source, column, offset) = const {
        let source = pi_source(X, Y);
        (source, source % 5, RHO_OFFSETS[source])
    };
    a[source].xor(d[column]).rotate_left(offset)
}

/// Row `Y` of the next state: theta, rho and pi of its five lanes, then chi.
#[inline(always)]
fn row<L: Lane, const Y: usize>(a: &State<L>, d: &[L; 5], e: &mut State<L>) {
    let b0 = theta_rho_pi::<L, 0, Y>(a, d);
    let b1 = theta_rho_pi::<L, 1, Y>(a, d);
    let b2 = theta_rho_pi::<L, 2, Y>(a, d);
    let b3 = theta_rho_pi::<L, 3, Y>(a, d);
    let b4 = theta_rho_pi::<L, 4, Y>(a, d);
    let y = const { 5 * Y };
    e[y] = b0.xor(b1.and_not(b2));
    e[y + 1] = b1.xor(b2.and_not(b3));
    e[y + 2] = b2.xor(b3.and_not(b4));
    e[y + 3] = b3.xor(b4.and_not(b0));
    e[y + 4] = b4.xor(b0.and_not(b1));
}

/// One round (theta, rho, pi, chi, iota with constant `rc`) from `a` into `e`.
#[inline(always)]
pub(crate) fn round<L: Lane>(a: &State<L>, e: &mut State<L>, rc: L) {
    let c = [
        column::<L, 0>(a),
        column::<L, 1>(a),
        column::<L, 2>(a),
        column::<L, 3>(a),
        column::<L, 4>(a),
    ];
    let d = [
        theta_effect::<L, 0>(&c),
        theta_effect::<L, 1>(&c),
        theta_effect::<L, 2>(&c),
        theta_effect::<L, 3>(&c),
        theta_effect::<L, 4>(&c),
    ];
    row::<L, 0>(a, &d, e);
    row::<L, 1>(a, &d, e);
    row::<L, 2>(a, &d, e);
    row::<L, 3>(a, &d, e);
    row::<L, 4>(a, &d, e);
    e[0] = e[0].xor(rc);
}

/// Keccak-p\[1600, `ROUNDS`\] of `a`, using `scratch` for every other round (it
/// is left holding an earlier state: the caller wipes it).
#[inline]
pub(crate) fn permute_with<L: Lane, const ROUNDS: usize>(a: &mut State<L>, scratch: &mut State<L>) {
    const { assert!(ROUNDS >= 1 && ROUNDS <= FULL_ROUNDS) };
    let round_constants = &L::ROUND_CONSTANTS[FULL_ROUNDS - ROUNDS..];
    let (pairs, odd) = round_constants.as_chunks::<2>();
    for pair in pairs {
        L::round(a, scratch, pair[0]);
        L::round(scratch, a, pair[1]);
    }
    if let [rc] = odd {
        L::round(a, scratch, *rc);
        *a = *scratch;
    }
}

/// `state` in the representation `L`.
#[inline(always)]
fn load<L: Lane>(state: &[u64; LANES]) -> State<L> {
    let mut a = [L::default(); LANES];
    for (lane, &word) in a.iter_mut().zip(state) {
        *lane = L::from_u64(word);
    }
    a
}

/// Writes `a` back to `state` and wipes `a`.
#[inline(always)]
fn store<L: Lane>(a: &mut State<L>, state: &mut [u64; LANES]) {
    for (word, lane) in state.iter_mut().zip(a.iter()) {
        *word = lane.to_u64();
    }
    a.zeroize();
}

/// Keccak-p\[1600, `ROUNDS`\] of `state`, through the representation `L`.
pub(crate) fn permute<L: Lane, const ROUNDS: usize>(state: &mut [u64; LANES]) {
    if let Some(lanes) = L::as_state(state) {
        // The usual representation: in place, with no copy to wipe.
        invert_marked(lanes);
        L::permute_alone::<ROUNDS>(lanes);
        invert_marked(lanes);
        return;
    }
    let mut a = load::<L>(state);
    let mut scratch = [L::default(); LANES];
    invert_marked(&mut a);
    L::permute::<ROUNDS>(&mut a, &mut scratch);
    invert_marked(&mut a);
    store(&mut a, state);
    scratch.zeroize();
}

/// Converts `state` to the form kept between periods: each lane in `L`, packed
/// by [`Lane::to_kept`]. A generator keeps its state so, and the conversion is
/// paid at construction and on save and restore, not once per period.
pub(crate) fn keep<L: Lane>(state: &mut [u64; LANES]) {
    for word in state.iter_mut() {
        *word = L::from_u64(*word).to_kept();
    }
}

/// The inverse of [`keep`].
pub(crate) fn unkeep<L: Lane>(state: &mut [u64; LANES]) {
    for word in state.iter_mut() {
        *word = L::from_kept(*word).to_u64();
    }
}

/// One ratchet period (see [`super::squeeze_period`]) of a state in the usual
/// form.
pub(crate) fn squeeze_period<L: Lane, const ROUNDS: usize>(
    state: &mut [u64; LANES],
    out: &mut [u8; RATCHET_PERIOD_BYTES],
) {
    keep::<L>(state);
    squeeze_period_kept::<L, ROUNDS>(state, out);
    unkeep::<L>(state);
}

/// One ratchet period of a state in the form of [`keep`]: it stays in `L` for
/// the 9 permutations; each rate block is converted as it is written.
pub(crate) fn squeeze_period_kept<L: Lane, const ROUNDS: usize>(
    state: &mut [u64; LANES],
    out: &mut [u8; RATCHET_PERIOD_BYTES],
) {
    const { assert!(RATE_BYTES.is_multiple_of(8) && RATCHET_ZERO_BYTES.is_multiple_of(8)) };
    let mut a = [L::default(); LANES];
    for (lane, &word) in a.iter_mut().zip(state.iter()) {
        *lane = L::from_kept(word);
    }
    // The whole period in the form of `L::permute` (some lanes inverted).
    invert_marked(&mut a);
    let mut scratch = [L::default(); LANES];
    let (blocks, _) = out.as_chunks_mut::<RATE_BYTES>();
    debug_assert_eq!(blocks.len(), BLOCKS_PER_PERIOD);
    for block in blocks {
        let (words, _) = block.as_chunks_mut::<8>();
        for (bytes, lane) in words.iter_mut().zip(a.iter()) {
            *bytes = lane.to_u64().to_le_bytes();
        }
        // The inverted lanes among them, back as they are.
        for &i in L::INVERTED {
            if let Some(bytes) = words.get_mut(i) {
                *bytes = (!u64::from_le_bytes(*bytes)).to_le_bytes();
            }
        }
        L::permute::<ROUNDS>(&mut a, &mut scratch);
    }
    for lane in &mut a[..RATCHET_ZERO_BYTES / 8] {
        *lane = L::default();
    }
    for &i in L::INVERTED {
        if i < RATCHET_ZERO_BYTES / 8 {
            a[i] = invert(a[i]);
        }
    }
    L::permute::<ROUNDS>(&mut a, &mut scratch);
    invert_marked(&mut a);
    for (word, lane) in state.iter_mut().zip(a.iter()) {
        *word = lane.to_kept();
    }
    wipe(&mut a);
    wipe(&mut scratch);
}

/// Zeroizes a state row by row, each row's five lanes written out: the loop the
/// compiler makes of `zeroize` on 25 lanes costs three times the stores at
/// opt-level "s".
#[inline(always)]
fn wipe<L: Lane>(a: &mut State<L>) {
    let (rows, _) = a.as_chunks_mut::<5>();
    for row in rows {
        row[0].zeroize();
        row[1].zeroize();
        row[2].zeroize();
        row[3].zeroize();
        row[4].zeroize();
    }
}
