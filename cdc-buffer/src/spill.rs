//! Spill files on local disk: naming, the start-up sweep, the shared write buffer and the
//! read-back source. Only the buffer uses this module; it knows nothing of transactions beyond
//! a file id and a path.
//!
//! ```text
//!  TransactionBuffer --frame bytes--> SpillWriter (one 1 MiB buffer, shared)
//!                                        |  write(2) when full or when another file is next
//!                                        v
//!        <spill dir>/txn-<con>-<usn>.<slot>.<sqn>-<n>.spill   (append-only, no fsync)
//!                                        |
//!  COMMIT: flush, open, ReadAhead (WILLNEED 32 MiB ahead), BufReader 1 MiB
//!          --> codec::FrameReader --> changes, frame by frame
//! ```
//!
//! One write buffer serves every spilled transaction: it belongs to whichever file was written
//! last and is flushed when another file's frame arrives. A single huge transaction therefore
//! writes in 1 MiB blocks, while the memory for buffering stays one block however many
//! transactions have spilled. No file handle is kept between writes to different files, so
//! the number of spilled transactions is not limited by the process's open-file limit.
//!
//! Spill files are not durable state (a restart mines the open transactions again), so
//! nothing is synced to disk.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use cdc_core::ConXid;

/// Size of the shared write buffer and of the read-back buffer.
pub(crate) const IO_BUFFER_BYTES: usize = 1 << 20;

const PREFIX: &str = "txn-";
const SUFFIX: &str = ".spill";

/// The file name of the `seq`-th spill file of this buffer, for transaction `key`.
pub fn spill_file_name(key: ConXid, seq: u64) -> String {
    format!(
        "{PREFIX}{}-{}.{}.{}-{seq}{SUFFIX}",
        key.con, key.xid.usn, key.xid.slot, key.xid.sqn
    )
}

/// Whether a file name is one this crate writes; only those are swept at start, so a spill
/// directory pointed at a shared place never loses anything else.
pub fn is_spill_file_name(name: &str) -> bool {
    name.starts_with(PREFIX) && name.ends_with(SUFFIX) && name.len() > PREFIX.len() + SUFFIX.len()
}

/// Creates the spill directory and removes spill files left by an earlier run. Returns the
/// number removed.
pub(crate) fn prepare_dir(dir: &Path) -> Result<usize, (&'static str, PathBuf, io::Error)> {
    fs::create_dir_all(dir).map_err(|e| ("create the directory of", dir.to_owned(), e))?;
    let entries = fs::read_dir(dir).map_err(|e| ("list the directory of", dir.to_owned(), e))?;
    let mut removed = 0;
    for entry in entries {
        let entry = entry.map_err(|e| ("list the directory of", dir.to_owned(), e))?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if !is_spill_file_name(name) {
            continue;
        }
        let path = entry.path();
        let kind = entry
            .file_type()
            .map_err(|e| ("inspect", path.clone(), e))?;
        if kind.is_dir() {
            continue;
        }
        fs::remove_file(&path).map_err(|e| ("remove leftover", path.clone(), e))?;
        removed += 1;
    }
    Ok(removed)
}

/// How far ahead of the read position read-back asks the kernel to fetch.
const READ_AHEAD_WINDOW: u64 = 32 << 20;

/// A spill file being read back, sequentially.
pub(crate) type SpillReader = BufReader<ReadAhead>;

/// Opens a spill file for reading back, buffered.
pub(crate) fn open_for_read(path: &Path) -> io::Result<(SpillReader, u64)> {
    let file = File::open(path)?;
    let len = file.metadata()?.len();
    let inner = ReadAhead {
        file,
        pos: 0,
        advised_to: 0,
        len,
    };
    Ok((BufReader::with_capacity(IO_BUFFER_BYTES, inner), len))
}

/// Reads a file front to back while asking the kernel to fetch the next window of it
/// (`POSIX_FADV_WILLNEED`). Read-back alternates reading and decoding on one thread; without
/// the hint the disk idles while a block is decoded, and a cold read-back ran at about half
/// the speed of a plain sequential read of the same file.
pub(crate) struct ReadAhead {
    file: File,
    pos: u64,
    advised_to: u64,
    len: u64,
}

impl Read for ReadAhead {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.pos + READ_AHEAD_WINDOW / 2 >= self.advised_to && self.advised_to < self.len {
            advise_will_need(&self.file, self.advised_to, READ_AHEAD_WINDOW);
            self.advised_to += READ_AHEAD_WINDOW;
        }
        let n = self.file.read(buf)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for ReadAhead {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let pos = self.file.seek(to)?;
        self.pos = pos;
        self.advised_to = pos;
        Ok(pos)
    }
}

#[cfg(target_os = "linux")]
fn advise_will_need(file: &File, offset: u64, len: u64) {
    // Only a hint: a kernel that ignores or refuses it changes the speed, not the result.
    let _ = rustix::fs::fadvise(
        file,
        offset,
        std::num::NonZeroU64::new(len),
        rustix::fs::Advice::WillNeed,
    );
}

#[cfg(not(target_os = "linux"))]
fn advise_will_need(_file: &File, _offset: u64, _len: u64) {}

/// Creates an empty spill file (or empties one of the same name).
pub(crate) fn create(path: &Path) -> io::Result<()> {
    File::create(path).map(drop)
}

/// Removes a spill file; one that is already gone counts as removed.
pub(crate) fn remove(path: &Path) -> io::Result<()> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

struct Active {
    id: u64,
    path: PathBuf,
    file: File,
}

/// The shared write buffer, owned by the file written last.
pub(crate) struct SpillWriter {
    buf: Vec<u8>,
    active: Option<Active>,
}

/// A failed spill write: which file, and the operating system's error.
pub(crate) type WriteFailure = (&'static str, PathBuf, io::Error);

impl SpillWriter {
    pub(crate) fn new() -> Self {
        SpillWriter {
            buf: Vec::new(),
            active: None,
        }
    }

    /// Appends frame bytes to file `id` at `path`.
    pub(crate) fn write(&mut self, id: u64, path: &Path, bytes: &[u8]) -> Result<(), WriteFailure> {
        if self.active.as_ref().map(|a| a.id) != Some(id) {
            self.flush_and_close()?;
            let file = OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(|e| ("open", path.to_owned(), e))?;
            self.active = Some(Active {
                id,
                path: path.to_owned(),
                file,
            });
        }
        if self.buf.len() + bytes.len() > IO_BUFFER_BYTES {
            self.flush()?;
        }
        if bytes.len() >= IO_BUFFER_BYTES {
            // A frame as large as the buffer goes straight to the file.
            if let Some(active) = self.active.as_mut() {
                active
                    .file
                    .write_all(bytes)
                    .map_err(|e| ("write", active.path.clone(), e))?;
            }
        } else {
            if self.buf.capacity() == 0 {
                self.buf.reserve_exact(IO_BUFFER_BYTES);
            }
            self.buf.extend_from_slice(bytes);
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), WriteFailure> {
        if let Some(active) = self.active.as_mut() {
            if !self.buf.is_empty() {
                let result = active.file.write_all(&self.buf);
                self.buf.clear();
                result.map_err(|e| ("write", active.path.clone(), e))?;
            }
        } else {
            self.buf.clear();
        }
        Ok(())
    }

    fn flush_and_close(&mut self) -> Result<(), WriteFailure> {
        let result = self.flush();
        self.active = None;
        result
    }

    /// Makes everything written to file `id` visible in the file, and lets go of it.
    pub(crate) fn finish_file(&mut self, id: u64) -> Result<(), WriteFailure> {
        if self.active.as_ref().map(|a| a.id) == Some(id) {
            self.flush_and_close()?;
        }
        Ok(())
    }

    /// Forgets what is buffered for file `id` (it is being deleted).
    pub(crate) fn discard_file(&mut self, id: u64) {
        if self.active.as_ref().map(|a| a.id) == Some(id) {
            self.buf.clear();
            self.active = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cdc_core::{ConId, Xid};

    #[test]
    fn names_are_recognised_and_swept() {
        let key = ConXid::new(ConId(3), Xid::new(5, 12, 900));
        let name = spill_file_name(key, 7);
        assert_eq!(name, "txn-3-5.12.900-7.spill");
        assert!(is_spill_file_name(&name));
        for other in ["txn-.spill", "notes.txt", "txn-1", "x.spill"] {
            assert!(!is_spill_file_name(other), "{other}");
        }

        let dir = tempfile::tempdir().unwrap();
        let spill = dir.path().join("nested");
        fs::create_dir_all(&spill).unwrap();
        fs::write(spill.join(&name), b"old").unwrap();
        fs::write(spill.join("keep.txt"), b"mine").unwrap();
        assert_eq!(prepare_dir(&spill).unwrap(), 1);
        assert!(!spill.join(&name).exists());
        assert!(spill.join("keep.txt").exists());
        // creates a missing directory
        assert_eq!(prepare_dir(&dir.path().join("a/b")).unwrap(), 0);
    }

    #[test]
    fn the_shared_buffer_moves_between_files() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        let mut w = SpillWriter::new();
        w.write(1, &a, b"one").unwrap();
        w.write(2, &b, b"two").unwrap();
        w.write(1, &a, b"three").unwrap();
        let big = vec![7u8; IO_BUFFER_BYTES + 1];
        w.write(1, &a, &big).unwrap();
        w.finish_file(1).unwrap();
        let mut expected = b"onethree".to_vec();
        expected.extend_from_slice(&big);
        assert_eq!(fs::read(&a).unwrap(), expected);
        assert_eq!(fs::read(&b).unwrap(), b"two");
        w.write(2, &b, b"lost").unwrap();
        w.discard_file(2);
        w.finish_file(2).unwrap();
        assert_eq!(fs::read(&b).unwrap(), b"two");
    }
}
