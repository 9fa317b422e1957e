//! Step 1: measure what this machine can do and write `theoretical_limits.yaml`.
//!
//! ```text
//! host ─► cpu (clock, FMA) ─► memory (STREAM) ─► disk (QD1/QD4) ─► gpus (NVML + table + torch) ─► YAML
//! ```
//!
//! Each probe returns plain data; hardware sits behind small seams ([`gpu::GpuProbe`],
//! [`disk::DiskOpener`], the Python interpreter) so tests substitute recorded values. Nothing
//! here aborts for a missing device: what could not be measured is `null` with the reason, and
//! a line in `warnings` (DESIGN §1 Step 1, seed escalation rules).

pub mod cpu;
pub mod disk;
pub mod gpu;
pub mod gpu_table;
pub mod memory;
pub mod model;
pub mod torch_bench;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context as _;

use crate::cli::GlobalArgs;
use crate::config::Config;
use crate::exit::ExitStatus;
use crate::progress::Console;
use model::{Ceilings, Cpu, Disk, Figure, Host, Memory, QueueDepths};

/// File name of the step's output.
pub const FILE_NAME: &str = "theoretical_limits.yaml";

/// Flags of `efficiency-audit ceilings`.
#[derive(Debug, Clone, clap::Args)]
pub struct CeilingsArgs {
    /// Folder whose filesystem the disk probe measures (the workspace); it needs ~2 GiB free
    /// (the probe writes at most 512 MiB and at most a quarter of the free space, then deletes it).
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub workspace: PathBuf,
    /// Python files or folders the audit will read. If they call `.cuda()` / `.to("cuda")` and
    /// this machine has no GPU, the YAML says so in `warnings`.
    #[arg(long, value_name = "PATH", num_args = 1..)]
    pub code: Vec<PathBuf>,
    /// Shorten every probe to a few milliseconds (tests only: the figures mean nothing).
    #[arg(long, hide = true)]
    pub quick: bool,
}

/// How long each probe runs.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// CPU probe.
    pub cpu: cpu::CpuPlan,
    /// Memory probe; `None` sizes it from the last-level cache and RAM.
    pub memory: Option<memory::MemoryPlan>,
    /// Disk probe.
    pub disk: disk::DiskPlan,
    /// Hard limit for the torch benchmark process.
    pub torch_timeout: Duration,
}

impl Plan {
    /// The real measurement (≈ 7 s without a GPU).
    pub const FULL: Self = Self {
        cpu: cpu::CpuPlan::FULL,
        memory: None,
        disk: disk::DiskPlan::FULL,
        torch_timeout: Duration::from_secs(60),
    };
    /// Milliseconds per probe: tests.
    pub const QUICK: Self = Self {
        cpu: cpu::CpuPlan::QUICK,
        memory: Some(memory::MemoryPlan::QUICK),
        disk: disk::DiskPlan::QUICK,
        torch_timeout: Duration::from_secs(60),
    };
}

/// The hardware seams.
pub struct Probes<'a> {
    /// NVML.
    pub gpu: &'a dyn gpu::GpuProbe,
    /// The disk probe's file.
    pub disk: &'a dyn disk::DiskOpener,
    /// Interpreter for the torch benchmark.
    pub python: OsString,
}

/// Runs `efficiency-audit ceilings`.
pub fn command(global: &GlobalArgs, args: &CeilingsArgs) -> anyhow::Result<ExitStatus> {
    let console = Console::new(global.quiet);
    let config = Config::discover(global.config.as_deref(), &args.workspace)?;
    let output_dir = global.output_dir.clone().unwrap_or(config.output_dir);
    check_writable(&output_dir)?;
    disk::install_interrupt_handler();
    let plan = if args.quick { Plan::QUICK } else { Plan::FULL };
    let probes = Probes {
        gpu: &gpu::NvmlProbe,
        disk: &disk::OsOpener,
        python: torch_bench::python(),
    };
    let ceilings = measure(&args.workspace, &args.code, &plan, &probes, &console);
    let path = write(&ceilings, &output_dir)?;
    for warning in &ceilings.warnings {
        console.warn(warning);
    }
    println!("{}", path.display());
    Ok(ExitStatus::Success)
}

/// Fails early, before measuring, when the output folder cannot be written.
fn check_writable(dir: &Path) -> anyhow::Result<()> {
    let advice = "choose a writable folder with --output-dir DIR (or `output-dir:` in the configuration file), or fix the folder's permissions";
    std::fs::create_dir_all(dir)
        .and_then(|()| {
            tempfile::Builder::new()
                .prefix(".efficiency-audit-write-check")
                .tempfile_in(dir)
                .map(drop)
        })
        .with_context(|| {
            format!(
                "cannot write to the output folder {}: {advice}",
                dir.display()
            )
        })
}

/// Writes the YAML next to a temporary file and renames it into place (no half-written file).
pub fn write(ceilings: &Ceilings, dir: &Path) -> anyhow::Result<PathBuf> {
    let path = dir.join(FILE_NAME);
    let text = ceilings
        .to_yaml()
        .context("cannot serialise the ceilings")?;
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create the output folder {}", dir.display()))?;
    let mut temp = tempfile::Builder::new()
        .prefix(".theoretical_limits")
        .tempfile_in(dir)
        .with_context(|| format!("cannot write to the output folder {}", dir.display()))?;
    std::io::Write::write_all(&mut temp, text.as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))?;
    temp.persist(&path)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path)
}

/// Measures everything and assembles the file's data.
pub fn measure(
    workspace: &Path,
    code: &[PathBuf],
    plan: &Plan,
    probes: &Probes<'_>,
    console: &Console,
) -> Ceilings {
    let mut warnings = Vec::new();
    let measured_at = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let (host, total_memory) = host();
    let threads = host.available_parallelism;
    let cores = host
        .physical_cores
        .unwrap_or(host.logical_cpus)
        .min(threads)
        .max(1);

    let started = Instant::now();
    let cpu = cpu::measure(&plan.cpu, threads, cores, &cpu::CpuId::read());
    let cpu = cpu_section(&cpu, &mut warnings);
    console.status(&format!(
        "cpu: {} GFLOP/s fp32 measured, {} theoretical ({}) [{:.1} s]",
        show(cpu.fp32_gflops.measured),
        show(cpu.fp32_gflops.theoretical),
        cpu.fp32_gflops.method,
        started.elapsed().as_secs_f64()
    ));

    let started = Instant::now();
    let memory = memory_section(plan, total_memory);
    console.status(&format!(
        "memory: {} GB/s ({}) [{:.1} s]",
        show(memory.bandwidth_gbs.measured),
        memory.bandwidth_gbs.method,
        started.elapsed().as_secs_f64()
    ));

    let started = Instant::now();
    let disk = disk_section(workspace, plan, probes.disk, &mut warnings);
    let median = |q: &Option<model::Spread>| q.as_ref().map(|s| s.median);
    console.status(&format!(
        "disk {} ({}): read {} / {} MB/s, write {} / {} MB/s at QD1 / QD4 [{:.1} s]",
        disk.path,
        disk.fs,
        show(median(&disk.read_mbs.qd1)),
        show(median(&disk.read_mbs.qd4)),
        show(median(&disk.write_mbs.qd1)),
        show(median(&disk.write_mbs.qd4)),
        started.elapsed().as_secs_f64()
    ));

    let started = Instant::now();
    let gpus = gpu_section(plan, probes, &mut warnings);
    console.status(&format!(
        "gpus: {} [{:.1} s]",
        if gpus.is_empty() {
            "none".to_owned()
        } else {
            gpus.iter()
                .map(|g| g.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        },
        started.elapsed().as_secs_f64()
    ));
    if gpus.is_empty()
        && let Some(place) = code_expects_gpu(code)
    {
        console.status(&format!("code expects a GPU: {place}"));
        warnings.push(model::NO_GPU_WARNING.to_owned());
    }

    Ceilings {
        schema: model::SCHEMA,
        measured_at,
        host,
        cpu,
        memory,
        disk,
        gpus,
        warnings,
    }
}

fn show(value: Option<f64>) -> String {
    value.map_or_else(|| "n/a".to_owned(), |v| format!("{v:.0}"))
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// Host identity and total memory (bytes).
fn host() -> (Host, u64) {
    use sysinfo::{CpuRefreshKind, MemoryRefreshKind, RefreshKind, System};
    let system = System::new_with_specifics(
        RefreshKind::nothing()
            .with_cpu(CpuRefreshKind::nothing())
            .with_memory(MemoryRefreshKind::nothing().with_ram()),
    )
    .ok();
    let logical = system.as_ref().map_or(0, |s| s.cpus().len());
    let available = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let host = Host {
        cpu_brand: system
            .as_ref()
            .and_then(|s| s.cpus().first())
            .map_or_else(|| "unknown".to_owned(), |c| c.brand().trim().to_owned()),
        logical_cpus: if logical == 0 { available } else { logical },
        physical_cores: System::physical_core_count().ok(),
        available_parallelism: available,
        simd: cpu::simd_features(),
        os: System::long_os_version().unwrap_or_else(|_| std::env::consts::OS.to_owned()),
        kernel: System::kernel_version().unwrap_or_else(|_| "unknown".to_owned()),
    };
    (host, system.map_or(0, |s| s.total_memory()))
}

fn cpu_section(m: &cpu::CpuMeasurement, warnings: &mut Vec<String>) -> Cpu {
    let theoretical = m.theoretical_gflops();
    let method = format!(
        "{} FMA loop, {} threads x 12 independent accumulators, best of rounds; theoretical = {} cores x {} FLOP/cycle x measured clock ({})",
        m.kernel.name(),
        m.threads,
        m.cores,
        m.flop_per_cycle.0,
        m.flop_per_cycle.1
    );
    if let Some(peak) = theoretical
        && m.fma_gflops < 0.7 * peak
    {
        warnings.push(format!(
            "cpu: the FMA loop reached {:.0} % of the theoretical peak ({:.0} of {peak:.0} GFLOP/s): other processes were busy, or the clock drops under wide vector load; saturation uses the measured figure",
            100.0 * m.fma_gflops / peak,
            m.fma_gflops
        ));
    }
    if m.clock_ghz.is_none() {
        warnings.push(
            "cpu: the clock could not be measured on this architecture; no theoretical peak"
                .to_owned(),
        );
    }
    Cpu {
        clock_ghz_measured: m.clock_ghz.map(|ghz| (ghz * 1000.0).round() / 1000.0),
        fp32_gflops: Figure {
            theoretical: theoretical.map(round1),
            measured: Some(round1(m.fma_gflops)),
            method,
        },
    }
}

fn memory_section(plan: &Plan, total_memory: u64) -> Memory {
    let (memory_plan, inflated) = match plan.memory {
        Some(p) => (p, false),
        None => memory::MemoryPlan::sized(memory::last_level_cache_bytes(), total_memory),
    };
    let threads = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let r = memory::stream(&memory_plan, threads);
    let mut method = format!(
        "STREAM-style, best of {}: copy {:.1} GB/s (16 B/element), triad {:.1} GB/s (24 B/element); 3 x {:.0} MiB f64 arrays, {} threads; measured = the better of the two",
        memory_plan.repeats, r.copy_gbs, r.triad_gbs, r.array_mib, r.threads
    );
    if inflated {
        method.push_str("; arrays capped below 4 x last-level cache to fit the time budget, so part of the traffic may hit cache (figure possibly inflated)");
    }
    Memory {
        total_gib: round1(total_memory as f64 / f64::from(1_u32 << 30)),
        bandwidth_gbs: Figure {
            theoretical: None,
            measured: Some(round1(r.copy_gbs.max(r.triad_gbs))),
            method,
        },
    }
}

fn disk_section(
    workspace: &Path,
    plan: &Plan,
    opener: &dyn disk::DiskOpener,
    warnings: &mut Vec<String>,
) -> Disk {
    let path = workspace
        .canonicalize()
        .unwrap_or_else(|_| workspace.to_path_buf());
    let fs = disk::filesystem_type(&path);
    if matches!(fs.as_str(), "tmpfs" | "ramfs") {
        warnings.push(format!(
            "disk: the workspace {} is on {fs} (RAM): the disk figures are memory speed, not a disk",
            path.display()
        ));
    }
    let round = |s: model::Spread| model::Spread {
        median: round1(s.median),
        min: round1(s.min),
        max: round1(s.max),
        runs: s.runs,
    };
    match disk::probe(&path, &plan.disk, opener) {
        Ok(result) => {
            let [r1, r4] = result.read;
            let [w1, w4] = result.write;
            Disk {
                path: path.display().to_string(),
                fs,
                method: result.method,
                read_mbs: QueueDepths {
                    qd1: Some(round(r1)),
                    qd4: Some(round(r4)),
                },
                write_mbs: QueueDepths {
                    qd1: Some(round(w1)),
                    qd4: Some(round(w4)),
                },
            }
        }
        Err(err) => {
            warnings.push(format!("disk: not measured: {err}"));
            Disk {
                path: path.display().to_string(),
                fs,
                method: format!("not measured: {err}"),
                read_mbs: QueueDepths::default(),
                write_mbs: QueueDepths::default(),
            }
        }
    }
}

/// Explains an empty `gpus` list: what to change on the runner.
fn no_gpu_note(reason: &str) -> String {
    format!(
        "gpu: no NVIDIA GPU visible ({reason}); gpus is empty. On a GPU runner, give the job the GPU: Docker `--gpus all` (or `\"default-runtime\": \"nvidia\"` in /etc/docker/daemon.json), a workflow `container:` with `options: --gpus all`, Kubernetes `resources.limits: nvidia.com/gpu: 1`"
    )
}

fn gpu_section(plan: &Plan, probes: &Probes<'_>, warnings: &mut Vec<String>) -> Vec<model::Gpu> {
    let records = match probes.gpu.read() {
        Ok(records) if records.is_empty() => {
            warnings.push(no_gpu_note("NVML lists no devices"));
            return Vec::new();
        }
        Ok(records) => records,
        Err(reason) => {
            warnings.push(no_gpu_note(&reason));
            return Vec::new();
        }
    };
    let table = match gpu_table::embedded() {
        Ok(table) => table,
        Err(err) => {
            warnings.push(format!(
                "gpu: embedded table unreadable ({err}); tensor peaks unknown"
            ));
            Vec::new()
        }
    };
    let report = torch_bench::run(&probes.python, plan.torch_timeout);
    if let Some(reason) = &report.reason {
        warnings.push(format!("gpu: measured figures missing: {reason}"));
    }
    records
        .iter()
        .map(|record| {
            let device = report.device_for(record.uuid.as_deref(), record.index, &record.name);
            let measured = match (device, &report.reason) {
                (Some(device), _) => gpu::Measured::Figures(device),
                (None, Some(reason)) => gpu::Measured::Missing(reason),
                (None, None) => {
                    gpu::Measured::Missing("torch does not see this device (CUDA_VISIBLE_DEVICES?)")
                }
            };
            gpu::build(record, &table, measured)
        })
        .collect()
}

/// The first place in the Python files under `paths` that puts work on CUDA
/// (`# Ex) model.cuda()`, `x.to("cuda")`, `torch.device("cuda:0")`, `device="cuda"`).
#[must_use]
pub fn code_expects_gpu(paths: &[PathBuf]) -> Option<String> {
    let pattern = regex::Regex::new(
        r#"\.cuda\(|\.to\(\s*(device\s*=\s*)?["']cuda|device\s*=\s*["']cuda|torch\.device\(\s*["']cuda"#,
    )
    .ok()?;
    for root in paths {
        for entry in ignore::WalkBuilder::new(root).build().flatten() {
            let path = entry.path();
            if path.extension().is_none_or(|e| e != "py") || !path.is_file() {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(path) else {
                continue;
            };
            for (number, line) in text.lines().enumerate() {
                if !line.trim_start().starts_with('#') && pattern.is_match(line) {
                    return Some(format!("{}:{}", path.display(), number + 1));
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Recorded(Vec<gpu::NvmlRecord>);

    impl gpu::GpuProbe for Recorded {
        fn read(&self) -> Result<Vec<gpu::NvmlRecord>, String> {
            Ok(self.0.clone())
        }
    }

    struct NoDriver;

    impl gpu::GpuProbe for NoDriver {
        fn read(&self) -> Result<Vec<gpu::NvmlRecord>, String> {
            Err("no NVIDIA driver library (libnvidia-ml.so.1) on this runner".to_owned())
        }
    }

    fn write_py(dir: &Path, name: &str, text: &str) {
        std::fs::write(dir.join(name), text).unwrap();
    }

    #[test]
    fn code_that_moves_work_to_cuda_is_found() {
        let dir = tempfile::tempdir().unwrap();
        write_py(
            dir.path(),
            "cpu.py",
            "import torch\n# model.cuda() in a comment\nx = torch.zeros(3)\n",
        );
        assert_eq!(code_expects_gpu(&[dir.path().to_path_buf()]), None);
        for (i, line) in [
            "model = model.cuda()",
            "x = x.to(\"cuda\")",
            "x = x.to(device='cuda:0')",
            "t = torch.zeros(3, device=\"cuda\")",
            "dev = torch.device('cuda')",
        ]
        .iter()
        .enumerate()
        {
            let sub = dir.path().join(format!("case{i}"));
            std::fs::create_dir(&sub).unwrap();
            write_py(&sub, "train.py", &format!("import torch\n{line}\n"));
            let found = code_expects_gpu(std::slice::from_ref(&sub)).unwrap_or_default();
            assert!(found.ends_with("train.py:2"), "{line}: {found:?}");
        }
    }

    #[test]
    fn no_gpu_and_cuda_code_writes_the_seed_warning() {
        let workspace = tempfile::tempdir().unwrap();
        write_py(workspace.path(), "train.py", "model.cuda()\n");
        let probes = Probes {
            gpu: &NoDriver,
            disk: &disk::OsOpener,
            python: OsString::from("/nonexistent/python3"),
        };
        let c = measure(
            workspace.path(),
            &[workspace.path().to_path_buf()],
            &Plan::QUICK,
            &probes,
            &Console::new(true),
        );
        assert!(c.gpus.is_empty());
        assert!(
            c.warnings.iter().any(|w| w == model::NO_GPU_WARNING),
            "{:?}",
            c.warnings
        );
        assert!(
            c.warnings
                .iter()
                .any(|w| w.contains("--gpus all") && w.contains("libnvidia-ml"))
        );
        // Only the Python file is left: the disk probe cleaned up.
        let left: Vec<_> = std::fs::read_dir(workspace.path()).unwrap().collect();
        assert_eq!(left.len(), 1);
    }

    #[test]
    fn a_recorded_gpu_without_torch_keeps_its_nvml_and_table_figures() {
        let workspace = tempfile::tempdir().unwrap();
        let h100 = gpu::NvmlRecord {
            name: "NVIDIA H100 80GB HBM3".into(),
            pci_device_id: 0x2330_10DE,
            memory_total_bytes: 81_559 << 20,
            num_cores: Some(16_896),
            sm_max_mhz: Some(1980),
            mem_max_mhz: Some(2619),
            memory_bus_width_bits: Some(5120),
            ..gpu::NvmlRecord::default()
        };
        let probes = Probes {
            gpu: &Recorded(vec![h100]),
            disk: &disk::OsOpener,
            python: OsString::from("/nonexistent/python3"),
        };
        let c = measure(
            workspace.path(),
            &[],
            &Plan::QUICK,
            &probes,
            &Console::new(true),
        );
        assert_eq!(c.gpus.len(), 1);
        let gpu = &c.gpus[0];
        assert_eq!(gpu.fp32_tflops.theoretical_nvml, Some(66.9));
        assert_eq!(
            gpu.tf32_tflops.datasheet,
            Some(model::TableValue::Value(494.7))
        );
        assert_eq!(gpu.fp16_bf16_tflops.measured, None);
        assert!(
            gpu.fp16_bf16_tflops
                .measured_note
                .as_deref()
                .unwrap_or("")
                .contains("could not start")
        );
        assert!(!c.warnings.iter().any(|w| w == model::NO_GPU_WARNING));
        // Round trip through the file format.
        let text = c.to_yaml().unwrap();
        assert_eq!(Ceilings::from_yaml(&text).unwrap(), c);
    }
}
