//! The engine: order, observe, evaluate. Takes a checked [`crate::playbook::RuleSet`] and a
//! [`crate::host::Host`] to a [`crate::report::Report`].

pub mod evaluate;
pub use crate::expr;
pub mod observe;
#[cfg(test)]
mod outputs_test;
pub mod timing;

pub use evaluate::{Options, evaluate};
