//! One call of one kernel, named on the command line, for scripts/aarch64-models.py.
//!
//! `ratchet-rng-mca KERNEL` calls `mca_KERNEL` twice (a cold call, then the warm one the script
//! models), each call producing the kernel's unit of output: one ChaCha8 key period (992 output
//! bytes of 1024), one AES pool (4064 of 4096), one Keccak-p\[1600\] permutation (136 bytes at
//! the sponge generators' rate); the peers produce 1024 ChaCha8 bytes, 4096 AES-256-CTR bytes and
//! one permutation. The script finds the warm call's executed instructions in qemu's trace by the
//! function's address and follows it until it returns. `list` prints the kernels this CPU can
//! run. Inputs are fixed, so a run is deterministic.

use std::hint::black_box;

use aes::Aes256;
use chacha20::cipher::{KeyIvInit, StreamCipherCore};
use chacha20::{ChaChaCore, R8, variants::Ietf};
use ctr::flavors::Ctr128BE;
use ratchet_rng::hazmat;

type Block = chacha20::cipher::Block<ChaChaCore<R8, Ietf>>;
type AesBlock = chacha20::cipher::Block<ctr::CtrCore<Aes256, Ctr128BE>>;

/// Our ChaCha8 on `backend`: one key period.
fn chacha_ours(backend: &str) {
    let backend = hazmat::ChaCha::by_name(backend).expect("backend unavailable on this CPU");
    let mut key = [7u32; 8];
    let mut out = [[0u8; 992]; 1];
    for _ in 0..2 {
        mca_chacha8_ours(backend, black_box(&mut key), black_box(&mut out));
    }
}

#[unsafe(no_mangle)]
#[inline(never)]
pub fn mca_chacha8_ours(backend: hazmat::ChaCha, key: &mut [u32; 8], out: &mut [[u8; 992]; 1]) {
    backend.key_periods::<8>(key, out);
}

#[unsafe(no_mangle)]
#[inline(never)]
pub fn mca_chacha8_peer(core: &mut ChaChaCore<R8, Ietf>, out: &mut [Block; 16]) {
    core.write_keystream_blocks(out);
}

#[unsafe(no_mangle)]
#[inline(never)]
pub fn mca_aes256_ours(backend: hazmat::Aes256, key: &mut [u8; 32], out: &mut [[u8; 4064]; 1]) {
    backend.fill_pools(key, out);
}

#[unsafe(no_mangle)]
#[inline(never)]
pub fn mca_aes256_peer(core: &mut ctr::CtrCore<Aes256, Ctr128BE>, out: &mut [AesBlock; 256]) {
    core.write_keystream_blocks(out);
}

#[unsafe(no_mangle)]
#[inline(never)]
pub fn mca_keccak12_ours(backend: hazmat::Keccak, state: &mut [u64; 25]) {
    backend.permute::<12>(state);
}

#[unsafe(no_mangle)]
#[inline(never)]
pub fn mca_keccak24_ours(backend: hazmat::Keccak, state: &mut [u64; 25]) {
    backend.permute::<24>(state);
}

/// The peer's own dispatch: its SHA3 code where the CPU has the extension, else its scalar code.
#[unsafe(no_mangle)]
#[inline(never)]
pub fn mca_keccak12_peer(keccak: &keccak::Keccak, state: &mut [u64; 25]) {
    keccak.with_p1600::<12>(|p1600| p1600(state));
}

#[unsafe(no_mangle)]
#[inline(never)]
pub fn mca_keccak24_peer(keccak: &keccak::Keccak, state: &mut [u64; 25]) {
    keccak.with_p1600::<24>(|p1600| p1600(state));
}

/// The Keccak backend the crate picks on a core with this MIDR_EL1 and SHA3 flag.
///
/// Interim, until `hazmat::keccak_for_aarch64_core` (issue 48, part 1) lands: the rule
/// (Apple cores with SHA3 get `aarch64_sha3`, every other core `soft`).
fn keccak_for_aarch64_core(midr_el1: u64, has_sha3: bool) -> &'static str {
    let apple = (midr_el1 >> 24) & 0xff == 0x61;
    if apple && has_sha3 { "aarch64_sha3" } else { "soft" }
}

fn main() {
    let kernel = std::env::args().nth(1).unwrap_or_default();
    let mut state = [3u64; 25];
    match kernel.as_str() {
        "list" => {
            let names = |v: Vec<String>| v.join(",");
            println!("chacha {}", names(hazmat::ChaCha::available().map(|b| b.name().to_string()).collect()));
            println!("aes {}", names(hazmat::Aes256::available().map(|b| b.name().to_string()).collect()));
            println!("keccak {}", names(hazmat::Keccak::available().map(|b| b.name().to_string()).collect()));
        }
        "keccak-pick" => {
            let arg = |i: usize| std::env::args().nth(i).unwrap_or_default();
            let midr = u64::from_str_radix(arg(2).trim_start_matches("0x"), 16).expect("MIDR_EL1 in hex");
            println!("{}", keccak_for_aarch64_core(midr, arg(3) == "1"));
        }
        k if k.starts_with("chacha8_ours:") => chacha_ours(&k["chacha8_ours:".len()..]),
        "chacha8_peer" => {
            let mut core = ChaChaCore::<R8, Ietf>::new(&[7u8; 32].into(), &[0u8; 12].into());
            let mut out = [Block::default(); 16];
            for _ in 0..2 {
                mca_chacha8_peer(black_box(&mut core), black_box(&mut out));
            }
        }
        k if k.starts_with("aes256_ours:") => {
            let backend = hazmat::Aes256::by_name(&k["aes256_ours:".len()..]).expect("backend unavailable on this CPU");
            let mut key = [7u8; 32];
            let mut out = [[0u8; 4064]; 1];
            for _ in 0..2 {
                mca_aes256_ours(backend, black_box(&mut key), black_box(&mut out));
            }
        }
        "aes256_peer" => {
            let mut core = ctr::CtrCore::<Aes256, Ctr128BE>::new(&[7u8; 32].into(), &[0u8; 16].into());
            let mut out = [AesBlock::default(); 256];
            for _ in 0..2 {
                mca_aes256_peer(black_box(&mut core), black_box(&mut out));
            }
        }
        k if k.starts_with("keccak12_ours:") || k.starts_with("keccak24_ours:") => {
            let backend = hazmat::Keccak::by_name(&k[14..]).expect("backend unavailable on this CPU");
            for _ in 0..2 {
                if k.starts_with("keccak12") {
                    mca_keccak12_ours(backend, black_box(&mut state));
                } else {
                    mca_keccak24_ours(backend, black_box(&mut state));
                }
            }
        }
        "keccak12_peer" | "keccak24_peer" => {
            let keccak = keccak::Keccak::new();
            for _ in 0..2 {
                if kernel == "keccak12_peer" {
                    mca_keccak12_peer(black_box(&keccak), black_box(&mut state));
                } else {
                    mca_keccak24_peer(black_box(&keccak), black_box(&mut state));
                }
            }
        }
        _ => {
            eprintln!("usage: ratchet-rng-mca list | chacha8_ours:BACKEND | chacha8_peer | aes256_ours:BACKEND | aes256_peer | keccak12_ours:BACKEND | keccak24_ours:BACKEND | keccak12_peer | keccak24_peer");
            std::process::exit(2);
        }
    }
    black_box(state);
}
