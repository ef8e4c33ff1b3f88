//! [`SeedTree`]: index- and label-addressable derived seeds, for reproducible
//! parallel streams.
//!
//! A tree node is a 32-byte key. The root is derived from key material of any
//! length; a child from its parent and a `u64` index or a byte-string label; a
//! generator's seed from a node and the generator's identifier. Every step is one
//! TurboSHAKE256 call with a prefix-free input, so the node of a path, and the
//! stream of a generator at that node, depend on nothing but the root key and the
//! path: not on the order in which nodes are derived, the thread, the process or
//! the machine. The construction (version 1) is specified byte by byte, with test
//! vectors, in `docs/DERIVATION.md`.

use core::fmt;

use rand_core::SeedableRng;
use zeroize::Zeroize;

use crate::xof::TurboShake256;
use crate::{
    AesCtrPoolRng, ChaCha12KeyErasureRng, ChaCha20KeyErasureRng, ChaChaKeyErasureRng, ShakeRng,
    SpongeSeed, TurboShakeRng,
};

/// Version of the construction, the first byte of every input.
const VERSION: u8 = 0x01;

/// TurboSHAKE256 domain byte of node keys (root and children). Distinct from
/// every other domain byte of the crate: 0x08, 0x0C, 0x14, 0x41 (`from_key`),
/// 0x1F (the sponge generators) and [`SEED_DOMAIN`].
const NODE_DOMAIN: u8 = 0x54;

/// TurboSHAKE256 domain byte of generator seeds.
const SEED_DOMAIN: u8 = 0x55;

/// Tags of the node inputs (byte 1): what follows the version byte.
const TAG_ROOT: u8 = 0x00;
const TAG_INDEX: u8 = 0x01;
const TAG_LABEL: u8 = 0x02;

/// Bytes of a node key.
const NODE_KEY_BYTES: usize = 32;

/// A node of a tree of derived seeds: a 32-byte key from which any generator of
/// the crate can be seeded, and children can be derived by index or label.
///
/// ```
/// use ratchet_rng::{ChaChaKeyErasureRng, SeedTree, TurboShakeRng, rand_core::Rng};
///
/// let root = SeedTree::new(b"experiment 42");
/// let node = root.child(7).child(3);
/// let mut a: ChaChaKeyErasureRng = node.rng();
/// // The same path gives the same stream, however it was reached.
/// let mut b = SeedTree::new(b"experiment 42").child(7).child(3).rng::<ChaChaKeyErasureRng>();
/// assert_eq!(a.next_u64(), b.next_u64());
/// // Another path, or another generator at the same node, gives an unrelated stream.
/// let mut c: ChaChaKeyErasureRng = root.child(3).child(7).rng();
/// let mut d: TurboShakeRng = node.rng();
/// assert_ne!(a.next_u64(), c.next_u64());
/// assert_ne!(b.next_u64(), d.next_u64());
/// ```
///
/// # Construction
/// With `TS(D, x)` the first 32 bytes of TurboSHAKE256 of `x` with domain byte
/// `D`, `le64` a little-endian `u64`, and `||` concatenation (version 1):
///
/// - root: `TS(0x54, 01 || 00 || le64(len(key)) || key)`
/// - child `i`: `TS(0x54, 01 || 01 || parent || le64(i))`
/// - child labelled `l`: `TS(0x54, 01 || 02 || parent || le64(len(l)) || l)`
/// - seed of generator `g` at a node: the first 32 (136 for the sponge
///   generators) bytes of TurboSHAKE256(`0x55`, `01 || g || node`), fed to the
///   generator's `from_seed`. `g`: 1 [`TurboShakeRng`], 2 [`ShakeRng`], 3
///   [`ChaChaKeyErasureRng`], 4 [`ChaCha12KeyErasureRng`], 5
///   [`ChaCha20KeyErasureRng`], 6 [`AesCtrPoolRng`].
///
/// The inputs of one domain byte are prefix-free (a version and a tag byte, then
/// fixed-length fields or a length-prefixed label), so two different paths, or
/// an index and a label, or two generators, give the same key only through a
/// TurboSHAKE256 collision.
///
/// # Security
/// A node is a secret key: anyone holding it can compute its whole subtree and
/// every stream in it (a node reveals nothing about its parent or siblings). The
/// root is exactly as secret as the key given to [`new`](Self::new); use at
/// least 32 bytes of secret key material for cryptographic use, or any bytes
/// (an experiment name) for reproducible simulations. `Clone` copies the key
/// (a node is a key, not a stream); `Debug` prints no key; the key is wiped on
/// drop.
///
/// # `SeedTree` or `fork`
/// [`SeedableRng::fork`](rand_core::SeedableRng::fork) seeds a child from the
/// parent's *stream*: the n-th child depends on how much the parent has read
/// and on the order of the calls, so it is for one sequential program. A
/// `SeedTree` node depends only on its path: use it when the work is split
/// across threads, processes or machines, or when item `i` must get the same
/// stream whichever worker runs it and whenever.
#[derive(Clone)]
pub struct SeedTree {
    key: [u8; NODE_KEY_BYTES],
}

impl SeedTree {
    /// The root of the tree keyed by `key` (any length, the empty key included).
    #[must_use]
    pub fn new(key: &[u8]) -> Self {
        let mut xof = node_xof(TAG_ROOT);
        xof.absorb(&(key.len() as u64).to_le_bytes());
        xof.absorb(key);
        Self::from_xof(xof)
    }

    /// The child of this node with index `index`.
    #[must_use]
    pub fn child(&self, index: u64) -> Self {
        let mut xof = node_xof(TAG_INDEX);
        xof.absorb(&self.key);
        xof.absorb(&index.to_le_bytes());
        Self::from_xof(xof)
    }

    /// The child of this node labelled `label` (any bytes, the empty label
    /// included). A label never gives the node of an index.
    #[must_use]
    pub fn child_label(&self, label: &[u8]) -> Self {
        let mut xof = node_xof(TAG_LABEL);
        xof.absorb(&self.key);
        xof.absorb(&(label.len() as u64).to_le_bytes());
        xof.absorb(label);
        Self::from_xof(xof)
    }

    /// The node at `path`, a sequence of indices from this node:
    /// `root.descend(&[7, 3])` is `root.child(7).child(3)`.
    #[must_use]
    pub fn descend(&self, path: &[u64]) -> Self {
        let mut node = self.clone();
        for &index in path {
            node = node.child(index);
        }
        node
    }

    /// A generator `G` seeded from this node (see the construction above); the
    /// same node gives unrelated streams to different generators.
    #[must_use]
    pub fn rng<G: SeedTreeRng>(&self) -> G {
        G::from_node(self)
    }

    /// The TurboSHAKE256 reader of generator `id`'s seed at this node.
    fn seed_reader(&self, id: u8) -> crate::xof::TurboShake256Reader {
        let mut xof = turboshake(SEED_DOMAIN);
        xof.absorb(&[VERSION, id]);
        xof.absorb(&self.key);
        xof.finalize()
    }

    /// The 32-byte seed of generator `id` at this node.
    fn seed32(&self, id: u8) -> [u8; 32] {
        let mut seed = [0u8; 32];
        self.seed_reader(id).squeeze(&mut seed);
        seed
    }

    /// The 136-byte seed of sponge generator `id` at this node.
    fn sponge_seed(&self, id: u8) -> SpongeSeed {
        let mut seed = SpongeSeed::default();
        self.seed_reader(id).squeeze(seed.as_mut());
        seed
    }

    /// A node from a finalized node input.
    fn from_xof(xof: TurboShake256) -> Self {
        let mut key = [0u8; NODE_KEY_BYTES];
        xof.finalize().squeeze(&mut key);
        Self { key }
    }
}

/// TurboSHAKE256 with one of this module's domain bytes.
fn turboshake(domain: u8) -> TurboShake256 {
    match TurboShake256::new(domain) {
        Ok(xof) => xof,
        // Justified: `domain` is NODE_DOMAIN or SEED_DOMAIN, both in 0x01..=0x7F
        // (tested below).
        Err(_) => unreachable!("the seed tree's domain bytes are in 0x01..=0x7F"),
    }
}

/// The node hasher with the version and `tag` absorbed.
fn node_xof(tag: u8) -> TurboShake256 {
    let mut xof = turboshake(NODE_DOMAIN);
    xof.absorb(&[VERSION, tag]);
    xof
}

impl fmt::Debug for SeedTree {
    /// Prints the type name only: the key is secret.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SeedTree { .. }")
    }
}

impl Drop for SeedTree {
    fn drop(&mut self) {
        self.key.zeroize();
    }
}

mod sealed {
    pub trait Sealed {}
}

/// The generators a [`SeedTree`] node can seed: every generator of the crate.
/// Sealed: the generator identifiers are part of the documented construction.
pub trait SeedTreeRng: sealed::Sealed + Sized {
    /// The generator's identifier in the seed derivation (`g` in the
    /// construction of [`SeedTree`]).
    const TREE_ID: u8;

    /// The generator seeded from `node`.
    #[doc(hidden)]
    fn from_node(node: &SeedTree) -> Self;
}

macro_rules! seed_tree_rng {
    ($name:ident, $id:literal, sponge) => {
        impl sealed::Sealed for $name {}
        impl SeedTreeRng for $name {
            const TREE_ID: u8 = $id;
            fn from_node(node: &SeedTree) -> Self {
                $name::from_seed(node.sponge_seed($id))
            }
        }
    };
    ($name:ident, $id:literal) => {
        impl sealed::Sealed for $name {}
        impl SeedTreeRng for $name {
            const TREE_ID: u8 = $id;
            fn from_node(node: &SeedTree) -> Self {
                let mut seed = node.seed32($id);
                let rng = $name::from_seed(seed);
                seed.zeroize();
                rng
            }
        }
    };
}

seed_tree_rng!(TurboShakeRng, 1, sponge);
seed_tree_rng!(ShakeRng, 2, sponge);
seed_tree_rng!(ChaChaKeyErasureRng, 3);
seed_tree_rng!(ChaCha12KeyErasureRng, 4);
seed_tree_rng!(ChaCha20KeyErasureRng, 5);
seed_tree_rng!(AesCtrPoolRng, 6);

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::Rng;
    use std::format;

    #[test]
    fn domain_bytes_are_valid_and_distinct_from_the_generators() {
        for domain in [NODE_DOMAIN, SEED_DOMAIN] {
            assert!(TurboShake256::new(domain).is_ok());
            assert!(![0x08, 0x0C, 0x14, 0x41, 0x1F].contains(&domain));
        }
        assert_ne!(NODE_DOMAIN, SEED_DOMAIN);
    }

    #[test]
    fn debug_prints_no_key() {
        assert_eq!(format!("{:?}", SeedTree::new(b"k")), "SeedTree { .. }");
    }

    #[test]
    fn paths_are_separated() {
        let root = SeedTree::new(b"root");
        let keys = [
            root.key,
            root.child(0).key,
            root.child(1).key,
            root.child_label(b"").key,
            root.child_label(&0u64.to_le_bytes()).key,
            root.child(0).child(0).key,
            SeedTree::new(b"").key,
            SeedTree::new(b"root\0").key,
        ];
        for (i, a) in keys.iter().enumerate() {
            for b in &keys[i + 1..] {
                assert_ne!(a, b);
            }
        }
        assert_eq!(root.descend(&[4, 5]).key, root.child(4).child(5).key);
        assert_eq!(root.descend(&[]).key, root.key);
    }

    #[test]
    fn generators_get_unrelated_seeds() {
        let node = SeedTree::new(b"node");
        let ids = [1u8, 2, 3, 4, 5, 6];
        // Each seed derived twice (the same id gives the same seed), then every
        // pair compared: 12 derivations rather than 72 (Miri runs this test).
        let seeds: std::vec::Vec<_> = ids.iter().map(|&id| node.seed32(id)).collect();
        for (&id, seed) in ids.iter().zip(&seeds) {
            assert_eq!(node.seed32(id), *seed);
        }
        for (a, seed_a) in ids.iter().zip(&seeds) {
            for (b, seed_b) in ids.iter().zip(&seeds) {
                assert_eq!(a == b, seed_a == seed_b);
            }
        }
        let mut x: ChaChaKeyErasureRng = node.rng();
        let mut y: ChaCha12KeyErasureRng = node.rng();
        assert_ne!(x.next_u64(), y.next_u64());
    }
}
