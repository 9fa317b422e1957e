//! Step 1, CPU: which SIMD units this machine has, the clock its cores really run at, the
//! theoretical FP32 peak (cores × FLOP/cycle × clock) and a measured multi-threaded FMA loop.
//!
//! The FMA loop keeps 12 independent accumulators per thread so the FMA pipes never wait on
//! their own latency (2 pipes × 4–5 cycles of latency needs ≥ 10; reference/ceilings.md §4.6);
//! a tight loop like this reaches 92–99 % of the theoretical peak, which is why it is the
//! ceiling and a real GEMM is not.

use std::hint::black_box;
use std::sync::Barrier;
use std::time::{Duration, Instant};

/// Independent accumulators per thread in the FMA kernels.
const ACCUMULATORS: u64 = 12;

/// Vector instruction set the FMA kernel runs with, widest detected first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kernel {
    /// 512-bit FMA (`avx512f`): 16 f32 lanes.
    Avx512,
    /// 256-bit FMA (`avx2` + `fma`): 8 f32 lanes.
    Avx2Fma,
    /// 128-bit NEON `vfmaq_f32`: 4 f32 lanes.
    Neon,
    /// Portable scalar multiply and add (no FMA instruction): what LLVM makes of plain code.
    Scalar,
}

impl Kernel {
    /// f32 lanes per instruction.
    #[must_use]
    pub fn lanes(self) -> u64 {
        match self {
            Self::Avx512 => 16,
            Self::Avx2Fma => 8,
            Self::Neon => 4,
            Self::Scalar => 1,
        }
    }

    /// Name used in `method`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Avx512 => "avx512f",
            Self::Avx2Fma => "avx2+fma",
            Self::Neon => "neon",
            Self::Scalar => "scalar",
        }
    }

    /// The widest kernel this CPU runs (runtime detection, not compile-time target).
    #[must_use]
    pub fn detect() -> Self {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f") {
                return Self::Avx512;
            }
            if std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma")
            {
                return Self::Avx2Fma;
            }
        }
        #[cfg(target_arch = "aarch64")]
        {
            if std::arch::is_aarch64_feature_detected!("neon") {
                return Self::Neon;
            }
        }
        Self::Scalar
    }
}

/// SIMD features detected at run time, widest first (the `host.simd` list).
#[must_use]
pub fn simd_features() -> Vec<String> {
    let mut found = Vec::new();
    #[cfg(target_arch = "x86_64")]
    {
        macro_rules! probe {
            ($($feature:tt),*) => {
                $(if std::arch::is_x86_feature_detected!($feature) {
                    found.push($feature.to_owned());
                })*
            };
        }
        probe!(
            "avx512f",
            "avx512bw",
            "avx512vl",
            "avx512bf16",
            "avx512fp16",
            "avx512vnni",
            "avx2",
            "fma",
            "f16c",
            "avx",
            "sse4.2",
            "sse2"
        );
    }
    #[cfg(target_arch = "aarch64")]
    {
        macro_rules! probe {
            ($($feature:tt),*) => {
                $(if std::arch::is_aarch64_feature_detected!($feature) {
                    found.push($feature.to_owned());
                })*
            };
        }
        probe!("sve2", "sve", "bf16", "fp16", "neon");
    }
    found
}

/// CPU identity needed to pick FLOP/cycle (from `/proc/cpuinfo` on Linux).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CpuId {
    /// `vendor_id`: `GenuineIntel`, `AuthenticAMD`, ...
    pub vendor: String,
    /// x86 `cpu family`.
    pub family: Option<u32>,
    /// Arm `CPU part` (MIDR part number), e.g. `0xd0c` for Neoverse N1.
    pub arm_part: Option<u32>,
}

impl CpuId {
    /// Reads `/proc/cpuinfo`; empty fields where it is absent (not Linux).
    #[must_use]
    pub fn read() -> Self {
        std::fs::read_to_string("/proc/cpuinfo")
            .map(|text| Self::parse(&text))
            .unwrap_or_default()
    }

    /// Parses the first processor block of `/proc/cpuinfo`.
    #[must_use]
    pub fn parse(text: &str) -> Self {
        let mut id = Self::default();
        for line in text.lines() {
            let Some((key, value)) = line.split_once(':') else {
                continue;
            };
            let (key, value) = (key.trim(), value.trim());
            match key {
                "vendor_id" if id.vendor.is_empty() => id.vendor = value.to_owned(),
                "cpu family" if id.family.is_none() => id.family = value.parse().ok(),
                "CPU part" if id.arm_part.is_none() => {
                    id.arm_part = u32::from_str_radix(value.trim_start_matches("0x"), 16).ok();
                }
                _ => {}
            }
        }
        id
    }
}

/// Peak FP32 FLOP per cycle per core for `kernel` on this CPU, and why
/// (reference/ceilings.md §3.4: FMA units × lanes × 2).
#[must_use]
pub fn flop_per_cycle(kernel: Kernel, id: &CpuId) -> (f64, &'static str) {
    match kernel {
        Kernel::Avx512 if id.vendor == "AuthenticAMD" && id.family == Some(0x19) => (
            32.0,
            "Zen 4 runs AVX-512 on 2 x 256-bit FMA pipes: 32 FLOP/cycle",
        ),
        Kernel::Avx512 if id.vendor == "AuthenticAMD" => {
            (64.0, "Zen 5: 2 x 512-bit FMA pipes: 64 FLOP/cycle")
        }
        Kernel::Avx512 => (
            64.0,
            "2 x 512-bit FMA units: 64 FLOP/cycle (Xeon SKUs with one AVX-512 FMA unit reach 32)",
        ),
        Kernel::Avx2Fma => (32.0, "2 x 256-bit FMA units: 32 FLOP/cycle"),
        // Neoverse V1 (0xd40) and V2 (0xd4f) have 4 x 128-bit pipes; N1/N2 and most others 2.
        Kernel::Neon if matches!(id.arm_part, Some(0xd40 | 0xd4f)) => {
            (32.0, "Neoverse V1/V2: 4 x 128-bit FMA pipes: 32 FLOP/cycle")
        }
        Kernel::Neon => (16.0, "2 x 128-bit NEON FMA pipes: 16 FLOP/cycle"),
        Kernel::Scalar => (
            2.0,
            "no vector FMA detected: 1 scalar multiply + 1 add per cycle",
        ),
    }
}

/// Dependent integer adds per iteration of the clock loop (each has 1 cycle of latency).
const CHAIN: u64 = 100;

/// Measures the core clock (GHz) with a chain of dependent 1-cycle register-register integer
/// adds (an add of an immediate can be folded at rename on Golden Cove and later: 20 "GHz"). The chain
/// runs exactly one add per cycle whatever the core's width, so adds / seconds = Hz.
/// sysinfo's figure is the nominal one (2.445 GHz read while the core ran 2.94 GHz in a VM,
/// reference/ceilings.md §1 item 5). Best of `repeats` (the fastest run had the core to itself).
#[must_use]
pub fn measure_clock_ghz(iterations: u64, repeats: usize) -> Option<f64> {
    let mut best: Option<f64> = None;
    for _ in 0..repeats.max(1) {
        let start = Instant::now();
        let result = add_chain(black_box(iterations))?;
        let elapsed = start.elapsed().as_secs_f64();
        black_box(result);
        if elapsed <= 0.0 {
            continue;
        }
        let ghz = (iterations * CHAIN) as f64 / elapsed / 1e9;
        best = Some(best.map_or(ghz, |b: f64| b.max(ghz)));
    }
    best
}

#[cfg(target_arch = "x86_64")]
#[allow(
    unsafe_code,
    reason = "inline asm is the only way to get a chain of exactly-one-cycle adds the optimiser cannot fold"
)]
fn add_chain(iterations: u64) -> Option<u64> {
    let mut x: u64 = 0;
    let left = iterations;
    if left == 0 {
        return Some(0);
    }
    // SAFETY: register-only arithmetic and a backward branch; no memory, no stack.
    unsafe {
        std::arch::asm!(
            "2:",
            ".rept 100",
            "add {x}, {one}",
            ".endr",
            "sub {left}, 1",
            "jnz 2b",
            x = inout(reg) x,
            one = in(reg) 1_u64,
            left = inout(reg) left => _,
            options(nomem, nostack),
        );
    }
    Some(x)
}

#[cfg(target_arch = "aarch64")]
#[allow(
    unsafe_code,
    reason = "inline asm is the only way to get a chain of exactly-one-cycle adds the optimiser cannot fold"
)]
fn add_chain(iterations: u64) -> Option<u64> {
    let mut x: u64 = 0;
    let left = iterations;
    if left == 0 {
        return Some(0);
    }
    // SAFETY: register-only arithmetic and a backward branch; no memory, no stack.
    unsafe {
        std::arch::asm!(
            "2:",
            ".rept 100",
            "add {x}, {x}, {one}",
            ".endr",
            "subs {left}, {left}, #1",
            "b.ne 2b",
            x = inout(reg) x,
            one = in(reg) 1_u64,
            left = inout(reg) left => _,
            options(nomem, nostack),
        );
    }
    Some(x)
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn add_chain(_iterations: u64) -> Option<u64> {
    None
}

/// Multi-threaded FMA samples: `threads` persistent threads run `iterations` of the kernel per
/// sample, released together by a barrier; a sample lasts from the first thread's start to the
/// last thread's end. Returns the best sample in GFLOP/s (2 FLOP per lane per FMA).
///
/// Short samples, many of them: on a shared machine a sample is only clean when no other
/// process ran on any of the cores meanwhile, and short ones often are.
#[must_use]
pub fn measure_fma_gflops(kernel: Kernel, threads: usize, iterations: u64, samples: usize) -> f64 {
    let threads = threads.max(1);
    let samples = samples.max(1);
    let barrier = Barrier::new(threads);
    let spans: Vec<Vec<(Instant, Instant)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut spans = Vec::with_capacity(samples);
                    for _ in 0..samples {
                        barrier.wait();
                        let start = Instant::now();
                        black_box(run_kernel(kernel, black_box(iterations)));
                        spans.push((start, Instant::now()));
                    }
                    spans
                })
            })
            .collect();
        // A worker cannot panic (pure arithmetic); a failed join only loses its samples.
        handles.into_iter().filter_map(|h| h.join().ok()).collect()
    });
    if spans.len() != threads {
        return 0.0;
    }
    let flop =
        threads as f64 * iterations as f64 * ACCUMULATORS as f64 * kernel.lanes() as f64 * 2.0;
    (0..samples)
        .filter_map(|sample| {
            let start = spans.iter().map(|s| s[sample].0).min()?;
            let end = spans.iter().map(|s| s[sample].1).max()?;
            let seconds = end
                .duration_since(start)
                .max(Duration::from_nanos(1))
                .as_secs_f64();
            Some(flop / seconds / 1e9)
        })
        .fold(0.0, f64::max)
}

#[allow(
    unsafe_code,
    reason = "calling a #[target_feature] kernel is unsafe; each call is guarded by the runtime detection in Kernel::detect"
)]
fn run_kernel(kernel: Kernel, iterations: u64) -> f32 {
    match kernel {
        #[cfg(target_arch = "x86_64")]
        Kernel::Avx512 if std::arch::is_x86_feature_detected!("avx512f") => {
            // SAFETY: avx512f was detected at run time just above.
            unsafe { x86::fma_avx512(iterations) }
        }
        #[cfg(target_arch = "x86_64")]
        Kernel::Avx2Fma
            if std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma") =>
        {
            // SAFETY: avx2 and fma were detected at run time just above.
            unsafe { x86::fma_avx2(iterations) }
        }
        #[cfg(target_arch = "aarch64")]
        Kernel::Neon => arm::fma_neon(iterations),
        _ => fma_scalar(iterations),
    }
}

/// Twelve named accumulators: an array would be kept in memory at opt-level 1.
macro_rules! twelve_accumulators {
    ($init:expr, $step:expr, $combine:expr, $iterations:expr) => {{
        let (mut a0, mut a1, mut a2, mut a3) = ($init(1.0), $init(2.0), $init(3.0), $init(4.0));
        let (mut a4, mut a5, mut a6, mut a7) = ($init(5.0), $init(6.0), $init(7.0), $init(8.0));
        let (mut a8, mut a9, mut a10, mut a11) =
            ($init(9.0), $init(10.0), $init(11.0), $init(12.0));
        for _ in 0..$iterations {
            a0 = $step(a0);
            a1 = $step(a1);
            a2 = $step(a2);
            a3 = $step(a3);
            a4 = $step(a4);
            a5 = $step(a5);
            a6 = $step(a6);
            a7 = $step(a7);
            a8 = $step(a8);
            a9 = $step(a9);
            a10 = $step(a10);
            a11 = $step(a11);
        }
        let all = black_box([a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11]);
        all.into_iter().fold(0.0_f32, |sum, v| sum + $combine(v))
    }};
}

/// Plain `x * m + a` (no FMA instruction: `f32::mul_add` without the `fma` feature is a libm
/// call, 200× slower, reference/ceilings.md §3.3).
#[inline(never)]
fn fma_scalar(iterations: u64) -> f32 {
    let m = black_box(0.999_999_f32);
    let a = black_box(1e-7_f32);
    twelve_accumulators!(|v: f32| v, |x: f32| x * m + a, |v: f32| v, iterations)
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::{
        __m256, __m512, _mm256_cvtss_f32, _mm256_fmadd_ps, _mm256_set1_ps, _mm512_cvtss_f32,
        _mm512_fmadd_ps, _mm512_set1_ps,
    };
    use std::hint::black_box;

    /// 12 × 8 lanes × `x = x * m + a` per iteration.
    #[target_feature(enable = "avx2,fma")]
    #[inline(never)]
    pub(super) fn fma_avx2(iterations: u64) -> f32 {
        let m = _mm256_set1_ps(black_box(0.999_999));
        let a = _mm256_set1_ps(black_box(1e-7));
        twelve_accumulators!(
            |v: f32| _mm256_set1_ps(v),
            |x: __m256| _mm256_fmadd_ps(x, m, a),
            |v: __m256| _mm256_cvtss_f32(v),
            iterations
        )
    }

    /// 12 × 16 lanes × `x = x * m + a` per iteration.
    #[target_feature(enable = "avx512f")]
    #[inline(never)]
    pub(super) fn fma_avx512(iterations: u64) -> f32 {
        let m = _mm512_set1_ps(black_box(0.999_999));
        let a = _mm512_set1_ps(black_box(1e-7));
        twelve_accumulators!(
            |v: f32| _mm512_set1_ps(v),
            |x: __m512| _mm512_fmadd_ps(x, m, a),
            |v: __m512| _mm512_cvtss_f32(v),
            iterations
        )
    }
}

#[cfg(target_arch = "aarch64")]
mod arm {
    use std::arch::aarch64::{float32x4_t, vdupq_n_f32, vfmaq_f32, vgetq_lane_f32};
    use std::hint::black_box;

    /// 12 × 4 lanes × `x = a + x * m` per iteration (NEON is baseline on aarch64).
    #[inline(never)]
    pub(super) fn fma_neon(iterations: u64) -> f32 {
        let m = vdupq_n_f32(black_box(0.999_999));
        let a = vdupq_n_f32(black_box(1e-7));
        twelve_accumulators!(
            |v: f32| vdupq_n_f32(v),
            |x: float32x4_t| vfmaq_f32(a, x, m),
            |v: float32x4_t| vgetq_lane_f32::<0>(v),
            iterations
        )
    }
}

/// How long the CPU probe runs.
#[derive(Debug, Clone, Copy)]
pub struct CpuPlan {
    /// Clock samples; the fastest is kept.
    pub clock_samples: usize,
    /// Iterations of the 100-add clock chain per sample (30 k ≈ 1 ms at 3 GHz).
    pub clock_iterations: u64,
    /// FMA samples; the fastest is kept.
    pub fma_samples: usize,
    /// Kernel iterations per thread per FMA sample (2.5 M ≈ 5 ms at 6 cycles each).
    pub fma_iterations: u64,
}

impl CpuPlan {
    /// The real measurement: about 0.5 s.
    pub const FULL: Self = Self {
        clock_samples: 200,
        clock_iterations: 30_000,
        fma_samples: 50,
        fma_iterations: 2_500_000,
    };
    /// A few milliseconds, for tests.
    pub const QUICK: Self = Self {
        clock_samples: 3,
        clock_iterations: 1000,
        fma_samples: 2,
        fma_iterations: 10_000,
    };
}

/// What the CPU probe found.
#[derive(Debug, Clone, PartialEq)]
pub struct CpuMeasurement {
    /// Kernel used.
    pub kernel: Kernel,
    /// Threads running the FMA loop.
    pub threads: usize,
    /// Cores counted in the theoretical peak (physical cores this process may use).
    pub cores: usize,
    /// Measured clock (GHz), best sample.
    pub clock_ghz: Option<f64>,
    /// Peak FLOP per cycle per core, and why.
    pub flop_per_cycle: (f64, &'static str),
    /// Best multi-threaded FMA sample (GFLOP/s).
    pub fma_gflops: f64,
}

impl CpuMeasurement {
    /// `cores × FLOP/cycle × measured clock` (GFLOP/s).
    #[must_use]
    pub fn theoretical_gflops(&self) -> Option<f64> {
        self.clock_ghz
            .map(|ghz| self.cores as f64 * self.flop_per_cycle.0 * ghz)
    }
}

/// Runs the CPU probe; of many short samples the best is kept (the ones that had the cores to
/// themselves on a shared machine).
#[must_use]
pub fn measure(plan: &CpuPlan, threads: usize, cores: usize, id: &CpuId) -> CpuMeasurement {
    let kernel = Kernel::detect();
    CpuMeasurement {
        kernel,
        threads,
        cores,
        clock_ghz: measure_clock_ghz(plan.clock_iterations, plan.clock_samples),
        flop_per_cycle: flop_per_cycle(kernel, id),
        fma_gflops: measure_fma_gflops(kernel, threads, plan.fma_iterations, plan.fma_samples),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpuinfo_parse_reads_vendor_family_and_arm_part() {
        let x86 = "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 1\n";
        let id = CpuId::parse(x86);
        assert_eq!(id.vendor, "AuthenticAMD");
        assert_eq!(id.family, Some(25));
        let arm = "processor\t: 0\nCPU implementer\t: 0x41\nCPU part\t: 0xd0c\n";
        assert_eq!(CpuId::parse(arm).arm_part, Some(0xd0c));
    }

    #[test]
    fn flop_per_cycle_follows_the_reference_table() {
        let zen3 = CpuId {
            vendor: "AuthenticAMD".into(),
            family: Some(25),
            arm_part: None,
        };
        assert_eq!(flop_per_cycle(Kernel::Avx2Fma, &zen3).0, 32.0);
        // Zen 4 (also family 25) double-pumps AVX-512: no gain over AVX2.
        assert_eq!(flop_per_cycle(Kernel::Avx512, &zen3).0, 32.0);
        let intel = CpuId {
            vendor: "GenuineIntel".into(),
            family: Some(6),
            arm_part: None,
        };
        assert_eq!(flop_per_cycle(Kernel::Avx512, &intel).0, 64.0);
        let graviton3 = CpuId {
            arm_part: Some(0xd40),
            ..CpuId::default()
        };
        assert_eq!(flop_per_cycle(Kernel::Neon, &graviton3).0, 32.0);
        let graviton2 = CpuId {
            arm_part: Some(0xd0c),
            ..CpuId::default()
        };
        assert_eq!(flop_per_cycle(Kernel::Neon, &graviton2).0, 16.0);
    }

    #[test]
    fn every_kernel_this_machine_has_computes_the_same_recurrence() {
        // x ← 0.999999·x + 1e-7 for a few steps: the vector kernels must agree with scalar code.
        let expected = fma_scalar(1000);
        let got = run_kernel(Kernel::detect(), 1000);
        assert!(
            (expected - got).abs() <= 1e-4 * expected.abs(),
            "{expected} vs {got}"
        );
    }

    #[test]
    fn clock_and_fma_probes_return_positive_figures() {
        #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
        assert!(measure_clock_ghz(10_000, 1).is_some_and(|ghz| ghz > 0.0));
        assert!(measure_fma_gflops(Kernel::detect(), 2, 10_000, 1) > 0.0);
    }
}
