//! Exact masks under Python's indenter: [`IndentFix`].

use std::sync::{Arc, OnceLock, RwLock};

use ahash::AHashMap;
use munch_lexer::{LexState, TerminalId};
use munch_vocab::{TokenId, TrieNode, Vocabulary};

use super::{set_eos, MaskMut, TokenMask};
use crate::parser::{indent_bracket_delta, Head, NlAction, Parser, ParserState, ShiftCache};

/// Exact masks under Python's indenter (`postlex = python`), for every masker.
///
/// # Which answers the indentation context decides
///
/// A head's indentation context (its stack of widths, bracket depth, and the width of the
/// newline lexeme it is reading; see [`crate::parser::IndentCtx`]) enters a commit in two
/// places only: when a newline lexeme completes (the indenter's `NL`, `_INDENT`, `_DEDENT`s,
/// nothing inside brackets, or a dead branch on an inconsistent dedent), and when the text ends
/// inside a lexeme that may still become a newline (live inside brackets). Bracket terminals
/// change the depth, which only a later newline reads. A masker reads the GSS and the lexer
/// configurations, not the contexts: it treats the newline terminal as any other. So the
/// masker's answer is exact for every token whose lexing completes no newline lexeme and does
/// not end inside one, and [`IndentFix::fill`] splits the work:
///
/// - **Heads between lexemes or inside another lexeme** go to the masker, as a state of their
///   own. The tokens whose answer the context may change are found by running the lexer (not
///   the parser) over each token's bytes ([`needs_context`]), and answered again, from the
///   parser's tables or by committing them as the [`Oracle`](super::Oracle) does (see
///   below). Outside brackets, a newline completed at a
///   token's last byte changes nothing while the lexeme can still grow (the head reading on is
///   live exactly when the masker says), so these are the tokens that complete a newline
///   before their last byte (`":\n    x"`), or hold one inside brackets: a few hundred to a
///   few thousand.
/// - **Heads inside a lexeme that may become the newline** (after `"\n"`, inside a comment
///   that Lark's `_NEWLINE` absorbs, inside a docstring that SynCode's `_NL` absorbs) are
///   answered from each token's walk through that one lexeme. A commit of the token is the
///   union of its readings: the lexeme takes the whole token, or it ends after a prefix (the
///   longest one, or a shorter one that a longer reading waits on: a lazy quantifier, a
///   literal, a look-ahead) and the heads that completed it read the rest. When the lexeme takes the
///   whole token, the growing head is live exactly when the masker would say (the context
///   only adds bracket depth). When it ends after a prefix, the heads that completed it
///   depend on the lexer state there and, for the newline, on the indenter's action for the
///   prefix's width (an inconsistent dedent allows nothing; an indent pushes the width, which
///   the rest may read again): one commit and one exact mask of those heads (the fix through
///   the masker) per such key and mask, in which the rest is a bit when it is a token; rests
///   that are not tokens are put in classes of one [`signature`] from those heads (memoised
///   per group and heads) and answered per class, from the parser's tables or by one commit.
///   When the prefix is spaces and tabs that a fresh lexeme reads as one `%ignore`d
///   lexeme (both python.lark files ignore `[\t \f]+`), the token itself is looked up in the
///   masker's mask of those heads with no inhibitor: the common case, a line's indentation
///   and its first word in one token (`"    return"`), costs a bit-set operation. A completion
///   at the token's first byte is none of these: a sibling head, which the masker sees, made
///   it with the byte before.
///
/// # What is computed once
///
/// Both passes over the vocabulary are memoised, so that a mask costs work in proportion to
/// the classes of tokens whose answer the context may change, not to the vocabulary:
///
/// - Only a lexeme that begins with one of a few bytes (`"\n"`, `"\r"`, `"#"` in Lark's
///   python.lark; SynCode's adds the quotes and string prefixes of its docstrings) can become
///   the newline terminal. A token without such a byte, read from a head whose lexeme cannot
///   become one, never needs the context; the tokens that hold one are listed once, and
///   [`needs_context`] runs on those alone, once per head configuration (and skips a token
///   whose first byte ends the head's branch, or which a fresh lexeme reads as an uninhibited
///   one does).
/// - Per set of heads (lexer configuration and bracket depth), the tokens that need the
///   context are put in classes the parser cannot tell apart ([`signature`]: the lexemes each
///   path of the lexer completes, with the newline widths the indenter reads, and where it
///   ends; inside brackets `"\n"`, `"\n    "` and `"\n\n  "` are one class). A mask commits
///   one token per class, in the trie's order so that neighbours share the commit of their
///   common prefix; none where a prefix of it that no class holds is a token the masker
///   refused, or where a token no class holds has the class's signature (its bit answers).
///   Nor where the context can only add to the masker's answer ([`Effect::Adds`]: a newline
///   that brackets drop at the token's last byte, a token ending inside a lexeme that may
///   become one inside brackets, as `"(r"` may begin `r"""`) and the masker allows the token.
///   Paths from different heads never merge, so a token's signature from a set of heads is
///   its signatures from each head alone side by side: those are memoised per head
///   ([`HeadSigs`]), and a new set of known heads (a new identifier prefix beside the head
///   that completed the last lexeme) walks only its new heads. Inhibitors are keyed by their
///   representative ([`inhibitor_reps`]): the states an identifier leaves (one per keyword
///   prefix it spells) all inhibit alike.
/// - Nor, mostly, anywhere else: a class's signature is also what the parser is handed along
///   each path, terminals ([`ShiftPath`]), so the class is allowed iff some path's terminals
///   shift from its heads and its end is live. Inside brackets that is the whole question
///   (`"----\n"`, `",\n"`, `"{}{\n"`: the newline is dropped); where the indenter reads a
///   newline, a path whose terminals before it, and the newline itself, do not shift is dead,
///   and only the others need a commit. The tables answer without building GSS nodes: per
///   sequence of terminals ([`after_first`]), whether the rest shifts after the first from
///   each LR state that shifts it, at once from the state the first shifts to where no
///   reduction pops it, else from each state below it the first time a mask meets that state
///   ([`RestReach::at_top`]: a sequence meets a few of the hundreds of states that shift, say,
///   a name); per mask, the states the heads shift each first terminal from, run on the
///   heads' stacks as read from the GSS and remembered by the top states the run read
///   ([`TopsMemo`]: the few a name's reductions read, so heads whose stacks differ further
///   down share one answer; where the rest always shifts and the end is live, only whether
///   the first shifts at all, from the memo's keys); where the answer depends on
///   what lies below such a state, the tables run on the top states of that stack
///   ([`RestReach::below`], memoised per sequence), and then on the heads' whole stacks as
///   read ([`Shifts`]). `"{}{\n"` outside brackets (no `{` after a dict) is refused by the
///   tables alone, `"|{\n"` is the heads' shift of `|` (a set display always follows it).
/// - From a head inside a would-be newline lexeme, how a token reads (the lexeme ends at its
///   first byte, stays open to its end, or ends after one or more prefixes) is a function of
///   the head's lexer state. The vocabulary is grouped once per such state by that reading:
///   tokens that stay inside, by the state they leave; tokens that end it, by each prefix
///   (which gives the width, hence the indenter's action) and the state where it ends, with
///   the rest's token id. A mask then costs one bit-set operation or one bit per token of a
///   group: the common group, a space and a word (`" return"`), is the mask of the heads that
///   completed the newline with that action, ANDed with the group.
pub struct IndentFix {
    /// Bytes that can begin a lexeme which may become the newline terminal ([`nl_bytes`]).
    nl_bytes: [bool; 256],
    /// The text tokens holding one of [`IndentFix::nl_bytes`], made on first use for the
    /// masker's vocabulary (a masker has one).
    candidates: OnceLock<TokenList>,
    /// Per set of heads (lexer configuration, bracket depth): the tokens [`needs_context`]
    /// names, in classes of equal [`signature`].
    memo: RwLock<AHashMap<Vec<HeadKey>, Arc<Classes>>>,
    /// Per single head (lexer configuration, bracket depth): each token's [`signature`] from
    /// it alone, and what it is to the parser. Paths from different heads never merge, so a
    /// set's signature is its heads' signatures side by side: a new combination of known
    /// heads reuses each head's walks ([`IndentFix::classes`]).
    per_head: RwLock<AHashMap<HeadKey, Arc<std::sync::Mutex<HeadSigs>>>>,
    /// Per trie node of a class's first token: its [`TokenParts`].
    parts: RwLock<AHashMap<TrieNode, Arc<TokenParts>>>,
    /// Per lexer state inside a would-be newline lexeme: the vocabulary grouped by how a head
    /// there reads it.
    line_starts: RwLock<AHashMap<LexState, Arc<LineStart>>>,
    /// Per state with a head inside a would-be newline lexeme (by its heads' identities): its
    /// mask. Inside a docstring or a comment the head's node stays and its lexer state
    /// recurs, so the masks of a long one repeat.
    inside_masks: RwLock<AHashMap<Vec<HeadId>, Arc<TokenMask>>>,
    /// Hashes of keys of [`IndentFix::inside_masks`] met once whose masks were not kept. A
    /// head that reads its width (at a line's indentation, `"\n    "`) is rarely met again
    /// with the same one, and a 16 KB copy per such state costs more than the few it saves:
    /// its state's mask is kept the second time its key is met.
    inside_seen: std::sync::Mutex<(ahash::RandomState, ahash::AHashSet<u64>)>,
    /// Per lexer configuration and whether outside brackets: the tokens [`needs_context`]
    /// names from a head there ([`IndentFix::needs_of`]).
    needs: RwLock<AHashMap<(LexConfig, bool), TrieNodes>>,
    /// Those from a fresh lexeme with no inhibitor, by token id, inside and outside brackets.
    fresh_needs: [OnceLock<TokenMask>; 2],
    /// Per sequence of terminals: whether the rest shifts once the first has ([`after_first`]).
    reach: RwLock<AHashMap<smallvec::SmallVec<[TerminalId; 4]>, Arc<RestReach>>>,
    /// Per terminal, the LR states that shift it and where to ([`shift_pairs`]).
    shifts_of: OnceLock<Vec<Vec<(crate::lr::LrState, crate::lr::LrState)>>>,
    /// Per lexer state, as an inhibitor: the least state that inhibits the same bytes the
    /// same way ([`inhibitor_reps`]). A head's future reads its inhibitor only through
    /// [`munch_lexer::Lexer::next_inhibited`], and the lexeme an identifier completes leaves
    /// one of many states (one per keyword prefix it spells), which all inhibit alike: heads
    /// keyed by the representative share their memos.
    reps: Box<[LexState]>,
    /// Per terminal and the top states of a stack: the states it shifts the terminal from.
    tops: TopsMemo,
}

/// The most sequences of terminals whose [`Reach`] [`IndentFix`] remembers before it starts
/// over.
const REACH_MEMO_LEN: usize = 1 << 16;

/// Trie nodes, shared.
type TrieNodes = Arc<[TrieNode]>;

/// The most lexer configurations whose tokens needing the context [`IndentFix`] remembers
/// before it starts over.
const NEEDS_MEMO_LEN: usize = 1024;

/// What makes a head's future: its node (GSS node ids are never reused in a process), lexer
/// configuration and indentation context.
type HeadId = (crate::gss::GssNodeId, LexConfig, crate::parser::IndentCtx);

/// The most masks of states inside a would-be newline lexeme that [`IndentFix`] remembers
/// (16 KB each with a 128k vocabulary); a new one then takes an old one's place and buffer.
const INSIDE_MASK_MEMO_LEN: usize = 32;

/// The most keys met once that [`IndentFix`] notes before it starts over.
const INSIDE_SEEN_LEN: usize = 4096;

/// A list of token ids, shared.
type TokenList = Arc<[TokenId]>;

/// A head's lexer configuration and bracket depth.
type HeadKey = (LexConfig, u32);

/// Tokens that the parser cannot tell apart from some heads, in classes, in the trie's order
/// of their first tokens.
struct Classes {
    /// The classes, in that order.
    list: Box<[Class]>,
    /// Each class's guards, then its tokens, class after class ([`Class::ids`]): a mask reads
    /// them all, so they lie in one array.
    ids: Box<[TokenId]>,
}

impl Classes {
    /// The guards of `class`, one of [`Classes::list`].
    fn guards(&self, class: &Class) -> &[TokenId] {
        let (start, tokens, _) = class.ids;
        &self.ids[start as usize..tokens as usize]
    }

    /// The tokens of `class`, one of [`Classes::list`].
    fn tokens(&self, class: &Class) -> &[TokenId] {
        let (_, tokens, end) = class.ids;
        &self.ids[tokens as usize..end as usize]
    }
}

/// Tokens with one [`signature`] from some heads: all allowed or none.
struct Class {
    /// Their trie nodes, in preorder; the first one's token is committed for all.
    nodes: Box<[TrieNode]>,
    /// The first node's token.
    first: TokenId,
    /// Where the class's guards begin, its tokens begin, and its tokens end in
    /// [`Classes::ids`]. The tokens are those at [`Class::nodes`] (a mask sets or clears them
    /// all). The guards are tokens spelling proper prefixes of the first one that no class
    /// holds (so the masker's answer for them is exact): one refused refuses the class.
    /// Refused means its commit failed at a byte, or it ended where no head is live; a head
    /// with an empty lexeme is live after any shift in a reduced grammar, and one inside a
    /// lexeme that no terminal it may become can follow stays so until it dies: neither
    /// recovers.
    ids: (u32, u32, u32),
    /// A token that no class holds (so the masker's answer for it is exact) with the same
    /// signature as the class: the first token's part before its first or last newline byte,
    /// alone or followed by a space (`"),"` for `"),\n    "` inside brackets, `" "` for `"\n  "`).
    /// Its bit answers the class.
    equivalent: Option<TokenId>,
    /// Whether the context can only add to the masker's answer for the first token
    /// ([`Effect::Adds`] from every head): then a token the masker allows is allowed.
    only_adds: bool,
    /// The class's [`signature`] as the terminals the parser is handed along each path
    /// ([`shift_paths`]): the class is allowed iff some path's terminals shift from its heads
    /// and its end is live ([`Shifts::allows`]). Made the first time a mask asks
    /// ([`IndentFix::shifts_of`]): most classes are answered by bits.
    shifts: OnceLock<Option<Box<[ShiftPath]>>>,
    /// The class's [`signature`] as each head's signature id (`None`: a walk had too many
    /// paths).
    sig: Option<SigKey>,
    /// The heads' signatures the ids are in.
    heads: Arc<[HeadMemo]>,
}

/// A token's [`signature`] from a set of heads, as the id of its signature from each head
/// alone ([`HeadSigs`]).
type SigKey = smallvec::SmallVec<[u32; 4]>;

/// One head's [`HeadSigs`], shared.
type HeadMemo = Arc<std::sync::Mutex<HeadSigs>>;

/// Locks `m` (a poisoned lock's data is whole: every update is a single insert or push).
fn lock(m: &HeadMemo) -> std::sync::MutexGuard<'_, HeadSigs> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The [`signature`]s of tokens from one head alone (origin 0), interned, with the
/// [`ShiftPath`]s of each (made on demand), and the [`context_effect`] of tokens asked.
#[derive(Default)]
struct HeadSigs {
    /// Per trie node: the token's signature id (`None`: too many paths).
    sig_of: AHashMap<TrieNode, Option<u32>>,
    /// Per trie node: the token's [`context_effect`] from the head.
    effect_of: AHashMap<TrieNode, Effect>,
    /// The distinct signatures, by id.
    sigs: Vec<Signature>,
    ids: AHashMap<Signature, u32>,
    /// Per signature id, its [`ShiftPath`]s from the head (origin 0), once asked.
    shifts: Vec<Option<Arc<[ShiftPath]>>>,
}

/// The tokens that answer for a token in [`IndentFix::classes`] where no class holds them, as
/// (trie node, token), whatever the heads.
struct TokenParts {
    /// The tokens spelling its proper prefixes, shortest first: one refused refuses it.
    prefixes: Box<[(TrieNode, TokenId)]>,
    /// Its part before its first or last newline byte, alone or followed by a space (`"),"` for
    /// `"),\n    "` inside brackets, `" \"\"){"` for `" \"\"){\n"`), where a token: one with
    /// its signature answers it.
    stand_ins: smallvec::SmallVec<[(TrieNode, TokenId); 4]>,
}

/// The most tokens whose [`TokenParts`] [`IndentFix`] remembers before it starts over.
const PARTS_MEMO_LEN: usize = 1 << 16;

/// The most single heads whose signatures [`IndentFix`] remembers before it starts over.
const PER_HEAD_MEMO_LEN: usize = 256;

impl HeadSigs {
    /// The signature id of the token at `node` (spelled `bytes`) from head `key` alone.
    fn sig(&mut self, parser: &Parser, key: HeadKey, node: TrieNode, bytes: &[u8]) -> Option<u32> {
        if let Some(&id) = self.sig_of.get(&node) {
            return id;
        }
        let id = signature(parser, &[key], bytes).map(|sig| match self.ids.get(&sig) {
            Some(&id) => id,
            None => {
                let id = self.sigs.len() as u32;
                self.sigs.push(sig.clone());
                self.shifts.push(None);
                self.ids.insert(sig, id);
                id
            }
        });
        self.sig_of.insert(node, id);
        id
    }

    /// The [`context_effect`] of the token at `node` (spelled `bytes`) from head `key`.
    fn effect(&mut self, parser: &Parser, key: HeadKey, node: TrieNode, bytes: &[u8]) -> Effect {
        *self
            .effect_of
            .entry(node)
            .or_insert_with(|| context_effect(parser, key.0, Some(key.1), bytes))
    }
}

/// A path of a class's [`signature`] as the parser sees it: from the heads of one key (an
/// index into the sorted [`HeadKey`]s), the terminals shifted, and where it ends.
#[derive(Clone)]
struct ShiftPath {
    origin: u32,
    terminals: smallvec::SmallVec<[TerminalId; 4]>,
    end: PathEnd,
    /// Whether the terminals after the first shift once the first has, by the state it
    /// shifts from ([`after_first`]).
    rest: Arc<RestReach>,
}

/// Whether some terminals shift after the first, by the LR state the first shifts from.
#[derive(Debug)]
struct RestReach {
    /// The same answer from every state: [`Reach::Always`], [`Reach::Never`], else
    /// [`Reach::Depends`] (then [`RestReach::at_top`] says).
    all: Reach,
    /// Per LR state that shifts the first terminal (sorted): the state it shifts to, and the
    /// answer on a stack whose top is that state and the first terminal ([`Reach::Depends`]
    /// when a reduction pops it), as [`reach_code`]: 0 until a mask meets the state (the
    /// tables run from every such state would cost milliseconds for a sequence, most of them
    /// states no text of the request reaches).
    by_top: Box<
        [(
            crate::lr::LrState,
            crate::lr::LrState,
            std::sync::atomic::AtomicU8,
        )],
    >,
    /// The terminals after the first.
    rest: smallvec::SmallVec<[u32; 8]>,
    /// Per [`Top`] where [`RestReach::by_top`] says it depends: the answer on that stack.
    deeper: RwLock<AHashMap<Top, Reach>>,
}

/// [`Reach`] as a nonzero byte (0: not known yet).
fn reach_code(r: Reach) -> u8 {
    match r {
        Reach::Always => 1,
        Reach::Never => 2,
        Reach::Depends => 3,
    }
}

/// The [`Reach`] of a nonzero [`reach_code`].
fn code_reach(c: u8) -> Option<Reach> {
    match c {
        1 => Some(Reach::Always),
        2 => Some(Reach::Never),
        3 => Some(Reach::Depends),
        _ => None,
    }
}

impl RestReach {
    /// The answer where the first terminal shifts from a stack whose top is `top`, which
    /// [`RestReach::at_top`] leaves open: the tables run on `top` (memoised).
    fn below(&self, parser: &Parser, top: &Top, terminals: &[TerminalId]) -> Reach {
        if let Some(r) = recall(&self.deeper, top) {
            return r;
        }
        let tables = parser.tables();
        let Some((first, rest)) = terminals.split_first() else {
            return Reach::Always;
        };
        // The first terminal's shift from the top (its reductions are other tops).
        let shifted = top.last().and_then(|&x| {
            tables.actions_at(x, first.as_u32()).find_map(|a| match *a {
                crate::lr::Action::Shift(s) => Some(s),
                _ => None,
            })
        });
        let Some(s) = shifted else {
            return Reach::Never;
        };
        let mut stack: Stack = top.iter().copied().collect();
        stack.push(s);
        let ks: smallvec::SmallVec<[u32; 8]> = rest.iter().map(|t| t.as_u32()).collect();
        let mut budget = STACK_RUN_WORK;
        let r = run_tables(tables, &mut stack, &ks, &mut budget, 0);
        remember(&self.deeper, top.clone(), r, DEEPER_MEMO_LEN);
        r
    }

    /// The answer on a stack whose top is `x` and the first terminal, run on the tables the
    /// first time it is asked.
    fn at_top(&self, parser: &Parser, x: crate::lr::LrState) -> Reach {
        if self.all != Reach::Depends {
            return self.all;
        }
        let Ok(i) = self.by_top.binary_search_by_key(&x, |&(y, _, _)| y) else {
            return Reach::Depends;
        };
        let (_, s, ref code) = self.by_top[i];
        let ordering = std::sync::atomic::Ordering::Relaxed;
        if let Some(r) = code_reach(code.load(ordering)) {
            return r;
        }
        let mut stack: Stack = smallvec::smallvec![x, s];
        let mut budget = STACK_RUN_WORK;
        let r = run_tables(parser.tables(), &mut stack, &self.rest, &mut budget, 0);
        code.store(reach_code(r), ordering);
        r
    }
}

/// Whether some terminals shift after the first, read from the LR tables alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reach {
    /// On every stack where the first shifts.
    Always,
    /// On none.
    Never,
    /// It depends on the stack below the first terminal's shift.
    Depends,
}

/// Where a [`ShiftPath`] ends.
#[derive(Clone, Copy, PartialEq, Eq)]
enum PathEnd {
    /// Live once its terminals are shifted: an empty lexeme, or one that may still become an
    /// ignored terminal or a newline inside brackets (see [`signature`]).
    Live,
    /// Inside a lexeme in this lexer state, which no ignored terminal or newline is reachable
    /// from: live iff the parser can shift a terminal reachable from it.
    Inside(LexState),
    /// Past its terminals, something only a commit answers (a newline whose width the indenter
    /// reads, a tie): the path is dead when its terminals do not shift, else unknown.
    Unknown,
}

/// A head's lexer configuration: state, inhibitor, lexeme empty.
type LexConfig = (LexState, Option<LexState>, bool);

/// The most sets of heads whose classes [`IndentFix`] remembers before it starts over (a
/// set's classes take tens of kilobytes with a 128k vocabulary; real texts meet a few dozen
/// sets).
const INDENT_FIX_MEMO_LEN: usize = 512;

/// The most line-start groupings [`IndentFix`] remembers before it starts over (a grammar's
/// newline terminal is read in a handful of lexer states).
const LINE_START_MEMO_LEN: usize = 64;

/// How a head inside a would-be newline lexeme reads one token: where its lexeme may end
/// inside the token, and where it goes on to the token's end.
struct Reading {
    /// The (length, lexer state) of each prefix after which the lexeme completes and the next
    /// byte does not kill the completion (a byte that ends the lexeme, or one that a longer
    /// lexeme may take while the completion waits on it). A completion at the token's first
    /// byte is not one: a sibling head made it with the byte before.
    ends: smallvec::SmallVec<[(usize, LexState); 2]>,
    /// The lexer state after the whole token, when the lexeme takes every byte of it.
    inside: Option<LexState>,
    /// The longest prefix after which the lexeme's state accepts (0: none).
    last_accept: usize,
}

/// The vocabulary as read by a head inside a would-be newline lexeme in one lexer state.
struct LineStart {
    /// Tokens that stay inside the lexeme, by the lexer state they leave it in.
    inside: Vec<(LexState, TokenSet)>,
    /// Tokens that end the lexeme after a prefix, by (prefix, lexer state where it ends).
    ends: Vec<EndGroup>,
    /// Whether a mask reads the head's width ([`crate::parser::IndentCtx`]: the spaces and
    /// tabs since the lexeme's last `'\n'`): some prefix in [`LineStart::ends`] holds no
    /// `'\n'`, which starts the width again. Inside a comment (which Lark's `_NEWLINE`
    /// absorbs) the width counts the words' spaces, yet only a `'\n'` can end the lexeme.
    width_read: bool,
}

/// The tokens that end a would-be newline lexeme after the same prefix, in the same state.
struct EndGroup {
    /// The lexeme's part of each token: its width decides the indenter's action.
    prefix: Box<[u8]>,
    /// The lexer state where the lexeme ends.
    state: LexState,
    /// Whether the lexeme is the prefix's only reading (no shorter one ends inside it): then
    /// the heads after the prefix with an empty lexeme are the lexeme's completions alone,
    /// the same for every prefix ending in this state with this indentation action.
    alone: bool,
    kind: EndKind,
    /// Per list of rests (0 and 1: [`EndKind::Newline`]'s sides, 2: [`EndKind::General`]) and
    /// the keys of the heads that completed the lexeme: the rests that are not tokens, in
    /// classes of equal [`signature`] from those heads (made on first use).
    rest_classes: RwLock<AHashMap<(u8, Vec<HeadKey>), RestClasses>>,
}

/// An [`EndGroup`]'s [`RestClass`]es from some heads, shared.
type RestClasses = Arc<[RestClass]>;

/// The most (list, heads) pairs an [`EndGroup`] remembers its [`RestClass`]es for before it
/// starts over.
const REST_CLASSES_MEMO_LEN: usize = 64;

/// Rests that are not tokens (`" \"\";\n"` ends a newline inside brackets after `" "`, and
/// `"\"\";\n"` is no token) with one [`signature`] from the heads that completed the lexeme:
/// all allowed or none. A mask answers the class from the parser's tables ([`Shifts`]) or by
/// committing its first rest, not each rest by a commit.
struct RestClass {
    /// The tokens whose rests the class holds; the first one's rest is committed for all.
    tokens: Box<[TokenId]>,
    /// The signature as [`ShiftPath`]s from those heads (`None`: only a commit answers).
    paths: Option<Box<[ShiftPath]>>,
}

enum EndKind {
    /// The lexeme is not the newline terminal alone (ties, or an ignored terminal): each
    /// token's rest is answered by the heads that completed the lexeme.
    General(Vec<RestOf>),
    /// The lexeme is the newline terminal. Indexed by whether the heads that complete it are
    /// outside brackets: the tokens that one bit of those heads' mask from a fresh lexeme
    /// answers ([`same_as_ignored`]), and the others, answered one by one.
    Newline {
        fresh: [TokenSet; 2],
        each: [Vec<RestOf>; 2],
    },
}

/// A token that ends a would-be newline lexeme after a prefix, and its rest as a token (when
/// the vocabulary has it: the rest is then a bit of a mask, not a commit).
type RestOf = (TokenId, Option<TokenId>);

/// The heads that completed a would-be newline lexeme, in one mask of [`IndentFix::fill`].
struct Completed {
    state: ParserState,
    /// Their exact mask, made when a group asks for more rests than [`FEW_RESTS`].
    exact: Option<TokenMask>,
    /// The masker's mask of them reading whole tokens from a fresh lexeme, and whether they
    /// are outside brackets (made for the newline-alone groups only).
    fresh: Option<(TokenMask, bool)>,
    /// Their keys ([`head_keys`]), and the tables' answers for them ([`Shifts`]), made when a
    /// group has rests that are not tokens.
    shifts: Option<(Vec<HeadKey>, Shifts)>,
}

/// The most rests of a group that [`IndentFix::fill`] commits one by one from the heads that
/// completed its lexeme; more are looked up in those heads' exact mask (which costs a mask of
/// the masker and the fix, tens of commits' worth).
const FEW_RESTS: usize = 24;

/// A set of tokens: listed when few, bits when many (then a mask costs a pass over words, not
/// a test per token).
enum TokenSet {
    List(Vec<TokenId>),
    Bits(TokenMask),
}

impl TokenSet {
    fn new(tokens: Vec<TokenId>, vocab_len: usize) -> TokenSet {
        // A word of bits costs about what a listed token does.
        if tokens.len() > vocab_len / 32 {
            let mut bits = TokenMask::new(vocab_len);
            for &t in &tokens {
                bits.insert(t);
            }
            TokenSet::Bits(bits)
        } else {
            TokenSet::List(tokens)
        }
    }

    /// Adds every token of the set to `mask`.
    fn add_to(&self, mask: &mut MaskMut<'_>) {
        match self {
            TokenSet::List(tokens) => tokens.iter().for_each(|&t| mask.insert(t)),
            TokenSet::Bits(bits) => mask.union_with(bits),
        }
    }

    /// Adds to `mask` the tokens of the set that `filter` holds.
    fn add_within(&self, mask: &mut MaskMut<'_>, filter: &TokenMask) {
        match self {
            TokenSet::List(tokens) => {
                for &t in tokens {
                    if filter.contains(t) {
                        mask.insert(t);
                    }
                }
            }
            TokenSet::Bits(bits) => {
                let words = mask.words_mut().iter_mut();
                for (m, (&a, &b)) in words.zip(bits.words().iter().zip(filter.words())) {
                    *m |= a & b;
                }
            }
        }
    }

    /// The tokens of the set, in id order.
    fn iter(&self) -> Box<dyn Iterator<Item = TokenId> + '_> {
        match self {
            TokenSet::List(tokens) => Box::new(tokens.iter().copied()),
            TokenSet::Bits(bits) => Box::new(bits.iter()),
        }
    }
}

impl IndentFix {
    /// The fix for `parser`, when it has an indenter (`None` otherwise: masks need no fix).
    pub fn new(parser: &Parser) -> Option<IndentFix> {
        let nl = parser.indenter()?.newline();
        Some(IndentFix {
            nl_bytes: nl_bytes(parser, nl),
            candidates: OnceLock::new(),
            memo: Default::default(),
            per_head: Default::default(),
            parts: Default::default(),
            line_starts: Default::default(),
            inside_masks: Default::default(),
            inside_seen: Default::default(),
            needs: Default::default(),
            fresh_needs: Default::default(),
            reach: Default::default(),
            tops: Default::default(),
            shifts_of: OnceLock::new(),
            reps: inhibitor_reps(parser),
        })
    }

    /// A masker's `fill_into`: `plain` (the masker's own computation) on `state` when there is
    /// no fix, else [`IndentFix::fill`] through it.
    pub fn fill_or_plain(
        fix: Option<&IndentFix>,
        vocab: &Vocabulary,
        state: &ParserState,
        mask: MaskMut<'_>,
        mut plain: impl FnMut(&ParserState, MaskMut<'_>),
    ) {
        match fix {
            Some(fix) => fix.fill(vocab, state, mask, &mut plain),
            None => plain(state, mask),
        }
    }

    /// Fills `mask` with exactly the allowed tokens of `state`, calling `plain` (the masker's
    /// own computation, which reads the newline terminal as any other) on states made of some
    /// of `state`'s heads (see the [type docs](IndentFix)).
    pub fn fill(
        &self,
        vocab: &Vocabulary,
        state: &ParserState,
        mut mask: MaskMut<'_>,
        plain: &mut dyn FnMut(&ParserState, MaskMut<'_>),
    ) {
        let parser = Arc::clone(state.parser());
        let Some(nl) = parser.indenter().map(|i| i.newline()) else {
            plain(state, mask);
            return;
        };
        let lexer = parser.lexer();
        let in_newline =
            |h: Head<'_>| !h.lexeme_is_empty() && lexer.reachable(h.lex_state()).contains(nl);
        let mut width_read = false;
        let key: Option<Vec<HeadId>> = state.heads().any(in_newline).then(|| {
            let mut key: Vec<HeadId> = state
                .heads()
                .map(|h| {
                    // A width that no mask reads is left out, so that the masks of a comment's
                    // words, whose spaces it counts, are met again. (The end of the text does
                    // not read it either: only heads with an empty lexeme accept.)
                    let inside = in_newline(h);
                    let reads = inside && self.line_start(&parser, vocab, h.lex_state()).width_read;
                    width_read |= reads;
                    let ctx = if inside && !reads {
                        h.indent().at_lexeme_start()
                    } else {
                        h.indent().clone()
                    };
                    (h.node().id(), config_of(h, &self.reps), ctx)
                })
                .collect();
            key.sort_unstable_by_key(|a| (a.0, a.1));
            key
        });
        if let Some(known) = key.as_ref().and_then(|k| recall(&self.inside_masks, k)) {
            mask.copy_from(&known);
            return;
        }
        // The heads outside a would-be newline lexeme (all of them, mostly: no copy then).
        let restricted;
        let others = match key {
            Some(_) => {
                restricted = state.restricted(|h| !in_newline(h));
                &restricted
            }
            None => state,
        };
        if others.head_len() > 0 {
            plain(others, mask.reborrow());
            self.recheck(vocab, others, &mut mask);
        } else {
            mask.clear();
        }
        let inside: Vec<ParserState> = state
            .heads()
            .enumerate()
            .filter(|(_, h)| in_newline(*h))
            .map(|(i, _)| {
                let mut k = 0;
                state.restricted(|_| {
                    k += 1;
                    k - 1 == i
                })
            })
            .collect();
        for one in &inside {
            self.fill_inside(vocab, one, &mut mask, plain);
        }
        // Acceptance shifts the final `_DEDENT`s, which a masker's own test does not.
        for &eos in vocab.eos() {
            mask.remove(eos);
        }
        set_eos(vocab, state, &mut mask);
        if let Some(key) = key {
            if !width_read || self.met_before(&key) {
                remember_mask(&self.inside_masks, key, &mask, INSIDE_MASK_MEMO_LEN);
            }
        }
    }

    /// Whether `key` was met before (by its hash: a collision only keeps a mask early), and
    /// notes it.
    fn met_before(&self, key: &[HeadId]) -> bool {
        let Ok(mut seen) = self.inside_seen.lock() else {
            return true;
        };
        let (hasher, hashes) = &mut *seen;
        let hash = hasher.hash_one(key);
        if hashes.len() >= INSIDE_SEEN_LEN {
            hashes.clear();
        }
        !hashes.insert(hash)
    }

    /// Answers again the tokens whose lexing from a head of `state` (no head inside a
    /// would-be newline) completes or ends inside a newline lexeme, one answer per class of
    /// tokens that the parser cannot tell apart ([`signature`]): from a bit of the masker's
    /// mask where one answers, else from the parser's tables ([`Shifts`]), else by committing
    /// the class's first token.
    fn recheck(&self, vocab: &Vocabulary, state: &ParserState, mask: &mut MaskMut<'_>) {
        let parser = state.parser();
        let heads = head_keys(state, &self.reps);
        let classes = self.classes(parser, vocab, heads.clone());
        let trie = vocab.trie();
        let mut shifts: Option<Shifts> = None;
        // The states after some prefixes of the last committed token, by length, shortest first
        // (`None`: refused). The classes come in the trie's order, so a token shares its longest
        // prefix with its neighbours: each is committed from the longest prefix kept, in at
        // most two pieces, the first ending where it parts from the next class's token (a
        // commit may be split anywhere: the mask contract reads the text, not the pieces).
        let mut path: Vec<(usize, Option<ParserState>)> = Vec::new();
        let mut last: &[u8] = &[];
        let bytes_of = |c: &Class| {
            trie.tokens_at(c.nodes[0])
                .first()
                .and_then(|&t| vocab.token_bytes(t))
                .unwrap_or_default()
        };
        let common = |a: &[u8], b: &[u8]| a.iter().zip(b).take_while(|(x, y)| x == y).count();
        for (i, class) in classes.list.iter().enumerate() {
            let tokens = classes.tokens(class);
            // The masker's answer still stands for the class's tokens (classes are disjoint).
            if class.only_adds && mask.contains(class.first) {
                set_class(tokens, true, mask);
                continue;
            }
            // An equivalent's bit, and a guard's, are the masker's exact answers (no class holds
            // them); a refused prefix refuses the token.
            if let Some(u) = class.equivalent {
                let allowed = mask.contains(u);
                set_class(tokens, allowed, mask);
                continue;
            }
            if !classes.guards(class).iter().all(|&g| mask.contains(g)) {
                set_class(tokens, false, mask);
                continue;
            }
            if let Some(paths) = self.shifts_of(parser, class) {
                let shifts = shifts.get_or_insert_with(|| Shifts::new(state, &heads, &self.reps));
                if let Some(allowed) = shifts.allows(parser, &self.tops, paths) {
                    set_class(tokens, allowed, mask);
                    continue;
                }
            }
            let Some(bytes) = vocab.token_bytes(class.first) else {
                continue;
            };
            if path.is_empty() {
                path.push((0, Some(state.clone())));
            }
            let shared = common(last, bytes);
            while path.len() > 1 && path.last().is_some_and(|&(len, _)| len > shared) {
                path.pop();
            }
            let next = classes
                .list
                .get(i + 1)
                .map_or(0, |c| common(bytes, bytes_of(c)));
            for cut in [next, bytes.len()] {
                let Some(&(len, ref top)) = path.last() else {
                    break;
                };
                if cut > len {
                    let after = top.as_ref().and_then(|s| s.after(&bytes[len..cut]));
                    path.push((cut, after));
                }
            }
            last = bytes;
            let allowed = path
                .last()
                .and_then(|(_, s)| s.as_ref())
                .is_some_and(|s| s.is_live());
            set_class(tokens, allowed, mask);
        }
    }

    /// The tokens whose answer from heads in `heads` the context may change
    /// ([`needs_context`]), as trie nodes in classes of equal [`signature`] (memoised).
    fn classes(&self, parser: &Parser, vocab: &Vocabulary, heads: Vec<HeadKey>) -> Arc<Classes> {
        if let Some(classes) = recall(&self.memo, &heads) {
            return classes;
        }
        let trie = vocab.trie();
        let mut nodes: Vec<TrieNode> = Vec::new();
        for &(config, paren) in &heads {
            nodes.extend_from_slice(&self.needs_of(parser, vocab, config, paren == 0));
        }
        nodes.sort_unstable();
        nodes.dedup();
        // Every class's tokens, sorted: the masker's answer for any other token is exact.
        let members = nodes;
        // Each head's signatures, locked in the heads' (sorted) order.
        let memos: Arc<[HeadMemo]> = heads.iter().map(|&k| self.head_sigs(k)).collect();
        let mut locked: Vec<_> = memos.iter().map(|m| lock(m)).collect();
        let sig_key = |locked: &mut [std::sync::MutexGuard<'_, HeadSigs>],
                       n: TrieNode,
                       bytes: &[u8]|
         -> Option<SigKey> {
            heads
                .iter()
                .zip(locked.iter_mut())
                .map(|(&k, m)| m.sig(parser, k, n, bytes))
                .collect()
        };
        let first_bytes = |n: TrieNode| {
            trie.tokens_at(n)
                .first()
                .and_then(|&t| vocab.token_bytes(t))
        };
        let mut by_signature: AHashMap<SigKey, Vec<TrieNode>> = AHashMap::new();
        let mut alone: Vec<TrieNode> = Vec::new();
        for &n in &members {
            let Some(bytes) = first_bytes(n) else {
                continue;
            };
            match sig_key(&mut locked, n, bytes) {
                Some(sig) => by_signature.entry(sig).or_default().push(n),
                None => alone.push(n),
            }
        }
        // Each class with its guards and tokens, laid out in the trie's order below.
        let mut classes: Vec<(Class, Vec<TokenId>, Vec<TokenId>)> =
            Vec::with_capacity(by_signature.len() + alone.len());
        for (sig, nodes) in by_signature
            .into_iter()
            .map(|(sig, nodes)| (Some(sig), nodes))
            .chain(alone.into_iter().map(|n| (None, vec![n])))
        {
            let bytes = first_bytes(nodes[0]).unwrap_or_default();
            let parts = self.parts(vocab, nodes[0], bytes);
            // The tokens spelling proper prefixes of the first one that no class holds: the
            // masker answers them exactly, and one refused refuses the class.
            let guards: Vec<TokenId> = parts
                .prefixes
                .iter()
                .filter(|(n, _)| members.binary_search(n).is_err())
                .map(|&(_, t)| t)
                .collect();
            // A stand-in that no class holds (the masker answers it exactly) and the parser
            // cannot tell apart from the class.
            let equivalent =
                parts
                    .stand_ins
                    .iter()
                    .filter(|_| sig.is_some())
                    .find_map(|&(n, t)| {
                        let u = vocab.token_bytes(t)?;
                        let exact = members.binary_search(&n).is_err();
                        (exact && sig_key(&mut locked, n, u) == sig).then_some(t)
                    });
            let only_adds = heads
                .iter()
                .zip(locked.iter_mut())
                .all(|(&k, m)| m.effect(parser, k, nodes[0], bytes) != Effect::Any);
            let Some(first) = trie.tokens_at(nodes[0]).first().copied() else {
                continue;
            };
            let tokens = nodes
                .iter()
                .flat_map(|&n| trie.tokens_at(n))
                .copied()
                .collect();
            let class = Class {
                first,
                ids: (0, 0, 0),
                nodes: nodes.into(),
                equivalent,
                only_adds,
                shifts: OnceLock::new(),
                sig,
                heads: Arc::clone(&memos),
            };
            classes.push((class, guards, tokens));
        }
        drop(locked);
        classes.sort_unstable_by_key(|(c, _, _)| c.nodes[0]);
        let mut ids = Vec::new();
        let mut list = Vec::with_capacity(classes.len());
        for (mut class, guards, tokens) in classes {
            let start = ids.len() as u32;
            ids.extend(guards);
            let first_token = ids.len() as u32;
            ids.extend(tokens);
            class.ids = (start, first_token, ids.len() as u32);
            list.push(class);
        }
        let classes = Arc::new(Classes {
            list: list.into(),
            ids: ids.into(),
        });
        remember(&self.memo, heads, Arc::clone(&classes), INDENT_FIX_MEMO_LEN);
        classes
    }

    /// The [`TokenParts`] of the token at `node`, spelled `bytes` (memoised).
    fn parts(&self, vocab: &Vocabulary, node: TrieNode, bytes: &[u8]) -> Arc<TokenParts> {
        if let Some(parts) = recall(&self.parts, &node) {
            return parts;
        }
        let trie = vocab.trie();
        let token_at = |n: TrieNode| trie.tokens_at(n).first().map(|&t| (n, t));
        let mut prefixes = Vec::new();
        let mut n = trie.root();
        for &b in bytes.iter().take(bytes.len().saturating_sub(1)) {
            let Some(c) = trie.child(n, b) else { break };
            n = c;
            prefixes.extend(token_at(n));
        }
        let is_nl = |&j: &usize| self.nl_bytes[bytes[j] as usize];
        let last = (0..bytes.len()).rev().find(is_nl);
        let cuts = (0..bytes.len()).find(is_nl).into_iter().chain(last);
        let stand_ins = cuts
            .flat_map(|j| [bytes[..j].to_vec(), [&bytes[..j], b" "].concat()])
            .filter(|u| !u.is_empty())
            .filter_map(|u| token_at(trie.find(&u)?))
            .collect();
        let parts = Arc::new(TokenParts {
            prefixes: prefixes.into(),
            stand_ins,
        });
        remember(&self.parts, node, Arc::clone(&parts), PARTS_MEMO_LEN);
        parts
    }

    /// The signatures memoised for head `key` alone ([`HeadSigs`]).
    fn head_sigs(&self, key: HeadKey) -> HeadMemo {
        if let Some(memo) = recall(&self.per_head, &key) {
            return memo;
        }
        let memo: HeadMemo = Default::default();
        if let Ok(mut m) = self.per_head.write() {
            if m.len() >= PER_HEAD_MEMO_LEN {
                m.clear();
            }
            return Arc::clone(m.entry(key).or_insert(memo));
        }
        memo
    }

    /// The trie nodes of the tokens that need the context from a head in lexer configuration
    /// `config`, outside brackets when `paren_zero` ([`needs_context`]; memoised per
    /// configuration, which recurs in many sets of heads). A token whose first byte kills the
    /// head's branch needs nothing; from a fresh lexeme whose inhibitor reads the first byte as
    /// the start state does, the answer is the uninhibited fresh lexeme's, computed once.
    fn needs_of(
        &self,
        parser: &Parser,
        vocab: &Vocabulary,
        config: LexConfig,
        paren_zero: bool,
    ) -> TrieNodes {
        if let Some(nodes) = recall(&self.needs, &(config, paren_zero)) {
            return nodes;
        }
        let lexer = parser.lexer();
        let trie = vocab.trie();
        let (state, inhibitor, empty) = config;
        let plain_start = (lexer.start(), None, true);
        let first = |b: u8| match inhibitor {
            Some(i) => lexer.next_inhibited(i, b),
            None => lexer.next(state, b),
        };
        let fresh: Option<&TokenMask> =
            (empty && config != plain_start).then(|| self.fresh_needs(parser, vocab, paren_zero));
        let read = |t: TokenId, bytes: &[u8]| {
            let Some(&b) = bytes.first() else {
                return false;
            };
            let s = first(b);
            if lexer.is_dead(s) {
                return false;
            }
            match fresh {
                Some(set) if s == lexer.next(lexer.start(), b) => set.contains(t),
                _ => needs_context(parser, config, paren_zero, bytes),
            }
        };
        let nodes: Vec<TrieNode> = if self.may_enter_newline(parser, config) {
            vocab
                .text_tokens()
                .filter(|&(t, bytes)| read(t, bytes))
                .filter_map(|(_, bytes)| trie.find(bytes))
                .collect()
        } else {
            self.candidates(vocab)
                .iter()
                .filter_map(|&t| Some((t, vocab.token_bytes(t)?)))
                .filter(|&(t, bytes)| read(t, bytes))
                .filter_map(|(_, bytes)| trie.find(bytes))
                .collect()
        };
        let nodes: TrieNodes = nodes.into();
        remember(
            &self.needs,
            (config, paren_zero),
            Arc::clone(&nodes),
            NEEDS_MEMO_LEN,
        );
        nodes
    }

    /// The tokens that need the context from a fresh lexeme with no inhibitor, outside
    /// brackets when `paren_zero`, by id (made once).
    fn fresh_needs(&self, parser: &Parser, vocab: &Vocabulary, paren_zero: bool) -> &TokenMask {
        self.fresh_needs[usize::from(paren_zero)].get_or_init(|| {
            let plain_start = (parser.lexer().start(), None, true);
            let trie = vocab.trie();
            let mut set = TokenMask::new(vocab.len());
            for &n in self.needs_of(parser, vocab, plain_start, paren_zero).iter() {
                trie.tokens_at(n).iter().for_each(|&t| set.insert(t));
            }
            set
        })
    }

    /// Adds to `mask` the tokens allowed by `one`, a state whose one head is inside a lexeme
    /// that may become the newline terminal.
    fn fill_inside(
        &self,
        vocab: &Vocabulary,
        one: &ParserState,
        mask: &mut MaskMut<'_>,
        plain: &mut dyn FnMut(&ParserState, MaskMut<'_>),
    ) {
        let parser = Arc::clone(one.parser());
        let Some(head) = one.heads().next() else {
            return;
        };
        let (Some(nl), lexer) = (parser.indenter().map(|i| i.newline()), parser.lexer()) else {
            return;
        };
        let node = head.node().clone();
        let ctx = head.indent().clone();
        let groups = self.line_start(&parser, vocab, head.lex_state());
        let mut cache = ShiftCache::new();
        let commit_each = |tokens: &mut dyn Iterator<Item = TokenId>, mask: &mut MaskMut<'_>| {
            for t in tokens {
                if allows(one, vocab, t) {
                    mask.insert(t);
                }
            }
        };
        for (end, tokens) in &groups.inside {
            // The head reading on is live exactly when the masker would say (the context only
            // adds bracket depth); a token it does not keep live is committed.
            let live = lexer.reachable(*end).iter().any(|u| {
                parser.is_ignored(u)
                    || (u == nl && ctx.paren_level() > 0)
                    || parser.can_shift(&node, u, &mut cache)
            });
            if live {
                tokens.add_to(mask);
            } else {
                commit_each(&mut tokens.iter(), mask);
            }
        }
        // Per (lexer state where the lexeme ends, the indenter's action and the width it
        // pushes, the prefix itself where a shorter reading ends inside it): the heads that
        // completed the lexeme, with a lexeme of their own, and their exact mask. None: nothing
        // goes on.
        type AfterKey<'g> = (LexState, Option<NlAction>, u32, Option<&'g [u8]>);
        let mut after: AHashMap<AfterKey<'_>, Option<Completed>> = Default::default();
        for group in &groups.ends {
            let width = group
                .prefix
                .iter()
                .fold(ctx.clone(), |w, &b| w.read(b, false));
            let action = lexer
                .accepted(group.state)
                .contains(&nl)
                .then(|| width.nl_action());
            let newline_alone = matches!(group.kind, EndKind::Newline { .. });
            if newline_alone && action == Some(NlAction::Error) {
                continue;
            }
            // An indent pushes the width: the rest of a token may read it again.
            let pushed = match action {
                Some(NlAction::Indent) => width.width(),
                _ => 0,
            };
            let entry = after
                .entry((
                    group.state,
                    action,
                    pushed,
                    (!group.alone).then_some(&group.prefix[..]),
                ))
                .or_insert_with(|| {
                    let mut s = one.clone();
                    s.commit_bytes(&group.prefix).ok()?;
                    // The heads that completed the lexeme, and those of shorter readings with
                    // a lexeme just completed (the one still reading it dies on the rest's first
                    // byte; the others' lexemes go on, and the rest is theirs: each such token
                    // has a group for that reading too).
                    let s = s.restricted(|h| h.lexeme_is_empty());
                    if s.head_len() == 0 {
                        return None;
                    }
                    Some(Completed {
                        state: s,
                        exact: None,
                        fresh: None,
                        shifts: None,
                    })
                });
            let Some(done) = entry else {
                continue;
            };
            if newline_alone && done.fresh.is_none() {
                // The same heads reading the whole token from a fresh lexeme: its leading
                // spaces and tabs become an ignored lexeme there.
                let fresh = done.state.without_inhibitors();
                let mut whole = TokenMask::new(vocab.len());
                plain(&fresh, whole.as_mut());
                let paren_zero = fresh.heads().all(|h| h.indent().paren_level() == 0);
                done.fresh = Some((whole, paren_zero));
            }
            let rests = match &group.kind {
                EndKind::General(tokens) => tokens.len(),
                EndKind::Newline { each, .. } => each[0].len().max(each[1].len()),
            };
            if rests > FEW_RESTS && done.exact.is_none() {
                // Their exact mask (the fix through the masker: their lexemes are empty, so no
                // line start again): a token's rest is looked up in it.
                let mut exact = TokenMask::new(vocab.len());
                self.fill(vocab, &done.state, exact.as_mut(), &mut *plain);
                done.exact = Some(exact);
            }
            let (list, each) = match (&group.kind, &done.fresh) {
                (EndKind::General(tokens), _) => (2, tokens),
                (EndKind::Newline { fresh, each }, Some((whole, paren_zero))) => {
                    let side = usize::from(*paren_zero);
                    fresh[side].add_within(mask, whole);
                    (side as u8, &each[side])
                }
                (EndKind::Newline { .. }, None) => continue,
            };
            // A token is its prefix, which completes the lexeme, then its rest, which those
            // heads read (a commit may be split anywhere): a bit of their exact mask where the
            // rest is a token, else a commit; rests that are not tokens by their classes.
            let prefix_len = group.prefix.len();
            let commit = |state: &ParserState, t: TokenId| {
                vocab
                    .token_bytes(t)
                    .is_some_and(|bytes| state.allows(&bytes[prefix_len..]))
            };
            let mut others = false;
            for &(t, rest) in each {
                let allowed = match (rest, &done.exact) {
                    (Some(r), Some(exact)) => exact.contains(r),
                    (Some(_), None) => commit(&done.state, t),
                    (None, _) => {
                        others = true;
                        continue;
                    }
                };
                if allowed {
                    mask.insert(t);
                }
            }
            if !others {
                continue;
            }
            let (heads, shifts) = done.shifts.get_or_insert_with(|| {
                let heads = head_keys(&done.state, &self.reps);
                let shifts = Shifts::new(&done.state, &heads, &self.reps);
                (heads, shifts)
            });
            let classes = self.rest_classes(&parser, vocab, group, list, each, heads);
            for class in classes.iter() {
                let allowed = class
                    .paths
                    .as_deref()
                    .and_then(|paths| shifts.allows(&parser, &self.tops, paths))
                    .unwrap_or_else(|| commit(&done.state, class.tokens[0]));
                if allowed {
                    class.tokens.iter().for_each(|&t| mask.insert(t));
                }
            }
        }
    }

    /// The rests of `each` (a list of `group`'s, numbered `list`) that are not tokens, in
    /// classes of equal [`signature`] from heads `heads` (memoised in the group).
    fn rest_classes(
        &self,
        parser: &Parser,
        vocab: &Vocabulary,
        group: &EndGroup,
        list: u8,
        each: &[RestOf],
        heads: &[HeadKey],
    ) -> RestClasses {
        let key = (list, heads.to_vec());
        if let Some(classes) = recall(&group.rest_classes, &key) {
            return classes;
        }
        let prefix_len = group.prefix.len();
        let mut by_signature: AHashMap<Signature, Vec<TokenId>> = AHashMap::new();
        let mut classes: Vec<RestClass> = Vec::new();
        for &(t, rest) in each {
            let Some(bytes) = vocab.token_bytes(t).filter(|_| rest.is_none()) else {
                continue;
            };
            match signature(parser, heads, &bytes[prefix_len..]) {
                Some(sig) => by_signature.entry(sig).or_default().push(t),
                None => classes.push(RestClass {
                    tokens: Box::new([t]),
                    paths: None,
                }),
            }
        }
        for (sig, tokens) in by_signature {
            classes.push(RestClass {
                paths: self.shift_paths(parser, &sig),
                tokens: tokens.into(),
            });
        }
        let classes: RestClasses = classes.into();
        remember(
            &group.rest_classes,
            key,
            Arc::clone(&classes),
            REST_CLASSES_MEMO_LEN,
        );
        classes
    }

    /// The vocabulary grouped by how a head inside a would-be newline lexeme in lexer state
    /// `s` reads each token (memoised).
    fn line_start(&self, parser: &Parser, vocab: &Vocabulary, s: LexState) -> Arc<LineStart> {
        if let Some(groups) = recall(&self.line_starts, &s) {
            return groups;
        }
        let lexer = parser.lexer();
        let mut inside: AHashMap<LexState, Vec<TokenId>> = AHashMap::new();
        // (general tokens, fresh per side, each per side) per (prefix, state, whether the
        // lexeme is the prefix's only reading: no shorter one ends inside it).
        type Sorted = (Vec<RestOf>, [Vec<TokenId>; 2], [Vec<RestOf>; 2]);
        let trie = vocab.trie();
        let token_of = |bytes: &[u8]| {
            trie.find(bytes)
                .and_then(|n| trie.tokens_at(n).first().copied())
        };
        let mut ends: AHashMap<(&[u8], LexState, bool), Sorted> = AHashMap::new();
        let newline_alone = |state: LexState| {
            let nl = parser.indenter().map(|i| i.newline());
            lexer.accepted(state).len() == 1 && lexer.accepted(state).first().copied() == nl
        };
        for (t, bytes) in vocab.text_tokens() {
            let reading = walk(parser, s, bytes);
            if let Some(end) = reading.inside {
                inside.entry(end).or_default().push(t);
            }
            for (k, &(len, state)) in reading.ends.iter().enumerate() {
                let (prefix, rest) = bytes.split_at(len);
                let alone = k == 0;
                let sorted = ends.entry((prefix, state, alone)).or_default();
                if !newline_alone(state) {
                    sorted.0.push((t, token_of(rest)));
                    continue;
                }
                // The fresh reading has no inhibitor: it stands for the completed heads only
                // when no longer lexeme completes inside the token (which would end them), and
                // when no shorter reading ends inside the prefix (its heads, with inhibitors of
                // their own, are among those after the prefix).
                let ignored =
                    alone && reading.last_accept == len && same_as_ignored(parser, prefix, rest[0]);
                for (side, paren_zero) in [false, true].into_iter().enumerate() {
                    if ignored && !self.fresh_needs(parser, vocab, paren_zero).contains(t) {
                        sorted.1[side].push(t);
                    } else {
                        sorted.2[side].push((t, token_of(rest)));
                    }
                }
            }
        }
        let n = vocab.len();
        let mut inside: Vec<(LexState, TokenSet)> = inside
            .into_iter()
            .map(|(end, tokens)| (end, TokenSet::new(tokens, n)))
            .collect();
        inside.sort_unstable_by_key(|&(end, _)| end);
        let mut ends: Vec<EndGroup> = ends
            .into_iter()
            .map(
                |((prefix, state, alone), (general, [f0, f1], each))| EndGroup {
                    prefix: prefix.into(),
                    state,
                    alone,
                    rest_classes: Default::default(),
                    kind: if general.is_empty() {
                        EndKind::Newline {
                            fresh: [TokenSet::new(f0, n), TokenSet::new(f1, n)],
                            each,
                        }
                    } else {
                        EndKind::General(general)
                    },
                },
            )
            .collect();
        ends.sort_unstable_by(|a, b| (&a.prefix, a.state).cmp(&(&b.prefix, b.state)));
        let width_read = ends.iter().any(|g| !g.prefix.contains(&b'\n'));
        let groups = Arc::new(LineStart {
            inside,
            ends,
            width_read,
        });
        remember(
            &self.line_starts,
            s,
            Arc::clone(&groups),
            LINE_START_MEMO_LEN,
        );
        groups
    }

    /// The class's [`ShiftPath`]s (made once).
    fn shifts_of<'c>(&self, parser: &Parser, class: &'c Class) -> Option<&'c [ShiftPath]> {
        class
            .shifts
            .get_or_init(|| {
                // Each head's paths (memoised with its signature), as paths from its index.
                let ids = class.sig.as_ref()?;
                let mut paths = Vec::new();
                for (origin, (&id, memo)) in ids.iter().zip(class.heads.iter()).enumerate() {
                    let mut m = lock(memo);
                    let m = &mut *m;
                    let id = id as usize;
                    let per = match &m.shifts[id] {
                        Some(p) => Arc::clone(p),
                        None => {
                            let p: Arc<[ShiftPath]> = self.shift_paths(parser, &m.sigs[id])?.into();
                            m.shifts[id] = Some(Arc::clone(&p));
                            p
                        }
                    };
                    paths.extend(per.iter().map(|p| ShiftPath {
                        origin: origin as u32,
                        ..p.clone()
                    }));
                }
                Some(paths.into_boxed_slice())
            })
            .as_deref()
    }

    /// [`shift_paths`] with [`after_first`] memoised.
    fn shift_paths(&self, parser: &Parser, sig: &Signature) -> Option<Box<[ShiftPath]>> {
        shift_paths(parser, sig, &|terminals| {
            let key = smallvec::SmallVec::from_slice(terminals);
            if let Some(r) = recall(&self.reach, &key) {
                return r;
            }
            let shifts_of = self.shifts_of.get_or_init(|| shift_pairs(parser));
            let r = Arc::new(after_first(parser, shifts_of, terminals));
            remember(&self.reach, key, Arc::clone(&r), REACH_MEMO_LEN);
            r
        })
    }

    /// Whether a head in `config` is already inside a lexeme that may become the newline
    /// terminal without reading one of [`IndentFix::nl_bytes`] (its lexeme is under way and
    /// can still become it).
    fn may_enter_newline(&self, parser: &Parser, (s, _, _): LexConfig) -> bool {
        let lexer = parser.lexer();
        let nl = parser.indenter().map(|i| i.newline());
        s != lexer.start() && nl.is_some_and(|nl| lexer.reachable(s).contains(nl))
    }

    /// The text tokens of `vocab` that hold one of [`IndentFix::nl_bytes`].
    fn candidates(&self, vocab: &Vocabulary) -> &TokenList {
        self.candidates.get_or_init(|| {
            vocab
                .text_tokens()
                .filter(|(_, bytes)| bytes.iter().any(|&b| self.nl_bytes[b as usize]))
                .map(|(t, _)| t)
                .collect()
        })
    }
}

/// The value `memo` holds for `key`.
fn recall<K: std::hash::Hash + Eq, V: Clone>(memo: &RwLock<AHashMap<K, V>>, key: &K) -> Option<V> {
    memo.read().ok().and_then(|m| m.get(key).cloned())
}

/// Stores `value` for `key` in `memo`, which starts over when it holds `cap` entries.
fn remember<K: std::hash::Hash + Eq, V>(
    memo: &RwLock<AHashMap<K, V>>,
    key: K,
    value: V,
    cap: usize,
) {
    if let Ok(mut m) = memo.write() {
        if m.len() >= cap {
            m.clear();
        }
        m.insert(key, value);
    }
}

/// Stores a copy of `mask` for `key` in `memo`, which holds at most `cap` masks. When it is
/// full one entry makes room, and its buffer takes the copy unless a reader still holds it: a
/// mask is 16 KB with a 128k vocabulary, which a fresh allocation per state (and freeing the
/// whole memo when it fills) would cost again for every state whose mask is not met twice.
fn remember_mask<K: std::hash::Hash + Eq + Clone>(
    memo: &RwLock<AHashMap<K, Arc<TokenMask>>>,
    key: K,
    mask: &MaskMut<'_>,
    cap: usize,
) {
    let Ok(mut m) = memo.write() else {
        return;
    };
    let mut spare = None;
    if m.len() >= cap {
        let old = m.keys().next().cloned();
        spare = old.and_then(|k| m.remove(&k));
    }
    let mut known = spare.unwrap_or_else(|| Arc::new(TokenMask::new(mask.len())));
    match Arc::get_mut(&mut known) {
        Some(buffer) if buffer.len() == mask.len() => {
            buffer.words_mut().copy_from_slice(mask.words());
        }
        _ => {
            let mut fresh = TokenMask::new(mask.len());
            fresh.words_mut().copy_from_slice(mask.words());
            known = Arc::new(fresh);
        }
    }
    m.insert(key, known);
}

/// Sets or clears `tokens` in `mask`.
fn set_class(tokens: &[TokenId], allowed: bool, mask: &mut MaskMut<'_>) {
    if allowed {
        tokens.iter().for_each(|&t| mask.insert(t));
    } else {
        tokens.iter().for_each(|&t| mask.remove(t));
    }
}

/// The distinct (lexer configuration, bracket depth) of `state`'s heads, sorted (inhibitors
/// as their representatives `reps`).
fn head_keys(state: &ParserState, reps: &[LexState]) -> Vec<HeadKey> {
    let mut heads: Vec<HeadKey> = state
        .heads()
        .map(|h| (config_of(h, reps), h.indent().paren_level()))
        .collect();
    heads.sort_unstable();
    heads.dedup();
    heads
}

/// A head's lexer configuration, its inhibitor as its representative in `reps`.
fn config_of(h: Head<'_>, reps: &[LexState]) -> LexConfig {
    let inhibitor = h
        .inhibitor()
        .map(|i| reps.get(i.as_usize()).copied().unwrap_or(i));
    (h.lex_state(), inhibitor, h.lexeme_is_empty())
}

/// Per lexer state, the least state with the same [`munch_lexer::Lexer::next_inhibited`] on
/// every byte class: as an inhibitor it is the same.
fn inhibitor_reps(parser: &Parser) -> Box<[LexState]> {
    let lexer = parser.lexer();
    let mut first: AHashMap<Vec<LexState>, LexState> = AHashMap::new();
    (0..lexer.state_len())
        .map(|i| {
            let q = LexState::from(i as u32);
            let row: Vec<LexState> = (0..lexer.class_len())
                .map(|c| lexer.next_inhibited_class(q, c as u8))
                .collect();
            *first.entry(row).or_insert(q)
        })
        .collect()
}

/// The bytes `b` that can begin a lexeme which may become the newline terminal `nl`: from some
/// lexer state, reading `b` as the first byte of a new lexeme (plainly from the start state, or
/// on an inhibited branch) or going on from a lexeme that could not become `nl`, leads to a state
/// from which `nl` is reachable. A branch of [`needs_context`] that starts in a state from which
/// `nl` is not reachable can only reach it through such a byte.
fn nl_bytes(parser: &Parser, nl: TerminalId) -> [bool; 256] {
    let lexer = parser.lexer();
    let reaches = |s: LexState| lexer.reachable(s).contains(nl);
    let mut classes = vec![false; lexer.class_len()];
    for q in (0..lexer.state_len()).map(|i| LexState::from(i as u32)) {
        let entering = q == lexer.start() || !reaches(q);
        for (c, hit) in classes.iter_mut().enumerate() {
            let c = c as u8;
            *hit |= (entering && reaches(lexer.next_class(q, c)))
                || reaches(lexer.next_inhibited_class(q, c));
        }
    }
    std::array::from_fn(|b| classes[lexer.byte_class(b as u8) as usize])
}

/// Whether `prefix` (spaces and tabs), read from a fresh lexeme, is one `%ignore`d lexeme
/// that byte `next` ends without killing it: then a head reading `prefix` then `next...` from
/// a fresh lexeme goes on exactly as one that read `prefix` inside a newline lexeme and
/// completed it there.
fn same_as_ignored(parser: &Parser, prefix: &[u8], next: u8) -> bool {
    let lexer = parser.lexer();
    let mut s = lexer.start();
    for &b in prefix {
        if b != b' ' && b != b'\t' {
            return false;
        }
        s = lexer.next(s, b);
        if lexer.is_dead(s) || !lexer.accepted(s).iter().all(|&t| parser.is_ignored(t)) {
            return false;
        }
    }
    // Ends it: `next` is no part of it, so the lexeme after it begins with `next` alike.
    lexer.is_dead(lexer.next(s, next)) && !lexer.is_dead(lexer.next_inhibited(s, next))
}

/// What the parser sees of a token read from some heads: for each path of the lexer-only
/// walk, the head it starts from, the lexemes it completes (each as its lexer state, which
/// names its terminals, with the newline's width where the indenter reads it) and where it
/// ends. Two tokens with the same signature from the same heads are both allowed or both not:
/// a commit runs the parser along each path, and a head's GSS and indentation context after a
/// path depend only on the terminals and widths it shifts; liveness only on the head and the
/// final lexer configuration. Widths inside brackets are dropped (the indenter drops the
/// newline there), so `",\n"`, `",\n    "` and `",\n\n  "` share one. `None` when the walk
/// has more than [`SIGNATURE_PATHS`] paths (the token is then a class of its own).
fn signature(parser: &Parser, heads: &[HeadKey], bytes: &[u8]) -> Option<Signature> {
    let ind = parser.indenter()?;
    let nl = ind.newline();
    let lexer = parser.lexer();
    let normal = |b: Branch| -> Branch {
        let reads_width =
            !b.empty && b.depth.is_none_or(|d| d == 0) && lexer.reachable(b.state).contains(nl);
        if reads_width {
            b
        } else {
            Branch {
                width: 0,
                newline: false,
                ..b
            }
        }
    };
    let mut paths: Signature = heads
        .iter()
        .enumerate()
        .map(|(origin, &((state, inhibitor, empty), paren))| {
            let b = Branch {
                origin: origin as u32,
                state,
                inhibitor,
                empty,
                depth: Some(paren),
                width: 0,
                newline: false,
            };
            (normal(b), Events::new())
        })
        .collect();
    let mut next: Signature = Signature::new();
    for &byte in bytes {
        for (b, events) in &paths {
            let s = match b.inhibitor {
                Some(i) => lexer.next_inhibited(i, byte),
                None => lexer.next(b.state, byte),
            };
            if lexer.is_dead(s) {
                continue;
            }
            let (width, newline) = read_width(b, byte);
            if lexer.can_grow(s) {
                let grown = Branch {
                    state: s,
                    inhibitor: None,
                    empty: false,
                    width,
                    newline,
                    ..*b
                };
                next.push((normal(grown), events.clone()));
            }
            let accepted = lexer.accepted(s);
            if !accepted.is_empty() {
                let reads = accepted.contains(&nl) && b.depth.is_none_or(|d| d == 0);
                let mut events = events.clone();
                // An ignored lexeme, or a newline the indenter drops, leaves the head's node
                // and context as they were: the parser sees nothing.
                let unseen = accepted
                    .iter()
                    .all(|&t| parser.is_ignored(t) || (t == nl && b.depth.is_some_and(|d| d > 0)));
                if !unseen {
                    events.push(Event {
                        state: s,
                        width: reads.then_some((width, newline)),
                    });
                }
                let depth = if unseen {
                    b.depth
                } else if accepted.len() > 1 {
                    // A tie forks the parser: each terminal moves its own depth.
                    None
                } else {
                    indent_bracket_delta(ind, accepted[0], b.depth)
                };
                let fresh = Branch {
                    state: lexer.start(),
                    inhibitor: lexer.inhibits(s).then_some(s),
                    empty: true,
                    depth,
                    width: 0,
                    newline: false,
                    ..*b
                };
                next.push((fresh, events));
            }
        }
        next.sort_unstable();
        next.dedup();
        if next.len() > SIGNATURE_PATHS {
            return None;
        }
        std::mem::swap(&mut paths, &mut next);
        next.clear();
    }
    // Where a path ends, only the head's liveness is asked, and some ends are live whatever
    // the parser says: a lexeme that may still become an ignored terminal (or a newline inside
    // brackets), and an empty lexeme. The latter because its head's node was made by a shift
    // (or is a head of the state, or its node after a lexeme the parser does not see), and in
    // a reduced grammar (every symbol derives some text; `cfg::reduce` makes it so) the stack
    // after a shift is a viable prefix, which some terminal continues or which the indenter's
    // final dedents accept: `is_head_live` holds. Such ends are one, whatever their state.
    for (b, _) in paths.iter_mut() {
        let live = b.empty
            || lexer
                .reachable(b.state)
                .iter()
                .any(|u| parser.is_ignored(u) || (u == nl && b.depth.is_some_and(|d| d > 0)));
        if live {
            *b = Branch {
                state: lexer.dead(),
                inhibitor: None,
                empty: false,
                depth: None,
                width: 0,
                newline: false,
                ..*b
            };
        }
    }
    paths.sort_unstable();
    paths.dedup();
    Some(paths)
}

/// The [`ShiftPath`]s of signature `sig`, when none of its paths reads a newline's width or
/// ties terminals, and none ends inside a lexeme that may become the newline (`None`
/// otherwise).
fn shift_paths(
    parser: &Parser,
    sig: &Signature,
    reach: &dyn Fn(&[TerminalId]) -> Arc<RestReach>,
) -> Option<Box<[ShiftPath]>> {
    let nl = parser.indenter()?.newline();
    let lexer = parser.lexer();
    let mut paths = Vec::with_capacity(sig.len());
    for (b, events) in sig {
        let simple = |e: &Event| match lexer.accepted(e.state) {
            &[t] if e.width.is_none() && t != nl && !parser.is_ignored(t) => Some(t),
            _ => None,
        };
        let mut terminals: smallvec::SmallVec<[TerminalId; 4]> =
            events.iter().map_while(simple).collect();
        let terminal_len = parser.cfg().terminal_len();
        let mut path = |terminals: smallvec::SmallVec<[TerminalId; 4]>, end| {
            // A terminal the grammar never uses is never shifted: the path is dead.
            if terminals.iter().any(|t| t.as_usize() >= terminal_len) {
                return;
            }
            let rest = reach(&terminals);
            paths.push(ShiftPath {
                origin: b.origin,
                terminals,
                end,
                rest,
            });
        };
        if let Some(e) = events.get(terminals.len()) {
            // A newline the indenter reads is shifted before its indents or dedents.
            if lexer.accepted(e.state) == [nl] {
                terminals.push(nl);
            }
            path(terminals, PathEnd::Unknown);
            continue;
        }
        // [`signature`] gives every end that is live whatever the parser says the dead
        // state; the others are inside a lexeme, which no ignored terminal is reachable from,
        // nor the newline unless outside brackets: live iff the parser can shift a terminal
        // reachable from it after the path's own (one path each, when few).
        if b.state == lexer.dead() {
            path(terminals, PathEnd::Live);
            continue;
        }
        let reachable = lexer.reachable(b.state);
        if b.empty || (reachable.contains(nl) && b.depth != Some(0)) {
            path(terminals, PathEnd::Unknown);
        } else if reachable.iter().count() <= INSIDE_PATHS {
            for u in reachable.iter() {
                let mut longer = terminals.clone();
                longer.push(u);
                path(longer, PathEnd::Live);
            }
        } else {
            path(terminals, PathEnd::Inside(b.state));
        }
    }
    Some(paths.into())
}

/// The most terminals reachable from a lexeme that [`shift_paths`] tries one path each.
const INSIDE_PATHS: usize = 8;

/// The parser's answers for [`ShiftPath`]s from the heads of one state, in one mask: the
/// frontier after each sequence of terminals asked (sequences share their beginnings).
struct Shifts {
    /// Per [`HeadKey`] of the state (sorted), its heads' nodes.
    origins: Vec<smallvec::SmallVec<[crate::gss::GssNode; 2]>>,
    /// The frontier after (origin, terminals); empty: they do not shift.
    frontiers: AHashMap<(u32, smallvec::SmallVec<[TerminalId; 8]>), Frontier>,
    /// The LR states from which the heads of (origin) shift (terminal); `None`: a budget was
    /// exceeded.
    tops: AHashMap<(u32, TerminalId), Option<smallvec::SmallVec<[Top; 4]>>>,
    /// Per origin, its heads' stacks ([`Shifts::stacks`]).
    stacks: AHashMap<u32, Option<Arc<[Stack]>>>,
    /// The stacks [`TopsMemo`] reads below a head's node, per depth.
    reads: ReadMemo,
    cache: ShiftCache,
}

/// LR states of a stack, the deepest first.
type Stack = smallvec::SmallVec<[crate::lr::LrState; 16]>;

/// Stacks as [`read_stacks`] reads them, with whether each ends there.
type ReadStacks = smallvec::SmallVec<[(Stack, bool); STACK_PATHS]>;

/// Per (GSS node, depth), the stacks [`read_stacks`] reads there (`None`: too many): the
/// memo's lookups for the classes of one mask read the same heads' stacks again and again. A
/// mask reads a few (node, depth) pairs, so a short list searched in order, kept inline for
/// the commonest mask, which reads one.
type ReadMemo = smallvec::SmallVec<[((crate::gss::GssNodeId, usize), Option<ReadStacks>); 1]>;

/// The stacks below `node`, read `depth` states deep, remembered in `reads`.
fn read_once<'r>(
    reads: &'r mut ReadMemo,
    node: &crate::gss::GssNode,
    depth: usize,
) -> Option<&'r ReadStacks> {
    let key = (node.id(), depth);
    let at = match reads.iter().position(|(k, _)| *k == key) {
        Some(at) => at,
        None => {
            let mut read = ReadStacks::new();
            let ok = read_stacks(node, depth, &mut read);
            reads.push((key, ok.then_some(read)));
            reads.len() - 1
        }
    };
    reads[at].1.as_ref()
}

/// Adds to `out` the stacks below `node`, each read `depth` states deep or to its bottom, as
/// LR states from the deepest read to the top, with whether the stack ends there; `false`
/// when `out` would hold more than [`STACK_PATHS`] (a GSS forks below its heads).
fn read_stacks(node: &crate::gss::GssNode, depth: usize, out: &mut ReadStacks) -> bool {
    // Depth first, each pending entry a node and the states above it (top first).
    let mut pending: smallvec::SmallVec<[(crate::gss::NodeRef<'_>, Stack); STACK_PATHS]> =
        smallvec::smallvec![(node.as_ref(), smallvec::SmallVec::new())];
    while let Some((node, mut above)) = pending.pop() {
        above.push(node.state());
        let edges = node.edges();
        if edges.is_empty() || above.len() >= depth {
            above.reverse();
            out.push((above, edges.is_empty()));
        } else {
            for e in edges {
                pending.push((node.follow(e), above.clone()));
            }
        }
        if out.len() + pending.len() > STACK_PATHS {
            return false;
        }
    }
    true
}

/// Where stacks shift a terminal ([`shift_tops`]), kept across masks by the top states that
/// decide it: the reductions before a shift read a few states below the top (a name becomes
/// an expression through rules that pop it alone), so the heads of different masks, whose
/// stacks differ further down, share the answer without running the tables again. The answer
/// is kept relative to the top ([`ShiftAt`]: states popped, states pushed), and each stack's
/// [`Top`]s are made from its own states ([`top_of`]).
#[derive(Default)]
struct TopsMemo {
    /// Per (terminal, LR state on top): how many top states the keys of [`TopsMemo::tops`]
    /// hold (sorted; at most [`TOPS_DEPTHS`]).
    depths: RwLock<AHashMap<(u32, crate::lr::LrState), KeyLens>>,
    /// Per (terminal, a stack's top states, whether the stack ends there): the states it
    /// shifts the terminal from.
    tops: RwLock<AHashMap<TopsKey, Arc<[ShiftAt]>>>,
}

/// The lengths of [`TopsMemo`]'s keys for one terminal and top state, sorted.
type KeyLens = smallvec::SmallVec<[usize; TOPS_DEPTHS]>;

/// A key of [`TopsMemo::tops`]: a terminal, the top states of a stack, and whether the stack
/// ends there.
type TopsKey = (u32, Stack, bool);

/// The most stacks' answers [`TopsMemo`] keeps before it starts over.
const TOPS_MEMO_LEN: usize = 1 << 16;

/// The most key lengths [`TopsMemo`] tries per terminal and top state.
const TOPS_DEPTHS: usize = 4;

impl TopsMemo {
    /// The states from which the stacks below `nodes` shift terminal `k`, if every stack's
    /// answer is known.
    fn recall(
        &self,
        nodes: &[crate::gss::GssNode],
        k: u32,
        reads: &mut ReadMemo,
    ) -> Option<smallvec::SmallVec<[Top; 4]>> {
        let depths = self.depths.read().ok()?;
        let known = self.tops.read().ok()?;
        let mut tops = smallvec::SmallVec::new();
        for n in nodes {
            let depths = depths.get(&(k, n.state()))?;
            // Deep enough for the tops too: a reduction pops fewer states than a key holds.
            let read = read_once(reads, n, depths.last()? + TOP_DEPTH)?;
            for (stack, ends) in read {
                let found = known_at(&known, depths, k, stack, *ends)?;
                tops.extend(found.iter().map(|a| top_of(stack, a)));
            }
        }
        Some(tops)
    }

    /// Whether some stack below `nodes` shifts terminal `k`, if the memo answers: yes once one
    /// stack's answer is known to shift, no when every stack's is known not to. The stacks are
    /// read only as deep as the keys (a [`Top`] needs the states below them too).
    fn shifts_any(
        &self,
        nodes: &[crate::gss::GssNode],
        k: u32,
        reads: &mut ReadMemo,
    ) -> Option<bool> {
        let depths = self.depths.read().ok()?;
        let known = self.tops.read().ok()?;
        let mut unknown = false;
        for n in nodes {
            let Some(depths) = depths.get(&(k, n.state())) else {
                unknown = true;
                continue;
            };
            let Some(read) = read_once(reads, n, *depths.last()?) else {
                unknown = true;
                continue;
            };
            for (stack, ends) in read {
                match known_at(&known, depths, k, stack, *ends) {
                    Some(at) if !at.is_empty() => return Some(true),
                    Some(_) => {}
                    None => unknown = true,
                }
            }
        }
        (!unknown).then_some(false)
    }

    /// Stores `at`, what [`shift_tops`] found for `stack` (read at most [`STACK_DEPTH`] deep)
    /// and terminal `k`, having read its states from index `low` up.
    fn remember(&self, stack: &Stack, k: u32, low: usize, at: &[ShiftAt]) {
        let Some(&top) = stack.last() else {
            return;
        };
        // The whole stack decides when the run read its bottom (or its length): the key is
        // then every state, unless the stack was cut at the reading depth.
        let key = if low == 0 {
            if stack.len() >= STACK_DEPTH {
                return;
            }
            (k, stack.clone(), true)
        } else {
            (k, stack[low..].iter().copied().collect(), false)
        };
        let Ok(mut depths) = self.depths.write() else {
            return;
        };
        let known = depths.entry((k, top)).or_default();
        let r = key.1.len();
        if let Err(at) = known.binary_search(&r) {
            if known.len() >= TOPS_DEPTHS {
                return;
            }
            known.insert(at, r);
        }
        drop(depths);
        remember(&self.tops, key, at.into(), TOPS_MEMO_LEN);
    }
}

/// The answer `known` holds for terminal `k` on `stack` (read to its bottom when `ends`), under
/// the first key length of `depths` that has one: a key shorter than the stack is its top
/// states (the stack goes on below), one as long is the stack as read.
fn known_at<'m>(
    known: &'m AHashMap<TopsKey, Arc<[ShiftAt]>>,
    depths: &KeyLens,
    k: u32,
    stack: &Stack,
    ends: bool,
) -> Option<&'m Arc<[ShiftAt]>> {
    depths.iter().find_map(|&r| {
        let key = match r.cmp(&stack.len()) {
            std::cmp::Ordering::Less => {
                (k, stack[stack.len() - r..].iter().copied().collect(), false)
            }
            std::cmp::Ordering::Equal => (k, stack.clone(), ends),
            std::cmp::Ordering::Greater => return None,
        };
        known.get(&key)
    })
}

/// The top of a stack from which a terminal shifts: at most [`TOP_DEPTH`] states, the
/// deepest first (the state that shifts last).
type Top = smallvec::SmallVec<[crate::lr::LrState; TOP_DEPTH]>;

/// How many states of a stack a [`Top`] keeps.
const TOP_DEPTH: usize = 8;

/// The most [`Top`]s a [`RestReach`] remembers its answer for before it starts over.
const DEEPER_MEMO_LEN: usize = 4096;

/// How deep [`Shifts::stacks`] reads a head's stack.
const STACK_DEPTH: usize = 64;

/// The most stacks [`Shifts::stacks`] reads for one origin (a GSS forks below its heads).
const STACK_PATHS: usize = 8;

/// The most table steps one run over a head's stack takes.
const STACK_RUN_WORK: usize = 4096;

/// GSS nodes after some shifts; `None`: a budget was exceeded.
type Frontier = Option<smallvec::SmallVec<[crate::gss::GssNode; 2]>>;

impl Shifts {
    fn new(state: &ParserState, heads: &[HeadKey], reps: &[LexState]) -> Shifts {
        let mut origins = vec![smallvec::SmallVec::new(); heads.len()];
        for h in state.heads() {
            if let Ok(i) = heads.binary_search(&(config_of(h, reps), h.indent().paren_level())) {
                let nodes: &mut smallvec::SmallVec<[crate::gss::GssNode; 2]> = &mut origins[i];
                if !nodes.iter().any(|n| n.id() == h.node().id()) {
                    nodes.push(h.node().clone());
                }
            }
        }
        Shifts {
            origins,
            frontiers: AHashMap::default(),
            tops: AHashMap::default(),
            stacks: AHashMap::default(),
            reads: ReadMemo::default(),
            cache: ShiftCache::new(),
        }
    }

    /// Whether some path's terminals shift from its heads and its end is live (`None`: a
    /// budget was exceeded; commit instead).
    fn allows(&mut self, parser: &Parser, memo: &TopsMemo, paths: &[ShiftPath]) -> Option<bool> {
        // First what the tables decide: the states each path's first terminal shifts from,
        // and whether the rest shifts on a stack with that state on top.
        let mut open = false;
        for path in paths {
            let Some(&first) = path.terminals.first() else {
                match path.end {
                    PathEnd::Live => return Some(true),
                    _ => {
                        open = true;
                        continue;
                    }
                }
            };
            if path.rest.all == Reach::Never {
                continue;
            }
            if let PathEnd::Inside(_) = path.end {
                open = true;
                continue;
            }
            // Where the rest shifts on every stack the first shifts on and the end is live, the
            // path is live iff the first shifts at all: no need for the states it shifts from.
            if path.rest.all == Reach::Always && path.end == PathEnd::Live {
                if self.shifts_any(parser, memo, path.origin, first)? {
                    return Some(true);
                }
                continue;
            }
            // A path past its terminals (ending inside a lexeme, or unknown) is dead when they
            // do not shift.
            let mut depends = false;
            let tops = self.tops(parser, memo, path.origin, first)?;
            for top in tops {
                let Some(&x) = top.last() else {
                    continue;
                };
                let reach = match path.rest.at_top(parser, x) {
                    Reach::Depends => path.rest.below(parser, &top, &path.terminals),
                    r => r,
                };
                match (reach, path.end) {
                    (Reach::Never, _) => {}
                    (Reach::Always, PathEnd::Live) => return Some(true),
                    (Reach::Always, _) => open = true,
                    (Reach::Depends, _) => depends = true,
                }
            }
            if !depends {
                continue;
            }
            // Where it depends on the stack below: the tables run on the heads' own stacks,
            // as deep as they are read.
            let Some(stacks) = self.stacks(path.origin) else {
                open = true;
                continue;
            };
            let ks: smallvec::SmallVec<[u32; 8]> =
                path.terminals.iter().map(|t| t.as_u32()).collect();
            for stack in stacks.iter() {
                let mut stack = stack.clone();
                let mut budget = STACK_RUN_WORK;
                match (
                    run_tables(parser.tables(), &mut stack, &ks, &mut budget, 0),
                    path.end,
                ) {
                    (Reach::Never, _) => {}
                    (Reach::Always, PathEnd::Live) => return Some(true),
                    _ => open = true,
                }
            }
        }
        if !open {
            return Some(false);
        }
        // Some path past its terminals that only a commit answers.
        let mut unknown = false;
        for path in paths {
            let Some((&last, before)) = path.terminals.split_last() else {
                // No terminal: the head's own lexeme goes on (heads of a state are live).
                match path.end {
                    PathEnd::Live => return Some(true),
                    PathEnd::Inside(q) => {
                        let nodes = self.origins.get(path.origin as usize)?.clone();
                        if self.reads_on(parser, &nodes, q) {
                            return Some(true);
                        }
                        continue;
                    }
                    PathEnd::Unknown => {
                        unknown = true;
                        continue;
                    }
                }
            };
            let frontier = self.frontier(parser, path.origin, before)?;
            let live = match path.end {
                PathEnd::Unknown => {
                    unknown |= frontier
                        .iter()
                        .any(|n| parser.can_shift(n, last, &mut self.cache));
                    false
                }
                PathEnd::Live => frontier
                    .iter()
                    .any(|n| parser.can_shift(n, last, &mut self.cache)),
                PathEnd::Inside(q) => {
                    let after = self.frontier(parser, path.origin, &path.terminals)?;
                    self.reads_on(parser, &after, q)
                }
            };
            if live {
                return Some(true);
            }
        }
        (!unknown).then_some(false)
    }

    /// The stacks of the heads of `origin`, as LR states from the deepest read to the top (at
    /// most [`STACK_DEPTH`] deep), when they are at most [`STACK_PATHS`] (memoised).
    fn stacks(&mut self, origin: u32) -> Option<Arc<[Stack]>> {
        if let Some(known) = self.stacks.get(&origin) {
            return known.clone();
        }
        let mut read = ReadStacks::new();
        let ok = self
            .origins
            .get(origin as usize)?
            .iter()
            .all(|n| read_stacks(n, STACK_DEPTH, &mut read));
        let stacks: Vec<Stack> = read.into_iter().map(|(stack, _)| stack).collect();
        let stacks: Option<Arc<[Stack]>> = ok.then(|| stacks.into());
        self.stacks.insert(origin, stacks.clone());
        stacks
    }

    /// Whether the heads of `origin` shift `first` (after reductions): from the tops found in
    /// this mask, else the memo's answer for their stacks, else the tops run on the tables
    /// ([`Shifts::tops`]; `None`: a budget was exceeded).
    fn shifts_any(
        &mut self,
        parser: &Parser,
        memo: &TopsMemo,
        origin: u32,
        first: TerminalId,
    ) -> Option<bool> {
        if let Some(known) = self.tops.get(&(origin, first)) {
            return known.as_ref().map(|tops| !tops.is_empty());
        }
        let nodes = self.origins.get(origin as usize)?;
        if let Some(any) = memo.shifts_any(nodes, first.as_u32(), &mut self.reads) {
            return Some(any);
        }
        self.tops(parser, memo, origin, first)
            .map(|tops| !tops.is_empty())
    }

    /// The LR states from which the heads of `origin` shift `first` (memoised).
    fn tops(
        &mut self,
        parser: &Parser,
        memo: &TopsMemo,
        origin: u32,
        first: TerminalId,
    ) -> Option<smallvec::SmallVec<[Top; 4]>> {
        if let Some(known) = self.tops.get(&(origin, first)) {
            return known.clone();
        }
        let k = first.as_u32();
        let nodes = self.origins.get(origin as usize)?;
        if let Some(mut tops) = memo.recall(nodes, k, &mut self.reads) {
            tops.sort_unstable();
            tops.dedup();
            self.tops.insert((origin, first), Some(tops.clone()));
            return Some(tops);
        }
        // On the heads' stacks by the tables alone when the reductions stay within them.
        if let Some(stacks) = self.stacks(origin) {
            let mut tops = smallvec::SmallVec::new();
            let mut budget = STACK_RUN_WORK;
            let read = stacks.iter().all(|stack| {
                match shift_tops(parser.tables(), stack, k, &mut budget) {
                    Some((at, low)) => {
                        memo.remember(stack, k, low, &at);
                        tops.extend(at.iter().map(|a| top_of(stack, a)));
                        true
                    }
                    None => false,
                }
            });
            if read {
                tops.sort_unstable();
                tops.dedup();
                self.tops.insert((origin, first), Some(tops.clone()));
                return Some(tops);
            }
        }
        let mut tops = smallvec::SmallVec::new();
        let mut ok = true;
        for n in self.origins.get(origin as usize)? {
            match parser.shift_tops(n, first) {
                Some(t) => tops.extend(t.into_iter().map(|x| smallvec::smallvec![x])),
                None => ok = false,
            }
        }
        tops.sort_unstable();
        tops.dedup();
        let tops = ok.then_some(tops);
        self.tops.insert((origin, first), tops.clone());
        tops
    }

    /// Whether a head on one of `nodes` inside a lexeme in lexer state `q` is live.
    fn reads_on(&mut self, parser: &Parser, nodes: &[crate::gss::GssNode], q: LexState) -> bool {
        let reachable = parser.lexer().reachable(q);
        nodes.iter().any(|n| {
            reachable
                .iter()
                .any(|u| parser.can_shift(n, u, &mut self.cache))
        })
    }

    /// The frontier after shifting `terminals` onto the heads of `origin`.
    fn frontier(
        &mut self,
        parser: &Parser,
        origin: u32,
        terminals: &[TerminalId],
    ) -> Option<smallvec::SmallVec<[crate::gss::GssNode; 2]>> {
        let Some((&last, before)) = terminals.split_last() else {
            return self.origins.get(origin as usize).cloned();
        };
        let key = (origin, smallvec::SmallVec::from_slice(terminals));
        if let Some(known) = self.frontiers.get(&key) {
            return known.clone();
        }
        let below = self.frontier(parser, origin, before)?;
        let after = if below.is_empty() {
            Some(smallvec::SmallVec::new())
        } else {
            parser.shift_frontier(&below, last).ok()
        };
        self.frontiers.insert(key, after.clone());
        after
    }
}

/// Whether `terminals[1..]` shift once `terminals[0]` has (the last one shiftable after its
/// reductions), on every stack, on none, or depending on the stack. From each state `s` the
/// first terminal shifts to, the tables run on the stack `s` alone: where no reduction pops `s`,
/// that is the answer from every state `x` that shifts to `s`. The others are answered per `x`
/// (on a stack whose top is `x s`; a reduction that pops `x` depends on what lies below): at
/// once while [`AFTER_FIRST_WORK`] lasts, else the first time a mask meets `x`
/// ([`RestReach::at_top`]).
fn after_first(
    parser: &Parser,
    shifts_of: &[Vec<(crate::lr::LrState, crate::lr::LrState)>],
    terminals: &[TerminalId],
) -> RestReach {
    after_first_within(parser, shifts_of, terminals, AFTER_FIRST_WORK)
}

/// [`after_first`] with `work` table steps for the runs from the states below the first
/// terminal's shift.
fn after_first_within(
    parser: &Parser,
    shifts_of: &[Vec<(crate::lr::LrState, crate::lr::LrState)>],
    terminals: &[TerminalId],
    work: usize,
) -> RestReach {
    let tables = parser.tables();
    let rest: smallvec::SmallVec<[u32; 8]> = terminals.iter().skip(1).map(|t| t.as_u32()).collect();
    let known = |all| RestReach {
        all,
        by_top: Box::new([]),
        rest: rest.clone(),
        deeper: Default::default(),
    };
    let Some(&first) = terminals.first() else {
        return known(Reach::Always);
    };
    if rest.is_empty() {
        return known(Reach::Always);
    }
    let mut pairs: Vec<(crate::lr::LrState, crate::lr::LrState)> = shifts_of
        .get(first.as_usize())
        .map_or(&[][..], |v| &v[..])
        .to_vec();
    pairs.sort_unstable();
    pairs.dedup_by_key(|&mut (x, _)| x);
    // Per state shifted to: the answer when no reduction pops it.
    let mut by_s: AHashMap<crate::lr::LrState, Reach> = AHashMap::new();
    let mut budget = work;
    let ordering = std::sync::atomic::Ordering::Relaxed;
    let by_top: Box<[_]> = pairs
        .iter()
        .map(|&(x, s)| {
            let alone = *by_s.entry(s).or_insert_with(|| {
                let mut stack: Stack = smallvec::smallvec![s];
                let mut own = STACK_RUN_WORK;
                run_tables(tables, &mut stack, &rest, &mut own, 0)
            });
            let r = match alone {
                Reach::Depends if budget > 0 => {
                    let mut stack: Stack = smallvec::smallvec![x, s];
                    let mut own = budget.min(STACK_RUN_WORK);
                    let before = own;
                    let r = run_tables(tables, &mut stack, &rest, &mut own, 0);
                    budget -= before - own;
                    // A run cut short by the budget is answered later, in full.
                    (own > 0 || r != Reach::Depends).then_some(r)
                }
                Reach::Depends => None,
                r => Some(r),
            };
            (
                x,
                s,
                std::sync::atomic::AtomicU8::new(r.map_or(0, reach_code)),
            )
        })
        .collect();
    let codes: Vec<u8> = by_top.iter().map(|(_, _, c)| c.load(ordering)).collect();
    let all = match codes.first() {
        None => Reach::Never,
        Some(&c) if c != 0 && codes.iter().all(|&d| d == c) => {
            code_reach(c).unwrap_or(Reach::Depends)
        }
        _ => Reach::Depends,
    };
    RestReach {
        all,
        by_top: if all == Reach::Depends {
            by_top
        } else {
            Box::new([])
        },
        rest,
        deeper: Default::default(),
    }
}

/// Per terminal of the grammar, the (state, state after) of its shifts in the LR tables.
fn shift_pairs(parser: &Parser) -> Vec<Vec<(crate::lr::LrState, crate::lr::LrState)>> {
    let tables = parser.tables();
    let mut pairs = vec![Vec::new(); parser.cfg().terminal_len()];
    for x in (0..tables.state_len()).filter_map(crate::lr::LrState::new) {
        for (k, a) in tables.state_shifts(x) {
            if let (Some(list), crate::lr::Action::Shift(s)) = (pairs.get_mut(k as usize), a) {
                list.push((x, s));
            }
        }
    }
    pairs
}

/// The most nested steps (shifts and reductions) [`run_tables`] takes on one run.
const RUN_TABLES_DEPTH: usize = 256;

/// The most table steps [`after_first`] takes for one sequence from the states below the
/// first terminal's shift; the states left are run when a mask meets them.
const AFTER_FIRST_WORK: usize = 2_048;

/// Runs the LR tables on `stack` (its bottom state's own stack unknown) over lookaheads
/// `rest`, every action of a conflict in turn: [`Reach::Always`] when some run shifts them
/// all, [`Reach::Never`] when every run stops, [`Reach::Depends`] when none shifts them all
/// and some pops the bottom state (or the work runs out).
fn run_tables(
    tables: &crate::lr::LrTables,
    stack: &mut smallvec::SmallVec<[crate::lr::LrState; 16]>,
    rest: &[u32],
    budget: &mut usize,
    depth: usize,
) -> Reach {
    let Some((&k, after)) = rest.split_first() else {
        return Reach::Always;
    };
    if depth > RUN_TABLES_DEPTH {
        return Reach::Depends;
    }
    let Some(&top) = stack.last() else {
        return Reach::Depends;
    };
    let mut result = Reach::Never;
    for a in tables.actions_at(top, k) {
        if *budget == 0 {
            return Reach::Depends;
        }
        *budget -= 1;
        let r = match *a {
            crate::lr::Action::Shift(t) => {
                stack.push(t);
                let r = run_tables(tables, stack, after, budget, depth + 1);
                stack.pop();
                r
            }
            crate::lr::Action::Reduce { lhs, len, .. } => {
                reduce_then(tables, stack, len as usize, lhs, rest, budget, depth)
            }
            crate::lr::Action::Accept => Reach::Never,
        };
        match r {
            Reach::Always => return Reach::Always,
            Reach::Depends => result = Reach::Depends,
            Reach::Never => {}
        }
    }
    result
}

/// Where a stack shifts a terminal after the reductions before it: how many of the stack's
/// states those reductions popped, and the goto states they pushed above the rest, which
/// with the states left below make the [`Top`] ([`top_of`]).
type ShiftAt = (usize, Stack);

/// The [`Top`] of `stack` where it shifts at `at`.
fn top_of(stack: &[crate::lr::LrState], (popped, pushed): &ShiftAt) -> Top {
    let kept = stack.len().saturating_sub(*popped);
    let below = TOP_DEPTH.saturating_sub(pushed.len());
    stack[kept.saturating_sub(below)..kept]
        .iter()
        .chain(&pushed[pushed.len().saturating_sub(TOP_DEPTH)..])
        .copied()
        .collect()
}

/// Where `stack` shifts lookahead `k` after the reductions it allows, and the least index of
/// `stack` those read: the answer holds for every stack with the same states from there up
/// ([`TopsMemo`]). `None` when a reduction pops the whole stack (what lies below decides) or
/// the work runs out.
fn shift_tops(
    tables: &crate::lr::LrTables,
    stack: &Stack,
    k: u32,
    budget: &mut usize,
) -> Option<(smallvec::SmallVec<[ShiftAt; 4]>, usize)> {
    let mut run = ShiftTops {
        tables,
        k,
        budget,
        low: stack.len(),
        at: smallvec::SmallVec::new(),
    };
    if !run.run(&mut stack.clone(), 0, stack.len()) {
        return None;
    }
    for (kept, _) in &mut run.at {
        *kept = stack.len() - *kept;
    }
    Some((run.at, run.low))
}

/// A run of the LR tables on a stack to where it shifts a terminal ([`shift_tops`]).
struct ShiftTops<'t> {
    tables: &'t crate::lr::LrTables,
    k: u32,
    budget: &'t mut usize,
    /// The least index of the stack read.
    low: usize,
    /// Where it shifts, each with the number of the stack's states kept below (made the number
    /// popped at the end).
    at: smallvec::SmallVec<[ShiftAt; 4]>,
}

impl ShiftTops<'_> {
    /// Runs on `stack`, whose first `kept` states are the stack's own (the others pushed by
    /// reductions); `false` as [`shift_tops`] says `None`.
    fn run(&mut self, stack: &mut Stack, depth: usize, kept: usize) -> bool {
        let Some(&top) = stack.last() else {
            return false;
        };
        // A pushed state on top sits above a state read already (the goto's).
        self.low = self.low.min(stack.len() - 1);
        if depth > RUN_TABLES_DEPTH {
            return false;
        }
        for a in self.tables.actions_at(top, self.k) {
            if *self.budget == 0 {
                return false;
            }
            *self.budget -= 1;
            match *a {
                crate::lr::Action::Shift(_) => self
                    .at
                    .push((kept, stack[kept..].iter().copied().collect())),
                crate::lr::Action::Reduce { lhs, len, .. } => {
                    let len = len as usize;
                    if len >= stack.len() {
                        return false;
                    }
                    let popped: Stack = stack.drain(stack.len() - len..).collect();
                    self.low = self.low.min(stack.len() - 1);
                    let kept = kept.min(stack.len());
                    let ok = match stack.last().and_then(|&t| self.tables.goto(t, lhs)) {
                        Some(g) => {
                            stack.push(g);
                            let ok = self.run(stack, depth + 1, kept);
                            stack.pop();
                            ok
                        }
                        None => true,
                    };
                    stack.extend(popped);
                    if !ok {
                        return false;
                    }
                }
                crate::lr::Action::Accept => {}
            }
        }
        true
    }
}

/// Pops `len` states off `stack` (keeping at least one), goes to `lhs`, runs on over `rest`,
/// and restores the stack.
fn reduce_then(
    tables: &crate::lr::LrTables,
    stack: &mut smallvec::SmallVec<[crate::lr::LrState; 16]>,
    len: usize,
    lhs: crate::cfg::NonterminalId,
    rest: &[u32],
    budget: &mut usize,
    depth: usize,
) -> Reach {
    if len >= stack.len() {
        return Reach::Depends;
    }
    let popped: smallvec::SmallVec<[crate::lr::LrState; 16]> =
        stack.drain(stack.len() - len..).collect();
    let r = match stack.last().and_then(|&top| tables.goto(top, lhs)) {
        Some(g) => {
            stack.push(g);
            let r = run_tables(tables, stack, rest, budget, depth + 1);
            stack.pop();
            r
        }
        // No goto: the reduction cannot happen on this stack.
        None => Reach::Never,
    };
    stack.extend(popped);
    r
}

/// The most paths [`signature`] follows.
const SIGNATURE_PATHS: usize = 64;

/// A token's [`signature`].
type Signature = smallvec::SmallVec<[(Branch, Events); 4]>;

/// The lexemes a path of [`signature`]'s walk completed.
type Events = smallvec::SmallVec<[Event; 4]>;

/// A branch of [`signature`]'s walk: the head it started from, its lexer configuration, the
/// bracket depth (`None`: unknown), and the width of its lexeme where the indenter may read it
/// (0 elsewhere).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct Branch {
    origin: u32,
    state: LexState,
    inhibitor: Option<LexState>,
    empty: bool,
    depth: Option<u32>,
    width: u32,
    newline: bool,
}

/// A lexeme completed on a path of [`signature`]'s walk: the lexer state it ended in, and the
/// newline's (width, holds a `'\n'`) where the indenter reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct Event {
    state: LexState,
    width: Option<(u32, bool)>,
}

/// The (width, holds a `'\n'`) of `b`'s lexeme after it reads `byte`, as
/// [`IndentCtx::read`](crate::parser::IndentCtx) counts them.
fn read_width(b: &Branch, byte: u8) -> (u32, bool) {
    let (w, newline) = if b.empty {
        (0, false)
    } else {
        (b.width, b.newline)
    };
    let width = match byte {
        b'\n' => 0,
        b' ' => w.saturating_add(1),
        b'\t' => w.saturating_add(crate::parser::TAB_LEN),
        _ => w,
    };
    (width, newline || byte == b'\n')
}

/// The contract for one token, by brute force.
fn allows(state: &ParserState, vocab: &Vocabulary, t: TokenId) -> bool {
    vocab
        .token_bytes(t)
        .is_some_and(|bytes| state.allows(bytes))
}

/// How a head in lexer state `s` (inside a lexeme) reads `bytes` ([`Reading`]). A commit of
/// the token is the union of its lexings: the lexeme ends after one of the `ends` (its
/// completed heads read the rest), or takes the whole token.
fn walk(parser: &Parser, mut s: LexState, bytes: &[u8]) -> Reading {
    let lexer = parser.lexer();
    let mut reading = Reading {
        ends: smallvec::SmallVec::new(),
        inside: None,
        last_accept: 0,
    };
    for (i, &b) in bytes.iter().enumerate() {
        if i > 0 && !lexer.accepted(s).is_empty() {
            reading.last_accept = i;
            if !lexer.is_dead(lexer.next_inhibited(s, b)) {
                reading.ends.push((i, s));
            }
        }
        s = lexer.next(s, b);
        if lexer.is_dead(s) {
            return reading;
        }
    }
    if !lexer.accepted(s).is_empty() {
        reading.last_accept = bytes.len();
    }
    reading.inside = Some(s);
    reading
}

/// Whether the context may change the answer for `bytes` from a head in lexer configuration
/// `config`, outside brackets when `paren_zero` (at depth ≥ 1 otherwise) ([`context_effect`]).
fn needs_context(parser: &Parser, config: LexConfig, paren_zero: bool, bytes: &[u8]) -> bool {
    context_effect(parser, config, paren_zero.then_some(0), bytes) != Effect::None
}

/// What the indentation context may do to a token's answer from a head, against the masker's
/// (which reads the newline terminal as any other).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Effect {
    /// Nothing: the masker's answer is exact.
    None,
    /// It may allow a token the masker refuses, never the reverse: a newline the indenter
    /// drops inside brackets at the token's last byte or where the next byte ends it anyway,
    /// or a token ending inside a lexeme that may still become one inside brackets (the
    /// masker's reading keeps the head live only where the parser can shift the newline; the
    /// indenter's, always).
    Adds,
    /// Anything: a newline completed where the indenter acts (outside brackets, its width
    /// read) or one the rest of the token reads past.
    Any,
}

/// [`Effect`] of `bytes` from a head in lexer configuration `config` at bracket depth `depth`
/// (`None`: unknown, at least 1 at the start), running every branch of the streaming lexer
/// over the bytes (without the parser), where some branch completes the newline terminal, or
/// ends inside a lexeme that may still become one inside brackets. Where the depth is unknown
/// the effect is the larger of those at every depth.
///
/// Outside brackets, a newline lexeme completed at the token's last byte that can still grow
/// changes nothing: the head that goes on reading it is live exactly when the masker says (it
/// can shift the newline, or go on to another terminal), and when it is not, no width makes the
/// newline shiftable either. A completion that the next byte of the token kills changes
/// nothing outside brackets and can only add inside (the newline dropped instead of shifted, on
/// a branch that dies at once either way). Any other completion may change anything.
fn context_effect(parser: &Parser, config: LexConfig, depth: Option<u32>, bytes: &[u8]) -> Effect {
    let Some(ind) = parser.indenter() else {
        return Effect::None;
    };
    let nl = ind.newline();
    let lexer = parser.lexer();
    let mut effect = Effect::None;
    // (lexer state, inhibitor, lexeme empty, bracket depth when known).
    type Branch = (LexState, Option<LexState>, bool, Option<u32>);
    let mut configs: smallvec::SmallVec<[Branch; 4]> =
        smallvec::smallvec![(config.0, config.1, config.2, depth)];
    let mut next: smallvec::SmallVec<[Branch; 4]> = smallvec::SmallVec::new();
    for (i, &b) in bytes.iter().enumerate() {
        for &(s, inh, _, depth) in &configs {
            let s = match inh {
                Some(i) => lexer.next_inhibited(i, b),
                None => lexer.next(s, b),
            };
            if lexer.is_dead(s) {
                continue;
            }
            if lexer.can_grow(s) && !next.contains(&(s, None, false, depth)) {
                next.push((s, None, false, depth));
            }
            let accepted = lexer.accepted(s);
            if accepted.contains(&nl) {
                let last = i + 1 == bytes.len();
                // (A character that may or may not extend it leaves the question open.)
                let killed = !last && lexer.is_dead(lexer.next_inhibited(s, bytes[i + 1]));
                let grows = last && lexer.can_grow(s);
                let outside = depth == Some(0);
                let inside = depth.is_some_and(|d| d > 0);
                if outside && (killed || grows) {
                    // Nothing: see above.
                } else if killed || (last && (inside || grows)) {
                    effect = effect.max(Effect::Adds);
                } else {
                    return Effect::Any;
                }
            }
            if !accepted.is_empty() {
                // A tie forks the parser: the depth is known when every terminal leaves it so.
                let first = indent_bracket_delta(ind, accepted[0], depth);
                let depth = accepted[1..]
                    .iter()
                    .all(|&t| indent_bracket_delta(ind, t, depth) == first)
                    .then_some(first)
                    .flatten();
                let c = (lexer.start(), lexer.inhibits(s).then_some(s), true, depth);
                if !next.contains(&c) {
                    next.push(c);
                }
            }
        }
        std::mem::swap(&mut configs, &mut next);
        next.clear();
        if configs.is_empty() {
            return effect;
        }
    }
    let open = configs
        .iter()
        .any(|&(s, _, empty, depth)| !empty && depth != Some(0) && lexer.reachable(s).contains(nl));
    if open {
        effect = effect.max(Effect::Adds);
    }
    effect
}

// The fix is shared by compiled maskers across threads.
const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<IndentFix>();
};

#[cfg(test)]
#[path = "indent_tests.rs"]
mod tests;
