//! What runs as shipped, and how often: branches that run once, switches that are off by
//! default, and the facts (precision, timing, legacy spellings) that depend on them.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

mod common;

use common::analyse as run;
use efficiency_audit::analysis::FileAnalysis;

/// The rules that fire on 1-based line `line`.
fn at(a: &FileAnalysis, line: usize) -> Vec<String> {
    a.findings
        .iter()
        .filter(|f| f.line == line)
        .map(|f| f.rule.clone())
        .collect()
}

fn fires(a: &FileAnalysis, rule: &str) -> bool {
    a.findings.iter().any(|f| f.rule == rule)
}

/// A CUDA training script: `prelude` at module level before the loop, `body` (indented by
/// four spaces already) at the end of the step loop. The body starts on line 11 + the
/// prelude's line count.
fn train(prelude: &str, body: &str) -> String {
    format!(
        "import os\nimport sys\nimport torch\ndevice = torch.device('cuda')\nmodel = Net().to(device)\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n{prelude}for step, (x, y) in enumerate(train_loader):\n    x = x.to(device)\n    loss = model(x)\n    loss.backward()\n    optimizer.step()\n{body}"
    )
}

/// Logging, a host sync and file I/O: what a per-step body may do.
const PER_STEP: &str = "        print(loss)\n        print(loss.item())\n        with open('log.txt', 'a') as f:\n            f.write('x')\n";

fn per_step_rules(a: &FileAnalysis) -> Vec<&str> {
    ["EA301", "EA501", "EA504"]
        .into_iter()
        .filter(|r| fires(a, r))
        .collect()
}

#[test]
fn a_branch_that_ends_the_program_runs_once() {
    let control = run(&train("", &format!("    if bad:\n{PER_STEP}")));
    assert_eq!(per_step_rules(&control), ["EA301", "EA501", "EA504"]);
    for exit in [
        "sys.exit(1)",
        "exit(1)",
        "quit()",
        "os._exit(1)",
        "raise ValueError()",
    ] {
        let a = run(&train(
            "",
            &format!("    if bad:\n{PER_STEP}        {exit}\n"),
        ));
        assert!(per_step_rules(&a).is_empty(), "{exit}: {:?}", a.findings);
    }
}

#[test]
fn a_lazy_init_branch_runs_once() {
    let lazy = format!("    if feats is None:\n        feats = torch.zeros(10)\n{PER_STEP}");
    assert!(per_step_rules(&run(&train("feats = None\n", &lazy))).is_empty());
    // also as one conjunct of the test
    let lazy =
        format!("    if rank == 0 and feats is None:\n        feats = torch.zeros(10)\n{PER_STEP}");
    assert!(per_step_rules(&run(&train("feats = None\n", &lazy))).is_empty());
    // a body that does not set what it tests runs every time the test holds
    let not_lazy = format!("    if feats is None:\n        other = torch.zeros(10)\n{PER_STEP}");
    assert_eq!(
        per_step_rules(&run(&train("feats = None\n", &not_lazy))),
        ["EA301", "EA501", "EA504"]
    );
}

#[test]
fn a_module_constant_that_is_off_switches_its_branch_off() {
    let body = format!("    if profile:\n{PER_STEP}");
    for off in ["profile = False\n", "profile = None\n", "profile = 0\n"] {
        let a = run(&train(off, &body));
        assert!(per_step_rules(&a).is_empty(), "{off}: {:?}", a.findings);
    }
    for on in [
        "profile = True\n",
        // rebound to something the engine cannot read
        "profile = False\nprofile = os.environ.get('PROFILE')\n",
        // never bound in the file
        "",
    ] {
        let a = run(&train(on, &body));
        assert_eq!(per_step_rules(&a), ["EA301", "EA501", "EA504"], "{on}");
    }
    // the else of a constant that is on never runs; the else of one that is off does
    let body = format!("    if real_data:\n        pass\n    else:\n{PER_STEP}");
    assert!(per_step_rules(&run(&train("real_data = True\n", &body))).is_empty());
    assert_eq!(
        per_step_rules(&run(&train("real_data = False\n", &body))),
        ["EA301", "EA501", "EA504"]
    );
}

/// `def run(loader, save=False):` with a step loop whose body is `body`, then `calls`.
fn in_function(params: &str, body: &str, calls: &str) -> String {
    format!(
        "import argparse\nimport torch\ndevice = torch.device('cuda')\nmodel = Net().to(device)\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n\ndef run(loader, {params}):\n    for step, (x, y) in enumerate(loader):\n        x = x.to(device)\n        loss = model(x)\n        loss.backward()\n        optimizer.step()\n{body}\n{calls}"
    )
}

#[test]
fn a_parameter_that_defaults_to_off_switches_its_branch_off() {
    let body = "        if save:\n            print(loss.item())\n            with open('log.txt', 'a') as f:\n                f.write('x')\n";
    let silent = |params: &str, calls: &str| {
        let a = run(&in_function(params, body, calls));
        per_step_rules(&a).is_empty()
    };
    assert!(silent("save=False", ""));
    assert!(silent("save=None", "run(train_loader)\n"));
    // `run(**vars(opt))` passes the argparse default of the same name
    assert!(silent(
        "save=False",
        "parser = argparse.ArgumentParser()\nparser.add_argument('--save', action='store_true')\nopt = parser.parse_args()\nrun(**vars(opt))\n"
    ));
    // a call that switches it on, a default that is on, a parameter rebound in the function
    assert!(!silent("save=False", "run(train_loader, save=True)\n"));
    assert!(!silent("save=False", "run(train_loader, True)\n"));
    assert!(!silent("save=True", ""));
    assert!(!silent("save", ""));
    assert!(!silent(
        "save=False",
        "parser = argparse.ArgumentParser()\nparser.add_argument('--save', action='store_false')\nopt = parser.parse_args()\nrun(**vars(opt))\n"
    ));
    let rebound = format!("        save = step > 3\n{body}");
    assert!(!per_step_rules(&run(&in_function("save=False", &rebound, ""))).is_empty());
}

#[test]
fn the_else_of_a_parameter_that_defaults_to_on_does_not_run() {
    let body =
        "        if use_cuda:\n            pass\n        else:\n            feats = loss.cpu()\n";
    let a = run(&in_function("use_cuda=True", body, ""));
    assert!(!fires(&a, "EA301"), "{:?}", a.findings);
    let a = run(&in_function("use_cuda=False", body, ""));
    assert!(fires(&a, "EA301"), "{:?}", a.findings);
}

#[test]
fn half_precision_under_an_off_flag_leaves_the_model_in_fp32() {
    let src = |flag: &str| {
        format!(
            "import argparse\nimport torch\nparser = argparse.ArgumentParser()\nparser.add_argument('--fp16', {flag})\nargs = parser.parse_args()\nmodel = GPT()\nif args.fp16:\n    model = model.cuda().half()\nelse:\n    model = model.cuda()\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\nfor x, y in train_loader:\n    x = x.cuda()\n    loss = model(x)\n    loss.backward()\n    optimizer.step()\n"
        )
    };
    let off = run(&src("action='store_true'"));
    assert!(fires(&off, "EA201"), "{:?}", off.findings);
    // the file-level rules anchor on the placement that runs as shipped
    assert_eq!(at(&off, 10), ["EA202", "EA203"], "{:?}", off.findings);
    let on = run(&src("action='store_true', default=True"));
    assert!(!fires(&on, "EA201"), "{:?}", on.findings);
}

#[test]
fn a_synchronize_that_times_the_step_is_measurement() {
    for clock in ["time.time()", "time.perf_counter()", "perf_counter()"] {
        let body = format!(
            "    if torch.cuda.is_available():\n        torch.cuda.synchronize()\n    t = {clock}\n"
        );
        let a = run(&train(
            "import time\nfrom time import perf_counter\n",
            &body,
        ));
        assert!(!fires(&a, "EA302"), "{clock}: {:?}", a.findings);
    }
    // a synchronize not followed by a clock read stalls every step
    let body = "    torch.cuda.synchronize()\n    ema.update(model)\n    t = time.time()\n";
    let a = run(&train("import time\n", body));
    assert!(fires(&a, "EA302"), "{:?}", a.findings);
}

#[test]
fn legacy_spellings_of_non_blocking_and_no_grad() {
    let src = |copy: &str, wrap: &str| {
        format!(
            "import torch\nfrom torch.autograd import Variable\nloader = torch.utils.data.DataLoader(ds, batch_size=64, num_workers=4, pin_memory=True, persistent_workers=True)\nmodel = Net().cuda()\n\ndef validate(loader, model):\n    model.eval()\n    for x, y in loader:\n        y = y.cuda({copy})\n        x = {wrap}\n        out = model(x)\n"
        )
    };
    let modern = run(&src("", "Variable(x)"));
    assert!(fires(&modern, "EA303"), "{:?}", modern.findings);
    assert!(fires(&modern, "EA401"), "{:?}", modern.findings);
    // `async=True` is PyTorch 0.3's `non_blocking=True`; `volatile=True` was its no-grad mode,
    // which has done nothing since 0.4: the evaluation still records the graph
    let legacy = run(&src("async=True", "Variable(x, volatile=True)"));
    assert!(!fires(&legacy, "EA303"), "{:?}", legacy.findings);
    assert!(fires(&legacy, "EA401"), "{:?}", legacy.findings);
}

#[test]
fn a_comparison_with_a_default_that_fails_is_a_branch_that_does_not_run() {
    let src = "\
import argparse
import pandas as pd
parser = argparse.ArgumentParser()
parser.add_argument('--image_data', default='train_with_label.csv')
parser.add_argument('--mode', default='train')
args = parser.parse_args()
df = pd.read_csv(args.image_data)
if 'info' in args.image_data:
    df['c'] = df.apply(lambda x: f(x['a']), axis=1)
if args.mode == 'eval':
    df['d'] = df.apply(lambda x: f(x['a']), axis=1)
if args.mode != 'eval':
    df['e'] = df.apply(lambda x: f(x['a']), axis=1)
if args.mode == some_mode:
    df['g'] = df.apply(lambda x: f(x['a']), axis=1)
";
    // only the branches that run as shipped (13) or cannot be told (15)
    assert_eq!(
        common::rule_lines(&common::analyse(src), "EA601"),
        vec![13, 15]
    );
}

#[test]
fn a_function_the_script_never_calls_gets_no_finding() {
    let src = "\
import torch
from torch.utils.data import DataLoader
device = torch.device('cuda')

def train(model, data):
    loader = DataLoader(data, batch_size=64)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        loss = torch.nn.functional.cross_entropy(model(x.to(device)), y.to(device))
        loss.backward()
        opt.step()
        print(loss.item())

def classify(model, data):
    loader = DataLoader(data, batch_size=64)
    with torch.no_grad():
        for x in loader:
            print(model(x.to(device)).argmax(1).tolist())

def main():
    model = torch.load('model.pt').to(device)
    # train(model, train_set)
    classify(model, test_set)

if __name__ == '__main__':
    main()
";
    let a = run(src);
    let lines: Vec<usize> = a.findings.iter().map(|f| f.line).collect();
    assert!(
        lines.iter().all(|&l| !(5..=12).contains(&l)),
        "{:?}",
        a.findings
    );
    assert!(
        lines.iter().any(|&l| (14..=18).contains(&l)),
        "{:?}",
        a.findings
    );
    // the same functions in a module other files import: every one may run
    let library = src.replace("if __name__ == '__main__':\n    main()\n", "");
    let a = run(&library);
    assert!(
        a.findings.iter().any(|f| (5..=12).contains(&f.line)),
        "{:?}",
        a.findings
    );
}

#[test]
fn an_empty_collection_filled_on_the_first_pass_is_a_lazy_init() {
    let src = |cond: &str| {
        format!(
            "import numpy as np\nimport torch\ndevice = torch.device('cuda')\nmodel = Net().to(device)\ny_true = np.array([])\nfor bx, by in loader:\n    out = model(bx.to(device))\n    if {cond}:\n        y_true = out.cpu().numpy()\n    else:\n        y_true = np.hstack((y_true, out.cpu().numpy()))\n"
        )
    };
    for cond in ["len(y_true) == 0", "not y_true"] {
        // the first branch runs once; the `else` every step
        assert_eq!(
            common::rule_lines(&run(&src(cond)), "EA301"),
            vec![11],
            "{cond}"
        );
    }
    // a test on something the branch does not fill is not a first pass
    assert_eq!(
        common::rule_lines(&run(&src("len(bx) == 0")), "EA301"),
        vec![9, 11]
    );
}

#[test]
fn a_branch_that_fills_a_short_list_runs_a_few_times() {
    let src = |cond: &str| {
        format!(
            "import torch\ndevice = torch.device('cuda')\nmodel = Net().to(device)\nmodel.eval()\nexamples = []\nfor x, y in loader:\n    out = model(x.to(device))\n    if {cond}:\n        examples.append(out.squeeze().detach().cpu().numpy())\n"
        )
    };
    assert_eq!(
        common::rule_lines(&run(&src("len(examples) < 5")), "EA301"),
        Vec::<usize>::new()
    );
    // a long list, or a test of something else, runs every step
    assert_eq!(
        common::rule_lines(&run(&src("len(examples) < 5000")), "EA301"),
        vec![9]
    );
    assert_eq!(
        common::rule_lines(&run(&src("len(others) < 5")), "EA301"),
        vec![9]
    );
}
