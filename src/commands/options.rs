//! The clap arguments as the core's plain option structs. These live here,
//! not in cli.rs, because build.rs compiles cli.rs alone (for the man page)
//! without the rest of the crate.

use crate::capture::live::CaptureOptions;
use crate::cli::{CaptureArgs, CollectArgs, DnsArgs, HookArgs};
use crate::collect::netns::Target;
use crate::dns::DnsOptions;
use crate::notify::HookOptions;

impl CollectArgs {
    /// The namespace these options watch.
    pub fn target(&self) -> Target {
        Target::from_args(self.netns.as_deref(), self.pid)
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
