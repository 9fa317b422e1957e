//! What a loader's dataset costs per item decides whether workers or pinning can pay.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

mod common;

use common::rule_ids as rules;

fn script(getitem: &str) -> String {
    format!(
        "import torch\nfrom torch.utils.data import Dataset, DataLoader\n\nclass Items(Dataset):\n    def __init__(self, texts, tok):\n        self.ids = [tok.encode(t) for t in texts]\n    def __len__(self):\n        return len(self.ids)\n    def __getitem__(self, i):\n{getitem}\n\nmodel = Net().cuda()\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\nds = Items(texts, tok)\nloader = DataLoader(ds, batch_size=8)\nfor x in loader:\n    model(x.cuda()).sum().backward()\n    opt.step()\n"
    )
}

#[test]
fn a_local_dataset_that_only_wraps_prepared_ids_needs_no_workers_nor_pinning() {
    let r = rules(&script(
        "        return torch.tensor(self.ids[i], dtype=torch.long)",
    ));
    assert!(!r.iter().any(|x| x == "EA101" || x == "EA102"), "{r:?}");
}

#[test]
fn a_local_dataset_of_prepared_floats_still_gets_pinning() {
    let r = rules(&script("        return torch.tensor(self.ids[i])"));
    assert!(!r.iter().any(|x| x == "EA101"), "{r:?}");
    assert!(r.iter().any(|x| x == "EA102"), "{r:?}");
}

#[test]
fn a_dataset_that_decodes_or_transforms_per_item_keeps_its_findings() {
    let r = rules(&script(
        "        img = Image.open(self.ids[i])\n        return self.transform(img)",
    ));
    assert!(r.iter().any(|x| x == "EA101"), "{r:?}");
    assert!(r.iter().any(|x| x == "EA102"), "{r:?}");
    // a dataset from another module is not seen: its findings stay
    let imported = script("        return torch.tensor(self.ids[i])").replace(
        "ds = Items(texts, tok)",
        "from data import Other\nds = Other(texts)",
    );
    assert!(rules(&imported).iter().any(|x| x == "EA101"));
}
