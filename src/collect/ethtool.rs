//! Link speed and duplex through the SIOCETHTOOL ioctl (ETHTOOL_GSET), as
//! `ethtool IF` prints them.

use crate::model::Duplex;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

const SIOCETHTOOL: libc::c_ulong = 0x8946;
const ETHTOOL_GSET: u32 = 0x1;
const SPEED_UNKNOWN: u32 = u32::MAX;
const DUPLEX_HALF: u8 = 0;
const DUPLEX_FULL: u8 = 1;

/// struct ethtool_cmd from <linux/ethtool.h>.
#[repr(C)]
#[derive(Default)]
struct EthtoolCmd {
    cmd: u32,
    supported: u32,
    advertising: u32,
    speed: u16,
    duplex: u8,
    port: u8,
    phy_address: u8,
    transceiver: u8,
    autoneg: u8,
    mdio_support: u8,
    maxtxpkt: u32,
    maxrxpkt: u32,
    speed_hi: u16,
    eth_tp_mdix: u8,
    eth_tp_mdix_ctrl: u8,
    lp_advertising: u32,
    reserved: [u32; 2],
}

#[repr(C)]
struct IfReq {
    name: [libc::c_char; libc::IFNAMSIZ],
    data: *mut libc::c_void,
    _pad: [u8; 16],
}

/// A socket for ethtool ioctls. It belongs to the namespace of the thread
/// that created it.
pub struct Ethtool {
    socket: OwnedFd,
}

impl Ethtool {
    pub fn new() -> std::io::Result<Self> {
        // SAFETY: plain socket(2); the fd is owned right away.
        let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: fd is a fresh, valid descriptor nobody else owns.
        Ok(Self {
            socket: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }

    /// Speed in Mb/s and duplex; (None, Unknown) when the driver has no
    /// ethtool support (lo) or does not know (no carrier).
    pub fn link_mode(&self, ifname: &str) -> (Option<u32>, Duplex) {
        let mut cmd = EthtoolCmd {
            cmd: ETHTOOL_GSET,
            ..Default::default()
        };
        let mut request = IfReq {
            name: [0; libc::IFNAMSIZ],
            data: (&mut cmd as *mut EthtoolCmd).cast(),
            _pad: [0; 16],
        };
        let bytes = ifname.as_bytes();
        if bytes.len() >= libc::IFNAMSIZ {
            return (None, Duplex::Unknown);
        }
        for (dst, src) in request.name.iter_mut().zip(bytes) {
            *dst = *src as libc::c_char;
        }
        // SAFETY: request points at a live ethtool_cmd for the whole call.
        let rc = unsafe { libc::ioctl(self.socket.as_raw_fd(), SIOCETHTOOL as _, &mut request) };
        if rc != 0 {
            return (None, Duplex::Unknown);
        }
        let speed = u32::from(cmd.speed) | (u32::from(cmd.speed_hi) << 16);
        let speed = (speed != 0 && speed != SPEED_UNKNOWN && speed != 0xFFFF).then_some(speed);
        let duplex = match cmd.duplex {
            DUPLEX_FULL => Duplex::Full,
            DUPLEX_HALF => Duplex::Half,
            _ => Duplex::Unknown,
        };
        (speed, duplex)
    }
}
