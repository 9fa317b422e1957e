//! The verdict: RED when no resource can reach the threshold, else GREEN with the bottleneck.
//!
//! A program runs no faster than its slowest resource (seed SKILL.md, "The Red Alarm"): if none
//! of GPU compute, CPU compute or IO bandwidth is ≥ the threshold (70 % by default) saturated,
//! speed-up is provably possible.

use serde::{Deserialize, Serialize};

use crate::analysis::model::{Resource, Saturation};

/// RED or GREEN.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum VerdictValue {
    /// No resource saturated: speed-up possible.
    Red,
    /// Bottlenecked on the named resource.
    Green,
}

/// Whether the saturation was estimated from source or measured while the benchmark ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// Static analysis of the source (step 2).
    Estimated,
    /// Sampling during the baseline runs (step 4).
    Measured,
}

/// The verdict with its basis.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// RED or GREEN.
    pub value: VerdictValue,
    /// Estimated or measured.
    pub basis: Basis,
    /// The most saturated resource (the bottleneck when GREEN), if any is known.
    pub bottleneck: Option<Resource>,
    /// Its saturation.
    pub bottleneck_saturation: Option<f64>,
    /// The threshold used.
    pub threshold: f64,
}

/// Decides from a saturation estimate: GREEN when the most saturated known resource reaches
/// `threshold`, RED otherwise. Unknown resources cannot make the verdict GREEN.
#[must_use]
pub fn decide(saturation: &Saturation, basis: Basis, threshold: f64) -> Verdict {
    let best = [
        (Resource::Gpu, saturation.gpu.value),
        (Resource::Cpu, saturation.cpu.value),
        (Resource::Io, saturation.io.value),
    ]
    .into_iter()
    .filter_map(|(r, v)| v.map(|v| (r, v)))
    .max_by(|a, b| a.1.total_cmp(&b.1));
    let value = match best {
        Some((_, v)) if v >= threshold => VerdictValue::Green,
        _ => VerdictValue::Red,
    };
    Verdict {
        value,
        basis,
        bottleneck: best.map(|(r, _)| r),
        bottleneck_saturation: best.map(|(_, v)| v),
        threshold,
    }
}

impl Verdict {
    /// One line for humans: `RED: no resource reaches 70 % (best: cpu at 6 %)`.
    #[must_use]
    pub fn headline(&self) -> String {
        let pct = |v: f64| format!("{:.0} %", v * 100.0);
        match (self.value, self.bottleneck, self.bottleneck_saturation) {
            (VerdictValue::Green, Some(r), Some(v)) => {
                format!("GREEN: bottlenecked on {} ({})", r.as_str(), pct(v))
            }
            (_, Some(r), Some(v)) => format!(
                "RED: no resource reaches {} (best: {} at {}) — speed-up is possible",
                pct(self.threshold),
                r.as_str(),
                pct(v)
            ),
            _ => format!(
                "RED: no resource can be shown to reach {} — speed-up is possible",
                pct(self.threshold)
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::model::Estimate;

    fn sat(gpu: Option<f64>, cpu: Option<f64>, io: Option<f64>) -> Saturation {
        let e = |value| Estimate {
            value,
            reason: String::new(),
        };
        Saturation {
            gpu: e(gpu),
            cpu: e(cpu),
            io: e(io),
        }
    }

    #[test]
    fn red_when_nothing_reaches_threshold() {
        let v = decide(&sat(Some(0.07), Some(0.06), None), Basis::Estimated, 0.7);
        assert_eq!(v.value, VerdictValue::Red);
        assert_eq!(v.bottleneck, Some(Resource::Gpu));
    }

    #[test]
    fn green_names_bottleneck() {
        let v = decide(&sat(None, Some(0.95), Some(0.2)), Basis::Measured, 0.7);
        assert_eq!(v.value, VerdictValue::Green);
        assert_eq!(v.bottleneck, Some(Resource::Cpu));
        assert!(v.headline().starts_with("GREEN: bottlenecked on cpu"));
    }

    #[test]
    fn threshold_is_inclusive() {
        let v = decide(&sat(Some(0.7), None, None), Basis::Estimated, 0.7);
        assert_eq!(v.value, VerdictValue::Green);
    }

    #[test]
    fn all_unknown_is_red() {
        let v = decide(&sat(None, None, None), Basis::Estimated, 0.7);
        assert_eq!(v.value, VerdictValue::Red);
        assert_eq!(v.bottleneck, None);
    }
}
