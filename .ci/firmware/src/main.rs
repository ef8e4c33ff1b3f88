//! Known answers on a Cortex-M4F and on a 32-bit RISC-V core: every generator's
//! golden streams, the SeedTree vectors, save/restore round trips and Go's ChaCha8
//! saved states, on the portable backends (the only ones these cores have), with
//! no allocator.
//!
//! The answers are the lines of `tests/data/` (build.rs embeds them). One line is
//! printed per check (`ok   LABEL` or `FAIL LABEL: ...`), then a summary; the exit
//! status is 0 only if every check passed. The negative control: with
//! `corrupt=LABEL` on the program's command line (`-append corrupt=LABEL` for
//! `qemu-system-arm`, `-semihosting-config ...,arg=corrupt=LABEL` for
//! `qemu-system-riscv32`), the expected answer of check
//! LABEL has its last byte flipped, and that check must fail (`.ci/run`).
#![no_std]
#![no_main]

use core::fmt::{self, Write as _};

use ratchet_rng::rand_core::{Rng, SeedableRng};
use ratchet_rng::{
    AesCtrPoolRng, ChaCha12KeyErasureRng, ChaCha20KeyErasureRng, ChaChaKeyErasureRng, RestoreError,
    SavedState, SeedTree, SeedTreeRng, ShakeRng, TurboShakeRng,
};
use ratchet_rng_firmware::{command_line, exit, println, stack_residue};

/// The words the 32-bit AES kernel holds under a key (shared with
/// `tests/fixslice32_stack.rs`).
#[path = "../../../tests/common/fixslice32_secrets.rs"]
#[allow(dead_code, reason = "shared with the host test, which uses all of it")]
mod secrets;

// --- the shapes of the embedded known answers (filled in by build.rs) --------------------

/// `GEN/SEED: HEX` of golden_streams.txt.
struct Golden {
    generator: &'static str,
    seed: &'static str,
    bytes: &'static [u8],
}

/// One step of a SeedTree path.
enum Step {
    Index(u64),
    Label(&'static [u8]),
}

/// `GEN "PATH": HEX` of seed_tree_vectors.txt.
struct TreeVector {
    generator: &'static str,
    path: &'static str,
    steps: &'static [Step],
    bytes: &'static [u8],
}

/// A call in a Go operation script: `Uint64()` or a `Read` of N bytes.
enum Op {
    U64,
    Read(usize),
}

/// `state SEED OPS MARSHAL NEXT` of go_chacha8_states.txt.
struct GoState {
    label: &'static str,
    seed: &'static [u8],
    ops: &'static [(Op, usize)],
    marshal: &'static [u8],
    next: &'static [u8],
}

/// `accept INPUT MARSHAL NEXT` of go_chacha8_states.txt.
struct GoAccept {
    input: &'static [u8],
    marshal: &'static [u8],
    next: &'static [u8],
}

/// `reject INPUT VERDICT WANT` of go_chacha8_states.txt: Go refuses `input`,
/// `restore` must return `want`.
struct GoReject {
    input: &'static [u8],
    want: RestoreError,
}

include!(concat!(env!("OUT_DIR"), "/kats.rs"));

/// The longest golden stream (bytes).
const STREAM_BYTES: usize = 4096;

// --- the generators ------------------------------------------------------------------------

/// What the checks need of a generator.
trait Generator: Rng + SeedableRng + SeedTreeRng {
    /// Its name in tests/data/.
    const NAME: &'static str;
    /// Bytes of output per refill (the stream definitions in docs/STREAMS.md).
    const REFILL_BYTES: usize;
    fn from_key(key: &[u8]) -> Self;
    fn save(&self) -> SavedState;
    fn restore(bytes: &[u8]) -> Result<Self, RestoreError>;
}

macro_rules! generator {
    ($ty:ty, $name:literal, $refill:expr) => {
        impl Generator for $ty {
            const NAME: &'static str = $name;
            const REFILL_BYTES: usize = $refill;
            fn from_key(key: &[u8]) -> Self {
                <$ty>::from_key(key)
            }
            fn save(&self) -> SavedState {
                <$ty>::save(self)
            }
            fn restore(bytes: &[u8]) -> Result<Self, RestoreError> {
                <$ty>::restore(bytes)
            }
        }
    };
}
generator!(TurboShakeRng, "turboshake", 1088);
generator!(ShakeRng, "shake", 1088);
generator!(ChaChaKeyErasureRng, "chacha8", 992);
generator!(ChaCha12KeyErasureRng, "chacha12", 992);
generator!(ChaCha20KeyErasureRng, "chacha20", 992);
generator!(AesCtrPoolRng, "aes_ctr_pool", 4064);

/// Runs `$body` with `$g` bound to the generator type named `$name`.
macro_rules! with_generator {
    ($name:expr, $g:ident => $body:expr) => {
        match $name {
            "turboshake" => {
                type $g = TurboShakeRng;
                $body
            }
            "shake" => {
                type $g = ShakeRng;
                $body
            }
            "chacha8" => {
                type $g = ChaChaKeyErasureRng;
                $body
            }
            "chacha12" => {
                type $g = ChaCha12KeyErasureRng;
                $body
            }
            "chacha20" => {
                type $g = ChaCha20KeyErasureRng;
                $body
            }
            "aes_ctr_pool" => {
                type $g = AesCtrPoolRng;
                $body
            }
            other => panic!("unknown generator {other}"),
        }
    };
}

/// `G::from_seed` of the golden seed `name`: all 0x00, 0, 1, 2, ... or all 0xde
/// (golden_streams.txt's header), at the generator's seed length.
fn seeded<G: SeedableRng>(name: &str) -> G {
    let mut seed = G::Seed::default();
    for (i, b) in seed.as_mut().iter_mut().enumerate() {
        *b = match name {
            "zero" => 0,
            "iota" => i as u8,
            "de" => 0xde,
            other => panic!("unknown seed {other}"),
        };
    }
    G::from_seed(seed)
}

/// Reads `out.len()` bytes from `rng` in one of several call patterns; every
/// pattern gives the bytes of one long `fill_bytes` (the stream contract).
fn read<G: Rng>(rng: &mut G, out: &mut [u8], pattern: Pattern) {
    match pattern {
        Pattern::Whole => rng.fill_bytes(out),
        Pattern::Words => {
            let mut i = 0;
            while i < out.len() {
                if (i / 4) % 3 == 2 && out.len() - i >= 8 {
                    out[i..i + 8].copy_from_slice(&rng.next_u64().to_le_bytes());
                    i += 8;
                } else {
                    let n = (out.len() - i).min(4);
                    out[i..i + n].copy_from_slice(&rng.next_u32().to_le_bytes()[..n]);
                    i += n;
                }
            }
        }
        Pattern::Mixed => {
            // Odd lengths that straddle every refill boundary of the first 4096
            // bytes, a whole-refill request among them.
            const LENGTHS: [usize; 9] = [1, 7, 64, 333, 3, 1088, 1000, 2, 129];
            let mut i = 0;
            for &n in LENGTHS.iter().cycle() {
                if i == out.len() {
                    break;
                }
                let n = n.min(out.len() - i);
                rng.fill_bytes(&mut out[i..i + n]);
                i += n;
            }
        }
    }
}

#[derive(Clone, Copy)]
enum Pattern {
    /// One `fill_bytes`.
    Whole,
    /// `next_u32` and `next_u64` calls.
    Words,
    /// `fill_bytes` of mixed lengths.
    Mixed,
}

// --- checks and their report ---------------------------------------------------------------

/// A check's name, built with `write!` (no allocation).
struct Label {
    buf: [u8; 96],
    len: usize,
}

impl Label {
    fn new(args: fmt::Arguments<'_>) -> Self {
        let mut label = Self {
            buf: [0; 96],
            len: 0,
        };
        let _ = label.write_fmt(args);
        label
    }

    fn as_str(&self) -> &str {
        core::str::from_utf8(&self.buf[..self.len]).unwrap_or("?")
    }
}

impl fmt::Write for Label {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let n = s.len().min(self.buf.len() - self.len);
        self.buf[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
        Ok(())
    }
}

/// The first thing that went wrong in a check.
enum Mismatch {
    Byte {
        what: &'static str,
        index: usize,
        got: u8,
        want: u8,
    },
    Length {
        what: &'static str,
        got: usize,
        want: usize,
    },
    False(&'static str),
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Byte {
                what,
                index,
                got,
                want,
            } => write!(f, "{what}: byte {index} is {got:02x}, expected {want:02x}"),
            Self::Length { what, got, want } => {
                write!(f, "{what}: {got} bytes, expected {want}")
            }
            Self::False(what) => write!(f, "{what}"),
        }
    }
}

/// One check in progress: its comparisons stop at the first mismatch.
struct Check {
    /// Flip the last expected byte of the first comparison (the negative control).
    corrupt: bool,
    mismatch: Option<Mismatch>,
}

impl Check {
    /// `got` must equal `want`.
    fn bytes(&mut self, what: &'static str, got: &[u8], want: &[u8]) {
        if self.mismatch.is_some() {
            return;
        }
        if got.len() != want.len() {
            self.mismatch = Some(Mismatch::Length {
                what,
                got: got.len(),
                want: want.len(),
            });
            return;
        }
        let corrupt_at = if core::mem::take(&mut self.corrupt) {
            want.len().checked_sub(1)
        } else {
            None
        };
        for (index, (&g, &w)) in got.iter().zip(want).enumerate() {
            let w = if Some(index) == corrupt_at {
                w ^ 0x01
            } else {
                w
            };
            if g != w {
                self.mismatch = Some(Mismatch::Byte {
                    what,
                    index,
                    got: g,
                    want: w,
                });
                return;
            }
        }
    }

    /// `ok` must hold.
    fn holds(&mut self, what: &'static str, ok: bool) {
        if self.mismatch.is_none() && !ok {
            self.mismatch = Some(Mismatch::False(what));
        }
    }
}

/// The tally of all checks.
struct Checks<'a> {
    run: u32,
    failed: u32,
    /// The label whose expected answer is corrupted (`corrupt=LABEL`), if any.
    corrupt: Option<&'a str>,
    corrupted: bool,
}

impl Checks<'_> {
    /// Runs check `label` (`body` does its comparisons) and prints its line.
    fn check(&mut self, label: fmt::Arguments<'_>, body: impl FnOnce(&mut Check)) {
        let label = Label::new(label);
        // A label's first word names it (the rest describes the check).
        let name = label.as_str().split(' ').next().unwrap_or("");
        let corrupt = self.corrupt == Some(name);
        self.corrupted |= corrupt;
        let mut check = Check {
            corrupt,
            mismatch: None,
        };
        body(&mut check);
        self.run += 1;
        let corrupted = if corrupt {
            " (expected answer corrupted on purpose)"
        } else {
            ""
        };
        match check.mismatch {
            None => println!("ok   {}{corrupted}", label.as_str()),
            Some(m) => {
                self.failed += 1;
                println!("FAIL {}: {m}{corrupted}", label.as_str());
            }
        }
    }
}

// --- the checks -------------------------------------------------------------------------------

/// The golden streams of `G`: 4096 bytes from each seed (one call pattern per
/// seed; all of them cross several refills) and 64 from `from_key`.
fn golden<G: Generator>(checks: &mut Checks<'_>) {
    let mut got = [0u8; STREAM_BYTES];
    let mut seen = 0;
    for golden in GOLDEN.iter().filter(|g| g.generator == G::NAME) {
        seen += 1;
        let out = &mut got[..golden.bytes.len()];
        let pattern = match golden.seed {
            "from_key" => {
                G::from_key(GOLDEN_FROM_KEY).fill_bytes(out);
                Pattern::Whole
            }
            seed => {
                let pattern = match seed {
                    "zero" => Pattern::Whole,
                    "iota" => Pattern::Mixed,
                    _ => Pattern::Words,
                };
                read(&mut seeded::<G>(seed), out, pattern);
                pattern
            }
        };
        let how = match pattern {
            Pattern::Whole => "fill_bytes",
            Pattern::Words => "next_u32/next_u64",
            Pattern::Mixed => "fill_bytes of mixed lengths",
        };
        checks.check(
            format_args!(
                "golden:{}/{} ({} bytes, {how})",
                G::NAME,
                golden.seed,
                out.len()
            ),
            |c| c.bytes("stream", out, golden.bytes),
        );
    }
    checks.check(format_args!("golden:{}: 4 streams", G::NAME), |c| {
        c.holds("not 4 golden streams for this generator", seen == 4)
    });
}

/// Save at positions around the refill boundaries, restore, and continue: the
/// stream goes on byte for byte (against the golden `iota` stream), the restored
/// generator saves the same bytes, and a truncated state is refused.
fn save_restore<G: Generator>(checks: &mut Checks<'_>) {
    let Some(golden) = GOLDEN
        .iter()
        .find(|g| g.generator == G::NAME && g.seed == "iota")
    else {
        checks.check(format_args!("save:{}", G::NAME), |c| {
            c.holds("no golden iota stream", false)
        });
        return;
    };
    let r = G::REFILL_BYTES;
    for pos in [0, 1, r - 1, r, r + 9] {
        let mut rng = seeded::<G>("iota");
        let mut skip = [0u8; STREAM_BYTES];
        rng.fill_bytes(&mut skip[..pos]);
        let saved = rng.save();
        // Continue past the next refill boundary.
        let len = (r + 16).min(STREAM_BYTES - pos);
        let mut got = [0u8; STREAM_BYTES];
        checks.check(format_args!("save:{}@{pos}", G::NAME), |c| {
            match G::restore(saved.as_bytes()) {
                Ok(mut restored) => {
                    c.bytes(
                        "restored save",
                        restored.save().as_bytes(),
                        saved.as_bytes(),
                    );
                    restored.fill_bytes(&mut got[..len]);
                    c.bytes(
                        "continued stream",
                        &got[..len],
                        &golden.bytes[pos..pos + len],
                    );
                }
                Err(_) => c.holds("restore refused a saved state", false),
            }
            let bytes = saved.as_bytes();
            c.holds(
                "a truncated state was accepted",
                G::restore(&bytes[..bytes.len() - 1]).is_err(),
            );
        });
    }
}

/// The SeedTree vectors: the node at each path, each generator's first 64 bytes.
fn seed_tree(checks: &mut Checks<'_>) {
    let root = SeedTree::new(TREE_ROOT_KEY);
    for v in TREE {
        let mut node = root.clone();
        for step in v.steps {
            node = match *step {
                Step::Index(i) => node.child(i),
                Step::Label(label) => node.child_label(label),
            };
        }
        let mut got = [0u8; 64];
        let out = &mut got[..v.bytes.len().min(64)];
        with_generator!(v.generator, G => node.rng::<G>().fill_bytes(out));
        checks.check(format_args!("tree:{}:\"{}\"", v.generator, v.path), |c| {
            c.bytes("stream", out, v.bytes)
        });
    }
}

/// Go's ChaCha8 saved states (`MarshalBinary`): restored, they save to Go's bytes
/// and continue as in Go; the same calls from the seed save to Go's bytes, where
/// the calls mean the same on a byte stream (see tests/save_restore.rs); Go's
/// accepted inputs are accepted and its refused ones refused.
fn go_states(checks: &mut Checks<'_>) {
    let mut got = [0u8; 64];
    let mut same_calls = 0;
    for (i, s) in GO_STATES.iter().enumerate() {
        checks.check(format_args!("go-state:{i}:{}", s.label), |c| {
            match ChaChaKeyErasureRng::restore(s.marshal) {
                Ok(mut restored) => {
                    c.bytes("save after restore", restored.save().as_bytes(), s.marshal);
                    restored.fill_bytes(&mut got[..s.next.len()]);
                    c.bytes("next bytes after restore", &got[..s.next.len()], s.next);
                }
                Err(_) => c.holds("restore refused Go's state", false),
            }
            let Ok(seed) = <[u8; 32]>::try_from(s.seed) else {
                return c.holds("seed is not 32 bytes", false);
            };
            let mut ours = ChaChaKeyErasureRng::from_seed(seed);
            if apply_go_ops(&mut ours, s.ops) {
                same_calls += 1;
                c.bytes(
                    "save after the same calls",
                    ours.save().as_bytes(),
                    s.marshal,
                );
                ours.fill_bytes(&mut got[..s.next.len()]);
                c.bytes(
                    "next bytes after the same calls",
                    &got[..s.next.len()],
                    s.next,
                );
            }
        });
    }
    // As in tests/save_restore.rs: most scripts have a byte-stream equivalent.
    checks.check(
        format_args!(
            "go-state:same-calls ({same_calls} of {} scripts)",
            GO_STATES.len()
        ),
        |c| {
            c.holds(
                "fewer than 60 scripts compared after the same calls",
                same_calls >= 60,
            )
        },
    );
    for (i, a) in GO_ACCEPT.iter().enumerate() {
        checks.check(
            format_args!("go-accept:{i}"),
            |c| match ChaChaKeyErasureRng::restore(a.input) {
                Ok(mut restored) => {
                    c.bytes("save after restore", restored.save().as_bytes(), a.marshal);
                    restored.fill_bytes(&mut got[..a.next.len()]);
                    c.bytes("next bytes", &got[..a.next.len()], a.next);
                }
                Err(_) => c.holds("restore refused an input Go accepts", false),
            },
        );
    }
    for (i, r) in GO_REJECT.iter().enumerate() {
        checks.check(format_args!("go-reject:{i}"), |c| {
            c.holds(
                "restore must refuse an input Go refuses, for the named reason",
                ChaChaKeyErasureRng::restore(r.input).err() == Some(r.want),
            )
        });
    }
}

/// Applies a Go operation script where it has the same meaning on a byte stream
/// (Go's `Uint64` skips a pending `Read` buffer; ours reads the next 8 bytes), as
/// tests/save_restore.rs does; false if it has none.
fn apply_go_ops(rng: &mut ChaChaKeyErasureRng, ops: &[(Op, usize)]) -> bool {
    let mut pending = 0usize;
    let mut sink = [0u8; 256];
    for (op, times) in ops {
        for _ in 0..*times {
            match *op {
                Op::U64 => {
                    if pending != 0 {
                        return false;
                    }
                    rng.next_u64();
                }
                Op::Read(n) => {
                    let mut left = n;
                    while left > 0 {
                        let k = left.min(sink.len());
                        rng.fill_bytes(&mut sink[..k]);
                        left -= k;
                    }
                    pending = if n <= pending {
                        pending - n
                    } else {
                        (8 - (n - pending) % 8) % 8
                    };
                }
            }
        }
    }
    true
}

/// Issue 31: after an `AesCtrPoolRng` refill (the 32-bit kernel,
/// `aes/fixslice32.rs`, with the Thumb-2 S-box on the Cortex-M4F), no word of
/// the erased key or the current one, of the round keys or of the first
/// round's S-box planes is left on the stack the refill used (the kernel
/// zeroes it before it returns). The generator lives above the painted stack;
/// the draws cross at least one refill, under the seed's key or the next
/// one (whether construction refilled first), so both keys' secrets are
/// looked for, and the key after them.
fn stack_residue_aes(checks: &mut Checks<'_>) {
    let seed: [u8; 32] = core::array::from_fn(|i| (i as u8).wrapping_mul(0x9d) ^ 0x5b);
    let next = secrets::next_key(&seed);
    let after = secrets::next_key(&next);
    let mut words = [0u32; 2 * secrets::WORDS_PER_KEY + 16];
    let (first, rest) = words.split_at_mut(secrets::WORDS_PER_KEY);
    let (second, third) = rest.split_at_mut(secrets::WORDS_PER_KEY);
    first.copy_from_slice(&secrets::secret_words(&seed));
    second.copy_from_slice(&secrets::secret_words(&next));
    third.copy_from_slice(&secrets::secret_words(&after)[..16]);
    let mut rng = AesCtrPoolRng::from_seed(seed);
    let (mut hits, mut kinds) = (0u32, [0u32; 4]);
    let used = stack_residue(
        &mut || {
            // 4068 bytes: at least one refill (4064 bytes each).
            for _ in 0..1017 {
                core::hint::black_box(rng.next_u32());
            }
        },
        &mut |word| {
            if word == 0 || word == !0 {
                return;
            }
            if let Some(i) = words.iter().position(|w| *w == word) {
                hits += 1;
                kinds[match secrets::kind(i) {
                    "key word" => 0,
                    "round-key plane" => 1,
                    "first-round S-box plane" => 2,
                    _ => 3,
                }] += 1;
            }
        },
    );
    println!(
        "     stack residue after an AesCtrPoolRng refill: {used} bytes used, {hits} secret \
         words left (keys {}, round keys {}, S-box planes {}, last-byte planes {})",
        kinds[0], kinds[1], kinds[2], kinds[3]
    );
    checks.check(
        format_args!("stack-residue aes_ctr_pool: no key word on the stack after a refill"),
        |c| c.holds("secret words left on the stack", hits == 0),
    );
}

#[unsafe(no_mangle)]
extern "C" fn firmware_main() -> ! {
    let mut cmdline = [0u8; 256];
    let cmdline = command_line(&mut cmdline);
    let corrupt = cmdline
        .find("corrupt=")
        .map(|i| cmdline[i + "corrupt=".len()..].trim_end());
    let b = ratchet_rng::backends();
    println!(
        "ratchet-rng firmware checks ({}, no_std, no alloc); backends: keccak {}, chacha {}, aes {}",
        ratchet_rng_firmware::CPU,
        b.keccak(),
        b.chacha(),
        b.aes()
    );
    let mut checks = Checks {
        run: 0,
        failed: 0,
        corrupt,
        corrupted: false,
    };
    checks.check(format_args!("backends: portable"), |c| {
        c.holds(
            "a non-portable backend on a microcontroller",
            b.keccak() == "soft" && b.chacha() == "soft" && b.aes() == "soft",
        )
    });
    macro_rules! each_generator {
        ($f:ident) => {
            $f::<TurboShakeRng>(&mut checks);
            $f::<ShakeRng>(&mut checks);
            $f::<ChaChaKeyErasureRng>(&mut checks);
            $f::<ChaCha12KeyErasureRng>(&mut checks);
            $f::<ChaCha20KeyErasureRng>(&mut checks);
            $f::<AesCtrPoolRng>(&mut checks);
        };
    }
    each_generator!(golden);
    each_generator!(save_restore);
    seed_tree(&mut checks);
    go_states(&mut checks);
    stack_residue_aes(&mut checks);

    if let Some(label) = corrupt
        && !checks.corrupted
    {
        println!("FAIL corrupt={label} names no check");
        checks.failed += 1;
    }
    if checks.failed == 0 {
        println!("all {} checks passed", checks.run);
        exit(true)
    }
    println!("{} of {} checks FAILED", checks.failed, checks.run);
    exit(false)
}
