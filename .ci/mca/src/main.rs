//! One call of one kernel, named on the command line, for scripts/aarch64-models.py.
//!
//! `ratchet-rng-mca KERNEL` calls the `mca_*` function of KERNEL twice (a cold call, then the
//! warm one the script models), each call producing the kernel's unit of output: one ChaCha8
//! key period (992 output bytes of 1024), one AES pool (4064 of 4096), one Keccak-p\[1600\]
//! permutation (136 bytes at the sponge generators' rate); the peers produce 1024 ChaCha8
//! bytes, 4096 AES-256-CTR bytes and one permutation. The script finds the warm call in qemu's
//! trace by the function's address and follows it until it returns. Inputs are fixed, so a run
//! is deterministic. For the script's gate, `keccak-pick MIDR_EL1 0|1` prints the Keccak backend
//! the crate picks on that core (`hazmat::keccak_for_aarch64_core`), and `detect` the ChaCha and
//! AES backends it picks on this CPU.

use std::hint::black_box;

use aes::Aes256;
use chacha20::cipher::{Block, KeyIvInit, StreamCipherCore};
use chacha20::{ChaChaCore, R8, variants::Ietf};
use ctr::{CtrCore, flavors::Ctr128BE};
use ratchet_rng::hazmat;

type ChaCha8Core = ChaChaCore<R8, Ietf>;
type Aes256Ctr = CtrCore<Aes256, Ctr128BE>;

#[unsafe(no_mangle)]
#[inline(never)]
pub fn mca_chacha8_ours(backend: hazmat::ChaCha, key: &mut [u32; 8], out: &mut [[u8; 992]; 1]) {
    backend.key_periods::<8>(key, out);
}

#[unsafe(no_mangle)]
#[inline(never)]
pub fn mca_chacha8_peer(core: &mut ChaCha8Core, out: &mut [Block<ChaCha8Core>; 16]) {
    core.write_keystream_blocks(out);
}

#[unsafe(no_mangle)]
#[inline(never)]
pub fn mca_aes256_ours(backend: hazmat::Aes256, key: &mut [u8; 32], out: &mut [[u8; 4064]; 1]) {
    backend.fill_pools(key, out);
}

#[unsafe(no_mangle)]
#[inline(never)]
pub fn mca_aes256_peer(core: &mut Aes256Ctr, out: &mut [Block<Aes256Ctr>; 256]) {
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

/// The peer's own dispatch: its SHA3 code where the CPU has the extension, else its scalar
/// code (the script runs it under a qemu CPU of each kind).
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

/// Runs `call` twice: the cold call and the warm one.
fn twice(mut call: impl FnMut()) {
    call();
    call();
}

fn usage() -> ! {
    eprintln!(
        "usage: ratchet-rng-mca chacha8_ours:BACKEND | chacha8_peer | aes256_ours:BACKEND | aes256_peer\n\
         \x20      | keccak12_ours:BACKEND | keccak24_ours:BACKEND | keccak12_peer | keccak24_peer\n\
         \x20      | keccak-pick MIDR_EL1 0|1 | detect"
    );
    std::process::exit(2)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (kernel, backend) = match args.first() {
        Some(arg) => arg.split_once(':').unwrap_or((arg, "")),
        None => usage(),
    };
    let missing = || -> ! {
        eprintln!("{kernel}: backend {backend:?} is not available on this CPU");
        std::process::exit(1)
    };
    let mut state = [3u64; 25];
    match kernel {
        "keccak-pick" => {
            let [_, midr, sha3] = &args[..] else { usage() };
            let midr =
                u64::from_str_radix(midr.trim_start_matches("0x"), 16).unwrap_or_else(|_| usage());
            println!("{}", hazmat::keccak_for_aarch64_core(midr, sha3 == "1"));
        }
        "detect" => {
            println!("{} {}", hazmat::ChaCha::detect(), hazmat::Aes256::detect());
        }
        "chacha8_ours" => {
            let backend = hazmat::ChaCha::by_name(backend).unwrap_or_else(|| missing());
            let (mut key, mut out) = ([7u32; 8], [[0u8; 992]; 1]);
            twice(|| mca_chacha8_ours(backend, black_box(&mut key), black_box(&mut out)));
        }
        "chacha8_peer" => {
            let mut core = ChaCha8Core::new(&[7u8; 32].into(), &[0u8; 12].into());
            let mut out = [Block::<ChaCha8Core>::default(); 16];
            twice(|| mca_chacha8_peer(black_box(&mut core), black_box(&mut out)));
        }
        "aes256_ours" => {
            let backend = hazmat::Aes256::by_name(backend).unwrap_or_else(|| missing());
            let (mut key, mut out) = ([7u8; 32], [[0u8; 4064]; 1]);
            twice(|| mca_aes256_ours(backend, black_box(&mut key), black_box(&mut out)));
        }
        "aes256_peer" => {
            let mut core = Aes256Ctr::new(&[7u8; 32].into(), &[0u8; 16].into());
            let mut out = [Block::<Aes256Ctr>::default(); 256];
            twice(|| mca_aes256_peer(black_box(&mut core), black_box(&mut out)));
        }
        "keccak12_ours" => {
            let backend = hazmat::Keccak::by_name(backend).unwrap_or_else(|| missing());
            twice(|| mca_keccak12_ours(backend, black_box(&mut state)));
        }
        "keccak24_ours" => {
            let backend = hazmat::Keccak::by_name(backend).unwrap_or_else(|| missing());
            twice(|| mca_keccak24_ours(backend, black_box(&mut state)));
        }
        "keccak12_peer" => {
            let keccak = keccak::Keccak::new();
            twice(|| mca_keccak12_peer(black_box(&keccak), black_box(&mut state)));
        }
        "keccak24_peer" => {
            let keccak = keccak::Keccak::new();
            twice(|| mca_keccak24_peer(black_box(&keccak), black_box(&mut state)));
        }
        _ => usage(),
    }
    black_box(state);
}
