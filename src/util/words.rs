//! Counted nouns in messages: "1 unit", "2 units", never "1 units".

/// `n` and `noun`, plural unless `n` is one: `count(1, "file")` is
/// "1 file", `count(3, "file")` "3 files". Nouns ending in a consonant
/// and `y` take "ies" ("1 entry", "2 entries").
pub fn count(n: impl Into<u64>, noun: &str) -> String {
    let n = n.into();
    if n == 1 {
        return format!("1 {noun}");
    }
    match noun.strip_suffix('y') {
        Some(stem) if !stem.ends_with(['a', 'e', 'o', 'u']) => format!("{n} {stem}ies"),
        _ => format!("{n} {noun}s"),
    }
}

#[cfg(test)]
mod tests {
    use super::count;

    #[test]
    fn one_is_singular_and_every_other_count_plural() {
        assert_eq!(count(1u64, "unit"), "1 unit");
        assert_eq!(count(0u64, "unit"), "0 units");
        assert_eq!(count(2u64, "request"), "2 requests");
        assert_eq!(count(2u64, "entry"), "2 entries");
        assert_eq!(count(3u64, "day"), "3 days");
    }
}
