//! Edits the server sends: versioned to the document version they were computed for (a client
//! refuses them for any other), and as small as the change they make.

use tower_lsp::lsp_types::{
    DocumentChanges, OneOf, OptionalVersionedTextDocumentIdentifier, TextDocumentEdit, TextEdit, Url, WorkspaceEdit,
};

/// A workspace edit that only applies to the version it was computed for.
pub fn versioned_edit(uri: &Url, version: i32, edits: Vec<TextEdit>) -> WorkspaceEdit {
    WorkspaceEdit {
        document_changes: Some(DocumentChanges::Edits(vec![TextDocumentEdit {
            text_document: OptionalVersionedTextDocumentIdentifier { uri: uri.clone(), version: Some(version) },
            edits: edits.into_iter().map(OneOf::Left).collect(),
        }])),
        ..WorkspaceEdit::default()
    }
}

/// The smallest single replacement that turns `old` into `new`: (start, end in `old`, replacement).
pub fn minimal_replacement<'n>(old: &str, new: &'n str) -> Option<(usize, usize, &'n str)> {
    if old == new {
        return None;
    }
    let (ob, nb) = (old.as_bytes(), new.as_bytes());
    let mut pre = ob.iter().zip(nb).take_while(|(a, b)| a == b).count();
    while !old.is_char_boundary(pre) || !new.is_char_boundary(pre) {
        pre -= 1;
    }
    let max_suf = ob.len().min(nb.len()) - pre;
    let mut suf = ob.iter().rev().zip(nb.iter().rev()).take(max_suf).take_while(|(a, b)| a == b).count();
    while !old.is_char_boundary(ob.len() - suf) || !new.is_char_boundary(nb.len() - suf) {
        suf -= 1;
    }
    Some((pre, ob.len() - suf, &new[pre..nb.len() - suf]))
}

#[cfg(test)]
mod tests {
    use super::minimal_replacement;

    #[test]
    fn minimal_replacement_keeps_common_ends_on_char_boundaries() {
        assert_eq!(minimal_replacement("abc", "abc"), None);
        assert_eq!(minimal_replacement("num_warps=6)", "num_warps=8)"), Some((10, 11, "8")));
        // 'é' (c3 a9) and 'ê' (c3 aa) share a first byte; the edit must not split it.
        assert_eq!(minimal_replacement("xé", "xê"), Some((1, 3, "ê")));
        assert_eq!(minimal_replacement("aaa", "aa"), Some((2, 3, "")));
    }
}
