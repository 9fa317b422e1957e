//! Step 2, before the parse: a byte scan that rules out files no rule and no fact can use.
//!
//! ```text
//! source ─► tokens (names, `(`, `.`, logical lines) ─► trigger words in context? ─► parse or skip
//! ```
//!
//! Parsing is three quarters of `analyze`'s time (BENCHMARKS.md, "`analyze`: speed"), and most
//! Python in a repository (tests, utilities, vendored code) cannot produce a finding, a hot loop
//! or a kind other than `other`. Every rule declares what a file must contain for it to fire
//! ([`Rule::triggers`](super::Rule::triggers)), and [`ENGINE`] lists what the facts engine
//! needs for a step, epoch or record loop and for a `train`/`infer`/`data` kind. A file with
//! none of these words in its context (a name that is *called*, a word in a `for` header, ...)
//! is not parsed: it keeps kind `other`, no findings, no hot loops, and `parsed: false`.
//!
//! The scan is conservative, never clever: words are matched without case, inside strings and
//! comments too, and a file it cannot tokenise (an unclosed bracket or string, a stray closing
//! bracket) is parsed. `tests/prefilter_exact.rs` checks on every fixture, and on the CPython
//! standard library, that skipping changes nothing but the `parsed` flag.

use std::sync::LazyLock;

use super::rules::RULES;

/// How a trigger word must appear in a word of the source (a run of ASCII letters, digits and
/// `_`; identifiers, and the words of strings and comments).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Word {
    /// The whole word, ASCII case ignored: `open` matches `open` and `OPEN`, not `reopen` or
    /// `open_all`.
    Whole(&'static str),
    /// The text, delimited by `_` or the ends of the word, ASCII case ignored: `model` matches
    /// `model`, `Model`, `ddp_model` and `model_ema`, not `models` or `remodel`.
    Part(&'static str),
    /// The text anywhere in a word, ASCII case ignored: `loader` matches `DataLoader`.
    Contains(&'static str),
    /// The text anywhere in a word, case as written: `Module` matches `nn.Module` and
    /// `MyModule`, not `sys.modules`.
    ContainsCased(&'static str),
}

/// Where a trigger word must appear.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Context {
    /// Anywhere: code, a string or a comment.
    Anywhere,
    /// In code, not in a string or a comment (`import torch`).
    Code,
    /// Called: the next token is `(` (`open(`, `model (x)`, `re.compile(`).
    Called,
    /// The value of an assignment: after `=`, called (`net = DDP(net)`, not `re.compile(`).
    AssignedCall,
    /// A receiver: the next token is `.` (`df.apply`).
    Receiver,
    /// Called as a method: after a `.` and before a `(` (`.save(`).
    Method,
    /// After the first `for` of a logical line (a `for` header or a comprehension), where the
    /// iterated expressions are.
    ForHeader,
    /// In code, where a loop's iterated expression or an assigned value is: after the first
    /// `for` or the first `=` of its logical line (`for f in os.listdir(d)`, `lines =
    /// f.readlines()`; not `self.assertEqual(f.readlines(), [])`).
    Listing,
    /// A model-like variable: called as a plain name (`model(x)`), or the receiver of one of
    /// [`MODEL_METHODS`] (`self.model.eval()`).
    ModelVar,
    /// A loader-like variable: after a `for` (see [`Context::ForHeader`]), on a line with a call to one of
    /// [`ITER_WRAPPERS`], or the receiver of one of [`MODEL_METHODS`] (which keep its kind).
    LoaderVar,
    /// In the bases of a `class` statement (after the first `(` of its line).
    ClassBases,
}

/// A word in a context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trigger {
    /// The word.
    pub word: Word,
    /// Where it must appear.
    pub context: Context,
}

/// What a rule needs to find anything in a file, checked before the file is parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Triggers {
    /// Nothing can be ruled out by a scan: every file is parsed (the default, so that a new rule
    /// that does not declare its triggers costs time, never findings).
    Always,
    /// The rule only fires on what the facts engine needs anyway ([`ENGINE`]): a step or record
    /// loop, or a file or function whose kind is not `other`.
    Engine,
    /// As [`Triggers::Engine`], or where one of these triggers occurs.
    EngineOr(&'static [Trigger]),
}

/// Shorthands for the trigger tables.
pub mod t {
    use super::{Context, Trigger, Word};

    /// The whole `word`, in code.
    #[must_use]
    pub const fn code(word: &'static str) -> Trigger {
        whole(word, Context::Code)
    }
    /// The whole `word`, called.
    #[must_use]
    pub const fn called(word: &'static str) -> Trigger {
        whole(word, Context::Called)
    }
    /// The whole `word`, called as a method.
    #[must_use]
    pub const fn method(word: &'static str) -> Trigger {
        whole(word, Context::Method)
    }
    /// The whole `word`, in a context.
    #[must_use]
    pub const fn whole(word: &'static str, context: Context) -> Trigger {
        Trigger {
            word: Word::Whole(word),
            context,
        }
    }
    /// `word` as a `_`-delimited part, in a context.
    #[must_use]
    pub const fn part(word: &'static str, context: Context) -> Trigger {
        Trigger {
            word: Word::Part(word),
            context,
        }
    }
    /// `text` inside a word (case ignored), in a context.
    #[must_use]
    pub const fn contains(text: &'static str, context: Context) -> Trigger {
        Trigger {
            word: Word::Contains(text),
            context,
        }
    }
    /// `text` inside a word (case as written), in a context.
    #[must_use]
    pub const fn cased(text: &'static str, context: Context) -> Trigger {
        Trigger {
            word: Word::ContainsCased(text),
            context,
        }
    }

    /// The calls that configure a Hugging Face Trainer (`resolve::HF_CONFIGS`, lower-cased:
    /// `TrainingArguments(...)` and TRL's `SFTConfig(...)`, `RewardConfig(...)`, ...).
    pub const HF_CONFIGS: [Trigger; 8] = [
        contains("trainingarguments", Context::Called),
        called("sftconfig"),
        called("rewardconfig"),
        called("dpoconfig"),
        called("orpoconfig"),
        called("ktoconfig"),
        called("cpoconfig"),
        called("grpoconfig"),
    ];

    /// `head` followed by [`HF_CONFIGS`]: a rule's trigger table that also fires on a Trainer's
    /// configuration. `M` must be `N` plus their count (checked as the table is built).
    #[must_use]
    pub const fn with_hf_configs<const N: usize, const M: usize>(
        head: [Trigger; N],
    ) -> [Trigger; M] {
        assert!(M == N + HF_CONFIGS.len(), "M must be N + HF_CONFIGS.len()");
        let mut out = [HF_CONFIGS[0]; M];
        let mut i = 0;
        while i < N {
            out[i] = head[i];
            i += 1;
        }
        let mut j = 0;
        while j < HF_CONFIGS.len() {
            out[N + j] = HF_CONFIGS[j];
            j += 1;
        }
        out
    }
}

/// Methods that make a model-like receiver matter: the forward pass (`forward`, `generate`,
/// a Keras-style `predict`: `resolve::is_model_call`), the train/eval signals of the
/// classifier, and the moves whose result keeps the model kind (`resolve::kinds`).
pub const MODEL_METHODS: &[&str] = &[
    "forward", "generate", "predict", "eval", "train", "to", "cuda", "half", "float", "bfloat16",
    "cpu",
];

/// Calls through which a `for` sees a loader (`resolve::iterated_loader`, `resolve::kinds`).
pub const ITER_WRAPPERS: &[&str] = &[
    "enumerate",
    "tqdm",
    "zip",
    "iter",
    "islice",
    "track",
    "progress_bar",
    "tqdm_notebook",
];

/// What the facts engine needs for a hot loop or a kind other than `other` (`resolve.rs`).
/// Each entry either makes the file matter on its own, or sets a signal that [`decide`] combines
/// (the `data` kind needs two data signals; an optimizer step needs `.step(` and an optimizer).
pub static ENGINE: &[(Trigger, Effect)] = &{
    use Context::{
        AssignedCall, ClassBases, Code, ForHeader, Listing, LoaderVar, ModelVar, Receiver,
    };
    use Effect::{Parse, Signal};
    use t::{called, cased, code, contains, method, part, whole};
    [
        // record loops (`is_record_loop`): a listing call in the `for` header, or in the value
        // of the iterated name's latest assignment (`lines = f.readlines()`)
        (whole("glob", Listing), Parse),
        (whole("rglob", Listing), Parse),
        (whole("iglob", Listing), Parse),
        (whole("listdir", Listing), Parse),
        (whole("iterdir", Listing), Parse),
        (whole("scandir", Listing), Parse),
        (whole("walk", Listing), Parse),
        (whole("find_files", Listing), Parse),
        (whole("list_images", Listing), Parse),
        (whole("iterrows", Listing), Parse),
        (whole("itertuples", Listing), Parse),
        (whole("readlines", Listing), Parse),
        // a collection named in the `for` header
        (part("files", ForHeader), Parse),
        (part("paths", ForHeader), Parse),
        (part("images", ForHeader), Parse),
        (part("records", ForHeader), Parse),
        (part("rows", ForHeader), Parse),
        (part("urls", ForHeader), Parse),
        (part("filenames", ForHeader), Parse),
        (part("fnames", ForHeader), Parse),
        (part("docs", ForHeader), Parse),
        (part("documents", ForHeader), Parse),
        (part("samples", ForHeader), Parse),
        // step loops: a loader iterated (`kind_by_name`, `*DataLoader(`), a backward, a model
        // called, a function that calls backward
        (contains("dataloader", Context::Called), Parse),
        (contains("loader", LoaderVar), Parse),
        (part("dl", LoaderVar), Parse),
        (called("backward"), Parse),
        // (TensorFlow 1's session running a training op, `resolve::tf_session_trains`)
        (method("minimize"), Parse),
        (method("apply_gradients"), Parse),
        (whole("train_op", Code), Parse),
        (whole("opt_op", Code), Parse),
        (whole("train_step", Code), Parse),
        (whole("optimize_op", Code), Parse),
        (part("model", ModelVar), Parse),
        (part("net", ModelVar), Parse),
        (whole("network", ModelVar), Parse),
        (whole("module", ModelVar), Parse),
        (whole("teacher", ModelVar), Parse),
        (whole("student", ModelVar), Parse),
        // what makes another name a model (`resolve::kinds`, `ctor_kind`)
        (code("from_pretrained"), Parse),
        (code("torchvision"), Parse),
        (code("timm"), Parse),
        (code("torch"), Parse),
        // libraries that run torch models (`resolve::torch_backed`)
        (code("sentence_transformers"), Parse),
        (code("diffusers"), Parse),
        (cased("Module", ClassBases), Parse),
        (cased("PreTrainedModel", ClassBases), Parse),
        (whole("distributeddataparallel", AssignedCall), Parse),
        (whole("ddp", AssignedCall), Parse),
        (whole("dataparallel", AssignedCall), Parse),
        (whole("fullyshardeddataparallel", AssignedCall), Parse),
        (whole("fsdp", AssignedCall), Parse),
        // optimizer steps (`is_opt_step`): `.step(` on an optimizer or scaler
        (method("step"), Signal(STEP)),
        (part("optimizer", Code), Signal(OPTIMIZER)),
        (code("opt"), Signal(OPTIMIZER)),
        (code("optimiser"), Signal(OPTIMIZER)),
        (contains("scaler", Code), Signal(OPTIMIZER)),
        (code("adamw"), Signal(OPTIMIZER)),
        (code("adam"), Signal(OPTIMIZER)),
        (code("sgd"), Signal(OPTIMIZER)),
        (code("rmsprop"), Signal(OPTIMIZER)),
        (code("adagrad"), Signal(OPTIMIZER)),
        (code("lion"), Signal(OPTIMIZER)),
        (code("adafactor"), Signal(OPTIMIZER)),
        (code("bitsandbytes"), Signal(OPTIMIZER)),
        // train and infer signals of the classifier (`resolve::signals`); `add_argument("--epochs")`
        // alone scores 1 of the 3 a kind needs, so it never decides alone
        (code("optim"), Parse),
        (called("get_scheduler"), Parse),
        (contains("trainer", Code), Parse),
        (contains("trainingarguments", Code), Parse),
        (method("generate"), Parse),
        (method("predict"), Parse),
        (method("trace"), Parse),
        (method("export"), Parse),
        (code("transformers"), Parse),
        // data signals: two of them make a `data` file or function
        (called("open"), Signal(READ)),
        (method("load"), Signal(READ)),
        (method("loads"), Signal(READ)),
        (method("read_text"), Signal(READ)),
        (method("loadtxt"), Signal(READ)),
        (called("glob"), Signal(GLOB)),
        (called("rglob"), Signal(GLOB)),
        (called("listdir"), Signal(GLOB)),
        (called("iterdir"), Signal(GLOB)),
        (called("walk"), Signal(GLOB)),
        (called("scandir"), Signal(GLOB)),
        (called("find_files"), Signal(GLOB)),
        (called("list_images"), Signal(GLOB)),
        (method("to_parquet"), Signal(WRITE)),
        (method("to_csv"), Signal(WRITE)),
        (method("save"), Signal(WRITE)),
        (method("savez"), Signal(WRITE)),
        (method("to_json"), Signal(WRITE)),
        (method("write_table"), Signal(WRITE)),
        (called("imread"), Signal(IMAGE)),
        (called("imdecode"), Signal(IMAGE)),
        (called("read_image"), Signal(IMAGE)),
        (called("load_img"), Signal(IMAGE)),
        (called("VideoCapture"), Signal(IMAGE)),
        (called("imwrite"), Signal(WRITE)),
        (method("open"), Signal(IMAGE_OPEN)),
        (code("pil"), Signal(IMAGE_NAME)),
        (code("image"), Signal(IMAGE_NAME)),
        (code("pandas"), Signal(PANDAS)),
        (whole("pd", Receiver), Signal(PANDAS)),
        (part("df", Receiver), Signal(PANDAS)),
        (called("load_dataset"), Parse),
        (cased("Dataset", ClassBases), Signal(DATASET)),
    ]
};

/// What a trigger found in its context does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// The file may matter: parse it.
    Parse,
    /// A signal that [`decide`] combines with the others.
    Signal(u32),
}

const STEP: u32 = 1;
const OPTIMIZER: u32 = 1 << 1;
const READ: u32 = 1 << 2;
const GLOB: u32 = 1 << 3;
const WRITE: u32 = 1 << 4;
const IMAGE: u32 = 1 << 5;
const IMAGE_OPEN: u32 = 1 << 6;
const IMAGE_NAME: u32 = 1 << 7;
const DATASET: u32 = 1 << 8;
const PANDAS: u32 = 1 << 9;

/// Do the signals add up to something the engine uses? An optimizer step (`resolve::
/// is_opt_step`), or two data signals (`resolve::score`: one data-ish call is not a pipeline).
fn decide(signals: u32) -> bool {
    let has = |b: u32| signals & b != 0;
    if has(STEP) && has(OPTIMIZER) {
        return true;
    }
    let image = has(IMAGE) || (has(IMAGE_OPEN) && has(IMAGE_NAME));
    let data = [
        has(READ),
        has(GLOB),
        has(WRITE),
        image,
        has(DATASET),
        has(PANDAS),
    ]
    .into_iter()
    .filter(|b| *b)
    .count();
    data >= 2
}

/// Can this source produce a finding, a hot loop or a kind other than `other`? `false` only when
/// the scan shows it cannot; then the file need not be parsed.
#[must_use]
pub fn may_matter(src: &str) -> bool {
    match TABLE.as_ref() {
        None => true,
        Some(table) => table.may_matter(src.as_bytes()),
    }
}

/// All triggers, the engine's and the rules', ready to look words up; `None` when a rule
/// needs every file.
static TABLE: LazyLock<Option<Table>> = LazyLock::new(|| {
    let mut entries: Vec<(Trigger, Effect)> = ENGINE.to_vec();
    for rule in RULES {
        match rule.triggers() {
            Triggers::Always => return None,
            Triggers::Engine => {}
            Triggers::EngineOr(extra) => {
                entries.extend(extra.iter().map(|t| (*t, Effect::Parse)));
            }
        }
    }
    Table::new(entries)
});

/// The triggers by the lowercase part they match, and the substring ones.
struct Table {
    /// `(part, context, effect)`, sorted by part.
    parts: Vec<(Vec<u8>, Context, Effect)>,
    /// `(word, context, effect)`, sorted by word.
    wholes: Vec<(Vec<u8>, Context, Effect)>,
    /// The most `_`-separated parts one part trigger spans (`from_pretrained`: 2).
    max_span: usize,
    /// `(text, case as written, context, effect)`.
    contains: Vec<(Vec<u8>, bool, Context, Effect)>,
    /// The `contains` texts, ASCII case ignored, to find where they occur in one pass.
    contains_ac: aho_corasick::AhoCorasick,
    /// By first byte, and by last byte, a bit per length (63 for longer) of the whole-word and
    /// part triggers: most words are ruled out without a lookup.
    quick: [[u64; 256]; 2],
}

impl Table {
    fn new(entries: Vec<(Trigger, Effect)>) -> Option<Self> {
        let mut parts = Vec::new();
        let mut wholes = Vec::new();
        let mut contains = Vec::new();
        let mut max_span = 1;
        for (trigger, effect) in entries {
            match trigger.word {
                Word::Whole(w) => {
                    wholes.push((w.to_ascii_lowercase().into_bytes(), trigger.context, effect));
                }
                Word::Part(p) => {
                    max_span = max_span.max(p.split('_').count());
                    parts.push((p.to_ascii_lowercase().into_bytes(), trigger.context, effect));
                }
                Word::Contains(s) => contains.push((
                    s.to_ascii_lowercase().into_bytes(),
                    false,
                    trigger.context,
                    effect,
                )),
                Word::ContainsCased(s) => {
                    contains.push((s.as_bytes().to_vec(), true, trigger.context, effect));
                }
            }
        }
        parts.sort_by(|a, b| a.0.cmp(&b.0));
        wholes.sort_by(|a, b| a.0.cmp(&b.0));
        let mut quick = [[0u64; 256]; 2];
        for (key, _, _) in parts.iter().chain(&wholes) {
            let [by_first, by_last] = &mut quick;
            for (table, byte) in [(by_first, key.first()), (by_last, key.last())] {
                if let Some(m) = byte.and_then(|b| table.get_mut(usize::from(*b))) {
                    *m |= 1u64 << key.len().min(63);
                }
            }
        }
        // literals: only a size limit could fail it, and then every file is parsed
        let contains_ac = aho_corasick::AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(contains.iter().map(|(text, _, _, _)| text))
            .ok()?;
        Some(Table {
            parts,
            wholes,
            contains_ac,
            quick,
            max_span,
            contains,
        })
    }

    fn may_matter(&self, src: &[u8]) -> bool {
        // where the substring triggers occur, by start (most files have none): a word holds
        // one when a match lies inside it
        let found = self.substrings(src);
        let mut signals = 0u32;
        let mut lower = Vec::new();
        let mut hits: Vec<(Context, Effect)> = Vec::new();
        // one logical line at a time: the first trigger that makes the file matter stops the scan
        let stopped = for_each_line(src, |tokens, whole| {
            // the line's flags, worked out at its first hit (most lines have none)
            let mut line: Option<LineFlags> = None;
            for (i, tok) in tokens.iter().enumerate() {
                let Kind::Word { code } = tok.kind else {
                    continue;
                };
                let word = src.get(tok.start..tok.end).unwrap_or_default();
                lower.clear();
                lower.extend(word.iter().map(u8::to_ascii_lowercase));
                hits.clear();
                self.words_of(&lower, &mut hits);
                let first = found.partition_point(|m| m.0 < tok.start);
                for &(_, end, k) in found.get(first..).unwrap_or_default() {
                    if end > tok.end {
                        break;
                    }
                    if let Some((_, _, context, effect)) = self.contains.get(k) {
                        hits.push((*context, *effect));
                    }
                }
                if hits.is_empty() {
                    continue;
                }
                let cx = if !whole {
                    // a piece of a huge line: no context to check for a word of code; a word of
                    // a string or a comment is still only text
                    (!code).then(|| Ctx::text(i, LineFlags::default()))
                } else {
                    let line = *line.get_or_insert_with(|| line_flags(src, tokens));
                    Some(if code {
                        Ctx::at(src, tokens, i, line)
                    } else {
                        Ctx::text(i, line)
                    })
                };
                for (context, effect) in &hits {
                    if cx.as_ref().is_none_or(|cx| cx.fits(*context)) {
                        match effect {
                            Effect::Parse => return true,
                            Effect::Signal(s) => signals |= s,
                        }
                    }
                }
            }
            false
        });
        match stopped {
            // an unclosed bracket or string: leave it to the parser
            None | Some(true) => true,
            Some(false) => decide(signals),
        }
    }

    /// `(start, end, index into contains)` of every occurrence of a substring trigger, sorted by
    /// start and then end; a cased one only where its case agrees.
    fn substrings(&self, src: &[u8]) -> Vec<(usize, usize, usize)> {
        let mut found: Vec<(usize, usize, usize)> = self
            .contains_ac
            .find_overlapping_iter(src)
            .filter_map(|m| {
                let k = m.pattern().as_usize();
                let (text, cased, _, _) = self.contains.get(k)?;
                let exact = !*cased || src.get(m.start()..m.end()) == Some(text.as_slice());
                exact.then_some((m.start(), m.end(), k))
            })
            .collect();
        found.sort_unstable();
        found
    }

    /// The whole-word and part triggers a lowercase word matches.
    fn words_of(&self, lower: &[u8], hits: &mut Vec<(Context, Effect)>) {
        let mut push = |table: &[(Vec<u8>, Context, Effect)], key: &[u8]| {
            let (Some(&first), Some(&last)) = (key.first(), key.last()) else {
                return;
            };
            let bit = 1u64 << key.len().min(63);
            let [by_first, by_last] = &self.quick;
            let known =
                |table: &[u64; 256], b: u8| table.get(usize::from(b)).is_some_and(|m| m & bit != 0);
            if known(by_first, first) && known(by_last, last) {
                hits.extend(lookup(table, key).map(|(_, c, e)| (*c, *e)));
            }
        };
        push(&self.wholes, lower);
        // parts, and runs of up to `max_span` parts, delimited by `_` or the word's ends
        let starts = std::iter::once(0).chain(
            lower
                .iter()
                .enumerate()
                .filter(|(_, b)| **b == b'_')
                .map(|(j, _)| j + 1),
        );
        for start in starts {
            let ends = lower
                .iter()
                .enumerate()
                .skip(start)
                .filter(|(_, b)| **b == b'_')
                .map(|(j, _)| j)
                .chain(std::iter::once(lower.len()))
                .take(self.max_span);
            for end in ends {
                push(&self.parts, lower.get(start..end).unwrap_or_default());
            }
        }
    }
}

/// The entries of a sorted table for `key`.
fn lookup<'t>(
    table: &'t [(Vec<u8>, Context, Effect)],
    key: &[u8],
) -> impl Iterator<Item = &'t (Vec<u8>, Context, Effect)> {
    let first = table.partition_point(|p| p.0.as_slice() < key);
    table
        .get(first..)
        .unwrap_or_default()
        .iter()
        .take_while(move |p| p.0 == key)
}

/// What a logical line holds.
#[derive(Debug, Clone, Copy, Default)]
struct LineFlags {
    /// The token index of its first `for` (statement or comprehension): the iterated
    /// expressions come after it.
    for_from: Option<usize>,
    /// A call to one of [`ITER_WRAPPERS`].
    has_wrapper: bool,
    /// Starts with `class`: the token index of its first `(`, where the bases start.
    bases_from: Option<usize>,
    /// The token index of its first `=` (an assignment, a keyword argument, a comparison).
    assign_from: Option<usize>,
}

/// What the scan knows around one word.
struct Ctx {
    /// The word's token index.
    index: usize,
    /// In code, not in a string or a comment.
    code: bool,
    /// The previous code token is `=`.
    after_assign: bool,
    /// The next code token is `(`.
    called: bool,
    /// The previous code token is `.`.
    after_dot: bool,
    /// The next code token is `.`.
    receiver: bool,
    /// Followed by `.` and one of [`MODEL_METHODS`].
    receiver_of_model_method: bool,
    line: LineFlags,
}

impl Ctx {
    /// A word of code, at `tokens[i]`.
    fn at(src: &[u8], tokens: &[Token], i: usize, line: LineFlags) -> Self {
        let is_code = |t: &&Token| !matches!(t.kind, Kind::Word { code: false });
        let prev = tokens
            .get(..i)
            .unwrap_or_default()
            .iter()
            .rev()
            .find(is_code);
        let mut next = tokens
            .get(i + 1..)
            .unwrap_or_default()
            .iter()
            .filter(is_code);
        let (next, after_next) = (next.next(), next.next());
        let punct = |t: Option<&Token>, p: u8| t.is_some_and(|t| t.kind == Kind::Punct(p));
        Ctx {
            index: i,
            code: true,
            after_assign: punct(prev, b'='),
            called: punct(next, b'('),
            after_dot: punct(prev, b'.'),
            receiver: punct(next, b'.'),
            receiver_of_model_method: punct(next, b'.')
                && after_next.is_some_and(|t| {
                    let w = src.get(t.start..t.end).unwrap_or_default();
                    MODEL_METHODS.iter().any(|m| m.as_bytes() == w)
                }),
            line,
        }
    }

    /// A word of a string or a comment, at `tokens[i]`.
    fn text(i: usize, line: LineFlags) -> Self {
        Ctx {
            index: i,
            code: false,
            after_assign: false,
            called: false,
            after_dot: false,
            receiver: false,
            receiver_of_model_method: false,
            line,
        }
    }

    /// After the first `for` of its logical line, where a loop's iterated expression is.
    fn after_for(&self) -> bool {
        self.line.for_from.is_some_and(|f| self.index > f)
    }

    fn fits(&self, context: Context) -> bool {
        match context {
            Context::Anywhere => true,
            Context::Code => self.code,
            Context::Called => self.called,
            Context::AssignedCall => self.called && self.after_assign,
            Context::Receiver => self.receiver,
            Context::Method => self.called && self.after_dot,
            Context::ForHeader => self.after_for(),
            Context::Listing => {
                self.code
                    && (self.after_for() || self.line.assign_from.is_some_and(|a| self.index > a))
            }
            // `self.model(x)` is a method call, not a forward pass (`resolve::is_model_call`)
            Context::ModelVar => (self.called && !self.after_dot) || self.receiver_of_model_method,
            Context::LoaderVar => {
                self.after_for() || self.line.has_wrapper || self.receiver_of_model_method
            }
            Context::ClassBases => self.line.bases_from.is_some_and(|b| self.index > b),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A word; `code: false` inside a string or a comment.
    Word { code: bool },
    /// One byte of punctuation (`.`, `(`, `=`, ...).
    Punct(u8),
}

#[derive(Debug, Clone, Copy)]
struct Token {
    start: usize,
    end: usize,
    kind: Kind,
}

/// The flags of one logical line.
fn line_flags(src: &[u8], tokens: &[Token]) -> LineFlags {
    let mut flags = LineFlags::default();
    let mut is_class = false;
    let mut first = true;
    let is_code = |t: &&Token| !matches!(t.kind, Kind::Word { code: false });
    for (i, tok) in tokens.iter().enumerate().filter(|(_, t)| is_code(t)) {
        let was_first = std::mem::replace(&mut first, false);
        if tok.kind == Kind::Punct(b'(') && is_class && flags.bases_from.is_none() {
            flags.bases_from = Some(i);
        }
        if tok.kind == Kind::Punct(b'=') && flags.assign_from.is_none() {
            flags.assign_from = Some(i);
        }
        if tok.kind != (Kind::Word { code: true }) {
            continue;
        }
        let word = src.get(tok.start..tok.end).unwrap_or_default();
        if was_first && word == b"class" {
            is_class = true;
        }
        if word == b"for" && flags.for_from.is_none() {
            flags.for_from = Some(i);
        }
        if ITER_WRAPPERS.iter().any(|w| w.as_bytes() == word)
            && tokens
                .get(i + 1..)
                .unwrap_or_default()
                .iter()
                .find(is_code)
                .is_some_and(|t| t.kind == Kind::Punct(b'('))
        {
            flags.has_wrapper = true;
        }
    }
    flags
}

/// Splits Python source into words and punctuation and hands `on_line` the tokens of each
/// logical line (physical lines joined by brackets and `\\`), until it returns `true`.
/// `Some(true)` when it did, `Some(false)` at the end of the file, `None` when the source
/// cannot be split: an unclosed string or bracket, or a closing bracket without its opening one.
///
/// A logical line longer than [`MAX_LINE_TOKENS`] (a generated data table in one bracket) is
/// handed over in pieces with `whole: false`, where no context can be checked: every trigger
/// word of code in them counts wherever it stands (a word of a string or a comment only where
/// any text counts). Memory stays bounded whatever the file's size.
fn for_each_line(src: &[u8], mut on_line: impl FnMut(&[Token], bool) -> bool) -> Option<bool> {
    let mut tokens = Vec::with_capacity(64);
    let mut depth = 0u32;
    let mut chunked = false;
    let mut i = 0;
    while let Some(&b) = src.get(i) {
        if tokens.len() >= MAX_LINE_TOKENS {
            if on_line(&tokens, false) {
                return Some(true);
            }
            tokens.clear();
            chunked = true;
        }
        match b {
            b'\n' => {
                if depth == 0 && !tokens.is_empty() {
                    if on_line(&tokens, !chunked) {
                        return Some(true);
                    }
                    tokens.clear();
                    chunked = false;
                }
                i += 1;
            }
            b'#' => {
                let end = find(src, i, b'\n');
                words(src, i + 1, end, &mut tokens);
                i = end;
            }
            b'\\' if src.get(i + 1) == Some(&b'\n') => i += 2,
            b'\\' if src.get(i + 1..i + 3) == Some(b"\r\n") => i += 3,
            b'"' | b'\'' => i = string(src, i, &mut tokens)?,
            b'(' | b'[' | b'{' => {
                depth += 1;
                tokens.push(punct(i, b));
                i += 1;
            }
            b')' | b']' | b'}' => {
                depth = depth.checked_sub(1)?;
                tokens.push(punct(i, b));
                i += 1;
            }
            _ if is_word_byte(b) => {
                let end = src
                    .get(i..)
                    .unwrap_or_default()
                    .iter()
                    .position(|c| !is_word_byte(*c))
                    .map_or(src.len(), |n| i + n);
                let word = src.get(i..end).unwrap_or_default();
                if matches!(src.get(end), Some(b'"' | b'\'')) && is_string_prefix(word) {
                    i = string(src, end, &mut tokens)?;
                    continue;
                }
                tokens.push(Token {
                    start: i,
                    end,
                    kind: Kind::Word { code: true },
                });
                // `1if`, `0x1for`: a number may end inside the word, and a name start there
                if b.is_ascii_digit() {
                    for j in i + 1..end {
                        if src
                            .get(j)
                            .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
                        {
                            tokens.push(Token {
                                start: j,
                                end,
                                kind: Kind::Word { code: true },
                            });
                        }
                    }
                }
                i = end;
            }
            _ if b.is_ascii_whitespace() || !b.is_ascii() => i += 1,
            _ => {
                tokens.push(punct(i, b));
                i += 1;
            }
        }
    }
    if depth != 0 {
        return None;
    }
    Some(!tokens.is_empty() && on_line(&tokens, !chunked))
}

/// The most tokens of one logical line the scan holds at once.
const MAX_LINE_TOKENS: usize = 1 << 16;

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

fn is_string_prefix(word: &[u8]) -> bool {
    word.len() <= 2
        && word
            .iter()
            .all(|b| matches!(b.to_ascii_lowercase(), b'r' | b'u' | b'b' | b'f' | b't'))
}

fn punct(i: usize, b: u8) -> Token {
    Token {
        start: i,
        end: i + 1,
        kind: Kind::Punct(b),
    }
}

/// The index of the first `byte` at or after `from`, or the end.
fn find(src: &[u8], from: usize, byte: u8) -> usize {
    src.get(from..)
        .unwrap_or_default()
        .iter()
        .position(|c| *c == byte)
        .map_or(src.len(), |n| from + n)
}

/// The words of `src[from..to]` (a comment or a string's contents), not code.
fn words(src: &[u8], from: usize, to: usize, tokens: &mut Vec<Token>) {
    let mut i = from;
    while i < to {
        if src.get(i).is_some_and(|b| is_word_byte(*b)) {
            let end = src
                .get(i..to)
                .unwrap_or_default()
                .iter()
                .position(|c| !is_word_byte(*c))
                .map_or(to, |n| i + n);
            tokens.push(Token {
                start: i,
                end,
                kind: Kind::Word { code: false },
            });
            i = end;
        } else {
            i += 1;
        }
    }
}

/// Skips the string whose opening quote is at `open`, pushing its words; returns the index
/// after it, or `None` when it is not closed.
fn string(src: &[u8], open: usize, tokens: &mut Vec<Token>) -> Option<usize> {
    let quote = *src.get(open)?;
    let triple = src.get(open + 1) == Some(&quote) && src.get(open + 2) == Some(&quote);
    let body = if triple { open + 3 } else { open + 1 };
    let mut i = body;
    loop {
        match *src.get(i)? {
            b'\\' => i += 2,
            b'\n' if !triple => return None,
            c if c == quote && !triple => {
                words(src, body, i, tokens);
                return Some(i + 1);
            }
            c if c == quote && src.get(i + 1) == Some(&quote) && src.get(i + 2) == Some(&quote) => {
                words(src, body, i, tokens);
                return Some(i + 3);
            }
            _ => i += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_trainer_configuration_is_a_trigger() {
        for name in crate::analysis::resolve::HF_CONFIGS {
            let lower = name.to_ascii_lowercase();
            assert!(
                t::HF_CONFIGS.iter().any(|tr| match tr.word {
                    Word::Whole(w) => w == lower,
                    Word::Contains(w) => lower.contains(w),
                    _ => false,
                }),
                "{name} has no trigger"
            );
        }
    }

    fn matters(src: &str) -> bool {
        may_matter(src)
    }

    #[test]
    fn plain_python_is_skipped() {
        assert!(!matters(
            "import os\n\ndef f(x):\n    return os.path.join(x, 'a')\n\nfor i in range(3):\n    print(f(i))\n"
        ));
    }

    #[test]
    fn words_in_context_keep_the_file() {
        // record loop: the word must be in the `for` header
        assert!(matters("for f in sorted(\n    image_files):\n    pass\n"));
        assert!(!matters("files = 1\nfor f in x:\n    pass\n"));
        assert!(!matters("filenames = [n.upper() for n in names]\n"));
        assert!(matters("xs = [f for f in os.listdir(d)]\n"));
        // model-like names: called, or the receiver of a model method
        assert!(matters("for x in xs:\n    y = model(x)\n"));
        assert!(matters("net.eval()\n"));
        assert!(!matters("print(module.__name__)\n"));
        // loaders: iterated or wrapped
        assert!(matters(
            "for i, b in enumerate(self.train_loader):\n    pass\n"
        ));
        assert!(!matters("spec.loader.exec_module(m)\n"));
        // an optimizer step needs both halves
        assert!(matters("opt.step()\n"));
        assert!(!matters("self.step()\n"));
        // two data signals
        assert!(matters("for p in xs:\n    open(p)\nx.save(y)\n"));
        assert!(!matters("open(p)\n"));
        // class bases
        assert!(matters("class Net(nn.Module):\n    pass\n"));
        assert!(!matters("import sys\nx = sys.modules\n"));
        assert!(!matters("class TestModule(unittest.TestCase):\n    pass\n"));
        // the builtin `compile(...)` compiles no model (`torch.compile` needs `torch`)
        assert!(!matters("code = compile(src, 'f', 'exec')\n"));
        assert!(matters("from torch import compile\nm = compile(m)\n"));
        assert!(!matters("pat = re.compile('x')\n"));
        // names matter in code, not in prose
        assert!(!matters("\"\"\"Uses NumPy and torch.\"\"\"\n"));
        assert!(matters("import numpy\n"));
    }

    #[test]
    fn huge_lines_are_scanned_in_pieces_that_count_every_trigger() {
        let mut table = String::from("TABLE = [\n");
        for i in 0..40_000 {
            table.push_str(&format!("    ({i}, 'k{i}'),\n"));
        }
        assert!(!matters(&format!("{table}]\n")));
        // past the first piece, a trigger counts without its context (`model` is not called)
        assert!(matters(&format!("{table}    model,\n]\n")));
        // but a word of a string there is still only text (`pydoc_data/topics.py`)
        assert!(!matters(&format!(
            "{table}    'model(x) for f in files',\n]\n"
        )));
    }

    #[test]
    fn listing_calls_count_where_a_loop_could_iterate_them() {
        // in a `for` header, or in an assigned value the loop may iterate later
        assert!(matters("for line in f.readlines():\n    pass\n"));
        assert!(matters(
            "lines = f.readlines()\nfor line in lines:\n    pass\n"
        ));
        assert!(matters("names = [n for n in os.listdir(d)]\n"));
        // an argument of a call, or a statement of its own, binds nothing a loop iterates
        assert!(!matters("self.assertEqual(f.readlines(), ['a'])\n"));
        assert!(!matters("os.listdir(d)\n"));
        assert!(!matters("s = '''for f in os.listdir(d)'''\n"));
    }

    #[test]
    fn contexts_end_with_the_logical_line() {
        // two statements: a name, then a parenthesised expression
        assert!(!matters("model\n(x)\n"));
        // brackets and backslashes join physical lines into one logical line
        assert!(matters("y = model(\n    x)\n"));
        assert!(matters("ys = [f(p) for p in\n      image_paths]\n"));
        assert!(matters("for b in \\\n        train_loader:\n    pass\n"));
    }

    #[test]
    fn strings_and_comments_are_words_but_not_calls() {
        assert!(!matters("s = 'model(x)'\n# model(x)\n"));
        assert!(matters("for f in ('a', # files\n 'b'):\n    pass\n"));
        assert!(matters(
            "for f in [\"\"\"x\n\"\"\", 'train_files']:\n    pass\n"
        ));
    }

    #[test]
    fn what_does_not_tokenise_is_parsed() {
        assert!(matters("x = (1,\n"));
        assert!(matters("x = 'abc\n"));
        assert!(matters("x = 1)\n"));
        assert!(matters("x = \"\"\"abc\n"));
    }

    #[test]
    fn numbers_glued_to_names_are_looked_into() {
        assert!(matters("for f in 0xfiles:\n    pass\n"));
    }
}
