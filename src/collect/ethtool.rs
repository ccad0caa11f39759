//! Link speed and duplex through the SIOCETHTOOL ioctl (ETHTOOL_GSET), as
//! `ethtool IF` prints them; queue counts (ETHTOOL_GCHANNELS, `ethtool -l`)
//! and ring sizes (ETHTOOL_GRINGPARAM, `ethtool -g`).

use crate::model::Duplex;
use crate::model::cpu::{Channels, Ring};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

const SIOCETHTOOL: libc::c_ulong = 0x8946;
const ETHTOOL_GSET: u32 = 0x1;
const ETHTOOL_GRINGPARAM: u32 = 0x10;
const ETHTOOL_GCHANNELS: u32 = 0x3c;
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

/// struct ethtool_ringparam.
#[repr(C)]
#[derive(Default)]
struct EthtoolRing {
    cmd: u32,
    rx_max_pending: u32,
    rx_mini_max_pending: u32,
    rx_jumbo_max_pending: u32,
    tx_max_pending: u32,
    rx_pending: u32,
    rx_mini_pending: u32,
    rx_jumbo_pending: u32,
    tx_pending: u32,
}

/// struct ethtool_channels.
#[repr(C)]
#[derive(Default)]
struct EthtoolChannels {
    cmd: u32,
    max_rx: u32,
    max_tx: u32,
    max_other: u32,
    max_combined: u32,
    rx_count: u32,
    tx_count: u32,
    other_count: u32,
    combined_count: u32,
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

    /// Runs one ethtool command on `ifname`; whether the driver answered.
    fn ask<T>(&self, ifname: &str, command: &mut T) -> bool {
        let mut request = IfReq {
            name: [0; libc::IFNAMSIZ],
            data: (command as *mut T).cast(),
            _pad: [0; 16],
        };
        let bytes = ifname.as_bytes();
        if bytes.len() >= libc::IFNAMSIZ {
            return false;
        }
        for (dst, src) in request.name.iter_mut().zip(bytes) {
            *dst = *src as libc::c_char;
        }
        // SAFETY: request points at a live command struct of the layout the
        // command word in it names, for the whole call.
        let rc = unsafe { libc::ioctl(self.socket.as_raw_fd(), SIOCETHTOOL as _, &mut request) };
        rc == 0
    }

    /// Speed in Mb/s and duplex; (None, Unknown) when the driver has no
    /// ethtool support (lo) or does not know (no carrier).
    pub fn link_mode(&self, ifname: &str) -> (Option<u32>, Duplex) {
        let mut cmd = EthtoolCmd {
            cmd: ETHTOOL_GSET,
            ..Default::default()
        };
        if !self.ask(ifname, &mut cmd) {
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

    /// `ethtool -l`: None when the driver does not report channels.
    pub fn channels(&self, ifname: &str) -> Option<Channels> {
        let mut c = EthtoolChannels {
            cmd: ETHTOOL_GCHANNELS,
            ..Default::default()
        };
        self.ask(ifname, &mut c).then_some(Channels {
            rx: c.rx_count,
            tx: c.tx_count,
            other: c.other_count,
            combined: c.combined_count,
            max_rx: c.max_rx,
            max_tx: c.max_tx,
            max_other: c.max_other,
            max_combined: c.max_combined,
        })
    }

    /// `ethtool -g`: None when the driver does not report its rings.
    pub fn ring(&self, ifname: &str) -> Option<Ring> {
        let mut r = EthtoolRing {
            cmd: ETHTOOL_GRINGPARAM,
            ..Default::default()
        };
        self.ask(ifname, &mut r).then_some(Ring {
            rx: r.rx_pending,
            rx_max: r.rx_max_pending,
            tx: r.tx_pending,
            tx_max: r.tx_max_pending,
        })
    }
}
