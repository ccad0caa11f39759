//! `netlens export`: the Prometheus exporter.

use crate::cli::{CollectArgs, ExportArgs};
use crate::export::ExportOptions;
use crate::findings::Thresholds;
use anyhow::Result;

pub fn run(collect: &CollectArgs, args: &ExportArgs, limits: &Thresholds) -> Result<()> {
    let flight = args.flight.options()?;
    if let Some(flight) = &flight {
        crate::record::flight::FlightRecorder::check_dirs(flight)?;
    }
    let options = ExportOptions {
        listen: args.listen,
        hook: args.hook.options(true),
        per_process: args.per_process,
        flight,
        session: super::SessionOptions {
            // Rates need two samples: the first is the baseline.
            first_is_baseline: true,
            ..super::session_options(
                collect,
                args.capture.then(crate::cli::CaptureArgs::default).as_ref(),
                &args.dns,
            )
        },
    };
    crate::export::run(&options, limits)
}
