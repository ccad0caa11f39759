//! TCP and UDP sockets, IPv4 and IPv6, from sock_diag netlink dumps (what
//! `ss` uses), with tcp_info and sk_meminfo; and the count of unix sockets.
//!
//! Blocking by design: it runs on the sampler thread. The socket is opened
//! after the thread entered the watched namespace, so it dumps that one.

use super::inet_diag;
use crate::model::socket_table::SocketTable;
#[cfg(test)]
use crate::model::sockets::TcpInfoSample;
use crate::model::sockets::{Proto, SocketKey, SocketSample, TCP_ESTABLISHED};
use anyhow::{Context, Result, bail};
#[cfg(test)]
use netlink_packet_core::Parseable;
use netlink_packet_core::{NLM_F_DUMP, NLM_F_REQUEST, NetlinkHeader, NetlinkMessage};
#[cfg(test)]
use netlink_packet_sock_diag::inet::InetResponse;
#[cfg(test)]
use netlink_packet_sock_diag::inet::nlas::Nla;
use netlink_packet_sock_diag::inet::{ExtensionFlags, InetRequest, SocketId, StateFlags};
use netlink_packet_sock_diag::unix::{ShowFlags, StateFlags as UnixStates, UnixRequest};
use netlink_packet_sock_diag::{
    AF_INET, AF_INET6, AF_UNIX, IPPROTO_TCP, IPPROTO_UDP, SockDiagMessage,
};
use netlink_sys::{Socket, SocketAddr, protocols::NETLINK_SOCK_DIAG};
use std::collections::HashMap;

const NLMSG_ERROR: u16 = 2;
const NLMSG_DONE: u16 = 3;
const SOCK_DIAG_BY_FAMILY: u16 = 20;
/// The first inet_diag request type (struct inet_diag_req): TCP only, and
/// the kernel dumps it with AF_UNSPEC, both families in one walk.
const TCPDIAG_GETSOCK: u16 = 18;
/// sizeof(struct inet_diag_req).
const INET_DIAG_REQ_LEN: usize = 60;

/// What one dump of every TCP and UDP socket found.
pub struct SocketDump {
    pub sockets: SocketTable,
    /// The socket cookie of each of `sockets`, in the same order.
    pub cookies: Vec<u64>,
    /// TCP sockets per state, index = state - 1.
    pub states: [u32; 11],
}

pub struct SockDiag {
    socket: Socket,
    sequence: u32,
    buffer: Vec<u8>,
    /// Established sockets with a non-empty queue in the last sample.
    queued: HashMap<SocketKey, Queued>,
    /// Sockets in the last dump, to size the next one.
    last_count: usize,
}

/// The SOCK_DIAG_BY_FAMILY request for every `proto` socket of `family`
/// in any state, with memory info (and tcp_info for TCP).
fn family_request(proto: Proto, protocol: u8, family: u8) -> SockDiagMessage {
    let mut extensions = ExtensionFlags::SKMEMINFO;
    if proto == Proto::Tcp {
        extensions |= ExtensionFlags::INFO;
    }
    SockDiagMessage::InetRequest(InetRequest {
        family,
        protocol,
        extensions,
        states: StateFlags::all(),
        socket_id: if family == AF_INET {
            SocketId::new_v4()
        } else {
            SocketId::new_v6()
        },
    })
}

impl SockDiag {
    /// Opens a sock_diag socket in the calling thread's network namespace.
    pub fn new() -> Result<Self> {
        let mut socket =
            Socket::new(NETLINK_SOCK_DIAG).context("cannot open a sock_diag netlink socket")?;
        socket
            .bind_auto()
            .context("cannot bind the sock_diag socket")?;
        socket
            .connect(&SocketAddr::new(0, 0))
            .context("cannot connect the sock_diag socket")?;
        Ok(Self {
            socket,
            sequence: 0,
            buffer: vec![0; 256 * 1024],
            queued: HashMap::new(),
            last_count: 0,
        })
    }

    /// Every TCP and UDP socket, IPv4 and IPv6, in every state.
    pub fn dump(&mut self) -> Result<SocketDump> {
        let mut out = SocketDump {
            sockets: SocketTable::with_capacity(self.last_count + self.last_count / 8),
            cookies: Vec::with_capacity(self.last_count + self.last_count / 8),
            states: [0; 11],
        };
        let before = std::mem::take(&mut self.queued);
        let mut queued = HashMap::new();
        let tcp_done = self.dump_tcp(&mut out, &before, &mut queued).is_ok();
        for (proto, protocol) in [(Proto::Tcp, IPPROTO_TCP), (Proto::Udp, IPPROTO_UDP)] {
            if proto == Proto::Tcp && tcp_done {
                continue;
            }
            for family in [AF_INET, AF_INET6] {
                let result = self.run(family_request(proto, protocol, family), |payload| {
                    if let Some(mut socket) = inet_diag::parse(proto, payload) {
                        count(&mut socket, &mut out.states, &before, &mut queued);
                        out.sockets.push(&socket);
                        out.cookies
                            .push(super::tcp_destroy::cookie(payload).unwrap_or(0));
                    }
                });
                // A kernel without IPv6 answers the AF_INET6 dump with an
                // error: that is just no IPv6 sockets.
                if let Err(error) = result
                    && family == AF_INET
                {
                    return Err(error);
                }
            }
        }
        self.queued = queued;
        self.last_count = out.sockets.len();
        Ok(out)
    }

    /// Every TCP socket, IPv4 then IPv6, from one TCPDIAG_GETSOCK dump
    /// (AF_UNSPEC) instead of one SOCK_DIAG_BY_FAMILY dump per family. Each
    /// dump walks the kernel's whole established hash, and that table is
    /// host-wide (unless net.ipv4.tcp_child_ehash_entries gave the namespace
    /// its own): with `--all-netns` every namespace's dump walks every
    /// namespace's sockets, so one walk instead of two halves most of a
    /// sample's CPU (issue 27). IPv6 rows go after the IPv4 ones, each in
    /// walk order: what the two dumps gave. On an error `out` is left empty
    /// of TCP rows, for the per-family dumps to fill.
    fn dump_tcp(
        &mut self,
        out: &mut SocketDump,
        before: &HashMap<SocketKey, Queued>,
        queued: &mut HashMap<SocketKey, Queued>,
    ) -> Result<()> {
        let mut request = Vec::with_capacity(INET_DIAG_REQ_LEN);
        request.extend_from_slice(&[
            0, // AF_UNSPEC
            0,
            0,
            (ExtensionFlags::SKMEMINFO | ExtensionFlags::INFO).bits(),
        ]);
        request.extend_from_slice(&[0; 48]); // struct inet_diag_sockid: any
        request.extend_from_slice(&StateFlags::all().bits().to_ne_bytes());
        request.extend_from_slice(&0u32.to_ne_bytes()); // idiag_dbs, unused
        let mut v6: (SocketTable, Vec<u64>) = Default::default();
        let mut states = [0; 11];
        let result = self.run_raw(TCPDIAG_GETSOCK, &request, |payload| {
            if let Some(mut socket) = inet_diag::parse(Proto::Tcp, payload) {
                count(&mut socket, &mut states, before, queued);
                let (sockets, cookies) = if payload[0] == AF_INET6 {
                    (&mut v6.0, &mut v6.1)
                } else {
                    (&mut out.sockets, &mut out.cookies)
                };
                sockets.push(&socket);
                cookies.push(super::tcp_destroy::cookie(payload).unwrap_or(0));
            }
        });
        if result.is_err() {
            out.sockets = SocketTable::default();
            out.cookies.clear();
            queued.clear();
            return result;
        }
        out.states = states;
        out.sockets.append(&v6.0);
        out.cookies.append(&mut v6.1);
        Ok(())
    }

    /// The number of AF_UNIX sockets, any state.
    pub fn unix_count(&mut self) -> Result<u32> {
        let request = SockDiagMessage::UnixRequest(UnixRequest {
            state_flags: UnixStates::from_bits_retain(u32::MAX),
            inode: 0,
            show_flags: ShowFlags::empty(),
            cookie: [0xff; 8],
        });
        let mut count = 0u32;
        self.run(request, |payload| {
            if payload.first() == Some(&AF_UNIX) {
                count += 1;
            }
        })?;
        Ok(count)
    }

    /// Sends a dump request and hands every reply payload to `each`.
    fn run(&mut self, request: SockDiagMessage, each: impl FnMut(&[u8])) -> Result<()> {
        self.sequence = self.sequence.wrapping_add(1);
        let mut packet = NetlinkMessage::new(NetlinkHeader::default(), request.into());
        packet.header.flags = NLM_F_DUMP | NLM_F_REQUEST;
        packet.header.sequence_number = self.sequence;
        packet.finalize();
        let mut bytes = vec![0; packet.buffer_len()];
        packet.serialize(&mut bytes);
        self.exchange(&bytes, each)
    }

    /// As `run`, for a request the crate has no type for: `kind` and its
    /// payload.
    fn run_raw(&mut self, kind: u16, payload: &[u8], each: impl FnMut(&[u8])) -> Result<()> {
        self.sequence = self.sequence.wrapping_add(1);
        let mut bytes = Vec::with_capacity(16 + payload.len());
        bytes.extend_from_slice(&(16 + payload.len() as u32).to_ne_bytes());
        bytes.extend_from_slice(&kind.to_ne_bytes());
        bytes.extend_from_slice(&(NLM_F_DUMP | NLM_F_REQUEST).to_ne_bytes());
        bytes.extend_from_slice(&self.sequence.to_ne_bytes());
        bytes.extend_from_slice(&0u32.to_ne_bytes()); // port id: the kernel's
        bytes.extend_from_slice(payload);
        self.exchange(&bytes, each)
    }

    /// Sends one request (already carrying `self.sequence`) and hands every
    /// reply payload to `each` until the dump is done.
    fn exchange(&mut self, bytes: &[u8], mut each: impl FnMut(&[u8])) -> Result<()> {
        self.socket
            .send(bytes, 0)
            .context("sock_diag send failed")?;
        loop {
            let size = self
                .socket
                .recv(&mut &mut self.buffer[..], 0)
                .context("sock_diag receive failed")?;
            if size == 0 {
                bail!("sock_diag socket closed");
            }
            let mut offset = 0;
            while offset + 16 <= size {
                let message = &self.buffer[offset..size];
                let length =
                    u32::from_ne_bytes([message[0], message[1], message[2], message[3]]) as usize;
                if length < 16 || length > message.len() {
                    bail!("malformed sock_diag reply (length {length})");
                }
                let kind = u16::from_ne_bytes([message[4], message[5]]);
                let sequence =
                    u32::from_ne_bytes([message[8], message[9], message[10], message[11]]);
                offset += (length + 3) & !3;
                if sequence != self.sequence {
                    continue; // a late reply to an earlier request
                }
                match kind {
                    NLMSG_DONE => return Ok(()),
                    NLMSG_ERROR => {
                        let code = message
                            .get(16..20)
                            .map_or(0, |b| i32::from_ne_bytes([b[0], b[1], b[2], b[3]]));
                        if code != 0 {
                            bail!(
                                "sock_diag error: {}",
                                std::io::Error::from_raw_os_error(-code)
                            );
                        }
                        return Ok(());
                    }
                    // A reply has its request's type.
                    SOCK_DIAG_BY_FAMILY | TCPDIAG_GETSOCK => each(&message[16..length]),
                    _ => {}
                }
            }
        }
    }
}

/// An established socket's queues and progress counters at one sample.
/// Counts a dumped socket in `states` and sets its queue streak against
/// the last sample's queued sockets (`before`), noting it in `now`.
fn count(
    socket: &mut SocketSample,
    states: &mut [u32; 11],
    before: &HashMap<SocketKey, Queued>,
    now: &mut HashMap<SocketKey, Queued>,
) {
    if socket.proto != Proto::Tcp {
        return;
    }
    if let Some(count) = states.get_mut(usize::from(socket.state).wrapping_sub(1)) {
        *count += 1;
    }
    if socket.state == TCP_ESTABLISHED && (socket.recv_q > 0 || socket.send_q > 0) {
        let key = socket.as_socket().key();
        let queue = Queued::of(socket);
        socket.queue_streak = match before.get(&key) {
            Some(before) if queue.stalled_since(before) => before.streak + 1,
            _ => 1,
        };
        now.insert(
            key,
            Queued {
                streak: socket.queue_streak,
                ..queue
            },
        );
    }
}

#[derive(Debug, Clone, Copy)]
struct Queued {
    streak: u32,
    recv_q: u32,
    send_q: u32,
    bytes_received: u64,
    bytes_acked: u64,
}

impl Queued {
    fn of(socket: &SocketSample) -> Self {
        let info = socket.tcp.unwrap_or_default();
        Self {
            streak: 0,
            recv_q: socket.recv_q,
            send_q: socket.send_q,
            bytes_received: info.bytes_received,
            bytes_acked: info.bytes_acked,
        }
    }

    /// Whether a queue that was non-empty made no progress: the application
    /// read nothing from a non-empty Recv-Q (bytes received minus the growth
    /// of the queue is what it read), or the peer acknowledged nothing of a
    /// non-empty Send-Q. A busy transfer makes progress, so it never counts
    /// as stuck however full its queues are.
    fn stalled_since(&self, before: &Queued) -> bool {
        let received = self.bytes_received.wrapping_sub(before.bytes_received) as i64;
        let growth = i64::from(self.recv_q) - i64::from(before.recv_q);
        let recv_stuck = self.recv_q > 0 && before.recv_q > 0 && received - growth <= 0;
        let send_stuck =
            self.send_q > 0 && before.send_q > 0 && self.bytes_acked == before.bytes_acked;
        recv_stuck || send_stuck
    }
}

#[cfg(test)]
fn socket_from(proto: Proto, response: &InetResponse) -> SocketSample {
    let header = &response.header;
    let id = &header.socket_id;
    let mut tcp = None;
    let mut drops = None;
    let mut rcvbuf = None;
    let mut v6only = false;
    for nla in &response.nlas {
        match nla {
            Nla::TcpInfo(info) => {
                tcp = Some(TcpInfoSample {
                    rtt_us: info.rtt,
                    rttvar_us: info.rttvar,
                    cwnd: info.snd_cwnd,
                    ssthresh: info.snd_ssthresh,
                    mss: info.snd_mss,
                    rto_us: info.rto,
                    retrans: info.retrans,
                    total_retrans: info.total_retrans,
                    bytes_acked: info.bytes_acked,
                    bytes_received: info.bytes_received,
                    last_send_ms: info.last_data_sent,
                    last_recv_ms: info.last_data_recv,
                    last_ack_ms: info.last_ack_recv,
                });
            }
            Nla::MemInfo(memory) => {
                drops = Some(memory.drops);
                rcvbuf = Some(memory.receive_queue_max);
            }
            Nla::SkV6Only(value) => v6only = *value,
            _ => {}
        }
    }
    SocketSample {
        proto,
        state: header.state,
        local: endpoint(id.source_address, id.source_port),
        peer: endpoint(id.destination_address, id.destination_port),
        recv_q: header.recv_queue,
        send_q: header.send_queue,
        uid: header.uid,
        inode: header.inode,
        users: Default::default(),
        owner_denied: false,
        owner_pending: false,
        tcp,
        drops,
        rcvbuf,
        queue_streak: 0,
        v6only,
        netns: 0,
        limits: None,
    }
}

#[cfg(test)]
fn endpoint(address: std::net::IpAddr, port: u16) -> std::net::SocketAddr {
    std::net::SocketAddr::new(address, port)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::net::{TcpListener, TcpStream};

    #[test]
    fn dump_finds_a_loopback_connection_with_its_queue() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        let mut client = TcpStream::connect(address).unwrap();
        let (server, _) = listener.accept().unwrap();
        std::io::Write::write_all(&mut client, &[7u8; 1000]).unwrap();
        // The server has not read: its Recv-Q holds the 1000 bytes.
        let mut diag = SockDiag::new().unwrap();
        let mut found = None;
        for _ in 0..50 {
            let dump = diag.dump().unwrap();
            found = dump
                .sockets
                .to_vec()
                .into_iter()
                .find(|s| s.local == address && s.peer == client.local_addr().unwrap());
            if found.as_ref().is_some_and(|s| s.recv_q == 1000) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let socket = found.expect("the accepted socket is in the dump");
        assert_eq!(socket.recv_q, 1000);
        assert_eq!(socket.as_socket().state_name(), "ESTAB");
        assert!(socket.tcp.is_some_and(|t| t.cwnd > 0));
        assert!(socket.inode != 0);
        let listening = diag.dump().unwrap();
        assert!(
            listening
                .sockets
                .iter()
                .any(|s| s.local == address && s.is_listener())
        );
        let mut buffer = [0u8; 1000];
        let mut server = server;
        server.read_exact(&mut buffer).unwrap();
        assert!(diag.unix_count().is_ok());
    }
}

#[cfg(test)]
mod oracle {
    use super::*;
    use std::net::{TcpListener, TcpStream};

    /// The direct reader agrees with netlink-packet-sock-diag's parser on
    /// every socket of a real dump (queues, addresses, tcp_info, drops).
    #[test]
    fn direct_reader_matches_the_crate_parser() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let _client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let _server = listener.accept().unwrap();
        let v6 = TcpListener::bind("[::1]:0").ok();
        let mut diag = SockDiag::new().unwrap();
        let mut compared = 0;
        for family in [AF_INET, AF_INET6] {
            let request = family_request(Proto::Tcp, IPPROTO_TCP, family);
            let _ = diag.run(request, |payload| {
                let crate_view = InetResponse::parse(payload).map(|r| socket_from(Proto::Tcp, &r));
                // The crate reads no busy time: the limits are compared
                // in inet_diag's own tests.
                let direct = inet_diag::parse(Proto::Tcp, payload).map(|mut s| {
                    s.limits = None;
                    s
                });
                assert_eq!(crate_view.ok(), direct);
                compared += 1;
            });
        }
        assert!(compared >= 3, "compared {compared}");
        drop(v6);
    }

    /// The one TCPDIAG_GETSOCK dump gives this process's TCP sockets as
    /// the two per-family SOCK_DIAG_BY_FAMILY dumps do: the same rows, in
    /// the same order, IPv4 before IPv6.
    #[test]
    fn one_tcp_dump_matches_the_two_per_family_dumps() {
        let v4 = TcpListener::bind("127.0.0.1:0").unwrap();
        let _v4_pair = (
            TcpStream::connect(v4.local_addr().unwrap()).unwrap(),
            v4.accept().unwrap(),
        );
        let v6 = TcpListener::bind("[::1]:0").ok();
        let _v6_pair = v6.as_ref().map(|l| {
            (
                TcpStream::connect(l.local_addr().unwrap()).unwrap(),
                l.accept().unwrap(),
            )
        });
        let ours: Vec<u16> = [Some(&v4), v6.as_ref()]
            .into_iter()
            .flatten()
            .map(|l| l.local_addr().unwrap().port())
            .collect();
        // Rows of this test's connections, without what changes between
        // two dumps (tcp_info's timers).
        let mine = |sockets: &[SocketSample]| -> Vec<SocketSample> {
            sockets
                .iter()
                .filter(|s| ours.contains(&s.local.port()) || ours.contains(&s.peer.port()))
                .map(|s| SocketSample {
                    tcp: None,
                    ..s.clone()
                })
                .collect()
        };
        let mut diag = SockDiag::new().unwrap();
        let mut one = SocketDump {
            sockets: SocketTable::from(Vec::new()),
            cookies: Vec::new(),
            states: [0; 11],
        };
        diag.dump_tcp(&mut one, &HashMap::new(), &mut HashMap::new())
            .unwrap();
        assert_eq!(one.sockets.len(), one.cookies.len());
        let mut two = Vec::new();
        for family in [AF_INET, AF_INET6] {
            let request = family_request(Proto::Tcp, IPPROTO_TCP, family);
            let _ = diag.run(request, |payload| {
                two.extend(inet_diag::parse(Proto::Tcp, payload));
            });
        }
        let expected = if v6.is_some() { 6 } else { 3 };
        let one_list = one.sockets.to_vec();
        assert_eq!(mine(&one_list).len(), expected);
        assert_eq!(mine(&one_list), mine(&two));
        let first_v6 = one.sockets.iter().position(|s| s.local.is_ipv6());
        let last_v4 = one.sockets.iter().rposition(|s| s.local.is_ipv4());
        assert!(first_v6.is_none_or(|v6| last_v4.is_none_or(|v4| v4 < v6)));
    }
}
