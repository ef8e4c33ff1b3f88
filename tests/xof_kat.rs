//! Known-answer tests for `ratchet_rng::xof` (SHAKE256 and TurboSHAKE256).
//!
//! The vectors live in `tests/data/`; the header of each file names the exact
//! source (NIST FIPS 202 CAVP files / example values, RFC 9861 Section 5) and
//! describes the line format. Every vector is checked several times: with the
//! message absorbed in pieces of varied sizes (whole, 1, 7, 135, 136, 137 and a
//! mixed schedule) and with the output squeezed in pieces of varied sizes, so
//! that rate-boundary handling on both sides of the sponge is exercised.

use std::ops::Range;

use ratchet_rng::xof::{InvalidDomainByte, Shake256, TurboShake256};

const SHAKE256_VECTORS: &str = include_str!("data/fips202_shake256.txt");
const TURBOSHAKE256_VECTORS: &str = include_str!("data/rfc9861_turboshake256.txt");

/// Number of vectors expected in each file (guards against lost lines).
const SHAKE256_VECTOR_COUNT: usize = 19;
const TURBOSHAKE256_VECTOR_COUNT: usize = 15;

/// SHAKE's domain separation / padding byte.
const SHAKE_DOMAIN: u8 = 0x1F;

/// Messages longer than this are only run with two schedule pairs, to keep
/// the 24 MB RFC 9861 message affordable in unoptimised test builds.
const LARGE_MESSAGE: usize = 64 * 1024;

/// A chunking schedule: piece sizes, cycled until the data is used up.
#[derive(Clone, Copy)]
struct Schedule {
    name: &'static str,
    sizes: &'static [usize],
}

/// One piece holding all the bytes.
const WHOLE: Schedule = Schedule {
    name: "whole",
    sizes: &[usize::MAX],
};

/// A cycle of sizes around the SHAKE256/TurboSHAKE256 rate of 136 bytes,
/// including empty pieces (which must be no-ops).
const MIXED: Schedule = Schedule {
    name: "mixed",
    sizes: &[1, 7, 135, 0, 136, 137, 2, 271, 272, 3],
};

const fn chunks_of(name: &'static str, sizes: &'static [usize]) -> Schedule {
    Schedule { name, sizes }
}

const SCHEDULES: &[Schedule] = &[
    WHOLE,
    chunks_of("1-byte", &[1]),
    chunks_of("7-byte", &[7]),
    chunks_of("135-byte", &[135]),
    chunks_of("136-byte", &[136]),
    chunks_of("137-byte", &[137]),
    MIXED,
];

/// One line of a vector file.
struct Vector {
    line: usize,
    name: String,
    msg: Vec<u8>,
    domain: u8,
    outlen: usize,
    skip: usize,
    out: Vec<u8>,
}

fn nibble(c: u8) -> u8 {
    match c {
        b'0'..=b'9' => c - b'0',
        b'a'..=b'f' => c - b'a' + 10,
        b'A'..=b'F' => c - b'A' + 10,
        _ => panic!("invalid hex digit {:?}", char::from(c)),
    }
}

fn decode_hex(hex: &str) -> Vec<u8> {
    assert!(
        hex.len().is_multiple_of(2),
        "odd number of hex digits in {hex:?}"
    );
    hex.as_bytes()
        .chunks_exact(2)
        .map(|pair| (nibble(pair[0]) << 4) | nibble(pair[1]))
        .collect()
}

fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn parse_usize(value: &str) -> usize {
    value
        .parse()
        .unwrap_or_else(|e| panic!("invalid number {value:?}: {e}"))
}

/// `hex`, `ptn(N)` (RFC 9861 pattern: byte i is i mod 251) or `rep(HH,N)`.
fn parse_msg(spec: &str) -> Vec<u8> {
    if let Some(len) = spec.strip_prefix("ptn(").and_then(|s| s.strip_suffix(')')) {
        (0..parse_usize(len)).map(|i| (i % 251) as u8).collect()
    } else if let Some(args) = spec.strip_prefix("rep(").and_then(|s| s.strip_suffix(')')) {
        let (byte, len) = args
            .split_once(',')
            .unwrap_or_else(|| panic!("rep() needs two arguments: {spec:?}"));
        let byte = decode_hex(byte.trim());
        assert_eq!(byte.len(), 1, "rep() takes a single byte: {spec:?}");
        vec![byte[0]; parse_usize(len.trim())]
    } else {
        decode_hex(spec)
    }
}

fn required<T>(value: Option<T>, line: usize, field: &str) -> T {
    value.unwrap_or_else(|| panic!("line {line}: missing field {field:?}"))
}

fn parse_vectors(text: &str) -> Vec<Vector> {
    let mut vectors = Vec::new();
    for (index, text_line) in text.lines().enumerate() {
        let line = index + 1;
        let text_line = text_line.trim();
        if text_line.is_empty() || text_line.starts_with('#') {
            continue;
        }
        let (mut name, mut msg, mut domain, mut outlen, mut skip, mut out) =
            (None, None, None, None, None, None);
        for field in text_line.split(';') {
            let (key, value) = field
                .split_once('=')
                .unwrap_or_else(|| panic!("line {line}: field without '=': {field:?}"));
            let value = value.trim();
            match key.trim() {
                "name" => name = Some(value.to_owned()),
                "msg" => msg = Some(parse_msg(value)),
                "domain" => {
                    let hex = value.strip_prefix("0x").unwrap_or(value);
                    domain = Some(
                        u8::from_str_radix(hex, 16)
                            .unwrap_or_else(|e| panic!("line {line}: domain {value:?}: {e}")),
                    );
                }
                "outlen" => outlen = Some(parse_usize(value)),
                "skip" => skip = Some(parse_usize(value)),
                "out" => out = Some(decode_hex(value)),
                other => panic!("line {line}: unknown field {other:?}"),
            }
        }
        let vector = Vector {
            line,
            name: required(name, line, "name"),
            msg: required(msg, line, "msg"),
            domain: required(domain, line, "domain"),
            outlen: required(outlen, line, "outlen"),
            skip: required(skip, line, "skip"),
            out: required(out, line, "out"),
        };
        assert_eq!(
            vector.skip + vector.out.len(),
            vector.outlen,
            "line {line}: skip + len(out) must equal outlen"
        );
        vectors.push(vector);
    }
    vectors
}

/// Splits `0..len` into consecutive ranges whose sizes cycle through
/// `schedule`. Always yields at least one (possibly empty) range.
fn split(len: usize, schedule: &[usize]) -> Vec<Range<usize>> {
    assert!(schedule.iter().any(|&size| size > 0));
    let mut ranges = Vec::new();
    let mut start = 0;
    for &size in schedule.iter().cycle() {
        if start == len && !ranges.is_empty() {
            break;
        }
        let end = start.saturating_add(size).min(len);
        ranges.push(start..end);
        start = end;
    }
    ranges
}

fn absorb_all(msg: &[u8], schedule: &[usize], mut absorb: impl FnMut(&[u8])) {
    for range in split(msg.len(), schedule) {
        absorb(&msg[range]);
    }
}

fn squeeze_all(outlen: usize, schedule: &[usize], mut squeeze: impl FnMut(&mut [u8])) -> Vec<u8> {
    let mut out = vec![0u8; outlen];
    for range in split(outlen, schedule) {
        squeeze(&mut out[range]);
    }
    out
}

/// Computes the full `outlen`-byte output of a vector with the given schedules.
type Compute = fn(&Vector, &[usize], &[usize]) -> Vec<u8>;

fn shake256(v: &Vector, absorb: &[usize], squeeze: &[usize]) -> Vec<u8> {
    let mut hasher = Shake256::new();
    absorb_all(&v.msg, absorb, |piece| hasher.absorb(piece));
    let mut reader = hasher.finalize();
    squeeze_all(v.outlen, squeeze, |buf| reader.squeeze(buf))
}

fn turboshake256(v: &Vector, absorb: &[usize], squeeze: &[usize]) -> Vec<u8> {
    let mut hasher = TurboShake256::new(v.domain)
        .unwrap_or_else(|e| panic!("{}: domain byte rejected: {e}", v.name));
    absorb_all(&v.msg, absorb, |piece| hasher.absorb(piece));
    let mut reader = hasher.finalize();
    squeeze_all(v.outlen, squeeze, |buf| reader.squeeze(buf))
}

/// The (absorb, squeeze) schedule pairs a vector is checked with: every
/// absorb schedule with a whole squeeze, every squeeze schedule with a whole
/// absorb, and mixed/mixed. Large messages get whole/whole and mixed/mixed only.
fn runs(msg_len: usize) -> Vec<(Schedule, Schedule)> {
    if msg_len > LARGE_MESSAGE {
        return vec![(WHOLE, WHOLE), (MIXED, MIXED)];
    }
    let mut runs = Vec::new();
    for &schedule in SCHEDULES {
        runs.push((schedule, WHOLE));
    }
    for &schedule in &SCHEDULES[1..] {
        runs.push((WHOLE, schedule));
    }
    runs.push((MIXED, MIXED));
    runs
}

/// Checks every vector with every run; returns one message per failure.
fn check_all(vectors: &[Vector], compute: Compute) -> Vec<String> {
    let mut failures = Vec::new();
    for v in vectors {
        for (absorb, squeeze) in runs(v.msg.len()) {
            let output = compute(v, absorb.sizes, squeeze.sizes);
            assert_eq!(output.len(), v.outlen);
            let got = &output[v.skip..];
            if got != v.out.as_slice() {
                let first = got.iter().zip(&v.out).position(|(a, b)| a != b);
                failures.push(format!(
                    "line {} {}: absorb {}, squeeze {}: first difference at output byte {}\n  \
                     expected {}\n  got      {}",
                    v.line,
                    v.name,
                    absorb.name,
                    squeeze.name,
                    v.skip + first.unwrap_or(0),
                    to_hex(&v.out),
                    to_hex(got),
                ));
            }
        }
    }
    failures
}

#[test]
fn shake256_fips202_vectors() {
    let vectors = parse_vectors(SHAKE256_VECTORS);
    assert_eq!(vectors.len(), SHAKE256_VECTOR_COUNT);
    for v in &vectors {
        assert_eq!(
            v.domain, SHAKE_DOMAIN,
            "line {}: SHAKE256 uses 0x1f",
            v.line
        );
    }
    let failures = check_all(&vectors, shake256);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn turboshake256_rfc9861_vectors() {
    let vectors = parse_vectors(TURBOSHAKE256_VECTORS);
    assert_eq!(vectors.len(), TURBOSHAKE256_VECTOR_COUNT);
    for domain in [0x01, 0x06, 0x07, 0x0B, 0x1F, 0x30, 0x7F] {
        assert!(
            vectors.iter().any(|v| v.domain == domain),
            "no vector for domain byte {domain:#04x}"
        );
    }
    let failures = check_all(&vectors, turboshake256);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn shake256_default_matches_new() {
    let vectors = parse_vectors(SHAKE256_VECTORS);
    for v in &vectors {
        let mut hasher = Shake256::default();
        hasher.absorb(&v.msg);
        let mut output = vec![0u8; v.outlen];
        hasher.finalize().squeeze(&mut output);
        assert_eq!(output[v.skip..], v.out[..], "line {} {}", v.line, v.name);
    }
}

#[test]
fn turboshake256_default_uses_domain_0x1f() {
    let vectors = parse_vectors(TURBOSHAKE256_VECTORS);
    let mut checked = 0;
    for v in vectors
        .iter()
        .filter(|v| v.domain == 0x1F && v.msg.len() <= LARGE_MESSAGE)
    {
        let mut hasher = TurboShake256::default();
        hasher.absorb(&v.msg);
        let mut output = vec![0u8; v.outlen];
        hasher.finalize().squeeze(&mut output);
        assert_eq!(output[v.skip..], v.out[..], "line {} {}", v.line, v.name);
        checked += 1;
    }
    assert!(checked > 0);
}

#[test]
fn turboshake256_rejects_invalid_domain_bytes() {
    // Includes 0x00, 0x80 and 0xFF.
    for domain in (0x80..=0xFF).chain([0x00]) {
        assert_eq!(
            TurboShake256::new(domain).err(),
            Some(InvalidDomainByte(domain)),
            "domain byte {domain:#04x}"
        );
    }
    for domain in 0x01..=0x7F {
        assert!(
            TurboShake256::new(domain).is_ok(),
            "domain byte {domain:#04x} must be accepted"
        );
    }
}

#[test]
fn invalid_domain_byte_error_traits() {
    let Err(err) = TurboShake256::new(0x80) else {
        panic!("0x80 must be rejected");
    };
    let InvalidDomainByte(byte) = &err;
    assert_eq!(*byte, 0x80);
    assert_eq!(err, InvalidDomainByte(0x80));
    assert_ne!(err, InvalidDomainByte(0x00));
    assert!(!format!("{err}").is_empty());
    assert!(!format!("{err:?}").is_empty());
    let dyn_err: &dyn core::error::Error = &err;
    assert_eq!(dyn_err.to_string(), err.to_string());
}
