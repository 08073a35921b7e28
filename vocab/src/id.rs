//! Newtype ids, checked on construction.
//!
//! Every index that crosses a crate boundary has its own type so that a terminal id can never be
//! passed where a token id is expected. Each wraps a `u32`; `new` rejects values at or above
//! `LIMIT`, and `as_usize` is the way back to an index.

/// Defines a checked `u32` id type (munch's lexer defines its ids with this too).
#[doc(hidden)]
#[macro_export]
macro_rules! define_id {
    ($(#[$meta:meta])* $name:ident) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
        #[derive(serde::Serialize, serde::Deserialize)]
        #[serde(transparent)]
        pub struct $name(u32);

        impl $name {
            /// The largest number of distinct ids of this kind.
            pub const LIMIT: usize = u32::MAX as usize;

            /// The id for `index`, or `None` when `index >= Self::LIMIT`.
            #[inline]
            pub fn new(index: usize) -> Option<Self> {
                if index < Self::LIMIT {
                    Some(Self(index as u32))
                } else {
                    None
                }
            }

            /// The id for `index`.
            ///
            /// # Panics
            /// When `index >= Self::LIMIT`; use this only for indices bounded by a container
            /// that is itself checked against the limit when built.
            #[inline]
            pub fn from_usize(index: usize) -> Self {
                Self::new(index).expect(concat!(stringify!($name), " index out of range"))
            }

            /// The id as a raw `u32`.
            #[inline]
            pub fn as_u32(self) -> u32 {
                self.0
            }

            /// The id as an index.
            #[inline]
            pub fn as_usize(self) -> usize {
                self.0 as usize
            }
        }

        impl From<u32> for $name {
            #[inline]
            fn from(raw: u32) -> Self {
                Self(raw)
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                self.0.fmt(f)
            }
        }
    };
}

define_id!(
    /// A vocabulary token id, as the tokenizer numbers them.
    TokenId
);
