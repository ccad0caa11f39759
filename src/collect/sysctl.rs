//! Kernel knobs read live from /proc/sys. The net.* entries there belong to
//! the network namespace of the reading thread, so the sampler thread sees
//! the watched namespace's values.

use crate::model::sockets::KNOBS;
use std::collections::BTreeMap;

/// "net.core.somaxconn" -> "/proc/sys/net/core/somaxconn".
pub fn path(name: &str) -> String {
    format!("/proc/sys/{}", name.replace('.', "/"))
}

/// Every knob in `KNOBS` that could be read, whitespace collapsed ("4096
/// 87380 6291456" for tcp_rmem). An unreadable knob is left out.
pub fn read_knobs() -> BTreeMap<String, String> {
    KNOBS
        .iter()
        .filter_map(|name| {
            let text = std::fs::read_to_string(path(name)).ok()?;
            let value = text.split_whitespace().collect::<Vec<_>>().join(" ");
            Some((name.to_string(), value))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_and_read() {
        assert_eq!(path("net.core.somaxconn"), "/proc/sys/net/core/somaxconn");
        let knobs = read_knobs();
        let somaxconn = knobs.get("net.core.somaxconn").expect("somaxconn");
        assert!(somaxconn.parse::<u32>().is_ok(), "{somaxconn}");
        let range = knobs.get("net.ipv4.ip_local_port_range").expect("range");
        assert_eq!(range.split(' ').count(), 2, "{range}");
    }
}
