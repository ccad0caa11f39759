//! The `drops` section of `snapshot --json`: the kernel's drop reasons
//! counted by the eBPF program, busiest first (the man page's SNAPSHOT
//! OUTPUT lists the keys).

use crate::model::Sample;
use crate::model::drops::{DropRow, row_rate, socket_owner};
use crate::model::rates::interval;
use serde::Serialize;

#[derive(Serialize)]
pub struct DropsJson<'a> {
    available: bool,
    unavailable: Option<&'a str>,
    lost: u64,
    rows: Vec<DropRowJson<'a>>,
}

#[derive(Serialize)]
struct DropRowJson<'a> {
    netns: &'a str,
    reason: &'a str,
    location: &'a str,
    interface: Option<&'a str>,
    proto: Option<&'a str>,
    port: Option<u16>,
    destination: Option<&'a str>,
    translated_from: Option<&'a str>,
    pid: Option<u32>,
    process: Option<&'a str>,
    packets: u64,
    per_s: Option<f64>,
}

/// None when the sample carries no drops (a recording made before they
/// were collected).
pub fn json<'a>(previous: &Sample, current: &'a Sample) -> Option<DropsJson<'a>> {
    let drops = current.drops.as_ref()?;
    let seconds = interval(previous, current);
    let mut rows: Vec<DropRowJson> = drops
        .rows
        .iter()
        .map(|row| {
            row_json(
                current,
                row,
                row_rate(previous.drops.as_ref(), row, seconds),
            )
        })
        .collect();
    rows.sort_by(|a, b| {
        b.per_s
            .unwrap_or(0.0)
            .total_cmp(&a.per_s.unwrap_or(0.0))
            .then(b.packets.cmp(&a.packets))
    });
    Some(DropsJson {
        available: drops.unavailable.is_none(),
        unavailable: drops.unavailable.as_deref(),
        lost: drops.lost,
        rows,
    })
}

fn row_json<'a>(current: &'a Sample, row: &'a DropRow, per_s: Option<f64>) -> DropRowJson<'a> {
    // The sample's sockets are the watched namespace's: only its rows can
    // be matched to a process.
    let watched = current
        .drops
        .as_ref()
        .is_some_and(|d| d.netns_inode == row.netns_inode);
    let owner = row
        .socket
        .as_ref()
        .filter(|_| watched)
        .and_then(|s| socket_owner(&current.sockets, s));
    DropRowJson {
        netns: &row.netns,
        reason: &row.reason,
        location: &row.location,
        interface: row.interface.as_deref(),
        proto: row.socket.as_ref().map(|s| s.proto.as_str()),
        port: row.socket.as_ref().map(|s| s.port),
        destination: row.destination.as_deref(),
        translated_from: row.translated_from.as_deref(),
        pid: owner.map(|u| u.pid),
        process: owner.map(|u| u.process.as_str()),
        packets: row.packets,
        per_s,
    }
}
