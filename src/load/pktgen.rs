//! `load pktgen`: drives the kernel's packet generator through
//! /proc/net/pktgen the way Documentation/networking/pktgen.rst does it:
//!
//! 1. per thread (kpktgend_N): `rem_device_all`, then `add_device DEV`
//!    (`DEV@N` when several threads share one interface);
//! 2. per device: `count`, `clone_skb`, `pkt_size`, `delay`, `dst` (or
//!    `dst6`), `dst_mac`;
//! 3. pgctrl: `start` (the write blocks until the run ends), and `stop` when
//!    netlens is stopped or the time cap passes;
//! 4. each device's `Result:` line gives pps, Mb/sec and errors.
//!
//! The root directory is a parameter so a test can run the whole sequence
//! against a scratch directory.

use super::{Interval, Outcome, Report, Stop};
use anyhow::{Context, Result, bail};
use serde_json::json;
use std::io::Write;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub const PROC_ROOT: &str = "/proc/net/pktgen";

#[derive(Debug, Clone)]
pub struct PktgenSpec {
    pub root: PathBuf,
    pub dev: String,
    pub dst: IpAddr,
    pub dst_mac: String,
    pub count: u64,
    pub size: u32,
    pub delay_ns: u64,
    pub threads: u32,
    pub clone_skb: u32,
    pub duration: Duration,
}

/// Checks a MAC address "aa:bb:cc:dd:ee:ff"; returns it lowercased.
pub fn parse_mac(text: &str) -> Result<String> {
    let parts: Vec<&str> = text.trim().split(':').collect();
    if parts.len() != 6
        || !parts
            .iter()
            .all(|p| p.len() == 2 && p.chars().all(|c| c.is_ascii_hexdigit()))
    {
        bail!("'{text}' is not a MAC address (aa:bb:cc:dd:ee:ff)");
    }
    Ok(text.trim().to_ascii_lowercase())
}

/// The device names pktgen will know, one per thread.
pub fn devices(spec: &PktgenSpec) -> Vec<String> {
    if spec.threads <= 1 {
        vec![spec.dev.clone()]
    } else {
        (0..spec.threads)
            .map(|t| format!("{}@{t}", spec.dev))
            .collect()
    }
}

/// The commands, in order, as (file under the root, command).
pub fn commands(spec: &PktgenSpec) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (t, dev) in devices(spec).iter().enumerate() {
        let thread = format!("kpktgend_{t}");
        out.push((thread.clone(), "rem_device_all".to_string()));
        out.push((thread, format!("add_device {dev}")));
    }
    for dev in devices(spec) {
        let dst = match spec.dst {
            IpAddr::V4(ip) => format!("dst {ip}"),
            IpAddr::V6(ip) => format!("dst6 {ip}"),
        };
        for command in [
            format!("count {}", spec.count),
            format!("clone_skb {}", spec.clone_skb),
            format!("pkt_size {}", spec.size),
            format!("delay {}", spec.delay_ns),
            dst,
            format!("dst_mac {}", spec.dst_mac),
        ] {
            out.push((dev.clone(), command));
        }
    }
    out
}

/// The message when pktgen is not there, with what to do about it.
pub fn missing_message(root: &Path) -> String {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_default();
    let module = ["ko", "ko.xz", "ko.zst", "ko.gz"].iter().any(|ext| {
        Path::new(&format!(
            "/lib/modules/{release}/kernel/net/core/pktgen.{ext}"
        ))
        .exists()
    });
    let why = if module {
        "the pktgen module (CONFIG_NET_PKTGEN=m) is installed but not loaded: run `modprobe pktgen` as root".to_string()
    } else {
        format!(
            "this kernel ({release}) has no pktgen module: it needs CONFIG_NET_PKTGEN=m (then \
             `modprobe pktgen`) or =y"
        )
    };
    format!(
        "pktgen is not available: {} does not exist; {why}. Meanwhile `netlens load udp --to \
         HOST:PORT -b RATE` generates UDP load from user space",
        root.display()
    )
}

/// One pgset: open the proc file, write the command, close. pktgen reports
/// a bad command as a failed write and in the file's Result line.
fn pgset(root: &Path, file: &str, command: &str) -> Result<()> {
    let path = root.join(file);
    let mut handle = std::fs::OpenOptions::new()
        .append(true)
        .create(!root.starts_with("/proc"))
        .open(&path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    handle
        .write_all(format!("{command}\n").as_bytes())
        .with_context(|| format!("pktgen refused '{command}' in {}", path.display()))?;
    drop(handle);
    if let Ok(content) = std::fs::read_to_string(&path)
        && let Some(line) = content
            .lines()
            .find(|l| l.trim_start().starts_with("Result:"))
        && !line.contains("OK")
        && !line.contains("Idle")
    {
        bail!(
            "pktgen refused '{command}' in {}: {}",
            path.display(),
            line.trim()
        );
    }
    Ok(())
}

/// A device's result, from the lines after "Result: OK:".
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceResult {
    pub usec: u64,
    pub packets: u64,
    pub pps: u64,
    pub mbps: u64,
    pub bps: u64,
    pub errors: u64,
}

/// Parses a device file's "Result: OK: 13101142(c12220741+d880401) usec,
/// 10000000 (60byte,0frags)\n  763292pps 366Mb/sec (366380160bps) errors: 39664".
pub fn parse_result(content: &str) -> Option<DeviceResult> {
    let at = content.find("Result: OK:")?;
    let text = &content[at + "Result: OK:".len()..];
    let words: Vec<&str> = text.split_whitespace().collect();
    let number = |word: &str| -> Option<u64> {
        let digits: String = word.chars().take_while(|c| c.is_ascii_digit()).collect();
        digits.parse().ok()
    };
    let usec = number(words.first()?)?;
    let usec_at = words.iter().position(|w| w.starts_with("usec"))?;
    let packets = number(words.get(usec_at + 1)?)?;
    let pps = number(words.iter().find(|w| w.ends_with("pps"))?)?;
    let mbps = number(words.iter().find(|w| w.ends_with("Mb/sec"))?)?;
    let bps = words
        .iter()
        .find(|w| w.ends_with("bps)"))
        .and_then(|w| number(w.trim_start_matches('(')))
        .unwrap_or(mbps * 1_000_000);
    let errors_at = words.iter().position(|w| *w == "errors:")?;
    let errors = number(words.get(errors_at + 1)?)?;
    Some(DeviceResult {
        usec,
        packets,
        pps,
        mbps,
        bps,
        errors,
    })
}

pub fn run(spec: &PktgenSpec, stop: &Stop, report: Report) -> Result<Outcome> {
    super::check_duration(spec.duration)?;
    if spec.count == 0 {
        bail!("pktgen's count 0 means forever; give a count");
    }
    if !spec.root.join("pgctrl").exists() {
        bail!(missing_message(&spec.root));
    }
    for (file, command) in commands(spec) {
        pgset(&spec.root, &file, &command)?;
    }
    let start = Instant::now();
    let root = spec.root.clone();
    // The start write returns when every thread has sent its count.
    let runner = std::thread::spawn(move || pgset(&root, "pgctrl", "start"));
    let deadline = start + spec.duration;
    let mut stopped = false;
    let mut k = 1u32;
    while !runner.is_finished() {
        if stop.is_stopped() || Instant::now() >= deadline {
            pgset(&spec.root, "pgctrl", "stop")?;
            stopped = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
        let elapsed = start.elapsed();
        if elapsed >= Duration::from_secs(u64::from(k)) {
            report(Interval {
                start: f64::from(k - 1),
                end: elapsed.as_secs_f64(),
                value: 0.0,
                json: json!({"type": "interval", "kind": "pktgen", "end": elapsed.as_secs_f64()}),
                text: format!("running: {:.0}s", elapsed.as_secs_f64()),
            });
            k += 1;
        }
    }
    match runner.join() {
        Ok(result) => result?,
        Err(_) => bail!("the pktgen thread panicked"),
    }
    let elapsed = start.elapsed();
    let mut results = Vec::new();
    for dev in devices(spec) {
        let path = spec.root.join(&dev);
        let content = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let result = parse_result(&content).with_context(|| {
            format!("{} has no 'Result: OK:' line after the run", path.display())
        })?;
        results.push((dev, result));
    }
    let pps: u64 = results.iter().map(|(_, r)| r.pps).sum();
    let mbps: u64 = results.iter().map(|(_, r)| r.mbps).sum();
    let bps: u64 = results.iter().map(|(_, r)| r.bps).sum();
    let errors: u64 = results.iter().map(|(_, r)| r.errors).sum();
    let packets: u64 = results.iter().map(|(_, r)| r.packets).sum();
    let per_device: Vec<_> = results
        .iter()
        .map(|(dev, r)| {
            json!({"device": dev, "packets": r.packets, "usec": r.usec, "packets_per_s": r.pps,
                   "mbits_per_s": r.mbps, "bits_per_s": r.bps, "errors": r.errors})
        })
        .collect();
    let json = json!({
        "type": "summary", "kind": "pktgen", "dev": spec.dev, "dst": spec.dst.to_string(),
        "stopped": stopped || stop.is_stopped(), "seconds": elapsed.as_secs_f64(),
        "packets": packets, "packets_per_s": pps, "mbits_per_s": mbps, "bits_per_s": bps,
        "bytes": packets * u64::from(spec.size),
        "errors": errors, "devices": per_device,
    });
    let mut text = String::new();
    for (dev, r) in &results {
        text.push_str(&format!(
            "{dev}: {} packets in {} usec: {}pps {}Mb/sec ({}bps) errors: {}\n",
            r.packets, r.usec, r.pps, r.mbps, r.bps, r.errors
        ));
    }
    text.push_str(&format!(
        "total: {pps}pps {mbps}Mb/sec errors: {errors}{}",
        if stopped {
            " (stopped before the count)"
        } else {
            ""
        }
    ));
    Ok(Outcome {
        json,
        text,
        headline: format!("{pps} pps, {mbps} Mb/s, {errors} errors"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_documented_result_line() {
        let content = "Params: count 10000000  min_pkt_size: 60  max_pkt_size: 60\n\
            Current:\n     pkts-sofar: 10000000  errors: 39664\n\
            Result: OK: 13101142(c12220741+d880401) usec, 10000000 (60byte,0frags)\n  \
            763292pps 366Mb/sec (366380160bps) errors: 39664\n";
        assert_eq!(
            parse_result(content),
            Some(DeviceResult {
                usec: 13101142,
                packets: 10000000,
                pps: 763292,
                mbps: 366,
                bps: 366380160,
                errors: 39664,
            })
        );
        assert_eq!(parse_result("Result: Idle\n"), None);
    }

    #[test]
    fn macs() {
        assert_eq!(parse_mac("02:00:C6:12:00:02").unwrap(), "02:00:c6:12:00:02");
        assert!(parse_mac("02:00:c6:12:00").is_err());
        assert!(parse_mac("zz:00:c6:12:00:02").is_err());
    }

    #[test]
    fn missing_module_names_the_fix() {
        let message = missing_message(Path::new("/nonexistent/pktgen"));
        assert!(message.contains("CONFIG_NET_PKTGEN") && message.contains("modprobe pktgen"));
        assert!(message.contains("netlens load udp"));
    }
}
