//! Outputs a loop must hand to the host or to the disk are its product, not waste.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

mod common;

use common::rule_ids as rules;

const HEAD: &str = "import glob\nimport cv2\nimport torch\nmodel = Net().cuda().eval()\n";

#[test]
fn a_prediction_written_out_each_iteration_is_no_host_sync_finding() {
    let written = format!(
        "{HEAD}with torch.no_grad():\n    for batch in loader:\n        out = model(batch.cuda())\n        mask = out.argmax(1).cpu().numpy()\n        cv2.imwrite('m.png', mask)\n"
    );
    assert!(!rules(&written).iter().any(|r| r == "EA301"));
    let env = format!(
        "{HEAD}for step in range(1000):\n    action = model(obs.cuda())\n    obs, reward, done, info = env.step(action.cpu().numpy())\n"
    );
    assert!(!rules(&env).iter().any(|r| r == "EA301"));
}

#[test]
fn a_read_kept_for_later_or_logged_is_still_a_host_sync() {
    let kept = format!(
        "{HEAD}preds = []\nwith torch.no_grad():\n    for batch in loader:\n        out = model(batch.cuda())\n        preds.append(out.argmax(1).cpu().numpy())\n"
    );
    assert!(rules(&kept).iter().any(|r| r == "EA301"));
    // `.item()` is never an output, and an optimizer's step is no sink
    let item = format!(
        "{HEAD}opt = torch.optim.SGD(model.parameters(), lr=0.1)\nfor batch in loader:\n    loss = model(batch.cuda()).sum()\n    loss.backward()\n    opt.step()\n    cv2.imwrite('x.png', loss.item())\n"
    );
    assert!(rules(&item).iter().any(|r| r == "EA301"));
}

#[test]
fn a_local_function_that_writes_its_own_output_is_per_file_work() {
    let src = "import os\nfrom pathlib import Path\nfrom PIL import Image\n\ndef make_thumb(p, dst):\n    img = Image.open(p)\n    img.thumbnail((128, 128))\n    img.save(dst / p.name)\n\ndef main(src, dst):\n    paths = sorted(Path(src).rglob('*.jpg'))\n    done = 0\n    for p in paths:\n        make_thumb(p, dst)\n        done += 1\n\nmain('a', Path('b'))\n";
    assert!(rules(src).iter().any(|r| r == "EA602"), "{:?}", rules(src));
}

#[test]
fn an_optimizer_named_like_its_module_is_stepped_not_rebuilt() {
    let src = "import torch\nimport torch.optim as optim\nmodel = Net().cuda()\noptim = optim.Adam(model.parameters())\nfor x in loader:\n    model(x.cuda()).sum().backward()\n    optim.step()\n    optim.zero_grad()\n";
    assert!(!rules(src).iter().any(|r| r == "EA701"), "{:?}", rules(src));
    let rebuilt = "import torch\nimport torch.optim as optim\nmodel = Net().cuda()\nfor x in loader:\n    opt = optim.Adam(model.parameters())\n    model(x.cuda()).sum().backward()\n    opt.step()\n";
    assert!(rules(rebuilt).iter().any(|r| r == "EA701"));
}

#[test]
fn writing_into_a_shared_handle_is_not_per_file_output() {
    let src = "import os\nimport zipfile\n\ndef add(zf, path):\n    zf.write(path)\n\ndef main(files):\n    with zipfile.ZipFile('a.zip', 'w') as zf:\n        for path in files:\n            add(zf, path)\n\nmain(os.listdir('.'))\n";
    assert!(!rules(src).iter().any(|r| r == "EA602"), "{:?}", rules(src));
}

#[test]
fn sampling_every_n_steps_does_not_excuse_the_training_steps_syncs() {
    let src = "import torch\nmodel = Net().cuda()\nopt = torch.optim.Adam(model.parameters())\nfor i in range(100000):\n    loss = model(next(train_iter).cuda())\n    loss.backward()\n    print(f'loss {loss.item()}')\n    opt.step()\n    if i % 500 == 0:\n        sample = model.generate(prime, 256)\n";
    assert!(rules(src).iter().any(|r| r == "EA301"), "{:?}", rules(src));
    // a loop that decodes with generate() every iteration reads its tokens back anyway
    let decode = "import torch\nmodel = Net().cuda().eval()\nwith torch.no_grad():\n    for batch in loader:\n        out = model.generate(batch.cuda(), max_new_tokens=32)\n        texts.append(out.cpu().tolist())\n";
    assert!(
        !rules(decode).iter().any(|r| r == "EA301"),
        "{:?}",
        rules(decode)
    );
}

#[test]
fn a_context_chosen_among_autocast_and_others_leaves_precision_unknown() {
    let src = "import torch\nfrom torch import autocast\nfrom contextlib import nullcontext\nmodel = Net().cuda()\nscope = autocast if opt.precision == 'autocast' else nullcontext\nwith torch.no_grad():\n    with scope('cuda'):\n        for x in batches:\n            out = model(x.cuda())\n";
    assert!(!rules(src).iter().any(|r| r == "EA202"), "{:?}", rules(src));
}

#[test]
fn a_modulo_by_one_is_no_cadence_guard() {
    let src = |interval: &str| {
        format!(
            "import torch\nlog_interval = {interval}\nmodel = Net().cuda()\nopt = torch.optim.AdamW(model.parameters())\nfor it in range(100000):\n    loss = model(*get_batch())\n    loss.backward()\n    opt.step()\n    if it % log_interval == 0:\n        lossf = loss.item()\n"
        )
    };
    assert!(
        rules(&src("1")).iter().any(|r| r == "EA301"),
        "{:?}",
        rules(&src("1"))
    );
    assert!(!rules(&src("10")).iter().any(|r| r == "EA301"));
    // an unknown interval stays a guard
    let unknown = src("1").replace(
        "log_interval = 1\n",
        "log_interval = int(os.environ['N'])\n",
    );
    assert!(!rules(&unknown).iter().any(|r| r == "EA301"));
}

#[test]
fn an_output_written_a_few_steps_later_or_by_a_named_writer_is_the_product() {
    let src = |tail: &str| {
        format!(
            "import cv2\nimport torch\ndevice = torch.device('cuda')\nmodel = DepthNet().to(device).eval()\nfor name in names:\n    x = load(name).to(device)\n    with torch.no_grad():\n        out = model(x)\n    depth = out.squeeze().cpu().numpy()\n{tail}"
        )
    };
    // through two names derived from it, to an image written in the same iteration
    let derived = src(
        "    scaled = (depth * 255).astype('uint8')\n    color = cv2.applyColorMap(scaled, cv2.COLORMAP_INFERNO)\n    cv2.imwrite(name + '.png', color)\n",
    );
    assert_eq!(
        common::rule_lines(&common::analyse(&derived), "EA301"),
        Vec::<usize>::new()
    );
    // a writer of this project, known by its name
    let writer = src("    utils.write_depth(name, depth)\n");
    assert_eq!(
        common::rule_lines(&common::analyse(&writer), "EA301"),
        Vec::<usize>::new()
    );
    // kept for later: still a read the loop could have deferred
    let kept = src("    results.append(depth.mean())\n");
    assert_eq!(
        common::rule_lines(&common::analyse(&kept), "EA301"),
        vec![9]
    );
}
