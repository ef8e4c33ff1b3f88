//! Constant time of the kernels valgrind cannot follow, checked in their
//! source (the argument is in SECURITY.md, "Side channels").
//!
//! `tests/ct_valgrind.rs` runs every backend on secret inputs under memcheck,
//! which reports a branch or an address that depends on them; but valgrind
//! implements neither AVX-512 nor VAES, so the AVX-512 Keccak and ChaCha
//! kernels and both VAES kernels never run there. This test reads their
//! source instead (the kernel files and the three macros that generate their
//! loops, `register_kernel!` in `src/keccak.rs`, `pool_kernel!` and
//! `ctr_kernel!` in `src/aes.rs`; comments, strings, compile-time `const` items and blocks
//! are left out) and reports each construct through which a secret could
//! decide a branch or an address:
//!
//! - a branch: `if`, `match`, `while`, `loop`, `&&`, `||`, and the panicking
//!   `assert!`, `debug_assert!`, `expect`, `unwrap`. Each one the kernels have
//!   is listed in [`PUBLIC_BRANCHES`] with what it decides on (a length, a
//!   loop counter, a key-schedule step): a new one fails the test until it is
//!   argued for there and in SECURITY.md;
//! - an index (`a[...]`, `.get(...)`, `.get_mut(...)`) by anything but
//!   literals, constants, `.len()` and *public indices*: loop counters of a
//!   `for` over a range or an `enumerate()`, `usize` parameters, and `let`
//!   bindings computed from these only;
//! - a conversion into an index or a pointer offset: `as usize`,
//!   `usize::from`, `.add(`, `.offset(`, `get_unchecked`.
//!
//! A secret in these kernels is a register (`__m128i` .. `__m512i`), a key or
//! state word (`u8`, `u32`, `u64`) or an array of them; none of them is a
//! `usize` or a `bool`, and the scan forbids every way to make one. The
//! negative control plants a branch, a loop, a match and a table lookup on
//! secret values into a copy of a real kernel: each must be reported.

use std::collections::BTreeSet;

/// The scanned kernels: files scanned whole (but their tests).
const KERNEL_FILES: [&str; 4] = [
    "src/keccak/x86_avx512.rs",
    "src/chacha/x86_avx512.rs",
    "src/aes/x86_vaes256.rs",
    "src/aes/x86_vaes512.rs",
];

/// The macros that generate those kernels' outer loops: (file, macro name).
const KERNEL_MACROS: [(&str, &str); 3] = [
    ("src/keccak.rs", "register_kernel"),
    ("src/aes.rs", "pool_kernel"),
    ("src/aes.rs", "ctr_kernel"),
];

/// Every branch the scanned code has, by file and source line (trimmed), with
/// what it decides on: none is a secret.
const PUBLIC_BRANCHES: [(&str, &str, &str); 10] = [
    (
        "src/keccak.rs",
        "if let Some(block) = blocks.get_mut(i) {",
        "the block counter against the period's 8 blocks",
    ),
    (
        "src/chacha/x86_avx512.rs",
        "if let Some(chunk) = chunks.get_mut(12 + q) {",
        "the row counter against the output's 15 whole chunks",
    ),
    (
        "src/chacha/x86_avx512.rs",
        "let tail: &mut [u8; 32] = tail.try_into().expect(\"992 = 15 × 64 + 32\");",
        "the output's length, a constant",
    ),
    (
        "src/aes/x86_vaes256.rs",
        "if step == 0 {",
        "the key-schedule step, a loop counter",
    ),
    (
        "src/aes/x86_vaes256.rs",
        "if r < ROUNDS {",
        "twice the key-schedule step",
    ),
    (
        "src/aes/x86_vaes256.rs",
        "debug_assert!(first.is_multiple_of(BATCH_BLOCKS) && first + BATCH_BLOCKS <= 256);",
        "the batch's first block number",
    ),
    (
        "src/aes/x86_vaes512.rs",
        ".expect(\"32 bytes\");",
        "the head's length, a constant",
    ),
    (
        "src/aes.rs",
        ".expect(\"a pool is longer than its first batch\");",
        "the pool's length, a constant",
    ),
    (
        "src/aes.rs",
        "if i != last && j < EXPAND_STEPS {",
        "the pool and batch counters against the number of pools",
    ),
    (
        "src/aes.rs",
        "if !tail.is_empty() {",
        "the requested number of blocks",
    ),
];

/// A token and the source line it is on.
#[derive(Clone, Debug, PartialEq)]
struct Token {
    text: String,
    line: usize,
}

/// Splits Rust source into tokens, leaving out comments, string and character
/// literals (replaced by a `"str"` token) and whitespace.
fn tokenize(source: &str) -> Vec<Token> {
    let chars: Vec<char> = source.chars().collect();
    let mut tokens = Vec::new();
    let (mut i, mut line) = (0, 1);
    const PUNCT3: [&str; 3] = ["..=", "<<=", ">>="];
    const PUNCT2: [&str; 18] = [
        "..", "::", "->", "=>", "==", "!=", "<=", ">=", "&&", "||", "<<", ">>", "+=", "-=", "*=",
        "^=", "|=", "&=",
    ];
    while i < chars.len() {
        let c = chars[i];
        let rest: String = chars[i..chars.len().min(i + 3)].iter().collect();
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if rest.starts_with("//") {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if rest.starts_with("/*") {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    line += usize::from(chars[i] == '\n');
                    i += 1;
                }
            }
        } else if c == '"' {
            let start = line;
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                line += usize::from(chars[i] == '\n');
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            tokens.push(Token {
                text: "\"str\"".into(),
                line: start,
            });
        } else if c == '\'' && chars.get(i + 2) == Some(&'\'') {
            i += 3;
            tokens.push(Token {
                text: "'c'".into(),
                line,
            });
        } else if c.is_alphanumeric() || c == '_' || c == '$' {
            let start = i;
            i += 1;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            tokens.push(Token {
                text: chars[start..i].iter().collect(),
                line,
            });
        } else {
            let text = if let Some(p) = PUNCT3.iter().find(|p| rest.starts_with(*p)) {
                p.to_string()
            } else if let Some(p) = PUNCT2.iter().find(|p| rest.starts_with(*p)) {
                p.to_string()
            } else {
                c.to_string()
            };
            i += text.chars().count();
            tokens.push(Token { text, line });
        }
    }
    tokens
}

/// The index of the bracket closing the one at `open` (`(`, `[` or `{`).
fn closing(tokens: &[Token], open: usize) -> usize {
    let (o, c) = match tokens[open].text.as_str() {
        "(" => ("(", ")"),
        "[" => ("[", "]"),
        _ => ("{", "}"),
    };
    let mut depth = 0;
    for (i, t) in tokens.iter().enumerate().skip(open) {
        if t.text == o {
            depth += 1;
        } else if t.text == c {
            depth -= 1;
            if depth == 0 {
                return i;
            }
        }
    }
    panic!("unbalanced {o} at line {}", tokens[open].line)
}

/// Removes `#[cfg(test)]` items, `const` items and `const { .. }` blocks
/// (evaluated at compile time), and attributes.
fn strip_compile_time(tokens: Vec<Token>) -> Vec<Token> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let text = tokens[i].text.as_str();
        if text == "#" && tokens.get(i + 1).is_some_and(|t| t.text == "[") {
            let end = closing(&tokens, i + 1);
            let is_test = tokens[i + 2..end]
                .iter()
                .map(|t| t.text.as_str())
                .eq(["cfg", "(", "test", ")"]);
            i = end + 1;
            if is_test {
                // The item: up to its body's closing brace or its semicolon.
                while tokens[i].text != "{" && tokens[i].text != ";" {
                    i += 1;
                }
                if tokens[i].text == "{" {
                    i = closing(&tokens, i);
                }
                i += 1;
            }
        } else if text == "const" && tokens.get(i + 1).is_some_and(|t| t.text == "{") {
            i = closing(&tokens, i + 1) + 1;
        } else if text == "const" {
            // `const NAME: T = ..;` (not `const fn`, not a generic parameter).
            if tokens.get(i + 1).is_some_and(|t| t.text == "fn")
                || out
                    .last()
                    .is_some_and(|t: &Token| t.text == "<" || t.text == ",")
            {
                out.push(tokens[i].clone());
                i += 1;
                continue;
            }
            let mut depth = 0;
            while !(depth == 0 && tokens[i].text == ";") {
                match tokens[i].text.as_str() {
                    "(" | "[" | "{" => depth += 1,
                    ")" | "]" | "}" => depth -= 1,
                    _ => {}
                }
                i += 1;
            }
            i += 1;
        } else {
            out.push(tokens[i].clone());
            i += 1;
        }
    }
    out
}

/// The tokens of `macro_rules! name { .. }` in `tokens`.
fn macro_body(tokens: &[Token], name: &str) -> Vec<Token> {
    let start = tokens
        .windows(3)
        .position(|w| w[0].text == "macro_rules" && w[1].text == "!" && w[2].text == name)
        .unwrap_or_else(|| panic!("macro_rules! {name} not found"));
    let open = start + 3;
    tokens[open..=closing(tokens, open)].to_vec()
}

const KEYWORDS: [&str; 14] = [
    "let", "mut", "in", "as", "if", "else", "match", "return", "for", "while", "fn", "where",
    "const", "unsafe",
];

/// Methods whose result is public whatever they are called on (a length).
const PUBLIC_METHODS: [&str; 3] = ["len", "is_empty", "saturating_sub"];

/// Whether the `usize` `expr` is made of public parts only: literals,
/// constants, paths, `.len()`-like methods and the names in `public`.
fn is_public(expr: &[Token], public: &BTreeSet<String>) -> bool {
    expr.iter().enumerate().all(|(k, t)| {
        let s = t.text.as_str();
        let first = s.chars().next().unwrap();
        let after_dot = k > 0 && expr[k - 1].text == ".";
        let before_path = expr.get(k + 1).is_some_and(|n| n.text == "::");
        // `slice.len()`: a length, whatever the slice holds.
        let before_public_method = expr.get(k + 1).is_some_and(|n| n.text == ".")
            && expr
                .get(k + 2)
                .is_some_and(|m| m.text == "len" || m.text == "is_empty");
        if first.is_ascii_digit() {
            true
        } else if first.is_alphabetic() || first == '_' || first == '$' {
            let constant = s
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
            (constant && first != '_')
                || before_path
                || before_public_method
                || s == "$crate"
                || public.contains(s)
                || (after_dot && PUBLIC_METHODS.contains(&s))
        } else {
            [
                "+", "-", "*", "/", "%", "(", ")", "..", "..=", "::", ".", "<<", ">>",
            ]
            .contains(&s)
        }
    })
}

/// The names the scanned code may index with: `for` counters over a range or
/// an `enumerate()`, `usize` parameters, and `let`s of public expressions.
fn public_names(tokens: &[Token]) -> BTreeSet<String> {
    let mut public = BTreeSet::new();
    for (i, t) in tokens.iter().enumerate() {
        let ident = |j: usize| {
            tokens.get(j).filter(|t| {
                let c = t.text.chars().next().unwrap();
                (c.is_alphabetic() || c == '_') && !KEYWORDS.contains(&t.text.as_str())
            })
        };
        if t.text == "for" {
            let in_at = (i..tokens.len()).find(|&j| tokens[j].text == "in").unwrap();
            let brace = (in_at..tokens.len())
                .find(|&j| tokens[j].text == "{")
                .unwrap();
            let iter = &tokens[in_at + 1..brace];
            let is_range = iter.iter().any(|t| t.text == ".." || t.text == "..=")
                && !iter.iter().any(|t| t.text == ".");
            let enumerated = iter.len() >= 4
                && iter[iter.len() - 3].text == "enumerate"
                && iter[iter.len() - 4].text == ".";
            let counter = if is_range {
                ident(i + 1)
            } else if enumerated && tokens[i + 1].text == "(" {
                ident(i + 2)
            } else {
                None
            };
            if let Some(name) = counter {
                public.insert(name.text.clone());
            }
        } else if t.text == ":" && tokens.get(i + 1).is_some_and(|n| n.text == "usize") {
            // A parameter `name: usize` (a `let name: usize` is checked below).
            if let Some(name) = ident(i.wrapping_sub(1))
                && tokens
                    .get(i.wrapping_sub(2))
                    .is_some_and(|p| p.text != "let")
            {
                public.insert(name.text.clone());
            }
        } else if t.text == "let" {
            let Some(name) = ident(i + 1) else { continue };
            let Some(eq) = (i..tokens.len()).find(|&j| tokens[j].text == "=") else {
                continue;
            };
            let end = (eq..tokens.len()).find(|&j| tokens[j].text == ";").unwrap();
            if is_public(&tokens[eq + 1..end], &public) {
                public.insert(name.text.clone());
            }
        }
    }
    public
}

/// What the scan reports: (line, construct).
fn scan(tokens: &[Token]) -> Vec<(usize, String)> {
    let public = public_names(tokens);
    let mut findings = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        let s = t.text.as_str();
        let prev = i.checked_sub(1).map(|p| tokens[p].text.as_str());
        let next = tokens.get(i + 1).map(|n| n.text.as_str());
        let is_ident = |p: &str| {
            let c = p.chars().next().unwrap();
            (c.is_alphanumeric() || c == '_' || c == '$') && !KEYWORDS.contains(&p)
        };
        if ["if", "match", "while", "loop", "&&", "||"].contains(&s)
            || (["assert", "debug_assert"].contains(&s) && next == Some("!"))
            || (["expect", "unwrap"].contains(&s) && prev == Some("."))
        {
            findings.push((t.line, format!("branch `{s}`")));
        }
        if s == "[" && prev.is_some_and(|p| is_ident(p) || p == ")" || p == "]") {
            let end = closing(tokens, i);
            if !is_public(&tokens[i + 1..end], &public) {
                findings.push((t.line, format!("index `[{}]`", join(&tokens[i + 1..end]))));
            }
        }
        if ["get", "get_mut"].contains(&s) && prev == Some(".") && next == Some("(") {
            let end = closing(tokens, i + 1);
            if !is_public(&tokens[i + 2..end], &public) {
                findings.push((
                    t.line,
                    format!("lookup `.{s}({})`", join(&tokens[i + 2..end])),
                ));
            }
        }
        if (s == "as" && next == Some("usize"))
            || (s == "usize" && next == Some("::"))
            || (["add", "offset"].contains(&s) && prev == Some("."))
            || s.starts_with("get_unchecked")
        {
            findings.push((t.line, format!("index conversion `{s}`")));
        }
    }
    findings
}

fn join(tokens: &[Token]) -> String {
    tokens
        .iter()
        .map(|t| t.text.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The scanned sources, read at compile time (the test also runs where the
/// source tree is not at hand: under Wine, qemu and WASI).
const SOURCES: [(&str, &str); 6] = [
    (
        "src/keccak/x86_avx512.rs",
        include_str!("../src/keccak/x86_avx512.rs"),
    ),
    (
        "src/chacha/x86_avx512.rs",
        include_str!("../src/chacha/x86_avx512.rs"),
    ),
    (
        "src/aes/x86_vaes256.rs",
        include_str!("../src/aes/x86_vaes256.rs"),
    ),
    (
        "src/aes/x86_vaes512.rs",
        include_str!("../src/aes/x86_vaes512.rs"),
    ),
    ("src/keccak.rs", include_str!("../src/keccak.rs")),
    ("src/aes.rs", include_str!("../src/aes.rs")),
];

fn read(file: &str) -> String {
    let (_, source) = SOURCES
        .iter()
        .find(|(f, _)| *f == file)
        .unwrap_or_else(|| panic!("{file} is not in SOURCES"));
    source.to_string()
}

/// Scans one file's code (or the named macro in it): the findings that are
/// not in [`PUBLIC_BRANCHES`], and the entries of it that were found.
fn scan_source(
    file: &str,
    source: &str,
    macro_name: Option<&str>,
) -> (Vec<String>, BTreeSet<usize>) {
    let mut tokens = strip_compile_time(tokenize(source));
    if let Some(name) = macro_name {
        tokens = macro_body(&tokens, name);
    }
    let lines: Vec<&str> = source.lines().collect();
    let (mut unexplained, mut explained) = (Vec::new(), BTreeSet::new());
    for (line, construct) in scan(&tokens) {
        let text = lines[line - 1].trim();
        let listed = PUBLIC_BRANCHES
            .iter()
            .position(|&(f, l, _)| f == file && l == text && construct.starts_with("branch"));
        match listed {
            Some(k) => {
                explained.insert(k);
            }
            None => unexplained.push(format!("{file}:{line}: {construct}: {text}")),
        }
    }
    (unexplained, explained)
}

#[test]
fn kernels_valgrind_cannot_run_have_no_secret_branch_or_index() {
    let mut unexplained = Vec::new();
    let mut explained = BTreeSet::new();
    let sources = KERNEL_FILES
        .iter()
        .map(|&f| (f, None))
        .chain(KERNEL_MACROS.iter().map(|&(f, m)| (f, Some(m))));
    for (file, macro_name) in sources {
        let (u, e) = scan_source(file, &read(file), macro_name);
        unexplained.extend(u);
        explained.extend(e);
    }
    assert!(
        unexplained.is_empty(),
        "constructs that may let a secret choose a branch or an address (argue each \
         in SECURITY.md and PUBLIC_BRANCHES, or remove it):\n{}",
        unexplained.join("\n")
    );
    let stale: Vec<_> = (0..PUBLIC_BRANCHES.len())
        .filter(|k| !explained.contains(k))
        .map(|k| PUBLIC_BRANCHES[k])
        .collect();
    assert!(
        stale.is_empty(),
        "PUBLIC_BRANCHES entries no longer found: {stale:?}"
    );
}

/// The negative control: a copy of the VAES-512 kernel with four leaks
/// planted in its batch encryption, each of which the scan must report.
#[test]
fn planted_leaks_are_reported() {
    let file = "src/aes/x86_vaes512.rs";
    let source = read(file);
    let anchor = "    for round_key in &rk[1..ROUNDS] {\n";
    assert!(source.contains(anchor), "{file} changed: move the plant");
    let planted = [
        // A table lookup by a secret byte.
        "    let byte = _mm_cvtsi128_si32(_mm512_castsi512_si128(lanes[0])) as usize & 0xff;\n",
        "    lanes[1] = rk[SBOX[byte] as usize % ROUNDS];\n",
        // A branch on a secret bit.
        "    if _mm_cvtsi128_si32(_mm512_castsi512_si128(lanes[2])) & 1 == 1 { lanes[3] = rk[0]; }\n",
        // A loop and a match on a secret word.
        "    let mut word = _mm_cvtsi128_si32(_mm512_castsi512_si128(lanes[4]));\n",
        "    while word != 0 { word &= word - 1; }\n",
        "    match word { 0 => lanes[5] = rk[1], _ => {} }\n",
    ]
    .concat();
    let leaky = source.replacen(anchor, &format!("{planted}{anchor}"), 1);
    let (unexplained, _) = scan_source(file, &leaky, None);
    let expect = [
        "index conversion `as`",
        "index `[SBOX [ byte ] as usize % ROUNDS]`",
        "index `[byte]`",
        "branch `if`",
        "branch `while`",
        "branch `match`",
    ];
    for construct in expect {
        assert!(
            unexplained.iter().any(|u| u.contains(construct)),
            "the planted leak `{construct}` was not reported; reported:\n{}",
            unexplained.join("\n")
        );
    }
    // Nothing else: the real kernel's own constructs are all argued for.
    assert_eq!(unexplained.len(), 7, "{}", unexplained.join("\n"));
}
