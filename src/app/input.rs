//! Terminal input: the bytes read from the terminal, turned into keys and
//! clicks.
//!
//! netlens reads the terminal itself rather than through crossterm's event
//! stream, for two reasons. Over SSH (or `tmux send-keys Escape F3`) Esc and
//! the next key's escape sequence often arrive in one read: `\e\eOR` is Esc
//! then F3, where crossterm 0.29 reads Esc, `O`, `R` (and R starts a
//! recording). And a burst of typed text is taken a whole read at a time,
//! then drawn once, instead of one key and one redraw per event.

use super::keymap::Key;
use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;

/// What the terminal sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    Key(Key),
    /// A left-button press at (column, row), counted from 0.
    Click(u16, u16),
}

/// The longest escape sequence kept while waiting for its end; longer ones
/// are dropped (no key netlens knows is that long).
const MAX_SEQUENCE: usize = 64;

/// Turns bytes into inputs, keeping an escape sequence split across reads
/// until its end arrives.
#[derive(Debug, Default)]
pub struct Decoder {
    pending: Vec<u8>,
}

enum Parsed {
    /// An input (or a sequence netlens ignores: None) and the bytes it took.
    Done(Option<Input>, usize),
    /// The bytes so far start a sequence that is not complete.
    Incomplete,
}

impl Decoder {
    /// Decodes `bytes` just read; `more` says whether more are already
    /// waiting to be read. A lone Esc at the end of a read is the Esc key
    /// unless more bytes are waiting (it may start their sequence).
    pub fn feed(&mut self, bytes: &[u8], more: bool, out: &mut Vec<Input>) {
        self.pending.extend_from_slice(bytes);
        let mut at = 0;
        while at < self.pending.len() {
            match parse(&self.pending[at..]) {
                Parsed::Done(input, used) => {
                    out.extend(input);
                    at += used;
                }
                Parsed::Incomplete => {
                    let rest = &self.pending[at..];
                    if rest == b"\x1b" && !more {
                        out.push(Input::Key(Key::Esc));
                        at += 1;
                    } else if rest.len() > MAX_SEQUENCE {
                        at = self.pending.len();
                    }
                    break;
                }
            }
        }
        self.pending.drain(..at);
    }
}

fn key(key: Key, used: usize) -> Parsed {
    Parsed::Done(Some(Input::Key(key)), used)
}

fn parse(bytes: &[u8]) -> Parsed {
    match bytes[0] {
        0x1b => parse_escape(bytes),
        b'\r' | b'\n' => key(Key::Enter, 1),
        b'\t' => key(Key::Tab, 1),
        0x7f | 0x08 => key(Key::Backspace, 1),
        0x00 => key(Key::Ctrl(' '), 1),
        c @ 0x01..=0x1a => key(Key::Ctrl(char::from(c - 1 + b'a')), 1),
        c @ 0x1c..=0x1f => key(Key::Ctrl(char::from(c - 0x1c + b'4')), 1),
        _ => parse_utf8(bytes),
    }
}

fn parse_utf8(bytes: &[u8]) -> Parsed {
    let width = match bytes[0] {
        0x00..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf7 => 4,
        _ => return Parsed::Done(None, 1),
    };
    if bytes.len() < width {
        return Parsed::Incomplete;
    }
    match std::str::from_utf8(&bytes[..width]) {
        Ok(text) => {
            let c = text.chars().next().expect("one character");
            key(Key::Char(c), width)
        }
        Err(_) => Parsed::Done(None, 1),
    }
}

/// Esc, or an SS3 or CSI sequence (`\eOR`, `\e[15~`). Esc followed by
/// anything else is Esc, and the rest is read on its own.
fn parse_escape(bytes: &[u8]) -> Parsed {
    let Some(&second) = bytes.get(1) else {
        return Parsed::Incomplete;
    };
    match second {
        // Esc, then whatever the second Esc starts: parsed on its own.
        0x1b => key(Key::Esc, 1),
        b'O' => match bytes.get(2) {
            None => Parsed::Incomplete,
            Some(&last) => match cursor_key(last) {
                Some(k) => key(k, 3),
                None => Parsed::Done(None, 3),
            },
        },
        b'[' => parse_csi(bytes),
        // Anything else after Esc is its own key: Esc then q typed quickly
        // (over SSH, in one read) is Esc then q, not Alt-q (netlens has no
        // Alt keys; a terminal's Alt-q is read as Esc, q as well).
        _ => key(Key::Esc, 1),
    }
}

/// The final letter of `\eO?` and of an unnumbered `\e[?`.
fn cursor_key(last: u8) -> Option<Key> {
    Some(match last {
        b'A' => Key::Up,
        b'B' => Key::Down,
        b'C' => Key::Right,
        b'D' => Key::Left,
        b'H' => Key::Home,
        b'F' => Key::End,
        b'P'..=b'S' => Key::F(1 + last - b'P'),
        _ => return None,
    })
}

/// `\e[` parameters, intermediates, final byte (ECMA-48), and the X10
/// mouse report `\e[M` with its three bytes.
fn parse_csi(bytes: &[u8]) -> Parsed {
    if bytes.get(2) == Some(&b'M') {
        let Some(report) = bytes.get(3..6) else {
            return Parsed::Incomplete;
        };
        let click = (report[0].wrapping_sub(32) == 0).then(|| {
            Input::Click(
                u16::from(report[1].saturating_sub(33)),
                u16::from(report[2].saturating_sub(33)),
            )
        });
        return Parsed::Done(click, 6);
    }
    for (i, &b) in bytes.iter().enumerate().skip(2) {
        match b {
            0x20..=0x3f => continue,
            0x40..=0x7e => return Parsed::Done(csi_input(&bytes[2..i], b), i + 1),
            // Not a sequence after all: drop what came before this byte,
            // which is read again on its own (an Esc starts anew).
            _ => return Parsed::Done(None, i),
        }
    }
    Parsed::Incomplete
}

fn csi_input(params: &[u8], last: u8) -> Option<Input> {
    let text = std::str::from_utf8(params).ok()?;
    if let Some(sgr) = text.strip_prefix('<') {
        // SGR mouse: button;column;row, M pressed, m released.
        let mut numbers = sgr.split(';').map(|n| n.parse::<u16>().ok());
        let (button, column, row) = (numbers.next()??, numbers.next()??, numbers.next()??);
        return (last == b'M' && button == 0)
            .then(|| Input::Click(column.saturating_sub(1), row.saturating_sub(1)));
    }
    let numbers: Vec<u16> = text.split(';').map(|n| n.parse().unwrap_or(0)).collect();
    let first = numbers.first().copied().unwrap_or(0);
    if last == b'M' && numbers.len() == 3 {
        // urxvt mouse: button+32;column;row.
        return (first == 32)
            .then(|| Input::Click(numbers[1].saturating_sub(1), numbers[2].saturating_sub(1)));
    }
    let k = match last {
        b'Z' => Key::BackTab,
        b'~' => match first {
            1 | 7 => Key::Home,
            4 | 8 => Key::End,
            5 => Key::PageUp,
            6 => Key::PageDown,
            11..=15 => Key::F((first - 10) as u8),
            17..=21 => Key::F((first - 11) as u8),
            23 | 24 => Key::F((first - 12) as u8),
            _ => return None,
        },
        // Modified cursor keys (`\e[1;5A`) are the key.
        _ => cursor_key(last)?,
    };
    Some(Input::Key(k))
}

/// The terminal the live view reads: stdin, or /dev/tty when stdin is not
/// a terminal (as crossterm does).
pub struct Reader {
    fd: AsyncFd<OwnedFd>,
    decoder: Decoder,
    buffer: Vec<u8>,
}

impl Reader {
    pub fn open() -> std::io::Result<Reader> {
        use std::io::IsTerminal;
        let tty = if std::io::stdin().is_terminal() {
            std::io::stdin().as_fd().try_clone_to_owned()?
        } else {
            OwnedFd::from(std::fs::File::open("/dev/tty")?)
        };
        // SAFETY: the descriptor is our own (a dup or just opened) and is
        // closed only when the AsyncFd is dropped.
        let fd = unsafe { AsyncFd::register_with_interest(tty, Interest::READABLE) }
            .map_err(std::io::Error::from)?;
        Ok(Reader {
            fd,
            decoder: Decoder::default(),
            buffer: vec![0; 8192],
        })
    }

    /// Waits for input and returns everything one read brought (none when
    /// it was only part of a sequence). Ok(None): the terminal is gone.
    ///
    /// The descriptor stays blocking (it is the shell's terminal too, and
    /// O_NONBLOCK would outlive netlens); `readable` tells us when a read
    /// will not block.
    pub async fn next(&mut self) -> std::io::Result<Option<Vec<Input>>> {
        loop {
            let mut guard = self.fd.readable().await?;
            let fd = self.fd.get_ref().as_raw_fd();
            if !poll_readable(fd) {
                guard.clear_ready();
                continue;
            }
            // SAFETY: read(2) into our own buffer, within its length.
            let n = unsafe { libc::read(fd, self.buffer.as_mut_ptr().cast(), self.buffer.len()) };
            if n < 0 {
                let error = std::io::Error::last_os_error();
                if error.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                // EIO: the terminal hung up.
                return if error.raw_os_error() == Some(libc::EIO) {
                    Ok(None)
                } else {
                    Err(error)
                };
            }
            if n == 0 {
                return Ok(None);
            }
            let more = poll_readable(fd);
            if !more {
                guard.clear_ready();
            }
            let mut inputs = Vec::new();
            self.decoder
                .feed(&self.buffer[..n as usize], more, &mut inputs);
            return Ok(Some(inputs));
        }
    }
}

/// Whether a read of `fd` would return at once.
fn poll_readable(fd: RawFd) -> bool {
    let mut poll = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: poll(2) on one pollfd we own, without waiting.
    let ready = unsafe { libc::poll(&mut poll, 1, 0) };
    ready > 0 && poll.revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(bytes: &[u8]) -> Vec<Input> {
        let mut out = Vec::new();
        Decoder::default().feed(bytes, false, &mut out);
        out
    }

    fn keys(bytes: &[u8]) -> Vec<Key> {
        decode(bytes)
            .into_iter()
            .map(|input| match input {
                Input::Key(key) => key,
                other => panic!("not a key: {other:?}"),
            })
            .collect()
    }

    #[test]
    fn esc_then_a_sequence_in_one_read_is_esc_then_that_key() {
        assert_eq!(keys(b"\x1b\x1bOR"), [Key::Esc, Key::F(3)]);
        assert_eq!(keys(b"\x1b\x1b[15~"), [Key::Esc, Key::F(5)]);
        assert_eq!(keys(b"\x1b\x1b[21~"), [Key::Esc, Key::F(10)]);
        assert_eq!(keys(b"\x1b\x1b[A"), [Key::Esc, Key::Up]);
        assert_eq!(keys(b"\x1b\x1b\x1b"), [Key::Esc, Key::Esc, Key::Esc]);
        assert_eq!(keys(b"\x1b"), [Key::Esc]);
    }

    #[test]
    fn sequences() {
        assert_eq!(keys(b"\x1bOP\x1b[24~"), [Key::F(1), Key::F(12)]);
        assert_eq!(keys(b"\x1b[1;5C\x1b[Z"), [Key::Right, Key::BackTab]);
        assert_eq!(keys(b"\x1b[5~\x1b[6~"), [Key::PageUp, Key::PageDown]);
        assert_eq!(keys(b"\x1b[H\x1b[4~"), [Key::Home, Key::End]);
        // Esc then a letter is both; unknown sequences are dropped whole.
        assert_eq!(keys(b"\x1bq"), [Key::Esc, Key::Char('q')]);
        assert_eq!(keys(b"\x1b[99~x"), [Key::Char('x')]);
        assert_eq!(
            keys(b"\x1a\x03\r\x7f"),
            [Key::Ctrl('z'), Key::Ctrl('c'), Key::Enter, Key::Backspace]
        );
        assert_eq!(keys("é".as_bytes()), [Key::Char('é')]);
    }

    #[test]
    fn mouse_reports() {
        assert_eq!(decode(b"\x1b[<0;5;3M"), [Input::Click(4, 2)]);
        assert_eq!(decode(b"\x1b[<0;5;3m\x1b[<64;1;1M"), []);
        assert_eq!(decode(b"\x1b[M !\""), [Input::Click(0, 1)]);
    }

    #[test]
    fn a_sequence_split_across_reads_waits_for_its_end() {
        let mut decoder = Decoder::default();
        let mut out = Vec::new();
        decoder.feed(b"a\x1b[1", false, &mut out);
        assert_eq!(out, [Input::Key(Key::Char('a'))]);
        decoder.feed(b"5~", false, &mut out);
        assert_eq!(out[1], Input::Key(Key::F(5)));
        // A lone Esc with more bytes waiting may start their sequence.
        decoder.feed(b"\x1b", true, &mut out);
        assert_eq!(out.len(), 2);
        decoder.feed(b"OR", false, &mut out);
        assert_eq!(out[2], Input::Key(Key::F(3)));
        // A split UTF-8 character too.
        decoder.feed(&"é".as_bytes()[..1], false, &mut out);
        decoder.feed(&"é".as_bytes()[1..], false, &mut out);
        assert_eq!(out[3], Input::Key(Key::Char('é')));
    }
}
