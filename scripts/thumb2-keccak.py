#!/usr/bin/env python3
"""Writes src/keccak/arm_thumb2.rs: twelve rounds of Keccak-p[1600] on
bit-interleaved lanes (src/keccak/interleaved32.rs) as Thumb-2 assembly, with
rho carried lazily in the operand shifter.

    python3 scripts/thumb2-keccak.py > src/keccak/arm_thumb2.rs
    cargo fmt

The script computes the frames of the lazy kernel (`FRAMES` of
interleaved32.rs, by the same rule), writes out the instructions of every
round, runs them in a small simulator of the instructions it uses on random
states against a Keccak-p[1600] written here from FIPS 202, and only then
prints the file. Deterministic: no search, no randomness in the output.
"""
import random
import sys

ROUNDS = 12
LANES = 25
WORDS = 2 * LANES


def rho_offsets():
    table = [0] * LANES
    x, y = 1, 0
    for t in range(24):
        table[x + 5 * y] = ((t + 1) * (t + 2) // 2) % 64
        x, y = y, (2 * x + 3 * y) % 5
    return table


RHO = rho_offsets()


def round_constants():
    def rc_bit(t):
        if t % 255 == 0:
            return 1
        r = 1
        for _ in range(t % 255):
            r <<= 1
            if r & 0x100:
                r ^= 0x171
        return r & 1

    table = []
    for ir in range(24):
        rc = 0
        for j in range(7):
            rc |= rc_bit(j + 7 * ir) << ((1 << j) - 1)
        table.append(rc)
    return table


RC = round_constants()


def pi_source(x, y):
    """The lane that pi moves to (x, y): A'[x, y] = A[(x + 3y) mod 5, x]."""
    return (x + 3 * y) % 5 + 5 * x


def rho_pi_word(x, y, h):
    """interleaved32.rs's `rho_pi_word`: the word (2 * lane + half) that word h
    of lane (x, y) takes after rho and pi, and its rotation."""
    source = pi_source(x, y)
    offset = RHO[source]
    if offset % 2 == 0:
        from_odd, rotation = h == 1, offset // 2
    elif h == 0:
        from_odd, rotation = True, offset // 2 + 1
    else:
        from_odd, rotation = False, offset // 2
    return 2 * source + int(from_odd), rotation % 32


def reframe(frm, to):
    return (frm + 32 - to) % 32


def chi_input_frame(frames, x, y, h):
    source, rotation = rho_pi_word(x, y, h)
    return (frames[source] + rotation) % 32


def lazy_frames():
    """interleaved32.rs's `FRAMES`: before round r, word w is held rotated
    right by frames[r][w] (its value is the held word rotated left by it)."""
    frames = [[0] * WORDS for _ in range(ROUNDS + 1)]
    for r in range(ROUNDS - 1):
        for w in range(WORDS):
            lane, h = w // 2, w % 2
            frames[r + 1][w] = chi_input_frame(frames[r], lane % 5, lane // 5, h)
    return frames


FRAMES = lazy_frames()

# Registers: r0 the state (`a`), r1 the scratch state, r2 the round constants;
# r3-r12 and lr for values.
A, S, RCP = "r0", "r1", "r2"
STACK = 60  # theta's even parities (5 words) and effects (10 words)
C_EVEN = 0
D_BASE = 20


def d_offset(x, h):
    return D_BASE + 4 * (2 * x + h)


def paired(lane, h):
    """Byte offset of word h of a lane in a state of `Interleaved` pairs."""
    return 4 * (2 * lane + h)


def planar(lane, h):
    """Byte offset in the scratch layout: the 25 even words, then the 25 odd."""
    return 4 * (25 * h + lane)


def ror(n):
    """The `ror` amount that rotates left by n (None: no shift)."""
    n %= 32
    return None if n == 0 else 32 - n


class Code:
    def __init__(self):
        self.ops = []

    def emit(self, *op, comment=None):
        self.ops.append((op, comment))


def parity(code, r, src, is_paired):
    """theta's column parities before round r into C (even on the stack, odd in
    r3-r7, even again in r8-r12), each in the frame of its column's row-0 word;
    then its effects D on the stack."""
    f = FRAMES[r]
    acc = ["r3", "r4", "r5", "r6", "r7"]
    tmp = ["r8", "r9", "r10", "r11", "r12"]
    for h in (0, 1):
        if is_paired:
            for x in range(5):
                code.emit("ldr", acc[x], src, paired(x, h))
            for y in range(1, 5):
                for x in range(5):
                    code.emit("ldr", "lr", src, paired(x + 5 * y, h))
                    code.emit("eor", acc[x], acc[x], "lr", None)
        else:
            code.emit("ldmia!", src, acc, comment=f"row 0, {'odd' if h else 'even'} words")
            for y in range(1, 5):
                code.emit("ldmia!", src, tmp)
                for x in range(5):
                    base = f[2 * x + h]
                    code.emit("eor", acc[x], acc[x], tmp[x], ror(reframe(f[2 * (x + 5 * y) + h], base)))
        if h == 0:
            code.emit("stm", "sp", C_EVEN, acc, comment="even parities")
    if not is_paired:
        code.emit("sub", src, src, 200)
    code.emit("ldm", "sp", C_EVEN, tmp)
    ce, co = tmp, acc
    for x in range(5):
        left, right = (x + 4) % 5, (x + 1) % 5
        to_even = (reframe(f[2 * right + 1], f[2 * left]) + 1) % 32
        to_odd = reframe(f[2 * right], f[2 * left + 1])
        code.emit("eor", "lr", ce[left], co[right], ror(to_even), comment=f"D[{x}] even")
        code.emit("str", "lr", "sp", d_offset(x, 0))
        code.emit("eor", "lr", co[left], ce[right], ror(to_odd), comment=f"D[{x}] odd")
        code.emit("str", "lr", "sp", d_offset(x, 1))


def half_row(code, r, y, h, src, dst, src_paired, dst_paired):
    """Word h of row y of the state after round r: theta, rho and pi of its five
    words, chi, and iota for row 0; stored."""
    f = FRAMES[r]
    b = ["r5", "r6", "r8", "r9", "r10"]
    out = ["r3", "r4", "r8", "r9", "r10"]
    t = "lr"
    fb = [chi_input_frame(f, x, y, h) for x in range(5)]
    for x in range(5):
        source, _ = rho_pi_word(x, y, h)
        lane, half = source // 2, source % 2
        effect_frame = f[2 * ((lane % 5 + 4) % 5) + half]
        off = paired(lane, half) if src_paired else planar(lane, half)
        code.emit("ldr", b[x], src, off, comment=f"A[{lane}] {'odd' if half else 'even'}")
        code.emit("ldr", t, "sp", d_offset(lane % 5, half))
        code.emit("eor", b[x], b[x], t, ror(reframe(effect_frame, f[source])))
    for k in range(5):
        k1, k2 = (k + 1) % 5, (k + 2) % 5
        frame_out = FRAMES[r + 1][2 * (5 * y + k) + h]
        code.emit("bic", t, b[k2], b[k1], ror(reframe(fb[k1], fb[k2])))
        code.emit("eor", out[k], b[k], t, ror(reframe(fb[k2], fb[k])))
        if reframe(fb[k], frame_out):
            code.emit("ror", out[k], out[k], ror(reframe(fb[k], frame_out)))
    if y == 0:
        code.emit("ldr", t, RCP, 4 * (2 * r + h), comment="iota")
        code.emit("eor", out[0], out[0], t, ror(reframe(0, FRAMES[r + 1][h])))
    if dst_paired:
        for k in range(5):
            code.emit("str", out[k], dst, paired(5 * y + k, h))
    else:
        code.emit("stmia!", dst, out)


def generate():
    code = Code()
    code.emit("push", ["r4", "r5", "r6", "r7", "r8", "r9", "r10", "r11", "lr"])
    code.emit("sub", "sp", "sp", STACK)
    for r in range(ROUNDS):
        src, dst = (A, S) if r % 2 == 0 else (S, A)
        src_paired, dst_paired = r == 0, r == ROUNDS - 1
        code.emit("comment", f"round {r}")
        parity(code, r, src, src_paired)
        for h in (0, 1):
            for y in range(5):
                half_row(code, r, y, h, src, dst, src_paired, dst_paired)
        if not dst_paired:
            code.emit("sub", dst, dst, 200)
    # Wipe theta's parities and effects from the stack.
    zero = ["r3", "r4", "r5", "r6", "r7"]
    for reg in zero:
        code.emit("movs0", reg)
    code.emit("stm", "sp", 0, zero)
    code.emit("stm", "sp", 20, zero)
    code.emit("stm", "sp", 40, zero)
    code.emit("add", "sp", "sp", STACK)
    code.emit("pop", ["r4", "r5", "r6", "r7", "r8", "r9", "r10", "r11", "pc"])
    return code


def text(op):
    name = op[0]
    if name == "comment":
        return None
    if name in ("push", "pop"):
        return f"{name} {{{{{', '.join(op[1])}}}}}"
    if name in ("ldr", "str"):
        return f"{name} {op[1]}, [{op[2]}, #{op[3]}]"
    if name in ("ldmia!", "stmia!"):
        return f"{name[:-1]} {op[1]}!, {{{{{', '.join(op[2])}}}}}"
    if name in ("ldm", "stm"):
        if op[2] == 0:
            return f"{name} {op[1]}, {{{{{', '.join(op[3])}}}}}"
        return None  # expanded below
    if name in ("eor", "bic"):
        shift = "" if op[4] is None else f", ror #{op[4]}"
        return f"{name} {op[1]}, {op[2]}, {op[3]}{shift}"
    if name == "ror":
        return f"ror {op[1]}, {op[2]}, #{op[3]}"
    if name in ("sub", "add"):
        return f"{name} {op[1]}, {op[2]}, #{op[3]}"
    if name == "movs0":
        return f"movs {op[1]}, #0"
    raise ValueError(op)


def lines(code):
    """The instructions as text; `stm` at `sp` + offset goes through r2 (only
    in the final wipe, after the last use of the round constants)."""
    out = []
    for op, comment in code.ops:
        if op[0] == "comment":
            out.append(("", op[1]))
            continue
        if op[0] in ("ldm", "stm") and op[2] != 0:
            out.append((f"add {RCP}, sp, #{op[2]}", comment))
            out.append((f"{op[0]} {RCP}, {{{{{', '.join(op[3])}}}}}", None))
            continue
        out.append((text(op), comment))
    return out


def count(code):
    return sum(1 for line, _ in lines(code) if line)


# --- simulation ---------------------------------------------------------------


def rotr(v, n):
    n %= 32
    return ((v >> n) | (v << (32 - n))) & 0xFFFFFFFF if n else v


def simulate(code, a_words, rc_words):
    mem = {}
    base_a, base_s, base_rc, top = 0x1000, 0x2000, 0x3000, 0x8000
    for i, w in enumerate(a_words):
        mem[base_a + 4 * i] = w
    for i in range(WORDS):
        mem[base_s + 4 * i] = 0xDEADBEEF
    for i, w in enumerate(rc_words):
        mem[base_rc + 4 * i] = w
    reg = {f"r{i}": 0 for i in range(13)}
    reg.update(r0=base_a, r1=base_s, r2=base_rc, sp=top, lr=0xFFFFFFFF, pc=0)
    saved = dict(reg)
    for op, _ in code.ops:
        name = op[0]
        if name == "comment":
            continue
        if name == "push":
            for rr in reversed(op[1]):
                reg["sp"] -= 4
                mem[reg["sp"]] = reg[rr]
        elif name == "pop":
            for rr in op[1]:
                reg[rr] = mem[reg["sp"]]
                reg["sp"] += 4
        elif name == "ldr":
            reg[op[1]] = mem[reg[op[2]] + op[3]]
        elif name == "str":
            mem[reg[op[2]] + op[3]] = reg[op[1]]
        elif name in ("ldmia!", "stmia!"):
            for rr in op[2]:
                if name == "ldmia!":
                    reg[rr] = mem[reg[op[1]]]
                else:
                    mem[reg[op[1]]] = reg[rr]
                reg[op[1]] += 4
        elif name in ("ldm", "stm"):
            addr = reg[op[1]] + op[2]
            assert op[3] == sorted(op[3], key=lambda s: int(s[1:]) if s[1:].isdigit() else 14)
            for rr in op[3]:
                if name == "ldm":
                    reg[rr] = mem[addr]
                else:
                    mem[addr] = reg[rr]
                addr += 4
        elif name in ("eor", "bic"):
            y = reg[op[3]] if op[4] is None else rotr(reg[op[3]], op[4])
            reg[op[1]] = reg[op[2]] ^ y if name == "eor" else reg[op[2]] & ~y & 0xFFFFFFFF
        elif name == "ror":
            reg[op[1]] = rotr(reg[op[2]], op[3])
        elif name == "sub":
            reg[op[1]] = reg[op[2]] - op[3]
        elif name == "add":
            reg[op[1]] = reg[op[2]] + op[3]
        elif name == "movs0":
            reg[op[1]] = 0
        else:
            raise ValueError(op)
    assert reg["sp"] == top and reg["pc"] == saved["lr"]
    for rr in ("r4", "r5", "r6", "r7", "r8", "r9", "r10", "r11"):
        assert reg[rr] == saved[rr], rr
    frame = top - 36 - STACK
    assert all(mem[frame + i] == 0 for i in range(0, STACK, 4)), "stack wiped"
    return [mem[base_a + 4 * i] for i in range(WORDS)]


def keccak_p(lanes, rounds):
    mask = (1 << 64) - 1

    def rotl64(v, n):
        n %= 64
        return ((v << n) | (v >> (64 - n))) & mask if n else v

    a = list(lanes)
    for ir in range(24 - rounds, 24):
        c = [a[x] ^ a[x + 5] ^ a[x + 10] ^ a[x + 15] ^ a[x + 20] for x in range(5)]
        d = [c[(x + 4) % 5] ^ rotl64(c[(x + 1) % 5], 1) for x in range(5)]
        a = [a[i] ^ d[i % 5] for i in range(LANES)]
        b = [0] * LANES
        for x in range(5):
            for y in range(5):
                src = pi_source(x, y)
                b[x + 5 * y] = rotl64(a[src], RHO[src])
        a = [b[i] ^ (~b[(i % 5 + 1) % 5 + 5 * (i // 5)] & mask & b[(i % 5 + 2) % 5 + 5 * (i // 5)])
             for i in range(LANES)]
        a[0] ^= RC[ir]
    return a


def interleave(lane):
    even = odd = 0
    for i in range(32):
        even |= ((lane >> (2 * i)) & 1) << i
        odd |= ((lane >> (2 * i + 1)) & 1) << i
    return even, odd


def deinterleave(even, odd):
    lane = 0
    for i in range(32):
        lane |= ((even >> i) & 1) << (2 * i) | ((odd >> i) & 1) << (2 * i + 1)
    return lane


def check(code):
    rng = random.Random(25)
    for first in (12, 0):
        rc_words = [w for ir in range(first, first + 12) for w in interleave(RC[ir])]
        for _ in range(4):
            lanes = [rng.getrandbits(64) for _ in range(LANES)]
            words = [w for lane in lanes for w in interleave(lane)]
            got = simulate(code, words, rc_words)
            got_lanes = [deinterleave(got[2 * i], got[2 * i + 1]) for i in range(LANES)]
            if first == 12:
                expected = keccak_p(lanes, 12)
            else:
                # Rounds 0..11 of Keccak-f: the first half of the 24 rounds.
                expected = keccak_p_first(lanes)
            assert got_lanes == expected, f"simulation differs from Keccak-p (rounds {first}..)"


def keccak_p_first(lanes):
    """Rounds 0..11 of Keccak-f[1600], from keccak_p by undoing nothing: rounds
    0..11 of 24 are rounds 12..23 with the first half's round constants."""
    saved = RC[12:]
    RC[12:] = RC[:12]
    try:
        return keccak_p(lanes, 12)
    finally:
        RC[12:] = saved


HEADER = '''\
//! Twelve rounds of Keccak-p\\[1600\\] on bit-interleaved lanes
//! ([`super::interleaved32`]) in Thumb-2 assembly, for the Cortex-M cores that
//! have it (ARMv7-M, ARMv7E-M, ARMv8-M Mainline), where the build asks for
//! speed (`cfg(ratchet_rng_keccak_lazy)`). Generated by
//! `scripts/thumb2-keccak.py`; do not edit by hand.
//!
//! The rounds are those of [`super::interleaved32`]'s lazy kernel, word for
//! word and rotation for rotation: the same frames (rho is never computed; a
//! rotation moves into the shifter of the next instruction that reads the
//! word, `eor r3, r3, r8, ror #n`, `bic lr, r8, r6, ror #n`), the same
//! theta, chi and iota. What the assembly adds is the memory layout and the
//! registers. Between rounds the state lives in memory, alternately in `a`
//! and in the scratch state; inside the block (after round 0, before round
//! 11) a state holds its 25 even words and then its 25 odd words, so that a
//! row of words of one parity is one `ldm` (theta's parities) or one `stm`
//! (chi's results) instead of five loads or stores. Round 0 reads `a` and
//! round 11 writes it as `Interleaved` pairs. theta's parities and effects
//! (15 words) go to the stack and are wiped before the function returns.
//! {count} instructions for the twelve rounds, against about 414 a round for
//! the compiled lazy kernel.
//!
//! The script runs the instructions in a simulator on random states against
//! Keccak-p\\[1600\\] before writing them; on the cores, the firmware's known
//! answers at opt-level 3 (`.ci/firmware`) go through them (every stream of
//! `ShakeRng` and `TurboShakeRng`). Constant time: logic on registers, and
//! loads and stores at fixed offsets.

use super::interleaved32::Interleaved;
use super::portable::{{Lane, State}};
use super::{{FULL_ROUNDS, LANES}};

/// Rounds in one call of [`rounds12`].
const BLOCK_ROUNDS: usize = 12;

/// Keccak-p\\[1600, `ROUNDS`\\] (a multiple of 12) of `a`, using `scratch`, in
/// calls of [`rounds12`]. The same function as [`super::interleaved32`]'s lazy
/// kernel.
pub(super) fn permute<const ROUNDS: usize>(a: &mut State<Interleaved>, scratch: &mut State<Interleaved>) {{
    const {{ assert!(size_of::<Interleaved>() == 8 && size_of::<State<Interleaved>>() == 8 * LANES) }};
    // Not a `const` assertion: the function is instantiated, unused, for every
    // round count of [`Lane::permute`]. Decided at compile time all the same.
    assert!(ROUNDS.is_multiple_of(BLOCK_ROUNDS), "whole blocks of rounds");
    let round_constants = &<Interleaved as Lane>::ROUND_CONSTANTS[FULL_ROUNDS - ROUNDS..];
    let (blocks, _) = round_constants.as_chunks::<BLOCK_ROUNDS>();
    for rc in blocks {{
        // SAFETY: `a` and `scratch` are distinct states of 25 `Interleaved`
        // (`repr(C)`: the even word, then the odd word; 50 words each, checked
        // above), which the function reads and writes as such and nothing
        // else; `rc` is 12 `Interleaved`, which it only reads. Both mutable
        // borrows are exclusive for the call, and the function keeps no
        // pointer. It follows the AAPCS (callee-saved registers restored, the
        // stack balanced and 8-byte aligned), and uses only instructions of
        // every Thumb-2 core, which `build.rs` requires of the target for
        // `ratchet_rng_arm_thumb2`.
        unsafe {{
            rounds12(
                a.as_mut_ptr().cast::<u32>(),
                scratch.as_mut_ptr().cast::<u32>(),
                rc.as_ptr().cast::<u32>(),
            );
        }}
    }}
}}

/// Twelve rounds of Keccak-p\\[1600\\] of the interleaved state at `a` (50
/// words), with the round constants at `rc` (12 interleaved lanes), using the
/// 50 words at `scratch`.
///
/// # Safety
///
/// `a` and `scratch` are valid for reads and writes of 50 `u32` each and do
/// not overlap; `rc` is valid for reads of 24 `u32`.
///
/// # Security
///
/// Constant time. theta's parities and effects, spilled to the stack, are
/// zeroed before it returns; the scratch state is the caller's to wipe.
#[unsafe(naked)]
unsafe extern "C" fn rounds12(a: *mut u32, scratch: *mut u32, rc: *const u32) {{
    core::arch::naked_asm!(
'''


def main():
    code = generate()
    check(code)
    n = count(code)
    print(f"{n} instructions", file=sys.stderr)
    out = [HEADER.format(count=n)]
    for line, comment in lines(code):
        if not line:
            out.append(f"        // {comment}\n")
        elif comment:
            out.append(f'        "{line}", // {comment}\n')
        else:
            out.append(f'        "{line}",\n')
    out.append("    )\n}\n")
    sys.stdout.write("".join(out))


if __name__ == "__main__":
    main()
