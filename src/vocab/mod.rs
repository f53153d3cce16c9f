//! The shared vocabulary at the bottom of the crate (DESIGN.md "Layout"): what NVML readings
//! hold, where a run's time goes, small IO helpers, name suggestions. Everything above may use
//! it; it uses nothing of the crate above it (tests/layering.rs keeps it so).

pub mod gpustat_line;
pub mod io;
pub mod nvml;
pub mod paste;
pub mod record;
pub mod timing;

/// Most entries any list in a parser's output holds; the rest are counted, not kept.
pub const MAX_ITEMS: usize = 1000;

/// `hay` holds `needle` in any ASCII case, without lowercasing `hay`: found through the
/// needle's byte at `probe` (pick a rarer letter than its first, such as the `b` of `ib`, and
/// fewer places are compared). An empty needle is in every text; a `probe` past the needle's
/// end finds nothing.
#[inline]
pub fn contains_ignore_ascii_case(hay: &str, needle: &str, probe: usize) -> bool {
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    if n.is_empty() {
        return true;
    }
    let Some(&c) = n.get(probe) else {
        return false;
    };
    memchr::memchr2_iter(c.to_ascii_lowercase(), c.to_ascii_uppercase(), h).any(|i| {
        i >= probe
            && h.get(i - probe..i - probe + n.len())
                .is_some_and(|w| w.eq_ignore_ascii_case(n))
    })
}

/// Adds `s` to `v` unless it is there already or `v` holds [`MAX_ITEMS`].
pub fn push_unique(v: &mut Vec<String>, s: String) {
    if !v.contains(&s) && v.len() < MAX_ITEMS {
        v.push(s);
    }
}

/// Cuts `s` to at most `max` bytes on a char boundary, marking the cut with `…`.
pub fn clip(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while end > 0 && !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// "did you mean `x`?" for a name close to one of `known`.
pub fn did_you_mean<'a>(name: &str, known: impl IntoIterator<Item = &'a str>) -> Option<String> {
    known
        .into_iter()
        .map(|k| (strsim::jaro_winkler(name, k), k))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, k)| format!("did you mean `{k}`?"))
}
