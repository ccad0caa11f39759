//! The clap arguments as the core's plain option structs. These live here,
//! not in cli/, because build.rs compiles cli/ alone (for the man page)
//! without the rest of the crate.

use crate::capture::live::CaptureOptions;
use crate::cli::{CaptureArgs, CollectArgs, DnsArgs, FlightArgs, HookArgs};
use crate::collect::netns::Target;
use crate::dns::DnsOptions;
use crate::notify::HookOptions;
use crate::record::flight::{FlightOptions, FreezeOn, FreezeOptions};
use crate::record::ring::RingOptions;

impl CollectArgs {
    /// The namespace these options watch.
    pub fn target(&self) -> Target {
        Target::from_args(self.netns.as_deref(), self.pid)
    }

    /// The one namespace a command that works in one namespace (capture,
    /// conns, load) runs in: --all-netns is refused rather than ignored.
    pub fn one_target(&self, command: &str) -> anyhow::Result<Target> {
        if self.all_netns {
            anyhow::bail!(
                "`netlens {command}` works in one network namespace: \
                 use --netns NAME or --pid PID instead of --all-netns"
            );
        }
        Ok(self.target())
    }
}

impl CaptureArgs {
    /// The capture engine's options.
    pub fn options(&self) -> CaptureOptions {
        CaptureOptions {
            iface: self.iface.clone(),
            filter: self.filter.clone(),
            off: self.no_capture,
            payload: self.payload,
        }
    }
}

impl DnsArgs {
    /// The DNS monitor's options.
    pub fn options(&self) -> DnsOptions {
        DnsOptions {
            probes: self.dns_probe.clone(),
            servers: self.dns_server.clone(),
            timeout: self.dns_timeout,
        }
    }
}

impl HookArgs {
    /// The `--on-finding` hook these flags ask for, if any; `inherit_stderr`
    /// for the headless commands, whose stderr is not a screen.
    pub fn options(&self, inherit_stderr: bool) -> Option<HookOptions> {
        Some(HookOptions {
            command: self.on_finding.clone()?,
            timeout: self.on_finding_timeout,
            inherit_stderr,
        })
    }
}

impl FlightArgs {
    /// The flight recorder these flags ask for (None without --ring); a
    /// bad --freeze-on is one line.
    pub fn options(&self) -> anyhow::Result<Option<FlightOptions>> {
        let (Some(keep), Some(dir)) = (self.ring, &self.ring_dir) else {
            return Ok(None);
        };
        let freeze = match &self.freeze_on {
            Some(text) => Some(FreezeOptions {
                on: FreezeOn::parse(text).map_err(anyhow::Error::msg)?,
                after: self.freeze_after,
                bundle_dir: self.bundle_dir.clone().unwrap_or_else(|| dir.clone()),
                per_hour: self.max_bundles_per_hour,
            }),
            None => None,
        };
        Ok(Some(FlightOptions {
            ring: RingOptions {
                dir: dir.clone(),
                keep,
                max_bytes: self.max_size,
            },
            freeze,
        }))
    }
}
