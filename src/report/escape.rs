//! Escaping for the three languages the renderers write: HTML, GitHub workflow commands, and
//! the byte-offset → line/column arithmetic every location needs.
//!
//! Every string that comes from audited code or a path goes through one of these functions;
//! the renderers have no other way to emit it.

use std::fmt::Write as _;

/// Escapes text for HTML element content and quoted attribute values: `&`, `<`, `>`, `"`, `'`.
///
/// One function for both places, so `</script>`, `<!--` or `" onerror="` in audited code can
/// never close an element or an attribute.
#[must_use]
pub fn html(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // Control characters other than tab/newline are invalid in HTML text; show them.
            c if c.is_control() && c != '\n' && c != '\t' => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out
}

/// Escapes the message part of a workflow command (`::warning ...::MESSAGE`).
///
/// Same escapes as `escapeData` in `actions/toolkit:packages/core/src/command.ts`:
/// `%` → `%25`, `\r` → `%0D`, `\n` → `%0A`.
#[must_use]
pub fn workflow_data(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '%' => out.push_str("%25"),
            '\r' => out.push_str("%0D"),
            '\n' => out.push_str("%0A"),
            c => out.push(c),
        }
    }
    out
}

/// Escapes a property value of a workflow command (`file=`, `title=`).
///
/// `escapeProperty` in `actions/toolkit:packages/core/src/command.ts`: the data escapes plus
/// `:` → `%3A` and `,` → `%2C`, which would otherwise end the value.
#[must_use]
pub fn workflow_property(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '%' => out.push_str("%25"),
            '\r' => out.push_str("%0D"),
            '\n' => out.push_str("%0A"),
            ':' => out.push_str("%3A"),
            ',' => out.push_str("%2C"),
            c => out.push(c),
        }
    }
    out
}

/// Line starts of a text, to turn byte offsets into 1-based lines and character columns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineIndex {
    starts: Vec<usize>,
}

/// A 1-based line and 1-based column counted in Unicode code points.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineCol {
    /// 1-based line.
    pub line: usize,
    /// 1-based column in code points (SARIF `columnKind: unicodeCodePoints`).
    pub column: usize,
}

impl LineIndex {
    /// Indexes `text`; lines end at `\n` (a `\r\n` pair counts as one ending).
    #[must_use]
    pub fn new(text: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(
            text.bytes()
                .enumerate()
                .filter(|&(_, b)| b == b'\n')
                .map(|(i, _)| i + 1),
        );
        Self { starts }
    }

    /// Number of lines (a text without a final newline still has its last line).
    #[must_use]
    pub fn line_count(&self) -> usize {
        self.starts.len()
    }

    /// Line and column of byte `offset` in `text` (the text this index was built from).
    ///
    /// Offsets past the end clamp to the end; offsets inside a multi-byte character round up to
    /// the next character.
    #[must_use]
    pub fn locate(&self, text: &str, offset: usize) -> LineCol {
        let offset = offset.min(text.len());
        let line0 = self
            .starts
            .partition_point(|&s| s <= offset)
            .saturating_sub(1);
        let start = self.starts.get(line0).copied().unwrap_or(0);
        let column = text
            .get(start..)
            .unwrap_or("")
            .char_indices()
            .take_while(|&(i, _)| start + i < offset)
            .count();
        LineCol {
            line: line0 + 1,
            column: column + 1,
        }
    }

    /// The text of 1-based `line`, without its line ending; `None` past the end.
    #[must_use]
    pub fn line_text<'t>(&self, text: &'t str, line: usize) -> Option<&'t str> {
        let start = *self.starts.get(line.checked_sub(1)?)?;
        let end = self.starts.get(line).map_or(text.len(), |&s| s - 1);
        let slice = text.get(start..end.max(start))?;
        Some(slice.strip_suffix('\r').unwrap_or(slice))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_escapes_all_five_and_controls() {
        assert_eq!(
            html(r#"</script><!-- <img src=x onerror="a('b')"> & "#),
            "&lt;/script&gt;&lt;!-- &lt;img src=x onerror=&quot;a(&#39;b&#39;)&quot;&gt; &amp; "
        );
        assert_eq!(html("a\u{0}b\tc\n"), "a\\u{0}b\tc\n");
    }

    #[test]
    fn workflow_escapes_match_actions_toolkit() {
        assert_eq!(workflow_data("50% a:b,c\r\nd"), "50%25 a:b,c%0D%0Ad");
        assert_eq!(
            workflow_property("src/a,b:c%.py\n"),
            "src/a%2Cb%3Ac%25.py%0A"
        );
    }

    #[test]
    fn locate_counts_code_points_and_crlf() {
        let text = "ab\r\nπx = 1\nlast";
        let idx = LineIndex::new(text);
        assert_eq!(idx.line_count(), 3);
        assert_eq!(idx.locate(text, 0), LineCol { line: 1, column: 1 });
        // 'x' follows the two-byte 'π' on line 2.
        let x = text.find('x').unwrap();
        assert_eq!(idx.locate(text, x), LineCol { line: 2, column: 2 });
        assert_eq!(idx.locate(text, text.len()), LineCol { line: 3, column: 5 });
        assert_eq!(idx.locate(text, 10_000), LineCol { line: 3, column: 5 });
        assert_eq!(idx.line_text(text, 1), Some("ab"));
        assert_eq!(idx.line_text(text, 2), Some("πx = 1"));
        assert_eq!(idx.line_text(text, 3), Some("last"));
        assert_eq!(idx.line_text(text, 4), None);
        assert_eq!(idx.line_text(text, 0), None);
    }
}
