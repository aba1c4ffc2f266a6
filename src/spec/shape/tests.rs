use super::*;

#[test]
fn edit_distance_counts_single_edits() {
    assert_eq!(edit_distance("max_concurency", "max_concurrency"), 1);
    assert_eq!(edit_distance("", "abc"), 3);
    assert_eq!(edit_distance("kitten", "sitting"), 3);
}

#[test]
fn typos_get_a_suggestion_and_strangers_the_list() {
    assert_eq!(unknown_key_message("pagesize", SOURCE), "unknown key; did you mean `page_size`?");
    assert!(unknown_key_message("zzzzzzzzzz", SOURCE).starts_with("unknown key (this table takes: base_url, "));
}
