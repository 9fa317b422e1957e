//! Step 1, disk: sequential read and write bandwidth of the filesystem that holds the
//! workspace, 1 MiB blocks, at queue depth 1 (one thread) and 4 (four threads taking the next
//! block in turn, so the file is written without holes), O_DIRECT with aligned buffers, each
//! run time-capped and repeated (median, min, max).
//!
//! Protocol: reference/ceilings.md §4.6. A serial reader only reaches the QD1 figure; virtual
//! and NVMe disks need depth to reach their ceiling (§5.2). Where O_DIRECT is refused (tmpfs on
//! older kernels, some overlay and FUSE filesystems) the probe falls back to buffered I/O with
//! `fdatasync` + `posix_fadvise(DONTNEED)` and says so in `method`.
//!
//! The temporary file is removed on every path: [`TempFile`] deletes it on drop (errors
//! included), and [`install_interrupt_handler`] deletes every registered file on Ctrl-C.

use std::fs::File;
use std::io;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::ceilings::model::Spread;

/// Block size of every request (1 MiB, as fio `--bs=1M`).
pub const BLOCK: usize = 1 << 20;
/// Buffer, offset and length alignment for O_DIRECT (covers 512 B and 4 KiB logical blocks).
const ALIGN: usize = 4096;

/// Files the probe has created and not yet removed, for the Ctrl-C handler.
static LIVE_TEMP_FILES: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Removes every live temporary file, then exits 130 (128 + SIGINT) on Ctrl-C / SIGTERM.
/// Installing twice is harmless (the second attempt is ignored).
///
/// The handler is the program's one handler in [`crate::cleanup`], so scratch copies made later
/// by step 4 in the same `audit` run are covered too.
pub fn install_interrupt_handler() {
    let _ = crate::cleanup::install();
}

/// Deletes the files of [`LIVE_TEMP_FILES`] (the interrupt path).
pub fn remove_live_temp_files() {
    let paths = match LIVE_TEMP_FILES.lock() {
        Ok(mut paths) => std::mem::take(&mut *paths),
        Err(poisoned) => std::mem::take(&mut *poisoned.into_inner()),
    };
    for path in paths {
        let _ = std::fs::remove_file(path);
    }
}

/// A temporary file that is removed when dropped and, until then, by the Ctrl-C handler.
#[derive(Debug)]
pub struct TempFile {
    path: PathBuf,
}

impl TempFile {
    /// Registers a fresh hidden name in `dir`; the file itself is created by the opener.
    #[must_use]
    pub fn register(dir: &Path) -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let path = dir.join(format!(
            ".efficiency-audit-disk-{}-{nanos}.tmp",
            std::process::id()
        ));
        if let Ok(mut live) = LIVE_TEMP_FILES.lock() {
            live.push(path.clone());
        }
        crate::cleanup::register(&path);
        Self { path }
    }

    /// Where the file is.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
        crate::cleanup::unregister(&self.path);
        if let Ok(mut live) = LIVE_TEMP_FILES.lock() {
            live.retain(|p| p != &self.path);
        }
    }
}

/// The I/O calls the probe makes on its file: the seam where tests inject failures.
pub trait DiskFile: Send + Sync {
    /// Positional write of one block.
    fn write_at(&self, buf: &[u8], offset: u64) -> io::Result<usize>;
    /// Positional read of one block.
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize>;
    /// `fdatasync`: written data is on the device.
    fn sync_data(&self) -> io::Result<()>;
    /// Drops cached pages of the file (needed by the buffered fallback, a no-op for O_DIRECT).
    fn drop_cache(&self) -> io::Result<()>;
    /// Reserves `len` bytes so the write phase does not measure block allocation.
    fn preallocate(&self, len: u64) -> io::Result<()>;
}

/// Opens the probe's file.
pub trait DiskOpener {
    /// Creates (truncating) `path`, with O_DIRECT when `direct`.
    fn open(&self, path: &Path, direct: bool) -> io::Result<Box<dyn DiskFile>>;
}

/// The real filesystem.
#[derive(Debug, Clone, Copy, Default)]
pub struct OsOpener;

impl DiskOpener for OsOpener {
    fn open(&self, path: &Path, direct: bool) -> io::Result<Box<dyn DiskFile>> {
        let mut options = std::fs::OpenOptions::new();
        options
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600);
        if direct {
            options.custom_flags(nix::libc::O_DIRECT);
        }
        Ok(Box::new(OsFile(options.open(path)?)))
    }
}

/// A real file.
#[derive(Debug)]
struct OsFile(File);

impl DiskFile for OsFile {
    fn write_at(&self, buf: &[u8], offset: u64) -> io::Result<usize> {
        self.0.write_at(buf, offset)
    }
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        self.0.read_at(buf, offset)
    }
    fn sync_data(&self) -> io::Result<()> {
        self.0.sync_data()
    }
    fn drop_cache(&self) -> io::Result<()> {
        nix::fcntl::posix_fadvise(
            &self.0,
            0,
            0,
            nix::fcntl::PosixFadviseAdvice::POSIX_FADV_DONTNEED,
        )
        .map_err(io::Error::from)
    }
    fn preallocate(&self, len: u64) -> io::Result<()> {
        let len = i64::try_from(len).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        nix::fcntl::fallocate(&self.0, nix::fcntl::FallocateFlags::empty(), 0, len)
            .map_err(io::Error::from)
    }
}

/// How long and how much the disk probe writes.
#[derive(Debug, Clone, Copy)]
pub struct DiskPlan {
    /// Largest file (bytes); also capped at a quarter of the free space.
    pub file_bytes: u64,
    /// Time cap of one run (one direction, one depth).
    pub run_time: Duration,
    /// Rounds of (write QD1, write QD4, read QD1, read QD4).
    pub rounds: usize,
}

impl DiskPlan {
    /// The real measurement: 512 MiB file, 3 rounds of 4 runs × 0.35 s ≈ 4.5 s.
    pub const FULL: Self = Self {
        file_bytes: 512 << 20,
        run_time: Duration::from_millis(350),
        rounds: 3,
    };
    /// 16 MiB, 2 rounds of 4 short runs: for tests.
    pub const QUICK: Self = Self {
        file_bytes: 16 << 20,
        run_time: Duration::from_millis(40),
        rounds: 2,
    };
}

/// Read and write bandwidth at QD1 and QD4.
#[derive(Debug, Clone, PartialEq)]
pub struct DiskResult {
    /// `o_direct ...` or `buffered+fadvise ...`.
    pub method: String,
    /// Read QD1 and QD4 (MB/s).
    pub read: [Spread; 2],
    /// Write QD1 and QD4 (MB/s).
    pub write: [Spread; 2],
}

/// Why the disk could not be measured.
#[derive(Debug, thiserror::Error)]
pub enum DiskError {
    /// Not enough free space for a meaningful file.
    #[error(
        "only {free_mib} MiB free in {dir}: the disk probe needs {needed_mib} MiB free (it writes at most a quarter of the free space); free some space or pass --workspace on a larger filesystem"
    )]
    NoSpace {
        /// Folder probed.
        dir: PathBuf,
        /// Free MiB.
        free_mib: u64,
        /// MiB of free space the probe needs.
        needed_mib: u64,
    },
    /// An I/O call failed.
    #[error("{what} in {dir}: {source}")]
    Io {
        /// The call.
        what: &'static str,
        /// Folder probed.
        dir: PathBuf,
        /// The OS error.
        source: io::Error,
    },
}

/// Filesystem type of `dir`: the name from `/proc/self/mountinfo` (longest mount point that
/// contains it), else from the `statfs` magic number, else `unknown`.
#[must_use]
pub fn filesystem_type(dir: &Path) -> String {
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    if let Ok(text) = std::fs::read_to_string("/proc/self/mountinfo")
        && let Some(fs) = fs_from_mountinfo(&text, &dir)
    {
        return fs;
    }
    #[allow(
        clippy::unnecessary_cast,
        reason = "f_type is i64 on x86_64 Linux but another integer type on other targets"
    )]
    let magic = |s: nix::sys::statfs::Statfs| s.filesystem_type().0 as i64;
    nix::sys::statfs::statfs(&dir)
        .map(|s| fs_from_magic(magic(s)).to_owned())
        .unwrap_or_else(|_| "unknown".to_owned())
}

/// The filesystem type of the longest mount point containing `dir` in a mountinfo text
/// (`36 35 98:0 / /mnt rw,noatime master:1 - ext3 /dev/root rw`).
#[must_use]
pub fn fs_from_mountinfo(text: &str, dir: &Path) -> Option<String> {
    text.lines()
        .filter_map(|line| {
            let mut fields = line.split(' ');
            let mount_point = fields.nth(4)?;
            let (_, after) = line.split_once(" - ")?;
            let fs = after.split(' ').next()?;
            Some((unescape_mount(mount_point), fs.to_owned()))
        })
        .filter(|(mount_point, _)| dir.starts_with(mount_point))
        .max_by_key(|(mount_point, _)| mount_point.as_os_str().len())
        .map(|(_, fs)| fs)
}

/// Mountinfo escapes space, tab, newline and backslash as octal (`\040`).
fn unescape_mount(field: &str) -> PathBuf {
    PathBuf::from(
        field
            .replace("\\040", " ")
            .replace("\\011", "\t")
            .replace("\\012", "\n")
            .replace("\\134", "\\"),
    )
}

/// Names of common `statfs` magic numbers (linux/magic.h).
#[must_use]
pub fn fs_from_magic(magic: i64) -> &'static str {
    match magic {
        0xEF53 => "ext2/3/4",
        0x5846_5342 => "xfs",
        0x9123_683E => "btrfs",
        0x2FC1_2FC1 => "zfs",
        0x0102_1994 => "tmpfs",
        0x8584_58F6 => "ramfs",
        0x794C_7630 => "overlay",
        0x6969 => "nfs",
        0x6573_5546 => "fuse",
        0xFF53_4D42 => "cifs",
        _ => "unknown",
    }
}

/// Free bytes for unprivileged users in `dir`.
fn free_bytes(dir: &Path) -> Option<u64> {
    let s = nix::sys::statfs::statfs(dir).ok()?;
    Some(s.blocks_available() as u64 * s.block_size() as u64)
}

/// Measures `dir`. The temporary file is gone when this returns, whatever happened.
pub fn probe(
    dir: &Path,
    plan: &DiskPlan,
    opener: &dyn DiskOpener,
) -> Result<DiskResult, DiskError> {
    let io_err = |what: &'static str| {
        let dir = dir.to_path_buf();
        move |source| DiskError::Io { what, dir, source }
    };
    let free = free_bytes(dir).unwrap_or(plan.file_bytes * 4);
    let blocks = plan.file_bytes.min(free / 4) / BLOCK as u64;
    let needed = plan.file_bytes.min(64 << 20);
    if blocks * (BLOCK as u64) < needed {
        return Err(DiskError::NoSpace {
            dir: dir.to_path_buf(),
            free_mib: free >> 20,
            needed_mib: (4 * needed) >> 20,
        });
    }
    let temp = TempFile::register(dir);
    let (mut file, direct) =
        open_file(temp.path(), opener).map_err(io_err("cannot create a test file"))?;
    let buffers: Vec<AlignedBlock> = (0..4).map(AlignedBlock::random).collect();

    let mut read = [Vec::new(), Vec::new()];
    let mut write = [Vec::new(), Vec::new()];
    let mut written_blocks = 0;
    for _ in 0..plan.rounds.max(1) {
        for (slot, depth) in [(0, 1), (1, 4)] {
            // Every write run gets a fresh, truncated file, as a program writing a new file
            // (and fio) sees it: overwriting blocks already written skips the filesystem's
            // allocation work and read 1.7x faster than fio on ext4 here.
            file = opener
                .open(temp.path(), direct)
                .map_err(io_err("cannot recreate the test file"))?;
            // Best effort, as fio's `fallocate=native`: without it allocation is measured too.
            let _ = file.preallocate(blocks * BLOCK as u64);
            let run = timed_run(
                file.as_ref(),
                &buffers[..depth],
                blocks,
                plan.run_time,
                Op::Write,
            )
            .map_err(io_err("write failed"))?;
            file.sync_data().map_err(io_err("fdatasync failed"))?;
            let seconds = run.started.elapsed().as_secs_f64();
            let _ = file.drop_cache();
            written_blocks = run.blocks;
            write[slot].push(mbs(run.blocks, seconds));
        }
        for (slot, depth) in [(0, 1), (1, 4)] {
            let _ = file.drop_cache();
            // Only what was written: reading unwritten (preallocated) extents costs no I/O.
            let run = timed_run(
                file.as_ref(),
                &buffers[..depth],
                written_blocks,
                plan.run_time,
                Op::Read,
            )
            .map_err(io_err("read failed"))?;
            read[slot].push(mbs(run.blocks, run.started.elapsed().as_secs_f64()));
        }
    }
    drop(file);
    drop(temp);
    let method = if direct {
        "o_direct, 1 MiB blocks, QD1 = 1 thread, QD4 = 4 threads taking the next block; pwrite to a fresh preallocated file + fdatasync / pread"
    } else {
        "buffered+fadvise (O_DIRECT refused by this filesystem): 1 MiB blocks, QD1 = 1 thread, QD4 = 4 threads; pwrite to a fresh file + fdatasync, posix_fadvise(DONTNEED) before reads"
    };
    let [r1, r4] = read;
    let [w1, w4] = write;
    Ok(DiskResult {
        method: format!(
            "{method}; {} MiB file, {} ms cap per run",
            (blocks * BLOCK as u64) >> 20,
            plan.run_time.as_millis()
        ),
        read: [spread(r1), spread(r4)],
        write: [spread(w1), spread(w4)],
    })
}

/// Opens with O_DIRECT and checks that an aligned write is accepted; otherwise reopens
/// buffered (tmpfs on older kernels refuses the open, some FUSE filesystems the write).
fn open_file(path: &Path, opener: &dyn DiskOpener) -> io::Result<(Box<dyn DiskFile>, bool)> {
    if let Ok(file) = opener.open(path, true) {
        let probe = AlignedBlock::random(9);
        match file.write_at(probe.bytes(), 0) {
            Ok(_) => return Ok((file, true)),
            Err(err) if err.raw_os_error() == Some(nix::libc::EINVAL) => {}
            Err(err) => return Err(err),
        }
    }
    Ok((opener.open(path, false)?, false))
}

/// MB/s (decimal).
fn mbs(blocks: u64, seconds: f64) -> f64 {
    (blocks * BLOCK as u64) as f64 / 1e6 / seconds.max(1e-9)
}

/// Median, min, max of the runs.
#[must_use]
pub fn spread(mut values: Vec<f64>) -> Spread {
    values.sort_by(f64::total_cmp);
    let runs = values.len();
    let median = match runs {
        0 => 0.0,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    };
    Spread {
        median,
        min: values.first().copied().unwrap_or(0.0),
        max: values.last().copied().unwrap_or(0.0),
        runs,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Read,
    Write,
}

struct Run {
    started: Instant,
    blocks: u64,
}

/// One run: `buffers.len()` threads each take the next block number until `limit` blocks or
/// the time cap; the first error stops every thread.
fn timed_run(
    file: &dyn DiskFile,
    buffers: &[AlignedBlock],
    limit: u64,
    cap: Duration,
    op: Op,
) -> io::Result<Run> {
    let next = AtomicU64::new(0);
    let done = AtomicU64::new(0);
    let failed: Mutex<Option<io::Error>> = Mutex::new(None);
    let started = Instant::now();
    let deadline = started + cap;
    std::thread::scope(|scope| {
        for buffer in buffers {
            let (next, done, failed) = (&next, &done, &failed);
            scope.spawn(move || {
                let mut scratch = AlignedBlock::zeroed();
                loop {
                    if Instant::now() >= deadline || failed.lock().map_or(true, |f| f.is_some()) {
                        break;
                    }
                    let block = next.fetch_add(1, Ordering::Relaxed);
                    if block >= limit {
                        break;
                    }
                    let offset = block * BLOCK as u64;
                    let result = match op {
                        Op::Write => file.write_at(buffer.bytes(), offset),
                        Op::Read => file.read_at(scratch.bytes_mut(), offset),
                    };
                    match result {
                        Ok(n) if n == BLOCK => {
                            done.fetch_add(1, Ordering::Relaxed);
                        }
                        Ok(n) => {
                            let short = io::Error::new(
                                io::ErrorKind::UnexpectedEof,
                                format!("short transfer: {n} of {BLOCK} bytes at offset {offset}"),
                            );
                            if let Ok(mut slot) = failed.lock() {
                                slot.get_or_insert(short);
                            }
                            break;
                        }
                        Err(err) => {
                            if let Ok(mut slot) = failed.lock() {
                                slot.get_or_insert(err);
                            }
                            break;
                        }
                    }
                }
            });
        }
    });
    let error = match failed.into_inner() {
        Ok(error) => error,
        Err(poisoned) => poisoned.into_inner(),
    };
    match error {
        Some(err) => Err(err),
        None => Ok(Run {
            started,
            blocks: done.into_inner(),
        }),
    }
}

/// A 1 MiB buffer at a 4 KiB-aligned address (O_DIRECT), filled with pseudo-random bytes so
/// compressing or deduplicating storage cannot make writes look free.
struct AlignedBlock {
    storage: Vec<u8>,
    start: usize,
}

impl AlignedBlock {
    fn zeroed() -> Self {
        let storage = vec![0_u8; BLOCK + ALIGN];
        let start = storage.as_ptr().align_offset(ALIGN).min(ALIGN);
        Self { storage, start }
    }

    fn random(seed: u64) -> Self {
        let Self { mut storage, start } = Self::zeroed();
        let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        for chunk in storage.chunks_mut(8) {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            for (byte, value) in chunk.iter_mut().zip(state.to_le_bytes()) {
                *byte = value;
            }
        }
        Self { storage, start }
    }

    fn bytes(&self) -> &[u8] {
        &self.storage[self.start..self.start + BLOCK]
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.storage[self.start..self.start + BLOCK]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Wraps the real file and fails the `fail_after`-th write with ENOSPC.
    struct FailingOpener {
        fail_after: u64,
    }

    struct FailingFile {
        inner: Box<dyn DiskFile>,
        writes: AtomicU64,
        fail_after: u64,
    }

    impl DiskOpener for FailingOpener {
        fn open(&self, path: &Path, direct: bool) -> io::Result<Box<dyn DiskFile>> {
            Ok(Box::new(FailingFile {
                inner: OsOpener.open(path, direct)?,
                writes: AtomicU64::new(0),
                fail_after: self.fail_after,
            }))
        }
    }

    impl DiskFile for FailingFile {
        fn write_at(&self, buf: &[u8], offset: u64) -> io::Result<usize> {
            if self.writes.fetch_add(1, Ordering::Relaxed) >= self.fail_after {
                return Err(io::Error::from_raw_os_error(nix::libc::ENOSPC));
            }
            self.inner.write_at(buf, offset)
        }
        fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
            self.inner.read_at(buf, offset)
        }
        fn sync_data(&self) -> io::Result<()> {
            self.inner.sync_data()
        }
        fn drop_cache(&self) -> io::Result<()> {
            self.inner.drop_cache()
        }
        fn preallocate(&self, len: u64) -> io::Result<()> {
            self.inner.preallocate(len)
        }
    }

    fn entries(dir: &Path) -> Vec<PathBuf> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect()
    }

    #[test]
    fn a_write_error_is_reported_and_the_temp_file_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        // The first file only takes the O_DIRECT check; each write run reopens it, and the
        // first run's 6th write fails.
        let err = probe(
            dir.path(),
            &DiskPlan::QUICK,
            &FailingOpener { fail_after: 5 },
        )
        .unwrap_err();
        let message = err.to_string();
        assert!(message.contains("write failed"), "{message}");
        assert!(
            entries(dir.path()).is_empty(),
            "left behind: {:?}",
            entries(dir.path())
        );
        assert!(
            LIVE_TEMP_FILES
                .lock()
                .unwrap()
                .iter()
                .all(|p| !p.starts_with(dir.path()))
        );
    }

    #[test]
    fn a_failing_first_write_is_reported_and_cleaned_up() {
        let dir = tempfile::tempdir().unwrap();
        let err = probe(
            dir.path(),
            &DiskPlan::QUICK,
            &FailingOpener { fail_after: 0 },
        )
        .unwrap_err();
        assert!(err.to_string().contains("No space left"), "{err}");
        assert!(entries(dir.path()).is_empty());
    }

    #[test]
    fn a_successful_probe_leaves_nothing_and_reports_every_depth() {
        let dir = tempfile::tempdir().unwrap();
        let result = probe(dir.path(), &DiskPlan::QUICK, &OsOpener).unwrap();
        assert!(entries(dir.path()).is_empty());
        for s in result.read.iter().chain(&result.write) {
            assert_eq!(s.runs, 2);
            assert!(
                s.min <= s.median && s.median <= s.max && s.min > 0.0,
                "{s:?}"
            );
        }
    }

    /// A filesystem that refuses O_DIRECT at open time, as tmpfs did before Linux 6.6.
    struct NoDirect;

    impl DiskOpener for NoDirect {
        fn open(&self, path: &Path, direct: bool) -> io::Result<Box<dyn DiskFile>> {
            if direct {
                return Err(io::Error::from_raw_os_error(nix::libc::EINVAL));
            }
            OsOpener.open(path, false)
        }
    }

    #[test]
    fn without_o_direct_it_falls_back_to_buffered_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let result = probe(dir.path(), &DiskPlan::QUICK, &NoDirect).unwrap();
        assert!(
            result.method.starts_with("buffered+fadvise"),
            "{}",
            result.method
        );
        assert!(result.read[1].median > 0.0);
        assert!(entries(dir.path()).is_empty());
    }

    #[test]
    fn interrupt_path_removes_registered_files() {
        let dir = tempfile::tempdir().unwrap();
        let temp = TempFile::register(dir.path());
        std::fs::write(temp.path(), b"x").unwrap();
        remove_live_temp_files();
        assert!(entries(dir.path()).is_empty());
        drop(temp);
    }

    #[test]
    fn mountinfo_picks_the_longest_mount_point() {
        let text = "22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw,discard\n\
                    30 22 0:25 / /dev/shm rw,nosuid shared:2 - tmpfs tmpfs rw\n\
                    31 22 0:26 / /my\\040disk rw - xfs /dev/vdb rw\n";
        assert_eq!(
            fs_from_mountinfo(text, Path::new("/work/x")).as_deref(),
            Some("ext4")
        );
        assert_eq!(
            fs_from_mountinfo(text, Path::new("/dev/shm/a")).as_deref(),
            Some("tmpfs")
        );
        assert_eq!(
            fs_from_mountinfo(text, Path::new("/my disk/a")).as_deref(),
            Some("xfs")
        );
        assert_eq!(fs_from_magic(0x0102_1994), "tmpfs");
    }

    #[test]
    fn spread_has_median_min_max() {
        let s = spread(vec![3.0, 1.0, 2.0, 10.0]);
        assert_eq!((s.median, s.min, s.max, s.runs), (2.5, 1.0, 10.0, 4));
    }

    #[test]
    fn buffers_are_aligned_for_o_direct() {
        let block = AlignedBlock::random(1);
        assert_eq!(block.bytes().as_ptr() as usize % ALIGN, 0);
        assert_eq!(block.bytes().len(), BLOCK);
    }
}
