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

/// Whether `error` is a closed stdout pipe, anywhere in its chain.
pub fn is_closed_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|e| {
        e.downcast_ref::<StdoutError>()
            .is_some_and(StdoutError::is_closed_pipe)
    })
}
