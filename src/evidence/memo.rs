//! One parse of a text per reader per process: several probes read the same kind from the same
//! file (the CUDA runtime messages feed `cuda.log`, `fabric_manager` and `nvml`'s text-only
//! reading; a kernel log feeds `kernel.log` and `driver_binding`), and a reader at 200 MB/s
//! parsing a large paste three times costs as much as the rest of the plan.
//!
//! A parse is kept for a text shared by [`crate::vocab::io::read_shared`] (or a part of it that
//! [`super::segment::segment_shared`] borrowed whole), found again by pointer, never by a
//! hash: two texts are one only if they are the same allocation, which the cache itself keeps
//! alive, so an address cannot be reused under it. A text nobody else holds any more (a file
//! read again after it changed) leaves its parse behind at the next insertion, as the
//! segmenter's own cache does.

use std::any::{Any, TypeId};
use std::sync::{Arc, Mutex};

type Entry = (Arc<String>, usize, TypeId, Arc<dyn Any + Send + Sync>);

/// `parse(text)`, computed once per (text, reader) in this process. The lock is not held while
/// parsing: two probes asking at the same moment may both parse, and the first result is kept.
pub(crate) fn parsed<T: Send + Sync + 'static>(text: &Arc<String>, parse: fn(&str) -> T) -> Arc<T> {
    static KEPT: Mutex<Vec<Entry>> = Mutex::new(Vec::new());
    let reader = parse as usize;
    let find = |kept: &[Entry]| {
        kept.iter()
            .find(|(t, r, ty, _)| Arc::ptr_eq(t, text) && *r == reader && *ty == TypeId::of::<T>())
            .and_then(|(_, _, _, v)| v.clone().downcast::<T>().ok())
    };
    if let Some(v) = find(&KEPT.lock().unwrap_or_else(|e| e.into_inner())) {
        return v;
    }
    let v = Arc::new(parse(text));
    let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(first) = find(&kept) {
        return first;
    }
    // texts only this cache still holds are gone for every caller
    kept.retain(|(t, ..)| Arc::strong_count(t) > 1);
    kept.push((text.clone(), reader, TypeId::of::<T>(), v.clone()));
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    static CALLS: AtomicUsize = AtomicUsize::new(0);
    fn count_lines(t: &str) -> usize {
        CALLS.fetch_add(1, Ordering::SeqCst);
        t.lines().count()
    }
    fn count_bytes(t: &str) -> usize {
        t.len()
    }

    #[test]
    fn one_text_is_parsed_once_per_reader_and_an_equal_copy_is_another_text() {
        let a = Arc::new("one\ntwo\nthree\n".to_string());
        let before = CALLS.load(Ordering::SeqCst);
        assert_eq!(*parsed(&a, count_lines), 3);
        assert_eq!(*parsed(&a, count_lines), 3);
        assert_eq!(CALLS.load(Ordering::SeqCst) - before, 1);
        // another reader of the same text has its own result
        assert_eq!(*parsed(&a, count_bytes), 14);
        // an equal text in another allocation is parsed again (never matched by content)
        let b = Arc::new(String::clone(&a));
        assert_eq!(*parsed(&b, count_lines), 3);
        assert_eq!(CALLS.load(Ordering::SeqCst) - before, 2);
    }

    #[test]
    fn a_text_nobody_holds_leaves_the_cache_at_the_next_insertion() {
        let gone = Arc::new("x\n".to_string());
        parsed(&gone, count_bytes);
        let weak = Arc::downgrade(&gone);
        drop(gone);
        let other = Arc::new("y\n".to_string());
        parsed(&other, count_bytes);
        assert!(weak.upgrade().is_none());
    }
}
