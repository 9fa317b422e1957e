//! Configuration: the YAML file of DESIGN §3, then CLI flags on top.
//!
//! Lookup order: `--config FILE`, else `.github/efficiency-audit.yml`, else
//! `efficiency-audit.yml` in the audited folder. Every key is optional and kebab-case; unknown
//! keys and wrong types are rejected with the file, the line and the list of valid keys.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize};

/// The file names looked up, in order, inside the audited folder.
pub const CONFIG_CANDIDATES: [&str; 2] = [".github/efficiency-audit.yml", "efficiency-audit.yml"];

/// Default saturation threshold: the seed's "≥ ~70 % saturated" (seed SKILL.md, "The Red Alarm").
pub const DEFAULT_THRESHOLD: f64 = 0.70;

/// Default output folder, relative to the audited folder (DESIGN §1).
pub const DEFAULT_OUTPUT_DIR: &str = "report/efficiency";

const TOP_KEYS: &[&str] = &[
    "paths",
    "output-dir",
    "threshold",
    "bench",
    "strategies",
    "rules",
    "fork-bench",
    "fail-on",
    "comment",
];
const BENCH_KEYS: &[&str] = &[
    "command",
    "metric-regex",
    "check-regex",
    "check-rtol",
    "warmup",
    "min-runs",
    "max-runs",
    "timeout",
    "budget",
];
const STRATEGIES_KEYS: &[&str] = &["max", "allow-numerics", "include", "exclude"];
const RULES_KEYS: &[&str] = &["select", "ignore"];

/// A configuration problem the user must fix in their file.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The named file cannot be read.
    #[error("cannot read config file {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not valid YAML or does not match the schema.
    #[error("{path}:{line}: {message}\n  valid keys{section}: {valid}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// 1-based line of the problem (0 when unknown).
        line: usize,
        /// What is wrong.
        message: String,
        /// ` under <key>` when the problem is inside a section.
        section: String,
        /// The keys accepted where the problem is.
        valid: String,
    },
    /// A value parses but makes no sense.
    #[error("{path}: {message}")]
    Value {
        /// The file, or `command line`.
        path: PathBuf,
        /// What is wrong and what to write instead.
        message: String,
    },
}

/// The file as written: everything optional.
#[derive(Debug, Default, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawConfig {
    /// Globs of files to analyse (default `**/*.py`).
    pub paths: Option<Vec<String>>,
    /// Where reports are written, relative to the audited folder.
    pub output_dir: Option<PathBuf>,
    /// Saturation at which a resource counts as the bottleneck (0 < t ≤ 1).
    pub threshold: Option<f64>,
    /// The user's benchmark.
    pub bench: Option<RawBench>,
    /// Which strategies to try.
    pub strategies: Option<RawStrategies>,
    /// Which rules to run.
    pub rules: Option<RawRules>,
    /// Run the benchmark on pull requests from forks (`skip` or `allow`).
    pub fork_bench: Option<ForkBench>,
    /// When the exit status is 1 (`red` or `never`).
    pub fail_on: Option<FailOn>,
    /// PR comment mode (`sticky` or `off`).
    pub comment: Option<CommentMode>,
}

/// `bench:` section.
#[derive(Debug, Default, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawBench {
    /// Shell command run in the audited folder's copy.
    pub command: Option<String>,
    /// Regex with one capture group: a throughput figure, higher is better.
    pub metric_regex: Option<String>,
    /// Regex with one capture group: a number that must match the baseline.
    pub check_regex: Option<String>,
    /// Relative tolerance of the correctness check.
    pub check_rtol: Option<f64>,
    /// Warm-up runs before measuring.
    pub warmup: Option<u32>,
    /// Fewest measured runs per side.
    pub min_runs: Option<u32>,
    /// Most measured runs per side.
    pub max_runs: Option<u32>,
    /// Per-run timeout: seconds, or `90s`, `5m`, `1h`.
    #[serde(
        default,
        deserialize_with = "de_duration",
        serialize_with = "ser_duration"
    )]
    pub timeout: Option<Duration>,
    /// Total time budget of all experiments.
    #[serde(
        default,
        deserialize_with = "de_duration",
        serialize_with = "ser_duration"
    )]
    pub budget: Option<Duration>,
}

/// `strategies:` section.
#[derive(Debug, Default, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawStrategies {
    /// How many ranked strategies to benchmark.
    pub max: Option<u32>,
    /// Allow strategies that change floating-point results.
    pub allow_numerics: Option<bool>,
    /// Only these strategy ids.
    pub include: Option<Vec<String>>,
    /// Never these strategy ids.
    pub exclude: Option<Vec<String>>,
}

/// `rules:` section.
#[derive(Debug, Default, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawRules {
    /// Only these rule ids or categories.
    pub select: Option<Vec<String>>,
    /// Never these rule ids or categories.
    pub ignore: Option<Vec<String>>,
}

/// Whether fork PRs may run the benchmark.
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, PartialEq, Eq, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum ForkBench {
    /// Never run fork code (default).
    #[default]
    Skip,
    /// Run it; only on runners you can afford to lose.
    Allow,
}

/// When a RED verdict fails the job.
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, PartialEq, Eq, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum FailOn {
    /// Exit 1 on RED.
    Red,
    /// Always exit 0 unless the tool fails (default).
    #[default]
    Never,
}

/// PR comment behaviour.
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, PartialEq, Eq, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum CommentMode {
    /// One comment, updated in place (default).
    #[default]
    Sticky,
    /// No comment.
    Off,
}

/// The resolved configuration handed to every step: no `Option` where a default exists.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Config {
    /// The file it came from, if any.
    pub source: Option<PathBuf>,
    /// Globs of files to analyse.
    pub paths: Vec<String>,
    /// Output folder.
    pub output_dir: PathBuf,
    /// Saturation threshold.
    pub threshold: f64,
    /// Benchmark settings.
    pub bench: Bench,
    /// Strategy settings.
    pub strategies: Strategies,
    /// Rule selection.
    pub rules: Rules,
    /// Fork PR policy.
    pub fork_bench: ForkBench,
    /// Exit-status policy.
    pub fail_on: FailOn,
    /// Comment policy.
    pub comment: CommentMode,
}

/// Resolved `bench:`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Bench {
    /// Shell command, if any.
    pub command: Option<String>,
    /// Throughput regex.
    pub metric_regex: Option<String>,
    /// Correctness regex.
    pub check_regex: Option<String>,
    /// Relative tolerance.
    pub check_rtol: f64,
    /// Warm-ups.
    pub warmup: u32,
    /// Fewest runs.
    pub min_runs: u32,
    /// Most runs.
    pub max_runs: u32,
    /// Per-run timeout.
    pub timeout: Duration,
    /// Total budget.
    pub budget: Duration,
}

/// Resolved `strategies:`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Strategies {
    /// How many to benchmark.
    pub max: u32,
    /// Numerics-changing strategies allowed.
    pub allow_numerics: bool,
    /// Allow-list (empty: all).
    pub include: Vec<String>,
    /// Deny-list.
    pub exclude: Vec<String>,
}

/// Resolved `rules:`.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Rules {
    /// Allow-list of rule ids or categories (empty: all).
    pub select: Vec<String>,
    /// Deny-list of rule ids or categories.
    pub ignore: Vec<String>,
}

impl Default for Config {
    fn default() -> Self {
        Self::resolve(RawConfig::default(), None)
    }
}

impl Config {
    /// Finds and loads the configuration for `folder`: `explicit` if given, else the first
    /// candidate file that exists, else defaults.
    pub fn discover(explicit: Option<&Path>, folder: &Path) -> Result<Self, ConfigError> {
        if let Some(path) = explicit {
            return Self::load(path);
        }
        for candidate in CONFIG_CANDIDATES {
            let path = folder.join(candidate);
            if path.is_file() {
                return Self::load(&path);
            }
        }
        Ok(Self::default())
    }

    /// Loads and validates one file.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let raw = parse(&text, path)?;
        let config = Self::resolve(raw, Some(path.to_path_buf()));
        config.validate(path)?;
        Ok(config)
    }

    fn resolve(raw: RawConfig, source: Option<PathBuf>) -> Self {
        let bench = raw.bench.unwrap_or_default();
        let strategies = raw.strategies.unwrap_or_default();
        let rules = raw.rules.unwrap_or_default();
        Self {
            source,
            paths: raw.paths.unwrap_or_else(|| vec!["**/*.py".to_owned()]),
            output_dir: raw
                .output_dir
                .unwrap_or_else(|| PathBuf::from(DEFAULT_OUTPUT_DIR)),
            threshold: raw.threshold.unwrap_or(DEFAULT_THRESHOLD),
            bench: Bench {
                command: bench.command,
                metric_regex: bench.metric_regex,
                check_regex: bench.check_regex,
                check_rtol: bench.check_rtol.unwrap_or(0.05),
                warmup: bench.warmup.unwrap_or(1),
                min_runs: bench.min_runs.unwrap_or(3),
                max_runs: bench.max_runs.unwrap_or(10),
                timeout: bench.timeout.unwrap_or(Duration::from_secs(600)),
                budget: bench.budget.unwrap_or(Duration::from_secs(1800)),
            },
            strategies: Strategies {
                max: strategies.max.unwrap_or(3),
                allow_numerics: strategies.allow_numerics.unwrap_or(false),
                include: strategies.include.unwrap_or_default(),
                exclude: strategies.exclude.unwrap_or_default(),
            },
            rules: Rules {
                select: rules.select.unwrap_or_default(),
                ignore: rules.ignore.unwrap_or_default(),
            },
            fork_bench: raw.fork_bench.unwrap_or_default(),
            fail_on: raw.fail_on.unwrap_or_default(),
            comment: raw.comment.unwrap_or_default(),
        }
    }

    /// Checks values that parse but cannot work; `origin` names the file or the flag.
    pub fn validate(&self, origin: &Path) -> Result<(), ConfigError> {
        let bad = |message: String| {
            Err(ConfigError::Value {
                path: origin.to_path_buf(),
                message,
            })
        };
        if !(self.threshold > 0.0 && self.threshold <= 1.0) {
            return bad(format!(
                "threshold must be a fraction in (0, 1], e.g. 0.70; got {}",
                self.threshold
            ));
        }
        if self.bench.min_runs == 0 || self.bench.min_runs > self.bench.max_runs {
            return bad(format!(
                "bench.min-runs ({}) must be ≥ 1 and ≤ bench.max-runs ({})",
                self.bench.min_runs, self.bench.max_runs
            ));
        }
        if self.bench.check_rtol.is_nan() || self.bench.check_rtol < 0.0 {
            return bad("bench.check-rtol must be ≥ 0, e.g. 0.05".to_owned());
        }
        for (key, regex) in [
            ("bench.metric-regex", &self.bench.metric_regex),
            ("bench.check-regex", &self.bench.check_regex),
        ] {
            if let Some(text) = regex
                && let Err(err) = regex::Regex::new(text)
            {
                return bad(format!("{key} is not a valid regex: {err}"));
            }
        }
        Ok(())
    }

    /// Applies a CLI override of the threshold.
    pub fn with_threshold(mut self, threshold: Option<f64>) -> Result<Self, ConfigError> {
        if let Some(t) = threshold {
            self.threshold = t;
            self.validate(Path::new("--threshold"))?;
        }
        Ok(self)
    }
}

/// Parses YAML text into the raw schema; errors name the file, the line and the valid keys.
pub fn parse(text: &str, path: &Path) -> Result<RawConfig, ConfigError> {
    // An empty file (or one with only comments) is a valid, empty configuration.
    if text
        .lines()
        .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#'))
    {
        return Ok(RawConfig::default());
    }
    serde_yaml::from_str::<RawConfig>(text).map_err(|err| {
        let line = err.location().map_or(0, |l| l.line());
        let message = err.to_string();
        // serde_yaml prefixes nested errors with the key path, e.g. `bench: unknown field ...`.
        let (section, valid) = if message.starts_with("bench") {
            (" under bench", BENCH_KEYS)
        } else if message.starts_with("strategies") {
            (" under strategies", STRATEGIES_KEYS)
        } else if message.starts_with("rules") {
            (" under rules", RULES_KEYS)
        } else {
            ("", TOP_KEYS)
        };
        // Drop serde_yaml's own " at line N column M" suffix: the line leads the message.
        let message = message
            .split(" at line ")
            .next()
            .unwrap_or(&message)
            .to_owned();
        ConfigError::Invalid {
            path: path.to_path_buf(),
            line,
            message,
            section: section.to_owned(),
            valid: valid.join(", "),
        }
    })
}

fn de_duration<'de, D: Deserializer<'de>>(de: D) -> Result<Option<Duration>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        Secs(f64),
        Text(String),
    }
    let raw = Option::<Raw>::deserialize(de)?;
    let Some(raw) = raw else { return Ok(None) };
    let secs = match raw {
        Raw::Secs(s) => s,
        Raw::Text(t) => parse_duration_secs(&t).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "invalid duration {t:?}: write seconds (600) or a number with s, m or h (90s, 10m, 1h)"
            ))
        })?,
    };
    if !(secs.is_finite() && secs > 0.0) {
        return Err(serde::de::Error::custom(
            "a duration must be a positive number of seconds",
        ));
    }
    Ok(Some(Duration::from_secs_f64(secs)))
}

#[expect(
    clippy::ref_option,
    reason = "serde's serialize_with passes a reference to the field"
)]
fn ser_duration<S: serde::Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
    match d {
        Some(d) => s.serialize_f64(d.as_secs_f64()),
        None => s.serialize_none(),
    }
}

/// `"90s"`, `"10m"`, `"1h"`, `"600"` → seconds.
pub fn parse_duration_secs(text: &str) -> Option<f64> {
    let text = text.trim();
    let (number, unit) = match text.char_indices().last()? {
        (i, 's') => (&text[..i], 1.0),
        (i, 'm') => (&text[..i], 60.0),
        (i, 'h') => (&text[..i], 3600.0),
        _ => (text, 1.0),
    };
    number.trim().parse::<f64>().ok().map(|n| n * unit)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        parse(text, Path::new("cfg.yml")).unwrap_err().to_string()
    }

    #[test]
    fn full_file_parses() {
        let raw = parse(
            "paths: ['src/**/*.py']\noutput-dir: out\nthreshold: 0.8\nbench:\n  command: python train.py\n  metric-regex: 'ips=([0-9.]+)'\n  timeout: 5m\n  budget: 900\nstrategies:\n  max: 2\n  allow-numerics: true\nrules:\n  ignore: [host_sync]\nfork-bench: allow\nfail-on: red\ncomment: off\n",
            Path::new("cfg.yml"),
        )
        .unwrap();
        let cfg = Config::resolve(raw, None);
        assert_eq!(cfg.threshold, 0.8);
        assert_eq!(cfg.bench.timeout, Duration::from_secs(300));
        assert_eq!(cfg.bench.budget, Duration::from_secs(900));
        assert_eq!(cfg.fail_on, FailOn::Red);
        assert_eq!(cfg.comment, CommentMode::Off);
        assert_eq!(cfg.rules.ignore, vec!["host_sync"]);
    }

    #[test]
    fn empty_file_is_defaults() {
        let raw = parse("# nothing here\n", Path::new("cfg.yml")).unwrap();
        assert_eq!(Config::resolve(raw, None), Config::default());
    }

    #[test]
    fn unknown_key_names_line_and_valid_keys() {
        let msg = err("threshold: 0.7\nthreshhold: 0.8\n");
        assert!(msg.starts_with("cfg.yml:2:"), "{msg}");
        assert!(msg.contains("threshhold"), "{msg}");
        assert!(msg.contains("valid keys: paths, output-dir"), "{msg}");
    }

    #[test]
    fn unknown_nested_key_lists_section_keys() {
        let msg = err("bench:\n  command: x\n  comand: y\n");
        assert!(msg.starts_with("cfg.yml:3:"), "{msg}");
        assert!(
            msg.contains("valid keys under bench: command, metric-regex"),
            "{msg}"
        );
    }

    #[test]
    fn wrong_type_names_line() {
        let msg = err("paths: ['a']\nthreshold: high\n");
        assert!(msg.starts_with("cfg.yml:2:"), "{msg}");
        assert!(msg.contains("invalid type"), "{msg}");
    }

    #[test]
    fn invalid_yaml_names_line() {
        let msg = err("paths: ['a'\nthreshold: 0.7\n");
        assert!(msg.contains("cfg.yml:"), "{msg}");
        assert!(!msg.starts_with("cfg.yml:0:"), "{msg}");
    }

    #[test]
    fn bad_duration_says_what_to_write() {
        let msg = err("bench:\n  timeout: soon\n");
        assert!(msg.contains("90s, 10m, 1h"), "{msg}");
    }

    #[test]
    fn out_of_range_threshold_rejected() {
        let cfg = Config::default().with_threshold(Some(1.5));
        assert!(cfg.unwrap_err().to_string().contains("(0, 1]"));
    }

    #[test]
    fn roundtrip_raw_yaml() {
        let raw = RawConfig {
            threshold: Some(0.6),
            bench: Some(RawBench {
                command: Some("python x.py".into()),
                timeout: Some(Duration::from_secs(30)),
                ..RawBench::default()
            }),
            ..RawConfig::default()
        };
        let text = serde_yaml::to_string(&raw).unwrap();
        assert_eq!(parse(&text, Path::new("x")).unwrap(), raw);
    }
}
