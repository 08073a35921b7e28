//! The Lark grammar language: text → [`crate::grammar::Grammar`].
