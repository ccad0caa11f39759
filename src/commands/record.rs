//! `netlens record -o FILE`: headless recording.

use crate::cli::{CollectArgs, RecordArgs};
use crate::findings::Thresholds;
use crate::record::headless::{Output, RecordOptions};
use crate::session::{Session, SessionOptions};
use anyhow::Result;

pub fn run(collect: &CollectArgs, args: &RecordArgs, limits: &Thresholds) -> Result<()> {
    // Bad flight options fail before the session starts.
    let output = match (args.flight.options()?, &args.output) {
        (Some(flight), _) => {
            crate::record::flight::FlightRecorder::check_dirs(&flight)?;
            Output::Ring(flight)
        }
        (None, Some(path)) => Output::File(path.clone()),
        (None, None) => anyhow::bail!("record needs -o FILE or --ring D --ring-dir DIR"),
    };
    // Before the session starts (loading eBPF may take a while on a busy
    // box): a stop signal from then on closes the recording whole.
    let stop = crate::session::stop::Stop::new()?;
    let session = Session::start(&SessionOptions {
        // Replay should show the Conntrack tab's entries too (dumped at
        // most once a second).
        conntrack_entries: true,
        // As the live view: capture where permitted, unless --no-capture.
        ..super::session_options(collect, Some(&args.capture), &args.dns)
    })?;
    let options = RecordOptions {
        output,
        duration: args.duration,
        interval: collect.interval,
        hook: args.hook.options(true),
    };
    crate::record::headless::record(session, stop, &options, limits)
}
