//! The legacy iptables and ip6tables tables (x_tables) of the calling
//! thread's network namespace, read as `iptables-legacy-save` reads them:
//! IPT_SO_GET_INFO then IPT_SO_GET_ENTRIES on a raw socket (IP6T_ on
//! SOL_IPV6), the blob of entries cut into chains as libiptc does
//! (`blob`), each rule printed as iptables-save 1.8.9 prints it (`render`,
//! `matches`, `targets`).
//!
//! Only the tables listed in /proc/thread-self/net/ip{,6}_tables_names are
//! asked for: asking for another one would make the kernel create it in
//! this namespace (or load its module).

mod blob;
mod matches;
mod render;
mod targets;

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use crate::model::firewall::{Backend, Rule, bounded_text};
use crate::text::escape_control;

use blob::{Chain, Family, Table};

/// Rules (policies included) read at most: a ruleset is bounded by what a
/// process of the namespace wrote.
const MAX_RULES: usize = 100_000;
/// The largest blob fetched: 100,000 rules of a few matches each fit well.
const MAX_BLOB: usize = 256 << 20;
/// IPT_BASE_CTL: IPT_SO_GET_INFO, and IPT_SO_GET_ENTRIES one above (the
/// same numbers for IP6T_ on SOL_IPV6).
const SO_GET_INFO: libc::c_int = 64;
const SO_GET_ENTRIES: libc::c_int = 65;
/// sizeof(struct ipt_getinfo), of struct ipt_get_entries (the entries
/// start 8-aligned after the name and the size), XT_TABLE_MAXNAMELEN.
const GETINFO_LEN: usize = 84;
const GET_ENTRIES_HEADER: usize = 40;
const TABLE_NAME_LEN: usize = 32;

/// Every rule of the legacy iptables and ip6tables tables that exist in the calling
/// thread's network namespace (the names in /proc/net/ip_tables_names and
/// /proc/net/ip6_tables_names; never a table not listed there, so no module is ever
/// loaded), in iptables-save order, plus one policy Rule per built-in chain.
/// Empty (Ok) when those files do not exist.
pub fn read() -> io::Result<Vec<Rule>> {
    let mut rules = Vec::new();
    for family in [Family::V4, Family::V6] {
        for name in table_names(family)? {
            let (info, entries) = fetch(family, &name)?;
            let table = blob::parse(family, &info, &entries)?;
            push_table(&mut rules, family, &name, &table);
            if rules.len() >= MAX_RULES {
                rules.truncate(MAX_RULES);
                return Ok(rules);
            }
        }
    }
    Ok(rules)
}

/// The tables of `family` that exist in this thread's namespace, in the
/// file's order (iptables-save's). /proc/thread-self: /proc/net is the
/// namespace of the process' main thread, not of this one.
fn table_names(family: Family) -> io::Result<Vec<String>> {
    let path = match family {
        Family::V4 => "/proc/thread-self/net/ip_tables_names",
        Family::V6 => "/proc/thread-self/net/ip6_tables_names",
    };
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(text
            .lines()
            .map(str::trim)
            .filter(|name| !name.is_empty() && name.len() < TABLE_NAME_LEN)
            .map(str::to_string)
            .collect()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(e),
    }
}

/// The table's struct ipt_getinfo and its entries. A table that changes
/// between the two calls answers EAGAIN: asked again.
fn fetch(family: Family, name: &str) -> io::Result<(blob::Info, Vec<u8>)> {
    let (domain, level) = match family {
        Family::V4 => (libc::AF_INET, libc::SOL_IP),
        Family::V6 => (libc::AF_INET6, libc::SOL_IPV6),
    };
    // SAFETY: plain system call; the descriptor is owned right after.
    let fd = unsafe {
        libc::socket(
            domain,
            libc::SOCK_RAW | libc::SOCK_CLOEXEC,
            libc::IPPROTO_RAW,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd is a new descriptor nothing else owns.
    let socket = unsafe { OwnedFd::from_raw_fd(fd) };
    // The name NUL-padded, as the kernel reads it (table_names keeps the
    // names shorter than this).
    let mut named = [0u8; TABLE_NAME_LEN];
    for (to, from) in named.iter_mut().zip(name.bytes()) {
        *to = from;
    }
    let mut last = io::Error::from(io::ErrorKind::WouldBlock);
    for _ in 0..10 {
        let mut info = [0u8; GETINFO_LEN];
        info[..TABLE_NAME_LEN].copy_from_slice(&named);
        getsockopt(&socket, level, SO_GET_INFO, &mut info)?;
        let info = blob::Info::parse(&info)?;
        if info.size > MAX_BLOB {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("iptables table {name} is {} bytes", info.size),
            ));
        }
        let mut buf = vec![0u8; GET_ENTRIES_HEADER + info.size];
        buf[..TABLE_NAME_LEN].copy_from_slice(&named);
        buf[TABLE_NAME_LEN..TABLE_NAME_LEN + 4].copy_from_slice(&(info.size as u32).to_ne_bytes());
        match getsockopt(&socket, level, SO_GET_ENTRIES, &mut buf) {
            Ok(()) => {
                buf.drain(..GET_ENTRIES_HEADER);
                return Ok((info, buf));
            }
            Err(e) if e.raw_os_error() == Some(libc::EAGAIN) => last = e,
            Err(e) => return Err(e),
        }
    }
    Err(last)
}

/// getsockopt into all of `buf`, which the kernel both reads (the table's
/// name) and fills.
fn getsockopt(
    socket: &OwnedFd,
    level: libc::c_int,
    name: libc::c_int,
    buf: &mut [u8],
) -> io::Result<()> {
    let mut len = libc::socklen_t::try_from(buf.len())
        .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: buf is valid for len bytes and outlives the call.
    let rc = unsafe {
        libc::getsockopt(
            socket.as_raw_fd(),
            level,
            name,
            buf.as_mut_ptr().cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Appends `table` as iptables-save lists it: the chains' lines (the
/// built-in chains' policies) first, then every chain's rules.
fn push_table(rules: &mut Vec<Rule>, family: Family, name: &str, table: &Table) {
    let new = |chain: &Chain, position: u32, text: String, verdict, counter| Rule {
        backend: Backend::IptablesLegacy,
        family: family.name().to_string(),
        table: escape_control(name).into_owned(),
        chain: chain.name.clone(),
        handle: None,
        position,
        text: bounded_text(text),
        verdict,
        counter: Some(counter),
        policy: position == 0,
    };
    for chain in &table.chains {
        if let Some(policy) = &chain.policy {
            let (label, verdict) = render::standard_verdict(policy.verdict);
            let text = format!(":{} {}", chain.name, label.unwrap_or("-"));
            rules.push(new(chain, 0, text, verdict, policy.counter));
        }
    }
    for chain in &table.chains {
        for (index, entry) in chain.rules.iter().enumerate() {
            if rules.len() >= MAX_RULES {
                return;
            }
            let (text, verdict) = render::rule(family, table, &chain.name, entry);
            let position = u32::try_from(index + 1).unwrap_or(u32::MAX);
            rules.push(new(chain, position, text, verdict, entry.counter));
        }
    }
}

#[cfg(test)]
mod tests;
