//! Step 5: render what the earlier steps found (pure renderers over one report model).

pub mod assemble;
pub mod command;
pub mod comment;
pub mod final_html;
pub mod model;
pub mod summary;
