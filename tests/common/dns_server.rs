//! A real DNS server for tests, on loopback only: answers `fast.test` at
//! once, `slow.test` after `SLOW`, NXDOMAIN for `nx.test`, REFUSED for other
//! names, and never answers PTR. Bounded: it stops when dropped, or after
//! `MAX_RUN` whatever happens.

use hickory_proto::op::{Message, MessageType, ResponseCode};
use hickory_proto::rr::rdata::A;
use hickory_proto::rr::{RData, Record, RecordType};
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

pub const SLOW: Duration = Duration::from_millis(300);
const MAX_RUN: Duration = Duration::from_secs(60);

pub struct DnsServer {
    pub addr: SocketAddr,
    /// (name, qtype) of every query received, in order.
    pub seen: Arc<Mutex<Vec<(String, String)>>>,
    pub answered: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl DnsServer {
    /// On 127.0.0.1 and a free port.
    pub fn start() -> DnsServer {
        Self::start_on("127.0.0.1:0").expect("bind a loopback UDP port")
    }

    /// On a given loopback address (port 53 for the passive test).
    pub fn start_on(addr: &str) -> std::io::Result<DnsServer> {
        let socket = UdpSocket::bind(addr)?;
        assert!(socket.local_addr()?.ip().is_loopback(), "loopback only");
        socket.set_read_timeout(Some(Duration::from_millis(100)))?;
        let addr = socket.local_addr()?;
        let seen = Arc::new(Mutex::new(Vec::new()));
        let answered = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (seen, answered, stop) = (seen.clone(), answered.clone(), stop.clone());
            std::thread::spawn(move || serve(socket, &seen, &answered, &stop))
        };
        Ok(DnsServer {
            addr,
            seen,
            answered,
            stop,
            thread: Some(thread),
        })
    }

    pub fn seen(&self) -> Vec<(String, String)> {
        self.seen.lock().unwrap().clone()
    }
}

impl Drop for DnsServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn serve(
    socket: UdpSocket,
    seen: &Mutex<Vec<(String, String)>>,
    answered: &AtomicU64,
    stop: &AtomicBool,
) {
    let socket = Arc::new(socket);
    let started = Instant::now();
    let mut buffer = [0u8; 1500];
    while !stop.load(Ordering::Relaxed) && started.elapsed() < MAX_RUN {
        let Ok((n, from)) = socket.recv_from(&mut buffer) else {
            continue;
        };
        let Ok(query) = Message::from_vec(&buffer[..n]) else {
            continue;
        };
        let Some(question) = query.queries.first().cloned() else {
            continue;
        };
        let name = question.name().to_ascii().trim_end_matches('.').to_string();
        let qtype = question.query_type();
        seen.lock().unwrap().push((name.clone(), qtype.to_string()));
        if qtype == RecordType::PTR {
            continue; // never answered: the classic reverse-lookup stall
        }
        let mut reply = Message::response(query.metadata.id, query.metadata.op_code);
        reply.metadata.message_type = MessageType::Response;
        reply.metadata.recursion_desired = query.metadata.recursion_desired;
        reply.metadata.recursion_available = true;
        reply.add_query(question.clone());
        let delay = match name.as_str() {
            "fast.test" | "slow.test" if qtype == RecordType::A => {
                reply.add_answer(Record::from_rdata(
                    question.name().clone(),
                    60,
                    RData::A(A::new(198, 18, 0, 10)),
                ));
                if name == "slow.test" {
                    SLOW
                } else {
                    Duration::ZERO
                }
            }
            "nx.test" => {
                reply.metadata.response_code = ResponseCode::NXDomain;
                Duration::ZERO
            }
            _ => {
                reply.metadata.response_code = ResponseCode::Refused;
                Duration::ZERO
            }
        };
        let Ok(bytes) = reply.to_vec() else { continue };
        answered.fetch_add(1, Ordering::Relaxed);
        if delay.is_zero() {
            let _ = socket.send_to(&bytes, from);
        } else {
            // Delayed on its own thread, so a slow answer holds up no other.
            let socket = socket.clone();
            std::thread::spawn(move || {
                std::thread::sleep(delay);
                let _ = socket.send_to(&bytes, from);
            });
        }
    }
}

/// Sends one query for `name`/`qtype` from a fresh socket (no wait).
pub fn send_query(server: SocketAddr, id: u16, name: &str, qtype: RecordType) -> UdpSocket {
    use hickory_proto::op::{OpCode, Query};
    use hickory_proto::rr::Name;
    let socket = UdpSocket::bind("127.0.0.1:0").expect("bind");
    let mut message = Message::new(id, MessageType::Query, OpCode::Query);
    message.metadata.recursion_desired = true;
    message.add_query(Query::query(
        Name::from_ascii(format!("{name}.")).expect("name"),
        qtype,
    ));
    socket
        .send_to(&message.to_vec().expect("encode"), server)
        .expect("send");
    socket
}
