//! `netlens explain NAME`: the counter catalogue's entry for a counter or a
//! drop reason, like `man` for one counter.

use crate::cli::ExplainArgs;
use crate::findings::catalogue;
use anyhow::{Result, bail};

/// Longer than any counter or reason name: refused before matching.
const MAX_NAME: usize = 100;

pub fn run(args: &ExplainArgs) -> Result<()> {
    if args.name.len() > MAX_NAME {
        bail!("explain: a name is at most {MAX_NAME} characters");
    }
    // The running kernel's counters, so that one the catalogue lacks is
    // still named; none when /proc/net is unreadable.
    let kernel = crate::collect::snmp::read_counters().unwrap_or_default();
    match catalogue::explain(&args.name, &kernel) {
        Ok(text) => super::stdout::print(text),
        Err(line) => bail!("{line}"),
    }
}
