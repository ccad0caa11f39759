//! The tests of the real binary against the real system: network
//! namespaces this suite makes (198.18.0.0/15 only), tmux and pseudo-
//! terminals, and the tools netlens is compared with (ss, conntrack,
//! tcpdump, iperf3, nginx, Prometheus...). Root tests print a SKIP line
//! without root, and a test whose tool is missing names its package
//! (tests/common/need.rs). CPU-heavy tests take turns (`common::heavy`),
//! the rest run side by side: `cargo test --profile fast-build -- --test-threads=16`.

mod all_netns;
mod capture;
mod capture_ring;
mod close_wait;
mod config;
mod conn_log;
mod conn_log_views;
mod connect_refused;
mod connect_timeout;
pub(crate) mod conntrack;
mod containers;
mod dns;
mod drill;
mod drop_reasons;
mod drops_tmux;
mod export;
mod failed_conns;
mod file_safety;
mod filter;
mod findings_netns;
mod firewall_drops;
mod firewall_iptables_text;
mod firewall_nft_text;
mod firewall_nftrace;
mod first_screen;
mod flight_live;
mod flight_recorder;
mod flows_accounting;
mod hardening;
mod healthy_busy_stack;
mod htop_keys;
mod load;
mod namespaces_tab;
mod nat_drops;
mod nat_flows;
mod netns_counters;
mod netns_findings;
mod netns_findings_list;
mod netns_flows;
mod netns_label;
mod netns_tab_columns;
mod on_finding;
mod path_view;
mod pcapng;
mod peer_names;
mod port_exhaustion;
mod processes;
mod prometheus;
mod pty;
mod qdisc;
mod record_netns;
mod record_seek;
mod response_time;
mod server_names;
mod session;
mod socket_findings_healthy;
mod sockets_netns;
mod softnet;
mod tcp_limits;
mod tcp_path;
mod tcp_receive;
mod time_wait_groups;
mod tmux;
mod trace;
mod udp_drops;
mod ui_text;
