//! Step 1, GPU: the datasheet table (dense tensor-core peaks cannot be derived from NVML),
//! embedded from `data/gpu_specs.csv` (a copy of shared/reference/gpu_specs.csv) and looked up
//! by PCI device id + name + memory.
//!
//! One device id can cover several SKUs (0x2342 = GH200 120 GB and 480 GB; 0x20B0 =
//! A100-SXM4-40GB and A100-PG509-200) and names are not unique either, so the lookup takes all
//! three (reference/ceilings.md §0 item 2).

use std::fmt::Write as _;

/// The embedded CSV.
pub const GPU_SPECS_CSV: &str = include_str!("../../data/gpu_specs.csv");

/// Relative difference allowed between NVML's memory (GiB, minus driver reservations) and the
/// table's marketing GB: H100 "80 GB" reports 79.6 GiB, T4 "16 GB" 15 GiB.
const MEMORY_TOLERANCE: f64 = 0.15;

/// One row of the table (TFLOP/s dense, GB/s decimal, GB).
#[derive(Debug, Clone, PartialEq)]
pub struct GpuSpec {
    /// NVML name, e.g. `NVIDIA H100 80GB HBM3`.
    pub name: String,
    /// PCI device id (upper 16 bits of NVML's `pci_device_id`).
    pub pci_device_id: u16,
    /// Memory (GB).
    pub memory_gb: f64,
    /// FP32 (CUDA cores).
    pub fp32: Option<f64>,
    /// TF32 tensor.
    pub tf32: Option<f64>,
    /// FP16/BF16 tensor with FP32 accumulate.
    pub fp16_bf16: Option<f64>,
    /// FP8 tensor.
    pub fp8: Option<f64>,
    /// Memory bandwidth (GB/s).
    pub mem_bw_gbs: Option<f64>,
    /// PCIe generation.
    pub pcie_gen: Option<u32>,
    /// Whether BF16 is supported (V100 and T4 have FP16 only).
    pub bf16_supported: bool,
    /// Confidence of the row: S (secondary source), M (from memory), low.
    pub conf: String,
}

/// Why the table could not be read (a broken embedded file is a build defect).
#[derive(Debug, thiserror::Error)]
#[error("data/gpu_specs.csv line {line}: {message}")]
pub struct TableError {
    /// 1-based line.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// Parses the table: a `#` comment line, a header, then rows.
pub fn parse(text: &str) -> Result<Vec<GpuSpec>, TableError> {
    let mut rows = Vec::new();
    let mut header: Option<Vec<&str>> = None;
    for (index, line) in text.lines().enumerate() {
        let line_no = index + 1;
        let err = |message: String| TableError {
            line: line_no,
            message,
        };
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let cells: Vec<&str> = line.split(',').map(str::trim).collect();
        let Some(columns) = &header else {
            header = Some(cells);
            continue;
        };
        if cells.len() != columns.len() {
            return Err(err(format!(
                "{} cells, header has {}",
                cells.len(),
                columns.len()
            )));
        }
        let cell = |name: &str| {
            columns
                .iter()
                .position(|c| *c == name)
                .map(|i| cells[i])
                .ok_or_else(|| err(format!("no column {name}")))
        };
        let number = |name: &str| -> Result<Option<f64>, TableError> {
            let text = cell(name)?;
            if text.is_empty() {
                return Ok(None);
            }
            text.parse()
                .map(Some)
                .map_err(|_| err(format!("{name} = {text:?} is not a number")))
        };
        let id_text = cell("pci_device_id")?;
        rows.push(GpuSpec {
            name: cell("nvml_name")?.to_owned(),
            pci_device_id: u16::from_str_radix(id_text, 16)
                .map_err(|_| err(format!("pci_device_id {id_text:?} is not hex")))?,
            memory_gb: number("memory_gb")?.ok_or_else(|| err("memory_gb is empty".into()))?,
            fp32: number("fp32")?,
            tf32: number("tf32")?,
            fp16_bf16: number("fp16_bf16")?,
            fp8: number("fp8")?,
            mem_bw_gbs: number("mem_bw_gbs")?,
            pcie_gen: number("pcie_gen")?.map(|g| g as u32),
            bf16_supported: cell("bf16_supported")? == "yes",
            conf: cell("conf")?.to_owned(),
        });
    }
    Ok(rows)
}

/// The embedded table.
pub fn embedded() -> Result<Vec<GpuSpec>, TableError> {
    parse(GPU_SPECS_CSV)
}

/// The outcome of a lookup: the row, if any, and a sentence for `table_match`.
#[derive(Debug, Clone, PartialEq)]
pub struct TableMatch<'a> {
    /// The matching row.
    pub spec: Option<&'a GpuSpec>,
    /// How it matched, or why nothing did.
    pub explanation: String,
}

fn memory_fits(spec: &GpuSpec, memory_gib: f64) -> bool {
    (memory_gib - spec.memory_gb).abs() <= MEMORY_TOLERANCE * spec.memory_gb
}

/// Finds the row for a GPU: rows with its PCI id (else rows with its exact name), then the
/// exact name among several, then the memory size; a memory size that fits no candidate means
/// a SKU the table does not know, and no row is used.
#[must_use]
pub fn lookup<'a>(
    table: &'a [GpuSpec],
    device_id: u16,
    name: &str,
    memory_gib: f64,
) -> TableMatch<'a> {
    let by_id: Vec<&GpuSpec> = table
        .iter()
        .filter(|s| s.pci_device_id == device_id)
        .collect();
    let (candidates, keyed_by) = if by_id.is_empty() {
        let by_name: Vec<&GpuSpec> = table.iter().filter(|s| s.name == name).collect();
        (by_name, "name (its PCI id is not in the table)")
    } else {
        (by_id, "PCI id")
    };
    if candidates.is_empty() {
        return TableMatch {
            spec: None,
            explanation: format!(
                "no row for PCI id 0x{device_id:04X} or name {name:?} in the embedded table (data/gpu_specs.csv): tensor peaks unknown, fill them in manually"
            ),
        };
    }
    let fitting: Vec<&GpuSpec> = candidates
        .iter()
        .copied()
        .filter(|s| memory_fits(s, memory_gib))
        .collect();
    let chosen = match fitting.as_slice() {
        [] => {
            let mut known = String::new();
            for s in &candidates {
                let _ = write!(known, "{} ({} GB); ", s.name, s.memory_gb);
            }
            return TableMatch {
                spec: None,
                explanation: format!(
                    "{keyed_by} 0x{device_id:04X} matches {}but this GPU has {memory_gib:.1} GiB: a SKU the table does not know; tensor peaks unknown, fill them in manually",
                    known
                ),
            };
        }
        [only] => *only,
        several => several
            .iter()
            .copied()
            .find(|s| s.name == name)
            .or_else(|| {
                several.iter().copied().min_by(|a, b| {
                    (a.memory_gb - memory_gib)
                        .abs()
                        .total_cmp(&(b.memory_gb - memory_gib).abs())
                })
            })
            .unwrap_or(several[0]),
    };
    let mut explanation = format!(
        "{} (matched by {keyed_by} 0x{:04X}",
        chosen.name, chosen.pci_device_id
    );
    if candidates.len() > 1 {
        let _ = write!(
            explanation,
            "; the id is shared by {} rows, resolved by {}",
            candidates.len(),
            if chosen.name == name && fitting.len() > 1 {
                "name"
            } else {
                "memory size"
            }
        );
    }
    let _ = write!(
        explanation,
        ", {memory_gib:.1} GiB vs {} GB",
        chosen.memory_gb
    );
    if chosen.name != name {
        let _ = write!(explanation, ", NVML name {name:?} differs");
    }
    let _ = write!(explanation, "; source confidence {})", chosen.conf);
    TableMatch {
        spec: Some(chosen),
        explanation,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_table_parses_every_row() {
        let table = embedded().unwrap();
        assert_eq!(table.len(), GPU_SPECS_CSV.lines().count() - 2);
        let h100 = table.iter().find(|s| s.pci_device_id == 0x2330).unwrap();
        assert_eq!(h100.name, "NVIDIA H100 80GB HBM3");
        assert_eq!(h100.fp16_bf16, Some(989.4));
        assert_eq!(h100.fp8, Some(1979.0));
        let t4 = table.iter().find(|s| s.name == "Tesla T4").unwrap();
        assert!(!t4.bf16_supported && t4.tf32.is_none());
    }

    #[test]
    fn a100_40_and_80_are_told_apart() {
        let table = embedded().unwrap();
        // NVML: A100-SXM4-40GB 40960 MiB, A100-SXM4-80GB 81920 MiB.
        let m40 = lookup(&table, 0x20B0, "NVIDIA A100-SXM4-40GB", 40.0);
        assert_eq!(m40.spec.unwrap().mem_bw_gbs, Some(1555.0));
        let m80 = lookup(&table, 0x20B2, "NVIDIA A100-SXM4-80GB", 80.0);
        assert_eq!(m80.spec.unwrap().mem_bw_gbs, Some(2039.0));
    }

    #[test]
    fn an_ambiguous_id_is_resolved_by_memory() {
        // Two SKUs behind one id (as 0x2342 GH200 96 GB / 144 GB would be), names unknown.
        let csv = "# test\nnvml_name,pci_device_id,memory_gb,fp32,tf32,fp16_bf16,fp8,mem_bw_gbs,pcie_gen,nvlink_gbs,tdp_w,bf16_supported,conf\n\
                   NVIDIA GH200 120GB,2342,96,67,494,990,1979,4000,5,900,,yes,M\n\
                   NVIDIA GH200 144G HBM3e,2342,144,67,494,990,1979,4900,5,900,,yes,M\n";
        let table = parse(csv).unwrap();
        let small = lookup(&table, 0x2342, "NVIDIA GH200 480GB", 95.0);
        assert_eq!(small.spec.unwrap().mem_bw_gbs, Some(4000.0));
        assert!(
            small
                .explanation
                .contains("shared by 2 rows, resolved by memory size"),
            "{}",
            small.explanation
        );
        let big = lookup(&table, 0x2342, "NVIDIA GH200 480GB", 143.0);
        assert_eq!(big.spec.unwrap().mem_bw_gbs, Some(4900.0));
        // Memory that fits neither: not guessed.
        let odd = lookup(&table, 0x2342, "NVIDIA GH200 480GB", 60.0);
        assert!(odd.spec.is_none());
        assert!(odd.explanation.contains("fill them in manually"));
    }

    #[test]
    fn an_exact_name_wins_among_rows_of_equal_memory() {
        let csv = "nvml_name,pci_device_id,memory_gb,fp32,tf32,fp16_bf16,fp8,mem_bw_gbs,pcie_gen,nvlink_gbs,tdp_w,bf16_supported,conf\n\
                   NVIDIA A100-SXM4-40GB,20B0,40,19.5,156,312,,1555,4,600,400,yes,S\n\
                   NVIDIA PG509-200,20B0,40,19.5,156,312,,1600,4,600,400,yes,M\n";
        let table = parse(csv).unwrap();
        let m = lookup(&table, 0x20B0, "NVIDIA PG509-200", 40.0);
        assert_eq!(m.spec.unwrap().mem_bw_gbs, Some(1600.0));
        assert!(
            m.explanation.contains("resolved by name"),
            "{}",
            m.explanation
        );
    }

    #[test]
    fn an_unknown_gpu_gets_no_row() {
        let table = embedded().unwrap();
        let m = lookup(&table, 0x1234, "NVIDIA Imaginary 9000", 48.0);
        assert!(m.spec.is_none());
        assert!(m.explanation.contains("0x1234"));
        // Known id, but a memory size no listed SKU has (an H100 94 GB variant on 0x2330).
        let m = lookup(&table, 0x2330, "NVIDIA H100", 94.0);
        assert!(m.spec.is_none(), "{}", m.explanation);
    }

    #[test]
    fn a_bad_row_names_its_line() {
        let csv = "nvml_name,pci_device_id,memory_gb\nX,zz,1\n";
        let err = parse(csv).unwrap_err();
        assert_eq!(err.line, 2);
    }
}
