//! "Did you mean …?": the declared name closest to a misspelt one.

/// The candidates within a small edit distance of `name`, closest first:
/// one edit per three characters, at most two, so that short names do not
/// "resemble" everything.
pub(crate) fn close_names<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let max_distance = (name.chars().count() / 3).min(2);
    let mut close: Vec<(usize, &str)> = candidates
        .into_iter()
        .map(|c| (distance(name, c), c))
        .filter(|&(d, c)| d <= max_distance && c != name)
        .collect();
    close.sort();
    close.dedup();
    close.into_iter().map(|(_, c)| c).collect()
}

/// ` Did you mean "x"?` for the closest candidate, or nothing: ready to
/// append to a diagnostic's detail.
pub(crate) fn did_you_mean<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    match close_names(name, candidates).first() {
        Some(best) => format!(" Did you mean \"{best}\"?"),
        None => String::new(),
    }
}

/// Edit distance by characters, counting a swap of two neighbours as one
/// edit (optimal string alignment), since `lenght` is one slip, not two.
fn distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    // d[i][j]: the distance between the first i chars of a and first j of b.
    let mut d = vec![vec![0; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            d[i][j] = (d[i - 1][j] + 1).min(d[i][j - 1] + 1).min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d[i][j] = d[i][j].min(d[i - 2][j - 2] + 1);
            }
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measures_edits() {
        assert_eq!(distance("upper", "upper"), 0);
        assert_eq!(distance("uper", "upper"), 1);
        assert_eq!(distance("lenght", "length"), 1);
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(distance("", "abc"), 3);
    }

    #[test]
    fn suggests_the_closest_name() {
        assert_eq!(did_you_mean("nmae", ["name", "other"]), " Did you mean \"name\"?");
        assert_eq!(did_you_mean("zzzz", ["name"]), "");
        assert_eq!(close_names("jion", ["join", "json", "min"]), ["join", "json"]);
        assert_eq!(close_names("c", ["a", "b"]), Vec::<&str>::new());
        assert_eq!(close_names("random_id.y", ["random_id.x", "random_id.yy"]), ["random_id.x", "random_id.yy"]);
    }
}
