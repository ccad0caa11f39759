//! A routed chain of four namespaces for `netlens trace`: client -> r1 ->
//! r2 -> server, one /24 of 198.18.0.0/15 per link, forwarding on in the
//! routers, a TCP listener in the server. Every router and the server
//! answer ICMP without a rate limit unless a test sets one, so a clean
//! path shows no loss. Namespaces (and with them their veths, qdiscs and
//! iptables rules) go on drop.

use super::{Netns, enter_netns};
use std::net::{Ipv4Addr, TcpListener};

pub const CLIENT: Ipv4Addr = Ipv4Addr::new(198, 18, 1, 2);
pub const R1: Ipv4Addr = Ipv4Addr::new(198, 18, 1, 1);
/// r2 as the client sees it: the address of its link towards r1.
pub const R2: Ipv4Addr = Ipv4Addr::new(198, 18, 2, 2);
pub const SERVER: Ipv4Addr = Ipv4Addr::new(198, 18, 3, 2);
pub const PORT: u16 = 8080;
/// r2's interface facing r1: probes for hop 2 on come in here, and r2's
/// answers towards the client go out here.
pub const R2_FROM_R1: &str = "r2in";

pub struct Chain {
    // Dropped first: the listener's socket lives in the server namespace.
    pub listener: TcpListener,
    pub client: Netns,
    pub r1: Netns,
    pub r2: Netns,
    pub server: Netns,
}

impl Chain {
    pub fn new(tag: &str) -> Chain {
        let client = Netns::new(&format!("{tag}c"));
        let r1 = Netns::new(&format!("{tag}r1"));
        let r2 = Netns::new(&format!("{tag}r2"));
        let server = Netns::new(&format!("{tag}s"));
        link(&client, "c0", "198.18.1.2/24", &r1, "r1in", "198.18.1.1/24");
        link(
            &r1,
            "r1out",
            "198.18.2.1/24",
            &r2,
            R2_FROM_R1,
            "198.18.2.2/24",
        );
        link(
            &r2,
            "r2out",
            "198.18.3.1/24",
            &server,
            "s0",
            "198.18.3.2/24",
        );
        client.ip(&["route", "add", "default", "via", "198.18.1.1"]);
        r1.ip(&["route", "add", "198.18.3.0/24", "via", "198.18.2.2"]);
        r2.ip(&["route", "add", "198.18.1.0/24", "via", "198.18.2.1"]);
        server.ip(&["route", "add", "default", "via", "198.18.3.1"]);
        for ns in [&r1, &r2] {
            ns.sysctl("net.ipv4.ip_forward", "1");
        }
        for ns in [&r1, &r2, &server] {
            ns.sysctl("net.ipv4.icmp_ratelimit", "0");
        }
        let path = server.path();
        let listener = std::thread::spawn(move || {
            enter_netns(&path).expect("enter the server namespace");
            TcpListener::bind((SERVER, PORT)).expect("listen in the server namespace")
        })
        .join()
        .expect("listener thread");
        Chain {
            listener,
            client,
            r1,
            r2,
            server,
        }
    }

    /// `ip netns exec` in r2, e.g. an iptables rule.
    pub fn in_r2(&self, args: &[&str]) {
        super::ns_exec(&self.r2.name, args);
    }
}

fn link(a: &Netns, dev_a: &str, addr_a: &str, b: &Netns, dev_b: &str, addr_b: &str) {
    a.ip(&[
        "link", "add", dev_a, "type", "veth", "peer", "name", dev_b, "netns", &b.name,
    ]);
    a.ip(&["addr", "add", addr_a, "dev", dev_a]);
    b.ip(&["addr", "add", addr_b, "dev", dev_b]);
    a.ip(&["link", "set", dev_a, "up"]);
    b.ip(&["link", "set", dev_b, "up"]);
}
