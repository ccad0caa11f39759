//! The live capture source: an AF_PACKET socket with a TPACKET_V3 mmap ring.
//!
//! Why a ring: with one recvfrom per packet, capture costs two syscalls per
//! packet (~60% of a core at 300k pps on lo); with TPACKET_V3 the kernel
//! fills whole blocks of packets in shared memory and wakes us once per
//! block (or per 100 ms timeout), as libpcap does for tcpdump.
//!
//! - One interface: SOCK_RAW bound to it; Ethernet (and lo) frames are
//!   stored as they are (LINKTYPE_ETHERNET). Other link types are captured
//!   cooked.
//! - All interfaces ("any"): SOCK_DGRAM bound to none; each packet gets a
//!   Linux cooked (SLL, LINKTYPE_LINUX_SLL) header built from the ring's
//!   sockaddr_ll, as `tcpdump -i any` files have.
//! - On a loopback device every packet is seen twice, once leaving and once
//!   arriving: the PACKET_OUTGOING copy is skipped, as libpcap does.
//! - The snap length is enforced in the kernel with a one-instruction
//!   classic BPF program (`ret #snaplen`), so only that much is copied;
//!   the live view swaps in a sampling program (`capture::sampling`)
//!   while the kernel counts the flows.
//! - PACKET_STATISTICS gives what the kernel saw and dropped; reading it
//!   resets it, so the counts are accumulated here.

use super::sampling;
use crate::packet::decode::linktype;
use crate::packet::format::Timestamp;
use anyhow::{Result, anyhow};
use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// Default bytes kept per packet. Headers need at most Ethernet + VLAN (18),
/// IPv6 with a few extension headers (~80) and TCP with every option (60):
/// about 160. The rest leaves room for what the line printer decodes from
/// payloads: DNS questions and short answers (passive DNS needs the names),
/// ICMP errors quoting the offending header. Payloads are opt-in
/// (`--payload`), like `tcpdump -s 0`.
pub const DEFAULT_SNAPLEN: u32 = 384;
/// Snap length with `--payload`: whole packets up to 64 KiB.
pub const PAYLOAD_SNAPLEN: u32 = 65_535;

/// Ring geometry: 8 blocks, each handed to us when full or after 100 ms.
/// The blocks are 512 KiB (4 MiB, twice tcpdump's default buffer) for a
/// capture that keeps every packet; the live view's sampled capture starts
/// at 64 KiB (512 KiB) and follows its rate (`buffer_for`).
const BLOCK_COUNT: u32 = 8;
/// The largest ring, and the one `netlens capture` uses.
pub const BUFFER_MOST: u32 = BLOCK_COUNT << 19;
/// The smallest ring.
pub const BUFFER_LEAST: u32 = BLOCK_COUNT << 16;
/// Seconds of the bytes the ring carries that its buffer holds: the time
/// the capture thread may be kept from running on a busy box.
const BUFFER_SECONDS: u64 = 1;
const FRAME_SIZE: u32 = 2048;
/// The kernel hands over a block at the latest this long after its first
/// packet: a packet captured earlier than that before a drain was drained.
pub const BLOCK_TIMEOUT_MS: u32 = 100;

/// The offsets of the fields read from the ring (linux/if_packet.h).
const BLOCK_STATUS: usize = 8;
const BLOCK_NUM_PKTS: usize = 12;
const BLOCK_LEN: usize = 20;
const BLOCK_FIRST: usize = 16;
const HDR_NEXT: usize = 0;
const HDR_SEC: usize = 4;
const HDR_NSEC: usize = 8;
const HDR_SNAPLEN: usize = 12;
const HDR_LEN: usize = 16;
const HDR_MAC: usize = 24;
/// sockaddr_ll follows the 48-byte tpacket3_hdr (already 16-aligned).
const SLL_AT: usize = 48;

/// Where to capture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RingOptions {
    /// An interface name, or None for every interface.
    pub iface: Option<String>,
    pub snaplen: u32,
    /// The ring's bytes (BUFFER_LEAST to BUFFER_MOST).
    pub buffer: u32,
}

impl RingOptions {
    /// `--iface` value: "any" (or nothing) means every interface.
    pub fn new(iface: Option<&str>, payload: bool) -> Self {
        Self {
            iface: iface.filter(|i| *i != "any").map(str::to_string),
            snaplen: if payload {
                PAYLOAD_SNAPLEN
            } else {
                DEFAULT_SNAPLEN
            },
            buffer: BUFFER_MOST,
        }
    }

    pub fn label(&self) -> &str {
        self.iface.as_deref().unwrap_or("any")
    }
}

/// Kernel counts since the ring opened.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RingStats {
    /// Packets the socket received (before the snap length; includes drops).
    pub received: u64,
    /// Packets the kernel dropped because the ring was full.
    pub dropped: u64,
}

/// One captured packet, borrowed from the ring (or from a scratch buffer for
/// cooked headers) until the callback returns.
pub struct Packet<'a> {
    pub ts: Timestamp,
    pub data: &'a [u8],
    pub orig_len: u32,
    /// The interface it crossed (sockaddr_ll's ifindex): a cooked capture's
    /// SLL header does not carry it.
    pub ifindex: u32,
}

/// An eventfd that ends a `Ring::wait_or_woken` early (stop, a new
/// filter), so the wait needs no short timeout to notice them.
pub struct Wake(OwnedFd);

impl Wake {
    pub fn new() -> Result<Self> {
        // SAFETY: eventfd(2) with no pointers; a new fd is ours to own.
        let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        if fd < 0 {
            return Err(anyhow!("eventfd: {}", std::io::Error::last_os_error()));
        }
        // SAFETY: fd was just created and is owned by nobody else.
        Ok(Self(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    pub fn wake(&self) {
        let one = 1u64.to_ne_bytes();
        // SAFETY: writes 8 bytes from `one` to our eventfd.
        unsafe { libc::write(self.0.as_raw_fd(), one.as_ptr().cast(), 8) };
    }

    fn clear(&self) {
        let mut count = [0u8; 8];
        // SAFETY: reads at most 8 bytes into `count` (non-blocking).
        unsafe { libc::read(self.0.as_raw_fd(), count.as_mut_ptr().cast(), 8) };
    }
}

/// The open ring. Unmapped and closed on drop.
pub struct Ring {
    fd: OwnedFd,
    map: *mut u8,
    map_len: usize,
    block_size: u32,
    block: u32,
    /// Bytes of the blocks handed to us since the ring opened.
    carried: u64,
    cooked: bool,
    linktype: u32,
    snaplen: u32,
    /// One packet in this many of those not always kept reaches the ring.
    every: u32,
    stats: RingStats,
    scratch: Vec<u8>,
}

// SAFETY: the mapping is owned by this value and only touched through &mut.
unsafe impl Send for Ring {}

/// A clear message for the error that stops a capture from opening.
pub fn permission_message() -> String {
    "capture needs CAP_NET_RAW: run as root, or grant it once with \
     `sudo setcap cap_net_raw,cap_net_admin+ep $(which netlens)`"
        .to_string()
}

fn os_error(what: &str) -> anyhow::Error {
    let error = std::io::Error::last_os_error();
    if matches!(error.raw_os_error(), Some(libc::EPERM | libc::EACCES)) {
        return anyhow!("{}", permission_message());
    }
    anyhow!("{what}: {error}")
}

fn setsockopt<T>(fd: i32, level: i32, name: i32, value: &T, what: &str) -> Result<()> {
    // SAFETY: value points to a live T of the size passed.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            (value as *const T).cast(),
            std::mem::size_of::<T>() as libc::socklen_t,
        )
    };
    if rc != 0 {
        return Err(os_error(what));
    }
    Ok(())
}

/// Puts a classic BPF program on the socket (replacing the one before).
fn attach_filter(fd: i32, program: &[libc::sock_filter]) -> Result<()> {
    let fprog = libc::sock_fprog {
        len: u16::try_from(program.len()).map_err(|_| anyhow!("filter too long"))?,
        filter: program.as_ptr().cast_mut(),
    };
    setsockopt(
        fd,
        libc::SOL_SOCKET,
        libc::SO_ATTACH_FILTER,
        &fprog,
        "cannot set the capture's socket filter",
    )
}

/// The interface index for a name in the current namespace, or a one-line
/// error naming it.
pub fn ifindex(name: &str, netns: &str) -> Result<(i32, u16)> {
    let c = CString::new(name).map_err(|_| anyhow!("bad interface name {name:?}"))?;
    // SAFETY: a valid C string.
    let index = unsafe { libc::if_nametoindex(c.as_ptr()) };
    if index == 0 {
        return Err(anyhow!(
            "no interface '{name}' in network namespace {netns} (see `ip link`)"
        ));
    }
    let hatype = std::fs::read_to_string(format!("/sys/class/net/{name}/type"))
        .ok()
        .and_then(|t| t.trim().parse::<u16>().ok())
        .unwrap_or(libc::ARPHRD_ETHER);
    Ok((index as i32, hatype))
}

pub use crate::collect::link::interface_name;

impl Ring {
    /// Opens the ring on the calling thread's network namespace; `netns`
    /// only names it in errors.
    pub fn open(options: &RingOptions, netns: &str) -> Result<Self> {
        let (index, hatype) = match &options.iface {
            Some(name) => ifindex(name, netns)?,
            None => (0, 0),
        };
        let cooked =
            index == 0 || !(hatype == libc::ARPHRD_ETHER || hatype == libc::ARPHRD_LOOPBACK);
        let kind = if cooked {
            libc::SOCK_DGRAM
        } else {
            libc::SOCK_RAW
        };
        let protocol = (libc::ETH_P_ALL as u16).to_be();
        // SAFETY: plain socket(2).
        let raw =
            unsafe { libc::socket(libc::AF_PACKET, kind | libc::SOCK_CLOEXEC, protocol.into()) };
        if raw < 0 {
            return Err(os_error("cannot open a packet socket"));
        }
        // SAFETY: raw is a fresh descriptor we own.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let s = fd.as_raw_fd();
        // Truncate in the kernel: `ret #snaplen`.
        attach_filter(s, &sampling::program(0, options.snaplen, 1))?;
        let version: libc::c_int = libc::tpacket_versions::TPACKET_V3 as libc::c_int;
        setsockopt(
            s,
            libc::SOL_PACKET,
            libc::PACKET_VERSION,
            &version,
            "TPACKET_V3 is not supported",
        )?;
        let block_size = block_size_for(options.buffer);
        let map = map_ring(s, block_size)?;
        let ring = Self {
            fd,
            map,
            map_len: (block_size * BLOCK_COUNT) as usize,
            block_size,
            block: 0,
            carried: 0,
            cooked,
            linktype: if cooked {
                linktype::SLL
            } else {
                linktype::ETHERNET
            },
            snaplen: options.snaplen,
            every: 1,
            stats: RingStats::default(),
            scratch: Vec::with_capacity(options.snaplen as usize + 16),
        };
        // SAFETY: a zeroed sockaddr_ll with the fields bind(2) reads.
        let mut addr: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        addr.sll_family = libc::AF_PACKET as u16;
        addr.sll_protocol = protocol;
        addr.sll_ifindex = index;
        // SAFETY: addr is a valid sockaddr_ll.
        let rc = unsafe {
            libc::bind(
                s,
                (&addr as *const libc::sockaddr_ll).cast(),
                std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
            )
        };
        if rc != 0 {
            return Err(os_error(&format!(
                "cannot bind the capture to {}",
                options.label()
            )));
        }
        Ok(ring)
    }

    /// The ring's bytes now.
    pub fn buffer(&self) -> u32 {
        self.block_size * BLOCK_COUNT
    }

    /// Bytes of the blocks handed over since the ring opened: packets,
    /// their headers and padding, as they filled the ring.
    pub fn carried(&self) -> u64 {
        self.carried
    }

    /// Gives the ring `buffer` bytes (rounded as `buffer_for` rounds).
    /// Call it right after a drain: packets in blocks not drained yet, and
    /// those arriving while the kernel swaps the rings (a few
    /// milliseconds), are lost; the first are counted as dropped.
    pub fn set_buffer(&mut self, buffer: u32) -> Result<()> {
        let block_size = block_size_for(buffer);
        if block_size == self.block_size {
            return Ok(());
        }
        let left: u64 = (0..BLOCK_COUNT)
            .filter(|&block| self.block_ready(block))
            .map(|block| u64::from(self.block_u32(block, BLOCK_NUM_PKTS)))
            .sum();
        // SAFETY: unmaps exactly what was mapped; a ring can only be
        // replaced once it is unmapped.
        unsafe { libc::munmap(self.map.cast(), self.map_len) };
        self.map = std::ptr::null_mut();
        let fd = self.fd.as_raw_fd();
        // A ring is replaced in two steps: freed, then set. Should the new
        // one fail, the old size is tried again.
        // SAFETY: an all-zero request is valid: it frees the ring.
        let none: libc::tpacket_req3 = unsafe { std::mem::zeroed() };
        setsockopt(
            fd,
            libc::SOL_PACKET,
            libc::PACKET_RX_RING,
            &none,
            "cannot free the capture ring",
        )?;
        let (map, block_size) = match map_ring(fd, block_size) {
            Ok(map) => (map, block_size),
            Err(error) => (
                map_ring(fd, self.block_size).map_err(|_| error)?,
                self.block_size,
            ),
        };
        self.map = map;
        self.map_len = (block_size * BLOCK_COUNT) as usize;
        self.block_size = block_size;
        self.block = 0;
        self.stats.dropped += left;
        Ok(())
    }

    /// The pcap link type of the packets this ring yields.
    pub fn linktype(&self) -> u32 {
        self.linktype
    }

    pub fn snaplen(&self) -> u32 {
        self.snaplen
    }

    /// Samples from now on: control packets and one in `every` of the rest
    /// (`capture::sampling`); 1 keeps every packet.
    pub fn set_sample_every(&mut self, every: u32) -> Result<()> {
        let every = every.clamp(1, sampling::MOST);
        if every != self.every {
            // The link header is in the data on a raw socket only.
            let net = if self.cooked { 0 } else { 14 };
            let program = sampling::program(net, self.snaplen, every);
            attach_filter(self.fd.as_raw_fd(), &program)?;
            self.every = every;
        }
        Ok(())
    }

    /// See `set_sample_every`.
    pub fn sample_every(&self) -> u32 {
        self.every
    }

    /// The most bytes one packet this ring yields can hold: the snap length,
    /// plus the 16-byte Linux cooked header a cooked ring puts in front (a
    /// pcap's snap length must cover it, or readers reject the records).
    pub fn longest_packet(&self) -> u32 {
        self.snaplen + if self.cooked { 16 } else { 0 }
    }

    /// Waits up to `timeout_ms` for a block, then hands every packet of
    /// every ready block to `each`. Returns the number of packets handed.
    pub fn poll(&mut self, timeout_ms: i32, each: impl FnMut(&Packet)) -> Result<usize> {
        self.wait(timeout_ms)?;
        Ok(self.drain(each))
    }

    /// Waits up to `timeout_ms` until a block is ready. An interrupted wait
    /// (a signal) returns early without error.
    pub fn wait(&mut self, timeout_ms: i32) -> Result<()> {
        self.wait_or_woken(timeout_ms, None)
    }

    /// As `wait`, returning also when `wake` is woken (and clearing it).
    pub fn wait_or_woken(&mut self, timeout_ms: i32, wake: Option<&Wake>) -> Result<()> {
        if self.block_ready(self.block) {
            return Ok(());
        }
        let pfd = |fd: libc::c_int| libc::pollfd {
            fd,
            events: libc::POLLIN | libc::POLLERR,
            revents: 0,
        };
        let mut pfds = [pfd(self.fd.as_raw_fd()), pfd(-1)];
        if let Some(wake) = wake {
            pfds[1].fd = wake.0.as_raw_fd();
        }
        // SAFETY: two valid pollfds (a negative fd is ignored).
        let rc = unsafe { libc::poll(pfds.as_mut_ptr(), 2, timeout_ms) };
        if rc < 0 {
            let error = std::io::Error::last_os_error();
            if error.kind() == std::io::ErrorKind::Interrupted {
                return Ok(());
            }
            return Err(anyhow!("capture poll failed: {error}"));
        }
        if let Some(wake) = wake.filter(|_| pfds[1].revents != 0) {
            wake.clear();
        }
        if pfds[0].revents & libc::POLLERR != 0 {
            // The interface went away or the socket has a pending error.
            let mut err: libc::c_int = 0;
            let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
            // SAFETY: reads SO_ERROR into err.
            unsafe {
                libc::getsockopt(
                    self.fd.as_raw_fd(),
                    libc::SOL_SOCKET,
                    libc::SO_ERROR,
                    (&mut err as *mut libc::c_int).cast(),
                    &mut len,
                )
            };
            if err == libc::ENETDOWN {
                return Err(anyhow!("the capture interface went down"));
            }
            if err != 0 {
                return Err(anyhow!(
                    "capture failed: {}",
                    std::io::Error::from_raw_os_error(err)
                ));
            }
        }
        Ok(())
    }

    /// Hands every packet of every ready block to `each`, without waiting.
    pub fn drain(&mut self, mut each: impl FnMut(&Packet)) -> usize {
        let mut handed = 0;
        let mut visited = 0;
        while self.block_ready(self.block) && visited < BLOCK_COUNT {
            self.carried += u64::from(self.block_u32(self.block, BLOCK_LEN));
            handed += self.walk_block(self.block, &mut each);
            self.release(self.block);
            self.block = (self.block + 1) % BLOCK_COUNT;
            visited += 1;
        }
        handed
    }

    fn block_ptr(&self, block: u32) -> *mut u8 {
        // SAFETY: block < BLOCK_COUNT, inside the mapping.
        unsafe { self.map.add((block * self.block_size) as usize) }
    }

    /// A field of a ready block's header (ours until released).
    fn block_u32(&self, block: u32, at: usize) -> u32 {
        // SAFETY: the header's fields lie in the block's first 48 bytes.
        unsafe { std::ptr::read_unaligned(self.block_ptr(block).add(at).cast::<u32>()) }
    }

    fn block_ready(&self, block: u32) -> bool {
        if self.map.is_null() {
            // A failed `set_buffer` left no ring.
            return false;
        }
        let status = self
            .block_ptr(block)
            .wrapping_add(BLOCK_STATUS)
            .cast::<u32>();
        // SAFETY: an aligned u32 the kernel writes; read with acquire order.
        let value = unsafe { std::ptr::read_volatile(status) };
        std::sync::atomic::fence(std::sync::atomic::Ordering::Acquire);
        value & libc::TP_STATUS_USER != 0
    }

    fn release(&self, block: u32) {
        std::sync::atomic::fence(std::sync::atomic::Ordering::Release);
        let status = self
            .block_ptr(block)
            .wrapping_add(BLOCK_STATUS)
            .cast::<u32>();
        // SAFETY: hands the block back to the kernel.
        unsafe { std::ptr::write_volatile(status, libc::TP_STATUS_KERNEL) };
    }

    fn walk_block(&mut self, block: u32, each: &mut impl FnMut(&Packet)) -> usize {
        let base = self.block_ptr(block);
        let limit = self.block_size as usize;
        // SAFETY: every read below stays inside this block (checked against
        // `limit`), which the kernel handed to us and does not touch until
        // it is released.
        let block_bytes = unsafe { std::slice::from_raw_parts(base as *const u8, limit) };
        let rd = |at: usize| -> Option<u32> {
            block_bytes
                .get(at..at + 4)
                .map(|b| u32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
        };
        let count = rd(BLOCK_NUM_PKTS).unwrap_or(0);
        let mut at = rd(BLOCK_FIRST).unwrap_or(0) as usize;
        let mut handed = 0;
        for _ in 0..count {
            let (Some(next), Some(sec), Some(nsec), Some(snap), Some(len)) = (
                rd(at + HDR_NEXT),
                rd(at + HDR_SEC),
                rd(at + HDR_NSEC),
                rd(at + HDR_SNAPLEN),
                rd(at + HDR_LEN),
            ) else {
                break;
            };
            let mac = block_bytes
                .get(at + HDR_MAC..at + HDR_MAC + 2)
                .map_or(0, |b| u16::from_ne_bytes([b[0], b[1]])) as usize;
            let Some(sll) = block_bytes.get(at + SLL_AT..at + SLL_AT + 20) else {
                break;
            };
            let ifindex = u32::from_ne_bytes([sll[4], sll[5], sll[6], sll[7]]);
            let hatype = u16::from_ne_bytes([sll[8], sll[9]]);
            let pkttype = sll[10];
            let start = at + mac;
            let Some(data) = block_bytes.get(start..start + snap as usize) else {
                break;
            };
            // lo delivers each packet twice; keep the incoming copy.
            let duplicate = hatype == libc::ARPHRD_LOOPBACK && pkttype == libc::PACKET_OUTGOING;
            if !duplicate {
                let ts = Timestamp {
                    sec: i64::from(sec),
                    frac: nsec,
                    nanos: true,
                };
                if self.cooked {
                    // struct sll_header: pkttype, hatype, halen, addr[8], protocol.
                    self.scratch.clear();
                    self.scratch
                        .extend_from_slice(&u16::from(pkttype).to_be_bytes());
                    self.scratch.extend_from_slice(&hatype.to_be_bytes());
                    let halen = sll[11].min(8);
                    self.scratch
                        .extend_from_slice(&u16::from(halen).to_be_bytes());
                    let mut addr = [0u8; 8];
                    addr[..usize::from(halen)].copy_from_slice(&sll[12..12 + usize::from(halen)]);
                    self.scratch.extend_from_slice(&addr);
                    self.scratch.extend_from_slice(&sll[2..4]);
                    self.scratch.extend_from_slice(data);
                    each(&Packet {
                        ts,
                        data: &self.scratch,
                        orig_len: len + 16,
                        ifindex,
                    });
                } else {
                    each(&Packet {
                        ts,
                        data,
                        orig_len: len,
                        ifindex,
                    });
                }
                handed += 1;
            }
            if next == 0 {
                break;
            }
            at += next as usize;
        }
        handed
    }

    /// Kernel counts since the ring opened (the kernel resets on read; this
    /// accumulates).
    pub fn stats(&mut self) -> RingStats {
        let mut raw = libc::tpacket_stats_v3 {
            tp_packets: 0,
            tp_drops: 0,
            tp_freeze_q_cnt: 0,
        };
        let mut len = std::mem::size_of::<libc::tpacket_stats_v3>() as libc::socklen_t;
        // SAFETY: reads into raw, whose size is passed.
        let rc = unsafe {
            libc::getsockopt(
                self.fd.as_raw_fd(),
                libc::SOL_PACKET,
                libc::PACKET_STATISTICS,
                (&mut raw as *mut libc::tpacket_stats_v3).cast(),
                &mut len,
            )
        };
        if rc == 0 {
            self.stats.received += u64::from(raw.tp_packets);
            self.stats.dropped += u64::from(raw.tp_drops);
        }
        self.stats
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        if !self.map.is_null() {
            // SAFETY: unmaps exactly what was mapped; the fd closes after.
            unsafe { libc::munmap(self.map.cast(), self.map_len) };
        }
    }
}

/// The ring's bytes for a capture that carried `bytes_per_second`: what
/// the ring carries in BUFFER_SECONDS, as a power of two from BUFFER_LEAST
/// to BUFFER_MOST.
pub fn buffer_for(bytes_per_second: u64) -> u32 {
    let wanted = bytes_per_second.saturating_mul(BUFFER_SECONDS);
    let wanted = u32::try_from(wanted).unwrap_or(u32::MAX);
    wanted
        .checked_next_power_of_two()
        .unwrap_or(BUFFER_MOST)
        .clamp(BUFFER_LEAST, BUFFER_MOST)
}

fn block_size_for(buffer: u32) -> u32 {
    buffer_for(u64::from(buffer)) / BLOCK_COUNT
}

/// Sets up a ring of BLOCK_COUNT blocks of `block_size` on packet socket
/// `fd` and maps it.
fn map_ring(fd: i32, block_size: u32) -> Result<*mut u8> {
    let req = libc::tpacket_req3 {
        tp_block_size: block_size,
        tp_block_nr: BLOCK_COUNT,
        tp_frame_size: FRAME_SIZE,
        tp_frame_nr: block_size / FRAME_SIZE * BLOCK_COUNT,
        tp_retire_blk_tov: BLOCK_TIMEOUT_MS,
        tp_sizeof_priv: 0,
        tp_feature_req_word: 0,
    };
    setsockopt(
        fd,
        libc::SOL_PACKET,
        libc::PACKET_RX_RING,
        &req,
        "cannot set up the capture ring",
    )?;
    let map_len = (block_size * BLOCK_COUNT) as usize;
    let map_with = |flags: libc::c_int| {
        // SAFETY: maps the ring the kernel just allocated for this socket.
        unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                flags,
                fd,
                0,
            )
        }
    };
    let mut map = map_with(libc::MAP_SHARED | libc::MAP_LOCKED);
    if map == libc::MAP_FAILED {
        // MAP_LOCKED fails under a small RLIMIT_MEMLOCK; unlocked is fine.
        map = map_with(libc::MAP_SHARED);
    }
    if map == libc::MAP_FAILED {
        return Err(os_error("cannot map the capture ring"));
    }
    Ok(map.cast())
}
