//! Step 1, GPU: every device NVML lists, its theoretical FP32 and memory bandwidth from NVML
//! formulas, tensor peaks from the embedded table, measured figures from the torch benchmark.
//!
//! NVML is read once into plain [`NvmlRecord`]s behind [`GpuProbe`], so tests feed values
//! recorded from real cards and the formulas and table lookup run unchanged.

use serde::{Deserialize, Serialize};

use crate::ceilings::gpu_table::{self, GpuSpec};
use crate::ceilings::model::{Gpu, GpuClocks, GpuFigure, Pcie, TableValue, UNKNOWN_FILL_IN};
use crate::ceilings::torch_bench::TorchDevice;

/// What NVML says about one device, as plain values (`None` where the driver does not support
/// the query: GeForce, vGPU, MIG and old drivers each lack some).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NvmlRecord {
    /// NVML index.
    pub index: u32,
    /// `nvmlDeviceGetName`.
    pub name: String,
    /// `nvmlDeviceGetUUID`, e.g. `GPU-5e8c…`.
    pub uuid: Option<String>,
    /// NVML's `pci_device_id`: `(device << 16) | 0x10DE`.
    pub pci_device_id: u32,
    /// Total device memory (bytes).
    pub memory_total_bytes: u64,
    /// `nvmlSystemGetDriverVersion`.
    pub driver: Option<String>,
    /// `nvmlSystemGetCudaDriverVersion`, e.g. 12040.
    pub cuda_driver_version: Option<i32>,
    /// Compute capability (major, minor).
    pub compute_capability: Option<(i32, i32)>,
    /// `nvmlDeviceGetNumGpuCores` (CUDA cores).
    pub num_cores: Option<u32>,
    /// Max SM clock (MHz).
    pub sm_max_mhz: Option<u32>,
    /// Max memory clock (MHz), NVML's convention (already doubled for GDDR6X/GDDR7).
    pub mem_max_mhz: Option<u32>,
    /// Memory bus width (bits).
    pub memory_bus_width_bits: Option<u32>,
    /// Max PCIe generation (of GPU and slot).
    pub pcie_max_gen: Option<u32>,
    /// Max PCIe width (lanes).
    pub pcie_max_width: Option<u32>,
    /// Enforced power limit (mW).
    pub power_limit_mw: Option<u32>,
    /// Active clock throttle reasons.
    pub throttle_reasons: Vec<String>,
    /// MIG mode currently enabled.
    pub mig_enabled: Option<bool>,
    /// ECC currently enabled.
    pub ecc_enabled: Option<bool>,
}

/// Reads every GPU.
pub trait GpuProbe {
    /// All devices, or why NVML is unavailable (no driver, no `--gpus`, no permission).
    fn read(&self) -> Result<Vec<NvmlRecord>, String>;
}

/// The real NVML (libnvidia-ml.so.1, loaded at run time; absent on CPU-only machines).
#[derive(Debug, Clone, Copy, Default)]
pub struct NvmlProbe;

impl GpuProbe for NvmlProbe {
    fn read(&self) -> Result<Vec<NvmlRecord>, String> {
        use nvml_wrapper::Nvml;
        use nvml_wrapper::enum_wrappers::device::Clock;
        use nvml_wrapper::error::NvmlError;

        let nvml = Nvml::init().map_err(|err| match err {
            NvmlError::LibloadingError(_) => {
                "no NVIDIA driver library (libnvidia-ml.so.1) on this runner".to_owned()
            }
            NvmlError::DriverNotLoaded => {
                "the NVIDIA library is present but the kernel driver is not loaded (a container started without GPU access)".to_owned()
            }
            NvmlError::NoPermission => "no permission to query the NVIDIA driver".to_owned(),
            other => format!("NVML failed to initialise: {other}"),
        })?;
        let count = nvml
            .device_count()
            .map_err(|err| format!("NVML could not count devices: {err}"))?;
        let driver = nvml.sys_driver_version().ok();
        let cuda = nvml.sys_cuda_driver_version().ok();
        let mut records = Vec::new();
        for index in 0..count {
            let Ok(device) = nvml.device_by_index(index) else {
                continue;
            };
            records.push(NvmlRecord {
                index,
                name: device.name().unwrap_or_else(|_| format!("GPU {index}")),
                uuid: device.uuid().ok(),
                pci_device_id: device.pci_info().map_or(0, |p| p.pci_device_id),
                memory_total_bytes: device.memory_info().map_or(0, |m| m.total),
                driver: driver.clone(),
                cuda_driver_version: cuda,
                compute_capability: device
                    .cuda_compute_capability()
                    .ok()
                    .map(|c| (c.major, c.minor)),
                num_cores: device.num_cores().ok(),
                sm_max_mhz: device.max_clock_info(Clock::SM).ok(),
                mem_max_mhz: device.max_clock_info(Clock::Memory).ok(),
                memory_bus_width_bits: device.memory_bus_width().ok(),
                pcie_max_gen: device.max_pcie_link_gen().ok(),
                pcie_max_width: device.max_pcie_link_width().ok(),
                power_limit_mw: device.enforced_power_limit().ok(),
                throttle_reasons: device
                    .current_throttle_reasons()
                    .map(|reasons| {
                        reasons
                            .iter_names()
                            .map(|(name, _)| name.to_ascii_lowercase())
                            .collect()
                    })
                    .unwrap_or_default(),
                mig_enabled: device.mig_mode().ok().map(|m| m.current == 1),
                ecc_enabled: device.is_ecc_enabled().ok().map(|e| e.currently_enabled),
            });
        }
        Ok(records)
    }
}

/// `cores × 2 × max SM clock` (TFLOP/s): exact for data-center parts, up to ~25 % high on
/// GeForce, whose max clock is the top of the V/F curve (reference/ceilings.md §2.3).
#[must_use]
pub fn fp32_tflops(cores: u32, sm_max_mhz: u32) -> f64 {
    f64::from(cores) * 2.0 * f64::from(sm_max_mhz) / 1e6
}

/// `max memory clock × 2 × bus width / 8` (GB/s): NVML's clock convention makes the same ×2
/// right for HBM and GDDR6/6X/7 (reference/ceilings.md §2.4).
#[must_use]
pub fn mem_bandwidth_gbs(mem_max_mhz: u32, bus_width_bits: u32) -> f64 {
    f64::from(mem_max_mhz) * 2.0 * f64::from(bus_width_bits) / 8.0 / 1000.0
}

/// PCIe bandwidth per direction (GB/s): `lanes × GT/s × encoding / 8`
/// (8b/10b for gen 1–2, 128b/130b for gen 3–5, ~FLIT overhead for gen 6).
#[must_use]
pub fn pcie_gbs_per_dir(generation: u32, width: u32) -> Option<f64> {
    let (gts, encoding) = match generation {
        1 => (2.5, 0.8),
        2 => (5.0, 0.8),
        3 => (8.0, 128.0 / 130.0),
        4 => (16.0, 128.0 / 130.0),
        5 => (32.0, 128.0 / 130.0),
        6 => (64.0, 242.0 / 256.0),
        _ => return None,
    };
    Some(f64::from(width) * gts * encoding / 8.0)
}

/// FP32 lanes per SM by compute capability (reference/ceilings.md §1.4), to derive the SM
/// count NVML does not report outside MIG.
#[must_use]
pub fn fp32_lanes_per_sm(major: i32, minor: i32) -> Option<u32> {
    match (major, minor) {
        (7, _) | (8, 0) => Some(64),
        (8, _) | (9, 0) | (10, _) | (12, _) => Some(128),
        _ => None,
    }
}

/// One decimal place for TFLOP/s and GB/s figures in the YAML.
fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

fn table_cell(
    spec: Option<&GpuSpec>,
    pick: impl Fn(&GpuSpec) -> Option<f64>,
    absent: &str,
) -> TableValue {
    match spec {
        Some(spec) => {
            pick(spec).map_or_else(|| TableValue::Text(absent.to_owned()), TableValue::Value)
        }
        None => TableValue::Text(UNKNOWN_FILL_IN.to_owned()),
    }
}

/// What the torch benchmark said for this GPU: its figures, or why there are none.
#[derive(Debug, Clone, Copy)]
pub enum Measured<'a> {
    /// Figures from the benchmark.
    Figures(&'a TorchDevice),
    /// Why nothing was measured.
    Missing(&'a str),
}

/// Builds the YAML entry of one GPU.
#[must_use]
pub fn build(record: &NvmlRecord, table: &[GpuSpec], measured: Measured<'_>) -> Gpu {
    let device_id = (record.pci_device_id >> 16) as u16;
    let memory_gib = record.memory_total_bytes as f64 / f64::from(1_u32 << 30);
    let found = gpu_table::lookup(table, device_id, &record.name, memory_gib);
    let spec = found.spec;
    let (figures, note) = match measured {
        Measured::Figures(device) => (Some(device), None),
        Measured::Missing(reason) => (None, Some(reason.to_owned())),
    };
    let with_measured =
        |value: Option<f64>, what: &str| -> (Option<f64>, Option<String>) {
            match (figures, value) {
                (_, Some(v)) => (Some(round1(v)), None),
                (Some(device), None) => {
                    (
                        None,
                        Some(device.errors.get(what).cloned().unwrap_or_else(|| {
                            format!("the torch benchmark did not report {what}")
                        })),
                    )
                }
                (None, None) => (None, note.clone()),
            }
        };
    let figure =
        |theoretical_nvml: Option<f64>, datasheet: TableValue, value: Option<f64>, what: &str| {
            let (measured, measured_note) = with_measured(value, what);
            GpuFigure {
                theoretical_nvml: theoretical_nvml.map(round1),
                datasheet: Some(datasheet),
                measured,
                measured_note,
            }
        };
    let get = |pick: fn(&TorchDevice) -> Option<f64>| figures.and_then(pick);
    let bf16_or_fp16 = get(|d| match (d.bf16_tflops, d.fp16_tflops) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    });
    let theoretical_fp32 = record
        .num_cores
        .zip(record.sm_max_mhz)
        .map(|(cores, mhz)| fp32_tflops(cores, mhz));
    let theoretical_bw = record
        .mem_max_mhz
        .zip(record.memory_bus_width_bits)
        .map(|(mhz, bits)| mem_bandwidth_gbs(mhz, bits));
    let sm_count = record.compute_capability.and_then(|(major, minor)| {
        let lanes = fp32_lanes_per_sm(major, minor)?;
        record.num_cores.map(|cores| cores / lanes)
    });
    Gpu {
        index: record.index,
        name: record.name.clone(),
        pci_device_id: format!("0x{device_id:04X}"),
        memory_gib: round1(memory_gib),
        driver: record.driver.clone(),
        cuda: record
            .cuda_driver_version
            .map(|v| format!("{}.{}", v / 1000, (v % 1000) / 10)),
        compute_capability: record
            .compute_capability
            .map(|(major, minor)| format!("{major}.{minor}")),
        sm_count,
        clocks_mhz: GpuClocks {
            sm_max: record.sm_max_mhz,
            mem_max: record.mem_max_mhz,
        },
        pcie: Pcie {
            generation: record.pcie_max_gen,
            width: record.pcie_max_width,
            theoretical_gbs_per_dir: record
                .pcie_max_gen
                .zip(record.pcie_max_width)
                .and_then(|(generation, width)| pcie_gbs_per_dir(generation, width))
                .map(round1),
        },
        power_limit_w: record.power_limit_mw.map(|mw| f64::from(mw) / 1000.0),
        throttle_reasons: record.throttle_reasons.clone(),
        fp32_tflops: figure(
            theoretical_fp32,
            table_cell(spec, |s| s.fp32, "not in table"),
            get(|d| d.fp32_tflops),
            "fp32_tflops",
        ),
        tf32_tflops: figure(
            None,
            table_cell(spec, |s| s.tf32, "not supported"),
            get(|d| d.tf32_tflops),
            "tf32_tflops",
        ),
        fp16_bf16_tflops: figure(
            None,
            table_cell(spec, |s| s.fp16_bf16, "not supported"),
            bf16_or_fp16,
            "bf16_tflops",
        ),
        fp8_tflops: GpuFigure {
            theoretical_nvml: None,
            datasheet: Some(table_cell(spec, |s| s.fp8, "not supported")),
            measured: None,
            measured_note: Some(
                "the benchmark does not run fp8 matmuls (needs scaled-mm kernels)".to_owned(),
            ),
        },
        mem_bandwidth_gbs: figure(
            theoretical_bw,
            table_cell(spec, |s| s.mem_bw_gbs, "not in table"),
            get(|d| d.d2d_gbs),
            "d2d_gbs",
        ),
        h2d_gbs: get(|d| d.h2d_gbs).map(round1),
        d2h_gbs: get(|d| d.d2h_gbs).map(round1),
        table_match: found.explanation,
        mig_enabled: record.mig_enabled,
        ecc_enabled: record.ecc_enabled,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values from real `nvidia-smi -q` / nvbench dumps (reference/ceilings.md §2.3, §2.4).
    #[allow(
        clippy::too_many_arguments,
        reason = "one recorded card per call reads best as one line"
    )]
    fn recorded(
        name: &str,
        id: u32,
        mib: u64,
        cores: u32,
        sm: u32,
        mem: u32,
        bus: u32,
        cc: (i32, i32),
    ) -> NvmlRecord {
        NvmlRecord {
            index: 0,
            name: name.to_owned(),
            pci_device_id: (id << 16) | 0x10DE,
            memory_total_bytes: mib << 20,
            driver: Some("550.54.15".into()),
            cuda_driver_version: Some(12040),
            compute_capability: Some(cc),
            num_cores: Some(cores),
            sm_max_mhz: Some(sm),
            mem_max_mhz: Some(mem),
            memory_bus_width_bits: Some(bus),
            pcie_max_gen: Some(4),
            pcie_max_width: Some(16),
            power_limit_mw: Some(400_000),
            ..NvmlRecord::default()
        }
    }

    fn h100() -> NvmlRecord {
        recorded(
            "NVIDIA H100 80GB HBM3",
            0x2330,
            81_559,
            16_896,
            1980,
            2619,
            5120,
            (9, 0),
        )
    }

    #[test]
    fn nvml_formulas_match_datasheets_for_recorded_cards() {
        // (cores, max SM MHz, max mem MHz, bus bits) → (FP32 TFLOP/s, GB/s) datasheet.
        let cases = [
            ("H100 SXM", 16_896, 1980, 2619, 5120, 67.0, 3350.0),
            ("A100 40GB", 6912, 1410, 1215, 5120, 19.5, 1555.0),
            ("T4", 2560, 1590, 5001, 256, 8.1, 320.0),
            ("RTX 4090", 16_384, 2520, 10_501, 384, 82.6, 1008.0),
        ];
        for (card, cores, sm, mem, bus, fp32, bw) in cases {
            let got_fp32 = fp32_tflops(cores, sm);
            let got_bw = mem_bandwidth_gbs(mem, bus);
            assert!(
                (got_fp32 - fp32).abs() / fp32 < 0.01,
                "{card}: {got_fp32} vs {fp32}"
            );
            assert!((got_bw - bw).abs() / bw < 0.01, "{card}: {got_bw} vs {bw}");
        }
        assert!((fp32_tflops(16_896, 1980) - 66.908_16).abs() < 1e-9);
        assert!((mem_bandwidth_gbs(10_501, 384) - 1008.096).abs() < 1e-9);
    }

    #[test]
    fn pcie_per_direction() {
        assert!((pcie_gbs_per_dir(3, 16).unwrap() - 15.75).abs() < 0.01);
        assert!((pcie_gbs_per_dir(4, 16).unwrap() - 31.51).abs() < 0.01);
        assert!((pcie_gbs_per_dir(5, 16).unwrap() - 63.02).abs() < 0.01);
        assert_eq!(pcie_gbs_per_dir(9, 16), None);
    }

    #[test]
    fn a_recorded_h100_fills_every_field() {
        let table = gpu_table::embedded().unwrap();
        let gpu = build(&h100(), &table, Measured::Missing("torch is not installed"));
        assert_eq!(gpu.pci_device_id, "0x2330");
        assert_eq!(gpu.memory_gib, 79.6);
        assert_eq!(gpu.cuda.as_deref(), Some("12.4"));
        assert_eq!(gpu.compute_capability.as_deref(), Some("9.0"));
        assert_eq!(gpu.sm_count, Some(132));
        assert_eq!(gpu.fp32_tflops.theoretical_nvml, Some(66.9));
        assert_eq!(gpu.fp32_tflops.datasheet, Some(TableValue::Value(67.0)));
        assert_eq!(
            gpu.fp16_bf16_tflops.datasheet,
            Some(TableValue::Value(989.4))
        );
        assert_eq!(gpu.mem_bandwidth_gbs.theoretical_nvml, Some(3352.3));
        assert_eq!(gpu.pcie.theoretical_gbs_per_dir, Some(31.5));
        assert_eq!(gpu.power_limit_w, Some(400.0));
        assert_eq!(gpu.fp32_tflops.measured, None);
        assert_eq!(
            gpu.fp32_tflops.measured_note.as_deref(),
            Some("torch is not installed")
        );
        assert!(
            gpu.table_match.starts_with("NVIDIA H100 80GB HBM3"),
            "{}",
            gpu.table_match
        );
    }

    #[test]
    fn an_unknown_gpu_gets_fill_in_cells_and_still_its_nvml_figures() {
        let table = gpu_table::embedded().unwrap();
        let record = recorded(
            "NVIDIA Future GPU",
            0x3FFF,
            196_608,
            20_000,
            2000,
            4000,
            8192,
            (11, 0),
        );
        let gpu = build(&record, &table, Measured::Missing("no torch"));
        let unknown = Some(TableValue::Text(UNKNOWN_FILL_IN.to_owned()));
        assert_eq!(gpu.tf32_tflops.datasheet, unknown);
        assert_eq!(gpu.fp16_bf16_tflops.datasheet, unknown);
        assert_eq!(gpu.fp8_tflops.datasheet, unknown);
        assert_eq!(gpu.fp32_tflops.theoretical_nvml, Some(80.0));
        assert_eq!(gpu.sm_count, None);
        assert!(gpu.table_match.contains("fill them in manually"));
    }

    #[test]
    fn a_t4_has_no_tf32_or_fp8() {
        let table = gpu_table::embedded().unwrap();
        let t4 = recorded("Tesla T4", 0x1EB8, 15_360, 2560, 1590, 5001, 256, (7, 5));
        let gpu = build(&t4, &table, Measured::Missing("x"));
        assert_eq!(
            gpu.tf32_tflops.datasheet,
            Some(TableValue::Text("not supported".into()))
        );
        assert_eq!(
            gpu.fp16_bf16_tflops.datasheet,
            Some(TableValue::Value(65.0))
        );
        assert_eq!(gpu.sm_count, Some(40));
    }

    #[test]
    fn measured_figures_land_in_their_cells() {
        let table = gpu_table::embedded().unwrap();
        let device = TorchDevice {
            fp32_tflops: Some(51.23),
            tf32_tflops: Some(370.0),
            bf16_tflops: Some(750.0),
            fp16_tflops: Some(760.0),
            d2d_gbs: Some(2900.0),
            h2d_gbs: Some(24.0),
            d2h_gbs: None,
            ..TorchDevice::default()
        };
        let gpu = build(&h100(), &table, Measured::Figures(&device));
        assert_eq!(gpu.fp32_tflops.measured, Some(51.2));
        assert_eq!(gpu.fp16_bf16_tflops.measured, Some(760.0));
        assert_eq!(gpu.mem_bandwidth_gbs.measured, Some(2900.0));
        assert_eq!(gpu.h2d_gbs, Some(24.0));
        assert_eq!(gpu.d2h_gbs, None);
        assert_eq!(gpu.fp32_tflops.measured_note, None);
    }
}
