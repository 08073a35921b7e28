//! # munch-masker-trie
//!
//! The reference masker: a depth-first walk of the vocabulary's byte trie that lexes each token
//! speculatively from every head of the parser state, prunes a subtree as soon as its prefix is
//! dead, and marks the tokens whose bytes leave the state live. Cheap to build (nothing beyond
//! the vocabulary's trie), exact by construction, and the masker the others are checked against
//! besides the oracle.
//!
//! ## How a walk goes
//!
//! The trie is stored in preorder, so the walk is a linear scan over node indices that jumps
//! past a dead node's subtree. Heads of the state are independent (the state after a token is
//! the union of what each head becomes), so the walk carries, per prefix, a small list of
//! configurations `(stack, lexer state)`:
//!
//! - **Inside a lexeme** (most bytes): only the lexer state moves, one DFA lookup. The
//!   configuration stays iff its lexer state can still complete a terminal that its stack can
//!   shift, or an ignored one. Which terminals a stack shifts is decided lazily, one terminal
//!   at a time when a walk first asks (most walks ask about a few terminals of a stack), and
//!   kept for the rest of the mask.
//! - **At a lexeme boundary** (a byte that does not extend a completed lexeme, or begins a
//!   character that may not: [`Lexer::next_inhibited`] is not dead): each tied terminal is
//!   shifted onto the stack with [`Parser::shift_from`] — speculative GSS nodes, memoised per
//!   (stack, terminal) for the whole mask — and the byte starts a new lexeme (in a pending
//!   state in the second case, while the configuration that extends the lexeme goes on too:
//!   the rest of the character kills one of them).
//! - **Precomputed lexemes**: for a lexer state and a trie node (the root for each head, a
//!   boundary node for a lexeme started there), one DFA-only walk of the subtree records which
//!   tokens stay in that lexeme, grouped by the state they end in, and which subtrees hold a
//!   boundary. A mask ORs the groups whose end state the stack can still complete and walks only
//!   the boundary subtrees. Root tables live in the masker (built on first use, or by
//!   [`TrieMasker::prepare`]); tables below boundary nodes in each thread's cache.
//!
//! - **Token classes** ([`TrieMasker::new`]): tokens that realise the same lexer span
//!   from every lexer point ([`munch_tokens`]) are allowed or refused together, so the walk
//!   can run over a trie of one representative per class (0.2–5 % of the vocabulary for
//!   SynCode's grammars), and expand the classes it allows to token ids at the end
//!   (`classes.rs`). The classes alone ([`TokenClasses::build`], no span tables) take
//!   milliseconds to tens of milliseconds with a 128k vocabulary (a walk of its trie per block
//!   of lexer points; `bench/PERFORMANCE.md` has the figures), so [`TrieMasker::new`]
//!   (nothing to build) stays the library's default; the `munch` facade builds with classes.
//!
//! - **Recent masks**: a mask depends only on each head's GSS node, lexer state and inhibitor
//!   (EOS is decided apart), and GSS node ids are never reused, so each cache keeps the last
//!   few masks by those keys. A token that stays inside one lexeme (a comment, a string) leaves
//!   the nodes unchanged and often the lexer state too, and a rollback returns to recent heads:
//!   such a mask is one copy of the words.
//!
//! A token is allowed iff some configuration survives its last byte. Keeping a lexeme that is
//! complete at the last byte and can still grow open, instead of forking an inhibited branch
//! as `commit` does, is equivalent for liveness: the inhibited branch is live iff its terminal
//! can be shifted, and that terminal is in the open lexer state's reachable set. The oracle cross-checks all of
//! this on every test corpus.

#![deny(missing_docs)]

mod classes;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};

use smallvec::SmallVec;

use ahash::AHashMap;
use munch_glr::gss::{GssNode, GssNodeId};
use munch_glr::mask::{set_eos, IndentFix, MaskCache, MaskMut, Masker, TokenMask};
use munch_glr::parser::{Parser, ParserState, ShiftCache};
use munch_lexer::dfa::{Lexer, TerminalSet};
use munch_lexer::{LexState, TerminalId};
use munch_tokens::{ClassSet, ExpandCache, SpansBuildError, SpansConfig, TokenClasses, TokenSpans};
use munch_vocab::{TokenId, TokenTrie, TrieNode, Vocabulary};

/// The trie masker's build options.
#[derive(Clone, Debug)]
pub struct TrieConfig {
    /// Walk one representative per token class (`true`, the default; the classes take
    /// milliseconds to build and give the lower tail) or every token of the vocabulary's trie
    /// (`false`: nothing built ahead).
    pub classes: bool,
    /// The token classes' build budgets.
    pub spans: SpansConfig,
}

impl Default for TrieConfig {
    fn default() -> Self {
        TrieConfig {
            classes: true,
            spans: SpansConfig::default(),
        }
    }
}

/// What a trie masker walks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrieStats {
    /// Token classes walked (`None`: every token of the vocabulary).
    pub token_classes: Option<usize>,
    /// Text tokens of the vocabulary.
    pub text_tokens: usize,
}

/// The trie masker. Immutable, `Send + Sync`.
pub struct TrieMasker {
    parser: Arc<Parser>,
    vocab: Arc<Vocabulary>,
    /// The walk over every text token (the vocabulary's trie); used when there are no classes.
    tokens: Space,
    /// The walk over one representative per token class, if built with classes.
    classes: Option<classes::ClassWalk>,
    /// The `%ignore`d terminals: reaching one keeps a head live.
    ignored: TerminalSet,
    /// Exact answers for the tokens the indentation context decides (`postlex = python`).
    indent: Option<Arc<IndentFix>>,
    /// A head's lexer state gets its [`Inside`] table once a walk that started there without
    /// it entered more trie nodes than this ([`TrieMasker::table_after`]; `None`: a
    /// [`TABLE_AFTER_SHARE`]th of the walked trie's nodes).
    table_after: Option<u32>,
}

/// By default a lexer state gets its table once a walk from it without the table entered more
/// than this share of the trie's nodes (about 4,300 of Llama 3's 274k). A walk without the
/// table enters every node whose lexeme the stack can still take; with it, only subtrees that
/// cross a lexeme boundary, but the table itself walks every node the lexer alone keeps live
/// (the whole trie from a state inside a JSON string). Where the parser takes a few terminals
/// (`{` at the start of a JSON document) the walk without the table enters a few hundred
/// nodes, a small part of what building the table would; on a small trie (one token per
/// class) tables are cheap and built almost at once.
const TABLE_AFTER_SHARE: usize = 64;

/// What one kind of walk runs over: a trie whose entries are ids in `0..len`, and the tables
/// precomputed for it.
struct Space {
    /// The trie; `None` for the vocabulary's own (entries are token ids).
    trie: Option<TokenTrie>,
    /// The number of ids the trie's entries range over (the size of the walk's masks).
    len: usize,
    /// Tells this space's tables apart in the per-thread cache.
    id: u8,
    /// Per lexer state, built on first use: what a walk from that state does while it stays
    /// inside one lexeme.
    inside: Vec<OnceLock<Arc<Inside>>>,
    /// The same from the start state for a head whose first byte must not extend the
    /// inhibiting lexer state (by that state).
    inside_inhibited: Vec<OnceLock<Arc<Inside>>>,
    /// Per entry of `inside` and `inside_inhibited` whose table is not built: 0 if no walk
    /// started there yet, else 1 + the trie nodes the last walk that started there without
    /// the table entered (see [`TrieMasker::table_after`]).
    walked: Vec<AtomicU32>,
    walked_inhibited: Vec<AtomicU32>,
}

impl Space {
    fn new(trie: Option<TokenTrie>, len: usize, id: u8, lexer_states: usize) -> Space {
        Space {
            trie,
            len,
            id,
            inside: (0..lexer_states).map(|_| OnceLock::new()).collect(),
            inside_inhibited: (0..lexer_states).map(|_| OnceLock::new()).collect(),
            walked: (0..lexer_states).map(|_| AtomicU32::new(0)).collect(),
            walked_inhibited: (0..lexer_states).map(|_| AtomicU32::new(0)).collect(),
        }
    }

    /// The walk record of a head at `s` with `inhibitor` (see [`Space::walked`]).
    fn walked(&self, s: LexState, inhibitor: Option<LexState>) -> &AtomicU32 {
        match inhibitor {
            None => &self.walked[s.as_usize()],
            Some(i) => &self.walked_inhibited[i.as_usize()],
        }
    }
}

impl TrieMasker {
    /// A trie masker for `parser`'s grammar over `vocab`: with [`TrieConfig::classes`] (the
    /// default), builds the token classes of `vocab` under `parser`'s lexer first (see
    /// [`TrieMasker::with_spans`]) and walks one representative per class; without, walks
    /// every token ([`TrieMasker::without_classes`]).
    ///
    /// Errors: a budget of `config.spans` exceeded while building the classes.
    pub fn new(
        parser: Arc<Parser>,
        vocab: Arc<Vocabulary>,
        config: &TrieConfig,
    ) -> Result<Self, SpansBuildError> {
        if !config.classes {
            return Ok(Self::without_classes(parser, vocab));
        }
        let classes = TokenClasses::build(parser.lexer(), &vocab, &config.spans)?;
        Ok(Self::with_token_classes(parser, vocab, Arc::new(classes)))
    }

    /// A trie masker for `parser`'s grammar over `vocab`. Building costs nothing beyond the
    /// vocabulary's trie, which the vocabulary already holds: the per-lexer-state tables are
    /// built on first use (a few milliseconds each with a 128k vocabulary).
    pub fn without_classes(parser: Arc<Parser>, vocab: Arc<Vocabulary>) -> Self {
        let terminals = parser.terminal_len();
        let mut ignored = TerminalSet::new(terminals);
        for t in (0..terminals).map(TerminalId::from_usize) {
            if parser.is_ignored(t) {
                ignored.insert(t);
            }
        }
        let states = parser.lexer().state_len();
        TrieMasker {
            tokens: Space::new(None, vocab.len(), 0, states),
            classes: None,
            indent: IndentFix::new(&parser).map(Arc::new),
            parser,
            vocab,
            ignored,
            table_after: None,
        }
    }

    /// Sets how many trie nodes a walk from a head's lexer state may enter without that
    /// state's precomputed table before the table is built (by default a 64th of the trie's
    /// nodes; 0 builds each table at its first use). The table is a walk of every node the
    /// lexer keeps live from that state, which costs more than a walk the parser prunes early,
    /// such as the first mask of a JSON document; a state whose walks enter more nodes gets
    /// its table at its next use. Masks are the same either way.
    pub fn table_after(mut self, nodes: u32) -> Self {
        self.table_after = Some(nodes);
        self
    }

    /// A trie masker that walks one representative per class of `spans` (see
    /// [`TrieMasker::with_token_classes`]); for a caller that has the spans already.
    ///
    /// # Panics
    /// If `spans` was not built for `vocab`.
    pub fn with_spans(parser: Arc<Parser>, vocab: Arc<Vocabulary>, spans: Arc<TokenSpans>) -> Self {
        Self::with_token_classes(parser, vocab, Arc::clone(spans.shared_classes()))
    }

    /// A trie masker that walks one representative per class of `classes` and expands the
    /// classes it allows to token ids. The masks are exactly [`TrieMasker::new`]'s; the walk
    /// visits a trie of the classes' representatives instead of the whole vocabulary.
    ///
    /// # Panics
    /// If `classes` was not built for `vocab` (it ranges over another number of ids).
    /// Building it for another lexer than `parser`'s is a caller bug that makes masks wrong.
    pub fn with_token_classes(
        parser: Arc<Parser>,
        vocab: Arc<Vocabulary>,
        classes: Arc<TokenClasses>,
    ) -> Self {
        assert_eq!(
            classes.vocab_len(),
            vocab.len(),
            "token classes built for another vocabulary"
        );
        // Every mask expands classes: their tables are part of the build, not the first mask.
        classes.prepare_expansion();
        let mut masker = Self::without_classes(parser, vocab);
        let states = masker.parser.lexer().state_len();
        masker.classes = Some(classes::ClassWalk::new(classes, &masker.vocab, states));
        masker
    }

    /// What the masker walks.
    pub fn stats(&self) -> TrieStats {
        TrieStats {
            token_classes: self.classes().map(|c| c.len()),
            text_tokens: self.vocab.trie().token_len(),
        }
    }

    /// The token classes the walk uses, if built with classes.
    pub fn classes(&self) -> Option<&Arc<TokenClasses>> {
        self.classes.as_ref().map(|c| c.classes())
    }

    /// The space the walk runs over.
    fn space(&self) -> &Space {
        match &self.classes {
            Some(c) => c.space(),
            None => &self.tokens,
        }
    }

    /// The trie of `space`.
    fn trie<'a>(&'a self, space: &'a Space) -> &'a TokenTrie {
        space.trie.as_ref().unwrap_or_else(|| self.vocab.trie())
    }
}

impl TrieMasker {
    /// Builds every per-lexer-state table now instead of on first use, trading build time
    /// (one DFA walk of the trie per lexer state) for masks without first-use spikes.
    pub fn prepare(&self) {
        let lexer = self.parser.lexer();
        let space = self.space();
        for s in (0..lexer.state_len()).map(LexState::from_usize) {
            if !lexer.is_dead(s) {
                self.inside(space, s, None);
                if lexer.inhibits(s) {
                    self.inside(space, lexer.start(), Some(s));
                }
            }
        }
    }
}

/// A configuration of the walk: a stack (index into [`Cache::stacks`]), a lexer state, and the
/// [`Inside`] table (index into [`Cache::active`]) of the lexeme it is in, which already counts
/// every token below that stays in this lexeme, so the walk only follows the configuration into
/// subtrees with a lexeme boundary ([`NO_SHORTCUT`]: no table, walk everything).
type Config = (u32, LexState, u32);

/// The third field of a [`Config`] that has no precomputed [`Inside`] to lean on.
const NO_SHORTCUT: u32 = u32::MAX;

/// What a walk from one lexer state, below one trie node, does while it stays inside one lexeme
/// (no parser needed). Built from the root for each base head's lexer state, and below a
/// boundary node for the lexeme that node's byte starts.
struct Inside {
    /// The trie node the walk starts below.
    root: usize,
    /// Tokens below `root` whose bytes keep the lexeme growing, by the state they end in. Such a
    /// token is allowed iff its end state can still complete a terminal the stack takes.
    groups: Vec<(LexState, Group)>,
    /// Bit `n - root - 1`: the subtree of trie node `n` holds a lexeme boundary (a byte that does
    /// not extend a completed lexeme), so the walk must go there.
    boundary: Vec<u64>,
}

/// A set of tokens: a whole mask when it holds many (cheap to OR), else a list.
enum Group {
    Mask(TokenMask),
    List(Vec<TokenId>),
}

/// A group from the root of more than `words / MASK_WORDS_PER_TOKEN` tokens (`words`: the
/// mask's 32-bit words) is a mask: setting one listed token costs about as much as ORing this
/// many words.
const MASK_WORDS_PER_TOKEN: usize = 8;

impl Group {
    fn add_to(&self, mask: &mut MaskMut<'_>) {
        match self {
            Group::Mask(m) => mask.union_with(m),
            Group::List(tokens) => tokens.iter().for_each(|&t| mask.insert(t)),
        }
    }
}

/// A stack the walk can be on: a real head's node, or speculative nodes after shifting
/// terminals past a lexeme boundary.
struct Stack {
    frontier: SmallVec<[GssNode; 2]>,
    /// Whether the frontier is speculative (made by [`TrieMasker::shift`] for this mask):
    /// its questions are not memoised, since no later one names its nodes.
    speculative: bool,
    /// Terminals asked about so far ([`TrieMasker::takes_any`] decides them lazily: most
    /// walks ask about a few terminals of a stack, not all of them).
    known: TerminalSet,
    /// The known terminals this stack can shift, plus the ignored ones: reaching one keeps a
    /// configuration live.
    yes: TerminalSet,
}

/// Scratch space of [`TrieMasker`], reused across masks.
struct Cache {
    /// The parser's answers about real GSS nodes (the heads' stacks), kept across masks;
    /// speculative stacks ask [`Parser::can_shift_once`] instead, as no later mask names them.
    shift: ShiftCache,
    /// The walk's stacks are `stacks[..live_stacks]`; those past it are spent, kept so that
    /// their sets' buffers serve the next stacks (a walk makes a stack at every lexeme
    /// boundary it looks past).
    stacks: Vec<Stack>,
    live_stacks: usize,
    /// `(stack, terminal)` → the stack after shifting it (`None`: cannot be shifted).
    shifted: AHashMap<(u32, TerminalId), Option<u32>>,
    /// `frames[d]`: the configurations after the first `d` bytes of the current path.
    frames: Vec<SmallVec<[Config; 2]>>,
    /// Each base head's inhibitor: the first byte must not extend it.
    inhibitors: Vec<Option<LexState>>,
    /// Each base head's lexer state.
    base_lex: Vec<LexState>,
    /// The [`Inside`] tables in use by this mask's configurations.
    active: Vec<Arc<Inside>>,
    /// Tables below boundary nodes, by (space, lexer state, node); kept across masks, bounded.
    below: AHashMap<(u8, LexState, u32), Arc<Inside>>,
    /// The class walk's mask over class ids, the same as a class set, and recent expansions
    /// of class sets to token masks.
    class_mask: TokenMask,
    class_set: ClassSet,
    expand: ExpandCache,
    /// What the last walk did.
    stats: WalkStats,
    /// The last few masks (EOS left out), by the heads they were computed for; `recent_next`
    /// is the slot the next one replaces.
    recent: Vec<(HeadsKey, TokenMask)>,
    recent_next: usize,
}

/// What a mask depends on: each head's GSS node (ids are never reused, so an id names one
/// stack for the life of the process), lexer state and inhibitor. The walk reads nothing else
/// of the parser state, and EOS is decided apart, so equal keys give equal masks. A token that
/// stays inside one lexeme (a comment, a string, an identifier) leaves the nodes as they were
/// and often the lexer state too.
type HeadsKey = SmallVec<[(GssNodeId, LexState, Option<LexState>); 2]>;

/// How many recent masks a cache keeps.
const RECENT: usize = 4;

/// What one mask's walk did: diagnostics for profiling ([`TrieMasker::last_stats`]), not part
/// of any mask's contract.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WalkStats {
    /// The parser state's heads.
    pub heads: usize,
    /// Trie nodes the walk entered (the precomputed groups cover the others).
    pub nodes: usize,
    /// Configurations that crossed a lexeme boundary.
    pub boundaries: usize,
    /// Speculative shifts computed (the per-mask memo's misses).
    pub shifts: usize,
    /// Stacks whose set of shiftable terminals was computed.
    pub stacks: usize,
    /// Tables below boundary nodes built (the per-thread memo's misses).
    pub tables_built: usize,
    /// Whether the mask was a recent one for the same heads (nothing walked).
    pub reused: bool,
}

impl Masker for TrieMasker {
    fn name(&self) -> &str {
        "trie"
    }

    fn vocabulary(&self) -> &Vocabulary {
        &self.vocab
    }

    fn create_cache(&self) -> MaskCache {
        MaskCache::new(Cache {
            shift: ShiftCache::new(),
            stacks: Vec::new(),
            live_stacks: 0,
            shifted: AHashMap::new(),
            frames: Vec::new(),
            inhibitors: Vec::new(),
            base_lex: Vec::new(),
            active: Vec::new(),
            below: AHashMap::new(),
            class_mask: TokenMask::new(self.classes.as_ref().map_or(0, |c| c.space().len)),
            class_set: self
                .classes
                .as_ref()
                .map_or_else(ClassSet::default, |c| c.classes().empty_set()),
            expand: ExpandCache::new(),
            stats: WalkStats::default(),
            recent: Vec::with_capacity(RECENT),
            recent_next: 0,
        })
    }

    fn fill_into(&self, cache: &mut MaskCache, state: &ParserState, mask: MaskMut<'_>) {
        IndentFix::fill_or_plain(self.indent.as_deref(), &self.vocab, state, mask, |s, m| {
            self.fill_plain(cache, s, m)
        })
    }
}

impl TrieMasker {
    /// The mask of `state` with the newline terminal read as any other (exact without a
    /// post-lexer; see [`IndentFix`]).
    fn fill_plain(&self, cache: &mut MaskCache, state: &ParserState, mut mask: MaskMut<'_>) {
        let cache: &mut Cache = cache.get_mut();
        let key: HeadsKey = state
            .heads()
            .map(|h| (h.node().id(), h.lex_state(), h.inhibitor()))
            .collect();
        if let Some((_, recent)) = cache.recent.iter().find(|(k, _)| *k == key) {
            mask.words_mut().copy_from_slice(recent.words());
            cache.stats = WalkStats {
                heads: key.len(),
                reused: true,
                ..WalkStats::default()
            };
        } else {
            match &self.classes {
                None => self.walk(cache, state, &self.tokens, &mut mask),
                Some(classes) => {
                    let mut class_mask =
                        std::mem::replace(&mut cache.class_mask, TokenMask::new(0));
                    self.walk(cache, state, classes.space(), &mut class_mask.as_mut());
                    classes.expand(
                        &class_mask,
                        &mut cache.class_set,
                        &mut cache.expand,
                        &mut mask,
                    );
                    cache.class_mask = class_mask;
                }
            }
            if cache.recent.len() < RECENT {
                let copy = TokenMask::from_words(mask.words(), mask.len())
                    .expect("a MaskMut has the words of its length");
                cache.recent.push((key, copy));
            } else {
                let slot = &mut cache.recent[cache.recent_next];
                slot.0 = key;
                slot.1.words_mut().copy_from_slice(mask.words());
                cache.recent_next = (cache.recent_next + 1) % RECENT;
            }
        }
        set_eos(&self.vocab, state, &mut mask);
    }
}

impl TrieMasker {
    /// What the last mask computed with `cache` did (the cache must be this masker's).
    pub fn last_stats(&self, cache: &mut MaskCache) -> WalkStats {
        cache.get_mut::<Cache>().stats
    }

    /// Sets `mask` (over `space.len` ids) to the entries of `space`'s trie that `state` allows.
    fn walk(&self, cache: &mut Cache, state: &ParserState, space: &Space, mask: &mut MaskMut<'_>) {
        mask.clear();
        // GSS node ids are never reused, so the memo stays valid across masks; it is only
        // bounded.
        if cache.shift.len() > 1 << 16 {
            cache.shift.clear();
        }
        for spent in &mut cache.stacks[..cache.live_stacks] {
            spent.frontier.clear();
        }
        cache.live_stacks = 0;
        cache.shifted.clear();
        cache.inhibitors.clear();
        cache.base_lex.clear();
        cache.active.clear();
        cache.stats = WalkStats {
            heads: state.head_len(),
            ..WalkStats::default()
        };
        if cache.below.len() > 1 << 14 {
            cache.below.clear();
        }
        let mut base: SmallVec<[Config; 2]> = SmallVec::new();
        let mut without_table = false;
        for head in state.heads() {
            let stack = self.push_stack(cache, SmallVec::from_elem(head.node().clone(), 1), false);
            let s = head.lex_state();
            let origin = match self.shortcut(space, s, head.inhibitor()) {
                Some(table) => {
                    let table = Arc::clone(table);
                    self.add_allowed(cache, &table, stack, mask);
                    cache.active.push(table);
                    (cache.active.len() - 1) as u32
                }
                None => {
                    without_table = true;
                    NO_SHORTCUT
                }
            };
            base.push((stack, s, origin));
            cache.inhibitors.push(head.inhibitor());
            cache.base_lex.push(s);
        }
        cache.frames.clear();
        cache.frames.push(base);
        let trie = self.trie(space);
        let lexer = self.parser.lexer();
        let mut next: SmallVec<[Config; 2]> = SmallVec::new();
        for &(first, child, end) in trie.first_children() {
            // A first byte that no head reads, neither in its lexeme nor as the next one's,
            // leaves its subtree dead: skipped before its nodes are read.
            let read = cache.frames[0].iter().enumerate().any(|(i, &(_, s, _))| {
                let grown = match cache.inhibitors[i] {
                    Some(inh) => lexer.next_inhibited(inh, first),
                    None => lexer.next(s, first),
                };
                !lexer.is_dead(grown) || !lexer.is_dead(lexer.next_inhibited(s, first))
            });
            if !read {
                continue;
            }
            let (mut n, end) = (child.as_usize(), end.as_usize());
            while n < end {
                let node = TrieNode::from(n as u32);
                let depth = trie.depth(node);
                cache.stats.nodes += 1;
                cache.frames.truncate(depth);
                next.clear();
                let fresh_here =
                    self.step(cache, space, node, depth, trie.byte(node), &mut next, mask);
                if next.is_empty() {
                    // Liveness is monotone: no extension of a dead prefix is live; and a
                    // subtree left to the precomputed groups needs no walk.
                    n = trie.subtree_end(node).as_usize();
                    continue;
                }
                if fresh_here || next.iter().any(|c| c.2 == NO_SHORTCUT) {
                    for &t in trie.tokens_at(node) {
                        mask.insert(t);
                    }
                }
                cache.frames.push(next.clone());
                n += 1;
            }
        }
        if without_table {
            // The record of each head that walked without its table: this walk's nodes (all
            // heads' together: a state shared with a costly head gets its table sooner).
            let entered = u32::try_from(cache.stats.nodes).unwrap_or(u32::MAX);
            for (i, head) in state.heads().enumerate() {
                if cache.frames[0][i].2 == NO_SHORTCUT {
                    space
                        .walked(head.lex_state(), head.inhibitor())
                        .store(entered.saturating_add(1), Ordering::Relaxed);
                }
            }
        }
    }

    /// Adds a stack; returns its index.
    fn push_stack(
        &self,
        cache: &mut Cache,
        frontier: SmallVec<[GssNode; 2]>,
        speculative: bool,
    ) -> u32 {
        let i = cache.live_stacks;
        match cache.stacks.get_mut(i) {
            Some(spent) => {
                spent.frontier = frontier;
                spent.speculative = speculative;
                spent.known.clone_from(&self.ignored);
                spent.yes.clone_from(&self.ignored);
            }
            None => cache.stacks.push(Stack {
                frontier,
                speculative,
                known: self.ignored.clone(),
                yes: self.ignored.clone(),
            }),
        }
        cache.live_stacks += 1;
        cache.stats.stacks += 1;
        i as u32
    }

    /// Whether `stack` can shift some terminal of `wanted` or `wanted` holds an ignored one:
    /// then a lexeme that can still complete one of `wanted` keeps a configuration on `stack`
    /// live. Each terminal is decided once per stack, on first demand.
    fn takes_any(&self, cache: &mut Cache, stack: u32, wanted: &TerminalSet) -> bool {
        let Cache { stacks, shift, .. } = cache;
        let st = &mut stacks[stack as usize];
        if wanted.intersects(&st.yes) {
            return true;
        }
        if wanted.is_subset(&st.known) {
            return false;
        }
        for t in wanted.iter() {
            if st.known.insert(t)
                && st.frontier.iter().any(|n| {
                    if st.speculative {
                        self.parser.can_shift_once(n, t)
                    } else {
                        self.parser.can_shift(n, t, shift)
                    }
                })
            {
                st.yes.insert(t);
                return true;
            }
        }
        false
    }

    /// Adds the tokens of `table`'s groups whose end state can still complete a terminal that
    /// `stack` takes.
    fn add_allowed(&self, cache: &mut Cache, table: &Inside, stack: u32, mask: &mut MaskMut<'_>) {
        let lexer = self.parser.lexer();
        for (end, group) in &table.groups {
            if self.takes_any(cache, stack, lexer.reachable(*end)) {
                group.add_to(mask);
            }
        }
    }

    /// The stack after shifting `t` onto `stack`, memoised for this mask.
    fn shift(&self, cache: &mut Cache, stack: u32, t: TerminalId) -> Option<u32> {
        if let Some(&known) = cache.shifted.get(&(stack, t)) {
            return known;
        }
        // The whole frontier shifts at once so that new nodes merge per LR state, as in a
        // commit; node by node, an ambiguous grammar multiplies the frontier with every terminal.
        // A budget error means `commit` would refuse the token too: no stack.
        cache.stats.shifts += 1;
        let frontier = self
            .parser
            .shift_frontier(&cache.stacks[stack as usize].frontier, t)
            .unwrap_or_default();
        let result = (!frontier.is_empty()).then(|| self.push_stack(cache, frontier, true));
        cache.shifted.insert((stack, t), result);
        result
    }

    /// The configurations after `byte` (the edge into `node`), from those of
    /// `frames[depth - 1]`, into `out`. Returns whether a configuration started a lexeme at
    /// `node`: its table covers only the tokens below, so the tokens at `node` are the walk's
    /// to mark.
    #[allow(clippy::too_many_arguments)] // the walk's state, passed down rather than bundled
    fn step(
        &self,
        cache: &mut Cache,
        space: &Space,
        node: TrieNode,
        depth: usize,
        byte: u8,
        out: &mut SmallVec<[Config; 2]>,
        mask: &mut MaskMut<'_>,
    ) -> bool {
        let mut fresh_here = false;
        let lexer = self.parser.lexer();
        for i in 0..cache.frames[depth - 1].len() {
            let (stack, s, origin) = cache.frames[depth - 1][i];
            // A base head handed its lexeme over inhibited: it reads its first byte as that
            // branch, dead where the lexeme goes on (a pending state while the byte's
            // character may or may not extend it).
            let inhibitor = if depth == 1 {
                cache.inhibitors[i]
            } else {
                None
            };
            let grown = match inhibitor {
                Some(inh) => lexer.next_inhibited(inh, byte),
                None => lexer.next(s, byte),
            };
            if !lexer.is_dead(grown) {
                if origin != NO_SHORTCUT && !cache.active[origin as usize].has_boundary(node) {
                    // Every token below is inside the first lexeme: counted by the groups.
                    continue;
                }
                if self.takes_any(cache, stack, lexer.reachable(grown)) {
                    out.push((stack, grown, origin));
                }
            }
            // A lexeme boundary: each tied terminal goes to the parser, then `byte` starts the
            // next lexeme. Where `byte` extends the lexeme, or its terminals' look-ahead fails
            // on it, that branch is dead; where it begins a character that may or may not
            // extend it, both branches go on.
            let fresh = lexer.next_inhibited(s, byte);
            if lexer.is_dead(fresh) {
                continue;
            }
            cache.stats.boundaries += 1;
            for &t in lexer.accepted(s) {
                let after = if self.parser.is_ignored(t) {
                    Some(stack)
                } else {
                    self.shift(cache, stack, t)
                };
                let Some(after) = after else { continue };
                if out.iter().any(|c| c.0 == after && c.1 == fresh)
                    || !self.takes_any(cache, after, lexer.reachable(fresh))
                {
                    continue;
                }
                let key = (space.id, fresh, node.as_u32());
                let table = match cache.below.get(&key) {
                    Some(table) => Arc::clone(table),
                    None => {
                        cache.stats.tables_built += 1;
                        let trie = self.trie(space);
                        let table =
                            Arc::new(Inside::build(lexer, trie, space.len, fresh, None, node));
                        cache.below.insert(key, Arc::clone(&table));
                        table
                    }
                };
                self.add_allowed(cache, &table, after, mask);
                cache.active.push(table);
                out.push((after, fresh, (cache.active.len() - 1) as u32));
                fresh_here = true;
            }
        }
        fresh_here
    }

    /// The table a walk from a head at `s` (with `inhibitor`) leans on: `None` while walks
    /// that started there without it stayed within [`TrieMasker::table_after`] nodes.
    fn shortcut<'a>(
        &'a self,
        space: &'a Space,
        s: LexState,
        inhibitor: Option<LexState>,
    ) -> Option<&'a Arc<Inside>> {
        let built = match inhibitor {
            None => space.inside[s.as_usize()].get(),
            Some(i) => space.inside_inhibited[i.as_usize()].get(),
        };
        if built.is_some() {
            return built;
        }
        let walked = space.walked(s, inhibitor).load(Ordering::Relaxed);
        let after = self.table_after.unwrap_or_else(|| {
            u32::try_from(self.trie(space).node_len() / TABLE_AFTER_SHARE).unwrap_or(u32::MAX)
        });
        if after > 0 && (walked == 0 || walked - 1 <= after) {
            return None;
        }
        Some(self.inside(space, s, inhibitor))
    }

    /// The precomputed inside-the-lexeme walk from lexer state `s` (with the first byte
    /// constrained by `inhibitor`, if any), built on first use.
    fn inside<'a>(
        &'a self,
        space: &'a Space,
        s: LexState,
        inhibitor: Option<LexState>,
    ) -> &'a Arc<Inside> {
        let lexer = self.parser.lexer();
        let trie = self.trie(space);
        let root = trie.root();
        let len = space.len;
        match inhibitor {
            None => space.inside[s.as_usize()]
                .get_or_init(|| Arc::new(Inside::build(lexer, trie, len, s, None, root))),
            // An inhibited head's lexeme is empty: it is always at the start state.
            Some(i) => space.inside_inhibited[i.as_usize()]
                .get_or_init(|| Arc::new(Inside::build(lexer, trie, len, s, Some(i), root))),
        }
    }
}

impl Inside {
    /// Walks `trie` (entries in `0..len`) below `root` from lexer state `start` with the DFA
    /// alone.
    fn build(
        lexer: &Lexer,
        trie: &TokenTrie,
        len: usize,
        start: LexState,
        inhibitor: Option<LexState>,
        root: TrieNode,
    ) -> Inside {
        let base = root.as_usize();
        let end = trie.subtree_end(root).as_usize();
        let base_depth = trie.depth(root);
        let mut boundary = vec![0u64; (end - base).div_ceil(64)];
        let mut lists: Vec<(LexState, Vec<TokenId>)> = Vec::new();
        // `states[d]`: the lexer state after the first `d` bytes below `root`; `path[d]`: the
        // relative index of the node at that depth (`path[0]` unused).
        let mut states: Vec<LexState> = vec![start];
        let mut path: Vec<usize> = vec![0];
        let mut n = base + 1;
        while n < end {
            let node = TrieNode::from(n as u32);
            let depth = trie.depth(node) - base_depth;
            states.truncate(depth);
            path.truncate(depth);
            let s = states[depth - 1];
            let byte = trie.byte(node);
            let grown = match inhibitor {
                // The inhibited terminal may have been a shorter match.
                Some(i) if depth == 1 => lexer.next_inhibited(i, byte),
                _ => lexer.next(s, byte),
            };
            if !lexer.is_dead(lexer.next_inhibited(s, byte)) {
                // A boundary: this node and its ancestors hold one.
                let rel = n - base - 1;
                for &a in path.iter().skip(1).chain(std::iter::once(&rel)).rev() {
                    if boundary[a / 64] & (1 << (a % 64)) != 0 {
                        break;
                    }
                    boundary[a / 64] |= 1 << (a % 64);
                }
            }
            if lexer.is_dead(grown) {
                n = trie.subtree_end(node).as_usize();
                continue;
            }
            let tokens = trie.tokens_at(node);
            if !tokens.is_empty() {
                let group = match lists.iter().position(|(e, _)| *e == grown) {
                    Some(g) => g,
                    None => {
                        lists.push((grown, Vec::new()));
                        lists.len() - 1
                    }
                };
                lists[group].1.extend_from_slice(tokens);
            }
            states.push(grown);
            path.push(n - base - 1);
            n += 1;
        }
        // A mask is ORed a word at a time, a list a token at a time: a group from the root
        // takes the cheaper form (below a node, groups are small and kept as lists).
        let words = len.div_ceil(32);
        let groups = lists
            .into_iter()
            .map(|(end, tokens)| {
                let group = if base == 0 && tokens.len() > words / MASK_WORDS_PER_TOKEN {
                    let mut m = TokenMask::new(len);
                    tokens.iter().for_each(|&t| m.insert(t));
                    Group::Mask(m)
                } else {
                    Group::List(tokens)
                };
                (end, group)
            })
            .collect();
        Inside {
            root: base,
            groups,
            boundary,
        }
    }

    /// Whether the walk must enter `node` (a strict descendant of `root`).
    fn has_boundary(&self, node: TrieNode) -> bool {
        let n = node.as_usize() - self.root - 1;
        self.boundary[n / 64] & (1 << (n % 64)) != 0
    }
}
