//! The raw sockets a trace needs: one to send whole IP packets (IP_HDRINCL,
//! so each probe sets its own TTL and source port), one to read ICMP and,
//! for TCP probes, one to read the destination's SYN-ACK or RST. All need
//! CAP_NET_RAW.

use anyhow::{Result, bail};
use std::io;
use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

/// A raw IPv4 socket.
pub struct RawSocket {
    fd: OwnedFd,
}

/// The one line a missing capability gets.
pub const NEEDS_CAP_NET_RAW: &str = "netlens trace needs CAP_NET_RAW to open raw sockets: run it as root or grant the capability (setcap cap_net_raw+ep $(command -v netlens))";

impl RawSocket {
    /// IPPROTO_RAW: sending only, IP header included.
    pub fn sender() -> Result<RawSocket> {
        Self::open(libc::IPPROTO_RAW)
    }

    /// Reading every packet of `protocol` that arrives (IP header first).
    pub fn receiver(protocol: u8) -> Result<RawSocket> {
        Self::open(i32::from(protocol))
    }

    fn open(protocol: i32) -> Result<RawSocket> {
        // SAFETY: plain socket(2); the descriptor is owned right away.
        let fd = unsafe {
            libc::socket(
                libc::AF_INET,
                libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                protocol,
            )
        };
        if fd < 0 {
            let error = io::Error::last_os_error();
            if matches!(error.raw_os_error(), Some(libc::EPERM | libc::EACCES)) {
                bail!(NEEDS_CAP_NET_RAW);
            }
            bail!("cannot open a raw socket: {error}");
        }
        // SAFETY: fd was just returned by socket(2) and is owned by no one.
        Ok(RawSocket {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }

    /// Sends a whole IP packet to `dst`.
    pub fn send_to(&self, packet: &[u8], dst: Ipv4Addr) -> io::Result<()> {
        let addr = sockaddr(dst);
        // SAFETY: the buffer and the address live across the call, with
        // their true lengths.
        let rc = unsafe {
            libc::sendto(
                self.fd.as_raw_fd(),
                packet.as_ptr().cast(),
                packet.len(),
                0,
                (&raw const addr).cast(),
                std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
            )
        };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// One waiting packet, or None when none is.
    pub fn recv<'a>(&self, buffer: &'a mut [u8]) -> Option<&'a [u8]> {
        // SAFETY: reads at most buffer.len() bytes into the buffer.
        let n = unsafe {
            libc::recv(
                self.fd.as_raw_fd(),
                buffer.as_mut_ptr().cast(),
                buffer.len(),
                0,
            )
        };
        (n >= 0).then(|| &buffer[..n as usize])
    }
}

/// `dst` as the C library takes it (port 0).
pub fn sockaddr(dst: Ipv4Addr) -> libc::sockaddr_in {
    libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: 0,
        sin_addr: libc::in_addr {
            s_addr: u32::from_ne_bytes(dst.octets()),
        },
        sin_zero: [0; 8],
    }
}

/// Waits until one of `sockets` is readable or `timeout` passes.
pub fn wait_readable(sockets: &[&RawSocket], timeout: Duration) {
    let mut fds: Vec<libc::pollfd> = sockets
        .iter()
        .map(|s| libc::pollfd {
            fd: s.fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    let millis = timeout.as_millis().clamp(0, 1000) as i32;
    // SAFETY: fds is a valid array of fds.len() pollfd structs.
    unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, millis) };
}

/// The source address the kernel would use towards `dst`: a connected UDP
/// socket sends nothing but picks the route and address.
pub fn source_for(dst: Ipv4Addr, port: u16) -> Result<Ipv4Addr> {
    let socket = UdpSocket::bind("0.0.0.0:0")?;
    if let Err(error) = socket.connect((dst, port.max(1))) {
        bail!("no route to {dst}: {error}");
    }
    match socket.local_addr()? {
        SocketAddr::V4(local) => Ok(*local.ip()),
        SocketAddr::V6(_) => bail!("no IPv4 source address towards {dst}"),
    }
}
