//! Runs the user's benchmark command once: `sh -c CMD` in a scratch copy, in its own process
//! group, with a per-run timeout that kills the whole group (grandchildren included), output
//! captured with a size bound, and optionally the saturation sampler watching the group.
//!
//! [`CommandRunner`] is the seam: the experiment protocol only sees [`RunOutput`] values, so
//! its decisions can be exercised with recorded outputs; [`SystemRunner`] is the real thing.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::sampler::{ProcessSampling, Sampler, SamplerConfig};
use crate::cleanup;

/// Default bound on the captured bytes of each stream: 1 MiB (the first and last 512 KiB).
pub const DEFAULT_CAPTURE_LIMIT: usize = 1 << 20;

/// One run to perform.
pub struct RunRequest<'a> {
    /// Shell command line, run as `sh -c COMMAND`.
    pub command: &'a str,
    /// Working directory (the scratch copy).
    pub cwd: &'a Path,
    /// Kill the process group after this long.
    pub timeout: Duration,
    /// Most bytes kept per stream (head and tail halves).
    pub capture_limit: usize,
    /// Sample the process tree's saturation while it runs.
    pub sample: Option<&'a SamplerConfig>,
    /// Called about every 200 ms while the command runs, with the time elapsed in this run.
    pub on_tick: Option<&'a dyn Fn(Duration)>,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "value")]
pub enum ExitKind {
    /// Exited with this code.
    Code(i32),
    /// Killed by this signal (not by us).
    Signal(i32),
    /// Ran past the timeout; the whole process group was killed.
    TimedOut,
    /// Could not be started at all.
    SpawnFailed(String),
}

impl ExitKind {
    /// Exit code 0.
    #[must_use]
    pub fn success(&self) -> bool {
        *self == ExitKind::Code(0)
    }

    /// Short text for logs: `exit 0`, `signal 9`, `timed out`, `spawn failed: ...`.
    #[must_use]
    pub fn describe(&self) -> String {
        match self {
            ExitKind::Code(c) => format!("exit {c}"),
            ExitKind::Signal(s) => format!("signal {s}"),
            ExitKind::TimedOut => "timed out".to_owned(),
            ExitKind::SpawnFailed(e) => format!("spawn failed: {e}"),
        }
    }
}

/// What one run produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunOutput {
    /// How it ended.
    pub exit: ExitKind,
    /// Seconds from spawn to the exit of the shell.
    pub wall_s: f64,
    /// Standard output (lossy UTF-8; the middle elided beyond the capture limit).
    pub stdout: String,
    /// Standard error, likewise.
    pub stderr: String,
    /// Bytes of standard output dropped from the middle.
    pub stdout_dropped: u64,
    /// Bytes of standard error dropped from the middle.
    pub stderr_dropped: u64,
    /// Saturation sampled while it ran, when requested.
    pub sampling: Option<ProcessSampling>,
}

/// Runs a benchmark command once.
pub trait CommandRunner {
    /// Runs `req` to completion or timeout. Never panics; failures are in [`RunOutput::exit`].
    fn run(&self, req: &RunRequest<'_>) -> RunOutput;
}

/// The real runner: `sh -c` in a new process group.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemRunner;

/// Keeps the first and the last `limit / 2` bytes of a stream.
#[derive(Debug, Default)]
struct Bounded {
    head: Vec<u8>,
    tail: std::collections::VecDeque<u8>,
    half: usize,
    dropped: u64,
}

impl Bounded {
    fn new(limit: usize) -> Self {
        Self {
            half: (limit / 2).max(1),
            ..Self::default()
        }
    }

    fn push(&mut self, mut bytes: &[u8]) {
        let room = self.half.saturating_sub(self.head.len());
        let take = room.min(bytes.len());
        self.head.extend_from_slice(&bytes[..take]);
        bytes = &bytes[take..];
        if bytes.len() >= self.half {
            self.dropped += (self.tail.len() + bytes.len() - self.half) as u64;
            self.tail.clear();
            self.tail.extend(&bytes[bytes.len() - self.half..]);
            return;
        }
        let overflow = (self.tail.len() + bytes.len()).saturating_sub(self.half);
        self.tail.drain(..overflow);
        self.dropped += overflow as u64;
        self.tail.extend(bytes);
    }

    fn finish(self) -> (String, u64) {
        let mut text = String::from_utf8_lossy(&self.head).into_owned();
        if self.dropped > 0 {
            text.push_str(&format!("\n[… {} bytes omitted …]\n", self.dropped));
        }
        let tail: Vec<u8> = self.tail.into_iter().collect();
        text.push_str(&String::from_utf8_lossy(&tail));
        (text, self.dropped)
    }
}

fn spawn_reader<R: Read + Send + 'static>(
    mut source: R,
    limit: usize,
) -> mpsc::Receiver<(String, u64)> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let mut capture = Bounded::new(limit);
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            match source.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => capture.push(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        let _ = tx.send(capture.finish());
    });
    rx
}

/// Waits for `pid` to exit without reaping it, so the process group id cannot be reused while
/// the rest of the group is killed.
fn wait_exit_no_reap(pid: i32) -> Option<ExitKind> {
    use nix::sys::wait::{Id, WaitPidFlag, WaitStatus, waitid};
    loop {
        match waitid(
            Id::Pid(nix::unistd::Pid::from_raw(pid)),
            WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT,
        ) {
            Ok(WaitStatus::Exited(_, code)) => return Some(ExitKind::Code(code)),
            Ok(WaitStatus::Signaled(_, sig, _)) => return Some(ExitKind::Signal(sig as i32)),
            Ok(_) => {}
            Err(nix::errno::Errno::EINTR) => {}
            Err(_) => return None,
        }
    }
}

impl CommandRunner for SystemRunner {
    fn run(&self, req: &RunRequest<'_>) -> RunOutput {
        let failed = |why: String| RunOutput {
            exit: ExitKind::SpawnFailed(why),
            wall_s: 0.0,
            stdout: String::new(),
            stderr: String::new(),
            stdout_dropped: 0,
            stderr_dropped: 0,
            sampling: None,
        };
        let start = Instant::now();
        let mut child = match Command::new("sh")
            .arg("-c")
            .arg(req.command)
            .current_dir(req.cwd)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
        {
            Ok(child) => child,
            Err(e) => return failed(format!("cannot start `sh -c`: {e}")),
        };
        let Ok(pid) = i32::try_from(child.id()) else {
            return failed("process id out of range".to_owned());
        };
        cleanup::register_process_group(pid);
        let sampler = req.sample.map(|cfg| Sampler::start(pid, cfg.clone()));
        let out_rx = child
            .stdout
            .take()
            .map(|s| spawn_reader(s, req.capture_limit));
        let err_rx = child
            .stderr
            .take()
            .map(|s| spawn_reader(s, req.capture_limit));

        let (exit_tx, exit_rx) = mpsc::channel();
        thread::spawn(move || {
            let status = wait_exit_no_reap(pid);
            let _ = exit_tx.send((status, Instant::now()));
        });
        let deadline = start + req.timeout;
        let (mut exit, end) = loop {
            let now = Instant::now();
            if now >= deadline {
                cleanup::kill_group(pid);
                // The waiter sees the shell die of SIGKILL; wait for it so it can be reaped.
                let _ = exit_rx.recv_timeout(Duration::from_secs(5));
                break (ExitKind::TimedOut, now);
            }
            match exit_rx.recv_timeout((deadline - now).min(Duration::from_millis(200))) {
                Ok((status, at)) => {
                    break (
                        status.unwrap_or_else(|| {
                            ExitKind::SpawnFailed("lost track of the process".to_owned())
                        }),
                        at,
                    );
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    if let Some(tick) = req.on_tick {
                        tick(start.elapsed());
                    }
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    break (
                        ExitKind::SpawnFailed("lost track of the process".to_owned()),
                        Instant::now(),
                    );
                }
            }
        };
        let sampling = sampler.map(Sampler::stop);
        // Background processes the command left behind would skew the next run: kill the
        // group while the shell is still an unreaped zombie (its pid, the group id, is not
        // reusable until then), then reap it.
        cleanup::kill_group(pid);
        let reaped = child.wait();
        if matches!(exit, ExitKind::SpawnFailed(_))
            && let Ok(status) = reaped
        {
            // waitid failed (should not happen): fall back to what wait() saw.
            use std::os::unix::process::ExitStatusExt as _;
            if let Some(c) = status.code() {
                exit = ExitKind::Code(c);
            } else if let Some(s) = status.signal() {
                exit = ExitKind::Signal(s);
            }
        }
        cleanup::unregister_process_group(pid);
        // A grandchild that left the group (setsid) could keep a pipe open: do not wait forever.
        let collect = |rx: Option<mpsc::Receiver<(String, u64)>>| {
            rx.and_then(|rx| rx.recv_timeout(Duration::from_secs(2)).ok())
                .unwrap_or_else(|| (String::new(), 0))
        };
        let (stdout, stdout_dropped) = collect(out_rx);
        let (stderr, stderr_dropped) = collect(err_rx);
        RunOutput {
            exit,
            wall_s: end.duration_since(start).as_secs_f64(),
            stdout,
            stderr,
            stdout_dropped,
            stderr_dropped,
            sampling,
        }
    }
}

/// The number in the first capture group of the **last** match of `regex` in stdout, else in
/// stderr (a final `throughput=…` line wins over progress lines). `None` when nothing matches
/// or the group is not a number.
#[must_use]
pub fn extract_number(regex: &regex::Regex, output: &RunOutput) -> Option<f64> {
    [&output.stdout, &output.stderr]
        .into_iter()
        .find_map(|text| {
            regex
                .captures_iter(text)
                .filter_map(|c| c.get(1).and_then(|m| m.as_str().trim().parse::<f64>().ok()))
                .last()
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_keeps_head_and_tail() {
        let mut b = Bounded::new(8);
        b.push(b"abcdef");
        b.push(b"ghijkl");
        b.push(b"mn");
        let (text, dropped) = b.finish();
        assert_eq!(dropped, 6);
        assert!(text.starts_with("abcd\n[… 6 bytes omitted …]\n"), "{text}");
        assert!(text.ends_with("klmn"), "{text}");
        let mut small = Bounded::new(100);
        small.push(b"hello");
        assert_eq!(small.finish(), ("hello".to_owned(), 0));
    }

    #[test]
    fn extract_last_match() {
        let re = regex::Regex::new(r"ips=([0-9.]+)").unwrap();
        let out = RunOutput {
            exit: ExitKind::Code(0),
            wall_s: 1.0,
            stdout: "ips=1.5\nips=2.5\n".into(),
            stderr: "ips=9".into(),
            stdout_dropped: 0,
            stderr_dropped: 0,
            sampling: None,
        };
        assert_eq!(extract_number(&re, &out), Some(2.5));
    }
}
