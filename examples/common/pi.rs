//! The Monte Carlo job of `examples/parallel.rs` (rayon, in one process) and of
//! `examples/mpi` (`mpi-pi`, over MPI): one definition, included by both, so that
//! CI can compare their output lines byte for byte (docs/PARALLEL.md).
//!
//! The job: `T` tasks; task `i` draws `S` points from
//! `SeedTree::new(key).child(i).rng::<G>()` and counts those inside the unit
//! circle. A point is 8 bytes of the stream: `x` = bytes 0..4 and `y` = bytes
//! 4..8, little-endian `u32`s (the low and high halves of one `next_u64`), the
//! point `(x / 2^32, y / 2^32)` of `[0, 1)^2`; it is inside if and only if
//! `x^2 + y^2 < 2^64`, computed exactly in integers (no floating point, so no
//! rounding can differ between machines). The result line is
//! `tasks=T samples=S hits=H digest=D pi=P`: `H` the sum of the hits, `D` the
//! first 16 bytes (lowercase hex) of TurboSHAKE256 (domain byte `0x1F`) of the
//! per-task hits in task order, each as 8 little-endian bytes, and `P` = `4H /
//! (TS)` truncated to 9 decimals, also in integers.

use ratchet_rng::rand_core::Rng;
use ratchet_rng::xof::{TURBOSHAKE_DEFAULT_DOMAIN, TurboShake256};
use ratchet_rng::{
    AesCtrPoolRng, ChaCha12KeyErasureRng, ChaCha20KeyErasureRng, ChaChaKeyErasureRng, SeedTree,
    SeedTreeRng, ShakeRng, TurboShakeRng,
};

/// The options every program of the job takes, for its usage text.
pub const JOB_USAGE: &str =
    "  --key HEX      the SeedTree root key, in hex (two digits per byte; may be empty)
  --tasks T      the number of tasks, 1 to 2^32
  --samples S    points per task, at least 1 (T * S at most 2^64 - 1)
  --gen G        the generator of every task: chacha8 (default), chacha12,
                 chacha20, aes, turboshake or shake (as in examples/stream.rs)";

/// Bytes of the digest over the per-task hits.
const DIGEST_BYTES: usize = 16;

/// The most tasks a job may have: the reducer keeps one count per task.
const MAX_TASKS: u64 = 1 << 32;

/// The generator a job's tasks draw from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gen {
    ChaCha8,
    ChaCha12,
    ChaCha20,
    Aes,
    TurboShake,
    Shake,
}

impl Gen {
    /// Every generator with its command-line name (the names of `stream`).
    const ALL: [(&'static str, Gen); 6] = [
        ("chacha8", Gen::ChaCha8),
        ("chacha12", Gen::ChaCha12),
        ("chacha20", Gen::ChaCha20),
        ("aes", Gen::Aes),
        ("turboshake", Gen::TurboShake),
        ("shake", Gen::Shake),
    ];

    fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().find(|(n, _)| *n == name).map(|&(_, g)| g)
    }
}

/// One job: the root key, `T`, `S` and the generator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Job {
    pub key: Vec<u8>,
    pub tasks: u64,
    pub samples: u64,
    pub generator: Gen,
}

impl Job {
    /// Parses the job's options from `args` (the program name excluded).
    /// Anything else is passed to `other` with the remaining arguments (from
    /// which it may take the option's value); `other` refuses what it does not
    /// know. `--key`, `--tasks` and `--samples` are required.
    pub fn parse<I, F>(args: I, mut other: F) -> Result<Job, String>
    where
        I: IntoIterator<Item = String>,
        F: FnMut(&str, &mut dyn Iterator<Item = String>) -> Result<(), String>,
    {
        let mut args = args.into_iter();
        let (mut key, mut tasks, mut samples, mut generator) = (None, None, None, None);
        while let Some(arg) = args.next() {
            let slot = match arg.as_str() {
                "--key" => &mut key,
                "--tasks" => &mut tasks,
                "--samples" => &mut samples,
                "--gen" => &mut generator,
                _ => {
                    other(&arg, &mut args)?;
                    continue;
                }
            };
            if slot.is_some() {
                return Err(format!("{arg} given twice"));
            }
            *slot = Some(args.next().ok_or_else(|| format!("{arg} needs a value"))?);
        }
        let key = parse_hex(&key.ok_or("--key is required")?)?;
        let tasks = parse_count("--tasks", &tasks.ok_or("--tasks is required")?)?;
        let samples = parse_count("--samples", &samples.ok_or("--samples is required")?)?;
        if tasks > MAX_TASKS {
            return Err(format!("--tasks {tasks}: at most 2^32"));
        }
        if tasks.checked_mul(samples).is_none() {
            return Err(format!(
                "--tasks {tasks} times --samples {samples} exceeds 2^64 - 1"
            ));
        }
        let generator = match generator {
            None => Gen::ChaCha8,
            Some(name) => Gen::from_name(&name).ok_or(format!("unknown --gen {name:?}"))?,
        };
        Ok(Job {
            key,
            tasks,
            samples,
            generator,
        })
    }

    /// The root of the job's tree: task `i` draws from `root().child(i)`.
    pub fn root(&self) -> SeedTree {
        SeedTree::new(&self.key)
    }

    /// The points of one task inside the unit circle: `S` points drawn from the
    /// job's generator seeded at `node` (the task's node, `root().child(i)`).
    pub fn hits(&self, node: &SeedTree) -> u64 {
        fn count<G: SeedTreeRng + Rng>(node: &SeedTree, samples: u64) -> u64 {
            let mut rng: G = node.rng();
            let mut inside = 0;
            for _ in 0..samples {
                inside += u64::from(in_circle(rng.next_u64()));
            }
            inside
        }
        let s = self.samples;
        match self.generator {
            Gen::ChaCha8 => count::<ChaChaKeyErasureRng>(node, s),
            Gen::ChaCha12 => count::<ChaCha12KeyErasureRng>(node, s),
            Gen::ChaCha20 => count::<ChaCha20KeyErasureRng>(node, s),
            Gen::Aes => count::<AesCtrPoolRng>(node, s),
            Gen::TurboShake => count::<TurboShakeRng>(node, s),
            Gen::Shake => count::<ShakeRng>(node, s),
        }
    }

    /// The result line for the per-task hits in task order (`per_task[i]` is
    /// task `i`'s), exactly `tasks=T samples=S hits=H digest=D pi=P`.
    ///
    /// # Panics
    /// If `per_task` does not hold one count per task, or a count exceeds `S`.
    pub fn line(&self, per_task: &[u64]) -> String {
        assert_eq!(per_task.len() as u64, self.tasks, "one count per task");
        assert!(
            per_task.iter().all(|&h| h <= self.samples),
            "hits <= samples"
        );
        let hits: u64 = per_task.iter().sum();
        let mut xof = TurboShake256::new(TURBOSHAKE_DEFAULT_DOMAIN).expect("0x1F is valid");
        for h in per_task {
            xof.absorb(&h.to_le_bytes());
        }
        let mut digest = [0u8; DIGEST_BYTES];
        xof.finalize().squeeze(&mut digest);
        let digest: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        // 4H / (TS) in units of 1e-9, rounded down: < 4e9 * 2^64 < 2^128.
        let total = u128::from(self.tasks * self.samples);
        let nano = 4 * u128::from(hits) * 1_000_000_000 / total;
        format!(
            "tasks={} samples={} hits={hits} digest={digest} pi={}.{:09}",
            self.tasks,
            self.samples,
            nano / 1_000_000_000,
            nano % 1_000_000_000
        )
    }
}

/// Whether the point of 8 stream bytes, read as one little-endian `u64`, is
/// inside the unit circle: `x` = the low 32 bits, `y` = the high 32 bits, the
/// point `(x / 2^32, y / 2^32)`, inside if and only if `x^2 + y^2 < 2^64`
/// (exact in `u128`).
fn in_circle(point: u64) -> bool {
    let (x, y) = (u128::from(point as u32), u128::from(point >> 32));
    x * x + y * y < 1 << 64
}

/// A positive decimal count (digits only).
fn parse_count(option: &str, text: &str) -> Result<u64, String> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("{option} {text:?}: a positive decimal integer"));
    }
    match text.parse::<u64>() {
        Ok(0) => Err(format!("{option} 0: at least 1")),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("{option} {text}: at most 2^64 - 1")),
    }
}

/// Hex digits, two per byte (either case); the empty string is the empty key.
fn parse_hex(text: &str) -> Result<Vec<u8>, String> {
    let digits = text.as_bytes();
    if !digits.len().is_multiple_of(2) || !digits.iter().all(u8::is_ascii_hexdigit) {
        return Err(format!("--key {text:?}: hex digits, two per byte"));
    }
    Ok(digits
        .chunks_exact(2)
        .map(|pair| {
            let pair = std::str::from_utf8(pair).expect("ASCII hex digits");
            u8::from_str_radix(pair, 16).expect("checked hex digits")
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(text: &str) -> Vec<String> {
        text.split_whitespace().map(String::from).collect()
    }

    fn job(text: &str) -> Result<Job, String> {
        Job::parse(args(text), |arg, _| Err(format!("unknown option {arg:?}")))
    }

    #[test]
    fn options() {
        assert_eq!(
            job("--tasks 3 --key 6B00 --samples 007"),
            Ok(Job {
                key: vec![0x6b, 0],
                tasks: 3,
                samples: 7,
                generator: Gen::ChaCha8,
            })
        );
        let empty = ["--key", "", "--tasks", "1", "--samples", "1"].map(String::from);
        let none = |arg: &str, _: &mut dyn Iterator<Item = String>| Err(arg.to_string());
        assert_eq!(Job::parse(empty, none).unwrap().key, Vec::<u8>::new());
        let aes = job("--gen aes --key 00 --tasks 1 --samples 1").unwrap();
        assert_eq!((aes.key, aes.generator), (vec![0], Gen::Aes));
        for (name, generator) in Gen::ALL {
            let line = format!("--key 00 --tasks 1 --samples 1 --gen {name}");
            assert_eq!(job(&line).unwrap().generator, generator);
        }
        let max = "--key 00 --tasks 4294967296 --samples 4294967295";
        assert_eq!(job(max).unwrap().tasks, 1 << 32);
        for bad in [
            "",
            "--tasks 1 --samples 1",
            "--key 00 --samples 1",
            "--key 00 --tasks 1",
            "--key 0 --tasks 1 --samples 1",
            "--key 0g --tasks 1 --samples 1",
            "--key 00 --tasks 0 --samples 1",
            "--key 00 --tasks 1 --samples 0",
            "--key 00 --tasks +1 --samples 1",
            "--key 00 --tasks 1 --samples -1",
            "--key 00 --tasks 0x10 --samples 1",
            "--key 00 --tasks 4294967297 --samples 1",
            "--key 00 --tasks 4294967296 --samples 4294967297",
            "--key 00 --tasks 1 --samples 18446744073709551616",
            "--key 00 --tasks 1 --samples 1 --gen thread",
            "--key 00 --tasks 1 --samples 1 --gen",
            "--key 00 --key 00 --tasks 1 --samples 1",
            "--key 00 --tasks 1 --samples 1 --bogus",
        ] {
            assert!(job(bad).is_err(), "{bad:?} accepted");
        }
    }

    /// The job's line, frozen (written once from this code): a change to the
    /// point mapping, the task derivation, the digest or the format fails here.
    #[test]
    fn known_lines() {
        let line = |text: &str| {
            let job = job(text).unwrap();
            let root = job.root();
            let hits: Vec<u64> = (0..job.tasks).map(|i| job.hits(&root.child(i))).collect();
            job.line(&hits)
        };
        assert_eq!(
            line("--key 6b6579 --tasks 4 --samples 1000"),
            "tasks=4 samples=1000 hits=3112 digest=00b3b9158c6125915126c152aa25f32a pi=3.112000000"
        );
        assert_eq!(
            line("--key 00 --tasks 3 --samples 10 --gen turboshake"),
            "tasks=3 samples=10 hits=26 digest=f9111f3aeeb8088ea328514cc2383e88 pi=3.466666666"
        );
    }

    /// The exact test at the circle's edge: `x^2 + y^2 < 2^64`, no rounding.
    #[test]
    fn points_on_the_edge() {
        let point = |x: u32, y: u32| u64::from(x) | u64::from(y) << 32;
        assert!(in_circle(point(u32::MAX, 0)));
        assert!(in_circle(point(0, u32::MAX)));
        assert!(in_circle(0));
        // The largest y inside for two values of x, and y + 1 outside.
        for (x, y) in [
            (3_037_000_500, 3_037_000_499),
            (4_000_000_000, 1_564_207_170),
        ] {
            assert!(in_circle(point(x, y)) && in_circle(point(y, x)));
            assert!(!in_circle(point(x, y + 1)) && !in_circle(point(y + 1, x)));
        }
        assert!(!in_circle(u64::MAX));
        let job = Job {
            key: Vec::new(),
            tasks: 1,
            samples: 1,
            generator: Gen::ChaCha8,
        };
        assert_eq!(
            job.line(&[1]),
            "tasks=1 samples=1 hits=1 digest=76dc8b4bd34f1ff08e24495ed15710dd pi=4.000000000"
        );
    }
}
