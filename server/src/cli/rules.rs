//! `xeforge rules`: the rule catalogue as a table or JSON. Also holds what the four knowledge
//! subcommands (`rules`, `explain`, `devices`, `stages`) share: overlay flags, format, tables.

use crate::knowledge::{Knowledge, RuleInfo};
use std::borrow::Cow;
use std::path::PathBuf;
use unicode_width::UnicodeWidthStr;

#[derive(Debug, clap::Args)]
pub struct RulesArgs {
    #[command(flatten)]
    pub knowledge: KnowledgeArgs,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

/// `--knowledge DIR` overlays shared by the knowledge subcommands.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct KnowledgeArgs {
    /// Directory with extra or overriding knowledge entries (same layout as `knowledge/`); repeatable.
    #[arg(long = "knowledge", value_name = "DIR")]
    pub overlays: Vec<PathBuf>,
}

impl KnowledgeArgs {
    /// The knowledge base with the overlays applied; on error, prints it and returns exit code 2.
    pub fn load(&self) -> Result<Cow<'static, Knowledge>, u8> {
        Knowledge::embedded_with(&self.overlays).map_err(|e| {
            eprintln!("error: invalid knowledge overlay: {e}");
            2
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
}

pub fn run(args: RulesArgs) -> u8 {
    let kb = match args.knowledge.load() {
        Ok(kb) => kb,
        Err(code) => return code,
    };
    let mut rules: Vec<&RuleInfo> = kb.rules.iter().collect();
    rules.sort_by(|a, b| a.code.cmp(&b.code));
    match args.format {
        Format::Text => print!("{}", rules_table(&rules)),
        Format::Json => {
            let rows: Vec<serde_json::Value> = rules.iter().map(|r| rule_json(r)).collect();
            print_json(&rows);
        }
    }
    0
}

/// Summary row of a rule for machine consumers (`explain --format json` adds the docs).
pub(crate) fn rule_json(r: &RuleInfo) -> serde_json::Value {
    serde_json::json!({
        "code": r.code,
        "name": r.name,
        "summary": r.summary,
        "severity": r.severity.as_str(),
        "fix": r.fix,
        "fix_stage": r.fix_stage,
        "research_id": r.research_id,
        "sources": r.sources,
    })
}

fn rules_table(rules: &[&RuleInfo]) -> String {
    let mut table = Table::new(["code", "name", "severity", "fix", "stage", "summary"]);
    for r in rules {
        table.row([
            r.code.clone(),
            r.name.clone(),
            r.severity.as_str().to_string(),
            r.fix.clone().unwrap_or_else(|| "-".into()),
            r.fix_stage.clone().unwrap_or_else(|| "-".into()),
            r.summary.clone(),
        ]);
    }
    table.render()
}

pub(crate) fn print_json<T: serde::Serialize>(value: &T) {
    match serde_json::to_string_pretty(value) {
        Ok(s) => println!("{s}"),
        Err(e) => eprintln!("error: cannot serialise output: {e}"),
    }
}

/// A left-aligned text table; the last column is not padded so lines carry no trailing spaces.
pub(crate) struct Table {
    rows: Vec<Vec<String>>,
}

impl Table {
    pub(crate) fn new<const N: usize>(header: [&str; N]) -> Table {
        Table { rows: vec![header.iter().map(|h| h.to_string()).collect()] }
    }

    pub(crate) fn row<const N: usize>(&mut self, cells: [String; N]) {
        self.rows.push(cells.into());
    }

    pub(crate) fn render(&self) -> String {
        let columns = self.rows.iter().map(Vec::len).max().unwrap_or(0);
        let widths: Vec<usize> =
            (0..columns).map(|c| self.rows.iter().filter_map(|r| r.get(c)).map(|s| s.width()).max().unwrap_or(0)).collect();
        let mut out = String::new();
        for row in &self.rows {
            let mut line = String::new();
            for (c, cell) in row.iter().enumerate() {
                line.push_str(cell);
                if c + 1 < row.len() {
                    line.push_str(&" ".repeat(widths[c] - cell.width() + 2));
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_aligns_columns_without_trailing_spaces() {
        let mut t = Table::new(["a", "bb", "c"]);
        t.row(["xxx".into(), "y".into(), "".into()]);
        assert_eq!(t.render(), "a    bb  c\nxxx  y\n");
    }
}
