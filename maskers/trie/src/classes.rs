//! The walk over token classes: a trie of one representative per class.
//!
//! Tokens of one class realise the same lexer span from every lexer point
//! ([`munch_tokens`]), and whether a token is allowed depends only on the spans it
//! realises from the heads' points and on the heads' stacks. So a walk over the
//! representatives decides every class, and the allowed classes expand to the allowed tokens.
//! The walk itself is the token walk unchanged, over a trie whose entries are class indices
//! (entry `TokenId(c)` is class `c`), with masks over the class indices.

use std::sync::Arc;

use munch_glr::mask::{MaskMut, TokenMask};
use munch_tokens::{ClassId, ClassSet, ExpandCache, TokenClasses};
use munch_vocab::{TokenId, TokenTrie, Vocabulary};

use crate::Space;

/// The class walk's tables: the classes and the representatives' trie.
pub(crate) struct ClassWalk {
    classes: Arc<TokenClasses>,
    space: Space,
}

impl ClassWalk {
    /// The walk over `classes`, built for `vocab`.
    pub(crate) fn new(classes: Arc<TokenClasses>, vocab: &Vocabulary, lexer_states: usize) -> Self {
        let entries = (0..classes.len()).map(|c| {
            let rep = classes.representative(ClassId::from_usize(c));
            // Members of a class are text tokens: they have bytes.
            (
                TokenId::from_usize(c),
                vocab.token_bytes(rep).unwrap_or_default(),
            )
        });
        let trie = TokenTrie::from_tokens(entries)
            .expect("representatives are text tokens of a checked vocabulary");
        let space = Space::new(Some(trie), classes.len(), 1, lexer_states);
        ClassWalk { classes, space }
    }

    pub(crate) fn classes(&self) -> &Arc<TokenClasses> {
        &self.classes
    }

    pub(crate) fn space(&self) -> &Space {
        &self.space
    }

    /// Sets `mask` to the members of the classes set in `class_mask` (a mask over class
    /// indices); `set` and `cache` are scratch (masks along a text repeat, so the cache of
    /// recent expansions usually makes this one copy of the words).
    pub(crate) fn expand(
        &self,
        class_mask: &TokenMask,
        set: &mut ClassSet,
        cache: &mut ExpandCache,
        mask: &mut MaskMut<'_>,
    ) {
        set.copy_from_u32_words(class_mask.words());
        self.classes.expand_cached(cache, set, mask.words_mut());
    }
}

#[cfg(test)]
mod tests {

    use munch_glr::mask::{Masker, Oracle};
    use munch_glr::parser::{Parser, ParserState};
    use munch_testkit::grammar::{builtin, syncode};
    use munch_testkit::vocab;

    use super::*;
    use crate::TrieMasker;

    /// Every byte, the maskers' corner words, and words that repeat one shape (so that classes
    /// have several members) or come from Go; the last id is EOS.
    fn synthetic_vocab() -> Arc<Vocabulary> {
        let mut words = vocab::corners();
        words.extend_from_slice(&[
            b"abc", b"xyz", b" abc", b" xyz", b"ab", b"func", b" func", b"package", b" main",
            b":=", b"\n\t", b"return", b"fmt",
        ]);
        vocab::bytes_and(&words)
    }

    /// Teacher-forces `text`: the class walk equals the token walk at every step and the oracle
    /// every `every` steps.
    fn check(parser: &Arc<Parser>, vocab: &Arc<Vocabulary>, text: &str, every: usize) {
        let tokens = TrieMasker::without_classes(Arc::clone(parser), Arc::clone(vocab));
        let classes =
            TrieMasker::new(Arc::clone(parser), Arc::clone(vocab), &Default::default()).unwrap();
        assert!(classes.classes().is_some());
        let oracle = Oracle::new(Arc::clone(vocab));
        let (mut tc, mut cc, mut oc) = (
            tokens.create_cache(),
            classes.create_cache(),
            oracle.create_cache(),
        );
        let mut state = ParserState::new(Arc::clone(parser));
        let forced = vocab.encode(text).unwrap();
        for step in 0..=forced.len() {
            let by_class = classes.mask(&mut cc, &state);
            let by_token = tokens.mask(&mut tc, &state);
            let context = |t: TokenId| {
                format!(
                    "{text:?} step {step}: token {t} {:?}",
                    String::from_utf8_lossy(vocab.token_bytes(t).unwrap_or(b"<special>"))
                )
            };
            if let Some(t) = by_class.first_difference(&by_token) {
                panic!(
                    "{}: classes {} / tokens {}",
                    context(t),
                    by_class.contains(t),
                    by_token.contains(t)
                );
            }
            if step % every == 0 {
                let exact = oracle.mask(&mut oc, &state);
                if let Some(t) = by_class.first_difference(&exact) {
                    panic!(
                        "{}: classes {} / oracle {}",
                        context(t),
                        by_class.contains(t),
                        exact.contains(t)
                    );
                }
            }
            let Some(&t) = forced.get(step) else { break };
            state.commit_token(vocab, t).unwrap();
        }
    }

    #[test]
    fn class_walk_equals_token_walk_on_synthetic_vocabularies() {
        let vocab = synthetic_vocab();
        let json = builtin("json");
        check(
            &json,
            &vocab,
            r#"{"a": [1, 2.5e3, -0.5, true, null], "b": {"c": "d\"e\u00e9"}}"#,
            1,
        );
        check(&json, &vocab, "  {\n\t\"é日\": \"αβ\" }  ", 1);
        let tricky = builtin("tricky");
        check(
            &tricky,
            &vocab,
            "if (x) if (y) z = 1; else print z; /* c */ iff = \"a\";",
            1,
        );
        let go = syncode("go");
        check(
            &go,
            &vocab,
            "package main\n\nfunc main() {\n\tx := 1\n\tx++\n\tfmt.Println(x)\n}\n",
            2,
        );
    }

    #[test]
    fn class_walk_equals_token_walk_on_llama3() {
        let vocab = Arc::new(Vocabulary::load("llama3").unwrap());
        let json = builtin("json");
        check(
            &json,
            &vocab,
            "{\"name\": \"munch\", \"list\": [1, -2.5e3, true, null], \"u\": \"日本語 🦀\"}",
            8,
        );
        let go = syncode("go");
        check(
            &go,
            &vocab,
            "package main\n\nfunc add(a int, b int) int {\n\treturn a + b // sum\n}\n",
            8,
        );
    }
}
