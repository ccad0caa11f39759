//! The one integration-test binary: every test shares one pool of
//! threads, so the documents' and the pure tests run while the system
//! tests wait on tmux, timers and namespaces, and the crate and
//! tests/common are linked once. CPU-heavy tests take turns
//! (`common::heavy`); the few that change the whole host hold it alone
//! (`common::need_root_alone`).
//!
//! - `alone`: the few root tests that change a setting of the whole host;
//!   they hold it alone, and come first so that they wait for no other;
//! - `docs`: the documents stay true to the program;
//! - `pure`: no root, no namespace: parsers, screens, recordings, fuzzers;
//! - `system`: the real binary against the real system.
//!
//! `cargo test --profile fast-build --test suite pure` runs one part.

mod alone;
mod common;
mod docs;
mod pure;
mod system;
