//! Creating files safely as root in shared directories.
//!
//! Every file netlens creates (pcaps, recordings, the config it saves) goes
//! through [`create_private`]: O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600. An
//! existing file, or a symlink planted where the file will go (dangling or
//! not), is refused instead of followed or overwritten. An output the user
//! names ([`create_output`]) may also be an existing character device or
//! FIFO (`capture -w /dev/null`), as tcpdump allows. [`PartialFile`]
//! removes the file again unless the write finished, so a failed write
//! leaves nothing behind.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Creates `path` for writing: never an existing file, never through a
/// symlink, readable by its owner only.
pub fn create_private(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .mode(0o600)
        .open(path)
}

/// An output file the user named on the command line (`capture -w`,
/// `record -o`, `snapshot --record`, the live view's `--record`).
pub struct Output {
    pub file: File,
    /// A new regular file netlens created: it may sync, cut and remove it.
    /// False for the user's character device or FIFO.
    pub created: bool,
}

/// How long an output FIFO may wait for its reader to open it.
pub const FIFO_READER_WAIT: Duration = Duration::from_secs(5);

/// Opens `path` for output as tcpdump -w does for a device: a new file
/// ([`create_private`]), or an existing character device (/dev/null) or
/// FIFO, written to as it is. Never an existing regular file, never
/// through a symlink (O_NOFOLLOW; the type is checked on the opened
/// descriptor, so nothing swapped in after the check is written to). A FIFO
/// is opened without blocking: when no reader has it open within
/// [`FIFO_READER_WAIT`], the error says so.
pub fn create_output(path: &Path) -> io::Result<Output> {
    let exists = match create_private(path) {
        Ok(file) => {
            return Ok(Output {
                file,
                created: true,
            });
        }
        Err(error) if error.kind() == io::ErrorKind::AlreadyExists => error,
        Err(error) => return Err(error),
    };
    let deadline = Instant::now() + FIFO_READER_WAIT;
    let file = loop {
        let opened = OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK | libc::O_NOCTTY)
            .open(path);
        match opened {
            Ok(file) => break file,
            // A FIFO that no process reads yet (ENXIO): wait a little.
            Err(error) if error.raw_os_error() == Some(libc::ENXIO) => {
                let fifo = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_fifo());
                if !fifo {
                    return Err(error); // a device node without its device
                }
                if Instant::now() >= deadline {
                    return Err(io::Error::other(format!(
                        "it is a FIFO that no process opened for reading within {}s",
                        FIFO_READER_WAIT.as_secs()
                    )));
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            // A directory (EISDIR) or a file not ours to write: it exists.
            Err(error) if error.raw_os_error() != Some(libc::ELOOP) => return Err(exists),
            Err(error) => return Err(error),
        }
    };
    let kind = file.metadata()?.file_type();
    if !(kind.is_char_device() || kind.is_fifo()) {
        return Err(exists);
    }
    // Writes block again from here: a slow reader slows the writer down
    // instead of failing it with EAGAIN.
    // SAFETY: fcntl on a descriptor this function owns.
    unsafe {
        let flags = libc::fcntl(file.as_raw_fd(), libc::F_GETFL);
        if flags < 0 || libc::fcntl(file.as_raw_fd(), libc::F_SETFL, flags & !libc::O_NONBLOCK) < 0
        {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(Output {
        file,
        created: false,
    })
}

/// Random bits for the names of files netlens picks itself, so nobody can
/// plant a link under a name in advance (getrandom; the clock and pid if
/// that fails, as O_EXCL refuses a clash anyway).
pub fn random_u64() -> u64 {
    let mut bytes = [0u8; 8];
    // SAFETY: getrandom writes at most bytes.len() bytes into the buffer.
    let got = unsafe { libc::getrandom(bytes.as_mut_ptr().cast(), bytes.len(), 0) };
    if got == bytes.len() as isize {
        return u64::from_ne_bytes(bytes);
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    nanos ^ u64::from(std::process::id()) << 32
}

/// The one-line reason for a failed [`create_private`], naming the path.
pub fn create_error(path: &Path, err: &io::Error) -> String {
    let link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    let why = match err.kind() {
        // O_EXCL refuses a planted link as EEXIST: name it for what it is.
        io::ErrorKind::AlreadyExists if link => {
            "it is a symbolic link (netlens never writes through one)".to_string()
        }
        io::ErrorKind::AlreadyExists => {
            "it already exists (netlens never overwrites a file)".to_string()
        }
        _ if err.raw_os_error() == Some(libc::ELOOP) => {
            "it is a symbolic link (netlens never writes through one)".to_string()
        }
        _ => err.to_string(),
    };
    format!("cannot create {}: {why}", path.display())
}

/// Makes sure `dir` is a directory netlens may write its files into: an
/// existing directory (never a symbolic link to one), or a new one created
/// mode 0700 (its parent must exist). The error is one line.
pub fn private_dir(dir: &Path) -> Result<(), String> {
    use std::os::unix::fs::DirBuilderExt;
    match std::fs::symlink_metadata(dir) {
        Ok(meta) if meta.file_type().is_symlink() => Err(format!(
            "{}: is a symbolic link (netlens never writes through one)",
            dir.display()
        )),
        Ok(meta) if meta.is_dir() => writable(dir),
        Ok(_) => Err(format!("{}: not a directory", dir.display())),
        Err(error) if error.kind() == io::ErrorKind::NotFound => std::fs::DirBuilder::new()
            .mode(0o700)
            .create(dir)
            .map_err(|e| format!("cannot create the directory {}: {e}", dir.display())),
        Err(error) => Err(format!(
            "cannot use the directory {}: {error}",
            dir.display()
        )),
    }
}

/// Whether files can be created in `dir` (a read-only mount refuses even
/// root): the error is one line.
fn writable(dir: &Path) -> Result<(), String> {
    use std::os::unix::ffi::OsStrExt;
    let Ok(name) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return Err(format!("{}: a NUL byte in the name", dir.display()));
    };
    // SAFETY: a valid C string; access only reads it.
    if unsafe { libc::access(name.as_ptr(), libc::W_OK | libc::X_OK) } != 0 {
        let error = io::Error::last_os_error();
        return Err(format!("{}: cannot write there: {error}", dir.display()));
    }
    Ok(())
}

/// Creates the new directory `dir`, mode 0700: never an existing one, never
/// through a symlink (mkdir refuses both).
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new().mode(0o700).create(dir)
}

/// A newly created file that is removed on drop unless [`PartialFile::keep`]
/// was called: a write that fails halfway leaves no partial file.
pub struct PartialFile {
    file: Option<File>,
    path: PathBuf,
}

impl PartialFile {
    /// Creates `path` with [`create_private`]; the error is one line.
    pub fn create_private(path: &Path) -> Result<PartialFile, String> {
        let file = create_private(path).map_err(|e| create_error(path, &e))?;
        Ok(PartialFile {
            file: Some(file),
            path: path.to_path_buf(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn file(&mut self) -> &mut File {
        self.file.as_mut().expect("present until keep or drop")
    }

    /// The write finished: keep the file and hand it over.
    pub fn keep(mut self) -> File {
        self.file.take().expect("present until keep or drop")
    }
}

impl Drop for PartialFile {
    fn drop(&mut self) {
        if self.file.take().is_some() {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::unix::fs::PermissionsExt;

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("netlens-safe-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn creates_0600_and_refuses_existing_files_and_symlinks() {
        let dir = temp_dir("create");
        let path = dir.join("new");
        create_private(&path).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let err = create_private(&path).unwrap_err();
        assert!(create_error(&path, &err).contains("already exists"));

        let target = dir.join("target");
        std::fs::write(&target, b"keep").unwrap();
        let link = dir.join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert!(create_private(&link).is_err());
        assert_eq!(std::fs::read(&target).unwrap(), b"keep");

        let dangling = dir.join("dangling");
        std::os::unix::fs::symlink(dir.join("nowhere"), &dangling).unwrap();
        assert!(create_private(&dangling).is_err());
        assert!(!dir.join("nowhere").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn outputs_may_be_devices_never_existing_files_or_symlinks() {
        let dir = temp_dir("output");
        let new = create_output(&dir.join("new")).unwrap();
        assert!(new.created);
        let null = create_output(Path::new("/dev/null")).unwrap();
        assert!(!null.created);
        // SAFETY: fcntl F_GETFL on a descriptor the test owns.
        let flags = unsafe { libc::fcntl(null.file.as_raw_fd(), libc::F_GETFL) };
        assert_eq!(flags & libc::O_NONBLOCK, 0, "writes block again");

        let existing = dir.join("existing");
        std::fs::write(&existing, b"keep").unwrap();
        let err = create_output(&existing).err().unwrap();
        assert!(create_error(&existing, &err).contains("already exists"));
        assert!(create_output(&dir).is_err());
        let link = dir.join("link");
        std::os::unix::fs::symlink("/dev/null", &link).unwrap();
        let err = create_output(&link).err().unwrap();
        assert!(create_error(&link, &err).contains("symbolic link"));
        assert_eq!(std::fs::read(&existing).unwrap(), b"keep");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn partial_file_is_removed_unless_kept() {
        let dir = temp_dir("partial");
        let dropped = dir.join("dropped");
        {
            let mut file = PartialFile::create_private(&dropped).unwrap();
            file.file().write_all(b"half").unwrap();
        }
        assert!(!dropped.exists());
        let kept = dir.join("kept");
        let mut file = PartialFile::create_private(&kept).unwrap();
        file.file().write_all(b"whole").unwrap();
        file.keep();
        assert_eq!(std::fs::read(&kept).unwrap(), b"whole");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
