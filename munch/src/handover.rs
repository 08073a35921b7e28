//! Compiling in the background: mask at once with a masker that needs no tables, and hand over
//! to the one asked for when its build ends.
//!
//! A grammar that arrives with a request (a JSON Schema, a grammar prompt) must give its first
//! mask in about a millisecond, while the maskers with the lowest tails build tables first (the
//! token classes alone take milliseconds with a 128k vocabulary; the wda up to seconds on a
//! programming language). With [`Config::background`](crate::Config::background), [`Compiled::new`]
//! returns once the parser is built: masks come from the trie walk over every token, which
//! builds nothing ahead, while a thread builds the configured masker (and its fallback). Every
//! masker computes the same masks (the contract of [`Masker`]), so a matcher may switch in the
//! middle of a text; each switches at its next mask, keeping its parse state.
//!
//! [`Compiled::new`]: crate::Compiled::new

use std::sync::{Arc, Mutex, OnceLock};

use munch_glr::mask::{MaskCache, MaskMut, Masker};
use munch_glr::parser::ParserState;
use munch_vocab::Vocabulary;

/// A masker that delegates to `first` until `later` is set, then to `later`.
pub(crate) struct Handover {
    first: Arc<dyn Masker>,
    later: Arc<OnceLock<Later>>,
}

/// The masker built in the background, and a cache for it made on the build's thread: the
/// first matcher to switch takes that one instead of making its own at that mask (the wda's
/// writes a megabyte of result slots first, hundreds of microseconds).
pub(crate) struct Later {
    masker: Arc<dyn Masker>,
    ready: Mutex<Option<MaskCache>>,
}

impl Later {
    /// `masker` and one cache of it, made now.
    pub(crate) fn new(masker: Arc<dyn Masker>) -> Later {
        let ready = Mutex::new(Some(masker.create_cache()));
        Later { masker, ready }
    }

    /// The cache made ahead, if no matcher took it yet; else a new one.
    fn cache(&self) -> MaskCache {
        let ready = self.ready.lock().unwrap_or_else(|e| e.into_inner()).take();
        ready.unwrap_or_else(|| self.masker.create_cache())
    }
}

impl Handover {
    /// Masks with `first` until the cell is set.
    pub(crate) fn new(first: Arc<dyn Masker>, later: Arc<OnceLock<Later>>) -> Self {
        Handover { first, later }
    }

    /// The masker masks come from now.
    fn current(&self) -> &dyn Masker {
        match self.later.get() {
            Some(later) => later.masker.as_ref(),
            None => self.first.as_ref(),
        }
    }
}

/// Each side's scratch space: the later masker's is made when it first masks.
struct Caches {
    first: MaskCache,
    later: Option<MaskCache>,
}

impl Masker for Handover {
    fn name(&self) -> &str {
        self.current().name()
    }

    fn vocabulary(&self) -> &Vocabulary {
        self.first.vocabulary()
    }

    fn create_cache(&self) -> MaskCache {
        MaskCache::new(Caches {
            first: self.first.create_cache(),
            later: None,
        })
    }

    fn fill_into(&self, cache: &mut MaskCache, state: &ParserState, mask: MaskMut<'_>) {
        let caches = cache.get_mut::<Caches>();
        match self.later.get() {
            Some(later) => {
                let cache = caches.later.get_or_insert_with(|| later.cache());
                later.masker.fill_into(cache, state, mask);
            }
            None => self.first.fill_into(&mut caches.first, state, mask),
        }
    }
}

#[cfg(all(test, feature = "trie"))]
mod tests {
    use super::*;

    use munch_glr::mask::{Oracle, TokenMask};
    use munch_masker_trie::TrieMasker;

    #[test]
    fn masks_are_the_oracles_before_and_after_the_handover() {
        let parser = munch_testkit::grammar::parser(
            "start: pair (\",\" pair)*\npair: KEY \":\" VAL\nKEY: /[a-z]+/\nVAL: /[0-9]+/",
        );
        let vocab = Arc::new(munch_testkit::vocab::bytes_and(&[
            "ab", ":1", "12", ",a", "a:",
        ]));
        let first: Arc<dyn Masker> = Arc::new(TrieMasker::without_classes(
            Arc::clone(&parser),
            Arc::clone(&vocab),
        ));
        let later_masker: Arc<dyn Masker> = Arc::new(
            TrieMasker::new(Arc::clone(&parser), Arc::clone(&vocab), &Default::default()).unwrap(),
        );
        let cell = Arc::new(OnceLock::new());
        let handover = Handover::new(first, Arc::clone(&cell));
        let oracle = Oracle::new(Arc::clone(&vocab));
        let (mut cache, mut oracle_cache) = (handover.create_cache(), oracle.create_cache());
        let mut state = ParserState::new(Arc::clone(&parser));
        let mut mask = TokenMask::new(vocab.len());
        for (i, &b) in b"ab:12,c:3".iter().enumerate() {
            if i == 4 {
                assert!(cell.set(Later::new(Arc::clone(&later_masker))).is_ok());
                assert!(cell.get().unwrap().ready.lock().unwrap().is_some());
            }
            handover.fill_mask(&mut cache, &state, &mut mask);
            assert_eq!(
                mask,
                oracle.mask(&mut oracle_cache, &state),
                "before byte {i}"
            );
            state.commit_bytes(&[b]).unwrap();
        }
        assert!(cache.get_mut::<Caches>().later.is_some());
        // The switch took the cache made ahead; a second matcher makes its own.
        assert!(cell.get().unwrap().ready.lock().unwrap().is_none());
        let mut second = handover.create_cache();
        handover.fill_mask(&mut second, &state, &mut mask);
        assert_eq!(mask, oracle.mask(&mut oracle_cache, &state));
    }
}
