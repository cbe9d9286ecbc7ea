//! "Did you mean" for ids typed by people: devices, toolchains, rule codes and names, stages.

/// The candidate closest to `given`, if it is close enough to be a plausible typo or abbreviation.
pub fn did_you_mean<'a, I>(given: &str, candidates: I) -> Option<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    let given_lc = given.to_ascii_lowercase();
    if given_lc.is_empty() {
        return None;
    }
    let mut best: Option<(usize, &'a str)> = None;
    for candidate in candidates {
        let cand_lc = candidate.to_ascii_lowercase();
        // An abbreviation ("b70" for "arc-pro-b70") is as good as a one-letter typo.
        let contained = cand_lc.contains(&given_lc) || given_lc.contains(&cand_lc);
        let score = if given_lc.len() >= 3 && contained { 1 } else { edit_distance(&given_lc, &cand_lc) };
        let limit = (given_lc.chars().count().max(cand_lc.chars().count()) / 3).max(2);
        if score <= limit && best.is_none_or(|(s, _)| score < s) {
            best = Some((score, candidate));
        }
    }
    best.map(|(_, c)| c)
}

/// Levenshtein distance over characters.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = prev[j] + usize::from(ca != *cb);
            cur[j + 1] = substitution.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEVICES: [&str; 4] = ["arc-pro-b70", "arc-pro-b60", "arc-a770", "max-1550"];

    #[test]
    fn abbreviation_finds_the_full_id() {
        assert_eq!(did_you_mean("b70", DEVICES), Some("arc-pro-b70"));
    }

    #[test]
    fn typo_finds_the_nearest_id() {
        assert_eq!(did_you_mean("arc-a77O", DEVICES), Some("arc-a770"));
        assert_eq!(did_you_mean("max-1500", DEVICES), Some("max-1550"));
    }

    #[test]
    fn unrelated_word_suggests_nothing() {
        assert_eq!(did_you_mean("rtx-4090-super", DEVICES), None);
        assert_eq!(did_you_mean("", DEVICES), None);
    }

    #[test]
    fn distance_counts_edits() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("same", "same"), 0);
    }
}
