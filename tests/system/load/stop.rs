//! The library API the Load tab uses: a stop ends every kind of run.

use super::*;

/// The library API the Load tab uses: a stop ends a long run at once.
#[test]
fn a_stop_ends_every_kind_at_once() {
    use netlens::load::serve::{ServeSpec, Server};
    use netlens::load::{Spec, Stop, http, probe, tcp, udp};
    let server = Server::start(
        &ServeSpec {
            bind: "127.0.0.1".parse().unwrap(),
            port: 0,
            delay: Duration::ZERO,
            body: 100,
        },
        Arc::new(|_, _| {}),
    )
    .unwrap();
    let to = server.addr;
    let long = Duration::from_secs(60);
    let interval = Duration::from_millis(200);
    let specs = [
        Spec::Tcp(tcp::TcpSpec {
            to,
            duration: long,
            streams: 2,
            bitrate: 0,
            reverse: false,
            interval,
        }),
        Spec::Tcp(tcp::TcpSpec {
            to,
            duration: long,
            streams: 1,
            bitrate: 0,
            reverse: true,
            interval,
        }),
        Spec::Udp(udp::UdpSpec {
            to,
            duration: long,
            bitrate: 10_000_000,
            size: 500,
            interval,
        }),
        Spec::Http(
            http::HttpSpec::new(
                &format!("http://{to}/"),
                4,
                long,
                2,
                Duration::from_secs(2),
                0.0,
                interval,
            )
            .unwrap(),
        ),
        Spec::Probe(probe::ProbeSpec {
            to,
            count: 1000,
            every: Duration::from_millis(100),
            timeout: Duration::from_secs(1),
        }),
    ];
    for spec in specs {
        let stop = Stop::new();
        let intervals = Arc::new(Mutex::new(0));
        let started = Instant::now();
        let runner = {
            let stop = stop.clone();
            let intervals = intervals.clone();
            let spec = spec.clone();
            thread::spawn(move || {
                spec.run(&stop, &|_| *intervals.lock().unwrap() += 1)
                    .map(|o| o.json)
            })
        };
        thread::sleep(Duration::from_millis(700));
        stop.stop();
        let stopped_at = Instant::now();
        let json = runner.join().unwrap().unwrap();
        assert!(
            stopped_at.elapsed() < Duration::from_secs(2),
            "{spec:?} took {:?} to stop",
            stopped_at.elapsed()
        );
        assert!(started.elapsed() < Duration::from_secs(10));
        assert_eq!(json["stopped"], true, "{json}");
        assert!(
            *intervals.lock().unwrap() >= 2,
            "{spec:?} reported no interval"
        );
    }
    server.stop();
}
