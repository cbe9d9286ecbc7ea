//! The Triton model of a file (kernels, configs, launches, tl ops, constants).

mod types;
pub use types::*;
