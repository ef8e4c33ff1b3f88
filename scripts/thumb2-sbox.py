#!/usr/bin/env python3
"""Writes src/aes/arm_thumb2.rs: the S-box circuit of src/aes/soft.rs (without
its NOT gates) as Thumb-2 assembly, gates ordered and registers assigned to keep
loads and stores few.

    python3 scripts/thumb2-sbox.py [--seed N] [--iterations N] > src/aes/arm_thumb2.rs
    cargo fmt

The circuit is read from `sbox_circuit` in src/aes/soft.rs. An order of its
gates is searched (randomised greedy list schedules, then simulated annealing
moving one gate at a time), each order scored by the loads and stores of a
furthest-next-use (Belady) allocation over REGISTERS registers. The best
order's allocation is simulated on random planes against the circuit before
anything is written. Deterministic for a given seed and iteration count (the
checked-in file: the defaults).
"""
import argparse
import math
import random
import re
import sys
from pathlib import Path

# Registers the block may take on a Thumb-2 core under LLVM: r0-r5, r8-r12, lr
# (r6 is LLVM's base pointer, r7 the frame pointer, sp and pc are not free).
REGISTERS = 12
INPUTS = [f"u{i}" for i in range(8)]
OUTPUTS = [f"s{i}" for i in range(8)]


def read_circuit(root):
    """The gates of soft.rs's sbox_circuit, (out, op, a, b), NOTs dropped."""
    text = (root / "src/aes/soft.rs").read_text()
    body = text.split("pub(super) fn sbox_circuit")[1].split("\n}\n")[0]
    gates = []
    for line in body.splitlines():
        m = re.match(r"\s*let (\w+) = (!?)\(?(\w+) ([&^]) (\w+)\)?;", line)
        if m:
            gates.append((m.group(1), m.group(4), m.group(3), m.group(5)))
    assert len(gates) > 100, "the circuit was not found in soft.rs"
    return gates


class Circuit:
    def __init__(self, gates):
        self.gates = gates
        self.prod = {g[0]: g for g in gates}
        self.users = {}
        for g in gates:
            for x in (g[2], g[3]):
                self.users.setdefault(x, []).append(g[0])

    def valid(self, order):
        done = set(INPUTS)
        for n in order:
            g = self.prod[n]
            if g[2] not in done or g[3] not in done:
                return False
            done.add(n)
        return True

    def allocate(self, order):
        """Belady allocation: (loads + stores, code, final slot of each value,
        spill slots). Inputs start in slots 0..7; code is a list of
        ("ldr"|"str", slot, spill) and (op, dst, a, b, name)."""
        uses = {}
        for i, n in enumerate(order):
            g = self.prod[n]
            for x in {g[2], g[3]}:
                uses.setdefault(x, []).append(i)
        end = len(order)
        for o in OUTPUTS:
            uses.setdefault(o, []).append(end)
        ptr = {}
        # A value dies at the step after its last use (uses are in increasing
        # order; an input never used, at step 0): release_dead frees the
        # registers of the values dying there, without a scan of every register.
        dying = [[] for _ in range(end + 1)]
        for x in INPUTS:
            if x not in uses:
                dying[0].append(x)
        for x, u in uses.items():
            if u[-1] < end:
                dying[u[-1] + 1].append(x)

        def next_use(x, i):
            u = uses.get(x, [])
            p = ptr.get(x, 0)
            while p < len(u) and u[p] < i:
                p += 1
            ptr[x] = p
            return u[p] if p < len(u) else None

        slot_of = {u: k for k, u in enumerate(INPUTS)}
        value_in = INPUTS + [None] * (REGISTERS - len(INPUTS))
        spill = {}
        code = []
        memops = 0

        def free_slot(i, keep):
            nonlocal memops
            for k in range(REGISTERS):
                if value_in[k] is None:
                    return k
            best, distance = None, -1
            for k in range(REGISTERS):
                x = value_in[k]
                if x in keep:
                    continue
                nu = next_use(x, i)
                d = 10**9 if nu is None else nu
                if d > distance:
                    best, distance = k, d
            x = value_in[best]
            if next_use(x, i) is not None and x not in spill:
                spill[x] = len(spill)
                code.append(("str", best, spill[x]))
                memops += 1
            del slot_of[x]
            value_in[best] = None
            return best

        def release(x):
            value_in[slot_of.pop(x)] = None

        def release_dead(i):
            for x in dying[i]:
                if x in slot_of:
                    release(x)

        release_dead(0)
        for i, n in enumerate(order):
            _, op, a, b = self.prod[n]
            for x in (a, b):
                if x not in slot_of:
                    k = free_slot(i, {a, b})
                    code.append(("ldr", k, spill[x]))
                    memops += 1
                    slot_of[x], value_in[k] = k, x
            sa, sb = slot_of[a], slot_of[b]
            release_dead(i + 1)
            k = free_slot(i + 1, set())
            code.append(("eor" if op == "^" else "and", k, sa, sb, n))
            slot_of[n], value_in[k] = k, n
            if n not in uses:
                release(n)
        for o in OUTPUTS:
            if o not in slot_of:
                k = free_slot(end, set(OUTPUTS))
                code.append(("ldr", k, spill[o]))
                memops += 1
                slot_of[o], value_in[k] = k, o
        return memops, code, dict(slot_of), len(spill)

    def greedy(self, rng, bias):
        done, order = set(INPUTS), []
        left = {x: len(self.users.get(x, [])) for x in list(self.prod) + INPUTS}
        # Operands not yet computed, per gate; the gates with none are ready.
        waiting = {n: len({g[2], g[3]} - done) for n, g in self.prod.items()}
        pending = {n for n, w in waiting.items() if w == 0}
        while pending:
            ready = sorted(pending)

            def score(n):
                g = self.prod[n]
                s = 0
                for x in {g[2], g[3]}:
                    if left[x] == 1:
                        s += 2
                    if x in order[-4:]:
                        s += 1
                return s + rng.random() * bias

            n = max(ready, key=score)
            order.append(n)
            done.add(n)
            pending.discard(n)
            for x in {self.prod[n][2], self.prod[n][3]}:
                left[x] -= 1
            for u in set(self.users.get(n, [])):
                waiting[u] -= 1
                if waiting[u] == 0:
                    pending.add(u)
        assert len(order) == len(self.prod), "the circuit has a cycle"
        return order

    def search(self, seed, iterations):
        rng = random.Random(seed)
        best, best_cost = None, None
        for _ in range(2000):
            order = self.greedy(rng, rng.choice([0.5, 1, 2, 3, 5]))
            cost = self.allocate(order)[0]
            if best_cost is None or cost < best_cost:
                best, best_cost = order, cost
        current, cost = best, best_cost
        for it in range(iterations):
            temperature = 2.0 * (1 - it / iterations) + 0.05
            i = rng.randrange(len(current))
            j = max(0, min(len(current) - 1, i + rng.randint(-15, 15)))
            order = current[:]
            order.insert(j, order.pop(i))
            if not self.valid(order):
                continue
            c = self.allocate(order)[0]
            if c <= cost or rng.random() < math.exp((cost - c) / temperature):
                current, cost = order, c
                if cost < best_cost:
                    best, best_cost = current, cost
        return best

    def check(self, code, final):
        rng = random.Random(5)
        for _ in range(1000):
            planes = [rng.getrandbits(32) for _ in range(8)]
            values = dict(zip(INPUTS, planes))
            for out, op, a, b in self.gates:
                values[out] = values[a] ^ values[b] if op == "^" else values[a] & values[b]
            regs = planes + [None] * (REGISTERS - 8)
            stack = {}
            for c in code:
                if c[0] == "str":
                    stack[c[2]] = regs[c[1]]
                elif c[0] == "ldr":
                    regs[c[1]] = stack[c[2]]
                else:
                    x, y = regs[c[2]], regs[c[3]]
                    regs[c[1]] = x ^ y if c[0] == "eor" else x & y
            assert [regs[final[o]] for o in OUTPUTS] == [values[o] for o in OUTPUTS]


HEADER = '''\
//! The S-box circuit of the 32-bit kernel ([`fixslice32`](super::fixslice32))
//! in Thumb-2 assembly, for the Cortex-M cores that have it (ARMv7-M,
//! ARMv7E-M, ARMv8-M Mainline). Generated by `scripts/thumb2-sbox.py`
//! (`--seed {seed} --iterations {iterations}`); do not edit by hand.
//!
//! The circuit is `soft.rs`'s, gate for gate, without its NOT gates (the
//! 32-bit kernel adds the S-box constant with the round keys). What the
//! assembly adds is the order of the gates and the register of each value:
//! the circuit keeps about twenty values alive at its widest and these cores
//! have twelve registers for it, so some values go to the stack and come
//! back. LLVM schedules the gates of a basic block itself, whatever their
//! order in the source, and spilled about 55 values per S-box (loads and
//! stores). The script searches an order of the gates that minimises the
//! loads and stores of a furthest-next-use allocation over twelve registers
//! and writes that allocation out: {gates} gates, {memops} loads and stores
//! and two instructions for the spill area ({slots} words), per S-box. It
//! checks the result by simulation against the circuit on random planes
//! before writing it; on the cores, the firmware's known answers
//! (`.ci/firmware`) go through it (every stream of `AesCtrPoolRng` does).
//!
//! Operands `x0`..`x7` start as the circuit's inputs `u0`..`u7` (plane
//! `7 - i` holds `u_i`); each line's comment names the gate of
//! `soft::sbox_circuit` it computes. Constant time: logic on registers, and
//! loads and stores at fixed stack offsets.

/// `S(x) ^ 0x63` on every byte of eight bit planes: `soft::sbox_circuit`
/// without its NOT gates, in assembly (see the module docs). Inlined into
/// the rounds, but one function where the profile optimises for size
/// (`ratchet_rng_opt_size`, set by `build.rs` from Cargo's `OPT_LEVEL`).
///
/// # Security
///
/// Constant time. Spilled intermediate values stay below the stack pointer
/// after it returns, as a compiler's spills would: the 32-bit kernel's stack
/// scrub (`fixslice32::scrub_stack`) zeroes them after each refill.
#[cfg_attr(not(ratchet_rng_opt_size), inline(always))]
#[cfg_attr(ratchet_rng_opt_size, inline(never))]
pub(super) fn sbox_circuit_without_constant(planes: [u32; 8]) -> [u32; 8] {{
    let [u7, u6, u5, u4, u3, u2, u1, u0] = planes;
'''


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--iterations", type=int, default=250000)
    args = parser.parse_args()
    circuit = Circuit(read_circuit(Path(__file__).resolve().parent.parent))
    order = circuit.search(args.seed, args.iterations)
    memops, code, final, slots = circuit.allocate(order)
    circuit.check(code, final)
    frame = (4 * slots + 7) // 8 * 8
    holds = {final[o] for o in OUTPUTS}
    used = {c[1] for c in code} | {r for c in code if c[0] in ("eor", "and") for r in c[2:4]}
    print(f"{len(circuit.gates)} gates, {memops} loads and stores, {slots} spill slots",
          file=sys.stderr)
    out = [HEADER.format(seed=args.seed, iterations=args.iterations,
                         gates=len(circuit.gates), memops=memops, slots=slots)]
    names = [f"r{k}" for k in range(REGISTERS) if k in holds]
    out.append(f"    let ({', '.join(names)}): ({', '.join(['u32'] * len(names))});\n")
    out.append("""\
    // SAFETY: the block computes on its operands (logic on registers) and on
    // a stack area it allocates below `sp` and frees before it ends, restoring
    // `sp`; it reads and writes no other memory, and uses only instructions
    // of every Thumb-2 core (ARMv7-M, ARMv8-M Mainline), which `build.rs`
    // requires of the target for `ratchet_rng_arm_thumb2`.
    unsafe {
        core::arch::asm!(
""")
    out.append(f'            "sub sp, sp, #{frame}",\n')
    for c in code:
        if c[0] in ("ldr", "str"):
            out.append(f'            "{c[0]} {{x{c[1]}}}, [sp, #{4 * c[2]}]",\n')
        else:
            out.append(f'            "{c[0]} {{x{c[1]}}}, {{x{c[2]}}}, {{x{c[3]}}}", // {c[4]}\n')
    out.append(f'            "add sp, sp, #{frame}",\n')
    for k in range(REGISTERS):
        dst = f"r{k}" if k in holds else "_"
        if k < 8:
            out.append(f"            x{k} = inout(reg) u{k} => {dst},\n")
        elif k in used:
            out.append(f"            x{k} = out(reg) {dst},\n")
    out.append("            options(pure, nomem),\n        );\n    }\n")
    result = ", ".join(f"r{final[f's{7 - i}']}" for i in range(8))
    out.append(f"    [{result}]\n}}\n")
    sys.stdout.write("".join(out))


if __name__ == "__main__":
    main()
