//! `load tcp` against an iperf3 server (`iperf3 -s`), speaking iperf3's
//! protocol as its own client does (iperf 3.x, src/iperf_client_api.c).
//!
//! The control connection starts with a 37-byte cookie (36 characters and a
//! NUL). The server then drives the test with one-byte states:
//! PARAM_EXCHANGE (the client sends its parameters as JSON, a 4-byte
//! big-endian length first), CREATE_STREAMS (the client opens the data
//! connections, each sending the cookie first), TEST_START, TEST_RUNNING
//! (data flows). The client ends with TEST_END; at EXCHANGE_RESULTS each side
//! sends its per-stream byte counts as JSON (the client first); at
//! DISPLAY_RESULTS the client answers IPERF_DONE and closes. Streams are
//! numbered 1, 3, 4, ... as iperf3 numbers them (iperf_add_stream).
//!
//! The same cookie tells the two servers apart: an iperf3 server answers it
//! with PARAM_EXCHANGE; `netlens load serve` closes the connection at once
//! (a NUL byte is neither its tcp header nor HTTP).

use super::tcp::BUFFER;
use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

pub const COOKIE_SIZE: usize = 37;
pub type Cookie = [u8; COOKIE_SIZE];

const TEST_START: i8 = 1;
const TEST_RUNNING: i8 = 2;
const TEST_END: i8 = 4;
const PARAM_EXCHANGE: i8 = 9;
const CREATE_STREAMS: i8 = 10;
const SERVER_TERMINATE: i8 = 11;
const EXCHANGE_RESULTS: i8 = 13;
const DISPLAY_RESULTS: i8 = 14;
const IPERF_DONE: i8 = 16;
const ACCESS_DENIED: i8 = -1;
const SERVER_ERROR: i8 = -2;

/// Largest results JSON accepted from a server (iperf3's own limit is 8 MB;
/// ours only carries byte counts).
const MAX_JSON: usize = 1024 * 1024;
/// How long the server may take to answer a state of the test.
const ANSWER: Duration = Duration::from_secs(10);

/// Which server is at the destination.
pub enum Server {
    /// An iperf3 server: the control connection, past its PARAM_EXCHANGE.
    Iperf3 { control: TcpStream, cookie: Cookie },
    /// Not iperf3 (`netlens load serve` closes the probe at once).
    Other,
}

/// A fresh cookie, as iperf3's make_cookie: 36 characters of its alphabet
/// and a NUL.
fn cookie() -> Cookie {
    const ALPHABET: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";
    let mut random = [0u8; COOKIE_SIZE - 1];
    // SAFETY: getrandom writes at most `random.len()` bytes into `random`.
    let filled = unsafe { libc::getrandom(random.as_mut_ptr().cast(), random.len(), 0) };
    if filled != random.len() as isize {
        // A unique enough fallback: the cookie only has to differ from
        // other clients' running at the same time.
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
            ^ u128::from(std::process::id());
        for (i, byte) in random.iter_mut().enumerate() {
            *byte = (seed >> ((i * 5) % 120)) as u8 ^ i as u8;
        }
    }
    let mut cookie = [0u8; COOKIE_SIZE];
    for (out, r) in cookie.iter_mut().zip(random) {
        *out = ALPHABET[usize::from(r) % ALPHABET.len()];
    }
    cookie
}

/// Connects to `to` and sends an iperf3 cookie: an iperf3 server answers
/// PARAM_EXCHANGE, anything else closes or stays silent.
pub fn probe(to: SocketAddr) -> Result<Server> {
    let mut control =
        TcpStream::connect_timeout(&to, Duration::from_secs(3)).with_context(|| {
            format!(
                "cannot connect to {to} (is `netlens load serve` or `iperf3 -s` running there?)"
            )
        })?;
    let _ = control.set_nodelay(true);
    let cookie = cookie();
    control
        .write_all(&cookie)
        .with_context(|| format!("cannot send to {to}"))?;
    control.set_read_timeout(Some(Duration::from_secs(2)))?;
    let mut first = [0u8; 1];
    let state = match control.read(&mut first) {
        Ok(1) => first[0] as i8,
        // Closed or reset: not an iperf3 server. Silence too: an older
        // `netlens load serve` waits for more.
        Ok(_) => return Ok(Server::Other),
        Err(e)
            if matches!(
                e.kind(),
                ErrorKind::ConnectionReset | ErrorKind::WouldBlock | ErrorKind::TimedOut
            ) =>
        {
            return Ok(Server::Other);
        }
        Err(e) => return Err(e).with_context(|| format!("cannot read from {to}")),
    };
    match state {
        PARAM_EXCHANGE => Ok(Server::Iperf3 { control, cookie }),
        ACCESS_DENIED => bail!(
            "the iperf3 server at {to} is busy with another test (iperf3 -s runs one at a time); \
             try again when it is done"
        ),
        SERVER_ERROR => bail!(
            "the iperf3 server at {to} refused the test: {}",
            server_error(&mut control)
        ),
        _ => bail!(
            "{to} answered {:?}: neither `netlens load serve` nor an iperf3 server",
            String::from_utf8_lossy(&first)
        ),
    }
}

/// The two 4-byte big-endian numbers after SERVER_ERROR: iperf3's error code
/// and errno.
fn server_error(control: &mut TcpStream) -> String {
    let mut codes = [0u8; 8];
    match control.read_exact(&mut codes) {
        Ok(()) => {
            let code = i32::from_be_bytes(codes[..4].try_into().unwrap_or_default());
            let errno = i32::from_be_bytes(codes[4..].try_into().unwrap_or_default());
            if errno == 0 {
                format!("iperf3 error {code}")
            } else {
                format!(
                    "iperf3 error {code} ({})",
                    std::io::Error::from_raw_os_error(errno)
                )
            }
        }
        Err(_) => "no detail".into(),
    }
}

fn read_state(control: &mut TcpStream) -> Result<i8> {
    control.set_read_timeout(Some(ANSWER))?;
    let mut state = [0u8; 1];
    control
        .read_exact(&mut state)
        .context("the iperf3 server closed the control connection")?;
    Ok(state[0] as i8)
}

/// Fails with what an unexpected state means.
fn unexpected(control: &mut TcpStream, state: i8, waiting_for: &str) -> anyhow::Error {
    match state {
        ACCESS_DENIED => anyhow::anyhow!("the iperf3 server denied the test"),
        SERVER_ERROR => anyhow::anyhow!("the iperf3 server failed: {}", server_error(control)),
        SERVER_TERMINATE => anyhow::anyhow!("the iperf3 server was stopped during the test"),
        _ => anyhow::anyhow!(
            "the iperf3 server sent state {state} while netlens waited for {waiting_for}"
        ),
    }
}

fn write_json(control: &mut TcpStream, value: &Value) -> Result<()> {
    let text = value.to_string();
    let mut message = u32::try_from(text.len())
        .context("JSON too large")?
        .to_be_bytes()
        .to_vec();
    message.extend_from_slice(text.as_bytes());
    control
        .write_all(&message)
        .context("cannot send to the iperf3 server")
}

fn read_json(control: &mut TcpStream) -> Result<Value> {
    let mut length = [0u8; 4];
    control
        .read_exact(&mut length)
        .context("the iperf3 server sent no results")?;
    let length = u32::from_be_bytes(length) as usize;
    if length > MAX_JSON {
        bail!("the iperf3 server's results are {length} bytes (at most {MAX_JSON} accepted)");
    }
    let mut text = vec![0u8; length];
    control
        .read_exact(&mut text)
        .context("the iperf3 server's results were cut short")?;
    serde_json::from_slice(&text).context("the iperf3 server's results are not JSON")
}

/// What the test asks of the server.
pub struct Params {
    pub streams: u32,
    pub duration: Duration,
    pub reverse: bool,
    /// Bits per second per stream; 0 for unlimited.
    pub rate: u64,
}

/// Sends the parameters and opens the data streams; returns them once the
/// server says TEST_RUNNING.
pub fn start(
    to: SocketAddr,
    control: &mut TcpStream,
    cookie: &Cookie,
    params: &Params,
) -> Result<Vec<TcpStream>> {
    // iperf3 counts whole seconds; the client ends the test itself.
    let seconds = params.duration.as_secs_f64().ceil().max(1.0) as u64;
    let mut request = json!({
        "tcp": true, "omit": 0, "time": seconds, "num": 0, "blockcount": 0,
        "parallel": params.streams, "len": BUFFER, "pacing_timer": 1000,
        "client_version": concat!("netlens ", env!("CARGO_PKG_VERSION")),
    });
    if params.reverse {
        request["reverse"] = json!(true);
    }
    if params.rate > 0 {
        request["bandwidth"] = json!(params.rate);
    }
    write_json(control, &request)?;
    let mut streams = Vec::new();
    loop {
        match read_state(control)? {
            CREATE_STREAMS => {
                for _ in 0..params.streams {
                    let mut stream = TcpStream::connect_timeout(&to, Duration::from_secs(3))
                        .with_context(|| format!("cannot open a data connection to {to}"))?;
                    stream
                        .write_all(cookie)
                        .context("cannot send the cookie on a data connection")?;
                    streams.push(stream);
                }
            }
            TEST_START => {}
            TEST_RUNNING if streams.len() == params.streams as usize => return Ok(streams),
            state => return Err(unexpected(control, state, "the test to start")),
        }
    }
}

/// One stream's figures for the results exchange.
pub struct StreamResult {
    pub bytes: u64,
    /// None when this side received.
    pub retransmits: Option<u64>,
    pub seconds: f64,
}

/// Ends the test (TEST_END), exchanges results and returns, per stream in
/// order, the byte count the server reports for it.
pub fn finish(
    control: &mut TcpStream,
    ours: &[StreamResult],
    cpu_percent: (f64, f64, f64),
    sender: bool,
) -> Result<Vec<Option<u64>>> {
    control
        .write_all(&[TEST_END as u8])
        .context("cannot end the test on the iperf3 server")?;
    let mut theirs = Vec::new();
    loop {
        match read_state(control)? {
            EXCHANGE_RESULTS => {
                let streams: Vec<Value> = ours
                    .iter()
                    .enumerate()
                    .map(|(i, s)| {
                        json!({
                            "id": stream_id(i), "bytes": s.bytes,
                            "retransmits": s.retransmits.map_or(-1, |r| r as i64),
                            "jitter": 0, "errors": 0, "packets": 0,
                            "start_time": 0, "end_time": s.seconds,
                        })
                    })
                    .collect();
                write_json(
                    control,
                    &json!({
                        "cpu_util_total": cpu_percent.0, "cpu_util_user": cpu_percent.1,
                        "cpu_util_system": cpu_percent.2,
                        "sender_has_retransmits": if sender { 1 } else { -1 },
                        "streams": streams,
                    }),
                )?;
                let results = read_json(control)?;
                theirs = (0..ours.len())
                    .map(|i| server_bytes(&results, stream_id(i)))
                    .collect();
            }
            DISPLAY_RESULTS => {
                let _ = control.write_all(&[IPERF_DONE as u8]);
                return Ok(theirs);
            }
            state => return Err(unexpected(control, state, "the results")),
        }
    }
}

/// iperf3's number for the `index`th stream: 1, 3, 4, ...
fn stream_id(index: usize) -> usize {
    if index == 0 { 1 } else { index + 2 }
}

fn server_bytes(results: &Value, id: usize) -> Option<u64> {
    results["streams"]
        .as_array()?
        .iter()
        .find(|s| s["id"].as_u64() == Some(id as u64))?["bytes"]
        .as_u64()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cookies_look_like_iperf3s() {
        let a = cookie();
        assert_eq!(a[36], 0);
        assert!(
            a[..36]
                .iter()
                .all(|b| b"abcdefghijklmnopqrstuvwxyz234567".contains(b))
        );
        assert_ne!(a, cookie());
    }

    #[test]
    fn streams_are_numbered_as_iperf3_does() {
        assert_eq!((0..4).map(stream_id).collect::<Vec<_>>(), [1, 3, 4, 5]);
        let results = json!({"streams": [{"id": 3, "bytes": 7}, {"id": 1, "bytes": 5}]});
        assert_eq!(server_bytes(&results, 1), Some(5));
        assert_eq!(server_bytes(&results, 3), Some(7));
        assert_eq!(server_bytes(&results, 4), None);
    }
}
