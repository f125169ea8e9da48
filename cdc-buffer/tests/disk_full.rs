//! A full spill volume stops the task with CDC-4001 carrying the operating system's message.
//!
//! Two ways to fill a volume: a real 256 KiB tmpfs (needs the privilege to mount; the test
//! says why it skips when it lacks it, and always unmounts), and a spill file that is a
//! symlink to /dev/full, which answers every write with ENOSPC.

// Helpers outside #[test] functions may fail the test the same way the tests do.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use cdc_buffer::TransactionBuffer;
use cdc_core::{CdcCode, CdcError};
use common::*;

const ENOSPC_TEXT: &str = "No space left on device";

/// Unmounts on drop, so a failing assertion leaves no mount behind.
struct Mount(PathBuf);

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

fn mount_small_tmpfs(at: &Path) -> Result<Mount, String> {
    let output = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=256k", "tmpfs"])
        .arg(at)
        .output()
        .map_err(|e| format!("cannot run mount: {e}"))?;
    if output.status.success() {
        Ok(Mount(at.to_owned()))
    } else {
        Err(format!(
            "mount -t tmpfs refused ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        ))
    }
}

#[test]
fn a_full_tmpfs_volume_is_cdc_4001_with_the_os_message() {
    let dir = tempfile::tempdir().unwrap();
    let mnt = dir.path().join("spill");
    std::fs::create_dir(&mnt).unwrap();
    let _mount = match mount_small_tmpfs(&mnt) {
        Ok(mount) => mount,
        Err(reason) => {
            println!("skipped: a size-limited volume cannot be mounted here: {reason}");
            return;
        }
    };
    let mut b = TransactionBuffer::open(settings(&mnt, 0)).unwrap();
    let k = key(3, 5, 1, 900);
    let mut error = None;
    // 256 KiB fill after a few hundred 4 KiB changes; the 1 MiB write buffer meets it at
    // its first flush
    for n in 0..2_000 {
        if let Err(e) = b.append(k, change(n, Some("A"), 4_000)) {
            error = Some(e);
            break;
        }
    }
    let error = match error {
        Some(e) => e,
        None => b.commit(k).map(|_| ()).unwrap_err(),
    };
    assert_eq!(error.code(), CdcCode::BufferExhausted);
    let text = CdcError::from(error).to_string();
    assert!(
        text.starts_with("[CDC-4001] could not write spill file"),
        "{text}"
    );
    assert!(text.contains(ENOSPC_TEXT), "{text}");
    assert!(text.contains("3:5.1.900 (user unknown"), "{text}");
    drop(b);
}

#[test]
fn a_write_error_from_dev_full_is_cdc_4001_with_the_os_message() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = TransactionBuffer::open(settings(dir.path(), 0)).unwrap();
    let k = key(3, 5, 1, 900);
    // the first spill file this buffer creates for k
    let path = dir.path().join(cdc_buffer::spill::spill_file_name(k, 1));
    std::os::unix::fs::symlink("/dev/full", &path).unwrap();
    b.append(k, change(1, Some("A"), 10)).unwrap();
    assert_eq!(b.transaction(k).unwrap().spill_path(), Some(path.as_path()));
    // the frame waits in the write buffer; reading back at COMMIT flushes it
    let error = b.commit(k).map(|_| ()).unwrap_err();
    assert_eq!(error.code(), CdcCode::BufferExhausted);
    let text = error.to_string();
    assert!(text.contains(ENOSPC_TEXT), "{text}");
    assert!(text.contains(&path.display().to_string()), "{text}");
    let again = b.append(k, change(2, Some("A"), 10)).unwrap_err();
    assert_eq!(again.code(), CdcCode::BufferExhausted);
}
