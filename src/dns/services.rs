//! Service names for ports from /etc/services, as `ss` prints them without
//! -n ("https" for tcp/443). Read and parsed once, on first use, with
//! limits: a file past `MAX_BYTES` is read only that far, a line past
//! `MAX_LINE` and names past `MAX_NAME` are skipped, and at most
//! `MAX_ENTRIES` ports are kept (the system file has a few hundred).

use std::collections::HashMap;
use std::io::Read;
use std::sync::OnceLock;

pub const MAX_BYTES: u64 = 1 << 20;
pub const MAX_LINE: usize = 512;
pub const MAX_NAME: usize = 32;
pub const MAX_ENTRIES: usize = 20_000;

/// The transport protocols /etc/services names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Transport {
    Tcp,
    Udp,
    Sctp,
}

impl Transport {
    /// "tcp", "udp", "sctp" (as sockets and flows name them); others: None.
    pub fn of(name: &str) -> Option<Self> {
        match name {
            "tcp" => Some(Transport::Tcp),
            "udp" => Some(Transport::Udp),
            "sctp" => Some(Transport::Sctp),
            _ => None,
        }
    }
}

#[derive(Debug, Default, Clone, PartialEq)]
pub struct Services {
    names: HashMap<(Transport, u16), String>,
}

impl Services {
    /// Parses services(5) text: "name port/proto [aliases...] [# comment]".
    /// The first name for a port wins, as getservbyport returns it.
    pub fn parse(text: &str) -> Self {
        let mut names = HashMap::new();
        for line in text.lines() {
            if names.len() >= MAX_ENTRIES {
                break;
            }
            if line.len() > MAX_LINE {
                continue;
            }
            let line = line.split('#').next().unwrap_or("");
            let mut words = line.split_whitespace();
            let (Some(name), Some(port_proto)) = (words.next(), words.next()) else {
                continue;
            };
            let Some((port, proto)) = port_proto.split_once('/') else {
                continue;
            };
            let (Ok(port), Some(proto)) = (port.parse::<u16>(), Transport::of(proto)) else {
                continue;
            };
            let printable = name.chars().all(|c| c.is_ascii_graphic());
            if port == 0 || name.len() > MAX_NAME || !printable {
                continue;
            }
            names
                .entry((proto, port))
                .or_insert_with(|| name.to_string());
        }
        Services { names }
    }

    /// Reads and parses a services file, at most `MAX_BYTES` of it; an
    /// unreadable file gives no names (ports stay numbers).
    pub fn read(path: &str) -> Self {
        let mut text = String::new();
        let read = std::fs::File::open(path)
            .and_then(|file| file.take(MAX_BYTES).read_to_string(&mut text));
        match read {
            Ok(_) => Self::parse(&text),
            // Cut inside a UTF-8 character, or not text: no names.
            Err(_) => Self::default(),
        }
    }

    /// The system's table (/etc/services), read on the first call only.
    pub fn system() -> &'static Self {
        static SYSTEM: OnceLock<Services> = OnceLock::new();
        SYSTEM.get_or_init(|| Self::read("/etc/services"))
    }

    /// The service name of `port` over `proto` ("tcp", "udp", "sctp").
    pub fn name(&self, proto: &str, port: u16) -> Option<&str> {
        let proto = Transport::of(proto)?;
        self.names.get(&(proto, port)).map(String::as_str)
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_names_aliases_and_comments() {
        let text = "# comment\n\
            http\t\t80/tcp\t\twww\t# WorldWideWeb HTTP\n\
            https 443/tcp\n\
            https 443/udp\n\
            domain 53/udp\n\
            domain-alias 53/udp\n\
            \n  \n\
            bad 99999/tcp\n\
            noport /tcp\n\
            weird 12/ddp\n\
            zero 0/tcp\n";
        let services = Services::parse(text);
        assert_eq!(services.name("tcp", 80), Some("http"));
        assert_eq!(services.name("tcp", 443), Some("https"));
        assert_eq!(services.name("udp", 443), Some("https"));
        assert_eq!(services.name("udp", 53), Some("domain"));
        assert_eq!(services.name("tcp", 53), None);
        assert_eq!(services.name("icmp", 80), None);
        assert_eq!(services.name("tcp", 0), None);
        assert_eq!(services.len(), 4);
    }

    #[test]
    fn limits_hold_on_hostile_input() {
        let long = format!("{} 1/tcp\nok 2/tcp\n", "x".repeat(MAX_LINE + 1));
        let services = Services::parse(&long);
        assert_eq!(services.name("tcp", 1), None);
        assert_eq!(services.name("tcp", 2), Some("ok"));
        let name = format!("{} 3/tcp\n", "y".repeat(MAX_NAME + 1));
        assert!(Services::parse(&name).is_empty());
        let mut many = String::new();
        for port in 1..=u16::MAX {
            many.push_str(&format!("s{port} {port}/tcp\ns{port} {port}/udp\n"));
        }
        assert_eq!(Services::parse(&many).len(), MAX_ENTRIES);
        // Garbage never panics.
        for bytes in [
            &b"\xff\xfe/ / /"[..],
            b"a 1/",
            b"a /1",
            b"a 1//tcp",
            b"\0 1/tcp",
        ] {
            let _ = Services::parse(&String::from_utf8_lossy(bytes));
        }
    }

    #[test]
    fn the_system_file_names_what_getservbyport_names() {
        let services = Services::read("/etc/services");
        if services.is_empty() {
            println!("skip: no /etc/services here");
            return;
        }
        // The C library's own answer, for comparison.
        for (port, proto) in [(22u16, "tcp"), (443, "tcp"), (53, "udp")] {
            let c_proto = std::ffi::CString::new(proto).unwrap();
            // SAFETY: a valid NUL-terminated protocol; the returned entry is
            // read at once, before any other getserv* call on this thread.
            let entry = unsafe { libc::getservbyport(i32::from(port.to_be()), c_proto.as_ptr()) };
            let expected = (!entry.is_null()).then(|| {
                // SAFETY: a non-null servent has a NUL-terminated s_name.
                unsafe { std::ffi::CStr::from_ptr((*entry).s_name) }
                    .to_string_lossy()
                    .into_owned()
            });
            assert_eq!(services.name(proto, port).map(str::to_string), expected);
        }
    }

    #[test]
    fn an_unreadable_file_gives_no_names() {
        assert!(Services::read("/nonexistent/services").is_empty());
    }
}
