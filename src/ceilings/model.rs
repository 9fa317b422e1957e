//! The data of `theoretical_limits.yaml` (schema 1): what step 1 writes and later steps read.
//!
//! Every figure keeps where it came from: `theoretical` (specs and formulas), `measured`
//! (a micro-benchmark on this machine) and the `method`. Saturation is computed against
//! `measured`, falling back to `theoretical` (DESIGN §1 Step 1).

use serde::{Deserialize, Serialize};

/// Current schema version of `theoretical_limits.yaml`.
pub const SCHEMA: u32 = 1;

/// Written in a tensor cell when the GPU is not in the embedded table (seed escalation rule).
pub const UNKNOWN_FILL_IN: &str = "UNKNOWN — fill in manually";

/// The seed's exact warning when code expects a GPU and none is present.
pub const NO_GPU_WARNING: &str = "[WARNING] No GPU detected but code expects one. Auditing CPU-only path; GPU ceiling marked N/A.";

/// The whole file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Ceilings {
    /// Schema version, [`SCHEMA`].
    pub schema: u32,
    /// RFC 3339 time of the measurement.
    pub measured_at: String,
    /// What machine this is.
    pub host: Host,
    /// CPU compute ceiling.
    pub cpu: Cpu,
    /// Memory bandwidth ceiling.
    pub memory: Memory,
    /// Disk bandwidth ceiling of the workspace's filesystem.
    pub disk: Disk,
    /// One entry per NVML device; empty without NVML.
    pub gpus: Vec<Gpu>,
    /// Everything that could not be measured, and why.
    pub warnings: Vec<String>,
}

/// Host identity.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Host {
    /// CPU brand string.
    pub cpu_brand: String,
    /// Logical CPUs (hardware threads).
    pub logical_cpus: usize,
    /// Physical cores, when the OS says.
    pub physical_cores: Option<usize>,
    /// CPUs this process may use (cgroup / affinity aware).
    pub available_parallelism: usize,
    /// SIMD features detected at run time, widest first.
    pub simd: Vec<String>,
    /// Operating system name and version.
    pub os: String,
    /// Kernel version.
    pub kernel: String,
}

/// CPU compute.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Cpu {
    /// Clock measured with a dependent-add chain (GHz); sysinfo's nominal figure is wrong in VMs.
    pub clock_ghz_measured: Option<f64>,
    /// FP32 throughput.
    pub fp32_gflops: Figure,
}

/// A figure with its theoretical and measured values.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Figure {
    /// From specs and formulas.
    pub theoretical: Option<f64>,
    /// From a micro-benchmark on this machine.
    pub measured: Option<f64>,
    /// How `measured` was obtained (or why it is missing).
    pub method: String,
}

/// Memory bandwidth.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Memory {
    /// Installed memory (GiB).
    pub total_gib: f64,
    /// STREAM-style bandwidth (GB/s, decimal).
    pub bandwidth_gbs: Figure,
}

/// Disk bandwidth of the workspace's filesystem.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Disk {
    /// Folder probed.
    pub path: String,
    /// Filesystem type (`ext4`, `xfs`, `overlay`, ...).
    pub fs: String,
    /// `o_direct` or `buffered+fadvise` and block size.
    pub method: String,
    /// Sequential read (MB/s, decimal) at queue depth 1 and 4.
    pub read_mbs: QueueDepths,
    /// Sequential write (MB/s, decimal) at queue depth 1 and 4.
    pub write_mbs: QueueDepths,
}

/// Figures at two queue depths.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct QueueDepths {
    /// One request in flight: what a serial reader can reach.
    pub qd1: Option<Spread>,
    /// Four requests in flight.
    pub qd4: Option<Spread>,
}

/// Median and spread of repeated measurements.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Spread {
    /// Median.
    pub median: f64,
    /// Smallest.
    pub min: f64,
    /// Largest.
    pub max: f64,
    /// Number of repeats.
    pub runs: usize,
}

/// A tensor-core or datasheet figure: a number, or the seed's "fill in manually" text.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum TableValue {
    /// From the embedded table.
    Value(f64),
    /// [`UNKNOWN_FILL_IN`] or "not supported".
    Text(String),
}

/// One GPU.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Gpu {
    /// NVML index.
    pub index: u32,
    /// NVML name.
    pub name: String,
    /// PCI device id (upper 16 bits of NVML's `pci_device_id`), e.g. `0x2330`.
    pub pci_device_id: String,
    /// Device memory (GiB).
    pub memory_gib: f64,
    /// Driver version.
    pub driver: Option<String>,
    /// CUDA driver API version, e.g. `12.4`.
    pub cuda: Option<String>,
    /// Compute capability, e.g. `9.0`.
    pub compute_capability: Option<String>,
    /// Streaming multiprocessors.
    pub sm_count: Option<u32>,
    /// Maximum clocks.
    pub clocks_mhz: GpuClocks,
    /// PCIe link.
    pub pcie: Pcie,
    /// Enforced power limit (W).
    pub power_limit_w: Option<f64>,
    /// Active clock throttle reasons at measurement time.
    pub throttle_reasons: Vec<String>,
    /// FP32 (CUDA cores) TFLOP/s.
    pub fp32_tflops: GpuFigure,
    /// Dense TF32 tensor TFLOP/s.
    pub tf32_tflops: GpuFigure,
    /// Dense FP16/BF16 tensor TFLOP/s (FP32 accumulate).
    pub fp16_bf16_tflops: GpuFigure,
    /// Dense FP8 tensor TFLOP/s.
    pub fp8_tflops: GpuFigure,
    /// Device memory bandwidth (GB/s).
    pub mem_bandwidth_gbs: GpuFigure,
    /// Pinned host→device bandwidth (GB/s), measured.
    pub h2d_gbs: Option<f64>,
    /// Pinned device→host bandwidth (GB/s), measured.
    pub d2h_gbs: Option<f64>,
    /// Which row of the embedded table matched, or why none did.
    pub table_match: String,
    /// MIG mode, when NVML reports it.
    pub mig_enabled: Option<bool>,
    /// ECC mode, when NVML reports it.
    pub ecc_enabled: Option<bool>,
}

/// GPU clocks.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct GpuClocks {
    /// Maximum SM clock.
    pub sm_max: Option<u32>,
    /// Maximum memory clock.
    pub mem_max: Option<u32>,
}

/// PCIe link.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Pcie {
    /// Maximum generation of the link.
    #[serde(rename = "gen")]
    pub generation: Option<u32>,
    /// Maximum width (lanes).
    pub width: Option<u32>,
    /// Theoretical bandwidth per direction (GB/s).
    pub theoretical_gbs_per_dir: Option<f64>,
}

/// A GPU figure from three sources.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct GpuFigure {
    /// From NVML formulas (FP32 and memory bandwidth only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theoretical_nvml: Option<f64>,
    /// From the embedded datasheet table.
    pub datasheet: Option<TableValue>,
    /// From the torch micro-benchmark.
    pub measured: Option<f64>,
    /// Why `measured` is missing, when it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_note: Option<String>,
}

impl Figure {
    /// The figure saturation is computed against: measured, else theoretical.
    #[must_use]
    pub fn best(&self) -> Option<f64> {
        self.measured.or(self.theoretical)
    }
}

impl Ceilings {
    /// Reads a `theoretical_limits.yaml`.
    pub fn from_yaml(text: &str) -> Result<Self, serde_yaml::Error> {
        serde_yaml::from_str(text)
    }

    /// Writes the YAML text.
    pub fn to_yaml(&self) -> Result<String, serde_yaml::Error> {
        serde_yaml::to_string(self)
    }
}
