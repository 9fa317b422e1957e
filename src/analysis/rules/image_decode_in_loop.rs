use crate::analysis::rule::{Checker, Rule, RuleMeta};
use crate::declare_rule;

declare_rule! {
    /// ## What it does
    /// Flags image decoding (`PIL.Image.open`, `cv2.imread`, `imageio.imread`,
    /// `torchvision.io.read_image`) inside a loop that also runs the model (by any method of
    /// it, also a model a hub repository's entry point returns: `zoe = torch.hub.load(repo,
    /// "ZoeD_N")` ... `zoe.infer_pil(image)`, or a library's object built around the model,
    /// `mask_generator = SamAutomaticMaskGenerator(sam)` ... `mask_generator.generate(img)`;
    /// or directly holds
    /// an inference loop: one image in, a loop over its faces or tiles), or in a function of
    /// the file such a loop calls per step (not one called every N steps, `if (self.global_step
    /// + 1) % every == 0: self.visualize(...)` in a Lightning `training_step`), outside a
    /// `Dataset.__getitem__`. Not in a loop of a
    /// few known items (`for f in sample_files[:4]:`, `random.sample(paths, k=3)`, a validation preview).
    ///
    /// Reported on the line of the decode call.
    ///
    /// ## Why is this slow?
    /// Decoding a JPEG takes milliseconds of CPU; done serially in the process that drives the
    /// GPU, the GPU waits for every image. In a `Dataset` served by `DataLoader(num_workers=N)`
    /// the images are decoded by N processes ahead of the model.
    ///
    /// ## Example
    /// ```python
    /// from PIL import Image
    ///
    /// for path in paths:
    ///     img = Image.open(path).convert("RGB")
    ///     out = model(preprocess(img))
    /// ```
    ///
    /// Use instead:
    /// ```python
    /// from torch.utils.data import DataLoader
    ///
    /// loader = DataLoader(ImageFolderDataset(paths), batch_size=64, num_workers=8)
    /// for batch in loader:
    ///     out = model(batch)
    /// ```
    ///
    /// ## Fix safety
    /// No automatic fix: needs a `Dataset` class and batching.
    pub(crate) struct ImageDecodeInLoop {
        id: "EA502",
        name: "image-decode-in-model-loop",
        category: ImageDecodeInLoop,
        resource: Cpu,
        severity: High,
    }
}

impl Rule for ImageDecodeInLoop {
    fn meta(&self) -> &'static RuleMeta {
        &Self::META
    }

    // fires in a step or record loop, or on a file's kind: nothing beyond the engine's triggers
    fn triggers(&self) -> crate::analysis::prefilter::Triggers {
        crate::analysis::prefilter::Triggers::Engine
    }

    fn check(&self, cx: &mut Checker<'_>) {
        let m = cx.m;
        let hot_funcs = super::per_step_funcs(m);
        for c in &m.calls {
            // (a fixed file, `Image.open("assets/logo.png")`, is not the loop's input; an
            // f-string naming the loop's entry, `Image.open(f"img_pre/{name}")`, is)
            let fixed = m.pos(c, 0).is_some_and(|a| {
                a.vkind == crate::analysis::facts::ValKind::Str
                    && m.node(a.value)
                        .is_some_and(|n| crate::analysis::facts::string_value(n, m.src).is_some())
            });
            if c.ctx.getitem || fixed || !is_image_decode(m, c) || m.dead(&c.ctx) {
                continue;
            }
            // in the model loop, in a per-item loop holding one, or in a function of the file
            // that a model loop calls per step (`def compute_features(batch): [Image.open(p)
            // for p in batch]`)
            let in_model_loop = super::step_ctx(m, c).is_some()
                || feeds_inner_inference(m, c)
                || (c.ctx.loop_.is_none() && super::runs_per_step(m, &hot_funcs, c));
            // (a loop of a few known items decodes a few images: `for f in files[:4]:`, a
            // validation preview)
            // (every loop around it: a batch of a few images built in a long loop is not)
            let few = c.ctx.loop_.is_some() && {
                let mut cur = c.ctx.loop_;
                let mut all = true;
                while let Some(l) = cur.and_then(|i| m.loops.get(i as usize)) {
                    all &= super::few_iterations(m, l);
                    cur = l.parent;
                }
                all
            };
            if !in_model_loop || few {
                continue;
            }
            cx.at_call(
                &Self::META,
                c,
                "image decoded in the loop that drives the model: decode in a Dataset with DataLoader workers so the GPU does not wait".to_string(),
                None,
            );
        }
    }
}

/// Is the call directly in a per-item loop (not an epoch loop) whose body holds an inference
/// loop: `for path in images: img = cv2.imread(path)` ... `for face in faces: net(face)`? The
/// image is decoded once per outer item while the GPU waits.
fn feeds_inner_inference(
    m: &crate::analysis::facts::Model<'_>,
    c: &crate::analysis::facts::Call,
) -> bool {
    let Some(li) = c.ctx.loop_ else {
        return false;
    };
    let Some(l) = m.loops.get(li as usize) else {
        return false;
    };
    // (the outer loop counts as an epoch loop for holding a step loop: what tells a loop over
    // images is that the decode reads its target)
    let reads_target = m.call_args(c).iter().any(|a| {
        crate::analysis::rules::words(m.text(a.value))
            .any(|w| l.targets.iter().any(|t| m.text(*t) == w))
    });
    if !l.info.has_child_step || !reads_target || l.info.train || m.dead(&c.ctx) {
        return false;
    }
    m.loops.iter().any(|inner| {
        inner.info.step
            && !inner.info.train
            && inner.info.model_call
            && l.span.contains(inner.span)
            && inner.parent == Some(li)
    })
}

/// Does a call decode an image file (`PIL.Image.open`, `cv2.imread`, `read_image`, ...)?
pub(crate) fn is_image_decode(
    m: &crate::analysis::facts::Model<'_>,
    c: &crate::analysis::facts::Call,
) -> bool {
    let q = m.qual(c);
    matches!(
        q.as_ref(),
        "PIL.Image.open"
            | "cv2.imread"
            | "cv2.imdecode"
            | "imageio.imread"
            | "imageio.v3.imread"
            | "imageio.v2.imread"
            | "torchvision.io.read_image"
            | "torchvision.io.decode_image"
            | "skimage.io.imread"
    ) || (q == "Image.open" && m.src.contains("PIL"))
}
