//! Keccak-p\[1600\] on `u64` lanes with rho's rotations carried lazily: the
//! portable kernel's permutation on aarch64, where it is the "soft" backend.
//!
//! On aarch64 the logical instructions (`eor`, `bic`, `orr`) can rotate their
//! second operand, so a lane need not be rotated on its own before it is used:
//! it can be held rotated right by a "frame" known at compile time (its true
//! value is the held one rotated left by the frame), rho then only changes the
//! frames, and every exclusive or and and-not brings its second operand into the
//! frame of its first through that rotation. The frames drift from round to
//! round, so the rounds are written out one by one, each with its own frames,
//! all computed by `const` functions from the round's position in the
//! permutation ([`frames_before`]); at the end one rotation per lane puts the
//! state back in frame 0.
//!
//! The rotated operand is free on the Neoverse cores but not on Cortex-A72 (and
//! the A57-class model LLVM uses for Cortex-A76), where a logical instruction with
//! a shifted operand takes 2 cycles on the one multi-cycle pipeline while plain
//! ones and explicit rotations go to two pipelines. Carrying every rotation
//! lazily modelled 1.2x faster than RustCrypto `keccak` 0.2's scalar code on the
//! Neoverse cores but 0.76x on Cortex-A72; so two lanes in three are still
//! rotated explicitly after theta (their frame back to 0, [`normalized`]), and
//! one in three carries its rotation, spread over rows and rounds: the mix
//! modelled at least 1.04x the peer on every gated core, at 12 and 24 rounds
//! (`scripts/aarch64-models.py`, issue 48).
//!
//! chi uses and-not (`bic`) directly, so the lanes are not complemented (the
//! parent's complementing saves NOTs that aarch64 does not need). The kernel is
//! also compiled for the tests on every target, where it is checked against the
//! specification, [`super::soft`], as it is by the parent's tests on aarch64.

#![forbid(unsafe_code)]

use super::soft::{RHO_OFFSETS, ROUND_CONSTANTS, pi_source};
use super::{FULL_ROUNDS, LANES};

/// The rotation left that brings a value held in frame `from` into frame `to`.
const fn shift(from: u32, to: u32) -> u32 {
    (64 + from - to) % 64
}

/// Whether lane `source` (its index before pi) is rotated explicitly in round
/// `round`: after theta and rho, into frame 0. Two lanes in three, a different
/// third every round (see the module's documentation for why).
const fn normalized(round: usize, source: usize) -> bool {
    !(round + source).is_multiple_of(3)
}

/// The frames of one round, from those of its input lanes `frames`.
#[derive(Clone, Copy)]
struct Plan {
    /// The frame of the held input lanes, by index (a copy of the input).
    input: [u32; LANES],
    /// The frame of each column parity: that of the column's lane in row 0.
    column: [u32; 5],
    /// The frame of theta's effect on column `x`: that of parity `x - 1`.
    effect: [u32; 5],
    /// The frame of each lane after theta and rho, by its index before pi: 0
    /// if it is [`normalized`], else its input frame (theta's effect is added in
    /// the lane's frame) plus its rho offset.
    rotated: [u32; LANES],
    /// The frame of each output lane, by index: chi writes output `(x, y)` in the
    /// frame of its first operand, the lane that pi brings to `(x, y)`.
    output: [u32; LANES],
}

/// The frames of round `round` (counted from 0), whose input lanes are in
/// `frames`.
const fn plan(round: usize, frames: [u32; LANES]) -> Plan {
    let mut column = [0; 5];
    let mut effect = [0; 5];
    let mut x = 0;
    while x < 5 {
        column[x] = frames[x];
        x += 1;
    }
    x = 0;
    while x < 5 {
        effect[x] = column[(x + 4) % 5];
        x += 1;
    }
    let mut rotated = [0; LANES];
    let mut i = 0;
    while i < LANES {
        rotated[i] = if normalized(round, i) {
            0
        } else {
            (frames[i] + RHO_OFFSETS[i]) % 64
        };
        i += 1;
    }
    let mut output = [0; LANES];
    i = 0;
    while i < LANES {
        output[i] = rotated[pi_source(i % 5, i / 5)];
        i += 1;
    }
    Plan {
        input: frames,
        column,
        effect,
        rotated,
        output,
    }
}

/// The plans of rounds 0 to 23 of a permutation, each round's input frames the
/// output frames of the round before, the first's frame 0. One `const` item,
/// evaluated once per build: every `const` block of the rounds below reads it,
/// where computing a round's frames from round 0 in each block made an aarch64
/// build of the crate take seven times as long.
const PLANS: [Plan; FULL_ROUNDS] = {
    let mut plans = [plan(0, [0; LANES]); FULL_ROUNDS];
    let mut r = 1;
    while r < FULL_ROUNDS {
        plans[r] = plan(r, plans[r - 1].output);
        r += 1;
    }
    plans
};

/// The frames of round `round` of a permutation (counted from 0), whose input
/// is in frame 0.
const fn frames_before(round: usize) -> [u32; LANES] {
    if round == 0 {
        [0; LANES]
    } else {
        PLANS[round - 1].output
    }
}

/// The plan of round `round` of a permutation.
const fn plan_of(round: usize) -> Plan {
    PLANS[round]
}

/// The parity of column `X` in round `R`, in its frame.
#[inline(always)]
fn column<const R: usize, const X: usize>(a: &[u64; LANES]) -> u64 {
    let s = const {
        let p = plan_of(R);
        let to = p.column[X];
        [
            shift(p.input[X + 5], to),
            shift(p.input[X + 10], to),
            shift(p.input[X + 15], to),
            shift(p.input[X + 20], to),
        ]
    };
    a[X] ^ a[X + 5].rotate_left(s[0])
        ^ a[X + 10].rotate_left(s[1])
        ^ a[X + 15].rotate_left(s[2])
        ^ a[X + 20].rotate_left(s[3])
}

/// theta's effect on column `X` in round `R`, `c[x - 1] ^ (c[x + 1] <<< 1)`, in
/// its frame.
#[inline(always)]
fn effect<const R: usize, const X: usize>(c: &[u64; 5]) -> u64 {
    let (left, right, s) = const {
        let p = plan_of(R);
        let (left, right) = ((X + 4) % 5, (X + 1) % 5);
        // `c[right] <<< 1` is held as `c[right]` in frame one more.
        (left, right, shift((p.column[right] + 1) % 64, p.effect[X]))
    };
    c[left] ^ c[right].rotate_left(s)
}

/// The lane that pi brings to `(X, Y)` in round `R`, after theta and rho: rho
/// is a rotation for a [`normalized`] lane, else in its frame.
#[inline(always)]
fn theta<const R: usize, const X: usize, const Y: usize>(a: &[u64; LANES], d: &[u64; 5]) -> u64 {
    let (source, column, s) = const {
        let p = plan_of(R);
        let source = pi_source(X, Y);
        let column = source % 5;
        (source, column, shift(p.effect[column], p.input[source]))
    };
    let (normalize, to_zero) = const {
        let p = plan_of(R);
        let source = pi_source(X, Y);
        (
            normalized(R, source),
            (p.input[source] + RHO_OFFSETS[source]) % 64,
        )
    };
    let t = a[source] ^ d[column].rotate_left(s);
    if normalize { t.rotate_left(to_zero) } else { t }
}

/// Output lane `(X, Y)` of chi in round `R`, `b[x] ^ (!b[x + 1] & b[x + 2])`,
/// from the row's lanes `b` after theta, rho and pi.
#[inline(always)]
fn chi<const R: usize, const X: usize, const Y: usize>(b: &[u64; 5]) -> u64 {
    let (one, two, s1, s2) = const {
        let p = plan_of(R);
        let (one, two) = ((X + 1) % 5, (X + 2) % 5);
        let [f0, f1, f2] = [
            p.rotated[pi_source(X, Y)],
            p.rotated[pi_source(one, Y)],
            p.rotated[pi_source(two, Y)],
        ];
        (one, two, shift(f1, f2), shift(f2, f0))
    };
    b[X] ^ (b[two] & !b[one].rotate_left(s1)).rotate_left(s2)
}

/// Row `Y` of the output of round `R`.
#[inline(always)]
fn row<const R: usize, const Y: usize>(a: &[u64; LANES], d: &[u64; 5], e: &mut [u64; LANES]) {
    let b = [
        theta::<R, 0, Y>(a, d),
        theta::<R, 1, Y>(a, d),
        theta::<R, 2, Y>(a, d),
        theta::<R, 3, Y>(a, d),
        theta::<R, 4, Y>(a, d),
    ];
    let y = const { 5 * Y };
    e[y] = chi::<R, 0, Y>(&b);
    e[y + 1] = chi::<R, 1, Y>(&b);
    e[y + 2] = chi::<R, 2, Y>(&b);
    e[y + 3] = chi::<R, 3, Y>(&b);
    e[y + 4] = chi::<R, 4, Y>(&b);
}

/// Round `R` (counted from 0) of Keccak-p\[1600, `ROUNDS`\], on lanes held in the
/// frames [`frames_before`]`(R)`.
#[inline(always)]
fn round<const ROUNDS: usize, const R: usize>(a: &[u64; LANES]) -> [u64; LANES] {
    let c = [
        column::<R, 0>(a),
        column::<R, 1>(a),
        column::<R, 2>(a),
        column::<R, 3>(a),
        column::<R, 4>(a),
    ];
    let d = [
        effect::<R, 0>(&c),
        effect::<R, 1>(&c),
        effect::<R, 2>(&c),
        effect::<R, 3>(&c),
        effect::<R, 4>(&c),
    ];
    let mut e = [0; LANES];
    row::<R, 0>(a, &d, &mut e);
    row::<R, 1>(a, &d, &mut e);
    row::<R, 2>(a, &d, &mut e);
    row::<R, 3>(a, &d, &mut e);
    row::<R, 4>(a, &d, &mut e);
    // iota's constant, in lane 0's frame (a round past `ROUNDS` is never run,
    // but its constant must still be a constant).
    e[0] ^= const {
        let index = FULL_ROUNDS - ROUNDS + R;
        let rc = if index < FULL_ROUNDS {
            ROUND_CONSTANTS[index]
        } else {
            0
        };
        rc.rotate_right(plan_of(R).output[0])
    };
    e
}

/// Lane `I` of a state held in the frames after `ROUNDS` rounds, back in frame 0.
#[inline(always)]
fn unframe<const ROUNDS: usize, const I: usize>(a: &[u64; LANES]) -> u64 {
    a[I].rotate_left(const { frames_before(ROUNDS)[I] })
}

/// Keccak-p\[1600, `ROUNDS`\] of `state`, every round written out. The state is
/// copied into locals (registers and the compiler's spill slots), as in the
/// parent's kernels; no scratch state is left to wipe.
#[inline(always)]
pub(crate) fn permute<const ROUNDS: usize>(state: &mut [u64; LANES]) {
    const { assert!(ROUNDS >= 1 && ROUNDS <= FULL_ROUNDS) };
    let mut a = *state;
    macro_rules! rounds {
        ($($r:literal)*) => {$(
            if $r < ROUNDS {
                a = round::<ROUNDS, $r>(&a);
            }
        )*};
    }
    rounds!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23);
    const { assert!(FULL_ROUNDS == 24) };
    macro_rules! unframe {
        ($($i:literal)*) => {$(
            state[$i] = unframe::<ROUNDS, $i>(&a);
        )*};
    }
    unframe!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keccak::soft;

    fn check<const ROUNDS: usize>() {
        let mut state = [0u64; LANES];
        for i in 0..16u64 {
            let mut want = state;
            soft::keccak_p1600::<ROUNDS>(&mut want);
            let mut got = state;
            permute::<ROUNDS>(&mut got);
            assert_eq!(got, want, "{ROUNDS} rounds, state {i}");
            // The next state: this one's output with a lane changed.
            state = want;
            state[(i as usize * 7) % LANES] ^= 0x0123_4567_89AB_CDEF_u64.rotate_left(i as u32);
        }
    }

    /// The lazy kernel against the specification, on every target.
    #[test]
    fn lazy_rotation_matches_the_specification() {
        check::<1>();
        check::<2>();
        check::<12>();
        check::<24>();
    }
}
