//! XF901: reflective calls in a kernel module (`__import__`, `getattr` with a computed name, `eval`,
//! `exec`, `importlib`). In a user's file it is a warning; the stage guard rejects a generated
//! candidate that contains one, because it is how a candidate can call a library routine (e.g.
//! PyTorch's conv2d) while pretending to compute it in a kernel.

use super::context::Ctx;
use super::registry::XF901;
use crate::knowledge::Severity;
use crate::lint::Diagnostic;

pub fn obfuscated_call(ctx: &Ctx, out: &mut Vec<Diagnostic>) {
    for call in &ctx.model.obfuscated_calls {
        let what = match call.func.as_str() {
            "getattr" => "getattr with a computed attribute name".to_string(),
            f => format!("`{f}`"),
        };
        let kernel = ctx.kernels().find(|(_, k)| k.range.contains_range(call.range)).map(|(i, _)| i);
        out.push(ctx.diag(
            XF901,
            Severity::Warning,
            call.range,
            kernel,
            format!(
                "{what} in a kernel module hides what the code calls; write the call out (an optimisation candidate \
                 containing it is rejected)"
            ),
        ));
    }
}
