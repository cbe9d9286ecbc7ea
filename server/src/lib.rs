//! xeforge: hardware-aware Triton kernel checker, language server and verified optimiser.
//! See ARCHITECTURE.md for the module map and the data flow.

pub mod analysis;
pub mod cli;
pub mod config;
pub mod cover;
pub mod fix;
pub mod harness;
pub mod knowledge;
pub mod lint;
pub mod llm;
pub mod lsp;
pub mod model;
pub mod net;
pub mod notebook;
pub mod output;
pub mod package;
pub mod report;
pub mod syntax;
pub mod text;
pub mod timings;
pub mod workspace;
