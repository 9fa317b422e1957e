//! The rule contract: metadata captured from the doc comment, and the checker rules report to.
//!
//! A rule is a unit struct declared with [`declare_rule!`](crate::declare_rule); its `///` doc
//! comment is the user documentation that `efficiency-audit rules` prints and `docs/rules.md`
//! is generated from (like ruff's `#[violation]` docs).

use super::facts::{Call, Model};
use super::model::{Category, Finding, Fix, Resource, Severity};
use super::prefilter::Triggers;

/// What a rule is: its id, category, resource, severity and documentation.
#[derive(Debug, Clone, Copy)]
pub struct RuleMeta {
    /// Stable id, e.g. `EA101`.
    pub id: &'static str,
    /// Kebab-case name, e.g. `dataloader-without-workers`.
    pub name: &'static str,
    /// Category from the fixed vocabulary.
    pub category: Category,
    /// Resource the waste leaves idle.
    pub resource: Resource,
    /// Expected cost.
    pub severity: Severity,
    /// The doc comment (markdown; one leading space per line as rustc writes it).
    pub doc: &'static str,
}

impl RuleMeta {
    /// The documentation with rustc's leading space removed from each line.
    #[must_use]
    pub fn docs(&self) -> String {
        let mut out = String::with_capacity(self.doc.len());
        for line in self.doc.lines() {
            out.push_str(line.strip_prefix(' ').unwrap_or(line));
            out.push('\n');
        }
        out
    }

    /// The first sentence of `## What it does`, for one-line listings.
    #[must_use]
    pub fn summary(&self) -> String {
        let docs = self.docs();
        let body = docs
            .split("## What it does")
            .nth(1)
            .and_then(|s| s.split("\n## ").next())
            .unwrap_or("")
            .trim();
        let para = body.split("\n\n").next().unwrap_or("").replace('\n', " ");
        para.trim().to_string()
    }
}

/// A static-analysis rule.
pub trait Rule: Sync {
    /// Its metadata.
    fn meta(&self) -> &'static RuleMeta;
    /// Reports its findings on one file.
    fn check(&self, cx: &mut Checker<'_>);
    /// What a file must contain for the rule to fire, checked before the file is parsed
    /// ([`prefilter`](super::prefilter)). The default parses every file.
    fn triggers(&self) -> Triggers {
        Triggers::Always
    }
}

/// What a rule sees of one file, and where it reports.
pub struct Checker<'a> {
    pub(crate) m: &'a Model<'a>,
    pub(crate) path: &'a str,
    pub(crate) out: Vec<Finding>,
}

impl<'a> Checker<'a> {
    pub(crate) fn new(m: &'a Model<'a>, path: &'a str) -> Self {
        Checker {
            m,
            path,
            out: Vec::new(),
        }
    }

    /// Reports a finding at a call.
    pub(crate) fn at_call(&mut self, meta: &RuleMeta, c: &Call, message: String, fix: Option<Fix>) {
        self.at(meta, c.line, c.col, c.end_line, message, fix);
    }

    /// Reports a finding at a line and column.
    pub(crate) fn at(
        &mut self,
        meta: &RuleMeta,
        line: usize,
        column: usize,
        end_line: usize,
        message: String,
        fix: Option<Fix>,
    ) {
        self.out.push(Finding {
            rule: meta.id.to_string(),
            category: meta.category,
            path: self.path.to_string(),
            line,
            end_line: end_line.max(line),
            column,
            severity: meta.severity,
            resource: meta.resource,
            message,
            fix,
        });
    }
}

/// Declares a rule: a unit struct whose doc comment becomes its [`RuleMeta::doc`].
#[macro_export]
macro_rules! declare_rule {
    (
        $(#[doc = $doc:literal])*
        $vis:vis struct $name:ident {
            id: $id:literal,
            name: $rname:literal,
            category: $cat:ident,
            resource: $res:ident,
            severity: $sev:ident $(,)?
        }
    ) => {
        $(#[doc = $doc])*
        #[derive(Debug, Clone, Copy)]
        $vis struct $name;

        impl $name {
            /// The rule's metadata.
            pub const META: $crate::analysis::rule::RuleMeta = $crate::analysis::rule::RuleMeta {
                id: $id,
                name: $rname,
                category: $crate::analysis::model::Category::$cat,
                resource: $crate::analysis::model::Resource::$res,
                severity: $crate::analysis::model::Severity::$sev,
                doc: concat!($($doc, "\n"),*),
            };
        }
    };
}
