//! The /proc/net/snmp, /proc/net/netstat and /proc/net/snmp6 counters
//! netlens reads by name, each spelled once, as nstat prints it and
//! `TcpSample::counters` keys it ("Group.Name"). The counter catalogue
//! (findings/catalogue) spells its own, since build.rs reads it without the
//! crate; a findings test checks every name here is classified there.

// /proc/net/snmp, Tcp
pub const TCP_ACTIVE_OPENS: &str = "Tcp.ActiveOpens";
pub const TCP_ATTEMPT_FAILS: &str = "Tcp.AttemptFails";
pub const TCP_ESTAB_RESETS: &str = "Tcp.EstabResets";
pub const TCP_IN_ERRS: &str = "Tcp.InErrs";
pub const TCP_IN_SEGS: &str = "Tcp.InSegs";
pub const TCP_OUT_RSTS: &str = "Tcp.OutRsts";
pub const TCP_OUT_SEGS: &str = "Tcp.OutSegs";
pub const TCP_PASSIVE_OPENS: &str = "Tcp.PassiveOpens";
pub const TCP_RETRANS_SEGS: &str = "Tcp.RetransSegs";

// /proc/net/netstat, TcpExt
pub const TCP_EXT_LISTEN_DROPS: &str = "TcpExt.ListenDrops";
pub const TCP_EXT_LISTEN_OVERFLOWS: &str = "TcpExt.ListenOverflows";
pub const TCP_EXT_SYNCOOKIES_FAILED: &str = "TcpExt.SyncookiesFailed";
pub const TCP_EXT_SYNCOOKIES_RECV: &str = "TcpExt.SyncookiesRecv";
pub const TCP_EXT_SYNCOOKIES_SENT: &str = "TcpExt.SyncookiesSent";
pub const TCP_EXT_TCP_ABORT_ON_CLOSE: &str = "TcpExt.TCPAbortOnClose";
pub const TCP_EXT_TCP_ABORT_ON_DATA: &str = "TcpExt.TCPAbortOnData";
pub const TCP_EXT_TCP_ABORT_ON_LINGER: &str = "TcpExt.TCPAbortOnLinger";
pub const TCP_EXT_TCP_ABORT_ON_MEMORY: &str = "TcpExt.TCPAbortOnMemory";
pub const TCP_EXT_TCP_ABORT_ON_TIMEOUT: &str = "TcpExt.TCPAbortOnTimeout";
pub const TCP_EXT_TCP_BACKLOG_DROP: &str = "TcpExt.TCPBacklogDrop";
pub const TCP_EXT_TCP_MEMORY_PRESSURES: &str = "TcpExt.TCPMemoryPressures";
pub const TCP_EXT_TCP_REQ_Q_FULL_DROP: &str = "TcpExt.TCPReqQFullDrop";
pub const TCP_EXT_TCP_SYN_RETRANS: &str = "TcpExt.TCPSynRetrans";
pub const TCP_EXT_TCP_TIMEOUTS: &str = "TcpExt.TCPTimeouts";

// /proc/net/snmp, Udp
pub const UDP_IN_DATAGRAMS: &str = "Udp.InDatagrams";
pub const UDP_IN_ERRORS: &str = "Udp.InErrors";
pub const UDP_NO_PORTS: &str = "Udp.NoPorts";
pub const UDP_OUT_DATAGRAMS: &str = "Udp.OutDatagrams";
pub const UDP_RCVBUF_ERRORS: &str = "Udp.RcvbufErrors";
pub const UDP_SNDBUF_ERRORS: &str = "Udp.SndbufErrors";

// /proc/net/snmp, Icmp
pub const ICMP_IN_DEST_UNREACHS: &str = "Icmp.InDestUnreachs";
pub const ICMP_OUT_DEST_UNREACHS: &str = "Icmp.OutDestUnreachs";

// /proc/net/snmp, Ip
pub const IP_IN_DISCARDS: &str = "Ip.InDiscards";
pub const IP_OUT_DISCARDS: &str = "Ip.OutDiscards";

// /proc/net/snmp6
pub const ICMP6_IN_DEST_UNREACHS: &str = "Icmp6.InDestUnreachs";
pub const ICMP6_OUT_DEST_UNREACHS: &str = "Icmp6.OutDestUnreachs";
pub const IP6_IN_DISCARDS: &str = "Ip6.InDiscards";
