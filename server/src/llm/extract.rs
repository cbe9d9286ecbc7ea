//! Getting the candidate file out of a model's reply.

/// The reply held no fenced code block that looks like a kernel file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the reply contained no ```python code block with the complete file")]
pub struct NoCodeBlock;

/// The fenced block to use as the candidate: among ``` blocks tagged python/py or untagged, the last one
/// that contains `@triton.jit` or `class Model` (models often show a snippet first and the file last);
/// else the longest such block. An unterminated final fence (reply cut by max_tokens) does not count.
pub fn extract_code_block(reply: &str) -> Result<String, NoCodeBlock> {
    let blocks = fenced_blocks(reply);
    let usable: Vec<&(String, String)> =
        blocks.iter().filter(|(lang, _)| matches!(lang.as_str(), "" | "python" | "py" | "python3")).collect();
    if let Some((_, body)) = usable.iter().rev().find(|(_, b)| b.contains("@triton.jit") || b.contains("class Model")) {
        return Ok(body.clone());
    }
    usable.iter().max_by_key(|(_, b)| b.len()).filter(|(_, b)| !b.trim().is_empty()).map(|(_, b)| b.clone()).ok_or(NoCodeBlock)
}

/// (language tag, body) of every complete fenced block (``` or ~~~, three or more).
fn fenced_blocks(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut open: Option<(String, usize, char, String)> = None; // (lang, fence len, fence char, body)
    for line in text.split_inclusive('\n') {
        let t = line.trim_start();
        let fence_char = t.chars().next().filter(|c| *c == '`' || *c == '~');
        let fence_len = fence_char.map(|c| t.chars().take_while(|x| *x == c).count()).unwrap_or(0);
        match &mut open {
            None => {
                if let Some(c) = fence_char.filter(|_| fence_len >= 3) {
                    let lang = t[fence_len * c.len_utf8()..].split_whitespace().next().unwrap_or("").to_ascii_lowercase();
                    open = Some((lang, fence_len, c, String::new()));
                }
            }
            Some((lang, len, c, body)) => {
                if fence_char == Some(*c) && fence_len >= *len && t.trim_end().chars().all(|x| x == *c) {
                    out.push((std::mem::take(lang), std::mem::take(body)));
                    open = None;
                } else {
                    body.push_str(line);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_the_last_block_with_a_kernel() {
        let r = "Here is the idea:\n```python\nx = 1\n```\nFull file:\n```python\nimport triton\n@triton.jit\ndef k(): pass\n```\n";
        assert_eq!(extract_code_block(r).unwrap(), "import triton\n@triton.jit\ndef k(): pass\n");
    }

    #[test]
    fn untagged_and_tilde_fences_count() {
        assert_eq!(extract_code_block("~~~\nclass Model: pass\n~~~").unwrap(), "class Model: pass\n");
        assert_eq!(extract_code_block("```\na = 2\n```").unwrap(), "a = 2\n");
    }

    #[test]
    fn prose_or_cut_off_replies_have_no_block() {
        assert_eq!(extract_code_block("I would use larger tiles."), Err(NoCodeBlock));
        assert_eq!(extract_code_block("```python\n@triton.jit\ndef k(): ..."), Err(NoCodeBlock));
        assert_eq!(extract_code_block("```json\n{}\n```"), Err(NoCodeBlock));
    }
}
