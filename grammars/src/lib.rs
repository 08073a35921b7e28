//! grammars
