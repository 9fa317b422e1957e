//! The public analysis API: name resolution, constant propagation, suppression, configuration,
//! bad input, fixes and the demand model.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

use efficiency_audit::analysis::facts::Val;
use efficiency_audit::analysis::model::{Applicability, Category, CodeKind};
use efficiency_audit::analysis::{FileAnalysis, analyze_file, apply_fixes, estimate_demand};
use efficiency_audit::ceilings::model::Ceilings;
use efficiency_audit::config::Rules;
use efficiency_audit::verdict::{Basis, VerdictValue, decide};

fn run(src: &str) -> FileAnalysis {
    analyze_file("t.py", src.as_bytes(), &Rules::default())
}

fn rules_of(a: &FileAnalysis) -> Vec<String> {
    a.findings.iter().map(|f| f.rule.clone()).collect()
}

fn h100() -> Ceilings {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/theoretical_limits_h100.yaml"
    ))
    .expect("fixture");
    Ceilings::from_yaml(&text).expect("valid ceilings")
}

#[test]
fn aliases_resolve_to_qualified_names() {
    let a = run("from torch.utils.data import DataLoader as DL\nloader = DL(ds, batch_size=8)\n");
    assert_eq!(rules_of(&a), ["EA101"]);
    assert!(
        a.facts
            .imports
            .contains(&("DL".to_string(), "torch.utils.data.DataLoader".to_string()))
    );
    let b = run("import torch as T\nloader = T.utils.data.DataLoader(ds)\n");
    assert_eq!(rules_of(&b), ["EA101"]);
    // a DataLoader from another library is not torch's
    let c = run("from mylib import DataLoader\nloader = DataLoader(ds)\n");
    assert!(c.findings.is_empty());
}

#[test]
fn unknown_values_stay_silent() {
    let src = "import argparse\nfrom torch.utils.data import DataLoader\np = argparse.ArgumentParser()\np.add_argument('--workers', type=int)\nargs = p.parse_args()\nloader = DataLoader(ds, num_workers=args.workers)\n";
    let a = run(src);
    assert!(a.findings.is_empty(), "{:?}", a.findings);
    assert_eq!(a.facts.loaders[0].num_workers, Val::Unknown);
}

#[test]
fn constants_propagate_through_argparse_assignments_and_dicts() {
    let argparse = "import argparse\nfrom torch.utils.data import DataLoader\np = argparse.ArgumentParser()\np.add_argument('--num-workers', type=int, default=0)\nargs = p.parse_args()\nloader = DataLoader(ds, num_workers=args.num_workers)\n";
    let a = run(argparse);
    assert_eq!(a.facts.loaders[0].num_workers, Val::Int(0));
    assert_eq!(rules_of(&a), ["EA101"]);
    let module = "from torch.utils.data import DataLoader\nWORKERS = 6\nBS = 32\nloader = DataLoader(ds, BS, num_workers=WORKERS)\n";
    let b = run(module);
    assert_eq!(b.facts.loaders[0].num_workers, Val::Int(6));
    assert_eq!(b.facts.loaders[0].batch_size, Val::Int(32));
    assert!(b.findings.is_empty());
    let dict = "from torch.utils.data import DataLoader\nkw = {'num_workers': 4, 'pin_memory': True}\nloader = DataLoader(ds, **kw)\n";
    let c = run(dict);
    assert_eq!(c.facts.loaders[0].num_workers, Val::Int(4));
    assert_eq!(c.facts.loaders[0].pin_memory, Val::Bool(true));
    assert_eq!(c.facts.loaders[0].persistent_workers, Val::Absent);
    let unknown_dict =
        "from torch.utils.data import DataLoader\nloader = DataLoader(ds, **cfg.loader)\n";
    assert_eq!(run(unknown_dict).facts.loaders[0].num_workers, Val::Unknown);
}

#[test]
fn suppression_comments_and_config() {
    let base = "from torch.utils.data import DataLoader\nloader = DataLoader(ds)";
    for comment in [
        "  # efficiency-audit: ignore[EA101]",
        "  # efficiency-audit: ignore[dataloader_workers]",
        "  # efficiency-audit: ignore",
    ] {
        let a = run(&format!("{base}{comment}\n"));
        assert!(a.findings.is_empty(), "{comment}: {:?}", a.findings);
    }
    assert_eq!(
        rules_of(&run(&format!(
            "{base}  # efficiency-audit: ignore[EA999]\n"
        ))),
        ["EA101"]
    );
    let ignore = Rules {
        select: vec![],
        ignore: vec!["dataloader_workers".to_string()],
    };
    assert!(
        analyze_file("t.py", base.as_bytes(), &ignore)
            .findings
            .is_empty()
    );
    let select = Rules {
        select: vec!["EA102".to_string()],
        ignore: vec![],
    };
    assert!(
        analyze_file("t.py", base.as_bytes(), &select)
            .findings
            .is_empty()
    );
}

#[test]
fn bad_input_gives_warnings_never_panics() {
    for (src, needle) in [
        (&b""[..], "empty"),
        (&b"\x00\x01\x02binary"[..], "binary"),
        (&b"x = '\xff\xfe'\n"[..], "UTF-8"),
    ] {
        let a = analyze_file("bad.py", src, &Rules::default());
        assert!(a.findings.is_empty());
        assert!(
            a.warnings.iter().any(|w| w.contains(needle)),
            "{:?}",
            a.warnings
        );
    }
    let a = run(
        "from torch.utils.data import DataLoader\ndef f(:\n    pass\nloader = DataLoader(ds)\n",
    );
    assert!(
        a.warnings
            .iter()
            .any(|w| w.contains("syntax error") && w.contains("t.py:2:")),
        "{:?}",
        a.warnings
    );
    assert_eq!(rules_of(&a), ["EA101"], "what parses is still analysed");
    // deep nesting: no recursion in the walk
    let deep = format!("x = {}1{}\n", "(".repeat(20_000), ")".repeat(20_000));
    let _ = run(&deep);
    let mut nested = String::new();
    for i in 0..400 {
        nested.push_str(&" ".repeat(i));
        nested.push_str("for x in loader:\n");
    }
    nested.push_str(&" ".repeat(400));
    nested.push_str("loss.item()\n");
    let _ = run(&nested);
    // pseudo-random bytes
    let mut state = 0x2545_f491_4f6c_dd1du64;
    for len in [1usize, 7, 64, 512, 4096] {
        let bytes: Vec<u8> = (0..len)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 24) as u8
            })
            .collect();
        let _ = analyze_file("r.py", &bytes, &Rules::default());
        let text: String = bytes
            .iter()
            .map(|b| char::from(b" ()[]:.\n\tforinwhiledefclass=#'\"x1"[usize::from(*b) % 33]))
            .collect();
        let _ = run(&text);
    }
}

#[test]
fn classifies_files_and_loops() {
    let train = "import torch\nfor x, y in loader:\n    loss = model(x)\n    loss.backward()\n    optimizer.step()\n";
    let a = run(train);
    assert_eq!(a.kind, CodeKind::Train);
    assert_eq!(a.facts.loops[0].kind, "step");
    assert!(a.facts.loops[0].train);
    let infer = "import torch\nmodel.eval()\nwith torch.no_grad():\n    for x in loader:\n        out = model(x)\n";
    assert_eq!(run(infer).kind, CodeKind::Infer);
    let data = "import pandas as pd\nimport glob\ndf = pd.read_csv('a.csv')\nfiles = glob.glob('*.csv')\ndf.to_parquet('b')\n";
    assert_eq!(run(data).kind, CodeKind::Data);
    let epoch = "import torch\nfor epoch in range(3):\n    for x in train_loader:\n        model(x).sum().backward()\n";
    let e = run(epoch);
    assert_eq!(
        e.facts.loops.iter().map(|l| l.kind).collect::<Vec<_>>(),
        ["epoch", "step"]
    );
}

#[test]
fn guards_silence_per_step_rules() {
    let src = "import torch\ndevice = torch.device('cuda')\nfor step, (x, y) in enumerate(train_loader):\n    loss = model(x)\n    loss.backward()\n    if step % 100 == 0:\n        print(loss.item())\n";
    let a = run(src);
    assert!(
        a.findings
            .iter()
            .all(|f| f.category != Category::HostSync && f.category != Category::LoggingInLoop),
        "{:?}",
        a.findings
    );
}

fn fixed(src: &str) -> String {
    let a = run(src);
    let fixes: Vec<_> = a.findings.iter().filter_map(|f| f.fix.as_ref()).collect();
    apply_fixes(src, &fixes).expect("fixes apply")
}

#[test]
fn dataloader_fix_adds_keywords_with_or_without_existing_ones() {
    assert_eq!(
        fixed("from torch.utils.data import DataLoader\nl = DataLoader(ds, batch_size=64)\n"),
        "from torch.utils.data import DataLoader\nl = DataLoader(ds, batch_size=64, num_workers=4, persistent_workers=True)\n"
    );
    assert_eq!(
        fixed("from torch.utils.data import DataLoader\nl = DataLoader()\n"),
        "from torch.utils.data import DataLoader\nl = DataLoader(num_workers=4, persistent_workers=True)\n"
    );
    assert_eq!(
        fixed(
            "from torch.utils.data import DataLoader\nl = DataLoader(\n    ds,\n    batch_size=64,\n)\n"
        ),
        "from torch.utils.data import DataLoader\nl = DataLoader(\n    ds,\n    batch_size=64, num_workers=4, persistent_workers=True,\n)\n"
    );
    assert_eq!(
        fixed("from torch.utils.data import DataLoader\nl = DataLoader(ds, num_workers=0)\n"),
        "from torch.utils.data import DataLoader\nl = DataLoader(ds, num_workers=4)\n"
    );
}

#[test]
fn no_grad_fix_wraps_the_loop_with_its_indentation() {
    let src = "import torch\n\ndef evaluate(model, loader, device):\n    model.eval()\n    for x, y in loader:\n        out = model(x.to(device))\n\n        print(out)\n    return out\n";
    assert_eq!(
        fixed(src),
        "import torch\n\ndef evaluate(model, loader, device):\n    model.eval()\n    with torch.no_grad():\n        for x, y in loader:\n            out = model(x.to(device))\n\n            print(out)\n    return out\n"
    );
}

#[test]
fn device_and_non_blocking_fixes() {
    // built every step: in a loop over batches
    let src = "import torch\nfor x in loader:\n    m = torch.zeros(4, 4).to(device)\n    r = torch.randn(3).cuda()\n";
    let a = run(src);
    assert_eq!(
        a.findings[1].fix.as_ref().map(|f| f.applicability),
        Some(Applicability::Numerics)
    );
    assert_eq!(
        fixed(src),
        "import torch\nfor x in loader:\n    m = torch.zeros(4, 4, device=device)\n    r = torch.randn(3, device=\"cuda\")\n"
    );
    let pinned = "from torch.utils.data import DataLoader\nloader = DataLoader(ds, num_workers=2, pin_memory=True)\nfor x, y in loader:\n    x = x.to(device)\n    model(x).sum().backward()\n";
    assert!(fixed(pinned).contains("x = x.to(device, non_blocking=True)"));
}

#[test]
fn every_corpus_fix_keeps_the_file_parsing() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/corpus");
    for entry in std::fs::read_dir(dir).expect("corpus") {
        let path = entry.expect("entry").path();
        let src = std::fs::read_to_string(&path).expect("read");
        let a = run(&src);
        let fixes: Vec<_> = a.findings.iter().filter_map(|f| f.fix.as_ref()).collect();
        let out = apply_fixes(&src, &fixes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let again = run(&out);
        assert!(
            again.warnings.is_empty(),
            "{}: {:?}",
            path.display(),
            again.warnings
        );
        for f in &a.findings {
            if f.fix.is_some() && f.category != Category::DataloaderPinMemory {
                assert!(
                    !again
                        .findings
                        .iter()
                        .any(|g| g.rule == f.rule && g.message == f.message && g.line == f.line),
                    "{}: fix of {} at line {} did not remove it",
                    path.display(),
                    f.rule,
                    f.line
                );
            }
        }
    }
}

#[test]
fn demand_model_follows_the_design_examples() {
    let src = "import torch\nfrom torch.utils.data import DataLoader\ndevice = torch.device('cuda')\nloader = DataLoader(ds, batch_size=64)\nfor epoch in range(3):\n    for x, y in loader:\n        loss = model(x.to(device))\n        loss.backward()\n        optimizer.step()\n";
    let a = run(src);
    assert_eq!(a.hot_loops.len(), 1);
    let ceilings = h100();
    let d = estimate_demand(std::slice::from_ref(&a), Some(&ceilings), 4);
    let cpu = d.saturation.cpu.value.expect("cpu known");
    assert!((cpu - 1.0 / 16.0).abs() < 1e-9, "{cpu}");
    assert!(
        d.saturation
            .cpu
            .reason
            .contains("main-process loader: 1 of 16 CPUs → ≤ 6 %"),
        "{}",
        d.saturation.cpu.reason
    );
    let gpu = d.saturation.gpu.value.expect("gpu known");
    assert!(
        (0.06..0.08).contains(&gpu),
        "fp32 without TF32 on an H100 is ≈7 %, got {gpu}"
    );
    assert!(d.saturation.gpu.reason.contains("main-process loading"));
    let v = decide(&d.saturation, Basis::Estimated, 0.7);
    assert_eq!(v.value, VerdictValue::Red);

    // without ceilings: the given CPU count and a note; GPU unknown
    let d = estimate_demand(std::slice::from_ref(&a), None, 8);
    assert_eq!(d.saturation.cpu.value, Some(1.0 / 8.0));
    assert_eq!(d.saturation.gpu.value, None);
    assert!(
        d.notes
            .iter()
            .any(|n| n.contains("no --ceilings given: using this machine's 8 logical CPUs"))
    );

    // bf16 autocast, 15 workers: GPU can be saturated, CPU 16/16
    let good = "import torch\nfrom torch.utils.data import DataLoader\ndevice = torch.device('cuda')\nloader = DataLoader(ds, batch_size=64, num_workers=15)\nfor x, y in loader:\n    with torch.autocast('cuda', dtype=torch.bfloat16):\n        loss = model(x.to(device))\n    loss.backward()\n";
    let g = run(good);
    let d = estimate_demand(std::slice::from_ref(&g), Some(&ceilings), 4);
    assert_eq!(d.saturation.gpu.value, Some(1.0));
    assert_eq!(d.saturation.cpu.value, Some(1.0));
    assert_eq!(
        decide(&d.saturation, Basis::Estimated, 0.7).value,
        VerdictValue::Green
    );
}

#[test]
fn serial_reader_io_bound_and_cpu_only_code() {
    let src = "import glob\nimport json\nout = []\nfor f in glob.glob('*.json'):\n    out.append(json.load(open(f)))\n";
    let a = run(src);
    let d = estimate_demand(std::slice::from_ref(&a), Some(&h100()), 4);
    let io = d.saturation.io.value.expect("io known");
    assert!((io - 1450.0 / 5210.0).abs() < 1e-9);
    assert_eq!(d.saturation.gpu.value, None);
    assert!(d.saturation.gpu.reason.contains("does not use CUDA"));
    let none = estimate_demand(&[], None, 4);
    assert!(none.notes.iter().any(|n| n.contains("no hot loop")));
}

#[test]
fn mutated_corpus_files_never_panic() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/corpus");
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for entry in std::fs::read_dir(dir).expect("corpus") {
        let src = std::fs::read(entry.expect("entry").path()).expect("read");
        for _ in 0..12 {
            let mut b = src.clone();
            match next() % 4 {
                0 => {
                    let cut = (next() as usize) % (b.len() + 1);
                    b.truncate(cut);
                }
                1 => {
                    for _ in 0..8 {
                        let i = (next() as usize) % b.len().max(1);
                        if let Some(x) = b.get_mut(i) {
                            *x = (next() & 0xff) as u8;
                        }
                    }
                }
                2 => {
                    let i = (next() as usize) % (b.len() + 1);
                    let tokens: [&[u8]; 6] = [
                        b"(",
                        b":\n    ",
                        b"\"\"\"",
                        b"for x in loader:\n",
                        b"\t",
                        b"\xc3",
                    ];
                    let t = tokens[(next() % 6) as usize];
                    b.splice(i..i, t.iter().copied());
                }
                _ => {
                    let a = (next() as usize) % (b.len() + 1);
                    let c = (next() as usize) % (b.len() + 1);
                    let (lo, hi) = (a.min(c), a.max(c));
                    b.drain(lo..hi);
                }
            }
            let a = analyze_file("m.py", &b, &Rules::default());
            let fixes: Vec<_> = a.findings.iter().filter_map(|f| f.fix.as_ref()).collect();
            if let Ok(text) = std::str::from_utf8(&b) {
                let _ = apply_fixes(text, &fixes);
            }
            let _ = estimate_demand(std::slice::from_ref(&a), None, 4);
        }
    }
}

#[test]
fn no_grad_fix_keeps_tab_indentation_and_imports_in_try_blocks_are_skipped() {
    let src = "import torch\nmodel.cuda()\nmodel.eval()\nfor x in loader:\n\tout = model(x)\n";
    let a = analyze_file("t.py", src.as_bytes(), &Rules::default());
    let fixes: Vec<_> = a
        .findings
        .iter()
        .filter(|f| f.rule == "EA401")
        .filter_map(|f| f.fix.as_ref())
        .collect();
    assert_eq!(
        apply_fixes(src, &fixes).expect("applies"),
        "import torch\nmodel.cuda()\nmodel.eval()\nwith torch.no_grad():\n\tfor x in loader:\n\t\tout = model(x)\n"
    );
    let src = "import torch\ntry:\n    import numpy as np\nexcept ImportError:\n    np = None\ndevice = torch.device('cuda')\nmodel = GPT(cfg).to(device)\nmodel.eval()\nwith torch.no_grad():\n    out = model(x)\n";
    let out = fixed(src);
    assert!(
        out.starts_with("import torch\ntorch.set_float32_matmul_precision(\"high\")\ntry:"),
        "{out}"
    );
}

#[test]
fn hf_training_arguments_from_a_dict_stay_unknown() {
    let src = "from transformers import Trainer, TrainingArguments\nargs = TrainingArguments(**cfg)\ntrainer = Trainer(model=model, args=args)\ntrainer.train()\n";
    assert!(run(src).findings.is_empty(), "{:?}", run(src).findings);
    let src = "from transformers import Trainer, TrainingArguments\nargs = TrainingArguments('out', bf16=True, tf32=True, torch_compile=True, dataloader_num_workers=8)\ntrainer = Trainer(model=model, args=args)\ntrainer.train()\n";
    assert!(run(src).findings.is_empty(), "{:?}", run(src).findings);
    let src = "from transformers import Trainer, TrainingArguments\nargs = TrainingArguments('out')\ntrainer = Trainer(model=model, args=args)\ntrainer.train()\n";
    let mut cats: Vec<&str> = run(src)
        .findings
        .iter()
        .map(|f| f.category.as_str())
        .collect::<Vec<_>>()
        .into_iter()
        .collect();
    cats.sort_unstable();
    assert_eq!(
        cats,
        ["dataloader_workers", "no_amp", "no_compile", "no_tf32"]
    );
}

#[test]
fn device_detection() {
    use efficiency_audit::analysis::facts::Device;
    let dev = |src: &str| run(src).facts.device;
    assert_eq!(
        dev(
            "import torch\ndevice = 'cuda' if torch.cuda.is_available() else 'cpu'\nx = torch.zeros(3).to(device)\n"
        ),
        Device::Cuda
    );
    // a choice nobody reads, and `is_available()` without a move, put nothing on the GPU
    assert_eq!(
        dev("import torch\ndevice = 'cuda' if torch.cuda.is_available() else 'cpu'\n"),
        Device::Unknown
    );
    assert_eq!(
        dev("import torch\nprint(torch.cuda.is_available())\ndevice = 'cpu'\n"),
        Device::Cpu
    );
    assert_eq!(
        dev("import torch\nassert torch.cuda.is_available()\n"),
        Device::Unknown
    );
    assert_eq!(
        dev("import torch\nassert torch.cuda.is_available()\nmodel = net.to(device)\n"),
        Device::Cuda
    );
    assert_eq!(
        dev("import torch\nx = torch.zeros(3).cuda()\n"),
        Device::Cuda
    );
    assert_eq!(
        dev("import torch\ndev = torch.device('mps')\n"),
        Device::Mps
    );
    assert_eq!(dev("import torch\nx = torch.zeros(3)\n"), Device::Unknown);
    assert_eq!(
        dev("import torch\ndef f(x, device='cuda:0'):\n    return x.to(device)\n"),
        Device::Cuda
    );
}

#[test]
fn only_torch_compile_counts_as_compiling_the_model() {
    let train = |extra: &str| {
        format!(
            "import re\nimport torch\n{extra}\nmodel = Net().cuda()\nopt = torch.optim.AdamW(model.parameters())\nfor x, y in loader:\n    loss = model(x.cuda()).sum()\n    loss.backward()\n    opt.step()\n"
        )
    };
    let has_ea203 = |src: String| rules_of(&run(&src)).iter().any(|r| r == "EA203");
    // the builtin `compile(src, ...)` and `re.compile` compile no model
    assert!(has_ea203(train("pattern = re.compile(r'x+')")));
    assert!(has_ea203(train("code = compile('1 + 1', 'f', 'eval')")));
    // `torch.compile` and a model's own `.compile()` do
    assert!(!has_ea203(train("model = torch.compile(Net())")));
    assert!(!has_ea203(train("model = Net()\nmodel.compile()")));
}

#[test]
fn words_in_strings_and_comments_make_no_record_loop() {
    let names = "for name in ['read', 'readline', 'readlines']:\n    run(name)\n";
    assert!(run(names).facts.loops.is_empty());
    let commented = "def f():\n    candidates = [\n        a,  # walk up the tree\n        b,\n    ]\n    for c in candidates:\n        g(c)\n";
    assert!(run(commented).facts.loops.is_empty());
    let listed =
        "import os\ndef f(d):\n    names = os.listdir(d)\n    for n in names:\n        g(n)\n";
    assert_eq!(run(listed).facts.loops[0].kind, "record");
}

#[test]
fn read_update_modes_and_chained_indices_are_seen() {
    // `open(p, "r+b")` reads the file: per-file work
    let resize = "import os\nfrom PIL import Image\ndef resize_images(src, dst):\n    images = os.listdir(src)\n    for i, image in enumerate(images):\n        with open(os.path.join(src, image), 'r+b') as f:\n            with Image.open(f) as img:\n                img.save(os.path.join(dst, image), img.format)\n";
    assert!(rules_of(&run(resize)).iter().any(|r| r == "EA602"));
    // `onehot[i][labels[i]] = 1` writes array elements one by one, like `onehot[i, labels[i]]`
    let onehot = "import torch\ndef f(labels, n):\n    onehot = torch.zeros((len(labels), n))\n    for i in range(len(labels)):\n        onehot[i][labels[i]] = 1\n    return onehot\n";
    assert!(rules_of(&run(onehot)).iter().any(|r| r == "EA603"));
    // a list of lists is not an array
    let grid = "import numpy as np\ndef f(n):\n    grid = [[0] * n for _ in range(n)]\n    for i in range(n):\n        grid[i][0] = 1\n    return grid\n";
    assert!(run(grid).findings.is_empty());
}

#[test]
fn only_os_walk_walks_a_directory() {
    let kinds =
        |src: &str| -> Vec<&'static str> { run(src).facts.loops.iter().map(|l| l.kind).collect() };
    assert!(kinds("import ast\nfor node in ast.walk(tree):\n    f(node)\n").is_empty());
    assert!(kinds("for part in message.walk():\n    f(part)\n").is_empty());
    assert_eq!(
        kinds("import os\nfor root, dirs, names in os.walk(d):\n    f(names)\n"),
        ["record"]
    );
    assert_eq!(
        kinds("import os as o\nfor root, dirs, names in o.walk(d):\n    f(names)\n"),
        ["record"]
    );
    assert_eq!(
        kinds(
            "from os import walk\ntree = walk(d)\nfor root, dirs, names in tree:\n    f(names)\n"
        ),
        ["record"]
    );
}
