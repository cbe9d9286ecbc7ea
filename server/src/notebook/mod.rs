//! Jupyter notebooks (`.ipynb`, nbformat 4): the code cells read as one Python file, and fixes
//! written back into the cells they belong to.
//!
//! - [`Notebook::parse`]: the JSON checked (a clear error, never a panic), each cell's kind, language
//!   and `source` (a string or a list of strings; which one is kept for writing back);
//! - [`Concat`]: the Python code cells one after another (each ending in a line break), IPython
//!   syntax neutralised in place by `magics` (same bytes, same lines), and where each cell starts:
//!   a kernel defined in one cell and launched in another is one file to the analyser;
//! - [`fix`]: fixes applied cell by cell (a fix reaching into two cells or into IPython syntax is left
//!   out), re-checked on the whole notebook until stable;
//! - [`Notebook::with_sources`]: the original text with only the changed cells' `source` values
//!   replaced (`scan` finds them), written in the form and layout they had: outputs, metadata,
//!   execution counts, ids, key order and indentation stay byte for byte.
//!
//! Cells are numbered as ruff numbers them: `cell N` is the N-th cell of the notebook, counting
//! markdown and raw cells too, from 1.

pub mod fix;
pub mod magics;
pub mod scan;

use std::ops::Range;

use serde_json::Value;

use crate::text::LineIndex;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CellKind {
    Code,
    Markdown,
    Raw,
}

/// How a cell's `source` is written in the file: one string, or a list of lines (nbformat allows both).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceForm {
    Text,
    Lines,
}

#[derive(Debug, Clone)]
pub struct Cell {
    pub kind: CellKind,
    pub source: String,
    /// A code cell in Python: the notebook's language is Python (or unsaid) and the cell does not
    /// name another (VS Code's `metadata.vscode.languageId`).
    pub python: bool,
    form: SourceForm,
    /// The `source` value's bytes in the file.
    span: Range<usize>,
}

#[derive(Debug, Clone)]
pub struct Notebook {
    raw: String,
    pub cells: Vec<Cell>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotebookError {
    #[error("not a valid notebook: not JSON ({0})")]
    Json(String),
    #[error("not a valid notebook: {0}")]
    Format(String),
}

impl Notebook {
    pub fn parse(raw: String) -> Result<Notebook, NotebookError> {
        let doc: Value = serde_json::from_str(&raw).map_err(|e| NotebookError::Json(e.to_string()))?;
        let bad = |m: String| Err(NotebookError::Format(m));
        let Some(top) = doc.as_object() else { return bad("the top level is not a JSON object".into()) };
        match top.get("nbformat") {
            None => {}
            Some(v) => match v.as_u64() {
                Some(4..) => {}
                Some(n) => {
                    return bad(format!("nbformat {n} is not supported (nbformat 4 is; `jupyter nbconvert --to notebook` converts)"));
                }
                None => return bad("`nbformat` is not a number".into()),
            },
        }
        let Some(cells) = top.get("cells").and_then(Value::as_array) else { return bad("no `cells` list".into()) };
        let language = top
            .get("metadata")
            .and_then(|m| m.pointer("/language_info/name").or_else(|| m.pointer("/kernelspec/language")))
            .and_then(Value::as_str);
        let python_notebook = language.is_none_or(|l| l.eq_ignore_ascii_case("python"));
        let Some(spans) = scan::source_spans(&raw).filter(|s| s.len() == cells.len()) else {
            return bad("the cells' `source` values could not be located".into());
        };
        let mut out = Vec::with_capacity(cells.len());
        for (i, (cell, span)) in cells.iter().zip(spans).enumerate() {
            let n = i + 1;
            let Some(cell) = cell.as_object() else { return bad(format!("cell {n} is not a JSON object")) };
            let kind = match cell.get("cell_type").and_then(Value::as_str) {
                Some("code") => CellKind::Code,
                Some("markdown") => CellKind::Markdown,
                Some("raw") => CellKind::Raw,
                Some(other) => return bad(format!("cell {n} has an unknown `cell_type` \"{other}\"")),
                None => return bad(format!("cell {n} has no `cell_type`")),
            };
            let (source, form) = match cell.get("source") {
                Some(Value::String(s)) => (s.clone(), SourceForm::Text),
                Some(Value::Array(items)) => {
                    let mut s = String::new();
                    for item in items {
                        let Some(line) = item.as_str() else {
                            return bad(format!("cell {n}: `source` holds something other than strings"));
                        };
                        s.push_str(line);
                    }
                    (s, SourceForm::Lines)
                }
                Some(_) => return bad(format!("cell {n}: `source` is neither a string nor a list of strings")),
                None => return bad(format!("cell {n} has no `source`")),
            };
            let Some(span) = span else { return bad(format!("cell {n}: its `source` could not be located")) };
            let cell_language = cell.get("metadata").and_then(|m| m.pointer("/vscode/languageId")).and_then(Value::as_str);
            let python = kind == CellKind::Code && python_notebook && cell_language.is_none_or(|l| l == "python");
            out.push(Cell { kind, source, python, form, span });
        }
        Ok(Notebook { raw, cells: out })
    }

    pub fn raw(&self) -> &str {
        &self.raw
    }

    /// The Python code cells, as (index, source), for [`Concat::build`].
    pub fn python_cells(&self) -> Vec<(usize, &str)> {
        self.cells.iter().enumerate().filter(|(_, c)| c.python).map(|(i, c)| (i, c.source.as_str())).collect()
    }

    /// The file's text with the `source` of each listed cell (index, new text) replaced, every other
    /// byte as it was.
    pub fn with_sources(&self, changed: &[(usize, String)]) -> String {
        let mut changed: Vec<&(usize, String)> = changed.iter().filter(|(i, _)| *i < self.cells.len()).collect();
        changed.sort_by_key(|(i, _)| *i);
        let mut out = String::with_capacity(self.raw.len());
        let mut cursor = 0;
        for (i, text) in changed {
            let cell = &self.cells[*i];
            if cell.span.start < cursor {
                continue;
            }
            out.push_str(&self.raw[cursor..cell.span.start]);
            out.push_str(&self.render_source(cell, text));
            cursor = cell.span.end;
        }
        out.push_str(&self.raw[cursor..]);
        out
    }

    /// A `source` value for `text`, in the cell's form and the file's layout and escaping.
    fn render_source(&self, cell: &Cell, text: &str) -> String {
        let ascii = self.raw.is_ascii();
        if cell.form == SourceForm::Text {
            return json_string(text, ascii);
        }
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        if lines.is_empty() {
            return "[]".into();
        }
        let raw = &self.raw;
        let layout = scan::list_layout(raw, cell.span.clone());
        // An unchanged line keeps its token as written (its escapes, say).
        let tokens: Vec<(String, &str)> = layout
            .iter()
            .flat_map(|l| &l.items)
            .filter_map(|r| Some((serde_json::from_str::<String>(&raw[r.clone()]).ok()?, &raw[r.clone()])))
            .collect();
        let (open, sep, close) = match &layout {
            Some(l) if !l.items.is_empty() => {
                let open = raw[l.open.clone()].to_string();
                let sep = match l.items.get(1) {
                    Some(second) => raw[l.items[0].end..second.start].to_string(),
                    None => format!(",{open}"),
                };
                (open, sep, raw[l.close.clone()].to_string())
            }
            _ => self.default_list_layout(cell.span.start),
        };
        let mut out = String::from("[");
        out.push_str(&open);
        for (k, line) in lines.iter().enumerate() {
            if k > 0 {
                out.push_str(&sep);
            }
            match tokens.iter().find(|(s, _)| s == line) {
                Some((_, token)) => out.push_str(token),
                None => out.push_str(&json_string(line, ascii)),
            }
        }
        out.push_str(&close);
        out.push(']');
        out
    }

    /// Where an empty list that gets lines puts them: one level below the `source` key, the file's
    /// indentation unit (nbformat writes one space), or all on one line in a file without line breaks.
    fn default_list_layout(&self, at: usize) -> (String, String, String) {
        let raw = &self.raw;
        if !raw.contains('\n') {
            return (String::new(), ",".into(), String::new());
        }
        let line_start = raw[..at].rfind('\n').map_or(0, |i| i + 1);
        let indent: String = raw[line_start..].chars().take_while(|c| *c == ' ' || *c == '\t').collect();
        let unit: String = raw.lines().nth(1).map(|l| l.chars().take_while(|c| *c == ' ' || *c == '\t').collect()).unwrap_or_default();
        let unit = if unit.is_empty() { " ".to_string() } else { unit };
        let open = format!("\n{indent}{unit}");
        (open.clone(), format!(",{open}"), format!("\n{indent}"))
    }
}

/// A JSON string as nbformat (Python's `json`) writes it; non-ASCII as `\uXXXX` when `ascii`.
fn json_string(s: &str, ascii: bool) -> String {
    let json = serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into());
    if !ascii || json.is_ascii() {
        return json;
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{u:04x}"));
            }
        }
    }
    out
}

/// One Python cell's place in a [`Concat`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    /// The cell's index in the notebook (0-based; shown as `cell {cell + 1}`), or in the editor's list.
    pub cell: usize,
    /// Its first byte in the concatenated text.
    pub start: usize,
    /// Its own length (the line break added after a cell that lacks one is not part of it).
    pub len: usize,
    /// Its first line in the concatenated text (0-based).
    pub row: usize,
    /// The bytes `magics` replaced, in the concatenated text.
    pub changed: Vec<Range<usize>>,
}

impl Part {
    pub fn end(&self) -> usize {
        self.start + self.len
    }
    /// Whether `r` lies in this cell's own text and touches no replaced IPython syntax.
    pub fn holds(&self, r: crate::text::TextRange) -> bool {
        self.start <= r.start && r.end <= self.end() && !self.changed.iter().any(|c| c.start < r.end.max(r.start + 1) && r.start < c.end)
    }
}

/// The Python cells as one text: what the analyser reads, what the cells say, and where each starts.
#[derive(Debug, Clone, Default)]
pub struct Concat {
    /// The analysed text: IPython syntax replaced.
    pub text: String,
    /// The cells' own text in the same layout (what a code frame shows).
    pub original: String,
    pub parts: Vec<Part>,
}

impl Concat {
    pub fn build<'a>(cells: impl IntoIterator<Item = (usize, &'a str)>) -> Concat {
        let mut c = Concat::default();
        for (cell, src) in cells {
            let start = c.text.len();
            let (clean, changed) = magics::sanitize(src);
            c.text.push_str(&clean);
            c.original.push_str(src);
            if !src.is_empty() && !src.ends_with(['\n', '\r']) {
                c.text.push('\n');
                c.original.push('\n');
            }
            let changed = changed.into_iter().map(|r| r.start + start..r.end + start).collect();
            c.parts.push(Part { cell, start, len: src.len(), row: 0, changed });
        }
        let lines = LineIndex::new(&c.text);
        for p in &mut c.parts {
            p.row = lines.line_of(p.start);
        }
        c
    }

    /// The index into `parts` of the cell holding byte `offset` (a cell's end, before the line break
    /// added after it, counts as that cell's); `None` when there are no parts.
    pub fn part_at(&self, offset: usize) -> Option<usize> {
        Self::part_at_of(&self.parts, offset)
    }

    /// [`Concat::part_at`] over parts kept apart from their text.
    pub fn part_at_of(parts: &[Part], offset: usize) -> Option<usize> {
        let after = parts.partition_point(|p| p.start <= offset);
        let mut k = after.checked_sub(1)?;
        // An empty cell shares its start with the next: the one that has text wins.
        while k + 1 < parts.len() && parts[k + 1].start == parts[k].start {
            k += 1;
        }
        Some(k)
    }

    /// The index into `parts` of the cell holding 0-based line `row`.
    pub fn part_at_row(&self, row: usize) -> Option<usize> {
        Self::part_at_row_of(&self.parts, row)
    }

    /// [`Concat::part_at_row`] over parts kept apart from their text.
    pub fn part_at_row_of(parts: &[Part], row: usize) -> Option<usize> {
        // Of empty cells on the same row, the last (the one with text, if any).
        parts.partition_point(|p| p.row <= row).checked_sub(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NB: &str = r##"{
 "cells": [
  {
   "cell_type": "markdown",
   "id": "m1",
   "metadata": {},
   "source": [
    "# Title\n",
    "text"
   ]
  },
  {
   "cell_type": "code",
   "execution_count": 3,
   "id": "c1",
   "metadata": {"tags": ["x"]},
   "outputs": [{"name": "stdout", "output_type": "stream", "text": ["hi\n"]}],
   "source": [
    "import triton\n",
    "%time x = 1\n",
    "num_warps = 6"
   ]
  },
  {
   "cell_type": "code",
   "execution_count": null,
   "id": "c2",
   "metadata": {},
   "outputs": [],
   "source": "y = 2\n"
  },
  {
   "cell_type": "code",
   "execution_count": null,
   "id": "c3",
   "metadata": {},
   "outputs": [],
   "source": []
  }
 ],
 "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
 "nbformat": 4,
 "nbformat_minor": 5
}
"##;

    #[test]
    fn parses_kinds_sources_and_forms() {
        let nb = Notebook::parse(NB.into()).unwrap();
        assert_eq!(nb.cells.len(), 4);
        assert_eq!(nb.cells[0].kind, CellKind::Markdown);
        assert!(!nb.cells[0].python);
        assert_eq!(nb.cells[1].source, "import triton\n%time x = 1\nnum_warps = 6");
        assert_eq!(nb.cells[1].form, SourceForm::Lines);
        assert_eq!(nb.cells[2].form, SourceForm::Text);
        assert_eq!(nb.python_cells().iter().map(|(i, _)| *i).collect::<Vec<_>>(), [1, 2, 3]);
    }

    #[test]
    fn unchanged_sources_give_the_file_back_byte_for_byte() {
        let nb = Notebook::parse(NB.into()).unwrap();
        assert_eq!(nb.with_sources(&[]), NB);
        let same: Vec<(usize, String)> = nb.cells.iter().enumerate().map(|(i, c)| (i, c.source.clone())).collect();
        assert_eq!(nb.with_sources(&same), NB);
    }

    #[test]
    fn a_changed_cell_keeps_its_form_and_layout() {
        let nb = Notebook::parse(NB.into()).unwrap();
        let out =
            nb.with_sources(&[(1, "import triton\n%time x = 1\nnum_warps = 8".into()), (2, "y = 3\n".into()), (3, "z = 1\nw = 2".into())]);
        let expected = NB
            .replace("\"num_warps = 6\"", "\"num_warps = 8\"")
            .replace("\"source\": \"y = 2\\n\"", "\"source\": \"y = 3\\n\"")
            .replace("\"source\": []", "\"source\": [\n    \"z = 1\\n\",\n    \"w = 2\"\n   ]");
        assert_eq!(out, expected);
        let again = Notebook::parse(out).unwrap();
        assert_eq!(again.cells[3].source, "z = 1\nw = 2");
    }

    #[test]
    fn ascii_files_stay_ascii() {
        let nb =
            Notebook::parse(r#"{"cells": [{"cell_type": "code", "source": ["a = \"\u00e9\"\n", "b"]}], "nbformat": 4}"#.into()).unwrap();
        let out = nb.with_sources(&[(0, "a = \"é\"\nb = \"😀\"".into())]);
        assert_eq!(out, r#"{"cells": [{"cell_type": "code", "source": ["a = \"\u00e9\"\n", "b = \"\ud83d\ude00\""]}], "nbformat": 4}"#);
    }

    #[test]
    fn random_notebooks_round_trip_and_change_only_the_cell_given() {
        let pieces = ["x = 1", "\n", "\"", "\\", "é", "😀", "\t", "\u{1}", "%time", " ", "]", "}", ",", "\r\n"];
        let mut rng = fastrand::Rng::with_seed(6);
        let text = |rng: &mut fastrand::Rng| (0..rng.usize(0..8)).map(|_| pieces[rng.usize(0..pieces.len())]).collect::<String>();
        for round in 0..300 {
            let cells: Vec<serde_json::Value> = (0..rng.usize(1..5))
                .map(|_| {
                    let t = text(&mut rng);
                    let source = if rng.bool() { serde_json::json!(t) } else { serde_json::json!(t.split_inclusive('\n').collect::<Vec<_>>()) };
                    serde_json::json!({"cell_type": if rng.u8(0..4) == 0 { "markdown" } else { "code" }, "metadata": {"k": [t]}, "outputs": [], "source": source})
                })
                .collect();
            let nb = serde_json::json!({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5});
            let raw = if round % 2 == 0 { serde_json::to_string(&nb).unwrap() } else { serde_json::to_string_pretty(&nb).unwrap() };
            let parsed = Notebook::parse(raw.clone()).unwrap();
            assert_eq!(parsed.with_sources(&[]), raw);
            let k = rng.usize(0..parsed.cells.len());
            let new = text(&mut rng);
            let out = parsed.with_sources(&[(k, new.clone())]);
            let again = Notebook::parse(out.clone()).unwrap_or_else(|e| panic!("{e}: {out}"));
            for (i, (a, b)) in parsed.cells.iter().zip(&again.cells).enumerate() {
                assert_eq!(b.source, if i == k { new.as_str() } else { a.source.as_str() }, "{out}");
                assert_eq!(a.form, b.form);
            }
            let span = parsed.cells[k].span.clone();
            assert!(out.starts_with(&raw[..span.start]) && out.ends_with(&raw[span.end..]), "{raw}\n{out}");
        }
    }

    #[test]
    fn broken_notebooks_are_errors_that_say_why() {
        let cases = [
            ("{", "not JSON"),
            ("[]", "top level"),
            (r#"{"nbformat": 3, "worksheets": []}"#, "nbformat 3"),
            (r#"{"nbformat": 4}"#, "no `cells`"),
            (r#"{"cells": [{"cell_type": "code"}]}"#, "cell 1 has no `source`"),
            (r#"{"cells": [{"cell_type": "code", "source": 3}]}"#, "neither a string"),
            (r#"{"cells": [{"cell_type": "code", "source": [1]}]}"#, "other than strings"),
            (r#"{"cells": [{"cell_type": "sql", "source": ""}]}"#, "unknown `cell_type`"),
            (r#"{"cells": [3]}"#, "not a JSON object"),
        ];
        for (text, says) in cases {
            let e = Notebook::parse(text.into()).unwrap_err().to_string();
            assert!(e.contains(says), "{text}: {e}");
        }
    }

    #[test]
    fn other_languages_are_not_python() {
        let r = r#"{"cells": [{"cell_type": "code", "source": "x"}], "metadata": {"language_info": {"name": "R"}}}"#;
        assert!(!Notebook::parse(r.into()).unwrap().cells[0].python);
        let sql = r#"{"cells": [{"cell_type": "code", "metadata": {"vscode": {"languageId": "sql"}}, "source": "x"}]}"#;
        assert!(!Notebook::parse(sql.into()).unwrap().cells[0].python);
    }

    #[test]
    fn concat_places_each_cell_on_its_own_lines() {
        let c = Concat::build([(1, "a = 1"), (2, ""), (4, "%pwd\nb = 2\n"), (5, "c")]);
        assert_eq!(c.text, "a = 1\n...#\nb = 2\nc\n");
        assert_eq!(c.original, "a = 1\n%pwd\nb = 2\nc\n");
        assert_eq!(
            c.parts.iter().map(|p| (p.cell, p.start, p.len, p.row)).collect::<Vec<_>>(),
            [(1, 0, 5, 0), (2, 6, 0, 1), (4, 6, 11, 1), (5, 17, 1, 3)]
        );
        assert_eq!(c.part_at(5), Some(0));
        assert_eq!(c.part_at(6), Some(2));
        assert_eq!(c.part_at(17), Some(3));
        assert_eq!(c.part_at_row(2), Some(2));
        assert!(!c.parts[2].holds(crate::text::TextRange::new(7, 8)));
        assert!(c.parts[2].holds(crate::text::TextRange::new(11, 16)));
    }
}
