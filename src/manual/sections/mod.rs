//! Hand-written man page sections (roff), a file a subject. Pure data:
//! build.rs includes these files. Options and keys are generated, and so
//! is the threshold list (from findings/thresholds/table.rs); these explain
//! the rest.

mod live;
mod outputs;
mod packets;
mod running;
mod snapshot;

pub use running::CONFIGURATION;

/// The sections in page order (build.rs joins them).
pub const SECTIONS: [&str; 5] = [
    snapshot::SNAPSHOT,
    live::LIVE,
    outputs::OUTPUTS,
    packets::PACKETS,
    running::RUNNING,
];
