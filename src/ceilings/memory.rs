//! Step 1, memory: STREAM-style copy and triad bandwidth over arrays far larger than the
//! last-level cache, one thread per available CPU, best of N (as STREAM reports).
//!
//! Byte counts follow STREAM (McCalpin): copy `a = b` 16 B per element, triad
//! `a = b + q·c` 24 B; the write-allocate read is not counted, so true DRAM traffic is
//! higher (reference/ceilings.md §4.1).

use std::time::Instant;

/// How the memory probe runs.
#[derive(Debug, Clone, Copy)]
pub struct MemoryPlan {
    /// Bytes per array (three arrays).
    pub array_bytes: usize,
    /// Repetitions of each kernel; the best is kept.
    pub repeats: usize,
}

impl MemoryPlan {
    /// Default sizing: each array `max(4 × LLC, 256 MiB)`, capped at 256 MiB and at 1/16 of
    /// RAM so the probe stays within the step's 10 s budget (first touch of 3 × 256 MiB already
    /// costs ~1 s in a VM); `llc_inflated` says when the cap kept it below 4 × LLC.
    #[must_use]
    pub fn sized(llc_bytes: Option<u64>, total_memory_bytes: u64) -> (Self, bool) {
        const MIB: u64 = 1 << 20;
        let want = llc_bytes.map_or(256 * MIB, |llc| (4 * llc).max(256 * MIB));
        let cap = (256 * MIB).min(total_memory_bytes / 16).max(16 * MIB);
        let bytes = want.min(cap);
        let llc_inflated = llc_bytes.is_some_and(|llc| bytes < 4 * llc);
        (
            Self {
                array_bytes: usize::try_from(bytes).unwrap_or(usize::MAX),
                repeats: 5,
            },
            llc_inflated,
        )
    }

    /// 8 MiB arrays, 1 repeat: for tests.
    pub const QUICK: Self = Self {
        array_bytes: 8 << 20,
        repeats: 1,
    };
}

/// Best copy and triad bandwidth.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StreamResult {
    /// Copy, GB/s (decimal), 16 B per element.
    pub copy_gbs: f64,
    /// Triad, GB/s (decimal), 24 B per element.
    pub triad_gbs: f64,
    /// MiB per array.
    pub array_mib: f64,
    /// Worker threads.
    pub threads: usize,
}

/// Size of the last-level cache from sysfs (`index3`, else the highest index), in bytes.
#[must_use]
pub fn last_level_cache_bytes() -> Option<u64> {
    let base = std::path::Path::new("/sys/devices/system/cpu/cpu0/cache");
    (0..8)
        .rev()
        .filter_map(|index| std::fs::read_to_string(base.join(format!("index{index}/size"))).ok())
        .find_map(|text| parse_cache_size(&text))
}

/// Parses sysfs cache sizes such as `491520K` or `32M`.
#[must_use]
pub fn parse_cache_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let (digits, unit) = text.split_at(text.find(|c: char| !c.is_ascii_digit())?);
    let value: u64 = digits.parse().ok()?;
    match unit {
        "K" => Some(value << 10),
        "M" => Some(value << 20),
        "G" => Some(value << 30),
        _ => None,
    }
}

/// Runs copy and triad with `threads` workers; each worker touches its own slice first
/// (first-touch places pages near the core that uses them).
#[must_use]
pub fn stream(plan: &MemoryPlan, threads: usize) -> StreamResult {
    let threads = threads.max(1);
    let n = (plan.array_bytes / std::mem::size_of::<f64>()).max(threads);
    // `vec![0.0; n]` is calloc: pages are mapped on first write, inside the workers below.
    let mut a = vec![0.0_f64; n];
    let mut b = vec![0.0_f64; n];
    let mut c = vec![0.0_f64; n];
    let chunk = n.div_ceil(threads);
    parallel(&mut a, &mut b, &mut c, chunk, |a, b, c| {
        a.fill(0.0);
        b.fill(1.0);
        c.fill(2.0);
    });
    let bytes = (n * std::mem::size_of::<f64>()) as f64;
    let mut copy_best = f64::INFINITY;
    let mut triad_best = f64::INFINITY;
    for _ in 0..plan.repeats.max(1) {
        let start = Instant::now();
        parallel(&mut a, &mut b, &mut c, chunk, |a, b, _| {
            a.copy_from_slice(b)
        });
        copy_best = copy_best.min(start.elapsed().as_secs_f64());
        let start = Instant::now();
        parallel(&mut a, &mut b, &mut c, chunk, |a, b, c| triad(a, b, c, 3.0));
        triad_best = triad_best.min(start.elapsed().as_secs_f64());
    }
    std::hint::black_box((&a, &b, &c));
    StreamResult {
        copy_gbs: 2.0 * bytes / copy_best.max(1e-9) / 1e9,
        triad_gbs: 3.0 * bytes / triad_best.max(1e-9) / 1e9,
        array_mib: bytes / f64::from(1 << 20),
        threads,
    }
}

/// Runs `kernel` on matching chunks of the three arrays, one scoped thread per chunk.
fn parallel(
    a: &mut [f64],
    b: &mut [f64],
    c: &mut [f64],
    chunk: usize,
    kernel: impl Fn(&mut [f64], &mut [f64], &mut [f64]) + Sync,
) {
    std::thread::scope(|scope| {
        for ((a, b), c) in a
            .chunks_mut(chunk)
            .zip(b.chunks_mut(chunk))
            .zip(c.chunks_mut(chunk))
        {
            let kernel = &kernel;
            scope.spawn(move || kernel(a, b, c));
        }
    });
}

/// `a = b + q·c` over exact 8-element blocks so LLVM vectorises even at opt-level 1.
#[inline(never)]
fn triad(a: &mut [f64], b: &[f64], c: &[f64], q: f64) {
    let mut a_blocks = a.chunks_exact_mut(8);
    let mut b_blocks = b.chunks_exact(8);
    let mut c_blocks = c.chunks_exact(8);
    for ((x, y), z) in (&mut a_blocks).zip(&mut b_blocks).zip(&mut c_blocks) {
        for i in 0..8 {
            x[i] = y[i] + q * z[i];
        }
    }
    for ((x, y), z) in a_blocks
        .into_remainder()
        .iter_mut()
        .zip(b_blocks.remainder())
        .zip(c_blocks.remainder())
    {
        *x = y + q * z;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn triad_computes_b_plus_q_c_including_the_remainder() {
        let b: Vec<f64> = (0..19).map(f64::from).collect();
        let c = vec![2.0; 19];
        let mut a = vec![0.0; 19];
        triad(&mut a, &b, &c, 3.0);
        assert!(a.iter().zip(&b).all(|(x, y)| *x == y + 6.0));
    }

    #[test]
    fn sizing_follows_four_times_llc_with_a_cap() {
        const MIB: u64 = 1 << 20;
        // 32 MiB LLC (Zen 3): 4 × LLC = 128 MiB < 256 MiB floor.
        let (plan, inflated) = MemoryPlan::sized(Some(32 * MIB), 24 << 30);
        assert_eq!(plan.array_bytes as u64, 256 * MIB);
        assert!(!inflated);
        // 480 MiB LLC: capped at 256 MiB, below 4 × LLC, so flagged.
        let (plan, inflated) = MemoryPlan::sized(Some(480 * MIB), 24 << 30);
        assert_eq!(plan.array_bytes as u64, 256 * MIB);
        assert!(inflated);
        // 2 GiB of RAM: at most 128 MiB per array.
        let (plan, _) = MemoryPlan::sized(None, 2 << 30);
        assert_eq!(plan.array_bytes as u64, 128 * MIB);
    }

    #[test]
    fn cache_sizes_parse() {
        assert_eq!(parse_cache_size("491520K\n"), Some(491_520 << 10));
        assert_eq!(parse_cache_size("32M"), Some(32 << 20));
        assert_eq!(parse_cache_size("big"), None);
    }

    #[test]
    fn stream_reports_positive_bandwidth() {
        let result = stream(&MemoryPlan::QUICK, 2);
        assert!(result.copy_gbs > 0.0 && result.triad_gbs > 0.0);
        assert_eq!(result.threads, 2);
    }
}
