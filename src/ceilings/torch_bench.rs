//! Step 1, GPU: measured figures from an embedded Python + torch micro-benchmark, run with the
//! runner's own interpreter (`$PYTHON`, else `python3`) so it measures the torch and CUDA the
//! audited code will use. Matmul TFLOP/s per precision (fp32, tf32, bf16, fp16), device-to-device
//! copy and pinned host↔device bandwidth; JSON on stdout; time-boxed.
//!
//! NVML cannot measure anything; a CUDA-driver benchmark in Rust would need PTX and cuBLAS
//! loading (reference/ceilings.md §4.6), while torch is what every audited project already has.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::Deserialize;

/// The benchmark script.
pub const SCRIPT: &str = include_str!("torch_bench.py");

/// What the script printed.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct TorchReport {
    /// Whether torch found CUDA.
    pub available: bool,
    /// Why not, when not.
    #[serde(default)]
    pub reason: Option<String>,
    /// torch version.
    #[serde(default)]
    pub torch: Option<String>,
    /// One entry per CUDA device torch sees.
    #[serde(default)]
    pub devices: Vec<TorchDevice>,
}

/// Figures for one device (`None` where a test failed; the reason is in `errors`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct TorchDevice {
    /// torch's device index (follows `CUDA_VISIBLE_DEVICES`, not NVML's order).
    #[serde(default)]
    pub index: u32,
    /// Device name.
    #[serde(default)]
    pub name: String,
    /// Device UUID as torch prints it (without NVML's `GPU-` prefix).
    #[serde(default)]
    pub uuid: String,
    /// fp32 matmul without TF32.
    pub fp32_tflops: Option<f64>,
    /// fp32 matmul with TF32 allowed.
    pub tf32_tflops: Option<f64>,
    /// bf16 matmul.
    pub bf16_tflops: Option<f64>,
    /// fp16 matmul.
    pub fp16_tflops: Option<f64>,
    /// Device-to-device copy, read + write bytes.
    pub d2d_gbs: Option<f64>,
    /// Pinned host → device.
    pub h2d_gbs: Option<f64>,
    /// Pinned device → host.
    pub d2h_gbs: Option<f64>,
    /// Figure name → error text.
    #[serde(default)]
    pub errors: BTreeMap<String, String>,
}

impl TorchReport {
    /// The device torch knows as the NVML device with this UUID, else (no UUIDs) the same
    /// index with the same name.
    #[must_use]
    pub fn device_for(
        &self,
        nvml_uuid: Option<&str>,
        nvml_index: u32,
        nvml_name: &str,
    ) -> Option<&TorchDevice> {
        let nvml_uuid = nvml_uuid.map(|u| u.trim_start_matches("GPU-").to_ascii_lowercase());
        if let Some(uuid) = &nvml_uuid
            && let Some(device) = self.devices.iter().find(|d| {
                !d.uuid.is_empty()
                    && d.uuid.trim_start_matches("GPU-").to_ascii_lowercase() == *uuid
            })
        {
            return Some(device);
        }
        self.devices
            .iter()
            .find(|d| d.index == nvml_index && d.name == nvml_name)
    }
}

/// The interpreter: `$PYTHON`, else `python3`.
#[must_use]
pub fn python() -> OsString {
    std::env::var_os("PYTHON").unwrap_or_else(|| OsString::from("python3"))
}

/// Runs the script, killing it after `timeout`; never fails, says why in `reason`.
#[must_use]
pub fn run(python: &OsString, timeout: Duration) -> TorchReport {
    let unavailable = |reason: String| TorchReport {
        available: false,
        reason: Some(reason),
        ..TorchReport::default()
    };
    let budget = timeout
        .saturating_sub(Duration::from_secs(5))
        .max(Duration::from_secs(1));
    let child = Command::new(python)
        .arg("-c")
        .arg(SCRIPT)
        .arg(format!("{:.1}", budget.as_secs_f64()))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(child) => child,
        Err(err) => {
            return unavailable(format!(
                "could not start {} ({err}); set PYTHON to the interpreter that has torch",
                python.to_string_lossy()
            ));
        }
    };
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let reader = |pipe: Option<std::process::ChildStdout>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_string(&mut text);
            }
            text
        })
    };
    let out_thread = reader(stdout);
    let err_thread = std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(mut pipe) = stderr {
            let _ = pipe.read_to_string(&mut text);
        }
        text
    });
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() < timeout => {
                std::thread::sleep(Duration::from_millis(50))
            }
            Ok(None) | Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
        }
    };
    let stdout = out_thread.join().unwrap_or_default();
    let stderr = err_thread.join().unwrap_or_default();
    if status.is_none() {
        return unavailable(format!(
            "the torch benchmark did not finish within {} s and was stopped",
            timeout.as_secs()
        ));
    }
    match parse(&stdout) {
        Ok(report) => report,
        Err(err) => {
            let tail: String = stderr.lines().rev().take(3).collect::<Vec<_>>().join(" | ");
            unavailable(format!(
                "the torch benchmark printed no result ({err}); stderr: {tail}"
            ))
        }
    }
}

/// Parses the last JSON line of the script's output.
pub fn parse(stdout: &str) -> Result<TorchReport, serde_json::Error> {
    let line = stdout
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with('{'))
        .unwrap_or("");
    serde_json::from_str(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_recorded_result() {
        let out = r#"{"available": true, "torch": "2.5.1", "cuda": "12.4", "devices": [{"index": 0, "name": "NVIDIA H100 80GB HBM3", "uuid": "5e8c0a1b-0000-1111-2222-333344445555", "errors": {"fp16_tflops": "OutOfMemoryError: x"}, "fp32_tflops": 51.2, "tf32_tflops": 378.5, "bf16_tflops": 742.1, "d2d_gbs": 2950.3, "h2d_gbs": 52.1, "d2h_gbs": 50.7}]}"#;
        let report = parse(&format!("warning: something\n{out}\n")).unwrap();
        assert!(report.available);
        let device = report
            .device_for(Some("GPU-5E8C0A1B-0000-1111-2222-333344445555"), 3, "other")
            .unwrap();
        assert_eq!(device.bf16_tflops, Some(742.1));
        assert_eq!(device.fp16_tflops, None);
        assert!(device.errors["fp16_tflops"].starts_with("OutOfMemoryError"));
        assert!(
            report
                .device_for(None, 0, "NVIDIA H100 80GB HBM3")
                .is_some()
        );
        assert!(
            report
                .device_for(None, 1, "NVIDIA H100 80GB HBM3")
                .is_none()
        );
    }

    #[test]
    fn a_missing_interpreter_is_a_reason_not_an_error() {
        let report = run(
            &OsString::from("/nonexistent/python3"),
            Duration::from_secs(5),
        );
        assert!(!report.available);
        assert!(report.reason.unwrap().contains("could not start"));
    }

    #[test]
    fn the_embedded_script_runs_and_says_why_when_it_cannot_measure() {
        // No GPU on CI: either torch is absent or it finds no CUDA; both are reasons.
        if Command::new("python3").arg("--version").output().is_err() {
            return;
        }
        let report = run(&OsString::from("python3"), Duration::from_secs(60));
        if report.available {
            // A GPU machine with torch: then it must have measured devices.
            assert!(!report.devices.is_empty(), "{report:?}");
        } else {
            let reason = report.reason.unwrap_or_default();
            assert!(reason.contains("torch"), "{reason}");
        }
    }
}
