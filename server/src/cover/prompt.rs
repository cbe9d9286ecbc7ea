//! Prompts for LLM stages: stage instructions + the knowledge base's docs for the stage's rules on
//! this target + the file's current diagnostics + the file; later rounds add what the guard or the
//! harness found. The conversation is trimmed to the first prompt and the latest exchanges.

use super::guard::Rejection;
use crate::harness::{Evaluation, Verdict};
use crate::knowledge::{Knowledge, Stage, Target};
use crate::lint::Diagnostic;
use crate::llm::ChatMessage;
use crate::text::LineIndex;

const DOC_CHARS: usize = 1800;
/// Exchanges (assistant + user feedback) kept after the first prompt.
const KEEP_EXCHANGES: usize = 2;

pub fn system(target: &Target) -> ChatMessage {
    ChatMessage::system(format!(
        "You optimise Triton kernels for {} ({}, toolchain {}). Reply with the complete updated Python file in a \
         single ```python code block.\nHard rules, checked before anything runs: keep `class Model`'s constructor, \
         the parameters of `forward`, `get_inputs`/`get_init_inputs` and the imports (you may add triton or math \
         imports); keep every existing @triton.jit kernel unless the stage says it fuses; compute in Triton kernels, \
         never by calling PyTorch operators or vendor libraries the original did not call; no try/except fallbacks, \
         no __import__/eval/exec/computed getattr, no threads, streams, caches or changes to timing functions.",
        target.device.name, target.device.id, target.toolchain.id
    ))
}

pub fn first(stage: &Stage, kb: &Knowledge, diagnostics: &[Diagnostic], text: &str) -> ChatMessage {
    let mut s =
        format!("## Stage: {} ({})\n{}\n\n{}\n\n## Edit scope\n", stage.title, stage.name, stage.summary, stage.instructions.trim());
    s.push_str(if stage.edit_scope() == crate::knowledge::EditScope::KernelsAndLaunch {
        "Kernel bodies, decorators and configs, and launch code in this file.\n"
    } else {
        "Kernel bodies, decorators and autotune configs only: launch code and everything else stays as it is.\n"
    });
    let docs: Vec<String> = stage
        .rules
        .iter()
        .filter_map(|code| kb.rule(code))
        .map(|r| {
            format!("### {} {}\n{}", r.code, r.name, crate::harness::protocol::tail_chars(r.docs.trim(), DOC_CHARS).trim_start_matches('…'))
        })
        .collect();
    if !docs.is_empty() {
        s.push_str("\n## What the knowledge base says for this target\n");
        s.push_str(&docs.join("\n\n"));
        s.push('\n');
    }
    if !diagnostics.is_empty() {
        let li = LineIndex::new(text);
        s.push_str("\n## Current diagnostics\n");
        for d in diagnostics {
            let loc = li.location(text, d.range.start);
            s.push_str(&format!("- line {}: {} {} ({}): {}\n", loc.row, d.code, d.name, d.severity.as_str(), d.message));
        }
    }
    s.push_str("\n## The file\n```python\n");
    s.push_str(text);
    if !text.ends_with('\n') {
        s.push('\n');
    }
    s.push_str("```\n");
    ChatMessage::user(s)
}

pub fn no_code_block() -> ChatMessage {
    ChatMessage::user(
        "Your reply contained no ```python code block with the complete file. Reply with the whole updated file in one ```python block.",
    )
}

pub fn rejected(r: &Rejection) -> ChatMessage {
    ChatMessage::user(format!(
        "The guard rejected this candidate before running it: {r}.\nKeep within the stage's scope and rules and reply with the complete corrected file."
    ))
}

pub fn evaluated(e: &Evaluation) -> ChatMessage {
    let mut s = format!(
        "The verification harness ran the candidate on {}: verdict `{}`.\n",
        if e.device.name.is_empty() { &e.device.kind } else { &e.device.name },
        e.verdict
    );
    match e.verdict {
        Verdict::Correct | Verdict::Slower => {
            if let (Some(sp), Some([lo, hi])) = (e.speedup(), e.speedup_interval()) {
                s.push_str(&format!("It is correct but not verified faster: speedup {sp:.2}× (95% interval [{lo:.2}, {hi:.2}]; faster needs the lower end above 1.02).\n"));
            } else {
                s.push_str("It is correct, but no speedup was measured.\n");
            }
        }
        _ => {
            s.push_str("Findings:\n");
            s.push_str(&e.failure_text(2500));
            s.push('\n');
        }
    }
    s.push_str("Fix this and reply with the complete updated file.");
    ChatMessage::user(s)
}

/// System + first prompt + the latest exchanges.
pub fn trimmed(history: &[ChatMessage]) -> Vec<ChatMessage> {
    if history.len() <= 2 + 2 * KEEP_EXCHANGES {
        return history.to_vec();
    }
    let mut out = history[..2].to_vec();
    out.extend_from_slice(&history[history.len() - 2 * KEEP_EXCHANGES..]);
    out
}
