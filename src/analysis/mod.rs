//! Step 2: read Python source with tree-sitter, extract facts, run the rules.

pub mod model;
