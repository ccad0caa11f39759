//! Destroying one TCP socket, as `ss -K` does: a SOCK_DESTROY request over
//! sock_diag naming the socket by its addresses and ports. The kernel aborts
//! it (the owner's next call fails with ECONNABORTED) and sends the peer a
//! reset. It needs CONFIG_INET_DIAG_DESTROY and CAP_NET_ADMIN in the
//! socket's network namespace.

use crate::model::sockets::{Proto, SocketSample};
use netlink_sys::{Socket, SocketAddr, protocols::NETLINK_SOCK_DIAG};
use std::fs::File;
use std::net::IpAddr;

const SOCK_DESTROY: u16 = 21;
const NLMSG_ERROR: u16 = 2;
const NLM_F_REQUEST: u16 = 1;
const NLM_F_ACK: u16 = 4;
const NLMSG_HDR_LEN: usize = 16;
/// struct inet_diag_req_v2: family, protocol, ext, pad, states, then the
/// 48-byte inet_diag_sockid.
const REQUEST_LEN: usize = 56;
/// INET_DIAG_NOCOOKIE: match by the addresses and ports alone.
const NO_COOKIE: u32 = !0;

/// Destroys `socket` in the namespace `netns` (None: this process's own).
/// The error is one line that says why, in words an operator can act on.
pub fn destroy(socket: &SocketSample, netns: Option<&File>) -> Result<(), String> {
    if socket.proto != Proto::Tcp {
        return Err("only TCP sockets can be killed (ss -K)".into());
    }
    let request = request(socket);
    // setns changes the calling thread only: a short-lived thread does it,
    // so the UI thread stays in its own namespace.
    let netns = match netns {
        Some(file) => Some(
            file.try_clone()
                .map_err(|e| format!("cannot use the namespace: {e}"))?,
        ),
        None => None,
    };
    std::thread::Builder::new()
        .name("sock-destroy".into())
        .spawn(move || {
            if let Some(file) = &netns {
                crate::collect::netns::enter(file, "the watched namespace")
                    .map_err(|e| format!("{e:#}"))?;
            }
            send(&request)
        })
        .map_err(|e| format!("cannot start a thread: {e}"))?
        .join()
        .map_err(|_| "the destroy thread panicked".to_string())?
}

/// The netlink message: header and inet_diag_req_v2 for this socket.
fn request(socket: &SocketSample) -> Vec<u8> {
    let mut message = Vec::with_capacity(NLMSG_HDR_LEN + REQUEST_LEN);
    message.extend_from_slice(&((NLMSG_HDR_LEN + REQUEST_LEN) as u32).to_ne_bytes());
    message.extend_from_slice(&SOCK_DESTROY.to_ne_bytes());
    message.extend_from_slice(&(NLM_F_REQUEST | NLM_F_ACK).to_ne_bytes());
    message.extend_from_slice(&1u32.to_ne_bytes()); // sequence
    message.extend_from_slice(&0u32.to_ne_bytes()); // port id: the kernel's
    let family = match socket.local.ip() {
        IpAddr::V4(_) => libc::AF_INET as u8,
        IpAddr::V6(_) => libc::AF_INET6 as u8,
    };
    message.extend_from_slice(&[family, libc::IPPROTO_TCP as u8, 0, 0]);
    message.extend_from_slice(&u32::MAX.to_ne_bytes()); // every state
    message.extend_from_slice(&socket.local.port().to_be_bytes());
    message.extend_from_slice(&socket.peer.port().to_be_bytes());
    message.extend_from_slice(&address_bytes(socket.local.ip()));
    message.extend_from_slice(&address_bytes(socket.peer.ip()));
    message.extend_from_slice(&0u32.to_ne_bytes()); // any interface
    message.extend_from_slice(&NO_COOKIE.to_ne_bytes());
    message.extend_from_slice(&NO_COOKIE.to_ne_bytes());
    message
}

/// An address as inet_diag_sockid holds it: 16 bytes, IPv4 in the first 4.
fn address_bytes(ip: IpAddr) -> [u8; 16] {
    let mut bytes = [0u8; 16];
    match ip {
        IpAddr::V4(v4) => bytes[..4].copy_from_slice(&v4.octets()),
        IpAddr::V6(v6) => bytes = v6.octets(),
    }
    bytes
}

/// Sends the request and reads the kernel's acknowledgement.
fn send(request: &[u8]) -> Result<(), String> {
    let mut socket = Socket::new(NETLINK_SOCK_DIAG)
        .map_err(|e| format!("cannot open a sock_diag socket: {e}"))?;
    socket
        .bind_auto()
        .map_err(|e| format!("cannot bind the sock_diag socket: {e}"))?;
    socket
        .connect(&SocketAddr::new(0, 0))
        .map_err(|e| format!("cannot connect the sock_diag socket: {e}"))?;
    socket
        .send(request, 0)
        .map_err(|e| format!("cannot send SOCK_DESTROY: {e}"))?;
    let mut reply = vec![0u8; 4096];
    let length = socket
        .recv(&mut &mut reply[..], 0)
        .map_err(|e| format!("no answer to SOCK_DESTROY: {e}"))?;
    match ack_errno(&reply[..length.min(reply.len())]) {
        Some(0) => Ok(()),
        Some(errno) => Err(explain(errno)),
        None => Err("the kernel's answer to SOCK_DESTROY was not an acknowledgement".into()),
    }
}

/// The errno of an NLMSG_ERROR acknowledgement (0: success).
fn ack_errno(reply: &[u8]) -> Option<i32> {
    let kind = u16::from_ne_bytes(reply.get(4..6)?.try_into().ok()?);
    if kind != NLMSG_ERROR {
        return None;
    }
    let error = i32::from_ne_bytes(reply.get(16..20)?.try_into().ok()?);
    Some(-error)
}

/// Why the kernel refused, in one line.
pub fn explain(errno: i32) -> String {
    match errno {
        libc::EOPNOTSUPP => "this kernel cannot destroy sockets \
             (it lacks CONFIG_INET_DIAG_DESTROY; ss -K fails the same way)"
            .into(),
        libc::EPERM | libc::EACCES => {
            "permission denied: killing a socket needs CAP_NET_ADMIN (run as root)".into()
        }
        libc::ENOENT => "the socket is gone (already closed)".into(),
        _ => format!(
            "the kernel refused: {}",
            std::io::Error::from_raw_os_error(errno)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::SocketAddr as Addr;

    fn tcp(local: &str, peer: &str) -> SocketSample {
        SocketSample {
            proto: Proto::Tcp,
            state: 1,
            local: local.parse::<Addr>().unwrap(),
            peer: peer.parse::<Addr>().unwrap(),
            recv_q: 0,
            send_q: 0,
            uid: 0,
            inode: 0,
            users: Default::default(),
            owner_denied: false,
            tcp: None,
            drops: None,
            rcvbuf: None,
            queue_streak: 0,
            v6only: false,
            netns: 0,
        }
    }

    /// The layout of linux/inet_diag.h: ports big-endian, addresses in the
    /// first bytes of 16, no cookie.
    #[test]
    fn the_request_names_the_socket_as_inet_diag_wants() {
        let message = request(&tcp("198.18.0.1:5201", "198.18.0.2:40001"));
        assert_eq!(message.len(), 72);
        assert_eq!(u16::from_ne_bytes([message[4], message[5]]), SOCK_DESTROY);
        let body = &message[16..];
        assert_eq!(body[0], libc::AF_INET as u8);
        assert_eq!(body[1], libc::IPPROTO_TCP as u8);
        assert_eq!(&body[8..10], &5201u16.to_be_bytes());
        assert_eq!(&body[10..12], &40001u16.to_be_bytes());
        assert_eq!(&body[12..16], &[198, 18, 0, 1]);
        assert_eq!(&body[28..32], &[198, 18, 0, 2]);
        assert_eq!(&body[48..56], &[0xff; 8]);
        let v6 = request(&tcp("[2001:db8::1]:80", "[2001:db8::2]:9"));
        assert_eq!(v6[16], libc::AF_INET6 as u8);
    }

    #[test]
    fn udp_is_refused_and_errors_are_one_line() {
        let error = destroy(
            &SocketSample {
                proto: Proto::Udp,
                ..tcp("198.18.0.1:53", "0.0.0.0:0")
            },
            None,
        )
        .unwrap_err();
        assert!(error.contains("only TCP"), "{error}");
        assert!(explain(libc::EOPNOTSUPP).contains("CONFIG_INET_DIAG_DESTROY"));
        assert!(explain(libc::EPERM).contains("CAP_NET_ADMIN"));
        assert!(!explain(libc::EINVAL).contains('\n'));
    }
}
