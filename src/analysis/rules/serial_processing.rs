use crate::analysis::facts::NodeKind;
use crate::analysis::model::CodeKind;
use crate::analysis::resolve::{is_record_loop, walks_directories};
use crate::analysis::rule::{Checker, Rule, RuleMeta};
use crate::declare_rule;

declare_rule! {
    /// ## What it does
    /// Flags a serial per-file loop in data-processing code (`for f in files:` over `glob`,
    /// `os.listdir`, `Path.iterdir`, librosa's `find_files`, imutils' `paths.list_images`, a
    /// list of paths, the files of each
    /// directory an `os.walk` yields, `for root, dirs, names in os.walk(d): for n in names:`
    /// (the walk also bound first, `g = os.walk(d)`); also a listing
    /// bound at module level and read by a function, `dirs = os.listdir(path)` ... `def
    /// resize(): for item in dirs:`) whose body does per-file work: calls a
    /// function of the file with the loop variable, decodes images, videos or DICOM scans (`pydicom.dcmread(path)`, Keras' `load_img(path)`), parses JSON/CSV/XML (`ET.parse(path)`),
    /// loads arrays (the entry, or a name the body builds from it, `path = os.path.join(root,
    /// f)` then `open(path)`, whose handle is then parsed or iterated, `json.load(fh)`: a file
    /// read and written back as it is, `data = fh.read()`, is a copy), or hands a directory entry (or a path built from it) to a package outside
    /// the standard library that does more than log (`pytesseract.image_to_string(f)`,
    /// `cv2.VideoCapture(path)`; also in a `while` pass over the same file inside it, a
    /// compression repeated until the file is small enough), and collects (`append`, a
    /// pandas Series set by key, `tempo._set_value(song_id, t)`) or
    /// writes a result per file (`save`, `imwrite`, SimpleITK's `sitk.WriteImage(img, out)`,
    /// pydub's `audio.export(dst)`, a figure,
    /// `plt.savefig(path)`, ...) (also from a loop nested in it, `cv2.imwrite` per frame, or
    /// stacked onto an array grown file by file, `tmp = np.vstack((tmp, x))` (or a table,
    /// `df1 = pd.concat([df1, df])`), whose first value,
    /// `else: tmp = x.copy()`, carries nothing the next file needs). Files that already use `multiprocessing`, `concurrent.futures`, `joblib`, `ray`
    /// or `dask` are left alone (joblib when the file calls `Parallel` / `delayed`: imported only
    /// to `dump` a model, it runs nothing in parallel), as are files that start threads on a
    /// function of their own (`threading.Thread(target=process, ...)`), and unit-test modules
    /// (`test_*.py` / `*_test.py` importing `unittest` or `pytest`), whose loops read fixtures.
    /// A loop that runs a model on each file (its forward pass, `generate`, or a Keras-style
    /// `model.predict(batch)`) is a step of inference, not a per-file loop of
    /// this rule: its image decoding is EA502's, and its fix a `DataLoader` with workers, not a
    /// process pool.
    ///
    /// Reported on the `for` line of the per-file loop, once per nest of such loops: on the
    /// outermost (also a loop over a listing of folders whose files the loop inside it lists,
    /// `for d in os.listdir(root):` ... `for f in os.listdir(os.path.join(root, d)):`, or over
    /// folders written out, `for split in ['train', 'val']:` ... `for f in
    /// os.listdir(split):`), unless
    /// that one walks directories (`os.walk`) and a loop over their files inside it qualifies
    /// too.
    ///
    /// ## Why is this slow?
    /// One Python process uses one CPU core: on a 16-core machine the loop leaves 15 cores idle
    /// (≤ 6 % CPU). Per-file work is independent and parallelises across processes.
    ///
    /// ## Example
    /// ```python
    /// import glob
    ///
    /// def process(path):
    ///     return len(open(path).read())
    ///
    /// files = glob.glob("data/*.txt")
    /// results = []
    /// for f in files:
    ///     results.append(process(f))
    /// ```
    ///
    /// Use instead:
    /// ```python
    /// import glob
    /// from concurrent.futures import ProcessPoolExecutor
    ///
    /// def process(path):
    ///     return len(open(path).read())
    ///
    /// files = glob.glob("data/*.txt")
    /// with ProcessPoolExecutor() as pool:
    ///     results = list(pool.map(process, files, chunksize=16))
    /// ```
    ///
    /// ## Fix safety
    /// No automatic fix: the per-file function must be picklable and free of shared state.
    pub(crate) struct SerialProcessing {
        id: "EA602",
        name: "serial-per-file-loop",
        category: SerialProcessing,
        resource: Cpu,
        severity: High,
    }
}

const HEAVY: &[&str] = &[
    "open",
    "imread",
    "load",
    "loads",
    "read_csv",
    "read_parquet",
    "read_json",
    "read_excel",
    "read_image",
    // Keras' image loader (`keras.preprocessing.image.load_img(path)`): a decode
    "load_img",
    "loadtxt",
    "fromfile",
    "parse",
    "resize",
    "convert",
    "encode",
    "tokenize",
    // `cv2.VideoCapture(path)`: every frame of the file is decoded
    "VideoCapture",
];

/// The standard library's top-level modules (Python 3.11): its per-file work (`open`,
/// `json.load`, ...) is named in `HEAVY`; its other calls on a path (`os.path.isfile`,
/// `html.escape`, `shutil.copy`) are helpers.
const STDLIB: &str = "\
abc aifc argparse array ast asynchat asyncio asyncore atexit audioop base64 bdb binascii \
bisect builtins bz2 cProfile calendar cgi cgitb chunk cmath cmd code codecs codeop \
collections colorsys compileall concurrent configparser contextlib contextvars copy copyreg \
crypt csv ctypes curses dataclasses datetime dbm decimal difflib dis distutils doctest \
email encodings enum errno faulthandler fcntl filecmp fileinput fnmatch fractions ftplib \
functools gc genericpath getopt getpass gettext glob graphlib grp gzip hashlib heapq hmac \
html http imaplib imghdr imp importlib inspect io ipaddress itertools json keyword \
linecache locale logging lzma mailbox mailcap marshal math mimetypes mmap modulefinder \
msilib msvcrt multiprocessing netrc nis nntplib nt ntpath nturl2path numbers opcode \
operator optparse os ossaudiodev pathlib pdb pickle pickletools pipes pkgutil platform \
plistlib poplib posix posixpath pprint profile pstats pty pwd py_compile pyclbr pydoc \
pyexpat queue quopri random re readline reprlib resource rlcompleter runpy sched secrets \
select selectors shelve shlex shutil signal site smtpd smtplib sndhdr socket socketserver \
spwd sqlite3 sre_compile sre_constants sre_parse ssl stat statistics string stringprep \
struct subprocess sunau symtable sys sysconfig syslog tabnanny tarfile telnetlib tempfile \
termios textwrap threading time timeit tkinter token tokenize tomllib trace traceback \
tracemalloc tty turtle types typing unicodedata unittest urllib uu uuid warnings wave \
weakref webbrowser winreg winsound wsgiref xdrlib xml xmlrpc zipapp zipfile zipimport zlib \
zoneinfo ";

/// Packages outside the standard library whose calls on a path only report or order it.
const BOOKKEEPING: &[&str] = &[
    "click",
    "colorama",
    "loguru",
    "mlflow",
    "natsort",
    "rich",
    "termcolor",
    "tqdm",
    "wandb",
];

impl Rule for SerialProcessing {
    fn meta(&self) -> &'static RuleMeta {
        &Self::META
    }

    // fires in a step or record loop, or on a file's kind: nothing beyond the engine's triggers
    fn triggers(&self) -> crate::analysis::prefilter::Triggers {
        crate::analysis::prefilter::Triggers::Engine
    }

    fn check(&self, cx: &mut Checker<'_>) {
        let m = cx.m;
        if m.parallel_lib || unit_test_module(m, cx.path) {
            return;
        }
        let local_fns: std::collections::HashSet<&str> = m
            .funcs
            .iter()
            .filter(|f| f.class.is_none())
            .map(|f| m.text(f.name))
            .collect();
        let mut flagged: Vec<usize> = Vec::new();
        for (li, l) in m.loops.iter().enumerate() {
            if l.info.step
                || l.info.epoch
                || m.dead(&l.ctx)
                || l.ctx.getitem
                || l.targets.is_empty()
                || !is_record_loop(m, l)
            {
                continue;
            }
            if l.parent.is_some_and(|p| super::step_ctx_loop(m, p)) {
                continue;
            }
            let fn_kind = l
                .ctx
                .func
                .and_then(|f| m.funcs.get(f as usize))
                .map(|f| f.kind);
            if !(m.kind == CodeKind::Data || fn_kind == Some(CodeKind::Data)) {
                continue;
            }
            let iter_text = m.text(l.iter.unwrap_or_default());
            if iter_text.contains("iterrows") || iter_text.contains("itertuples") {
                continue;
            }
            let targets: Vec<&str> = l.targets.iter().map(|t| m.text(*t)).collect();
            let mentions = |t: &str, names: &[&str]| {
                names
                    .iter()
                    .any(|v| t == *v || super::words(t).any(|w| w == *v))
            };
            let derived = derived_names(m, li);
            let uses_target = |c: &crate::analysis::facts::Call| {
                m.call_args(c)
                    .iter()
                    .any(|a| mentions(m.text(a.value), &targets))
            };
            // (the entry itself, not a fact about it: `humanfriendly.format_size(
            // os.path.getsize(path))` formats a number)
            let uses_file = |c: &crate::analysis::facts::Call| {
                m.call_args(c).iter().any(|a| {
                    let t = m.text(a.value);
                    mentions(t, &derived) && !file_fact(t)
                })
            };
            // a package call on a directory entry reads that file; on an element of an
            // in-memory collection (`Image.fromarray(img)`) it need not
            let listing = crate::analysis::resolve::lists_directory(m, l);
            let first = m.calls.partition_point(|c| c.span.start < l.span.start);
            let in_loop = || {
                m.calls
                    .get(first..)
                    .unwrap_or(&[])
                    .iter()
                    .take_while(|c| c.span.start < l.span.end)
            };
            // is loop `lp` this one, or inside it through loops that `pass` lets through?
            let within = |lp: Option<u32>, pass: &dyn Fn(&crate::analysis::facts::Loop) -> bool| {
                let mut cur = lp;
                while let Some(i) = cur {
                    if i == li as u32 {
                        return true;
                    }
                    match m.loops.get(i as usize) {
                        Some(x) if pass(x) => cur = x.parent,
                        _ => return false,
                    }
                }
                false
            };
            // (also in a `while` loop inside it that works on the same file: a retry, or a
            // compression pass repeated until the file is small enough)
            // Ex) for name in files: while True: img = Image.open(path); ...; img.save(out); break
            let own_work = |lp: Option<u32>| within(lp, &|x| x.iter.is_none());
            let heavy = in_loop().any(|c| {
                if !l.span.contains(c.span) || !own_work(c.ctx.loop_) {
                    return false;
                }
                let last = m.last_name(c);
                if last == "open" && !opens_to_read(m, c) {
                    return false; // writing or handing out handles is not per-file work
                }
                // (a file opened through a path the body builds counts when what it reads is
                // parsed: its handle handed on, `json.load(fh)`, or iterated; read and written
                // back as it is, `data = f.read()`, it is a copy)
                // (nor a review kept as its text, `content = f.read().lower()` then
                // `data.append([content, label])`: reading is the whole work, on one core or many)
                let reads_file = || {
                    let open = c.method.is_none() && m.text(c.func) == "open";
                    !open || (uses_target(c) && !kept_as_text(m, c, l)) || handle_parsed(m, c, l)
                };
                (c.method.is_none() && local_fns.contains(m.text(c.func)) && uses_target(c))
                    || (HEAVY.contains(&last) && uses_file(c) && reads_file())
                    || (listing && imported_work(m, c) && uses_file(c))
            });
            // a loop inside the file loop that is not a model step: its calls run per file too
            let per_file = |lp: Option<u32>| within(lp, &|x| !x.info.step);
            // results are collected or written per file
            // a function of this file, handed the file, that writes its own output
            // (`make_thumb(p, dst)` saving a thumbnail)
            let writes_itself = |c: &crate::analysis::facts::Call| {
                c.method.is_none()
                    && uses_target(c)
                    && m.plain_fn(m.text(c.func)).is_some_and(|fi| {
                        // through an object it makes itself: a handle it is given (`zf` of
                        // one shared archive) is shared state, not an output per file
                        let params: Vec<&str> = m
                            .funcs
                            .get(fi)
                            .map(|f| f.params.iter().map(|(n, _)| m.text(*n)).collect())
                            .unwrap_or_default();
                        m.calls.iter().any(|k| {
                            k.ctx.func == Some(fi as u32)
                                && k.method.is_some()
                                && OUTPUTS.contains(&m.last_name(k))
                                && k.recv_root.is_some_and(|r| !params.contains(&m.text(r)))
                        })
                    })
            };
            let collects = in_loop().any(|c| per_file(c.ctx.loop_) && writes_itself(c))
                // (also an output function imported by name, `from numpy import save`)
                || in_loop().any(|c| {
                    per_file(c.ctx.loop_)
                        && c.method.is_none()
                        && m.imports.get(m.text(c.func)).is_some_and(|q| {
                            OUTPUTS.contains(&q.rsplit('.').next().unwrap_or(q))
                        })
                })
                || in_loop().any(|c| {
                    per_file(c.ctx.loop_)
                        && c.method.is_some()
                        && (OUTPUTS.contains(&m.last_name(c))
                            || matches!(
                                m.last_name(c),
                                "append"
                                    | "extend"
                                    | "add"
                                    | "update"
                                    | "put"
                                    | "writerow"
                                    | "insert"
                                    | "appendleft"
                                    // (a pandas Series set by key, `tempo._set_value(id, t)`)
                                    | "_set_value"
                                    | "set_value"
                            ))
                })
                || m.assigns.iter().any(|a| {
                    // `skipped += 1` counts files, it keeps no result of them
                    let counter = a.augmented && a.vkind == crate::analysis::facts::ValKind::Int;
                    // (an array grown by stacking each file's result onto itself, `tmp =
                    // np.vstack((tmp, x))`, or a table, `df1 = pd.concat([df1, df])`)
                    let stacked = a.targets.len() == 1
                        && a.rhs_call.and_then(|i| m.calls.get(i as usize)).is_some_and(|k| {
                            matches!(
                                m.last_name(k),
                                "vstack"
                                    | "hstack"
                                    | "dstack"
                                    | "concatenate"
                                    | "cat"
                                    | "stack"
                                    | "concat"
                            ) && super::words(m.text(k.args_span)).any(|w| w == m.text(a.left))
                        });
                    a.ctx.loop_ == Some(li as u32)
                        && (m.text(a.left).contains('[') || (a.augmented && !counter) || stacked)
                });
            // a recursive walk (the loop calls its own function) is not a flat batch of files
            let recursive = l
                .ctx
                .func
                .and_then(|f| m.funcs.get(f as usize))
                .is_some_and(|f| {
                    let name = m.text(f.name);
                    m.calls.iter().any(|c| {
                        c.ctx.loop_ == Some(li as u32)
                            && c.method.is_none()
                            && m.text(c.func) == name
                    })
                });
            // (each file needs the one before it, optical flow between consecutive frames:
            // the iterations are not independent)
            if !heavy || !collects || recursive || breaks(m, l) || carries_state(m, l) {
                continue;
            }
            flagged.push(li);
        }
        // one finding per nest of such loops: on the outermost loop over files (an `os.walk`
        // over directories holding a flagged loop over their files gives way to it)
        let ancestors = |li: usize| {
            let mut out = Vec::new();
            let mut cur = m.loops.get(li).and_then(|l| l.parent);
            while let Some(p) = cur.filter(|_| out.len() < 256) {
                out.push(p as usize);
                cur = m.loops.get(p as usize).and_then(|l| l.parent);
            }
            out
        };
        let walks_dirs = |li: usize| m.loops.get(li).is_some_and(|l| walks_directories(m, l));
        let kept: Vec<usize> = flagged
            .iter()
            .copied()
            .filter(|&li| !(walks_dirs(li) && flagged.iter().any(|&d| ancestors(d).contains(&li))))
            .collect();
        // `for actor_dir in os.listdir(root): ... for file in os.listdir(actor_path):` — a loop
        // over a listing of folders whose files the flagged loop lists is the outermost loop
        // of the nest (not an `os.walk`, whose own loop over files gives way above)
        let mut reported: Vec<usize> = Vec::new();
        for &li in &kept {
            if ancestors(li).iter().any(|a| kept.contains(a)) {
                continue;
            }
            let mut top = li;
            for _ in 0..8 {
                match m
                    .loops
                    .get(top)
                    .and_then(|l| l.parent)
                    .map(|p| p as usize)
                    .filter(|&p| lists_folders_of(m, p, top) && !walks_dirs(p))
                {
                    Some(p) => top = p,
                    None => break,
                }
            }
            if reported.contains(&top) {
                continue;
            }
            reported.push(top);
            let Some(l) = m.loops.get(top) else { continue };
            cx.at(
                &Self::META,
                l.line,
                l.col,
                l.end_line,
                "serial per-file loop uses one CPU core: process the files in parallel (`concurrent.futures.ProcessPoolExecutor`, `multiprocessing.Pool`)".to_string(),
                None,
            );
        }
    }
}

/// Does loop `l` iterate folders written out in the file: a list or tuple written out, a name
/// bound to one, or a `zip` of such (`for input, output in zip(input_paths, output_paths):`,
/// `for split in ['train', 'val']:`)?
fn folders_written_out(
    m: &crate::analysis::facts::Model<'_>,
    l: &crate::analysis::facts::Loop,
) -> bool {
    let written = |n: tree_sitter::Node<'_>| match n.node_kind() {
        "list" | "tuple" => true,
        "identifier" => {
            crate::analysis::as_shipped::binding(m, m.node_text(n), l.span.start, l.ctx.func)
                .and_then(|a| m.node(a.value))
                .is_some_and(|v| matches!(v.node_kind(), "list" | "tuple"))
        }
        _ => false,
    };
    let Some(it) = l.iter.and_then(|s| m.node(s)) else {
        return false;
    };
    if it.node_kind() == "call"
        && it
            .child_by_field_name("function")
            .is_some_and(|f| m.node_text(f) == "zip")
    {
        return it
            .child_by_field_name("arguments")
            .and_then(|a| a.named_child(0))
            .is_some_and(written);
    }
    written(it)
}

/// Is loop `outer` a loop over a directory listing (`os.listdir`, `glob`, `iterdir`; or over
/// folders written out, [`folders_written_out`]) whose
/// entries the loop `inner` it holds lists in turn: `inner` iterates a listing of the outer
/// target or of a path the outer body builds from it (`actor_path = os.path.join(root,
/// actor_dir)` ... `for file in os.listdir(actor_path):`)? Then the outer loop heads the nest of
/// per-file loops; one that stops early (`break`) or runs a model step is none.
fn lists_folders_of(m: &crate::analysis::facts::Model<'_>, outer: usize, inner: usize) -> bool {
    let (Some(o), Some(i)) = (m.loops.get(outer), m.loops.get(inner)) else {
        return false;
    };
    if o.info.step
        || o.info.epoch
        || m.dead(&o.ctx)
        || !(crate::analysis::resolve::lists_directory(m, o) || folders_written_out(m, o))
        || !crate::analysis::resolve::lists_directory(m, i)
        || breaks(m, o)
    {
        return false;
    }
    // (also through a name the outer body binds: `files = os.listdir(path)` ... `for f in files:`)
    let names = derived_names(m, outer);
    i.iter
        .is_some_and(|it| super::words(m.text(it)).any(|w| names.contains(&w)))
}

/// The names loop `li` binds to its file: its targets, and the plain names its body assigns
/// from them, in order (`path = "./videos/" + vid`, then `frames = os.listdir(path)`).
fn derived_names<'s>(m: &crate::analysis::facts::Model<'s>, li: usize) -> Vec<&'s str> {
    let Some(l) = m.loops.get(li) else {
        return Vec::new();
    };
    let mut derived: Vec<&str> = l.targets.iter().map(|t| m.text(*t)).collect();
    for a in &m.assigns {
        if a.ctx.loop_ == Some(li as u32)
            && !a.augmented
            && a.targets.len() == 1
            && super::words(m.text(a.value)).any(|w| derived.contains(&w))
        {
            let name = m.text(a.left);
            if name.chars().all(|ch| ch.is_alphanumeric() || ch == '_') && !derived.contains(&name)
            {
                derived.push(name);
            }
        }
    }
    derived
}

/// A call into an imported package outside the standard library that does more than report
/// (`BOOKKEEPING`):
/// `pytesseract.image_to_string(f)`, `cv2.VideoCapture(f)`, or a name imported from one.
fn imported_work(m: &crate::analysis::facts::Model<'_>, c: &crate::analysis::facts::Call) -> bool {
    let text = m.text(c.func);
    let head = if c.dotted {
        text.split('.').next().unwrap_or(text)
    } else if c.method.is_none() {
        text
    } else {
        return false;
    };
    m.imports.get(head).is_some_and(|q| {
        let top = q.split('.').next().unwrap_or(q);
        !BOOKKEEPING.contains(&top) && !STDLIB.split_whitespace().any(|s| s == top)
    })
}

/// Is `arg` a fact about a file rather than the file: its size, times, existence or name
/// (`os.path.getsize(path)`, `len(name)`)?
fn file_fact(arg: &str) -> bool {
    const FACTS: &[&str] = &[
        "os.path.getsize(",
        "os.path.getmtime(",
        "os.path.getctime(",
        "os.path.getatime(",
        "os.path.exists(",
        "os.path.isfile(",
        "os.path.isdir(",
        "os.path.basename(",
        "os.path.splitext(",
        "os.stat(",
        "len(",
    ];
    FACTS.iter().any(|f| arg.starts_with(f)) && arg.ends_with(')')
}

/// Method calls that write a result out (collecting one in memory, `append`, `update`, ..., is
/// listed where the loop's own calls are read).
const OUTPUTS: &[&str] = &[
    "write",
    // (pydub's `AudioSegment.from_mp3(f).export(dst, format="wav")`)
    "export",
    "writelines",
    "save",
    "to_csv",
    "to_parquet",
    "savez",
    "savez_compressed",
    "imwrite",
    "dump",
    "write_text",
    "write_bytes",
    "imsave",
    // (matplotlib's `plt.savefig(f"img_data/{name}.png")`: a figure rendered per file)
    "savefig",
    "save_image",
    "savetxt",
    "savemat",
    "to_json",
    "to_pickle",
    "to_feather",
    "create_dataset",
    // (SimpleITK's `sitk.WriteImage(img, path)`: a medical volume written per file)
    "WriteImage",
];

/// `open(p)` / `open(p, "rb")` / `open(p, "r+b")`: the file is opened to be read. A write mode, or a mode only known
/// at run time (`open(name, mode)` handed back to the caller), is not reading work.
fn opens_to_read(m: &crate::analysis::facts::Model<'_>, c: &crate::analysis::facts::Call) -> bool {
    let Some(mode) = m.kw(c, "mode").or_else(|| m.pos(c, 1)) else {
        return true;
    };
    m.node(mode.value)
        .and_then(|n| crate::analysis::facts::string_value(n, m.src))
        .is_some_and(|v| v.contains('r') || !v.contains(['w', 'a', 'x', '+']))
}

/// Is the file a unit-test module: named `test_*.py` or `*_test.py` and importing `unittest` or
/// `pytest`? Its loops read the test's fixtures, a few files, not a dataset.
fn unit_test_module(m: &crate::analysis::facts::Model<'_>, path: &str) -> bool {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    (name.starts_with("test_") || name.ends_with("_test.py"))
        && m.imports.values().any(|q| {
            let top = q.split('.').next().unwrap_or(q);
            top == "unittest" || top == "pytest"
        })
}

/// Is the file `open` call `c` (in loop `l`) opens only read as text and kept: its handle used
/// only as `fh.read()`, through string methods (`.decode("utf-8").replace("\\n", " ").lower()`),
/// into a name whose every use in the loop is inside an `append(...)` (the IMDb reader of *Dive
/// into Deep Learning*: `review = f.read().decode('utf-8').lower()` then `data.append([review,
/// label])`)? Nothing is parsed: the loop copies text into memory.
fn kept_as_text(
    m: &crate::analysis::facts::Model<'_>,
    c: &crate::analysis::facts::Call,
    l: &crate::analysis::facts::Loop,
) -> bool {
    const TEXT_METHODS: &[&str] = &[
        "read", "decode", "replace", "lower", "upper", "strip", "rstrip", "lstrip",
    ];
    let (Some(uses), Some(body)) = (handle_uses(m, c, l), m.node(l.span)) else {
        return false;
    };
    // every later use of the handle starts a chain of text methods bound to a name
    let mut kept: Vec<&str> = Vec::new();
    for n in uses {
        // climb `handle.read()` and the string methods chained on it
        let mut top = n;
        while let Some(attr) = top
            .parent()
            .filter(|p| p.node_kind() == "attribute")
            .filter(|p| p.child_by_field_name("object") == Some(top))
        {
            let method = attr
                .child_by_field_name("attribute")
                .map_or("", |a| m.node_text(a));
            let Some(called) = attr
                .parent()
                .filter(|p| p.node_kind() == "call" && TEXT_METHODS.contains(&method))
            else {
                return false;
            };
            top = called;
        }
        if top == n {
            return false;
        }
        let Some(name) = top
            .parent()
            .filter(|p| p.node_kind() == "assignment")
            .filter(|p| p.child_by_field_name("right") == Some(top))
            .and_then(|p| p.child_by_field_name("left"))
            .filter(|t| t.node_kind() == "identifier")
            .map(|t| m.node_text(t))
        else {
            return false;
        };
        kept.push(name);
    }
    if kept.is_empty() {
        return false;
    }
    // each kept name is only ever appended to a collection
    let mut stack = vec![body];
    while let Some(n) = stack.pop() {
        if n.node_kind() == "identifier"
            && kept.contains(&m.node_text(n))
            && n.parent().is_some_and(|p| {
                !(p.node_kind() == "assignment" && p.child_by_field_name("left") == Some(n))
            })
        {
            let mut up = n.parent();
            let mut appended = false;
            for _ in 0..4 {
                let Some(p) = up else { break };
                if p.node_kind() == "argument_list"
                    && p.parent()
                        .and_then(|call| call.child_by_field_name("function"))
                        .is_some_and(|f| m.node_text(f).ends_with(".append"))
                {
                    appended = true;
                    break;
                }
                if !matches!(p.node_kind(), "list" | "tuple" | "parenthesized_expression") {
                    break;
                }
                up = p.parent();
            }
            if !appended {
                return false;
            }
        }
        let mut cur = n.walk();
        stack.extend(n.named_children(&mut cur));
    }
    true
}

/// The uses, in loop `l` after `open` call `c`, of the handle it binds (`with open(p) as fh`,
/// `fh = open(p)`; not the `as` target itself). `None` when the call binds no handle or the
/// loop is too large to walk.
fn handle_uses<'t>(
    m: &'t crate::analysis::facts::Model<'_>,
    c: &crate::analysis::facts::Call,
    l: &crate::analysis::facts::Loop,
) -> Option<Vec<tree_sitter::Node<'t>>> {
    let call = m.node(c.span)?;
    let handle = match call.parent() {
        Some(p) if p.node_kind() == "as_pattern" => p
            .child_by_field_name("alias")
            .map(|a| m.node_text(a).trim()),
        _ => m
            .assigns
            .iter()
            .find(|a| a.targets.len() == 1 && m.node(a.value).is_some_and(|v| v == call))
            .map(|a| m.text(a.left)),
    }
    .filter(|h| !h.is_empty())?;
    let mut stack = vec![m.node(l.span)?];
    let mut uses = Vec::new();
    let mut seen = 0;
    while let Some(n) = stack.pop() {
        seen += 1;
        if seen > 20_000 {
            return None;
        }
        if n.node_kind() == "identifier" && n.start_byte() >= c.span.end && m.node_text(n) == handle
        {
            if n.parent()
                .is_none_or(|p| !matches!(p.node_kind(), "as_pattern_target" | "as_pattern"))
            {
                uses.push(n);
            }
            continue;
        }
        let mut cur = n.walk();
        stack.extend(n.named_children(&mut cur));
    }
    Some(uses)
}

/// Is what `open` call `c` (in loop `l`) reads parsed: its handle (`with open(p) as fh`, `fh =
/// open(p)`) used after it in the loop other than as the receiver of a method (`json.load(fh)`, `for line
/// in fh`), not only read and written back (`data = fh.read()`)?
fn handle_parsed(
    m: &crate::analysis::facts::Model<'_>,
    c: &crate::analysis::facts::Call,
    l: &crate::analysis::facts::Loop,
) -> bool {
    handle_uses(m, c, l).is_some_and(|uses| {
        uses.iter().any(|n| {
            let receiver = n.parent().is_some_and(|p| {
                p.node_kind() == "attribute"
                    && p.child_by_field_name("object").is_some_and(|o| o == *n)
            });
            let bound = m
                .assigns
                .iter()
                .any(|a| a.left == crate::analysis::facts::Span::of(*n));
            !receiver && !bound
        })
    })
}

/// The loop stops early (`break` in its own body): it searches or samples the files, it is not
/// a batch over all of them.
// Ex) for fname in glob.glob("*.py"): size += read(fname); if size > N: break
fn breaks(m: &crate::analysis::facts::Model<'_>, l: &crate::analysis::facts::Loop) -> bool {
    let Some(node) = m.node(l.span) else {
        return false;
    };
    let mut stack: Vec<_> = {
        let mut c = node.walk();
        node.named_children(&mut c).collect()
    };
    while let Some(n) = stack.pop() {
        match n.node_kind() {
            "break_statement" => return true,
            "for_statement"
            | "while_statement"
            | "function_definition"
            | "class_definition"
            | "lambda" => {}
            _ => {
                let mut c = n.walk();
                stack.extend(n.named_children(&mut c));
            }
        }
    }
    false
}

/// Does loop `l` carry a value from one iteration to the next: a name bound before the loop
/// (in the same function), read in the body before the body rebinds it to something of the
/// iteration's (not a counter, `n = n + 1`, nor a reset, `buffer = []`)? (`prvs = None` ... `for f in frames: if prvs is None:
/// ... flow = calc(prvs, frame) ... prvs = frame`)
// Ex) for filename in images: flow = cv2.calcOpticalFlowFarneback(prvs, next, ...); prvs = next
fn carries_state(m: &crate::analysis::facts::Model<'_>, l: &crate::analysis::facts::Loop) -> bool {
    let Some(node) = m.node(l.span) else {
        return false;
    };
    let Some(body) = node.child_by_field_name("body") else {
        return false;
    };
    let targets: Vec<&str> = l.targets.iter().map(|t| m.text(*t)).collect();
    m.assigns
        .iter()
        .filter(|a| {
            l.span.contains(a.span)
                && !a.augmented
                && a.targets.len() == 1
                && a.ctx.func == l.ctx.func
                && m.node(a.left)
                    .is_some_and(|n| n.node_kind() == "identifier")
        })
        .any(|a| {
            let name = m.text(a.left);
            // (a counter, `image_id = image_id + 1`, or a buffer emptied, `shard = []`,
            // carries nothing the next file's work needs)
            let v = m.text(a.value);
            let reset = a.vkind.is_literal()
                || matches!(v, "[]" | "{}" | "()" | "list()" | "dict()" | "set()");
            if targets.contains(&name) || reset || super::words(v).any(|w| w == name) {
                return false;
            }
            // (nor an accumulator's first value, `if tmp is not None: tmp = np.vstack((tmp,
            // x))` / `else: tmp = x.copy()`: the name is also updated from itself in the loop,
            // a collection of the files' results)
            if m.assigns.iter().any(|b| {
                l.span.contains(b.span)
                    && m.text(b.left) == name
                    && super::words(m.text(b.value)).any(|w| w == name)
            }) {
                return false;
            }
            let bound_before = m.assigns.iter().any(|b| {
                b.span.end <= l.span.start && b.ctx.func == l.ctx.func && m.text(b.left) == name
            });
            // the first binding of `name` in the body, and a read of it before that
            let first_bind = m
                .assigns
                .iter()
                .filter(|b| l.span.contains(b.span) && m.text(b.left) == name)
                .map(|b| b.span.start)
                .min()
                .unwrap_or(a.span.start);
            bound_before && read_before(m, body, name, first_bind)
        })
}

/// Is identifier `name` read in `body` before byte `limit`, outside the value of an assignment
/// to itself?
fn read_before(
    m: &crate::analysis::facts::Model<'_>,
    body: tree_sitter::Node<'_>,
    name: &str,
    limit: usize,
) -> bool {
    let mut stack = vec![body];
    while let Some(n) = stack.pop() {
        if n.start_byte() >= limit {
            continue;
        }
        if n.node_kind() == "identifier" && m.node_text(n) == name {
            let own_accumulation = std::iter::successors(n.parent(), |p| p.parent())
                .take_while(|p| p.id() != body.id())
                .find(|p| p.node_kind() == "assignment")
                .and_then(|p| p.child_by_field_name("left"))
                .is_some_and(|left| m.node_text(left) == name);
            let is_target = n.parent().is_some_and(|p| {
                p.node_kind() == "assignment" && p.child_by_field_name("left") == Some(n)
            });
            if !own_accumulation && !is_target {
                return true;
            }
        }
        let mut c = n.walk();
        stack.extend(n.named_children(&mut c));
    }
    false
}

#[cfg(test)]
mod tests {
    fn ea602_lines(src: &str) -> Vec<usize> {
        crate::analysis::analyze_file("t.py", src.as_bytes(), &crate::config::Rules::default())
            .findings
            .iter()
            .filter(|f| f.rule == "EA602")
            .map(|f| f.line)
            .collect()
    }

    const HEAD: &str = "import glob, os\n\ndef process(p):\n    return p\n\nfiles = glob.glob('*.txt')\nout = []\n";

    #[test]
    fn reading_every_file_is_flagged() {
        let src = format!("{HEAD}for f in files:\n    out.append(open(f).read())\n");
        assert_eq!(ea602_lines(&src), vec![8]);
    }

    // the CPython standard library's false positives (BENCHMARKS.md, `analyze`: speed)
    #[test]
    fn writing_files_handing_out_handles_and_early_exit_are_not() {
        for body in [
            // test_tempfile.py: creates files
            "for f in files:\n    with open(os.path.join('d', f), 'wb') as fh:\n        fh.write(b'x')\n    out.append(f)\n",
            // tkinter/filedialog.py: returns open handles
            "def ask(mode):\n    handles = []\n    for f in files:\n        handles.append(open(f, mode))\n    return handles\n",
            // test_bz2.py: reads until it has enough
            "size = 0\nfor f in files:\n    size += len(open(f, 'rb').read())\n    if size > 10:\n        break\n",
        ] {
            assert_eq!(
                ea602_lines(&format!("{HEAD}{body}")),
                Vec::<usize>::new(),
                "{body}"
            );
        }
    }
}
