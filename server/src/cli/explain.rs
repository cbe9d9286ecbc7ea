//! `xeforge explain CODE|NAME`: a rule's documentation as markdown (or JSON with the docs).

use super::rules::{Format, KnowledgeArgs, print_json, rule_json};
use crate::knowledge::RuleInfo;
use crate::knowledge::suggest::did_you_mean;

#[derive(Debug, clap::Args)]
pub struct ExplainArgs {
    /// Rule code (`XF101`, any case) or name (`num-warps-power-of-two`).
    pub rule: String,
    #[command(flatten)]
    pub knowledge: KnowledgeArgs,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

pub fn run(args: ExplainArgs) -> u8 {
    let kb = match args.knowledge.load() {
        Ok(kb) => kb,
        Err(code) => return code,
    };
    let Some(rule) = kb.rule(args.rule.trim()) else {
        let candidates = kb.rules.iter().flat_map(|r| [r.code.as_str(), r.name.as_str()]);
        match did_you_mean(args.rule.trim(), candidates) {
            Some(s) => eprintln!("error: unknown rule `{}`; did you mean `{s}`?", args.rule),
            None => eprintln!("error: unknown rule `{}` (`xeforge rules` lists them)", args.rule),
        }
        return 2;
    };
    match args.format {
        Format::Text => print!("{}", render(rule)),
        Format::Json => {
            let mut value = rule_json(rule);
            value["docs"] = serde_json::Value::String(rule.docs.trim().to_string());
            print_json(&value);
        }
    }
    0
}

/// Heading, one line of facts, then the rule's own markdown.
pub(crate) fn render(rule: &RuleInfo) -> String {
    let mut facts = vec![format!("default severity: {}", rule.severity.as_str())];
    facts.push(match &rule.fix {
        Some(a) => format!("fix: {a}"),
        None => "fix: none".to_string(),
    });
    if let Some(stage) = &rule.fix_stage {
        facts.push(format!("stage: {stage}"));
    }
    facts.push(format!("research: {}", rule.research_id));
    format!("# {} {}\n\n{}\n\n*{}*\n\n{}\n", rule.code, rule.name, rule.summary, facts.join(" · "), rule.docs.trim())
}
