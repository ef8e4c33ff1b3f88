//! Memory hygiene of the generators, through the public API and `hazmat`:
//!
//! 1. **Zeroization on drop.** A global allocator wrapping `System` copies the
//!    block of one watched `Box` in `dealloc`, *before* handing it back to
//!    `System` (the memory is still valid and ours then; no freed memory is read).
//!    For every generator, used across several refills so that its buffer holds
//!    unread output and its key / state has moved on, the freed block must hold
//!    none of the secrets the test can compute independently (the seed, every
//!    key or sponge state the generator went through, every byte it served, the
//!    unread rest of its buffer: no 16-byte window of any of them), and be all
//!    zeros except at most 16 bytes (the buffer position, the backend tag and
//!    padding). A control box without zeroization must show its secret, so the
//!    capture cannot pass vacuously.
//! 2. **Served bytes are wiped at once.** After every kind of call (partial
//!    fills, `next_u32`, `next_u64`, fills across and of whole refills, reads
//!    straddling a refill), `inspect_buffer` shows the served part of the buffer
//!    all zeros and the rest equal to the next bytes of the stream.
//!
//! Where the expected secrets come from: the keys and sponge states are computed
//! here from the seed with the `hazmat` primitives on the portable backend, and
//! cross-checked against the generators' own output (the key periods, pools and
//! squeezed blocks must concatenate to the stream); the stream is a twin
//! generator's single long `fill_bytes`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::HashSet;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

use rand::Rng;
use rand::SeedableRng;
use ratchet_rng::hazmat::{Aes256, ChaCha, Keccak};
use ratchet_rng::{
    AesCtrPoolRng, ChaCha12KeyErasureRng, ChaCha20KeyErasureRng, ChaChaKeyErasureRng, ShakeRng,
    SpongeSeed, TurboShakeRng,
};

// ---------------------------------------------------------------------------
// The inspecting allocator
// ---------------------------------------------------------------------------

/// The largest block the allocator can capture (the AES generator is ~4.1 KiB).
const CAPTURE_BYTES: usize = 8192;

/// The address of the one block to capture when it is freed (0: none).
static WATCHED: AtomicUsize = AtomicUsize::new(0);
/// The size of the captured block, `usize::MAX` until one was captured.
static CAPTURED_LEN: AtomicUsize = AtomicUsize::new(usize::MAX);
/// The captured bytes (atomics: written in `dealloc`, which must not allocate).
static CAPTURE: [AtomicU8; CAPTURE_BYTES] = [const { AtomicU8::new(0) }; CAPTURE_BYTES];

/// `System`, plus: the watched block's bytes are copied when it is freed.
struct Inspecting;

// SAFETY: every allocation is `System`'s, forwarded unchanged; `dealloc` only
// reads the block it is given (still valid: it is freed after) before freeing it.
unsafe impl GlobalAlloc for Inspecting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded with the caller's guarantees (the watched block is a
        // `Box`, never reallocated).
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        let addr = ptr as usize;
        if addr != 0
            && WATCHED
                .compare_exchange(addr, 0, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
        {
            let len = layout.size().min(CAPTURE_BYTES);
            for (i, byte) in CAPTURE.iter().enumerate().take(len) {
                // SAFETY: `ptr..ptr + layout.size()` is the caller's live block
                // (it is returned to `System` only below). Bytes that were padding
                // have no Rust value; read at machine level they are exactly what
                // a later reader of the freed heap would find, which is the point.
                byte.store(unsafe { ptr.add(i).read_volatile() }, Ordering::Relaxed);
            }
            CAPTURED_LEN.store(layout.size(), Ordering::Release);
        }
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Inspecting = Inspecting;

/// One watched box at a time (the tests run on several threads).
static WATCH_LOCK: Mutex<()> = Mutex::new(());

/// Drops `boxed` and returns the bytes its block held when it was freed.
fn freed_block<T>(boxed: Box<T>) -> Vec<u8> {
    let _guard = WATCH_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    assert!(size_of::<T>() <= CAPTURE_BYTES && size_of::<T>() > 0);
    CAPTURED_LEN.store(usize::MAX, Ordering::Release);
    WATCHED.store(&raw const *boxed as usize, Ordering::Release);
    drop(boxed);
    let len = CAPTURED_LEN.load(Ordering::Acquire);
    WATCHED.store(0, Ordering::Release);
    assert_eq!(
        len,
        size_of::<T>(),
        "the box's block was not freed through the global allocator"
    );
    CAPTURE[..len]
        .iter()
        .map(|b| b.load(Ordering::Relaxed))
        .collect()
}

// ---------------------------------------------------------------------------
// Secrets and their search
// ---------------------------------------------------------------------------

/// Window length of the secret search: 128 bits, far too long to match by chance.
const WINDOW: usize = 16;

/// Bytes in a freed generator block that may be nonzero: the buffer position (a
/// `usize`), the backend enum and padding (at most 7 bytes after a 1-byte tag).
const NON_SECRET_BYTES: usize = size_of::<usize>() + 8;

/// Named byte strings the freed block must not contain.
type Secrets = Vec<(String, Vec<u8>)>;

/// What is wrong with freed `block`, if anything: a `WINDOW`-byte window of a
/// secret (each at least `WINDOW` bytes long) in it, or more than `max_nonzero`
/// nonzero bytes.
fn leak_in(what: &str, block: &[u8], secrets: &Secrets, max_nonzero: usize) -> Option<String> {
    let windows: HashSet<&[u8]> = block.windows(WINDOW).collect();
    for (name, secret) in secrets {
        assert!(secret.len() >= WINDOW, "{what}: secret {name} too short");
        if let Some(at) = secret.windows(WINDOW).position(|w| windows.contains(w)) {
            return Some(format!(
                "{what}: the freed block still holds {name}[{at}..{}]",
                at + WINDOW
            ));
        }
    }
    let nonzero: Vec<usize> = (0..block.len()).filter(|&i| block[i] != 0).collect();
    if nonzero.len() > max_nonzero {
        return Some(format!(
            "{what}: {} nonzero bytes in the freed block of {} (at {nonzero:?})",
            nonzero.len(),
            block.len()
        ));
    }
    eprintln!(
        "{what}: freed block of {} bytes: no secret window; nonzero bytes at {nonzero:?}",
        block.len()
    );
    None
}

fn assert_wiped(what: &str, block: &[u8], secrets: &Secrets, max_nonzero: usize) {
    if let Some(leak) = leak_in(what, block, secrets, max_nonzero) {
        panic!("{leak}");
    }
}

/// Reads bytes from `rng` through a mix of calls that leaves its buffer
/// partly read after several refills (with `n` the refill size): a partial fill,
/// `next_u32`, a fill across the buffer's end with whole refills written straight
/// to the caller, `next_u64`, one byte. Returns the bytes served, in order.
fn exercise<R: Rng>(rng: &mut R, n: usize) -> Vec<u8> {
    let mut out = vec![0u8; 3];
    rng.fill_bytes(&mut out);
    out.extend_from_slice(&rng.next_u32().to_le_bytes());
    let mut big = vec![0u8; 2 * n + 50];
    rng.fill_bytes(&mut big);
    out.extend_from_slice(&big);
    out.extend_from_slice(&rng.next_u64().to_le_bytes());
    let mut one = [0u8; 1];
    rng.fill_bytes(&mut one);
    out.extend_from_slice(&one);
    out
}

/// The first `len` bytes of `rng`'s stream, as one `fill_bytes`.
fn stream<R: Rng>(mut rng: R, len: usize) -> Vec<u8> {
    let mut out = vec![0u8; len];
    rng.fill_bytes(&mut out);
    out
}

/// A generator's `inspect_buffer`: its buffer and the count of served bytes.
type Inspect<R> = fn(&R) -> (&[u8], usize);

/// `inspect_buffer` of a generator type where the build has introspection
/// (`RATCHET_RNG_INSPECT=1`), else `None`.
macro_rules! inspector {
    ($ty:ty) => {{
        #[cfg(ratchet_rng_inspect)]
        let inspect: Option<Inspect<$ty>> = Some(<$ty>::inspect_buffer);
        #[cfg(not(ratchet_rng_inspect))]
        let inspect: Option<Inspect<$ty>> = None;
        inspect
    }};
}

/// The common part of the drop test for a generator with refills of `n` bytes:
/// exercises the boxed generator, checks it against its twin's stream and that
/// its buffer holds the unread rest before the drop (so the secret really was in
/// the block), frees it and searches the block. `key_secrets(refills, stream)`
/// gives the key / state secrets after `refills` refills, checked against the
/// stream by the caller's derivation.
fn check_drop<R: Rng>(
    what: &str,
    mut boxed: Box<R>,
    twin: R,
    n: usize,
    inspect: Option<Inspect<R>>,
    key_secrets: impl FnOnce(usize, &[u8]) -> Secrets,
) {
    let served = exercise(&mut *boxed, n);
    let t = served.len();
    assert_ne!(t % n, 0, "the buffer must hold unread output");
    let refills = t.div_ceil(n);
    let expected = stream(twin, refills * n);
    assert_eq!(served, expected[..t], "{what}: served bytes are the stream");
    let unread = expected[t..].to_vec();
    // Where the build can look inside (RATCHET_RNG_INSPECT=1): the buffer does
    // hold the unread rest, so the secrets checked below were really there.
    if let Some(inspect) = inspect {
        let (buf, pos) = inspect(&boxed);
        assert_eq!(pos, t % n, "{what}");
        assert_eq!(
            buf[pos..],
            unread[..],
            "{what}: the buffer holds the unread rest"
        );
    }
    let mut secrets = key_secrets(refills, &expected);
    secrets.push(("the served output".into(), served));
    secrets.push(("the unread output in the buffer".into(), unread));
    let block = freed_block(boxed);
    assert_wiped(what, &block, &secrets, NON_SECRET_BYTES);
}

fn words_to_le_bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// The chacha8rand keys a generator seeded with `seed` goes through in
/// `refills` refills (key 0 = the seed), checked against the stream: the
/// portable key periods must reproduce it.
fn chacha_keys<const ROUNDS: usize>(seed: [u8; 32], refills: usize, stream: &[u8]) -> Secrets {
    let mut key: [u32; 8] =
        core::array::from_fn(|i| u32::from_le_bytes(seed[4 * i..4 * i + 4].try_into().unwrap()));
    let mut secrets = vec![("key 0 (the seed)".to_string(), seed.to_vec())];
    for r in 0..refills {
        let mut period = [[0u8; 992]];
        ChaCha::soft().key_periods::<ROUNDS>(&mut key, &mut period);
        assert_eq!(period[0], stream[992 * r..992 * (r + 1)], "period {r}");
        secrets.push((format!("key {}", r + 1), words_to_le_bytes(&key)));
    }
    secrets
}

/// The AES keys an `AesCtrPoolRng` seeded with `seed` goes through, checked
/// against the stream like [`chacha_keys`].
fn aes_keys(seed: [u8; 32], refills: usize, stream: &[u8]) -> Secrets {
    let mut key = seed;
    let mut secrets = vec![("key 0 (the seed)".to_string(), seed.to_vec())];
    for r in 0..refills {
        let mut pool = [[0u8; 4064]];
        Aes256::soft().fill_pools(&mut key, &mut pool);
        assert_eq!(pool[0], stream[4064 * r..4064 * (r + 1)], "pool {r}");
        secrets.push((format!("key {}", r + 1), key.to_vec()));
    }
    secrets
}

/// The sponge states a `ShakeRng` / `TurboShakeRng` seeded with `seed` holds at
/// each refill: absorb the 136-byte block, pad (`0x1F ... 0x80`) and permute,
/// then one squeeze period per refill; checked against the stream (each period's
/// 1088 bytes).
fn sponge_states<const ROUNDS: usize>(seed: &[u8; 136], refills: usize, stream: &[u8]) -> Secrets {
    let keccak = Keccak::soft();
    let mut state = [0u64; 25];
    for (lane, bytes) in state.iter_mut().zip(seed.chunks_exact(8)) {
        *lane ^= u64::from_le_bytes(bytes.try_into().unwrap());
    }
    keccak.permute::<ROUNDS>(&mut state);
    state[0] ^= 0x1F;
    state[16] ^= 0x80 << 56;
    keccak.permute::<ROUNDS>(&mut state);
    let lanes = |s: &[u64; 25]| s.iter().flat_map(|l| l.to_le_bytes()).collect::<Vec<u8>>();
    let mut secrets = vec![
        ("the seed".to_string(), seed.to_vec()),
        ("state 0".to_string(), lanes(&state)),
    ];
    for r in 0..refills {
        let mut period = [0u8; 1088];
        keccak.squeeze_period::<ROUNDS>(&mut state, &mut period);
        assert_eq!(period, stream[1088 * r..1088 * (r + 1)], "period {r}");
        secrets.push((format!("state {}", r + 1), lanes(&state)));
    }
    secrets
}

// ---------------------------------------------------------------------------
// 1. Zeroization on drop
// ---------------------------------------------------------------------------

/// The capture works: a block freed without wiping shows its secret, and the
/// nonzero-byte bound would catch it too.
#[test]
fn control_an_unwiped_block_is_caught() {
    struct Leaky([u8; 1040]);
    let secret: Vec<u8> = (0..1040u32).map(|i| (i * 37 + 11) as u8).collect();
    let boxed = Box::new(Leaky(secret.clone().try_into().unwrap()));
    assert_eq!(boxed.0[..], secret[..]);
    let block = freed_block(boxed);
    assert_eq!(block, secret);
    let secrets = vec![("the secret".to_string(), secret)];
    let leak = leak_in("control", &block, &secrets, NON_SECRET_BYTES);
    assert_eq!(
        leak.as_deref(),
        Some("control: the freed block still holds the secret[0..16]")
    );
    // Without the window search, the nonzero-byte bound alone catches it too.
    let leak = leak_in("control", &block, &Vec::new(), NON_SECRET_BYTES).unwrap();
    assert!(leak.contains("nonzero bytes"), "{leak}");
}

#[test]
fn chacha_generators_are_wiped_on_drop() {
    let seed: [u8; 32] = core::array::from_fn(|i| (i as u8).wrapping_mul(29) ^ 0xC3);
    check_drop(
        "ChaChaKeyErasureRng",
        Box::new(ChaChaKeyErasureRng::from_seed(seed)),
        ChaChaKeyErasureRng::from_seed(seed),
        992,
        inspector!(ChaChaKeyErasureRng),
        |refills, stream| chacha_keys::<8>(seed, refills, stream),
    );
    check_drop(
        "ChaCha12KeyErasureRng",
        Box::new(ChaCha12KeyErasureRng::from_seed(seed)),
        ChaCha12KeyErasureRng::from_seed(seed),
        992,
        inspector!(ChaCha12KeyErasureRng),
        |refills, stream| chacha_keys::<12>(seed, refills, stream),
    );
    check_drop(
        "ChaCha20KeyErasureRng",
        Box::new(ChaCha20KeyErasureRng::from_seed(seed)),
        ChaCha20KeyErasureRng::from_seed(seed),
        992,
        inspector!(ChaCha20KeyErasureRng),
        |refills, stream| chacha_keys::<20>(seed, refills, stream),
    );
}

#[test]
fn aes_generator_is_wiped_on_drop() {
    let seed: [u8; 32] = core::array::from_fn(|i| (i as u8).wrapping_mul(53) ^ 0x5A);
    check_drop(
        "AesCtrPoolRng",
        Box::new(AesCtrPoolRng::from_seed(seed)),
        AesCtrPoolRng::from_seed(seed),
        4064,
        inspector!(AesCtrPoolRng),
        |refills, stream| aes_keys(seed, refills, stream),
    );
}

#[test]
fn sponge_generators_are_wiped_on_drop() {
    let seed: [u8; 136] = core::array::from_fn(|i| (i as u8).wrapping_mul(71) ^ 0x96);
    check_drop(
        "ShakeRng",
        Box::new(ShakeRng::from_seed(seed.into())),
        ShakeRng::from_seed(seed.into()),
        1088,
        inspector!(ShakeRng),
        |refills, stream| sponge_states::<24>(&seed, refills, stream),
    );
    check_drop(
        "TurboShakeRng",
        Box::new(TurboShakeRng::from_seed(seed.into())),
        TurboShakeRng::from_seed(seed.into()),
        1088,
        inspector!(TurboShakeRng),
        |refills, stream| sponge_states::<12>(&seed, refills, stream),
    );
}

/// Every backend this CPU has: the drop path does not depend on it, but the
/// backend tag is part of the block.
#[test]
fn generators_on_every_backend_are_wiped_on_drop() {
    let seed: [u8; 32] = core::array::from_fn(|i| i as u8 ^ 0x3C);
    for backend in ChaCha::available() {
        let name = backend.name();
        check_drop(
            &format!("ChaChaKeyErasureRng on {name}"),
            Box::new(ChaChaKeyErasureRng::from_seed_with_backend(seed, backend)),
            ChaChaKeyErasureRng::from_seed(seed),
            992,
            inspector!(ChaChaKeyErasureRng),
            |refills, stream| chacha_keys::<8>(seed, refills, stream),
        );
    }
    for backend in Aes256::available() {
        let name = backend.name();
        check_drop(
            &format!("AesCtrPoolRng on {name}"),
            Box::new(AesCtrPoolRng::from_seed_with_backend(seed, backend)),
            AesCtrPoolRng::from_seed(seed),
            4064,
            inspector!(AesCtrPoolRng),
            |refills, stream| aes_keys(seed, refills, stream),
        );
    }
    let sponge_seed: [u8; 136] = core::array::from_fn(|i| i as u8 ^ 0xA5);
    for backend in Keccak::available() {
        let name = backend.name();
        check_drop(
            &format!("TurboShakeRng on {name}"),
            Box::new(TurboShakeRng::from_seed_with_backend(
                sponge_seed.into(),
                backend,
            )),
            TurboShakeRng::from_seed(sponge_seed.into()),
            1088,
            inspector!(TurboShakeRng),
            |refills, stream| sponge_states::<12>(&sponge_seed, refills, stream),
        );
    }
}

#[test]
fn from_key_generators_are_wiped_on_drop() {
    // The derived seed is not known here; the output is, and the freed block must
    // be zeros but for the non-secret fields.
    let key = b"a key of any length, for from_key";
    let mut boxed = Box::new(ChaCha20KeyErasureRng::from_key(key));
    let mut twin = ChaCha20KeyErasureRng::from_key(key);
    let served = exercise(&mut *boxed, 992);
    let mut again = vec![0u8; served.len()];
    twin.fill_bytes(&mut again);
    assert_eq!(served, again);
    let block = freed_block(boxed);
    let secrets = vec![("the served output".to_string(), served)];
    assert_wiped(
        "ChaCha20KeyErasureRng::from_key",
        &block,
        &secrets,
        NON_SECRET_BYTES,
    );
}

#[test]
fn sponge_seed_is_wiped_on_drop() {
    let bytes: [u8; 136] = core::array::from_fn(|i| (i as u8).wrapping_mul(13) | 1);
    let seed = Box::new(SpongeSeed::from(bytes));
    assert_eq!(AsRef::<[u8]>::as_ref(&*seed), &bytes[..]);
    let block = freed_block(seed);
    // A seed is nothing but its bytes: the whole block must be zeros.
    assert_eq!(block, [0u8; 136]);
}

/// A freed `SeedTree` holds no key: its key gives the node's whole subtree. The
/// key is computed here with the RustCrypto `turboshake` crate (the root node of
/// docs/DERIVATION.md: TurboSHAKE256, domain 0x54, of version 1, tag 0, the
/// key's length as a little-endian `u64`, the key); a tree freed without its
/// `Drop` must show exactly that key, so the capture cannot pass vacuously.
#[test]
fn seed_tree_is_wiped_on_drop() {
    use turboshake::digest::{ExtendableOutput, Update, XofReader};

    let root_key = b"a seed tree's root key";
    let mut hasher = turboshake::CTurboShake256::<0x54>::default();
    hasher.update(&[0x01, 0x00]);
    hasher.update(&(root_key.len() as u64).to_le_bytes());
    hasher.update(root_key);
    let mut key = [0u8; 32];
    hasher.finalize_xof().read(&mut key);

    let undropped = freed_block(Box::new(core::mem::ManuallyDrop::new(
        ratchet_rng::SeedTree::new(root_key),
    )));
    assert_eq!(undropped, key, "control: the tree is its key");
    let block = freed_block(Box::new(ratchet_rng::SeedTree::new(root_key)));
    // A node is nothing but its key: the whole block must be zeros.
    assert_eq!(block, [0u8; 32]);
}

/// The XOFs wipe their Keccak state on drop: each of the four types (their
/// `Drop` comes from one macro, so each is checked). A control freed without
/// `Drop` must show the state (a permuted Keccak state: nearly every byte
/// nonzero), so the bound cannot pass vacuously.
#[test]
fn xofs_are_wiped_on_drop() {
    use ratchet_rng::xof::{Shake256, TurboShake256};

    /// More than one rate block of key material: the state has been permuted.
    const KEY: [u8; 300] = [0x5C; 300];
    fn check<T>(what: &str, make: impl Fn() -> T) {
        let control = freed_block(Box::new(core::mem::ManuallyDrop::new(make())));
        let nonzero = control.iter().filter(|&&b| b != 0).count();
        assert!(nonzero >= 150, "{what}: control: {nonzero} nonzero bytes");
        let block = freed_block(Box::new(make()));
        assert_wiped(what, &block, &Vec::new(), NON_SECRET_BYTES);
    }
    let shake = || {
        let mut h = Shake256::new();
        h.absorb(&KEY);
        h
    };
    let turbo = || {
        let mut h = TurboShake256::new(0x1F).unwrap();
        h.absorb(&KEY);
        h
    };
    check("Shake256", shake);
    check("Shake256Reader", || shake().finalize());
    check("TurboShake256", turbo);
    check("TurboShake256Reader", || turbo().finalize());
}

// ---------------------------------------------------------------------------
// 2. Served bytes are wiped from the buffer at once
// ---------------------------------------------------------------------------

/// The buffer inspection (`inspect_buffer`) exists only in builds with
/// `RATCHET_RNG_INSPECT=1` (`cfg(ratchet_rng_inspect)`): introspection of secret
/// state is not something a dependency can switch on.
#[cfg(ratchet_rng_inspect)]
mod wiping {
    use super::*;

    /// One call on a generator.
    #[derive(Clone, Copy, Debug)]
    enum Op {
        Fill(usize),
        U32,
        U64,
        /// Fill just enough to reach position `r` in a refill (`t % n == r`).
        FillTo(usize),
    }

    /// Calls of every kind, landing on and straddling refill boundaries (`n` is the
    /// refill size).
    fn ops(n: usize) -> Vec<Op> {
        use Op::*;
        vec![
            Fill(0),
            Fill(1),
            U32,
            U64,
            Fill(0),
            Fill(5),
            FillTo(n - 3),
            U64, // straddles a refill
            FillTo(n - 2),
            U32, // straddles a refill
            FillTo(0),
            U32, // starts a refill
            FillTo(0),
            Fill(n), // a whole refill, straight to the caller
            U64,
            Fill(n - 8), // ends exactly at the buffer's end
            Fill(n + 1),
            Fill(2 * n + 3), // whole refills plus a tail
            FillTo(n - 1),
            Fill(1),
            Fill(1),
            U64,
            // Every length class of the buffer's short copy-and-wipe (1-3 bytes one
            // at a time, then two overlapping 4/8/16/32-byte moves, then bulk).
            Fill(2),
            Fill(3),
            Fill(4),
            Fill(7),
            Fill(8),
            Fill(15),
            Fill(16),
            Fill(31),
            Fill(32),
            Fill(33),
            Fill(63),
            Fill(64),
            Fill(65),
            FillTo(n - 40),
            Fill(64), // 40 buffered, the rest from a refill
        ]
    }

    /// Runs [`ops`] on `rng`, checking after each call that the served bytes equal
    /// `stream` and that `inspect` shows the served part of the buffer zeroed and the
    /// rest equal to the next bytes of `stream`.
    fn check_wiping<R: Rng>(
        what: &str,
        rng: &mut R,
        n: usize,
        stream: &[u8],
        inspect: fn(&R) -> (&[u8], usize),
    ) {
        let mut t = 0;
        for (i, op) in ops(n).into_iter().enumerate() {
            let got: Vec<u8> = match op {
                Op::Fill(len) => {
                    let mut out = vec![0u8; len];
                    rng.fill_bytes(&mut out);
                    out
                }
                Op::FillTo(r) => {
                    let mut out = vec![0u8; (r + n - t % n) % n];
                    rng.fill_bytes(&mut out);
                    out
                }
                Op::U32 => rng.next_u32().to_le_bytes().to_vec(),
                Op::U64 => rng.next_u64().to_le_bytes().to_vec(),
            };
            assert_eq!(got, stream[t..t + got.len()], "{what}: call {i} {op:?}");
            t += got.len();
            let (buf, pos) = inspect(rng);
            assert_eq!(buf.len(), n, "{what}");
            assert_eq!(pos % n, t % n, "{what}: call {i} {op:?}");
            assert!(
                buf[..pos].iter().all(|&b| b == 0),
                "{what}: served bytes left in the buffer after call {i} {op:?}"
            );
            assert_eq!(
                buf[pos..],
                stream[t..t + (n - pos)],
                "{what}: the unread bytes after call {i} {op:?}"
            );
        }
        assert!(t > 5 * n, "{what}: the calls crossed several refills");
    }

    /// Enough stream for [`ops`] (at most 13 refills) plus slack.
    fn ops_stream_len(n: usize) -> usize {
        16 * n
    }

    pub(super) fn served_bytes_are_wiped_from_the_buffer() {
        let seed: [u8; 32] = core::array::from_fn(|i| (i as u8).wrapping_mul(101) ^ 0x17);
        let sponge_seed: [u8; 136] = core::array::from_fn(|i| (i as u8).wrapping_mul(7) ^ 0x71);

        macro_rules! each_backend {
            ($ty:ty, $handle:ty, $seed:expr, $n:expr) => {
                let expected = stream(<$ty>::from_seed($seed.into()), ops_stream_len($n));
                for backend in <$handle>::available() {
                    let name = backend.name();
                    let mut rng = <$ty>::from_seed_with_backend($seed.into(), backend);
                    let what = format!("{} on {name}", stringify!($ty));
                    check_wiping(&what, &mut rng, $n, &expected, <$ty>::inspect_buffer);
                }
            };
        }
        each_backend!(ChaChaKeyErasureRng, ChaCha, seed, 992);
        each_backend!(ChaCha12KeyErasureRng, ChaCha, seed, 992);
        each_backend!(ChaCha20KeyErasureRng, ChaCha, seed, 992);
        each_backend!(AesCtrPoolRng, Aes256, seed, 4064);
        each_backend!(ShakeRng, Keccak, sponge_seed, 1088);
        each_backend!(TurboShakeRng, Keccak, sponge_seed, 1088);
    }

    /// A fresh generator has nothing buffered: the whole buffer reads as zeros.
    pub(super) fn fresh_generators_buffer_nothing() {
        let rng = AesCtrPoolRng::from_seed([7; 32]);
        let (buf, pos) = rng.inspect_buffer();
        assert_eq!(pos, buf.len());
        assert!(buf.iter().all(|&b| b == 0));
        let rng = TurboShakeRng::from_key(b"k");
        let (buf, pos) = rng.inspect_buffer();
        assert_eq!((pos, buf.len()), (1088, 1088));
        assert!(buf.iter().all(|&b| b == 0));
    }
}

#[test]
#[cfg_attr(
    not(ratchet_rng_inspect),
    ignore = "needs RATCHET_RNG_INSPECT=1 (the buffer inspection; CI runs it)"
)]
fn served_bytes_are_wiped_from_the_buffer() {
    #[cfg(ratchet_rng_inspect)]
    wiping::served_bytes_are_wiped_from_the_buffer();
}

#[test]
#[cfg_attr(
    not(ratchet_rng_inspect),
    ignore = "needs RATCHET_RNG_INSPECT=1 (the buffer inspection; CI runs it)"
)]
fn fresh_generators_buffer_nothing() {
    #[cfg(ratchet_rng_inspect)]
    wiping::fresh_generators_buffer_nothing();
}

/// A `SavedState` (issue 13) is a secret: dropped, its block holds none of its
/// bytes (at most 8 non-zero bytes remain: its length field).
#[test]
fn saved_states_are_wiped_on_drop() {
    let mut chacha = ChaChaKeyErasureRng::from_seed([0x5a; 32]);
    let _ = exercise(&mut chacha, 13);
    let mut aes = AesCtrPoolRng::from_seed([0xa5; 32]);
    let _ = exercise(&mut aes, 5);
    let mut shake = TurboShakeRng::from_key(b"saved");
    let _ = exercise(&mut shake, 100);
    for (what, saved) in [
        ("ChaCha8 (Go's encoding)", chacha.save()),
        ("AES pool", aes.save()),
        ("TurboSHAKE", shake.save()),
    ] {
        let bytes = saved.as_ref().to_vec();
        let block = freed_block(Box::new(saved));
        assert!(bytes.iter().filter(|&&b| b != 0).count() > 40, "{what}");
        let left = block.iter().filter(|&&b| b != 0).count();
        assert!(left <= 8, "{what}: {left} non-zero bytes left after drop");
        assert!(
            bytes[bytes.len() - 32..]
                .windows(16)
                .all(|w| !block.windows(16).any(|b| b == w)),
            "{what}: saved bytes left after drop"
        );
    }
}
