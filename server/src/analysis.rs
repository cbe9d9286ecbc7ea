//! The one entry point from text to findings: parse → model → lint.
//! Used by `xeforge check`, the language server and the stage guard alike, so all three agree.
