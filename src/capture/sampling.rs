//! Sampling the live capture in the kernel while the eBPF flow counter
//! counts every packet (docs/flow-counts.md, "Sampling the capture").
//!
//! A classic BPF socket filter keeps every control packet (TCP with SYN,
//! FIN or RST; UDP to or from port 53; ICMP and ICMPv6; IPv6 behind an
//! extension header; anything not IP, such as ARP) and one in `every` of
//! the rest, chosen with the kernel's random ancillary load. What the
//! capture derives from control packets (handshakes, RTT, refusals,
//! passive DNS) stays whole; what it counts from the others is scaled by
//! `every` (`weight`), so totals and retransmits stay estimates of the
//! whole, and ratios are unbiased.
//!
//! `Pace` picks `every` about once a second so that what reaches user
//! space stays under `BUDGET` packets a second.

use crate::packet::decode::linktype;

/// Packets a second the capture thread is given at most while sampling:
/// the Flows tab prints at most 1,000 lines a second, and each packet costs
/// the thread about 0.8 µs (decoded, accounted, copied, printed).
pub const BUDGET: u64 = 1_000;
/// The sparsest sampling: 1 in 4096.
pub const MOST: u32 = 4096;

const ETH_IPV4: u32 = 0x0800;
const ETH_IPV6: u32 = 0x86dd;
const TCP_SYN_FIN_RST: u32 = 0x07;
const DNS_PORT: u32 = 53;
/// IPv6 next headers the filter does not look behind (hop-by-hop,
/// routing, fragment, destination options): always kept.
const IPV6_EXTENSIONS: [u32; 4] = [0, 43, 44, 60];

/// A jump target while the program is written: the next instruction or a
/// label resolved when it is built.
#[derive(Clone, Copy, PartialEq)]
enum To {
    Next,
    Keep,
    Sample,
    Tcp4,
    Udp4,
    NotV4,
    Udp6,
}

struct Asm {
    code: Vec<(u16, To, To, u32)>,
    labels: Vec<(To, usize)>,
}

impl Asm {
    fn op(&mut self, code: u16, k: u32) {
        self.code.push((code, To::Next, To::Next, k));
    }
    fn jump(&mut self, code: u16, k: u32, yes: To, no: To) {
        self.code.push((code, yes, no, k));
    }
    fn label(&mut self, to: To) {
        self.labels.push((to, self.code.len()));
    }
    fn build(self) -> Vec<libc::sock_filter> {
        let at = |to: To, from: usize| -> u8 {
            if to == To::Next {
                return 0;
            }
            let target = self.labels.iter().find(|(l, _)| *l == to).map(|(_, i)| *i);
            let target = target.expect("every jump target has a label");
            u8::try_from(target - from - 1).expect("the program is short")
        };
        let code = self.code.iter().enumerate();
        code.map(|(i, &(code, jt, jf, k))| libc::sock_filter {
            code,
            jt: at(jt, i),
            jf: at(jf, i),
            k,
        })
        .collect()
    }
}

const LD_W_ABS: u16 = 0x20;
const LD_H_ABS: u16 = 0x28;
const LD_B_ABS: u16 = 0x30;
const LD_H_IND: u16 = 0x48;
const LD_B_IND: u16 = 0x50;
const LDX_B_MSH: u16 = 0xb1;
const ALU_MOD_K: u16 = 0x94;
const JEQ_K: u16 = 0x15;
const JSET_K: u16 = 0x45;
const RET_K: u16 = 0x06;

fn ancillary(field: i32) -> u32 {
    (libc::SKF_AD_OFF + field) as u32
}

/// The socket filter: every packet cut to `snaplen` when `every` is 1,
/// else control packets and one in `every` of the rest. `net` is where the
/// network header starts (14 on an Ethernet or lo SOCK_RAW socket, 0 on a
/// cooked one).
pub fn program(net: u32, snaplen: u32, every: u32) -> Vec<libc::sock_filter> {
    let mut a = Asm {
        code: Vec::new(),
        labels: Vec::new(),
    };
    if every > 1 {
        a.op(LD_W_ABS, ancillary(libc::SKF_AD_PROTOCOL));
        a.jump(JEQ_K, ETH_IPV4, To::Next, To::NotV4);
        // IPv4: ICMP kept, TCP and UDP looked into, the rest sampled.
        a.op(LD_B_ABS, net + 9);
        a.jump(JEQ_K, 1, To::Keep, To::Next);
        a.jump(JEQ_K, 6, To::Tcp4, To::Next);
        a.jump(JEQ_K, 17, To::Udp4, To::Sample);
        a.label(To::Tcp4);
        a.op(LD_H_ABS, net + 6);
        a.jump(JSET_K, 0x1fff, To::Sample, To::Next); // a later fragment
        a.op(LDX_B_MSH, net);
        a.op(LD_B_IND, net + 13);
        a.jump(JSET_K, TCP_SYN_FIN_RST, To::Keep, To::Sample);
        a.label(To::Udp4);
        a.op(LD_H_ABS, net + 6);
        a.jump(JSET_K, 0x1fff, To::Sample, To::Next);
        a.op(LDX_B_MSH, net);
        a.op(LD_H_IND, net);
        a.jump(JEQ_K, DNS_PORT, To::Keep, To::Next);
        a.op(LD_H_IND, net + 2);
        a.jump(JEQ_K, DNS_PORT, To::Keep, To::Sample);
        // Not IPv4: IPv6 looked into, anything else (ARP) kept.
        a.label(To::NotV4);
        a.jump(JEQ_K, ETH_IPV6, To::Next, To::Keep);
        a.op(LD_B_ABS, net + 6);
        a.jump(JEQ_K, 58, To::Keep, To::Next);
        for extension in IPV6_EXTENSIONS {
            a.jump(JEQ_K, extension, To::Keep, To::Next);
        }
        a.jump(JEQ_K, 17, To::Udp6, To::Next);
        a.jump(JEQ_K, 6, To::Next, To::Sample);
        a.op(LD_B_ABS, net + 40 + 13);
        a.jump(JSET_K, TCP_SYN_FIN_RST, To::Keep, To::Sample);
        a.label(To::Udp6);
        a.op(LD_H_ABS, net + 40);
        a.jump(JEQ_K, DNS_PORT, To::Keep, To::Next);
        a.op(LD_H_ABS, net + 42);
        a.jump(JEQ_K, DNS_PORT, To::Keep, To::Next);
        a.label(To::Sample);
        a.op(LD_W_ABS, ancillary(libc::SKF_AD_RANDOM));
        a.op(ALU_MOD_K, every);
        a.jump(JEQ_K, 0, To::Keep, To::Next);
        a.op(RET_K, 0);
    }
    a.label(To::Keep);
    a.op(RET_K, snaplen);
    a.build()
}

/// Whether the filter keeps this packet whatever `every` is: the same
/// tests as `program`, on the bytes the ring hands over (an Ethernet frame
/// or a Linux cooked one).
pub fn kept_always(link: u32, data: &[u8]) -> bool {
    let (ethertype_at, net) = match link {
        linktype::ETHERNET => (12, 14),
        linktype::SLL => (14, 16),
        _ => return true,
    };
    let byte = |at: usize| data.get(at).copied().map(u32::from);
    let half = |at: usize| {
        Some(u32::from(u16::from_be_bytes([
            data.get(at).copied()?,
            data.get(at + 1).copied()?,
        ])))
    };
    let Some(ethertype) = half(ethertype_at) else {
        return true;
    };
    let transport = match ethertype {
        ETH_IPV4 => {
            let later_fragment = half(net + 6).is_some_and(|f| f & 0x1fff != 0);
            match byte(net + 9) {
                Some(1) => return true,
                Some(p @ (6 | 17)) if !later_fragment => {
                    let header = byte(net).map_or(0, |b| (b & 0xf) as usize * 4);
                    (p, net + header)
                }
                _ => return false,
            }
        }
        ETH_IPV6 => match byte(net + 6) {
            Some(p @ (6 | 17)) => (p, net + 40),
            Some(p) => return p == 58 || IPV6_EXTENSIONS.contains(&p),
            None => return false,
        },
        _ => return true,
    };
    match transport {
        (6, at) => byte(at + 13).is_some_and(|f| f & TCP_SYN_FIN_RST != 0),
        (_, at) => half(at) == Some(DNS_PORT) || half(at + 2) == Some(DNS_PORT),
    }
}

/// What one packet the capture kept stands for: `every` packets, or one
/// when the filter keeps all of its kind.
pub fn weight(every: u32, link: u32, data: &[u8]) -> u64 {
    if every <= 1 || kept_always(link, data) {
        1
    } else {
        u64::from(every)
    }
}

/// The next sampling rate from the packets that passed the filter in the
/// last `seconds`: sparser at once when over the budget (the power of two
/// that brings it under), denser by halves when under a quarter of it.
pub fn next_every(every: u32, passed: u64, seconds: f64) -> u32 {
    if seconds <= 0.0 {
        return every;
    }
    let rate = passed as f64 / seconds;
    let budget = BUDGET as f64;
    let every = every.max(1);
    let next = if rate > budget {
        let wanted = (f64::from(every) * rate / budget).ceil() as u64;
        u32::try_from(wanted.next_power_of_two()).unwrap_or(MOST)
    } else if rate < budget / 4.0 {
        every / 2
    } else {
        every
    };
    next.clamp(1, MOST)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ipv4(proto: u8, flags: u8, sport: u16, dport: u16) -> Vec<u8> {
        let mut frame = vec![0u8; 14 + 20 + 20];
        frame[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
        frame[14] = 0x45;
        frame[14 + 9] = proto;
        frame[34..36].copy_from_slice(&sport.to_be_bytes());
        frame[36..38].copy_from_slice(&dport.to_be_bytes());
        frame[34 + 13] = flags;
        frame
    }

    #[test]
    fn control_packets_are_kept_and_data_is_sampled() {
        let e = linktype::ETHERNET;
        assert!(kept_always(e, &ipv4(6, 0x02, 40000, 80)));
        assert!(kept_always(e, &ipv4(6, 0x11, 40000, 80)));
        assert!(!kept_always(e, &ipv4(6, 0x10, 40000, 80)));
        assert!(kept_always(e, &ipv4(17, 0, 40000, 53)));
        assert!(!kept_always(e, &ipv4(17, 0, 40000, 9000)));
        assert!(kept_always(e, &ipv4(1, 0, 0, 0)));
        let mut arp = ipv4(0, 0, 0, 0);
        arp[12..14].copy_from_slice(&0x0806u16.to_be_bytes());
        assert!(kept_always(e, &arp));
        let mut fragment = ipv4(17, 0, 53, 53);
        fragment[14 + 6] = 0x00;
        fragment[14 + 7] = 0x10;
        assert!(!kept_always(e, &fragment));
        assert_eq!(weight(64, e, &ipv4(6, 0x10, 1, 2)), 64);
        assert_eq!(weight(64, e, &ipv4(6, 0x04, 1, 2)), 1);
        assert_eq!(weight(1, e, &ipv4(6, 0x10, 1, 2)), 1);
    }

    #[test]
    fn the_rate_settles_under_the_budget() {
        let b = BUDGET;
        assert_eq!(next_every(1, 50 * b, 1.0), 64);
        assert_eq!(next_every(64, b * 3 / 2, 1.0), 128);
        assert_eq!(next_every(64, b * 3 / 4, 1.0), 64);
        assert_eq!(next_every(64, b / 5, 1.0), 32);
        assert_eq!(next_every(1, 10, 1.0), 1);
        assert_eq!(next_every(MOST, 10_000 * b, 1.0), MOST);
        assert_eq!(next_every(8, 0, 0.0), 8);
    }

    /// The kernel checks a program when it is attached; any socket will do.
    #[test]
    fn the_kernel_accepts_every_program() {
        let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let fd = std::os::fd::AsRawFd::as_raw_fd(&socket);
        for (net, every) in [(14, 1), (14, 2), (0, 64), (14, MOST)] {
            let mut code = program(net, 384, every);
            let prog = libc::sock_fprog {
                len: code.len() as u16,
                filter: code.as_mut_ptr(),
            };
            // SAFETY: prog points to `code`, alive for the call.
            let rc = unsafe {
                libc::setsockopt(
                    fd,
                    libc::SOL_SOCKET,
                    libc::SO_ATTACH_FILTER,
                    (&prog as *const libc::sock_fprog).cast(),
                    std::mem::size_of::<libc::sock_fprog>() as libc::socklen_t,
                )
            };
            assert_eq!(rc, 0, "{:?}", std::io::Error::last_os_error());
        }
        assert_eq!(program(14, 384, 1).len(), 1);
    }
}
