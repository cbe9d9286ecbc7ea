//! Running the real `xeforge check` binary in tests and reading what it printed.
#![allow(dead_code)] // each test binary uses the helpers it needs

use std::path::Path;
use std::process::{Command, Output};

/// Run `xeforge check ARGS` in `cwd`, without colour.
pub fn check(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_xeforge"))
        .arg("check")
        .args(args)
        .current_dir(cwd)
        .env("NO_COLOR", "1")
        .output()
        .expect("the xeforge binary runs")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn code(o: &Output) -> i32 {
    o.status.code().expect("exited normally, not by a signal")
}
