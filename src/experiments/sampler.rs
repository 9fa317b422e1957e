//! Measured saturation, sampled while the baseline runs — no profiler (reference ceilings.md §6).
//!
//! A thread wakes every ~250 ms and reads:
//! - **CPU** of the benchmark's process tree: Σ `utime+stime+cutime+cstime` (`/proc/<pid>/stat`
//!   fields 14–17) over the live members. Counting the reaped children's time (`cutime`) keeps
//!   the total conserved when a worker exits between two samples. Compared against the core count.
//! - **Disk** bytes of the tree: `/proc/<pid>/io` `read_bytes`/`write_bytes` (block-layer IO,
//!   page-cache hits excluded; the kernel folds a reaped child's counters into its parent), as
//!   bytes/s against the measured disk ceiling (queue depth 4, `theoretical_limits.yaml`).
//! - **GPU**, per NVML device: utilization and memory utilization (busy-time: an upper bound,
//!   not saturation), PCIe TX/RX, power, SM/memory clocks, throttle reasons, and on Hopper+ the
//!   GPM counters SM busy, tensor-pipe and DRAM-bandwidth utilization (true saturation proxies).
//!   No NVML is a value with its reason, never an error.
//!
//! Members of the tree: processes whose process group is the benchmark's, or whose parent is a
//! member. `/proc` is listed each tick but only new pids are classified, so a tick costs one
//! directory read plus two small reads per member. The sampler measures its own thread's CPU
//! time (`getrusage(RUSAGE_THREAD)`) so its cost is a recorded figure (target ≤ 1 % of a core).

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use nvml_wrapper::Nvml;
use serde::{Deserialize, Serialize};

use crate::analysis::model::{Estimate, Saturation};

/// Default interval between two samples.
pub const DEFAULT_INTERVAL: Duration = Duration::from_millis(250);

/// What to sample and what to compare it with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SamplerConfig {
    /// Time between samples (≥ 100 ms: NVML GPM needs that much between two samples).
    pub interval: Duration,
    /// Logical CPUs of the machine (the CPU ceiling).
    pub logical_cpus: usize,
    /// Measured sequential read ceiling (MB/s, decimal), if known.
    pub disk_read_mbs: Option<f64>,
    /// Measured sequential write ceiling (MB/s, decimal), if known.
    pub disk_write_mbs: Option<f64>,
    /// Query NVML.
    pub gpus: bool,
}

impl SamplerConfig {
    /// Defaults for this machine: its core count, no disk ceiling, GPUs on.
    #[must_use]
    pub fn for_this_machine() -> Self {
        Self {
            interval: DEFAULT_INTERVAL,
            logical_cpus: thread::available_parallelism().map_or(1, std::num::NonZero::get),
            disk_read_mbs: None,
            disk_write_mbs: None,
            gpus: true,
        }
    }
}

/// One run's sampled figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct ProcessSampling {
    /// Seconds between the first and the last sample.
    pub duration_s: f64,
    /// Samples taken.
    pub samples: usize,
    /// CPU seconds the process tree used between the first and the last sample.
    pub cpu_s: f64,
    /// Largest CPU use over one interval, in cores.
    pub cpu_peak_cores: f64,
    /// Most processes seen in the tree at once.
    pub max_processes: usize,
    /// Block-layer bytes read by the tree.
    pub read_bytes: u64,
    /// Block-layer bytes written by the tree.
    pub write_bytes: u64,
    /// Per GPU, or why there is none.
    pub gpus: GpuSampling,
    /// CPU seconds the sampler thread itself used.
    pub sampler_cpu_s: f64,
    /// CPU seconds the whole machine was busy (`/proc/stat`), to tell contention apart.
    #[serde(default)]
    pub machine_cpu_s: f64,
}

/// GPU figures of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "status")]
pub enum GpuSampling {
    /// NVML answered for these devices.
    Sampled {
        /// One per device.
        devices: Vec<GpuStats>,
    },
    /// No NVML data, and why.
    Unavailable {
        /// E.g. "NVML not found (no NVIDIA driver): libnvidia-ml.so.1: cannot open ...".
        reason: String,
    },
}

impl Default for GpuSampling {
    fn default() -> Self {
        GpuSampling::Unavailable {
            reason: "GPU sampling not requested".to_owned(),
        }
    }
}

/// Running mean and maximum of one signal; empty when the device never answered.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
pub struct Stat {
    /// Samples.
    pub n: u32,
    /// Mean.
    pub mean: f64,
    /// Maximum.
    pub max: f64,
}

impl Stat {
    /// Adds one sample; a non-finite one is dropped: NVML's GPM answers NaN for a metric it
    /// could not compute (seen on an H200, driver 580.159, for DRAM bandwidth while the GPU
    /// idled), and one NaN would turn the mean into NaN.
    fn add(&mut self, x: f64) {
        if !x.is_finite() {
            return;
        }
        self.n += 1;
        self.mean += (x - self.mean) / f64::from(self.n);
        self.max = if self.n == 1 { x } else { self.max.max(x) };
    }

    /// The mean, if any sample was taken.
    #[must_use]
    pub fn value(&self) -> Option<f64> {
        (self.n > 0).then_some(self.mean)
    }

    fn merge(&mut self, other: &Stat) {
        if other.n == 0 {
            return;
        }
        let n = self.n + other.n;
        self.mean =
            (self.mean * f64::from(self.n) + other.mean * f64::from(other.n)) / f64::from(n);
        self.max = if self.n == 0 {
            other.max
        } else {
            self.max.max(other.max)
        };
        self.n = n;
    }
}

/// One GPU's sampled signals (percentages are 0–100 as NVML reports them).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct GpuStats {
    /// NVML index.
    pub index: u32,
    /// NVML name.
    pub name: String,
    /// Time ≥ 1 kernel ran (%): busy time, an upper bound of compute saturation.
    pub util_gpu: Stat,
    /// Time the memory interface was busy (%).
    pub util_memory: Stat,
    /// PCIe transmit (MB/s), 20 ms windows.
    pub pcie_tx_mbs: Stat,
    /// PCIe receive (MB/s).
    pub pcie_rx_mbs: Stat,
    /// Power draw (W).
    pub power_w: Stat,
    /// SM clock (MHz).
    pub sm_clock_mhz: Stat,
    /// Memory clock (MHz).
    pub mem_clock_mhz: Stat,
    /// Every throttle reason seen active (except idle).
    pub throttle_reasons: Vec<String>,
    /// GPM: SMs with ≥ 1 warp (%), Hopper+.
    pub gpm_sm_util: Stat,
    /// GPM: any tensor pipe active (%).
    pub gpm_tensor_util: Stat,
    /// GPM: DRAM bandwidth used vs theoretical (%).
    pub gpm_dram_bw_util: Stat,
    /// Why GPM figures are missing, when they are.
    pub gpm_note: Option<String>,
}

impl GpuStats {
    fn merge(&mut self, other: &GpuStats) {
        self.util_gpu.merge(&other.util_gpu);
        self.util_memory.merge(&other.util_memory);
        self.pcie_tx_mbs.merge(&other.pcie_tx_mbs);
        self.pcie_rx_mbs.merge(&other.pcie_rx_mbs);
        self.power_w.merge(&other.power_w);
        self.sm_clock_mhz.merge(&other.sm_clock_mhz);
        self.mem_clock_mhz.merge(&other.mem_clock_mhz);
        self.gpm_sm_util.merge(&other.gpm_sm_util);
        self.gpm_tensor_util.merge(&other.gpm_tensor_util);
        self.gpm_dram_bw_util.merge(&other.gpm_dram_bw_util);
        for r in &other.throttle_reasons {
            if !self.throttle_reasons.contains(r) {
                self.throttle_reasons.push(r.clone());
            }
        }
        if self.gpm_note.is_none() {
            self.gpm_note.clone_from(&other.gpm_note);
        }
    }

    /// Saturation of this GPU in [0, 1] and its one-line reason: GPM's max(SM busy, DRAM
    /// bandwidth) on Hopper+ (SM busy alone when the DRAM figure has no value), else NVML busy
    /// time (labelled as an upper bound).
    #[must_use]
    pub fn saturation(&self) -> (Option<f64>, String) {
        if let Some(sm) = self.gpm_sm_util.value() {
            let tensor = self.gpm_tensor_util.value().unwrap_or(0.0);
            let dram = self.gpm_dram_bw_util.value();
            let dram_text =
                dram.map_or_else(|| "no value from NVML".to_owned(), |d| format!("{d:.0} %"));
            return (
                Some(sm.max(dram.unwrap_or(0.0)) / 100.0),
                format!(
                    "GPU{} {}: SM busy {sm:.0} %, tensor pipes {tensor:.0} %, DRAM bandwidth {dram_text} (GPM)",
                    self.index, self.name
                ),
            );
        }
        match self.util_gpu.value() {
            Some(busy) => (
                Some(busy / 100.0),
                format!(
                    "GPU{} {}: a kernel ran {busy:.0} % of the time, memory busy {:.0} % (NVML busy time — an upper bound; {})",
                    self.index,
                    self.name,
                    self.util_memory.value().unwrap_or(0.0),
                    self.gpm_note.as_deref().unwrap_or("no GPM")
                ),
            ),
            None => (
                None,
                format!(
                    "GPU{} {}: NVML returned no utilization",
                    self.index, self.name
                ),
            ),
        }
    }
}

/// A running sampler; [`Sampler::stop`] returns what it saw.
#[derive(Debug)]
pub struct Sampler {
    stop: mpsc::Sender<()>,
    handle: thread::JoinHandle<ProcessSampling>,
}

impl Sampler {
    /// Starts sampling the process group `pgid` (the benchmark's shell is its leader).
    #[must_use]
    pub fn start(pgid: i32, config: SamplerConfig) -> Self {
        let (stop, rx) = mpsc::channel();
        let handle = thread::spawn(move || sample_loop(pgid, &config, &rx));
        Self { stop, handle }
    }

    /// Takes a last sample and returns the figures. Call it after the shell exited but before
    /// it is reaped, so the last sample still sees the whole tree.
    #[must_use]
    pub fn stop(self) -> ProcessSampling {
        let _ = self.stop.send(());
        self.handle.join().unwrap_or_default()
    }
}

fn clock_ticks() -> f64 {
    static TCK: OnceLock<f64> = OnceLock::new();
    *TCK.get_or_init(|| {
        nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
            .ok()
            .flatten()
            .map_or(100.0, |t| t as f64)
    })
}

/// `(ppid, pgrp, utime+stime+cutime+cstime ticks)` from `/proc/<pid>/stat`.
fn read_stat(pid: u32) -> Option<(u32, i32, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(&text)
}

/// Parses a `/proc/<pid>/stat` line (the command name may contain spaces and parentheses).
#[must_use]
pub fn parse_stat(text: &str) -> Option<(u32, i32, u64)> {
    let rest = &text[text.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // f[0] is field 3 (state): field k is f[k - 3].
    let num = |k: usize| f.get(k - 3)?.parse::<u64>().ok();
    let ppid = f.get(1)?.parse().ok()?;
    let pgrp = f.get(2)?.parse().ok()?;
    Some((ppid, pgrp, num(14)? + num(15)? + num(16)? + num(17)?))
}

/// `(read_bytes, write_bytes)` from a `/proc/<pid>/io` text.
#[must_use]
pub fn parse_io(text: &str) -> Option<(u64, u64)> {
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().parse::<u64>().ok())
    };
    Some((field("read_bytes:")?, field("write_bytes:")?))
}

/// `(busy, total, cpus)` from a `/proc/stat` text: clock ticks of all CPUs (busy excludes idle
/// and iowait) and the number of `cpuN` lines (the CPUs the aggregate covers).
#[must_use]
pub fn parse_proc_stat(text: &str) -> Option<(u64, u64, usize)> {
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|x| x.parse().ok())
        .collect();
    // user nice system idle iowait irq softirq steal [guest guest_nice: already in user/nice]
    let total: u64 = v.iter().take(8).sum();
    let idle = v.get(3)? + v.get(4).copied().unwrap_or(0);
    let cpus = text
        .lines()
        .filter(|l| l.starts_with("cpu") && l.as_bytes().get(3).is_some_and(u8::is_ascii_digit))
        .count();
    Some((total.saturating_sub(idle), total, cpus.max(1)))
}

fn machine_ticks() -> Option<(u64, u64, usize)> {
    parse_proc_stat(&std::fs::read_to_string("/proc/stat").ok()?)
}

struct Totals {
    at: Instant,
    cpu_ticks: u64,
    read: u64,
    write: u64,
    members: usize,
}

/// Process-tree bookkeeping across ticks.
struct Tree {
    pgid: i32,
    members: HashSet<u32>,
    others: HashSet<u32>,
}

impl Tree {
    fn sample(&mut self) -> Totals {
        let at = Instant::now();
        let mut listed = HashSet::new();
        if let Ok(dir) = std::fs::read_dir("/proc") {
            for entry in dir.flatten() {
                if let Some(pid) = entry
                    .file_name()
                    .to_str()
                    .and_then(|s| s.parse::<u32>().ok())
                {
                    listed.insert(pid);
                }
            }
        }
        self.others.retain(|p| listed.contains(p));
        self.members.retain(|p| listed.contains(p));
        // Classify new pids; parents first is not guaranteed, so iterate until stable.
        let mut pending: Vec<(u32, u32, i32)> = Vec::new();
        let mut stats: HashMap<u32, u64> = HashMap::new();
        for &pid in &listed {
            if self.others.contains(&pid) {
                continue;
            }
            match read_stat(pid) {
                Some((ppid, pgrp, ticks)) => {
                    if self.members.contains(&pid) || pgrp == self.pgid {
                        self.members.insert(pid);
                        stats.insert(pid, ticks);
                    } else {
                        pending.push((pid, ppid, pgrp));
                        stats.insert(pid, ticks);
                    }
                }
                None => {
                    self.members.remove(&pid);
                }
            }
        }
        loop {
            let before = pending.len();
            pending.retain(|&(pid, ppid, _)| {
                if self.members.contains(&ppid) {
                    self.members.insert(pid);
                    false
                } else {
                    true
                }
            });
            if pending.len() == before {
                break;
            }
        }
        for (pid, _, _) in pending {
            self.others.insert(pid);
        }
        let mut totals = Totals {
            at,
            cpu_ticks: 0,
            read: 0,
            write: 0,
            members: self.members.len(),
        };
        for pid in &self.members {
            totals.cpu_ticks += stats.get(pid).copied().unwrap_or(0);
            if let Some((r, w)) = std::fs::read_to_string(format!("/proc/{pid}/io"))
                .ok()
                .as_deref()
                .and_then(parse_io)
            {
                totals.read += r;
                totals.write += w;
            }
        }
        totals
    }
}

fn nvml() -> Result<&'static Nvml, String> {
    static NVML: OnceLock<Result<Nvml, String>> = OnceLock::new();
    NVML.get_or_init(|| {
        Nvml::init().map_err(|e| match e {
            nvml_wrapper::error::NvmlError::LibloadingError(inner) => {
                format!("NVML not found (no NVIDIA driver on this machine): {inner}")
            }
            nvml_wrapper::error::NvmlError::DriverNotLoaded => {
                "NVML present but the NVIDIA driver is not loaded (a container without --gpus / the nvidia runtime?)".to_owned()
            }
            other => format!("NVML unavailable: {other}"),
        })
    })
    .as_ref()
    .map_err(Clone::clone)
}

struct GpuProbe {
    devices: Vec<(
        nvml_wrapper::Device<'static>,
        GpuStats,
        Option<nvml_wrapper::GpmSample<'static>>,
    )>,
}

impl GpuProbe {
    fn open() -> Result<Self, String> {
        let nvml = nvml()?;
        let count = nvml
            .device_count()
            .map_err(|e| format!("NVML device count: {e}"))?;
        if count == 0 {
            return Err("NVML lists no GPU".to_owned());
        }
        let mut devices = Vec::new();
        for index in 0..count {
            let Ok(device) = nvml.device_by_index(index) else {
                continue;
            };
            let mut stats = GpuStats {
                index,
                name: device.name().unwrap_or_else(|_| "unknown GPU".to_owned()),
                ..GpuStats::default()
            };
            let gpm = match device.gpm_support() {
                Ok(true) => match device.gpm_sample() {
                    Ok(s) => Some(s),
                    Err(e) => {
                        stats.gpm_note = Some(format!("GPM sample failed: {e}"));
                        None
                    }
                },
                Ok(false) => {
                    stats.gpm_note = Some("GPM not supported (pre-Hopper or MIG)".to_owned());
                    None
                }
                Err(e) => {
                    stats.gpm_note = Some(format!("GPM unavailable: {e}"));
                    None
                }
            };
            devices.push((device, stats, gpm));
        }
        Ok(Self { devices })
    }

    fn sample(&mut self) {
        use nvml_wrapper::enum_wrappers::device::{Clock, PcieUtilCounter};
        use nvml_wrapper::enums::gpm::GpmMetricId;
        let Ok(nvml) = nvml() else { return };
        for (device, stats, gpm_prev) in &mut self.devices {
            if let Ok(u) = device.utilization_rates() {
                stats.util_gpu.add(f64::from(u.gpu));
                stats.util_memory.add(f64::from(u.memory));
            }
            if let Ok(kb) = device.pcie_throughput(PcieUtilCounter::Send) {
                stats.pcie_tx_mbs.add(f64::from(kb) / 1000.0);
            }
            if let Ok(kb) = device.pcie_throughput(PcieUtilCounter::Receive) {
                stats.pcie_rx_mbs.add(f64::from(kb) / 1000.0);
            }
            if let Ok(mw) = device.power_usage() {
                stats.power_w.add(f64::from(mw) / 1000.0);
            }
            if let Ok(mhz) = device.clock_info(Clock::SM) {
                stats.sm_clock_mhz.add(f64::from(mhz));
            }
            if let Ok(mhz) = device.clock_info(Clock::Memory) {
                stats.mem_clock_mhz.add(f64::from(mhz));
            }
            if let Ok(reasons) = device.current_throttle_reasons() {
                for (name, flag) in reasons.iter_names() {
                    if flag != nvml_wrapper::bitmasks::device::ThrottleReasons::GPU_IDLE
                        && !stats.throttle_reasons.iter().any(|r| r == name)
                    {
                        stats.throttle_reasons.push(name.to_owned());
                    }
                }
            }
            if let Some(prev) = gpm_prev.take() {
                match device.gpm_sample() {
                    Ok(next) => {
                        let ids = [
                            GpmMetricId::SmUtil,
                            GpmMetricId::AnyTensorUtil,
                            GpmMetricId::DramBwUtil,
                        ];
                        if let Ok(results) =
                            nvml_wrapper::gpm::gpm_metrics_get(nvml, &prev, &next, &ids)
                        {
                            for (target, r) in [
                                &mut stats.gpm_sm_util,
                                &mut stats.gpm_tensor_util,
                                &mut stats.gpm_dram_bw_util,
                            ]
                            .into_iter()
                            .zip(results)
                            {
                                if let Ok(r) = r {
                                    target.add(r.value);
                                }
                            }
                        }
                        *gpm_prev = Some(next);
                    }
                    Err(e) => stats.gpm_note = Some(format!("GPM sample failed: {e}")),
                }
            }
        }
    }
}

fn thread_cpu_s() -> f64 {
    nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_THREAD).map_or(0.0, |u| {
        let t = |tv: nix::sys::time::TimeVal| tv.tv_sec() as f64 + tv.tv_usec() as f64 / 1e6;
        t(u.user_time()) + t(u.system_time())
    })
}

fn sample_loop(pgid: i32, config: &SamplerConfig, stop: &mpsc::Receiver<()>) -> ProcessSampling {
    let cpu_start = thread_cpu_s();
    let mut tree = Tree {
        pgid,
        members: HashSet::from([pgid.unsigned_abs()]),
        others: HashSet::new(),
    };
    let mut gpu = if config.gpus {
        Some(GpuProbe::open())
    } else {
        None
    };
    let machine_first = machine_ticks();
    let first = tree.sample();
    if let Some(Ok(probe)) = gpu.as_mut() {
        probe.sample();
    }
    let (first_at, first_cpu, first_read, first_write) =
        (first.at, first.cpu_ticks, first.read, first.write);
    let mut out = ProcessSampling {
        samples: 1,
        max_processes: first.members,
        ..ProcessSampling::default()
    };
    let mut last = first;
    let tck = clock_ticks();
    loop {
        let stopping = !matches!(
            stop.recv_timeout(config.interval),
            Err(mpsc::RecvTimeoutError::Timeout)
        );
        let now = tree.sample();
        if let Some(Ok(probe)) = gpu.as_mut() {
            probe.sample();
        }
        let dt = now.at.duration_since(last.at).as_secs_f64();
        // CPU time moves in clock ticks (10 ms): over the short last interval one tick would
        // read as a burst of several cores, so peaks only count over near-full intervals.
        if dt >= config.interval.as_secs_f64() * 0.8 {
            let cores = now.cpu_ticks.saturating_sub(last.cpu_ticks) as f64 / tck / dt;
            out.cpu_peak_cores = out.cpu_peak_cores.max(cores);
        }
        out.samples += 1;
        out.max_processes = out.max_processes.max(now.members);
        last = now;
        if stopping {
            break;
        }
    }
    out.duration_s = last.at.duration_since(first_at).as_secs_f64();
    if let (Some((b0, t0, _)), Some((b1, t1, cpus))) = (machine_first, machine_ticks())
        && t1 > t0
    {
        // Busy share of all CPUs × the CPU count × the time = busy CPU-seconds.
        out.machine_cpu_s = (b1 - b0) as f64 / (t1 - t0) as f64 * cpus as f64 * out.duration_s;
    }
    out.cpu_s = last.cpu_ticks.saturating_sub(first_cpu) as f64 / tck;
    out.read_bytes = last.read.saturating_sub(first_read);
    out.write_bytes = last.write.saturating_sub(first_write);
    out.gpus = match gpu {
        None => GpuSampling::default(),
        Some(Err(reason)) => GpuSampling::Unavailable { reason },
        Some(Ok(probe)) => GpuSampling::Sampled {
            devices: probe.devices.into_iter().map(|(_, s, _)| s).collect(),
        },
    };
    out.sampler_cpu_s = thread_cpu_s() - cpu_start;
    out
}

/// The saturation measured over all sampled runs, with the figures behind it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MeasuredSaturation {
    /// Per resource, in [0, 1], with one-line reasons; feed it to `verdict::decide` with
    /// `Basis::Measured`.
    pub saturation: Saturation,
    /// Seconds sampled.
    pub sampled_s: f64,
    /// Mean CPU use of the process tree, in cores.
    pub cpu_mean_cores: f64,
    /// Largest CPU use over one interval, in cores.
    pub cpu_peak_cores: f64,
    /// Logical CPUs compared against.
    pub logical_cpus: usize,
    /// Most processes in the tree at once.
    pub max_processes: usize,
    /// Mean busy CPUs of the whole machine (benchmark included) while sampling.
    #[serde(default)]
    pub machine_cpu_cores: f64,
    /// Mean disk read (MB/s, decimal).
    pub read_mbs: f64,
    /// Mean disk write (MB/s, decimal).
    pub write_mbs: f64,
    /// GPUs, merged over runs.
    pub gpus: GpuSampling,
    /// The sampler's own CPU time.
    pub sampler_cpu_s: f64,
    /// Its cost as a fraction of one core over the sampled time (target ≤ 0.01).
    pub sampler_core_fraction: f64,
    /// Samples taken.
    pub samples: usize,
}

/// Combines the sampled runs into one measured saturation; `None` when nothing was sampled.
#[must_use]
pub fn measured_saturation(
    runs: &[ProcessSampling],
    config: &SamplerConfig,
) -> Option<MeasuredSaturation> {
    let sampled_s: f64 = runs.iter().map(|r| r.duration_s).sum();
    if runs.is_empty() || sampled_s <= 0.0 {
        return None;
    }
    let cpu_s: f64 = runs.iter().map(|r| r.cpu_s).sum();
    let cpu_mean_cores = cpu_s / sampled_s;
    let cpu_peak_cores = runs.iter().map(|r| r.cpu_peak_cores).fold(0.0, f64::max);
    let cpus = config.logical_cpus.max(1);
    let max_processes = runs.iter().map(|r| r.max_processes).max().unwrap_or(0);
    let machine_cores = runs.iter().map(|r| r.machine_cpu_s).sum::<f64>() / sampled_s;
    let others = machine_cores - cpu_mean_cores;
    let contention = if others > 0.5 {
        format!(
            "; meanwhile other processes kept {others:.1} CPUs busy — a shared machine gives the benchmark less CPU than it could use"
        )
    } else {
        String::new()
    };
    let cpu = Estimate {
        value: Some((cpu_mean_cores / cpus as f64).min(1.0)),
        reason: format!(
            "process tree used {cpu_mean_cores:.2} of {cpus} CPUs on average (peak {cpu_peak_cores:.2}, up to {max_processes} processes), measured over {sampled_s:.1} s{contention}"
        ),
    };
    let read_mbs = runs.iter().map(|r| r.read_bytes as f64).sum::<f64>() / sampled_s / 1e6;
    let write_mbs = runs.iter().map(|r| r.write_bytes as f64).sum::<f64>() / sampled_s / 1e6;
    let io = match (config.disk_read_mbs, config.disk_write_mbs) {
        (Some(r), w) if r > 0.0 => {
            // Reads and writes share the device's time: add the fractions of each ceiling.
            let w_ceiling = w.filter(|w| *w > 0.0).unwrap_or(r);
            let value = (read_mbs / r + write_mbs / w_ceiling).min(1.0);
            Estimate {
                value: Some(value),
                reason: format!(
                    "process tree read {read_mbs:.1} MB/s and wrote {write_mbs:.1} MB/s against a measured {r:.0} MB/s read / {w_ceiling:.0} MB/s write ceiling (queue depth 4)"
                ),
            }
        }
        _ => Estimate {
            value: None,
            reason: format!(
                "process tree read {read_mbs:.1} MB/s and wrote {write_mbs:.1} MB/s; no measured disk ceiling (run `efficiency-audit ceilings` first)"
            ),
        },
    };
    let gpus = merge_gpus(runs);
    let gpu = match &gpus {
        GpuSampling::Unavailable { reason } => Estimate {
            value: None,
            reason: format!("no GPU measured: {reason}"),
        },
        GpuSampling::Sampled { devices } => {
            let best = devices
                .iter()
                .map(GpuStats::saturation)
                .filter(|(v, _)| v.is_some())
                .max_by(|a, b| a.0.unwrap_or(0.0).total_cmp(&b.0.unwrap_or(0.0)));
            match best {
                Some((value, reason)) => Estimate { value, reason },
                None => Estimate {
                    value: None,
                    reason: "NVML answered but returned no utilization".to_owned(),
                },
            }
        }
    };
    let sampler_cpu_s: f64 = runs.iter().map(|r| r.sampler_cpu_s).sum();
    Some(MeasuredSaturation {
        saturation: Saturation { gpu, cpu, io },
        sampled_s,
        cpu_mean_cores,
        cpu_peak_cores,
        logical_cpus: cpus,
        max_processes,
        machine_cpu_cores: machine_cores,
        read_mbs,
        write_mbs,
        gpus,
        sampler_cpu_s,
        sampler_core_fraction: sampler_cpu_s / sampled_s,
        samples: runs.iter().map(|r| r.samples).sum(),
    })
}

fn merge_gpus(runs: &[ProcessSampling]) -> GpuSampling {
    let mut merged: Option<Vec<GpuStats>> = None;
    let mut reason = None;
    for run in runs {
        match &run.gpus {
            GpuSampling::Sampled { devices } => match merged.as_mut() {
                None => merged = Some(devices.clone()),
                Some(acc) => {
                    for d in devices {
                        match acc.iter_mut().find(|a| a.index == d.index) {
                            Some(a) => a.merge(d),
                            None => acc.push(d.clone()),
                        }
                    }
                }
            },
            GpuSampling::Unavailable { reason: r } => reason = Some(r.clone()),
        }
    }
    match (merged, reason) {
        (Some(devices), _) => GpuSampling::Sampled { devices },
        (None, Some(reason)) => GpuSampling::Unavailable { reason },
        (None, None) => GpuSampling::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_line_with_spaces_and_parens_in_name() {
        let line = "4242 (py (worker) x) S 4200 4242 4242 0 -1 4194560 100 0 0 0 150 25 7 3 20 0 1 0 1 1 1";
        assert_eq!(parse_stat(line), Some((4200, 4242, 150 + 25 + 7 + 3)));
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn proc_stat_busy_and_total() {
        let text = "cpu  100 5 50 800 20 3 2 10 0 0\ncpu0 50 2 25 400 10 1 1 5 0 0\n";
        assert_eq!(parse_proc_stat(text), Some((170, 990, 1)));
    }

    #[test]
    fn io_fields() {
        let text = "rchar: 10\nwchar: 20\nsyscr: 1\nsyscw: 2\nread_bytes: 4096\nwrite_bytes: 8192\ncancelled_write_bytes: 0\n";
        assert_eq!(parse_io(text), Some((4096, 8192)));
    }

    #[test]
    fn saturation_from_fixed_runs() {
        let run = ProcessSampling {
            duration_s: 2.0,
            samples: 9,
            cpu_s: 2.0,
            cpu_peak_cores: 1.0,
            max_processes: 2,
            read_bytes: 200_000_000,
            write_bytes: 0,
            gpus: GpuSampling::Unavailable {
                reason: "NVML not found".into(),
            },
            sampler_cpu_s: 0.004,
            machine_cpu_s: 4.0,
        };
        let cfg = SamplerConfig {
            logical_cpus: 2,
            disk_read_mbs: Some(500.0),
            disk_write_mbs: Some(400.0),
            ..SamplerConfig::for_this_machine()
        };
        let m = measured_saturation(&[run.clone(), run], &cfg).unwrap();
        assert_eq!(m.saturation.cpu.value, Some(0.5));
        assert!(
            m.saturation
                .cpu
                .reason
                .contains("other processes kept 1.0 CPUs busy"),
            "{}",
            m.saturation.cpu.reason
        );
        assert!((m.read_mbs - 100.0).abs() < 1e-9);
        assert_eq!(m.saturation.io.value, Some(0.2));
        assert_eq!(m.saturation.gpu.value, None);
        assert!(m.saturation.gpu.reason.contains("NVML not found"));
        assert!((m.sampler_core_fraction - 0.002).abs() < 1e-12);
    }

    #[test]
    fn gpu_saturation_prefers_gpm() {
        let mut g = GpuStats {
            index: 0,
            name: "H100".into(),
            ..GpuStats::default()
        };
        g.util_gpu.add(98.0);
        let (v, why) = g.saturation();
        assert_eq!(v, Some(0.98));
        assert!(why.contains("upper bound"));
        g.gpm_sm_util.add(40.0);
        g.gpm_dram_bw_util.add(55.0);
        g.gpm_tensor_util.add(10.0);
        let (v, why) = g.saturation();
        assert_eq!(v, Some(0.55));
        assert!(why.contains("GPM"), "{why}");
    }

    /// Recorded on an H200 (driver 580.159.04) running a CPU-bound training example: GPM gave
    /// SM busy 0 % and tensor 0 % but NaN for DRAM bandwidth on every sample.
    #[test]
    fn gpm_nan_samples_are_dropped() {
        let mut g = GpuStats {
            index: 0,
            name: "NVIDIA H200".into(),
            ..GpuStats::default()
        };
        for _ in 0..3 {
            g.gpm_sm_util.add(4.0);
            g.gpm_tensor_util.add(0.0);
            g.gpm_dram_bw_util.add(f64::NAN);
        }
        assert_eq!(g.gpm_dram_bw_util.value(), None);
        let (v, why) = g.saturation();
        assert_eq!(v, Some(0.04));
        assert!(!why.contains("NaN"), "{why}");
        assert!(why.contains("DRAM bandwidth no value from NVML"), "{why}");
        g.gpm_dram_bw_util.add(f64::INFINITY);
        g.gpm_dram_bw_util.add(30.0);
        assert_eq!(g.gpm_dram_bw_util.value(), Some(30.0));
        assert_eq!(g.saturation().0, Some(0.3));
    }
}
