//! `--format github`: GitHub Actions workflow commands, one annotation per diagnostic.
//! <https://docs.github.com/actions/reference/workflow-commands-for-github-actions>

use super::FileResult;
use crate::knowledge::Severity;

/// Escaping of a command's message (data).
fn escape_data(s: &str) -> String {
    s.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

/// Escaping of a command property value: data escaping plus `:` and `,`, which delimit properties.
fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

pub fn render(files: &[FileResult], out: &mut dyn std::io::Write) -> std::io::Result<()> {
    for f in files {
        for d in &f.diagnostics {
            let (start, end) = f.places(d.range);
            let level = match d.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
                Severity::Info => "notice",
            };
            writeln!(
                out,
                "::{level} file={},line={},col={},endLine={},endColumn={},title={}::{}",
                escape_property(&f.display),
                start.row,
                start.column,
                end.row,
                end.column,
                escape_property(&format!("{} {}", d.code, d.name)),
                escape_data(&format!("{}: {} {}", f.at(d.range.start), d.code, d.message)),
            )?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_follow_the_runner_toolkit() {
        assert_eq!(escape_data("50%\r\nnext"), "50%25%0D%0Anext");
        assert_eq!(escape_property("a,b:c%"), "a%2Cb%3Ac%25");
    }
}
