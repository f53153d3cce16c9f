//! Fix kinds that change one piece of runtime state (a sysctl, a loaded module, a live mount)
//! and persist it in a file (sysctl.d, modules-load.d, fstab). The runtime part reads and
//! writes a JSON value; every other part is a file change handled by [`super::file`]. The
//! `runtime_and_file_kind!` macro writes the part dispatch once for every such kind.

use super::{FixCtx, FixError, Prepared, Prior, after_value};
use crate::report::PlannedChange;
use serde_json::Value;

pub trait RuntimeAndFile: Sync {
    /// The kind's parameters ([`super::Fix::Params`]).
    type Params: serde::de::DeserializeOwned;
    const NAME: &'static str;
    /// The part name of the runtime change (`runtime`, `remount`).
    const PART: &'static str;
    /// Every part this action would change now (runtime and file parts).
    fn prepare_parts(&self, params: &Self::Params, cx: &FixCtx) -> Result<Vec<Prepared>, FixError>;
    /// The runtime value now.
    fn read(&self, change: &PlannedChange, cx: &FixCtx) -> Result<Value, FixError>;
    fn write(&self, change: &PlannedChange, value: &Value, cx: &FixCtx) -> Result<(), FixError>;
    /// Read back after `write`: by default, the value must be exactly `after`.
    fn verify_runtime(&self, change: &PlannedChange, cx: &FixCtx) -> Result<(), FixError> {
        let now = self.read(change, cx)?;
        super::read_back(
            &change.target,
            now.to_string(),
            after_value(change).to_string(),
        )
    }
    /// Restore the value read before: by default, write it back.
    fn undo_runtime(
        &self,
        change: &PlannedChange,
        prior: &Value,
        cx: &FixCtx,
    ) -> Result<(), FixError> {
        self.write(change, prior, cx)
    }
}

/// `impl Fix` for a [`RuntimeAndFile`] type.
macro_rules! runtime_and_file_kind {
    ($T:ty) => {
        impl $crate::fixes::Fix for $T {
            type Params = <$T as $crate::fixes::runtime::RuntimeAndFile>::Params;
            fn name(&self) -> &'static str {
                <$T as $crate::fixes::runtime::RuntimeAndFile>::NAME
            }
            fn prepare(
                &self,
                params: &Self::Params,
                cx: &$crate::fixes::FixCtx,
            ) -> Result<Vec<$crate::fixes::Prepared>, $crate::fixes::FixError> {
                self.prepare_parts(params, cx)
            }
            fn fingerprint(
                &self,
                c: &$crate::report::PlannedChange,
                cx: &$crate::fixes::FixCtx,
            ) -> Result<String, $crate::fixes::FixError> {
                if c.part == <$T as $crate::fixes::runtime::RuntimeAndFile>::PART {
                    Ok($crate::fixes::value_fingerprint(&self.read(c, cx)?))
                } else {
                    $crate::fixes::file::file_fingerprint(c, cx)
                }
            }
            fn after_fingerprint(&self, c: &$crate::report::PlannedChange) -> String {
                if c.part == <$T as $crate::fixes::runtime::RuntimeAndFile>::PART {
                    $crate::fixes::value_fingerprint(&$crate::fixes::after_value(c))
                } else {
                    $crate::fixes::file::file_after_fingerprint(c)
                }
            }
            fn save(
                &self,
                c: &$crate::report::PlannedChange,
                cx: &$crate::fixes::FixCtx,
            ) -> Result<$crate::fixes::Prior, $crate::fixes::FixError> {
                if c.part == <$T as $crate::fixes::runtime::RuntimeAndFile>::PART {
                    Ok($crate::fixes::Prior::Value {
                        value: self.read(c, cx)?,
                    })
                } else {
                    $crate::fixes::file::file_save(c, cx)
                }
            }
            fn apply(
                &self,
                c: &$crate::report::PlannedChange,
                cx: &$crate::fixes::FixCtx,
            ) -> Result<(), $crate::fixes::FixError> {
                if c.part == <$T as $crate::fixes::runtime::RuntimeAndFile>::PART {
                    self.write(c, &$crate::fixes::after_value(c), cx)
                } else {
                    $crate::fixes::file::file_apply(c, cx)
                }
            }
            fn verify(
                &self,
                c: &$crate::report::PlannedChange,
                cx: &$crate::fixes::FixCtx,
            ) -> Result<(), $crate::fixes::FixError> {
                if c.part == <$T as $crate::fixes::runtime::RuntimeAndFile>::PART {
                    self.verify_runtime(c, cx)
                } else {
                    $crate::fixes::runtime::verify_file(c, cx)
                }
            }
            fn undo(
                &self,
                c: &$crate::report::PlannedChange,
                prior: &$crate::fixes::Prior,
                cx: &$crate::fixes::FixCtx,
            ) -> Result<(), $crate::fixes::FixError> {
                $crate::fixes::runtime::undo_part(self, c, prior, cx)
            }
        }
    };
}
pub(crate) use runtime_and_file_kind;

pub fn verify_file(c: &PlannedChange, cx: &FixCtx) -> Result<(), FixError> {
    super::read_back(
        &c.target,
        super::file::file_fingerprint(c, cx)?,
        super::file::file_after_fingerprint(c),
    )
}

pub fn undo_part<T: RuntimeAndFile>(
    k: &T,
    c: &PlannedChange,
    prior: &Prior,
    cx: &FixCtx,
) -> Result<(), FixError> {
    match (c.part == T::PART, prior) {
        (true, Prior::Value { value }) => k.undo_runtime(c, value, cx),
        (true, _) => Err(FixError::NoPrior {
            what: "runtime value",
        }),
        (false, _) => super::file::file_undo(c, prior, cx),
    }
}
