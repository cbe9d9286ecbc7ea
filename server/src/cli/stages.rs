//! `xeforge stages [NAME]`: the optimisation stages in canonical order, or one stage in full.

use super::rules::{Format, KnowledgeArgs, Table, print_json};
use crate::knowledge::suggest::did_you_mean;
use crate::knowledge::{Generator, Stage};

#[derive(Debug, clap::Args)]
pub struct StagesArgs {
    /// Show one stage in full: its constraints, rules and the instructions its generator receives.
    pub name: Option<String>,
    #[command(flatten)]
    pub knowledge: KnowledgeArgs,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

pub fn run(args: StagesArgs) -> u8 {
    let kb = match args.knowledge.load() {
        Ok(kb) => kb,
        Err(code) => return code,
    };
    let Some(name) = &args.name else {
        match args.format {
            Format::Text => print!("{}", table(&kb.stages)),
            Format::Json => print_json(&kb.stages),
        }
        return 0;
    };
    let Some(stage) = kb.stage(name) else {
        match did_you_mean(name, kb.stages.iter().map(|s| s.name.as_str())) {
            Some(s) => eprintln!("error: unknown stage `{name}`; did you mean `{s}`?"),
            None => eprintln!("error: unknown stage `{name}` (`xeforge stages` lists them)"),
        }
        return 2;
    };
    match args.format {
        Format::Text => print!("{}", detail(stage)),
        Format::Json => print_json(stage),
    }
    0
}

fn table(stages: &[Stage]) -> String {
    let mut t = Table::new(["name", "after", "scope", "generator", "summary"]);
    for s in stages {
        t.row([
            s.name.clone(),
            if s.after.is_empty() { "-".into() } else { s.after.join(",") },
            s.scope.clone(),
            generator(s),
            s.summary.clone(),
        ]);
    }
    t.render()
}

/// "llm", or the deterministic generator that runs first ("fixes, then llm").
fn generator(s: &Stage) -> String {
    match s.generator() {
        Some(Generator::Fixes) => "fixes, then llm".into(),
        Some(Generator::Autotune) => "autotune".into(),
        None => "llm".into(),
    }
}

fn detail(s: &Stage) -> String {
    let list = |v: &[String]| if v.is_empty() { "-".to_string() } else { v.join(", ") };
    format!(
        "# {} ({})\n\n{}\n\nafter: {}\nscope: {}\ngenerator: {}\ncorrectness only: {}\nrules: {}\n\n## Instructions\n\n{}\n",
        s.title,
        s.name,
        s.summary,
        list(&s.after),
        s.scope,
        generator(s),
        if s.correctness_only { "yes" } else { "no" },
        list(&s.rules),
        s.instructions.trim()
    )
}
