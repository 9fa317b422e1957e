//! GitHub Actions file commands and workflow commands, as `actions/toolkit`
//! (`packages/core/src/command.ts`, `file-command.ts`) writes them.
//!
//! Anything echoed to the log that may contain audited text is either escaped or printed
//! between `::stop-commands::` markers, so a line like `::error::` in someone's code cannot
//! become a workflow command.

use std::io::Write as _;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use sha2::{Digest, Sha256};

/// The job summary accepts at most 1 MiB per step; larger uploads are dropped with an
/// annotation ("supports content up to a size of 1024k").
pub const SUMMARY_MAX_BYTES: usize = 1024 * 1024;

/// Escapes a workflow command's message: `%`, CR and LF.
#[must_use]
pub fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a workflow command's property value: as [`escape_data`] plus `:` and `,`.
#[must_use]
pub fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// A `::warning::` line.
#[must_use]
pub fn warning(message: &str) -> String {
    format!("::warning::{}\n", escape_data(message))
}

/// A token no one can guess in advance: used for `::stop-commands::` and heredoc delimiters.
fn unique_token(seed: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut h = Sha256::new();
    h.update(seed.as_bytes());
    h.update(std::process::id().to_le_bytes());
    h.update(COUNTER.fetch_add(1, Ordering::Relaxed).to_le_bytes());
    if let Ok(t) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        h.update(t.as_nanos().to_le_bytes());
    }
    h.finalize()
        .iter()
        .take(16)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `body` inside a collapsed log group, with workflow commands switched off while it prints.
#[must_use]
pub fn group(title: &str, body: &str) -> String {
    let mut token = unique_token(body);
    while body.contains(&token) {
        token = unique_token(&token);
    }
    let body = body.trim_end_matches('\n');
    format!(
        "::group::{}\n::stop-commands::{token}\n{body}\n::{token}::\n::endgroup::\n",
        escape_data(title)
    )
}

/// Formats step outputs: `name=value`, or the heredoc form with a delimiter that does not
/// occur in the value for multi-line values (`file-command.ts:prepareKeyValueMessage`).
#[must_use]
pub fn format_outputs(outputs: &[(&str, String)]) -> String {
    let mut out = String::new();
    for (name, value) in outputs {
        if value.contains('\n') || value.contains('\r') {
            let mut delimiter = format!("ghadelimiter_{}", unique_token(value));
            while value.contains(&delimiter) {
                delimiter = format!("ghadelimiter_{}", unique_token(&delimiter));
            }
            out.push_str(&format!("{name}<<{delimiter}\n{value}\n{delimiter}\n"));
        } else {
            out.push_str(&format!("{name}={value}\n"));
        }
    }
    out
}

fn append(path: &Path, text: &str) -> std::io::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    f.write_all(text.as_bytes())
}

/// Appends step outputs to `GITHUB_OUTPUT`.
pub fn write_outputs(path: &Path, outputs: &[(&str, String)]) -> std::io::Result<()> {
    append(path, &format_outputs(outputs))
}

/// Appends Markdown to `GITHUB_STEP_SUMMARY`, cut below the 1 MiB limit with a note.
pub fn append_summary(path: &Path, markdown: &str) -> std::io::Result<()> {
    const NOTE: &str = "\n\n_Shortened to fit the 1 MiB job-summary limit; see the artifact._\n";
    let budget = SUMMARY_MAX_BYTES - NOTE.len() - 2;
    let text = if markdown.len() > budget {
        let mut cut = budget;
        while !markdown.is_char_boundary(cut) {
            cut -= 1;
        }
        format!("{}{NOTE}", &markdown[..cut])
    } else {
        format!("{markdown}\n")
    };
    append(path, &text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_text_in_a_group_cannot_issue_commands() {
        let body = "x\n::error::pwned\n::endgroup::\n::add-mask::x";
        let g = group("t", body);
        let lines: Vec<&str> = g.lines().collect();
        let stop = lines[1].strip_prefix("::stop-commands::").unwrap();
        assert_eq!(lines[lines.len() - 2], format!("::{stop}::"));
        assert!(!body.contains(stop));
        assert_eq!(lines.last(), Some(&"::endgroup::"));
    }

    #[test]
    fn multiline_outputs_use_a_heredoc() {
        let s = format_outputs(&[("verdict", "RED".into()), ("notes", "a\nb".into())]);
        assert!(s.starts_with("verdict=RED\nnotes<<ghadelimiter_"), "{s}");
        let delim = s.lines().nth(1).unwrap().split("<<").nth(1).unwrap();
        assert!(s.ends_with(&format!("a\nb\n{delim}\n")), "{s}");
    }

    #[test]
    fn escapes_data_and_properties() {
        assert_eq!(escape_data("50%\nx"), "50%25%0Ax");
        assert_eq!(escape_property("a:b,c"), "a%3Ab%2Cc");
    }
}
