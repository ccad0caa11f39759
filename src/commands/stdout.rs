//! Printing to stdout without panicking. Rust ignores SIGPIPE, so print!
//! panics when the reader has gone (`netlens man | head -1`) or the device
//! is full (`> /dev/full`). Commands print through [`print`] or map their
//! write errors with [`error`]; main.rs then ends a closed pipe quietly
//! with status 0 (as `ss | head` does) and any other failure with one line
//! and status 1.

use std::fmt;
use std::io::{self, Write};

/// Writing to stdout failed: the reader went away, or the write did.
/// Told apart once, where the write fails; callers match the variant.
#[derive(Debug)]
pub enum StdoutError {
    /// The reader closed the pipe: it has all it wanted, not an error.
    ClosedPipe(io::Error),
    /// Any other failure (a full device).
    Failed(io::Error),
}

impl From<io::Error> for StdoutError {
    fn from(error: io::Error) -> Self {
        if error.kind() == io::ErrorKind::BrokenPipe {
            StdoutError::ClosedPipe(error)
        } else {
            StdoutError::Failed(error)
        }
    }
}

impl fmt::Display for StdoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StdoutError::ClosedPipe(error) | StdoutError::Failed(error) => {
                write!(f, "cannot write to stdout: {error}")
            }
        }
    }
}

impl std::error::Error for StdoutError {}

/// `error` as a [`StdoutError`].
pub fn error(error: io::Error) -> anyhow::Error {
    StdoutError::from(error).into()
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
    closed_pipe: bool,
}

impl Stdout {
    pub fn lock() -> Self {
        Stdout {
            out: io::stdout().lock(),
            closed_pipe: false,
        }
    }

    /// A write failed because the reader closed the pipe.
    pub fn closed_pipe(&self) -> bool {
        self.closed_pipe
    }

    fn note<T>(&mut self, result: io::Result<T>) -> io::Result<T> {
        result.map_err(|error| match StdoutError::from(error) {
            StdoutError::ClosedPipe(error) => {
                self.closed_pipe = true;
                error
            }
            StdoutError::Failed(error) => {
                self.closed_pipe = false;
                error
            }
        })
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
        matches!(
            e.downcast_ref::<StdoutError>(),
            Some(StdoutError::ClosedPipe(_))
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::Context;

    #[test]
    fn a_closed_pipe_is_told_by_its_type_through_context() {
        let closed = Err::<(), _>(error(io::ErrorKind::BrokenPipe.into()))
            .context("printing the table")
            .unwrap_err();
        assert!(is_closed_pipe(&closed));
        let full = error(io::Error::from_raw_os_error(libc::ENOSPC));
        assert!(!is_closed_pipe(&full));
        assert!(full.to_string().starts_with("cannot write to stdout: "));
        // A bare io::Error is not stdout's: it is not taken for a closed pipe.
        assert!(!is_closed_pipe(
            &io::Error::from(io::ErrorKind::BrokenPipe).into()
        ));
    }
}
