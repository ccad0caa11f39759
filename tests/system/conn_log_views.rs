//! The connection log where it shows: the Closed view of a live netlens in
//! tmux at 80x24 (and a narrow pane), a recording replayed into the same
//! view and as JSON, the exporter's counters; all fed by real connections
//! on a namespace's loopback.

use crate::common;

use common::exporter::Exporter;
use common::tmux::Tmux;
use common::{NETLENS, Netns, enter_netns};
use netlens::app::App;
use netlens::app::keymap::Key;
use netlens::app::tabs::Tab;
use netlens::record::player::Player;
use netlens::record::reader::Reader;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::time::Duration;

/// One round of connections inside the namespace: a refused one, a normal
/// close (fin) carrying 1234 bytes each way, and an abort (rst-sent).
fn round(listener: &TcpListener, closed_port: u16) {
    let address = listener.local_addr().unwrap();
    assert!(TcpStream::connect(("127.0.0.1", closed_port)).is_err());
    let mut client = TcpStream::connect(address).unwrap();
    let (mut server, _) = listener.accept().unwrap();
    client.write_all(&[1u8; 1234]).unwrap();
    let mut buffer = [0u8; 1234];
    server.read_exact(&mut buffer).unwrap();
    server.write_all(&buffer).unwrap();
    client.read_exact(&mut buffer).unwrap();
    drop(client);
    drop(server);
    let aborted = TcpStream::connect(address).unwrap();
    let (_peer, _) = listener.accept().unwrap();
    common::abort_on_close(&aborted); // close() resets
}

fn scrape(exporter: &Exporter) -> String {
    let mut stream = TcpStream::connect(exporter.addr).unwrap();
    stream
        .write_all(b"GET /metrics HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut text = String::new();
    stream.read_to_string(&mut text).unwrap();
    text
}

pub fn render(app: &mut App, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|frame| netlens::ui::draw(frame, app))
        .unwrap();
    let buffer = terminal.backend().buffer().clone();
    (0..height)
        .map(|y| {
            (0..width)
                .map(|x| buffer[(x, y)].symbol().to_string())
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn closed_connections_show_live_recorded_replayed_and_exported() {
    if crate::common::need_root(&["ip", "tmux"]) {
        return;
    }
    let Some(tmux) = Tmux::new("connlog") else {
        return;
    };
    let ns = Netns::new("clv");
    ns.ip(&["link", "set", "lo", "up"]);
    let path = ns.path();
    let exporter = Exporter::start(&["--netns", &path, "--interval", "200ms"]);
    let dir = std::env::temp_dir().join(format!("netlens-connlog-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("closed.nlrec");
    let _ = std::fs::remove_file(&file);
    let recorder = Command::new(NETLENS)
        .args(["record", "-o", file.to_str().unwrap(), "--netns", &path])
        // Stopped by SIGINT once the connections are made; the duration
        // only bounds it.
        .args(["--interval", "200ms", "--duration", "90s", "--no-capture"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let recorder = common::ChildGuard(recorder);
    let live = format!("{NETLENS} --netns {path} --interval 200ms --tab sockets --no-capture");
    tmux.start(80, 24, &dir, &live);
    tmux.wait("the Sockets tab", Duration::from_secs(15), |s| {
        s.contains("Local").then_some(())
    });
    tmux.send_keys(&["c"]);
    tmux.wait("the Closed view", Duration::from_secs(10), |s| {
        s.contains("How").then_some(())
    });

    // The recorder has sampled: under load its start (its eBPF programs
    // loaded beside the live view's and the exporter's) took 10 s, and
    // connections made before it were never in the recording.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while std::fs::metadata(&file).map_or(0, |m| m.len()) < 1024 {
        assert!(
            std::time::Instant::now() < deadline,
            "netlens record wrote no sample in 60 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    }

    // The connections, made from a thread inside the namespace, in rounds
    // until every consumer has seen one (bounded).
    let (rounds_tx, rounds) = std::sync::mpsc::channel::<bool>();
    let (done_tx, done) = std::sync::mpsc::channel::<()>();
    let maker = std::thread::spawn(move || {
        enter_netns(&path).unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        // Below the ephemeral range (32768-60999 in a new namespace): a
        // connect to a closed port inside the range can pick that same
        // port as its source and connect to itself.
        let closed_port = 9;
        for _ in 0..60 {
            round(&listener, closed_port);
            if rounds.recv_timeout(Duration::from_millis(250)) == Ok(true) {
                break;
            }
        }
        done_tx.send(()).unwrap();
    });
    let screen = tmux.wait("closed rows", Duration::from_secs(20), |s| {
        (s.contains("refused") && s.contains("rst-sent") && s.contains(" fin"))
            .then(|| s.to_string())
    });
    let metrics = (0..100)
        .find_map(|_| {
            let text = scrape(&exporter);
            let refused = text
                .lines()
                .find(|l| l.starts_with("netlens_tcp_closed_total{how=\"refused\""))
                .and_then(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
                .unwrap_or(0);
            if refused >= 1 {
                return Some(text);
            }
            std::thread::sleep(Duration::from_millis(100));
            None
        })
        .expect("the exporter never counted a refused connection");
    let _ = rounds_tx.send(true);
    done.recv().unwrap();
    maker.join().unwrap();

    // Live, 80x24: the table fits, endings in words, the footer names `c`.
    for line in screen.lines() {
        assert!(line.chars().count() <= 80, "{line}");
    }
    assert!(
        screen.contains("Sent") && screen.contains("Recv"),
        "{screen}"
    );
    assert!(
        screen.contains("closed"),
        "the footer or status names the view:\n{screen}"
    );
    assert!(screen.contains("1.21 KiB"), "the fin's bytes:\n{screen}");
    // A narrow pane keeps the peer and the ending.
    tmux.resize(40, 24);
    let narrow = tmux.wait("the narrow Closed view", Duration::from_secs(10), |s| {
        (s.contains("How") && !s.contains("Recv")).then(|| s.to_string())
    });
    assert!(narrow.contains("refused"), "{narrow}");
    // The exporter: HELP and a series per ending.
    assert!(metrics.contains("# HELP netlens_tcp_closed"), "{metrics}");
    assert!(
        metrics.contains("netlens_tcp_closed_total{how=\"fin\""),
        "{metrics}"
    );
    assert!(
        metrics.contains("netlens_tcp_closed_lost_total{"),
        "{metrics}"
    );

    // The recording: closed[] in replay --json, and the same Closed view.
    let mut recorder = recorder;
    // A second of samples after the last round, then the recording ends.
    std::thread::sleep(Duration::from_secs(1));
    // SAFETY: kill(2) on the PID of the child this test started.
    unsafe { libc::kill(recorder.0.id() as i32, libc::SIGINT) };
    let status = recorder.0.wait().unwrap();
    let mut said = String::new();
    if let Some(mut stderr) = recorder.0.stderr.take() {
        let _ = std::io::Read::read_to_string(&mut stderr, &mut said);
    }
    assert!(status.success(), "netlens record: {status}: {said}");
    let replay = Command::new(NETLENS)
        .args(["replay", "--json", file.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(replay.status.success());
    let samples = common::parse_lines(&replay.stdout);
    let closed: Vec<&serde_json::Value> = samples
        .iter()
        .filter_map(|s| s["closed"].as_array())
        .flatten()
        .collect();
    let endings: Vec<&str> = closed.iter().filter_map(|c| c["ending"].as_str()).collect();
    assert!(
        endings.contains(&"refused") && endings.contains(&"fin"),
        "{endings:?} in {} samples (record said: {said}); the last one's log: {}",
        samples.len(),
        samples
            .last()
            .map_or(serde_json::Value::Null, |s| s["closed_log"].clone()),
    );
    assert!(
        closed.iter().any(|c| c["ending"] == "fin"
            && c["bytes_sent"] == 1234
            && c["bytes_received"] == 1234),
        "{closed:?}"
    );
    let mut player = Player::new(Reader::open(&file).unwrap()).unwrap();
    player.utc_offset = 0;
    let mut app = App::new(Tab::Sockets, Duration::from_millis(200), false);
    app.start_replay(player);
    assert!(app.on_key(Key::Char('G')));
    assert!(app.on_key(Key::Char('c')));
    let replayed = render(&mut app, 80, 24);
    assert!(
        replayed.contains("refused") && replayed.contains("fin"),
        "{replayed}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A recording made before netlens kept a connection log still reads: no
/// `closed` in its samples, and the Closed view says why it is empty.
#[test]
fn an_older_recording_has_no_log_and_says_so() {
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/v2.0-capture.nlrec");
    let mut player = Player::new(Reader::open(std::path::Path::new(fixture)).unwrap()).unwrap();
    player.utc_offset = 0;
    let mut app = App::new(Tab::Sockets, Duration::from_secs(1), false);
    app.start_replay(player);
    assert!(app.shown().1.is_some_and(|s| s.closed.is_none()));
    assert!(app.on_key(Key::Char('c')));
    let screen = render(&mut app, 80, 24);
    assert!(
        screen.contains("no connection log in this sample"),
        "{screen}"
    );
}
