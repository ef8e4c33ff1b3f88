//! Writes a generator's raw output to stdout, for statistical test batteries:
//!
//! ```sh
//! cargo run --release --example stream -- chacha8 | dieharder -a -g 200
//! cargo run --release --example stream -- aes --bytes 64M | rngtest
//! cargo run --release --example stream -- turboshake | RNG_test stdin   # PractRand
//! ```
//!
//! `stream GEN [--bytes N] [--seed HEX | --key HEX [--path P]] [--report]`; `stream --help`
//! prints the details. The argument parser is plain functions, unit-tested at the bottom
//! (`cargo test --all-features --example stream`).

use std::ffi::OsString;
use std::io::{self, Write};
use std::process::ExitCode;

use rand::Rng;
use ratchet_rng::{
    AesCtrPoolRng, ChaCha12KeyErasureRng, ChaCha20KeyErasureRng, ChaChaKeyErasureRng,
    SPONGE_SEED_BYTES, SeedTree, ShakeRng, TurboShakeRng,
};
use ratchet_rng::{SeedTreeRng, SpongeSeed, rand_core::SeedableRng};

const USAGE: &str = "\
usage: stream GEN [--bytes N] [--seed HEX | --key HEX [--path P]] [--report]

Writes GEN's raw output to stdout: unbounded unless --bytes is given, and quietly
with exit status 0 when the reader closes the pipe (e.g. `| head -c 1M`).

GEN (what is written)          --seed length
  turboshake  TurboShakeRng          136 bytes (272 hex digits)
  shake       ShakeRng               136 bytes
  chacha8     ChaChaKeyErasureRng     32 bytes (64 hex digits)
  chacha12    ChaCha12KeyErasureRng   32 bytes
  chacha20    ChaCha20KeyErasureRng   32 bytes
  aes         AesCtrPoolRng           32 bytes
  thread      ratchet_rng::fill (the thread-local generator; OS-seeded only)

Options:
  --bytes N   stop after N bytes. N is a positive decimal integer, optionally
              followed by K, M, G or T (binary: 2^10, 2^20, 2^30, 2^40), e.g.
              1000, 64K, 1G. 0 is rejected: leave --bytes out for no limit.
  --seed HEX  GEN::from_seed(seed): HEX is exactly the generator's seed, in hex
              (two digits per byte, in order), e.g. 64 zeros for chacha8. The
              stream is the one pinned in tests/data/golden_streams.txt.
  --key HEX   GEN::from_key(key): key material of any length (even empty).
  --path P    with --key: the stream of GEN at the SeedTree node P under the root
              SeedTree::new(key) (docs/DERIVATION.md), e.g. 7/3 for
              root.child(7).child(3), 7/label:east for root.child(7)
              .child_label(b\"east\"). P is `/`-separated steps: a decimal index
              (0 to 2^64-1) or `label:` followed by the label's bytes (no `/`;
              may be empty). An empty P is the root itself.
  --report    when done, print `stream: wrote N bytes` on stderr (N counts what
              the reader accepted, including what it had not read yet when it
              closed the pipe: up to the pipe's buffer, 64 KiB on Linux).
  -h, --help  print this help.
Without --seed or --key the generator is seeded from the OS (from_os_rng).

Errors (unknown GEN or option, bad or wrong-length HEX, bad N, a bad P or --path
without --key, --seed or --key with thread, an argument that is not UTF-8) print a
message and exit with status 2.
";

/// The generators `stream` can write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Generator {
    TurboShake,
    Shake,
    ChaCha8,
    ChaCha12,
    ChaCha20,
    Aes,
    Thread,
}

impl Generator {
    /// Every generator with its command-line name.
    const ALL: [(&'static str, Generator); 7] = [
        ("turboshake", Generator::TurboShake),
        ("shake", Generator::Shake),
        ("chacha8", Generator::ChaCha8),
        ("chacha12", Generator::ChaCha12),
        ("chacha20", Generator::ChaCha20),
        ("aes", Generator::Aes),
        ("thread", Generator::Thread),
    ];

    fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().find(|(n, _)| *n == name).map(|&(_, g)| g)
    }

    /// The length `--seed` must have, or `None` if the generator takes no seed.
    fn seed_bytes(self) -> Option<usize> {
        match self {
            Generator::TurboShake | Generator::Shake => Some(SPONGE_SEED_BYTES),
            Generator::Thread => None,
            _ => Some(32),
        }
    }
}

/// How the generator is seeded.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Seeding {
    Os,
    Seed(Vec<u8>),
    Key(Vec<u8>),
    /// `--key` with `--path`: the root key and the path from the root.
    Tree(Vec<u8>, Vec<Step>),
}

/// One step of a `--path`.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Step {
    Index(u64),
    Label(Vec<u8>),
}

/// Parses a `--path`: `/`-separated decimal indices and `label:` labels; the
/// empty path is the root.
fn parse_path(text: &str) -> Result<Vec<Step>, String> {
    if text.is_empty() {
        return Ok(Vec::new());
    }
    text.split('/')
        .map(|part| {
            if let Some(label) = part.strip_prefix("label:") {
                return Ok(Step::Label(label.as_bytes().to_vec()));
            }
            if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
                return Err(format!(
                    "bad path step {part:?} in {text:?}: a decimal index or label:NAME"
                ));
            }
            part.parse()
                .map(Step::Index)
                .map_err(|_| format!("path index {part:?} does not fit in 64 bits"))
        })
        .collect()
}

/// The SeedTree node of `key` and `path`.
fn tree_node(key: &[u8], path: &[Step]) -> SeedTree {
    path.iter()
        .fold(SeedTree::new(key), |node, step| match step {
            Step::Index(i) => node.child(*i),
            Step::Label(label) => node.child_label(label),
        })
}

/// The arguments as UTF-8 strings, or which one is not.
fn utf8_args<I: IntoIterator<Item = OsString>>(args: I) -> Result<Vec<String>, String> {
    args.into_iter()
        .enumerate()
        .map(|(i, arg)| {
            arg.into_string().map_err(|arg| {
                format!(
                    "argument {} is not valid UTF-8: {:?}",
                    i + 1,
                    arg.to_string_lossy()
                )
            })
        })
        .collect()
}

/// A parsed command line.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Options {
    generator: Generator,
    bytes: Option<u64>,
    seeding: Seeding,
    report: bool,
}

/// What the command line asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Command {
    Help,
    Stream(Options),
}

/// Parses a size: a positive decimal integer with an optional binary suffix
/// `K`, `M`, `G` or `T`.
fn parse_size(text: &str) -> Result<u64, String> {
    let (digits, shift) = match text.as_bytes().last() {
        Some(b'K') => (&text[..text.len() - 1], 10),
        Some(b'M') => (&text[..text.len() - 1], 20),
        Some(b'G') => (&text[..text.len() - 1], 30),
        Some(b'T') => (&text[..text.len() - 1], 40),
        _ => (text, 0),
    };
    let bad =
        || format!("bad size {text:?}: want a positive integer, optionally with K, M, G or T");
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let number: u64 = digits
        .parse()
        .map_err(|_| format!("size {text:?} does not fit in 64 bits"))?;
    if number == 0 {
        return Err("size 0: leave out --bytes for an unbounded stream".into());
    }
    number
        .checked_mul(1 << shift)
        .ok_or_else(|| format!("size {text:?} does not fit in 64 bits"))
}

/// Parses hex (two digits per byte, either case) into bytes.
fn parse_hex(text: &str) -> Result<Vec<u8>, String> {
    if !text.len().is_multiple_of(2) {
        return Err(format!(
            "hex has an odd number of digits ({}): two per byte",
            text.len()
        ));
    }
    let digit = |c: u8| match c {
        b'0'..=b'9' => Ok(c - b'0'),
        b'a'..=b'f' => Ok(c - b'a' + 10),
        b'A'..=b'F' => Ok(c - b'A' + 10),
        _ => Err(format!("not a hex digit: {:?}", char::from(c))),
    };
    text.as_bytes()
        .chunks_exact(2)
        .map(|pair| Ok((digit(pair[0])? << 4) | digit(pair[1])?))
        .collect()
}

/// Parses the arguments after the program name.
fn parse_args<I, S>(args: I) -> Result<Command, String>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let mut generator = None;
    let mut bytes = None;
    let mut seeding = Seeding::Os;
    let mut report = false;
    let mut path = None;
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let arg = arg.as_ref();
        let mut value = |name: &str| {
            args.next()
                .map(|v| v.as_ref().to_owned())
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match arg {
            "-h" | "--help" => return Ok(Command::Help),
            "--report" => report = true,
            "--bytes" => {
                if bytes.is_some() {
                    return Err("--bytes given twice".into());
                }
                bytes = Some(parse_size(&value(arg)?)?);
            }
            "--path" => {
                if path.is_some() {
                    return Err("--path given twice".into());
                }
                path = Some(parse_path(&value(arg)?)?);
            }
            "--seed" | "--key" => {
                if seeding != Seeding::Os {
                    return Err("give one --seed or --key".into());
                }
                let material = parse_hex(&value(arg)?)?;
                seeding = if arg == "--seed" {
                    Seeding::Seed(material)
                } else {
                    Seeding::Key(material)
                };
            }
            _ if arg.starts_with('-') => return Err(format!("unknown option {arg:?}")),
            _ => {
                if generator.is_some() {
                    return Err(format!("unexpected argument {arg:?}: one GEN only"));
                }
                let names = Generator::ALL.map(|(n, _)| n).join(" ");
                generator = Some(
                    Generator::from_name(arg)
                        .ok_or_else(|| format!("unknown generator {arg:?}: one of {names}"))?,
                );
            }
        }
    }
    let generator = generator.ok_or("no generator given")?;
    if let Some(path) = path {
        seeding = match seeding {
            Seeding::Key(key) => Seeding::Tree(key, path),
            _ => return Err("--path needs --key (the root key of the SeedTree)".into()),
        };
    }
    match (&seeding, generator.seed_bytes()) {
        (Seeding::Os, _) => {}
        (_, None) => {
            return Err("thread is seeded from the OS: no --seed, --key or --path".into());
        }
        (Seeding::Seed(seed), Some(want)) if seed.len() != want => {
            return Err(format!(
                "--seed is {} bytes; this generator's seed is {want} bytes ({} hex digits)",
                seed.len(),
                2 * want
            ));
        }
        _ => {}
    }
    Ok(Command::Stream(Options {
        generator,
        bytes,
        seeding,
        report,
    }))
}

/// A seeded generator behind one `fill` function.
type Source = Box<dyn FnMut(&mut [u8])>;

fn seeded<R: Rng + SeedTreeRng + 'static>(
    seeding: &Seeding,
    from_os_rng: fn() -> R,
    from_key: fn(&[u8]) -> R,
    from_seed_bytes: fn(&[u8]) -> R,
) -> Source {
    let mut rng = match seeding {
        Seeding::Os => from_os_rng(),
        Seeding::Seed(seed) => from_seed_bytes(seed),
        Seeding::Key(key) => from_key(key),
        Seeding::Tree(key, path) => tree_node(key, path).rng::<R>(),
    };
    Box::new(move |buf| rng.fill_bytes(buf))
}

/// `R::from_seed` for the 32-byte-seed generators (length checked by `parse_args`).
fn seed32<R: SeedableRng<Seed = [u8; 32]>>(seed: &[u8]) -> R {
    R::from_seed(seed.try_into().expect("32-byte seed"))
}

/// `R::from_seed` for the sponge generators (length checked by `parse_args`).
fn sponge_seed<R: SeedableRng<Seed = SpongeSeed>>(seed: &[u8]) -> R {
    let seed: [u8; SPONGE_SEED_BYTES] = seed.try_into().expect("136-byte seed");
    R::from_seed(seed.into())
}

fn source(options: &Options) -> Source {
    let s = &options.seeding;
    match options.generator {
        Generator::TurboShake => seeded(
            s,
            TurboShakeRng::from_os_rng,
            TurboShakeRng::from_key,
            sponge_seed,
        ),
        Generator::Shake => seeded(s, ShakeRng::from_os_rng, ShakeRng::from_key, sponge_seed),
        Generator::ChaCha8 => seeded(
            s,
            ChaChaKeyErasureRng::from_os_rng,
            ChaChaKeyErasureRng::from_key,
            seed32,
        ),
        Generator::ChaCha12 => seeded(
            s,
            ChaCha12KeyErasureRng::from_os_rng,
            ChaCha12KeyErasureRng::from_key,
            seed32,
        ),
        Generator::ChaCha20 => seeded(
            s,
            ChaCha20KeyErasureRng::from_os_rng,
            ChaCha20KeyErasureRng::from_key,
            seed32,
        ),
        Generator::Aes => seeded(
            s,
            AesCtrPoolRng::from_os_rng,
            AesCtrPoolRng::from_key,
            seed32,
        ),
        Generator::Thread => Box::new(ratchet_rng::fill),
    }
}

/// Standard output without Rust's line buffering: each chunk is one `write` loop.
#[cfg(unix)]
fn stdout() -> io::Result<Box<dyn Write>> {
    use std::os::fd::AsFd;
    let fd = io::stdout().as_fd().try_clone_to_owned()?;
    Ok(Box::new(std::fs::File::from(fd)))
}

#[cfg(not(unix))]
fn stdout() -> io::Result<Box<dyn Write>> {
    Ok(Box::new(io::stdout().lock()))
}

/// Bytes generated and written per step.
const CHUNK_BYTES: usize = 64 * 1024;

/// Writes the stream and returns how many bytes the reader accepted; a closed
/// pipe ends it without error.
fn write_stream(options: &Options, out: &mut dyn Write) -> io::Result<u64> {
    let mut fill = source(options);
    let mut chunk = vec![0u8; CHUNK_BYTES];
    let mut written = 0u64;
    loop {
        let left = options.bytes.map_or(u64::MAX, |b| b - written);
        if left == 0 {
            break;
        }
        let n = left.min(CHUNK_BYTES as u64) as usize;
        fill(&mut chunk[..n]);
        // `write_all` by hand, to count the bytes of a chunk cut short by the reader.
        let mut rest = &chunk[..n];
        while !rest.is_empty() {
            match out.write(rest) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(k) => {
                    rest = &rest[k..];
                    written += k as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::BrokenPipe => return Ok(written),
                Err(e) => return Err(e),
            }
        }
    }
    match out.flush() {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(written),
        result => result.map(|()| written),
    }
}

fn main() -> ExitCode {
    let options = match utf8_args(std::env::args_os().skip(1)).and_then(parse_args) {
        Ok(Command::Help) => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Ok(Command::Stream(options)) => options,
        Err(message) => {
            let synopsis = USAGE.lines().next().unwrap_or_default();
            eprintln!("stream: {message}\n{synopsis}\n(stream --help for details)");
            return ExitCode::from(2);
        }
    };
    match stdout().and_then(|mut out| write_stream(&options, &mut out)) {
        Ok(written) => {
            if options.report {
                eprintln!("stream: wrote {written} bytes");
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("stream: writing stdout: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(args: &str) -> Result<Options, String> {
        match parse_args(args.split_whitespace())? {
            Command::Stream(options) => Ok(options),
            Command::Help => panic!("help for {args:?}"),
        }
    }

    fn hex_zeros(bytes: usize) -> String {
        "00".repeat(bytes)
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("1"), Ok(1));
        assert_eq!(parse_size("1000"), Ok(1000));
        assert_eq!(parse_size("64K"), Ok(64 << 10));
        assert_eq!(parse_size("3M"), Ok(3 << 20));
        assert_eq!(parse_size("2G"), Ok(2 << 30));
        assert_eq!(parse_size("5T"), Ok(5 << 40));
        assert_eq!(parse_size("18446744073709551615"), Ok(u64::MAX));
        assert_eq!(parse_size("16777215T"), Ok(16_777_215 << 40));
    }

    #[test]
    fn bad_sizes() {
        for bad in [
            "", "K", "0", "0K", "-1", "+1", "1.5M", "1k", "1KB", "1 K", "0x10", "abc", "1e6",
        ] {
            assert!(parse_size(bad).is_err(), "{bad:?} accepted");
        }
        // Overflow, in the number and in the suffix multiplication.
        assert!(parse_size("18446744073709551616").is_err());
        assert!(parse_size("16777216T").is_err());
        assert!(parse_size("99999999999999999999999G").is_err());
    }

    #[test]
    fn hex() {
        assert_eq!(parse_hex(""), Ok(vec![]));
        assert_eq!(parse_hex("00ff7fA0"), Ok(vec![0x00, 0xff, 0x7f, 0xa0]));
        assert_eq!(parse_hex("DEADbeef"), Ok(vec![0xde, 0xad, 0xbe, 0xef]));
        for bad in ["0", "abc", "0g", "zz", " 00", "0x00", "é0"] {
            assert!(parse_hex(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn every_generator_by_name() {
        for (name, generator) in Generator::ALL {
            let options = stream(name).unwrap();
            assert_eq!(options.generator, generator);
            assert_eq!(options.bytes, None);
            assert_eq!(options.seeding, Seeding::Os);
        }
    }

    #[test]
    fn options_in_any_order() {
        let seed = hex_zeros(32);
        let want = Options {
            generator: Generator::ChaCha8,
            bytes: Some(1000),
            seeding: Seeding::Seed(vec![0; 32]),
            report: false,
        };
        for args in [
            format!("chacha8 --seed {seed} --bytes 1000"),
            format!("--bytes 1000 chacha8 --seed {seed}"),
            format!("--seed {seed} --bytes 1000 chacha8"),
        ] {
            assert_eq!(stream(&args), Ok(want.clone()), "{args}");
        }
        assert_eq!(
            stream("aes --key 0102").unwrap().seeding,
            Seeding::Key(vec![1, 2])
        );
        assert!(stream("thread --report").unwrap().report);
        assert!(!stream("thread").unwrap().report);
        assert_eq!(parse_args(["--help"]), Ok(Command::Help));
        assert_eq!(parse_args(["chacha8", "-h"]), Ok(Command::Help));
        // Arguments are read left to right: an error before -h is reported.
        assert!(parse_args(["bogus", "-h"]).is_err());
        // An empty key is valid key material.
        assert_eq!(
            parse_args(["shake", "--key", ""]).map(|c| match c {
                Command::Stream(o) => o.seeding,
                Command::Help => Seeding::Os,
            }),
            Ok(Seeding::Key(vec![]))
        );
    }

    #[test]
    fn seed_lengths() {
        for (name, generator) in Generator::ALL {
            let Some(len) = generator.seed_bytes() else {
                continue;
            };
            let ok = format!("{name} --seed {}", hex_zeros(len));
            assert_eq!(stream(&ok).unwrap().seeding, Seeding::Seed(vec![0; len]));
            for wrong in [0, 1, len - 1, len + 1] {
                let args = format!("{name} --seed {}", hex_zeros(wrong));
                let args = args.trim_end();
                assert!(stream(args).is_err(), "{args} accepted");
            }
        }
        assert_eq!(Generator::TurboShake.seed_bytes(), Some(136));
        assert_eq!(Generator::Aes.seed_bytes(), Some(32));
    }

    #[test]
    fn paths() {
        assert_eq!(parse_path(""), Ok(vec![]));
        assert_eq!(parse_path("7/3"), Ok(vec![Step::Index(7), Step::Index(3)]));
        assert_eq!(
            parse_path("7/label:east"),
            Ok(vec![Step::Index(7), Step::Label(b"east".to_vec())])
        );
        assert_eq!(
            parse_path("label:/18446744073709551615"),
            Ok(vec![Step::Label(vec![]), Step::Index(u64::MAX)])
        );
        for bad in [
            "/",
            "7/",
            "/7",
            "7//3",
            "-1",
            "+1",
            "7a",
            "0x10",
            "label",
            "Label:x",
            "18446744073709551616",
            " 7",
            "7 ",
            "é",
        ] {
            assert!(parse_path(bad).is_err(), "{bad:?} accepted");
        }
        assert_eq!(
            stream("chacha8 --key 6b --path 7/label:east")
                .unwrap()
                .seeding,
            Seeding::Tree(
                vec![0x6b],
                vec![Step::Index(7), Step::Label(b"east".to_vec())]
            )
        );
        assert_eq!(
            stream("--path 1 aes --key 00").unwrap().seeding,
            Seeding::Tree(vec![0], vec![Step::Index(1)])
        );
        for bad in [
            "chacha8 --path 7",
            "chacha8 --path 7 --seed 00",
            "chacha8 --key 00 --path 7 --path 7",
            "chacha8 --key 00 --path",
            "chacha8 --key 00 --path x",
            "thread --key 00 --path 7",
            "thread --path 7",
        ] {
            assert!(stream(bad).is_err(), "{bad:?} accepted");
        }
    }

    /// `--key K --path P` is the stream of the SeedTree node: the vectors of
    /// tests/data/seed_tree_vectors.txt (root key "ratchet-rng seed tree vectors").
    #[test]
    fn tree_streams_match_the_vectors() {
        let vectors = include_str!("../tests/data/seed_tree_vectors.txt");
        let key: String = b"ratchet-rng seed tree vectors"
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let mut checked = 0;
        for line in vectors.lines().filter(|l| !l.starts_with('#')) {
            let (head, value) = line.split_once(": ").unwrap();
            let (name, path) = head.split_once(' ').unwrap();
            let name = if name == "aes_ctr_pool" { "aes" } else { name };
            if name == "node" {
                continue;
            }
            let path = path.trim_matches('"');
            let args = [name, "--bytes", "64", "--key", &key, "--path", path];
            let Ok(Command::Stream(options)) = parse_args(args) else {
                panic!("{args:?} refused")
            };
            let mut out = Vec::new();
            assert_eq!(write_stream(&options, &mut out).unwrap(), 64);
            assert_eq!(out, parse_hex(value).unwrap(), "{name} {path:?}");
            checked += 1;
        }
        assert_eq!(checked, 36);
    }

    #[cfg(unix)]
    #[test]
    fn non_utf8_arguments_are_an_error() {
        use std::os::unix::ffi::OsStringExt;
        let args = [
            OsString::from("aes"),
            OsString::from("--bytes"),
            OsString::from_vec(b"1\xff".to_vec()),
        ];
        let err = utf8_args(args).unwrap_err();
        assert!(err.contains("argument 3 is not valid UTF-8"), "{err}");
        assert_eq!(
            utf8_args([OsString::from("aes")]),
            Ok(vec![String::from("aes")])
        );
    }

    #[test]
    fn bad_command_lines() {
        let seed = hex_zeros(32);
        for args in [
            String::new(),
            "bogus".into(),
            "ChaCha8".into(),
            "chacha8 aes".into(),
            "chacha8 --bytes".into(),
            "chacha8 --bytes 0".into(),
            "chacha8 --bytes 10 --bytes 10".into(),
            "chacha8 --bytes ten".into(),
            "chacha8 --bytes 99999999999999999999".into(),
            "chacha8 --seed".into(),
            format!("chacha8 --seed 0{seed}"),
            format!("chacha8 --seed {}zz", &seed[2..]),
            format!("chacha8 --seed {seed} --key 00"),
            format!("chacha8 --seed {seed} --seed {seed}"),
            format!("thread --seed {seed}"),
            "thread --key 00".into(),
            "chacha8 --verbose".into(),
            "chacha8 -b 10".into(),
        ] {
            assert!(stream(&args).is_err(), "{args:?} accepted");
        }
    }

    /// The `--seed` streams are `from_seed`'s: check the start of each against
    /// the golden file (whose lines the crate's own tests pin).
    #[test]
    fn seeded_streams_match_golden_file() {
        let golden = include_str!("../tests/data/golden_streams.txt");
        for (name, golden_name) in [
            ("turboshake", "turboshake"),
            ("shake", "shake"),
            ("chacha8", "chacha8"),
            ("chacha12", "chacha12"),
            ("chacha20", "chacha20"),
            ("aes", "aes_ctr_pool"),
        ] {
            let generator = Generator::from_name(name).unwrap();
            let seed_len = generator.seed_bytes().unwrap();
            let prefix = format!("{golden_name}/zero: ");
            let line = golden
                .lines()
                .find_map(|l| l.strip_prefix(&prefix))
                .unwrap_or_else(|| panic!("no {prefix} line"));
            let want = parse_hex(line).unwrap();
            // 1000 bytes, written through the same path as main (a Vec as stdout).
            let options = stream(&format!(
                "{name} --bytes 1000 --seed {}",
                hex_zeros(seed_len)
            ))
            .unwrap();
            let mut out = Vec::new();
            assert_eq!(write_stream(&options, &mut out).unwrap(), 1000);
            assert_eq!(out, want[..1000], "{name}");
        }
    }

    /// More than one chunk, with a partial last chunk: the same bytes as one fill.
    #[test]
    fn long_streams_are_one_fill() {
        let bytes = 2 * CHUNK_BYTES + 12345;
        let options = stream(&format!("aes --key 61 --bytes {bytes}")).unwrap();
        let mut out = Vec::new();
        assert_eq!(write_stream(&options, &mut out).unwrap(), bytes as u64);
        let mut want = vec![0u8; bytes];
        AesCtrPoolRng::from_key(b"a").fill_bytes(&mut want);
        assert_eq!(out, want);
    }

    /// A writer that accepts `room` bytes, then fails like a closed pipe.
    struct ClosedPipe {
        room: usize,
        written: usize,
    }

    impl Write for ClosedPipe {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.written >= self.room {
                return Err(io::ErrorKind::BrokenPipe.into());
            }
            let n = buf.len().min(self.room - self.written);
            self.written += n;
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn closed_pipe_ends_the_stream_quietly() {
        for name in ["chacha8", "thread"] {
            let options = stream(name).unwrap();
            let mut out = ClosedPipe {
                room: 100_000,
                written: 0,
            };
            let written = write_stream(&options, &mut out).unwrap();
            assert_eq!(written, 100_000, "{name}");
            assert_eq!(out.written, 100_000);
        }
    }
}
