//! The package's user guides, rendered by rustdoc so that they are read where the
//! API is (on docs.rs, or `cargo doc --open`), with no repository needed. Each
//! module is one Markdown file of the package, included as it is; the module has
//! no items. It exists only when documenting (`cfg(doc)`), so it is no part of the
//! API; rustdoc sets that cfg when it collects doctests too, so the guides' Rust
//! blocks run as doctests. Their links are docs.rs addresses (a relative path would
//! be relative to the docs.rs page): `scripts/check-doc-links.py` checks them.
//!
//! - the threat model and what is guaranteed (and not): [`security`];
//! - the stream definitions, the value-stability policy and where the test
//!   vectors come from: [`streams`];
//! - bad input, errors and panics: [`errors`];
//! - the `SeedTree` construction and the saved-state encodings: [`derivation`];
//! - reproducible results across processes and machines (MPI, ...): [`parallel`];
//! - firmware, seeding on a board, backends without run-time detection:
//!   [`no_std`]; WebAssembly: [`wasm`];
//! - the crates that take these generators, per `rand_core` version: [`clients`];
//! - benchmarks and statistical batteries: [`performance`], [`statistics`];
//! - the changes in each release: [`changelog`].

#[doc = include_str!("../SECURITY.md")]
pub mod security {}

#[doc = include_str!("../docs/STREAMS.md")]
pub mod streams {}

#[doc = include_str!("../docs/ERRORS.md")]
pub mod errors {}

#[doc = include_str!("../docs/DERIVATION.md")]
pub mod derivation {}

#[doc = include_str!("../docs/PARALLEL.md")]
pub mod parallel {}

#[doc = include_str!("../docs/NO_STD.md")]
pub mod no_std {}

#[doc = include_str!("../docs/WASM.md")]
pub mod wasm {}

#[doc = include_str!("../docs/CLIENTS.md")]
pub mod clients {}

#[doc = include_str!("../docs/PERFORMANCE.md")]
pub mod performance {}

#[doc = include_str!("../docs/STATISTICS.md")]
pub mod statistics {}

#[doc = include_str!("../CHANGELOG.md")]
pub mod changelog {}
