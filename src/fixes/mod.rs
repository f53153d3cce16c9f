//! Fix kinds: what a failing rule's fix may do, and how each change is previewed, applied,
//! verified and undone.

pub mod spec;
