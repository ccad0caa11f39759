//! Destroying one TCP socket, as `ss -K` does: a SOCK_DESTROY request over
//! sock_diag naming the socket by its addresses and ports. The kernel aborts
//! it (the owner's next call fails with ECONNABORTED) and sends the peer a
//! reset. It needs CONFIG_INET_DIAG_DESTROY and CAP_NET_ADMIN in the
//! socket's network namespace.
//!
//! CAP_NET_ADMIN lets its holder destroy any socket, so a netlens given it
//! by file capabilities (`setcap`) would hand that power to every user who
//! can run it. Unless the real uid is root, netlens destroys only sockets
//! owned by the real uid: it looks the socket up first (its owner and
//! cookie as the kernel has them now) and destroys that one by its cookie.

use crate::model::sockets::{Proto, SocketSample};
use netlink_sys::{Socket, SocketAddr, protocols::NETLINK_SOCK_DIAG};
use std::fs::File;
use std::net::IpAddr;

const SOCK_DIAG_BY_FAMILY: u16 = 20;
const SOCK_DESTROY: u16 = 21;
const NLMSG_ERROR: u16 = 2;
const NLM_F_REQUEST: u16 = 1;
const NLM_F_ACK: u16 = 4;
const NLMSG_HDR_LEN: usize = 16;
/// struct inet_diag_req_v2: family, protocol, ext, pad, states, then the
/// 48-byte inet_diag_sockid.
const REQUEST_LEN: usize = 56;
/// INET_DIAG_NOCOOKIE: match by the addresses and ports alone.
const NO_COOKIE: u64 = !0;
/// Where struct inet_diag_msg holds idiag_uid.
const MSG_UID_AT: usize = 64;

/// The user netlens acts for: the real uid, which file capabilities and
/// set-uid leave as the caller's.
pub fn real_uid() -> u32 {
    // SAFETY: getuid has no preconditions and cannot fail.
    unsafe { libc::getuid() }
}

/// Whether the user `caller` may kill a socket owned by `owner` (uids as
/// inet_diag gives them, `ss -e`'s uid:N): root any, anyone else only
/// their own. The error is the reason, in one line.
pub fn may_kill(owner: u32, caller: u32) -> Result<(), String> {
    if caller == 0 || owner == caller {
        return Ok(());
    }
    Err(format!(
        "it belongs to uid {owner}, not to you (uid {caller}); \
         netlens kills only your own sockets unless run by root"
    ))
}

/// Destroys `socket` in the namespace `netns` (None: this process's own).
/// The error is one line that says why, in words an operator can act on.
pub fn destroy(socket: &SocketSample, netns: Option<&File>) -> Result<(), String> {
    if socket.proto != Proto::Tcp {
        return Err("only TCP sockets can be killed (ss -K)".into());
    }
    let socket = socket.clone();
    let caller = real_uid();
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
            // The owner as the kernel has it now, not as sampled: the
            // cookie pins the socket checked, so no other socket that
            // takes its addresses meanwhile is destroyed instead.
            let (owner, cookie) = look_up(&socket)?;
            may_kill(owner, caller)?;
            acknowledge(&ask(&request(SOCK_DESTROY, &socket, cookie))?)
        })
        .map_err(|e| format!("cannot start a thread: {e}"))?
        .join()
        .map_err(|_| "the destroy thread panicked".to_string())?
}

/// The netlink message `kind` (SOCK_DIAG_BY_FAMILY: look it up;
/// SOCK_DESTROY: destroy it): header and inet_diag_req_v2 for this socket,
/// with its cookie or NO_COOKIE.
fn request(kind: u16, socket: &SocketSample, cookie: u64) -> Vec<u8> {
    // A destroy is answered by an acknowledgement, a lookup by the socket.
    let flags = match kind {
        SOCK_DESTROY => NLM_F_REQUEST | NLM_F_ACK,
        _ => NLM_F_REQUEST,
    };
    let mut message = Vec::with_capacity(NLMSG_HDR_LEN + REQUEST_LEN);
    message.extend_from_slice(&((NLMSG_HDR_LEN + REQUEST_LEN) as u32).to_ne_bytes());
    message.extend_from_slice(&kind.to_ne_bytes());
    message.extend_from_slice(&flags.to_ne_bytes());
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
    // idiag_cookie: two u32, low first.
    message.extend_from_slice(&(cookie as u32).to_ne_bytes());
    message.extend_from_slice(&((cookie >> 32) as u32).to_ne_bytes());
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

/// The socket's owner (uid) and cookie, looked up by its addresses and
/// ports.
fn look_up(socket: &SocketSample) -> Result<(u32, u64), String> {
    let reply = ask(&request(SOCK_DIAG_BY_FAMILY, socket, NO_COOKIE))?;
    if let Some(errno) = ack_errno(&reply) {
        return Err(explain(errno));
    }
    let payload = reply.get(NLMSG_HDR_LEN..).unwrap_or_default();
    let uid = payload
        .get(MSG_UID_AT..MSG_UID_AT + 4)
        .map(|b| u32::from_ne_bytes([b[0], b[1], b[2], b[3]]));
    match (uid, super::tcp_destroy::cookie(payload)) {
        (Some(uid), Some(cookie)) => Ok((uid, cookie)),
        _ => Err("the kernel's answer to the socket lookup was too short".into()),
    }
}

/// Whether the kernel's answer acknowledges success.
fn acknowledge(reply: &[u8]) -> Result<(), String> {
    match ack_errno(reply) {
        Some(0) => Ok(()),
        Some(errno) => Err(explain(errno)),
        None => Err("the kernel's answer to SOCK_DESTROY was not an acknowledgement".into()),
    }
}

/// Sends one request and returns the kernel's first answer.
fn ask(request: &[u8]) -> Result<Vec<u8>, String> {
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
        .map_err(|e| format!("cannot send to sock_diag: {e}"))?;
    let mut reply = vec![0u8; 4096];
    let length = socket
        .recv(&mut &mut reply[..], 0)
        .map_err(|e| format!("no answer from sock_diag: {e}"))?;
    reply.truncate(length);
    Ok(reply)
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
            owner_pending: false,
            tcp: None,
            drops: None,
            rcvbuf: None,
            queue_streak: 0,
            v6only: false,
            netns: 0,
            limits: None,
        }
    }

    /// The layout of linux/inet_diag.h: ports big-endian, addresses in the
    /// first bytes of 16, no cookie.
    #[test]
    fn the_request_names_the_socket_as_inet_diag_wants() {
        let message = request(
            SOCK_DESTROY,
            &tcp("198.18.0.1:5201", "198.18.0.2:40001"),
            NO_COOKIE,
        );
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
        let v6 = request(
            SOCK_DESTROY,
            &tcp("[2001:db8::1]:80", "[2001:db8::2]:9"),
            NO_COOKIE,
        );
        assert_eq!(v6[16], libc::AF_INET6 as u8);
        // A lookup asks for no acknowledgement; a cookie is two u32, low first.
        let lookup = request(
            SOCK_DIAG_BY_FAMILY,
            &tcp("198.18.0.1:5201", "0.0.0.0:0"),
            0x1_0000_0002,
        );
        assert_eq!(
            u16::from_ne_bytes([lookup[4], lookup[5]]),
            SOCK_DIAG_BY_FAMILY
        );
        assert_eq!(u16::from_ne_bytes([lookup[6], lookup[7]]), NLM_F_REQUEST);
        assert_eq!(
            &lookup[16 + 48..],
            [2u32.to_ne_bytes(), 1u32.to_ne_bytes()].concat()
        );
    }

    /// Root kills any socket; anyone else (a setcap'd netlens) only their own.
    #[test]
    fn only_root_kills_other_users_sockets() {
        assert!(may_kill(1000, 0).is_ok());
        assert!(may_kill(1000, 1000).is_ok());
        let refused = may_kill(0, 1000).unwrap_err();
        assert!(
            refused.contains("uid 0") && refused.contains("uid 1000"),
            "{refused}"
        );
        assert!(may_kill(1001, 1000).is_err());
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
