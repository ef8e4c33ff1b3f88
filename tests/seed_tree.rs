//! `SeedTree`: the frozen vectors of `tests/data/seed_tree_vectors.txt` against an
//! independent implementation of the construction in `docs/DERIVATION.md` (node
//! keys and generator seeds computed here with the RustCrypto `turboshake` crate,
//! not the crate's own Keccak); independence of the order and the thread
//! (`rayon`); and `SeedableRng::fork` / `try_fork` on every generator.
//!
//! Under Miri (`cfg(miri)`), where one 4 KiB pool of the portable AES takes
//! half a minute: the vectors of the other generators at three paths, fewer
//! threads, and `fork` on one sponge and one ChaCha generator; the whole file
//! is rendered, docs/DERIVATION.md checked against it (text only, over a
//! minute interpreted) and the rayon job run, in the native runs only (Miri
//! reports undefined behaviour in rayon's `crossbeam-epoch` under Stacked
//! Borrows).

use crate::common;

use common::{hex, one_fill};
use ratchet_rng::rand_core::{Rng, SeedableRng};
use ratchet_rng::{
    AesCtrPoolRng, ChaCha12KeyErasureRng, ChaCha20KeyErasureRng, ChaChaKeyErasureRng, SeedTree,
    SeedTreeRng, ShakeRng, SpongeSeed, TurboShakeRng,
};
#[cfg(not(target_family = "wasm"))]
use rayon::prelude::*;
use turboshake::digest::{ExtendableOutput, Update, XofReader};

const VECTORS: &str = include_str!("data/seed_tree_vectors.txt");
const VECTORS_PATH: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/seed_tree_vectors.txt"
);

/// The root key of the vectors.
const ROOT_KEY: &[u8] = b"ratchet-rng seed tree vectors";

/// The paths of the vectors (the syntax of `examples/stream.rs --path`).
const PATHS: [&str; 6] = [
    "",
    "7",
    "7/3",
    "label:east",
    "7/label:east/0",
    "18446744073709551615/label:/2",
];

/// Bytes of each generator's stream kept.
const STREAM_BYTES: usize = 64;

/// One step of a path.
enum Step<'a> {
    Index(u64),
    Label(&'a [u8]),
}

fn parse_path(path: &str) -> Vec<Step<'_>> {
    if path.is_empty() {
        return Vec::new();
    }
    path.split('/')
        .map(|part| match part.strip_prefix("label:") {
            Some(label) => Step::Label(label.as_bytes()),
            None => Step::Index(part.parse().expect("index")),
        })
        .collect()
}

fn node(path: &str) -> SeedTree {
    let mut node = SeedTree::new(ROOT_KEY);
    for step in parse_path(path) {
        node = match step {
            Step::Index(i) => node.child(i),
            Step::Label(l) => node.child_label(l),
        };
    }
    node
}

// --- the independent implementation (docs/DERIVATION.md, version 1) ---------------

/// TurboSHAKE256 of `msg` with domain byte `D`, `len` bytes, from the oracle.
fn ts<const D: u8>(msg: &[u8], len: usize) -> Vec<u8> {
    let mut h = turboshake::CTurboShake256::<D>::default();
    h.update(msg);
    let mut out = vec![0u8; len];
    h.finalize_xof().read(&mut out);
    out
}

fn oracle_node(path: &str) -> Vec<u8> {
    let mut msg = vec![0x01, 0x00];
    msg.extend_from_slice(&(ROOT_KEY.len() as u64).to_le_bytes());
    msg.extend_from_slice(ROOT_KEY);
    let mut key = ts::<0x54>(&msg, 32);
    for step in parse_path(path) {
        let mut msg = vec![0x01];
        match step {
            Step::Index(i) => {
                msg.push(0x01);
                msg.extend_from_slice(&key);
                msg.extend_from_slice(&i.to_le_bytes());
            }
            Step::Label(l) => {
                msg.push(0x02);
                msg.extend_from_slice(&key);
                msg.extend_from_slice(&(l.len() as u64).to_le_bytes());
                msg.extend_from_slice(l);
            }
        }
        key = ts::<0x54>(&msg, 32);
    }
    key
}

fn oracle_seed(node_key: &[u8], id: u8, len: usize) -> Vec<u8> {
    let mut msg = vec![0x01, id];
    msg.extend_from_slice(node_key);
    ts::<0x55>(&msg, len)
}

/// The first bytes of generator `name` at the node `node_key`, seeded by the
/// oracle's seed through the generator's `from_seed` (whose streams are pinned by
/// the golden tests).
fn oracle_stream(name: &str, node_key: &[u8]) -> Vec<u8> {
    fn seed32(node_key: &[u8], id: u8) -> [u8; 32] {
        oracle_seed(node_key, id, 32).try_into().unwrap()
    }
    fn sponge(node_key: &[u8], id: u8) -> SpongeSeed {
        SpongeSeed::try_from(&oracle_seed(node_key, id, 136)[..]).unwrap()
    }
    let n = STREAM_BYTES;
    match name {
        "turboshake" => one_fill(&mut TurboShakeRng::from_seed(sponge(node_key, 1)), n),
        "shake" => one_fill(&mut ShakeRng::from_seed(sponge(node_key, 2)), n),
        "chacha8" => one_fill(&mut ChaChaKeyErasureRng::from_seed(seed32(node_key, 3)), n),
        "chacha12" => one_fill(
            &mut ChaCha12KeyErasureRng::from_seed(seed32(node_key, 4)),
            n,
        ),
        "chacha20" => one_fill(
            &mut ChaCha20KeyErasureRng::from_seed(seed32(node_key, 5)),
            n,
        ),
        "aes_ctr_pool" => one_fill(&mut AesCtrPoolRng::from_seed(seed32(node_key, 6)), n),
        _ => panic!("unknown generator {name}"),
    }
}

/// The first bytes of generator `name` at `node`, from the crate.
fn crate_stream(name: &str, node: &SeedTree) -> Vec<u8> {
    fn first<G: SeedTreeRng + Rng>(node: &SeedTree) -> Vec<u8> {
        one_fill(&mut node.rng::<G>(), STREAM_BYTES)
    }
    match name {
        "turboshake" => first::<TurboShakeRng>(node),
        "shake" => first::<ShakeRng>(node),
        "chacha8" => first::<ChaChaKeyErasureRng>(node),
        "chacha12" => first::<ChaCha12KeyErasureRng>(node),
        "chacha20" => first::<ChaCha20KeyErasureRng>(node),
        "aes_ctr_pool" => first::<AesCtrPoolRng>(node),
        _ => panic!("unknown generator {name}"),
    }
}

const GENERATORS: [&str; 6] = [
    "turboshake",
    "shake",
    "chacha8",
    "chacha12",
    "chacha20",
    "aes_ctr_pool",
];

/// The vector lines: `(what, path, hex)` for `what PATH: HEX`, where `what` is
/// `node` (the 32-byte node key) or a generator name (its first 64 bytes).
fn vector_lines() -> Vec<(&'static str, &'static str, &'static str)> {
    VECTORS
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let (head, value) = l.split_once(": ").expect("`what PATH: HEX`");
            let (what, path) = head.split_once(' ').expect("`what PATH`");
            let path = path.strip_prefix('"').and_then(|p| p.strip_suffix('"'));
            (what, path.expect("quoted path"), value.trim())
        })
        .collect()
}

/// The file as `write_vector_file` writes it.
fn render_vector_file() -> String {
    let mut out = String::from(
        "# ratchet-rng SeedTree vectors, construction version 1 (docs/DERIVATION.md).\n\
         # Written by `write_vector_file` in tests/seed_tree.rs\n\
         # (`cargo test --test outputs -- --ignored --exact seed_tree::write_vector_file`) from the\n\
         # crate; every line is checked against an independent implementation of the\n\
         # text of docs/DERIVATION.md over the RustCrypto `turboshake` crate (same file).\n\
         # Frozen: a line that changes is a breaking change.\n\
         # Root key: the 29 ASCII bytes \"ratchet-rng seed tree vectors\".\n\
         # Paths from the root, `/`-separated: a decimal index, or `label:` and the\n\
         # label's ASCII bytes (\"\" is the root; `label:` alone is the empty label).\n\
         # node \"PATH\": the node key (32 bytes).\n\
         # GEN \"PATH\": the first 64 bytes of GEN seeded at the node (`node.rng::<GEN>()`).\n",
    );
    for path in PATHS {
        let node = node(path);
        out += &format!("node \"{path}\": {}\n", hex_of(&oracle_node(path)));
        for name in GENERATORS {
            out += &format!(
                "{name} \"{path}\": {}\n",
                hex_of(&crate_stream(name, &node))
            );
        }
    }
    out
}

fn hex_of(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Rewrites the vector file. Run by hand only when adding vectors; the checks
/// below then hold the new lines to the independent implementation.
#[test]
#[ignore = "writes tests/data/seed_tree_vectors.txt"]
fn write_vector_file() {
    std::fs::write(VECTORS_PATH, render_vector_file()).unwrap();
}

#[test]
#[cfg_attr(
    miri,
    ignore = "renders 36 streams, 6 of them AES pools: minutes under Miri"
)]
fn vector_file_is_complete() {
    assert_eq!(VECTORS, render_vector_file());
    assert_eq!(vector_lines().len(), PATHS.len() * (1 + GENERATORS.len()));
}

#[test]
fn vectors_match_the_independent_implementation() {
    let scaled = |&(what, path, _): &(&str, &str, &str)| {
        !cfg!(miri) || (what != "aes_ctr_pool" && PATHS[..3].contains(&path))
    };
    for (what, path, value) in vector_lines().into_iter().filter(scaled) {
        let want = hex(value);
        let key = oracle_node(path);
        if what == "node" {
            assert_eq!(key, want, "node {path:?}");
        } else {
            assert_eq!(oracle_stream(what, &key), want, "{what} {path:?}");
            assert_eq!(crate_stream(what, &node(path)), want, "{what} {path:?}");
        }
    }
}

#[test]
fn descend_is_a_chain_of_children() {
    let root = SeedTree::new(ROOT_KEY);
    let mut a: ChaChaKeyErasureRng = root.descend(&[7, 3]).rng();
    let mut b: ChaChaKeyErasureRng = node("7/3").rng();
    assert_eq!(a.next_u64(), b.next_u64());
}

// --- order and thread independence -----------------------------------------------

/// Points of item `i` of the Monte Carlo job that fall inside the unit circle,
/// from `root.child(i)` (the pattern of `examples/parallel.rs`, with 24-bit float
/// coordinates).
#[cfg(not(target_family = "wasm"))]
fn hits(root: &SeedTree, i: u64, points: u32) -> u64 {
    let mut rng: ChaChaKeyErasureRng = root.child(i).rng();
    let mut inside = 0;
    for _ in 0..points {
        let x = (rng.next_u32() >> 8) as f64 / (1u32 << 24) as f64;
        let y = (rng.next_u32() >> 8) as f64 / (1u32 << 24) as f64;
        inside += u64::from(x * x + y * y < 1.0);
    }
    inside
}

/// Points per item (under Miri: fewer, a fraction of one key period).
#[cfg(not(target_family = "wasm"))]
const POINTS: u32 = if cfg!(miri) { 50 } else { 1000 };

/// Per-item results of `items` items on a pool of `threads` threads, in
/// `reverse` order or not; returned in item order. (Not on WASM: no threads, and
/// rayon does not build there.)
#[cfg(not(target_family = "wasm"))]
fn run_job(threads: usize, reverse: bool, items: u64) -> Vec<u64> {
    let root = SeedTree::new(b"monte carlo");
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    let order: Vec<u64> = if reverse {
        (0..items).rev().collect()
    } else {
        (0..items).collect()
    };
    let mut results: Vec<(u64, u64)> = pool.install(|| {
        order
            .par_iter()
            .map(|&i| (i, hits(&root, i, POINTS)))
            .collect()
    });
    results.sort_unstable();
    results.into_iter().map(|(_, h)| h).collect()
}

#[test]
#[cfg(not(target_family = "wasm"))]
#[cfg_attr(
    miri,
    ignore = "rayon's crossbeam-epoch 0.9 breaks Stacked Borrows (its list entry cast), not this crate"
)]
fn results_do_not_depend_on_threads_or_order() {
    let (items, runs): (u64, &[(usize, bool)]) = if cfg!(miri) {
        (4, &[(2, false), (1, true)])
    } else {
        (64, &[(2, false), (8, false), (1, true), (8, true)])
    };
    let one = run_job(1, false, items);
    for &(threads, reverse) in runs {
        assert_eq!(run_job(threads, reverse, items), one, "{threads} threads");
    }
    // And sequentially, without rayon.
    let root = SeedTree::new(b"monte carlo");
    let plain: Vec<u64> = (0..items).map(|i| hits(&root, i, POINTS)).collect();
    assert_eq!(plain, one);
    // The items are not all the same stream.
    assert!(one.windows(2).any(|w| w[0] != w[1]));
}

#[test]
#[cfg_attr(
    all(target_family = "wasm", not(target_feature = "atomics")),
    ignore = "spawns threads: none on this target"
)]
fn nodes_derived_on_other_threads_are_the_same() {
    let nodes: u64 = if cfg!(miri) { 4 } else { 16 };
    let here: Vec<u64> = (0..nodes)
        .map(|i| node("7").child(i).rng::<TurboShakeRng>().next_u64())
        .collect();
    let there: Vec<u64> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..nodes)
            .rev()
            .map(|i| s.spawn(move || node("7").child(i).rng::<TurboShakeRng>().next_u64()))
            .collect();
        let mut got: Vec<u64> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        got.reverse();
        got
    });
    assert_eq!(here, there);
}

// --- SeedableRng::fork / try_fork (rand_core's defaults) ---------------------------

/// `fork` seeds the child from the parent's next `Seed`-sized bytes (`from_rng`),
/// and `try_fork` is the same; the parent moves on past those bytes.
fn check_fork<G>(make: fn() -> G)
where
    G: SeedableRng + Rng,
    G::Seed: AsMut<[u8]> + Default,
{
    let seed_len = G::Seed::default().as_mut().len();
    let mut twin = make();
    let mut seed = G::Seed::default();
    twin.fill_bytes(seed.as_mut());
    let want_child = one_fill(&mut G::from_seed(seed), 100);
    let want_parent = one_fill(&mut twin, 100);

    let mut parent = make();
    let mut child = parent.fork();
    assert_eq!(one_fill(&mut child, 100), want_child);
    assert_eq!(one_fill(&mut parent, 100), want_parent);

    let mut parent = make();
    let Ok(mut child) = parent.try_fork();
    assert_eq!(one_fill(&mut child, 100), want_child);
    assert_eq!(one_fill(&mut parent, 100), want_parent);

    // The child is not the parent's continuation.
    let mut parent = make();
    let mut child = parent.fork();
    assert_ne!(one_fill(&mut child, 32), one_fill(&mut parent, 32));
    assert!(seed_len == 32 || seed_len == 136);
}

#[test]
fn fork_and_try_fork_work_for_every_generator() {
    check_fork(|| TurboShakeRng::from_key(b"fork"));
    check_fork(|| ChaChaKeyErasureRng::from_key(b"fork"));
    // Under Miri one sponge and one ChaCha: each check makes seven generators
    // (five AES pools would take minutes).
    if !cfg!(miri) {
        check_fork(|| ShakeRng::from_key(b"fork"));
        check_fork(|| ChaCha12KeyErasureRng::from_key(b"fork"));
        check_fork(|| ChaCha20KeyErasureRng::from_key(b"fork"));
        check_fork(|| AesCtrPoolRng::from_key(b"fork"));
    }
}

// --- docs/DERIVATION.md: its vectors and worked example ----------------------------

const DERIVATION_MD: &str = include_str!("../docs/DERIVATION.md");

/// docs/DERIVATION.md shows every line of the vector file, in order, and says
/// how many there are.
#[test]
#[cfg_attr(
    miri,
    ignore = "compares two texts and runs no code of the crate: over a minute under Miri"
)]
fn derivation_doc_shows_every_vector() {
    let file: Vec<&str> = VECTORS
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .collect();
    let doc: Vec<&str> = DERIVATION_MD
        .lines()
        .filter(|l| {
            l.split_once(" \"")
                .is_some_and(|(what, _)| what == "node" || GENERATORS.contains(&what))
        })
        .collect();
    assert_eq!(doc, file, "docs/DERIVATION.md's vectors");
    let count = format!("all {} lines", file.len());
    let prose = DERIVATION_MD
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(prose.contains(&count), "docs/DERIVATION.md lacks `{count}`");
}

/// The intermediate seeds docs/DERIVATION.md gives for the path `7/3` (ChaCha8's
/// 32 bytes, TurboSHAKE's 136), from the independent implementation: the crate
/// seeds its generators at that node with exactly these bytes, and the doc
/// writes them verbatim.
#[test]
fn derivation_doc_gives_the_seeds_at_7_3() {
    let node_key = oracle_node("7/3");
    let chacha8 = oracle_seed(&node_key, 3, 32);
    let turboshake = oracle_seed(&node_key, 1, 136);
    let seeded = ChaChaKeyErasureRng::from_seed(chacha8.clone().try_into().unwrap());
    assert_eq!(
        one_fill(&mut { seeded }, STREAM_BYTES),
        crate_stream("chacha8", &node("7/3"))
    );
    let seeded = TurboShakeRng::from_seed(SpongeSeed::try_from(&turboshake[..]).unwrap());
    assert_eq!(
        one_fill(&mut { seeded }, STREAM_BYTES),
        crate_stream("turboshake", &node("7/3"))
    );
    for (name, seed) in [("chacha8", chacha8), ("turboshake", turboshake)] {
        let line = format!("seed {name} \"7/3\": {}", hex_of(&seed));
        assert!(
            DERIVATION_MD.contains(&line),
            "docs/DERIVATION.md lacks `{line}`"
        );
    }
}
