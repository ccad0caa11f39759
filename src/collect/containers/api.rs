//! Docker's and Podman's API on their unix sockets, for a container whose
//! state files are not readable: one `GET /containers/ID/json` (the Docker
//! API, which Podman also serves) per unknown id, on a worker thread of its
//! own so a stalled daemon never holds up the sampler. Each request has a
//! deadline and the response a size limit.

use super::Names;
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, SyncSender, TryRecvError, TrySendError, sync_channel};
use std::time::{Duration, Instant};

/// A whole exchange (connect, request, response) takes at most this long.
pub const DEADLINE: Duration = Duration::from_millis(500);
/// An inspect answer is a few kB; more than this is not one.
pub const MAX_RESPONSE: usize = 1024 * 1024;
/// Ids waiting for the worker; more wait in the resolver's cache.
const QUEUE: usize = 64;

/// One lookup: a container id and the sockets to ask, in order.
struct Request {
    id: String,
    sockets: Vec<PathBuf>,
}

/// The worker thread, started on the first lookup.
pub struct Worker {
    requests: SyncSender<Request>,
    answers: Receiver<(String, Option<Names>)>,
}

impl Worker {
    pub fn start() -> std::io::Result<Worker> {
        let (requests, inbox) = sync_channel::<Request>(QUEUE);
        let (outbox, answers) = sync_channel(QUEUE);
        std::thread::Builder::new()
            .name("netlens-containers".into())
            .spawn(move || {
                for request in inbox {
                    let names = ask_sockets(&request.sockets, &request.id);
                    if outbox.send((request.id, names)).is_err() {
                        return;
                    }
                }
            })?;
        Ok(Worker { requests, answers })
    }

    /// Queues a lookup; false when the queue is full or the worker gone
    /// (the caller asks again later).
    pub fn ask(&self, id: &str, sockets: Vec<PathBuf>) -> bool {
        let request = Request {
            id: id.to_string(),
            sockets,
        };
        !matches!(
            self.requests.try_send(request),
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_))
        )
    }

    /// The answers that arrived, without waiting.
    pub fn answers(&self) -> Vec<(String, Option<Names>)> {
        let mut out = Vec::new();
        loop {
            match self.answers.try_recv() {
                Ok(answer) => out.push(answer),
                Err(TryRecvError::Empty | TryRecvError::Disconnected) => return out,
            }
        }
    }
}

/// The names of container `id` from the first of `sockets` that exists
/// and knows it.
pub fn ask_sockets(sockets: &[PathBuf], id: &str) -> Option<Names> {
    sockets
        .iter()
        .filter(|path| path.exists())
        .find_map(|path| inspect(path, id).ok().flatten())
}

/// The container's names from the API at `socket`: Ok(None) when the
/// daemon does not know the id.
pub fn inspect(socket: &std::path::Path, id: &str) -> Result<Option<Names>, String> {
    if !id.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return Err("not a container id".into());
    }
    let (status, body) = get(socket, &format!("/containers/{id}/json"))?;
    match status {
        200 => super::files::parse_inspect(&body).map(Some),
        404 => Ok(None),
        other => Err(format!("HTTP status {other}")),
    }
}

/// One HTTP/1.1 GET over the unix socket: the status and the body.
pub fn get(socket: &std::path::Path, path: &str) -> Result<(u16, Vec<u8>), String> {
    // One deadline for the whole exchange: connect, write and each read
    // get what is left of it, not a fresh allowance each.
    let deadline = Instant::now() + DEADLINE;
    let left = || {
        deadline
            .checked_duration_since(Instant::now())
            .filter(|d| !d.is_zero())
            .ok_or_else(|| "timed out".to_string())
    };
    let mut stream = connect(socket, left()?)?;
    stream
        .set_write_timeout(Some(left()?))
        .map_err(|e| e.to_string())?;
    let request = format!("GET {path} HTTP/1.1\r\nHost: d\r\nConnection: close\r\n\r\n");
    stream
        .write_all(request.as_bytes())
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => "timed out".into(),
            _ => e.to_string(),
        })?;
    let mut response = Vec::new();
    let mut buffer = [0u8; 16 * 1024];
    loop {
        stream
            .set_read_timeout(Some(left()?))
            .map_err(|e| e.to_string())?;
        let n = match stream.read(&mut buffer) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return Err("timed out".into());
            }
            Err(e) => return Err(e.to_string()),
        };
        if n == 0 {
            break;
        }
        if response.len() + n > MAX_RESPONSE {
            return Err(format!("response over {MAX_RESPONSE} bytes"));
        }
        response.extend_from_slice(&buffer[..n]);
        // Done once the whole declared body is in, whether or not the
        // server closes.
        if let Some(Ok((_, body))) = complete(&response) {
            return Ok((status_of(&response)?, body));
        }
    }
    let status = status_of(&response)?;
    match complete(&response) {
        Some(done) => Ok((status, done?.1)),
        // Closed: a body without a length runs to the close.
        None => {
            let end = response
                .windows(4)
                .position(|w| w == b"\r\n\r\n")
                .ok_or("truncated response")?;
            let head = String::from_utf8_lossy(&response[..end]).to_ascii_lowercase();
            if head.contains("content-length:") || head.contains("transfer-encoding:") {
                return Err("truncated response".into());
            }
            Ok((status, response[end + 4..].to_vec()))
        }
    }
}

/// A stream connected to the unix socket at `path` within `timeout`.
/// A unix socket's connect waits while the listener's backlog is full (a
/// daemon that stopped accepting, or a socket a user made and never
/// serves) for as long as the socket's send timeout: set before connect,
/// it bounds that wait (std's UnixStream::connect would wait forever).
fn connect(path: &std::path::Path, timeout: Duration) -> Result<UnixStream, String> {
    use std::os::fd::{FromRawFd, OwnedFd};
    use std::os::unix::ffi::OsStrExt;
    let bytes = path.as_os_str().as_bytes();
    // SAFETY: sockaddr_un is plain data; all zeroes is a valid value.
    let mut address: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    if bytes.len() >= address.sun_path.len() || bytes.contains(&0) {
        return Err(format!("socket path too long: {}", path.display()));
    }
    address.sun_family = libc::AF_UNIX as libc::sa_family_t;
    for (to, from) in address.sun_path.iter_mut().zip(bytes) {
        *to = *from as libc::c_char;
    }
    // SAFETY: plain system call; the descriptor is owned right after.
    let fd = unsafe { libc::socket(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error().to_string());
    }
    // SAFETY: fd is a new descriptor nothing else owns.
    let stream = UnixStream::from(unsafe { OwnedFd::from_raw_fd(fd) });
    stream
        .set_write_timeout(Some(timeout))
        .map_err(|e| e.to_string())?;
    let length = std::mem::size_of::<libc::sa_family_t>() + bytes.len() + 1;
    loop {
        // SAFETY: address is a valid sockaddr_un of at least `length` bytes.
        let done = unsafe {
            libc::connect(
                fd,
                (&raw const address).cast::<libc::sockaddr>(),
                length as libc::socklen_t,
            )
        };
        if done == 0 {
            return Ok(stream);
        }
        let error = std::io::Error::last_os_error();
        match error.raw_os_error() {
            Some(libc::EINTR) => continue,
            // The send timeout ran out with the backlog still full.
            Some(libc::EAGAIN | libc::ETIMEDOUT) => return Err("timed out".into()),
            _ => return Err(error.to_string()),
        }
    }
}

fn status_of(response: &[u8]) -> Result<u16, String> {
    let line = response.split(|&b| b == b'\n').next().unwrap_or_default();
    let line = std::str::from_utf8(line).map_err(|_| "bad status line")?;
    let mut parts = line.split_whitespace();
    match (parts.next(), parts.next().and_then(|s| s.parse().ok())) {
        (Some(v), Some(code)) if v.starts_with("HTTP/1.") => Ok(code),
        _ => Err(format!("bad status line {:?}", line.trim())),
    }
}

/// The body once the response holds all of it: by Content-Length, by the
/// last chunk of a chunked body. None while more is due.
fn complete(response: &[u8]) -> Option<Result<(usize, Vec<u8>), String>> {
    let end = response.windows(4).position(|w| w == b"\r\n\r\n")? + 4;
    let head = String::from_utf8_lossy(&response[..end]).to_ascii_lowercase();
    let body = &response[end..];
    let header = |name: &str| {
        head.lines()
            .find_map(|l| l.strip_prefix(name)?.trim().into())
            .map(str::to_string)
    };
    if header("transfer-encoding:").is_some_and(|v| v.contains("chunked")) {
        return dechunk(body).map(|r| r.map(|b| (end, b)));
    }
    match header("content-length:") {
        Some(len) => match len.parse::<usize>() {
            Ok(len) if body.len() >= len => Some(Ok((end, body[..len].to_vec()))),
            Ok(_) => None,
            Err(_) => Some(Err("bad Content-Length".into())),
        },
        // Neither: the body runs to the close, which the caller waits for.
        None => None,
    }
}

/// A chunked body, once its last (empty) chunk is in.
fn dechunk(mut body: &[u8]) -> Option<Result<Vec<u8>, String>> {
    let mut out = Vec::new();
    loop {
        let line_end = body.windows(2).position(|w| w == b"\r\n")?;
        let size_text = String::from_utf8_lossy(&body[..line_end]);
        let size_text = size_text.split(';').next().unwrap_or_default().trim();
        let Ok(size) = usize::from_str_radix(size_text, 16) else {
            return Some(Err(format!("bad chunk size {size_text:?}")));
        };
        if size > MAX_RESPONSE {
            return Some(Err("chunk too large".into()));
        }
        let start = line_end + 2;
        if size == 0 {
            return Some(Ok(out));
        }
        if body.len() < start + size + 2 {
            return None;
        }
        out.extend_from_slice(&body[start..start + size]);
        body = &body[start + size + 2..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::net::UnixListener;

    const ID: &str = "3f2a1b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a";

    /// A test's directory, removed when the test ends.
    struct Dir(PathBuf);

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// A socket path in a directory of the test's own (kept while the
    /// returned `Dir` lives).
    fn socket_path(name: &str) -> (Dir, PathBuf) {
        let dir = std::env::temp_dir().join(format!("netlens-api-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("docker.sock");
        (Dir(dir), path)
    }

    /// A server that reads one request and answers with `reply` (None:
    /// never answers, holding the connection open), and hands back the
    /// request it read.
    fn serve(path: &PathBuf, reply: Option<Vec<u8>>) -> std::thread::JoinHandle<String> {
        let listener = UnixListener::bind(path).unwrap();
        std::thread::spawn(move || {
            let (mut conn, _) = listener.accept().unwrap();
            let mut request = Vec::new();
            let mut buffer = [0u8; 1024];
            while !request.ends_with(b"\r\n\r\n") {
                let n = conn.read(&mut buffer).unwrap();
                if n == 0 {
                    break;
                }
                request.extend_from_slice(&buffer[..n]);
            }
            match reply {
                Some(bytes) => conn.write_all(&bytes).unwrap(),
                // Stalled: hold the connection until the client gives up.
                None => {
                    let _ = conn.read(&mut buffer);
                }
            }
            String::from_utf8_lossy(&request).into_owned()
        })
    }

    fn inspect_json() -> String {
        format!(
            r#"{{"Id":"{ID}","Name":"/shop-web","Config":{{"Hostname":"3f2a1b9c8d7e","Labels":{{"io.kubernetes.pod.name":"shop-7d9f","io.kubernetes.pod.namespace":"prod"}}}},"State":{{"Pid":4242}}}}"#
        )
    }

    #[test]
    fn names_a_container_from_a_content_length_answer() {
        let (_dir, path) = socket_path("length");
        let body = inspect_json();
        let reply = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        let server = serve(&path, Some(reply.into_bytes()));
        let names = inspect(&path, ID).unwrap().unwrap();
        assert_eq!(names.name.as_deref(), Some("shop-web"));
        assert_eq!(names.pod.as_deref(), Some("shop-7d9f"));
        assert_eq!(names.k8s_namespace.as_deref(), Some("prod"));
        let request = server.join().unwrap();
        assert!(
            request.starts_with(&format!("GET /containers/{ID}/json HTTP/1.1\r\n")),
            "{request}"
        );
    }

    #[test]
    fn names_a_container_from_a_chunked_answer() {
        let (_dir, path) = socket_path("chunked");
        let body = inspect_json();
        let (a, b) = body.split_at(40);
        let reply = format!(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{a}\r\n{:x}\r\n{b}\r\n0\r\n\r\n",
            a.len(),
            b.len()
        );
        let server = serve(&path, Some(reply.into_bytes()));
        let names = inspect(&path, ID).unwrap().unwrap();
        assert_eq!(names.name.as_deref(), Some("shop-web"));
        server.join().unwrap();
    }

    #[test]
    fn an_unknown_id_is_none_and_bad_answers_are_errors() {
        let (_dir, path) = socket_path("404");
        let server = serve(
            &path,
            Some(b"HTTP/1.1 404 Not Found\r\nContent-Length: 2\r\n\r\n{}".to_vec()),
        );
        assert_eq!(inspect(&path, ID).unwrap(), None);
        server.join().unwrap();

        let (_dir, path) = socket_path("junk");
        let server = serve(&path, Some(b"SSH-2.0-OpenSSH\r\n\r\n".to_vec()));
        assert!(inspect(&path, ID).unwrap_err().contains("status line"));
        server.join().unwrap();

        let (_dir, path) = socket_path("huge");
        let mut huge = format!(
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n",
            MAX_RESPONSE + 10
        )
        .into_bytes();
        huge.resize(huge.len() + MAX_RESPONSE + 10, b' ');
        let server = std::thread::spawn({
            let listener = UnixListener::bind(&path).unwrap();
            move || {
                let (mut conn, _) = listener.accept().unwrap();
                let _ = conn.write_all(&huge);
            }
        });
        assert!(inspect(&path, ID).unwrap_err().contains("over"));
        server.join().unwrap();

        assert!(
            inspect(&path, "../../etc").is_err(),
            "ids are hex, not paths"
        );
    }

    /// A listener whose backlog is full: listen(0), then connections
    /// nobody accepts until one more would wait. Kept open by the caller.
    fn full_backlog(path: &PathBuf) -> (UnixListener, Vec<std::os::fd::OwnedFd>) {
        use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
        let listener = UnixListener::bind(path).unwrap();
        // SAFETY: plain system calls on descriptors this test owns.
        assert_eq!(unsafe { libc::listen(listener.as_raw_fd(), 0) }, 0);
        let address = std::os::unix::net::SocketAddr::from_pathname(path).unwrap();
        let mut queued = Vec::new();
        for _ in 0..64 {
            let fd = unsafe {
                libc::socket(
                    libc::AF_UNIX,
                    libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                    0,
                )
            };
            assert!(fd >= 0);
            let fd = unsafe { OwnedFd::from_raw_fd(fd) };
            let mut raw: libc::sockaddr_un = unsafe { std::mem::zeroed() };
            raw.sun_family = libc::AF_UNIX as libc::sa_family_t;
            let bytes =
                std::os::unix::ffi::OsStrExt::as_bytes(address.as_pathname().unwrap().as_os_str());
            for (to, from) in raw.sun_path.iter_mut().zip(bytes) {
                *to = *from as libc::c_char;
            }
            let length = std::mem::size_of::<libc::sa_family_t>() + bytes.len() + 1;
            let done = unsafe {
                libc::connect(
                    fd.as_raw_fd(),
                    (&raw const raw).cast(),
                    length as libc::socklen_t,
                )
            };
            if done != 0 {
                let error = std::io::Error::last_os_error();
                assert_eq!(error.raw_os_error(), Some(libc::EAGAIN), "{error}");
                return (listener, queued);
            }
            queued.push(fd);
        }
        panic!("the backlog of {} never filled", path.display());
    }

    #[test]
    fn a_full_backlog_times_out_at_the_deadline() {
        let (_dir, path) = socket_path("backlog");
        let full = full_backlog(&path);
        let (done, answer) = std::sync::mpsc::channel();
        let started = Instant::now();
        std::thread::spawn({
            let path = path.clone();
            move || done.send(inspect(&path, ID))
        });
        // Bounded: a connect that waits for the backlog would hang here.
        let result = answer
            .recv_timeout(DEADLINE * 6)
            .expect("the lookup still waits on a full backlog after 3 s");
        assert_eq!(result.unwrap_err(), "timed out");
        let took = started.elapsed();
        assert!(took < DEADLINE + Duration::from_millis(250), "{took:?}");
        drop(full);
    }

    #[test]
    fn a_stalled_daemon_times_out_and_never_blocks_the_caller() {
        let (_dir, path) = socket_path("stalled");
        let server = serve(&path, None);
        // Straight: the exchange gives up at its deadline.
        assert_eq!(inspect(&path, ID).unwrap_err(), "timed out");
        server.join().unwrap();

        // Through the worker: asking returns at once, the answer arrives
        // (as unknown) once the deadline passed.
        let server = {
            let _ = std::fs::remove_file(&path);
            serve(&path, None)
        };
        let worker = Worker::start().unwrap();
        assert!(worker.ask(ID, vec![path.clone()]));
        assert!(worker.answers().is_empty(), "nothing waited for");
        let answer = loop {
            if let Some(answer) = worker.answers().pop() {
                break answer;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        assert_eq!(answer, (ID.to_string(), None));
        server.join().unwrap();
    }
}
