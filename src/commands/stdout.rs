//! Printing to stdout without panicking. Rust ignores SIGPIPE, so print!
//! panics when the reader has gone (`netlens man | head -1`) or the device
//! is full (`> /dev/full`). Commands print through [`print`] or map their
//! write errors with [`error`]; main.rs then ends a closed pipe quietly
//! with status 0 (as `ss | head` does) and any other failure with one line
//! and status 1.

use std::fmt;
use std::io::{self, Write};

/// Writing to stdout failed.
#[derive(Debug)]
pub struct StdoutError(pub io::Error);

impl StdoutError {
    /// The reader closed the pipe: it has all it wanted, not an error.
    pub fn is_closed_pipe(&self) -> bool {
        self.0.kind() == io::ErrorKind::BrokenPipe
    }
}

impl fmt::Display for StdoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot write to stdout: {}", self.0)
    }
}

impl std::error::Error for StdoutError {}

/// `error` as a [`StdoutError`].
pub fn error(error: io::Error) -> anyhow::Error {
    StdoutError(error).into()
}

/// Writes `text` to stdout and flushes it (an error in the flush is one
/// too: a full device refuses the last line only there).
pub fn print(text: impl AsRef<[u8]>) -> anyhow::Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_ref())
        .and_then(|()| out.flush())
        .map_err(error)
}

/// Stdout that remembers how its last write failed, so a command whose
/// printer returns its own error type can still tell a closed pipe (the
/// reader has all it wanted) from a real failure, without downcasting.
pub struct Stdout {
    out: io::StdoutLock<'static>,
    failed: Option<io::ErrorKind>,
}

impl Stdout {
    pub fn lock() -> Self {
        Stdout {
            out: io::stdout().lock(),
            failed: None,
        }
    }

    /// A write failed because the reader closed the pipe.
    pub fn closed_pipe(&self) -> bool {
        self.failed == Some(io::ErrorKind::BrokenPipe)
    }

    fn note<T>(&mut self, result: io::Result<T>) -> io::Result<T> {
        if let Err(e) = &result {
            self.failed = Some(e.kind());
        }
        result
    }
}

impl Write for Stdout {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let written = self.out.write(bytes);
        self.note(written)
    }

    fn flush(&mut self) -> io::Result<()> {
        let flushed = self.out.flush();
        self.note(flushed)
    }
}

/// Whether `error` is a closed stdout pipe, anywhere in its chain.
pub fn is_closed_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|e| {
        e.downcast_ref::<StdoutError>()
            .is_some_and(StdoutError::is_closed_pipe)
    })
}
