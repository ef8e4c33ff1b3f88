//! ratchet-rng as the random source of the crates a new user plugs it into, with
//! no glue (issue 18 §6). Each check prints one line; any failure prints `FAIL`
//! and the run exits with status 1 after the others ran. The last line on success
//! is `clients: all N checks passed`, which the CI step looks for.
//!
//! The seeded checks freeze what the clients derive from a fixed seed (public
//! keys, a shared secret): they fail if this crate's seeded stream changes, or if
//! a client changes how it turns random bytes into a key. The unseeded checks use
//! `ratchet_rng::rng()`.
//!
//! Where the rand_core 0.6 and 0.10 traits both define a call (`from_seed`,
//! `seed_from_u64`, `next_u64`, ...), it is written fully qualified, as
//! docs/CLIENTS.md advises against E0034.

use ratchet_rng::ChaChaKeyErasureRng;
use ratchet_rng::rand_core::SeedableRng;

// docs/CLIENTS.md shows this file whole (scripts/check-doc-links.py checks it).
mod uuid_v4;

/// The seed of every seeded check: 32 bytes, a `ChaChaKeyErasureRng` key.
const SEED: [u8; 32] = *b"ratchet-rng client crates check!";

/// The first 32 bytes of the `SEED` stream (Go's `math/rand/v2` `NewChaCha8(SEED)`
/// reads the same): a chacha20poly1305 key and p256 0.13's secret scalar.
const STREAM_32: &str = "fd7309becdeff00a4d436dd74852f964f7cd7eb6d2b36d5eadd5ebf341effcb2";

/// ed25519 verifying key of `SigningKey::generate` on the `SEED` stream, in
/// ed25519-dalek 2 (rand_core 0.6) and 3 (rand_core 0.10): the same 32 bytes are
/// drawn, so the same key. Computed once and frozen; Go's `crypto/ed25519` gives
/// the same key from the first 32 bytes of `math/rand/v2`'s `NewChaCha8(SEED)`
/// (the same stream), and `crypto/ecdh` the same x25519 values below.
const ED25519_PUBLIC: &str = "504bd1e1c56ada00e139cdbd82ef82e6eaa816e6a3ff998c7b5633cffc17527f";
/// x25519 public keys of Alice's and Bob's `StaticSecret::random_from_rng` (in
/// that order) on the `SEED` stream, and their shared secret; the same in
/// x25519-dalek 2 and 3. Computed once and frozen.
const X25519_ALICE_PUBLIC: &str =
    "fb59c46ccc281b53a75da050b5872c452cfa5e37900ef052fecd66fb83bcdb26";
const X25519_BOB_PUBLIC: &str = "ca7b208c8609e51fd693147b62eb6d2cfe9e95aed1c727e4dddc6bb26b78170a";
const X25519_SHARED: &str = "529cb0b7edc39d372d0c51a5468b2589dec64af62d7972da244ced7886c3617a";

/// p256 0.14's `SecretKey::generate_from_rng` on the `SEED` stream: `STREAM_32`
/// in the opposite byte order (0.13's `SecretKey::random` takes it as it is).
/// Computed once and frozen.
const P256_014_SECRET: &str = "b2fcef41f3ebd5ad5e6db3d2b67ecdf764f95248d76d434d0af0efcdbe0973fd";

/// `uuid::Builder::from_random_bytes` on the first 16 bytes of `STREAM_32`: the
/// version and variant bits set (`400a`, `8d43`).
const UUID_SEEDED: &str = "fd7309be-cdef-400a-8d43-6dd74852f964";

/// The first eight `random_range(1..=6)` rolls (`gen_range` in rand 0.8) of
/// `seed_from_u64(2024)`: the same in rand 0.8, 0.9 and 0.10 (README.md).
const DICE_2024: [u8; 8] = [3, 2, 6, 5, 6, 2, 4, 5];

const MESSAGE: &[u8] = b"ratchet-rng signs with ed25519-dalek";

/// Counts the checks and remembers whether any failed.
struct Checks {
    passed: usize,
    failed: usize,
}

impl Checks {
    /// Records one check: `ok` prints `ok   name: detail`, else `FAIL name: detail`.
    fn check(&mut self, name: &str, ok: bool, detail: impl core::fmt::Display) {
        if ok {
            self.passed += 1;
            println!("ok   {name}: {detail}");
        } else {
            self.failed += 1;
            println!("FAIL {name}: {detail}");
        }
    }

    /// A check that `got` equals the frozen `want` (lower-case hex).
    fn frozen(&mut self, name: &str, got: &[u8], want: &str) {
        let got = hex(got);
        if got == want {
            self.check(name, true, got);
        } else {
            self.check(name, false, format!("got {got}, want {want}"));
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The seeded generator, through the rand_core 0.10 trait (no feature needed).
fn seeded() -> ChaChaKeyErasureRng {
    <ChaChaKeyErasureRng as SeedableRng>::from_seed(SEED)
}

/// The same generator through the rand_core 0.6 trait (feature `rand_core_06`):
/// the same stream.
fn seeded_06() -> ChaChaKeyErasureRng {
    <ChaChaKeyErasureRng as rand08::SeedableRng>::from_seed(SEED)
}

/// The ed25519-dalek checks, for one major version (`$krate`, named `$name` in
/// the report) and the seeded generator of its rand_core line.
macro_rules! ed25519_checks {
    ($c:ident, $krate:ident, $name:literal, $seeded:expr) => {{
        use $krate::{Signer as _, SigningKey, Verifier as _};
        let key = SigningKey::generate(&mut $seeded);
        let public = key.verifying_key();
        $c.frozen(
            concat!($name, ": seeded public key"),
            public.as_bytes(),
            ED25519_PUBLIC,
        );
        let signature = key.sign(MESSAGE);
        $c.check(
            concat!($name, ": seeded signature verifies"),
            public.verify(MESSAGE, &signature).is_ok()
                && public.verify(b"tampered", &signature).is_err(),
            "and a tampered message does not",
        );
        let key = SigningKey::generate(&mut ratchet_rng::rng());
        let other = SigningKey::generate(&mut ratchet_rng::rng());
        let signature = key.sign(MESSAGE);
        $c.check(
            concat!($name, ": rng() key signs and verifies"),
            key.verifying_key().verify(MESSAGE, &signature).is_ok()
                && key.verifying_key() != other.verifying_key(),
            "two rng() keys differ",
        );
    }};
}

fn ed25519(c: &mut Checks) {
    ed25519_checks!(c, ed25519_dalek2, "ed25519-dalek 2", seeded_06());
    ed25519_checks!(c, ed25519_dalek3, "ed25519-dalek 3", seeded());
}

/// The x25519-dalek checks, for one major version (`$krate`, named `$name`),
/// the seeded generator of its rand_core line, and `rng()` as its
/// `EphemeralSecret::random_from_rng` takes it (by value in 2, by reference
/// in 3).
macro_rules! x25519_checks {
    ($c:ident, $krate:ident, $name:literal, $seeded:expr, $rng:expr) => {{
        use $krate::{EphemeralSecret, PublicKey, StaticSecret};
        let mut rng = $seeded;
        let alice = StaticSecret::random_from_rng(&mut rng);
        let bob = StaticSecret::random_from_rng(&mut rng);
        let (alice_public, bob_public) = (PublicKey::from(&alice), PublicKey::from(&bob));
        $c.frozen(
            concat!($name, ": seeded Alice public key"),
            alice_public.as_bytes(),
            X25519_ALICE_PUBLIC,
        );
        $c.frozen(
            concat!($name, ": seeded Bob public key"),
            bob_public.as_bytes(),
            X25519_BOB_PUBLIC,
        );
        let (ab, ba) = (
            alice.diffie_hellman(&bob_public),
            bob.diffie_hellman(&alice_public),
        );
        $c.check(
            concat!($name, ": seeded exchange agrees"),
            ab.as_bytes() == ba.as_bytes(),
            "both sides",
        );
        $c.frozen(
            concat!($name, ": seeded shared secret"),
            ab.as_bytes(),
            X25519_SHARED,
        );
        let alice = EphemeralSecret::random_from_rng($rng);
        let bob = EphemeralSecret::random_from_rng($rng);
        let (alice_public, bob_public) = (PublicKey::from(&alice), PublicKey::from(&bob));
        let (ab, ba) = (
            alice.diffie_hellman(&bob_public),
            bob.diffie_hellman(&alice_public),
        );
        $c.check(
            concat!($name, ": rng() exchange agrees"),
            ab.as_bytes() == ba.as_bytes() && alice_public != bob_public,
            "ephemeral secrets",
        );
    }};
}

fn x25519(c: &mut Checks) {
    x25519_checks!(
        c,
        x25519_dalek2,
        "x25519-dalek 2",
        seeded_06(),
        ratchet_rng::rng()
    );
    x25519_checks!(
        c,
        x25519_dalek3,
        "x25519-dalek 3",
        seeded(),
        &mut ratchet_rng::rng()
    );
}

fn rand_lines(c: &mut Checks) {
    // The fully qualified calls of docs/CLIENTS.md read one stream.
    let mut old = <ChaChaKeyErasureRng as rand08::SeedableRng>::from_seed(SEED);
    let mut new = <ChaChaKeyErasureRng as ratchet_rng::rand_core::SeedableRng>::from_seed(SEED);
    let (a, b) = (
        rand08::RngCore::next_u64(&mut old),
        ratchet_rng::rand_core::Rng::next_u64(&mut new),
    );
    c.check(
        "rand_core 0.6 and 0.10: next_u64 of one seed",
        a == b,
        format!("{a:#018x} both"),
    );

    let mut rng = <ChaChaKeyErasureRng as rand08::SeedableRng>::seed_from_u64(2024);
    let rolls: Vec<u8> = (0..8)
        .map(|_| rand08::Rng::gen_range(&mut rng, 1..=6))
        .collect();
    c.check(
        "rand 0.8: seed_from_u64(2024) dice",
        rolls == DICE_2024,
        format!("{rolls:?}"),
    );
    let roll: u8 = rand08::Rng::gen_range(&mut ratchet_rng::rng(), 1..=6);
    c.check("rand 0.8: rng() die", (1..=6).contains(&roll), roll);

    let mut rng = <ChaChaKeyErasureRng as rand09::SeedableRng>::seed_from_u64(2024);
    let rolls: Vec<u8> = (0..8)
        .map(|_| rand09::Rng::random_range(&mut rng, 1..=6))
        .collect();
    c.check(
        "rand 0.9: seed_from_u64(2024) dice",
        rolls == DICE_2024,
        format!("{rolls:?}"),
    );
    let roll: u8 = rand09::Rng::random_range(&mut ratchet_rng::rng(), 1..=6);
    c.check("rand 0.9: rng() die", (1..=6).contains(&roll), roll);

    use rand::RngExt as _;
    let mut rng = <ChaChaKeyErasureRng as SeedableRng>::seed_from_u64(2024);
    let rolls: Vec<u8> = (0..8).map(|_| rng.random_range(1..=6)).collect();
    c.check(
        "rand 0.10: seed_from_u64(2024) dice",
        rolls == DICE_2024,
        format!("{rolls:?}"),
    );
    let roll: u8 = ratchet_rng::rng().random_range(1..=6);
    c.check("rand 0.10: rng() die", (1..=6).contains(&roll), roll);

    // rand_distr 0.6 (rand 0.10): a seeded sample repeats; the mean of 100 000
    // standard normal draws from rng() is within 0.02 of 0 (about 6 sigma).
    use rand_distr::{Distribution, StandardNormal};
    let sample = |seed| -> Vec<f64> {
        let mut rng = <ChaChaKeyErasureRng as SeedableRng>::seed_from_u64(seed);
        StandardNormal.sample_iter(&mut rng).take(4).collect()
    };
    c.check(
        "rand_distr 0.6: seeded normal samples repeat",
        sample(1) == sample(1) && sample(1) != sample(2),
        format!("{:.4?}", sample(1)),
    );
    let n = 100_000;
    let mut rng = ratchet_rng::rng();
    let mean = (0..n)
        .map(|_| -> f64 { StandardNormal.sample(&mut rng) })
        .sum::<f64>()
        / f64::from(n);
    c.check(
        "rand_distr 0.6: rng() normal mean",
        mean.abs() < 0.02,
        format!("{mean:.5} over {n}"),
    );
}

fn rsa(c: &mut Checks) {
    // Seeded, so the prime search takes the same (short) path on every run; 1024
    // bits is rsa 0.10's minimum. The padding draws from rng().
    let key = rsa09::RsaPrivateKey::new(&mut seeded_06(), 1024).expect("rsa 0.9 keygen");
    let public = rsa09::RsaPublicKey::from(&key);
    let sealed = public
        .encrypt(&mut ratchet_rng::rng(), rsa09::Pkcs1v15Encrypt, MESSAGE)
        .expect("rsa 0.9 encrypt");
    let opened = key.decrypt(rsa09::Pkcs1v15Encrypt, &sealed);
    c.check(
        "rsa 0.9: seeded 1024-bit key, rng() padding",
        opened.as_deref() == Ok(MESSAGE),
        "PKCS#1 v1.5 round trip",
    );

    let key = rsa010::PrivateKey::new(&mut seeded(), 1024).expect("rsa 0.10 keygen");
    let public = rsa010::PublicKey::from(&key);
    let sealed = public
        .encrypt(&mut ratchet_rng::rng(), rsa010::Pkcs1v15Encrypt, MESSAGE)
        .expect("rsa 0.10 encrypt");
    let opened = key.decrypt(rsa010::Pkcs1v15Encrypt, &sealed);
    c.check(
        "rsa 0.10: seeded 1024-bit key, rng() padding",
        opened.as_deref() == Ok(MESSAGE),
        "PKCS#1 v1.5 round trip",
    );
}

fn p256(c: &mut Checks) {
    let old = p256_013::SecretKey::random(&mut seeded_06());
    c.frozen("p256 0.13: seeded secret key", &old.to_bytes(), STREAM_32);
    use p256_014::elliptic_curve::Generate as _;
    let new = p256_014::SecretKey::generate_from_rng(&mut seeded());
    c.frozen(
        "p256 0.14: seeded secret key",
        &new.to_bytes(),
        P256_014_SECRET,
    );
    let a = p256_013::SecretKey::random(&mut ratchet_rng::rng());
    let b = p256_014::SecretKey::generate_from_rng(&mut ratchet_rng::rng());
    c.check(
        "p256 0.13 and 0.14: rng() secret keys",
        a.public_key() != old.public_key() && b.public_key() != new.public_key(),
        "not the seeded ones",
    );
}

fn chacha20poly1305(c: &mut Checks) {
    use chacha20poly1305_010::ChaCha20Poly1305;
    use chacha20poly1305_010::aead::{Aead as _, AeadCore as _, KeyInit as _};
    let key = ChaCha20Poly1305::generate_key(&mut ratchet_rng::rng());
    let nonce = ChaCha20Poly1305::generate_nonce(&mut ratchet_rng::rng());
    let cipher = ChaCha20Poly1305::new(&key);
    let sealed = cipher.encrypt(&nonce, MESSAGE).expect("encrypt");
    c.check(
        "chacha20poly1305 0.10: rng() key and nonce",
        cipher.decrypt(&nonce, sealed.as_slice()).as_deref() == Ok(MESSAGE),
        "round trip",
    );

    use chacha20poly1305_011::aead::{Aead as _, Generate as _, KeyInit as _};
    use chacha20poly1305_011::{ChaCha20Poly1305 as Cipher11, Key, Nonce};
    let key = Key::generate_from_rng(&mut ratchet_rng::rng());
    let nonce = Nonce::generate_from_rng(&mut ratchet_rng::rng());
    let cipher = Cipher11::new(&key);
    let sealed = cipher.encrypt(&nonce, MESSAGE).expect("encrypt");
    c.check(
        "chacha20poly1305 0.11: rng() key and nonce",
        cipher.decrypt(&nonce, sealed.as_slice()).as_deref() == Ok(MESSAGE),
        "round trip",
    );
    let key = ChaCha20Poly1305::generate_key(&mut seeded_06());
    c.frozen("chacha20poly1305 0.10: seeded key", &key, STREAM_32);
    let key = Key::generate_from_rng(&mut seeded());
    c.frozen("chacha20poly1305 0.11: seeded key", &key, STREAM_32);
}

fn uuid(c: &mut Checks) {
    use ratchet_rng::rand_core::Rng as _;
    let mut bytes = [0u8; 16];
    seeded().fill_bytes(&mut bytes);
    let id = uuid::Builder::from_random_bytes(bytes).into_uuid();
    c.check(
        "uuid: v4 from the seeded stream",
        id.to_string() == UUID_SEEDED,
        id,
    );
    let (a, b) = (uuid_v4::new_v4(), uuid_v4::new_v4());
    c.check(
        "uuid: v4 from fill()",
        a != b && a.get_version() == Some(uuid::Version::Random),
        a,
    );
}

fn proptest(c: &mut Checks) {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
    // proptest's own generator seeded from ours; the property: any seed's stream
    // is the same whether read whole or in two pieces.
    let mut seed = [0u8; 32];
    ratchet_rng::fill(&mut seed);
    let config = Config {
        cases: 64,
        failure_persistence: None,
        ..Config::default()
    };
    let mut runner =
        TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &seed));
    let result = runner.run(&(any::<[u8; 32]>(), 0usize..100), |(key, split)| {
        let mut whole = [0u8; 100];
        <ChaChaKeyErasureRng as SeedableRng>::from_seed(key).fill_bytes(&mut whole);
        let mut parts = [0u8; 100];
        let mut rng = <ChaChaKeyErasureRng as SeedableRng>::from_seed(key);
        rng.fill_bytes(&mut parts[..split]);
        rng.fill_bytes(&mut parts[split..]);
        prop_assert_eq!(whole, parts);
        Ok(())
    });
    c.check(
        "proptest: TestRng seeded by fill()",
        result.is_ok(),
        "64 cases",
    );
}

fn main() {
    let mut c = Checks {
        passed: 0,
        failed: 0,
    };
    ed25519(&mut c);
    x25519(&mut c);
    rand_lines(&mut c);
    rsa(&mut c);
    p256(&mut c);
    chacha20poly1305(&mut c);
    uuid(&mut c);
    proptest(&mut c);
    if c.failed > 0 {
        println!(
            "clients: {} of {} checks FAILED",
            c.failed,
            c.failed + c.passed
        );
        std::process::exit(1);
    }
    println!("clients: all {} checks passed", c.passed);
}
