//! The Rust side of the ChaCha8 save/restore interoperability check against Go
//! (issue 13; `.ci/run` drives it together with `tests/go/chacha8_state`, which
//! has the same command line and output format):
//!
//! ```text
//! chacha8_state save SEED OPS   save() after OPS, and the next 64 bytes
//! chacha8_state continue N      reads a hex state on stdin, restores it, prints
//!                               "ok SAVE NEXT" (SAVE: save() of the restored state,
//!                               NEXT: its next N bytes) or "error"
//! ```
//! SEED is 64 hex digits; OPS a comma-separated list of `u` (`next_u64`, 8 bytes of
//! the stream) and `rN` (`fill_bytes` of N bytes), `X*K` repeating X, `-` for none.
//! Output is lowercase hex. Usage errors exit with status 2.

use std::io::BufRead;
use std::process::ExitCode;

use ratchet_rng::ChaChaKeyErasureRng;
use ratchet_rng::rand_core::{Rng, SeedableRng};

fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn from_hex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) || !s.is_ascii() {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).ok())
        .collect()
}

fn next_hex(rng: &mut ChaChaKeyErasureRng, n: usize) -> String {
    let mut out = vec![0u8; n];
    rng.fill_bytes(&mut out);
    to_hex(&out)
}

/// Applies OPS; `Err` names a malformed operation.
fn run(rng: &mut ChaChaKeyErasureRng, ops: &str) -> Result<(), String> {
    if ops == "-" {
        return Ok(());
    }
    for op in ops.split(',') {
        let (name, times) = match op.split_once('*') {
            Some((name, k)) => (name, k.parse::<usize>().map_err(|_| op.to_string())?),
            None => (op, 1),
        };
        for _ in 0..times {
            if name == "u" {
                rng.next_u64();
            } else {
                let n: usize = name
                    .strip_prefix('r')
                    .and_then(|n| n.parse().ok())
                    .ok_or_else(|| op.to_string())?;
                let mut buf = vec![0u8; n];
                rng.fill_bytes(&mut buf);
            }
        }
    }
    Ok(())
}

fn usage(msg: &str) -> ExitCode {
    eprintln!("chacha8_state: {msg}");
    eprintln!("usage: chacha8_state save SEED OPS | continue N < STATE_HEX");
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let args: Vec<String> = match std::env::args_os().map(|a| a.into_string()).collect() {
        Ok(args) => args,
        Err(_) => return usage("arguments must be UTF-8"),
    };
    match args.get(1).map(String::as_str) {
        Some("save") if args.len() == 4 => {
            let Some(seed) = from_hex(&args[2]).and_then(|s| <[u8; 32]>::try_from(s).ok()) else {
                return usage("a seed is 64 hex digits");
            };
            let mut rng = ChaChaKeyErasureRng::from_seed(seed);
            if let Err(op) = run(&mut rng, &args[3]) {
                return usage(&format!("bad operation {op:?}"));
            }
            let saved = rng.save();
            println!("{} {}", to_hex(saved.as_ref()), next_hex(&mut rng, 64));
        }
        Some("continue") if args.len() == 3 => {
            let Ok(n) = args[2].parse::<usize>() else {
                return usage("bad length");
            };
            let mut line = String::new();
            if std::io::stdin().lock().read_line(&mut line).is_err() {
                return usage("no state on stdin");
            }
            let Some(state) = from_hex(line.trim()) else {
                return usage("the state is not hex");
            };
            match ChaChaKeyErasureRng::restore(&state) {
                Ok(mut rng) => {
                    let saved = rng.save();
                    println!("ok {} {}", to_hex(saved.as_ref()), next_hex(&mut rng, n));
                }
                Err(_) => println!("error"),
            }
        }
        _ => return usage("unknown mode or wrong number of arguments"),
    }
    ExitCode::SUCCESS
}
