//! `host:NAME` in the Sockets tab follows N at once (no root): reverse
//! names from a real PTR server this test runs on loopback, through the
//! App's own resolver; fixed sockets to 198.18.234.9 (named h27-nine.test)
//! and 198.18.234.10 (no name). With the filter `host:h27-nine.test`, N
//! off must empty the table and N on bring the socket back in the same
//! sample: the row order is cached per sample, and its key carries the
//! names' generation.
//!
//! Network safety: only PTR queries to this test's server on 127.0.0.1;
//! nothing is sent to the sockets' addresses (they are fixed samples). The
//! server stops when dropped, or after 60 s.

use hickory_proto::op::{Message, MessageType, ResponseCode};
use hickory_proto::rr::rdata::PTR;
use hickory_proto::rr::{Name, RData, Record, RecordType};
use netlens::app::App;
use netlens::app::keymap::Key;
use netlens::app::names::Names;
use netlens::app::tabs::Tab;
use netlens::collect::SamplerEvent;
use netlens::model::Sample;
use netlens::model::sockets::{Proto, SocketSample, TCP_ESTABLISHED};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const NAMED: &str = "198.18.234.9";
const PTR_NAME: &str = "9.234.18.198.in-addr.arpa";
const NAME: &str = "h27-nine.test";

/// Answers PTR_NAME with NAME, anything else NXDOMAIN, on 127.0.0.1.
struct PtrServer {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl PtrServer {
    fn start() -> PtrServer {
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        socket
            .set_read_timeout(Some(Duration::from_millis(100)))
            .unwrap();
        let addr = socket.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let thread = std::thread::spawn(move || {
            let (started, mut buffer) = (Instant::now(), [0u8; 1500]);
            while !stopped.load(Ordering::Relaxed) && started.elapsed() < Duration::from_secs(60) {
                let Ok((n, from)) = socket.recv_from(&mut buffer) else {
                    continue;
                };
                let Ok(query) = Message::from_vec(&buffer[..n]) else {
                    continue;
                };
                let Some(question) = query.queries.first().cloned() else {
                    continue;
                };
                let mut reply = Message::response(query.metadata.id, query.metadata.op_code);
                reply.metadata.message_type = MessageType::Response;
                reply.add_query(question.clone());
                let asked = question.name().to_ascii();
                if asked.trim_end_matches('.') == PTR_NAME
                    && question.query_type() == RecordType::PTR
                {
                    reply.add_answer(Record::from_rdata(
                        question.name().clone(),
                        60,
                        RData::PTR(PTR(Name::from_ascii(format!("{NAME}.")).unwrap())),
                    ));
                } else {
                    reply.metadata.response_code = ResponseCode::NXDomain;
                }
                if let Ok(bytes) = reply.to_vec() {
                    let _ = socket.send_to(&bytes, from);
                }
            }
        });
        PtrServer {
            addr,
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for PtrServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn socket(local: &str, peer: &str, inode: u32) -> SocketSample {
    SocketSample {
        proto: Proto::Tcp,
        state: TCP_ESTABLISHED,
        local: local.parse().unwrap(),
        peer: peer.parse().unwrap(),
        recv_q: 0,
        send_q: 0,
        uid: 0,
        inode,
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

fn sample(mono: f64) -> Sample {
    Sample {
        t: 1_700_000_000.0 + mono,
        mono,
        netns: "host".into(),
        sockets: vec![
            socket("198.18.234.1:40001", &format!("{NAMED}:443"), 1),
            socket("198.18.234.1:40002", "198.18.234.10:80", 2),
        ]
        .into(),
        ..Default::default()
    }
}

fn screen(app: &mut App) -> String {
    let mut terminal = Terminal::new(TestBackend::new(80, 24)).unwrap();
    terminal
        .draw(|frame| netlens::ui::draw(frame, app))
        .unwrap();
    let buffer = terminal.backend().buffer();
    (0..24)
        .map(|y| (0..80).map(|x| buffer[(x, y)].symbol()).collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The table's socket rows (local 198.18.234.1:4000x).
fn rows(screen: &str) -> Vec<&str> {
    screen
        .lines()
        .filter(|l| l.contains("198.18.234.1:4000"))
        .collect()
}

#[test]
fn n_refilters_host_name_in_the_same_sample() {
    let server = PtrServer::start();
    let mut app = App::new(Tab::Sockets, Duration::from_secs(1), false);
    app.names = Names::new(Ok(server.addr), true);
    app.on_sampler(SamplerEvent::Sample(Box::new(sample(1.0))));
    // The table asks for the peers' names as it draws them: draw until the
    // resolver has the name (a frame never waits for it).
    let named: IpAddr = NAMED.parse().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while app.names.known().and_then(|k| k.get(&named).cloned()) != Some(NAME.into()) {
        assert!(
            Instant::now() < deadline,
            "no PTR answer:\n{}",
            screen(&mut app)
        );
        screen(&mut app);
        std::thread::sleep(Duration::from_millis(50));
    }
    // A sample shares the names with the filters; then the filter.
    app.on_sampler(SamplerEvent::Sample(Box::new(sample(2.0))));
    app.on_key(Key::Char('/'));
    for c in format!("host:{NAME}").chars() {
        app.on_key(Key::Char(c));
    }
    app.on_key(Key::Enter);
    let on = screen(&mut app);
    let shown = rows(&on);
    assert_eq!(shown.len(), 1, "{on}");
    assert!(shown[0].contains(&format!("{NAME}:https")), "{on}");
    // N off: no name is known, nothing matches, at once (no new sample).
    app.on_key(Key::Char('N'));
    let off = screen(&mut app);
    assert!(rows(&off).is_empty(), "{off}");
    // N on again: the cache still has it, the socket is back.
    app.on_key(Key::Char('N'));
    let again = screen(&mut app);
    let shown = rows(&again);
    assert_eq!(shown.len(), 1, "{again}");
    assert!(shown[0].contains(NAME), "{again}");
}
