//! [`IndentFix`] against the oracle on a small indented grammar and vocabulary, and the
//! pieces it memoises: the newline bytes, the classes it commits one token of.

use std::sync::Arc;

use munch_vocab::{TokenId, Vocabulary};

use super::*;
use crate::mask::{Masker, Oracle};

const GRAMMAR: &str = r#"
start: (_NEWLINE | stmt)*
stmt: simple | compound
simple: expr ("=" expr)? _NEWLINE
compound: "if" expr ":" suite
suite: simple | _NEWLINE _INDENT stmt+ _DEDENT
expr: NAME | STRING | NAME "(" [args] ")" | "(" args ")" | "[" [args] "]"
args: expr ("," expr)* [","]
NAME: /[a-z]+/
STRING: /'[^'\n]*'/
_NEWLINE: ( /\r?\n[\t ]*/ | COMMENT )+
COMMENT: /#[^\n]*/
%ignore /[\t ]+/
%ignore COMMENT
%declare _INDENT _DEDENT
"#;

/// Texts with blocks, brackets across lines, comments, tabs and dedents.
const TEXTS: &[&str] = &[
    "if a:\n    b(c,\n  d)\n    e\nf\n",
    "x = [a,\n b,\n]\n",
    "if a:\n  if b:\n    c\n  # k\n  d\n",
    "f(\n)\nif a:\n\tb\n        c\n",
    "x = f('a b',\n  c)\n",
];

/// Single printable bytes, and tokens mixing newlines, indentation, brackets and words.
const TOKENS: &[&str] = &[
    "\n",
    "\n ",
    "\n  ",
    "\n    ",
    "\n\n",
    "\n\t",
    "\n\n  ",
    " \n",
    ",\n",
    ",\n    ",
    "(\n",
    ")\n",
    "),\n",
    "[\n",
    "]\n",
    ":\n",
    ":\n    ",
    ":\n  b",
    "\n# c\n",
    "# c",
    "#",
    "  ",
    "    ",
    "  x",
    " x",
    "    if",
    "\n    e",
    "\n  )",
    "),",
    "(a",
    "a,",
    "c\n",
    "\n]",
    " =",
    "\tb",
    "\n\tb",
    "\r\n",
    "\n  #",
    ", ",
    "), ",
    "'a\n",
    "'a ",
    "  b\n  c",
    "    b\n  c",
    "  b\n    c",
    "a)\n",
    ")(\n",
    "((\n",
    "a,\n",
    "b(\n",
    "])\n",
    "))\n",
    "):\n",
    "),\n  x",
    "a)\n  ",
];

/// SynCode's shape: [`GRAMMAR`]'s statements, with SynCode's `_NL` for the newline, which
/// loops around comments and lazy docstrings, which are also strings; and strings may begin
/// with a letter that is also a name.
fn docstring_grammar() -> String {
    let statements: Vec<&str> = GRAMMAR
        .lines()
        .take_while(|l| !l.starts_with("expr:"))
        .collect();
    let terminals = r#"
expr: NAME | STRING | LONG_STRING | NAME "(" [args] ")" | "(" args ")"
args: expr ("," expr)* [","]
NAME: /[a-z]+/
STRING: /[rb]?"(?!"").*?(?<!\\)"/
LONG_STRING: /[rb]?"""(?<!\\).*?"""/s
COMMENT: /#[^\n]*(\n[\t ]*)+/ | LONG_STRING
_NL: ( /(\r?\n[\t ]*)+/ | COMMENT )+
%ignore /[\t ]+/
%ignore COMMENT
%declare _INDENT _DEDENT
"#;
    statements.join("\n").replace("_NEWLINE", "_NL") + terminals
}

/// Docstrings as statements and inside blocks, prefixed strings, strings inside brackets.
const DOCSTRING_TEXTS: &[&str] = &[
    "\"\"\"doc \"q\" end\"\"\"\nif a:\n    \"\"\"in\n    two\"\"\"\n    b = r\"x\"\n",
    "x = f(b\"y\",\n  \"\"\"z\"\"\")\nrb = ra\n",
    "if r:\n  # c\n  \"\"\"d\"\"\"\n  \"\"\nbe = \"\"\n",
];

/// Tokens that cross a docstring's end, hold a string's prefix, or a newline and a word.
const DOCSTRING_TOKENS: &[&str] = &[
    "\"\"\"",
    " \"\"\"\",\n",
    "\"\"\",\n",
    "\"\"\"\n",
    "\"\"\"\n    ",
    "\n    \"\"\"",
    " r",
    " re",
    "(r",
    "(b\"",
    "rb",
    "r\"",
    "b\"",
    "\n    r",
    "\n  be",
    "\"\"",
    "\"\"\n",
    " \"\"",
    "\n",
    "\n  ",
    "\n    ",
    "    ",
    "\n\n",
    ",\n",
    ",\n  ",
    "\")\n",
    "\"\"\")\n",
    "# c\n",
    "\n  #",
    "),",
    ":\n    ",
];

fn parser() -> Arc<Parser> {
    crate::parser::indent_tests::indented_parser(GRAMMAR)
}

fn vocab() -> Arc<Vocabulary> {
    vocab_of(TOKENS)
}

/// The printable bytes, then `more`, then an end-of-sequence token.
fn vocab_of(more: &[&str]) -> Arc<Vocabulary> {
    let mut tokens: Vec<Option<Vec<u8>>> = (b' '..=b'~').map(|b| Some(vec![b])).collect();
    tokens.extend(more.iter().map(|t| Some(t.as_bytes().to_vec())));
    tokens.push(None);
    let eos = TokenId::from_usize(tokens.len() - 1);
    Arc::new(Vocabulary::from_token_bytes(tokens, vec![eos]).unwrap())
}

/// The state after every prefix of every text (each text is accepted whole).
fn states(parser: &Arc<Parser>) -> Vec<ParserState> {
    states_of(parser, TEXTS)
}

/// The state after every prefix of every one of `texts` (each is accepted whole).
fn states_of(parser: &Arc<Parser>, texts: &[&str]) -> Vec<ParserState> {
    let mut out = Vec::new();
    for text in texts {
        let mut s = ParserState::new(Arc::clone(parser));
        out.push(s.clone());
        for b in text.bytes() {
            s.commit_bytes(&[b]).unwrap();
            out.push(s.clone());
        }
        assert!(s.is_accepting(), "{text:?}");
    }
    out
}

/// The fix, with the oracle's masks as the masker's own, gives the oracle's masks: its
/// classes, groups and guards answer every token as a commit does.
#[test]
fn the_fix_gives_the_oracles_masks() {
    let checked = fix_against_oracle(&parser(), &vocab(), TEXTS);
    assert!(checked > 50);
}

/// The same where the newline lexeme may also be a docstring (lazy: it ends at the first
/// closing quotes and a longer reading waits on it) and a string: tokens that end it after a
/// prefix, with several readings, are answered as commits do.
#[test]
fn the_fix_gives_the_oracles_masks_around_docstrings() {
    let parser = crate::parser::indent_tests::indented_parser(&docstring_grammar());
    let checked = fix_against_oracle(&parser, &vocab_of(DOCSTRING_TOKENS), DOCSTRING_TEXTS);
    assert!(checked > 50);
}

/// Compares the fix's masks (the oracle as its masker) with the oracle's after every prefix of
/// `texts`; returns how many states it compared.
fn fix_against_oracle(parser: &Arc<Parser>, vocab: &Arc<Vocabulary>, texts: &[&str]) -> usize {
    let fix = IndentFix::new(parser).unwrap();
    let oracle = Oracle::new(Arc::clone(vocab));
    let mut cache = oracle.create_cache();
    let mut checked = 0;
    for state in states_of(parser, texts) {
        let want = oracle.mask(&mut cache, &state);
        let mut got = TokenMask::new(vocab.len());
        fix.fill(vocab, &state, got.as_mut(), &mut |s, m| {
            oracle.fill_into(&mut oracle.create_cache(), s, m)
        });
        assert_eq!(got.first_difference(&want), None, "{state:?}");
        checked += 1;
    }
    checked
}

/// Every class holds tokens that are all allowed or all refused, in every state; inside
/// brackets the newline tokens that differ only in indentation are one class.
#[test]
fn classes_hold_tokens_with_one_answer() {
    let (parser, vocab) = (parser(), vocab());
    let fix = IndentFix::new(&parser).unwrap();
    let trie = vocab.trie();
    let (mut merged, mut equivalents) = (0, 0);
    for state in states(&parser) {
        let nl = parser.indenter().unwrap().newline();
        let lexer = parser.lexer();
        let others = state
            .restricted(|h| h.lexeme_is_empty() || !lexer.reachable(h.lex_state()).contains(nl));
        let heads = head_keys(&others, &fix.reps);
        if heads.is_empty() {
            continue;
        }
        for class in fix.classes(&parser, &vocab, heads).list.iter() {
            let answers: Vec<bool> = class
                .nodes
                .iter()
                .flat_map(|&n| trie.tokens_at(n))
                .map(|&t| others.allows(vocab.token_bytes(t).unwrap()))
                .collect();
            assert!(answers.iter().all(|&a| a == answers[0]), "{state:?}");
            merged += usize::from(class.nodes.len() > 1);
            if let Some(u) = class.equivalent {
                let spaced = vocab.token_bytes(u).unwrap();
                assert_eq!(others.allows(spaced), answers[0], "{state:?} {spaced:?}");
                equivalents += 1;
            }
        }
    }
    assert!(merged > 0, "some classes hold several tokens");
    assert!(
        equivalents > 0,
        "some classes are answered by a spaced token"
    );

    // After `b(c,` the newline is dropped: its width no longer tells tokens apart.
    let classes = classes_after(&fix, &parser, &vocab, "if a:\n    b(c,");
    let class = |text: &str| class_of(&classes, &vocab, text);
    let newline = class("\n");
    assert!(newline.is_some());
    for text in ["\n ", "\n    ", "\n\n", "\n\n  ", "\n\t"] {
        assert_eq!(class(text), newline, "{text:?}");
    }
    let equivalent = |text: &str| classes.list[class(text).unwrap()].equivalent;
    let token = |text: &str| {
        trie.tokens_at(trie.find(text.as_bytes()).unwrap())
            .first()
            .copied()
    };
    assert_eq!(equivalent(",\n    "), token(","), "the first part alone");
    assert_eq!(equivalent("\n"), token(" "), "a space for the newline");
    // At the top level the width decides: an indent there is refused, not the bare newline.
    let classes = classes_after(&fix, &parser, &vocab, "a");
    assert_ne!(
        class_of(&classes, &vocab, "\n    e"),
        class_of(&classes, &vocab, "\n\tb")
    );
}

/// The classes of the tokens that need the context from the heads after `text`.
fn classes_after(
    fix: &IndentFix,
    parser: &Arc<Parser>,
    vocab: &Vocabulary,
    text: &str,
) -> Arc<Classes> {
    let mut s = ParserState::new(Arc::clone(parser));
    s.commit_bytes(text.as_bytes()).unwrap();
    fix.classes(parser, vocab, head_keys(&s, &fix.reps))
}

/// The index of the class holding `text`'s token.
fn class_of(classes: &Classes, vocab: &Vocabulary, text: &str) -> Option<usize> {
    let n = vocab.trie().find(text.as_bytes()).unwrap();
    classes.list.iter().position(|c| c.nodes.contains(&n))
}

/// Only a newline, a carriage return or a comment's `#` begins a lexeme that may become
/// `_NEWLINE`, and a token without one needs no context from a fresh lexeme.
#[test]
fn newline_bytes_are_the_ones_that_begin_it() {
    let (parser, vocab) = (parser(), vocab());
    let fix = IndentFix::new(&parser).unwrap();
    let bytes: Vec<u8> = (0..=255u8).filter(|&b| fix.nl_bytes[b as usize]).collect();
    assert_eq!(bytes, b"\n\r#");
    let start = (parser.lexer().start(), None, true);
    for (t, token) in vocab.text_tokens() {
        let holds = token.iter().any(|&b| fix.nl_bytes[b as usize]);
        assert_eq!(fix.candidates(&vocab).contains(&t), holds);
        if !holds {
            for paren_zero in [false, true] {
                assert!(!needs_context(&parser, start, paren_zero, token));
            }
        }
    }
}

/// The memoised tokens needing the context from a head (first byte read once, a fresh
/// lexeme's answers shared) are those [`needs_context`] names when run on every token.
#[test]
fn needs_of_is_needs_context_on_every_token() {
    let mut checked = 0;
    for (parser, vocab, texts) in grammars() {
        let fix = IndentFix::new(&parser).unwrap();
        let trie = vocab.trie();
        let mut configs: Vec<(LexConfig, bool)> = states_of(&parser, texts)
            .iter()
            .flat_map(|s| {
                head_keys(s, &fix.reps)
                    .into_iter()
                    .map(|(c, paren)| (c, paren == 0))
            })
            .collect();
        configs.sort_unstable();
        configs.dedup();
        for (config, paren_zero) in configs {
            let mut want: Vec<TrieNode> = vocab
                .text_tokens()
                .filter(|&(_, bytes)| needs_context(&parser, config, paren_zero, bytes))
                .filter_map(|(_, bytes)| trie.find(bytes))
                .collect();
            want.sort_unstable();
            let mut got = fix.needs_of(&parser, &vocab, config, paren_zero).to_vec();
            got.sort_unstable();
            assert_eq!(got, want, "{config:?} outside brackets: {paren_zero}");
            checked += 1;
        }
    }
    assert!(checked > 20);
}

/// Where the parser's tables answer a class ([`Shifts::allows`]: the terminals each path of
/// its signature shifts, run on the tables from the heads' stacks or from the states that
/// shift the first one), the answer is the commit's, allowed and refused alike.
#[test]
fn shifts_answer_classes_as_commits_do() {
    let (mut allowed, mut refused, mut deeper) = (0, 0, 0);
    for (parser, vocab, texts) in grammars() {
        let fix = IndentFix::new(&parser).unwrap();
        let nl = parser.indenter().unwrap().newline();
        let lexer = parser.lexer();
        for state in states_of(&parser, texts) {
            let others = state.restricted(|h| {
                h.lexeme_is_empty() || !lexer.reachable(h.lex_state()).contains(nl)
            });
            let heads = head_keys(&others, &fix.reps);
            if heads.is_empty() {
                continue;
            }
            let mut shifts = Shifts::new(&others, &heads, &fix.reps);
            for class in fix.classes(&parser, &vocab, heads.clone()).list.iter() {
                let Some(paths) = fix.shifts_of(&parser, class) else {
                    continue;
                };
                let Some(got) = shifts.allows(&parser, &fix.tops, paths) else {
                    continue;
                };
                let bytes = vocab.token_bytes(class.first).unwrap();
                assert_eq!(got, others.allows(bytes), "{state:?} {bytes:?}");
                if got {
                    allowed += 1;
                } else {
                    refused += 1;
                }
                deeper += paths
                    .iter()
                    .filter(|p| p.rest.all == Reach::Depends)
                    .count();
            }
        }
    }
    assert!(
        allowed > 20 && refused > 20,
        "{allowed} allowed, {refused} refused"
    );
    assert!(
        deeper > 0,
        "some answers depend on the stack below the first shift"
    );
}

/// The states a head's stack shifts a terminal from, read by the tables on the stack alone
/// ([`shift_tops`]), are the RNGLR reducer's ([`Parser::shift_tops`]), for every head and
/// terminal.
#[test]
fn stack_tops_are_the_reducers() {
    let parser = parser();
    let fix = IndentFix::new(&parser).unwrap();
    let tables = parser.tables();
    let mut compared = 0;
    for state in states(&parser) {
        let heads = head_keys(&state, &fix.reps);
        let mut shifts = Shifts::new(&state, &heads, &fix.reps);
        for origin in 0..heads.len() as u32 {
            let Some(stacks) = shifts.stacks(origin) else {
                continue;
            };
            for t in (0..parser.cfg().terminal_len()).map(TerminalId::from_usize) {
                let mut tops: Vec<Top> = Vec::new();
                let mut budget = STACK_RUN_WORK;
                let read =
                    stacks
                        .iter()
                        .all(|s| match shift_tops(tables, s, t.as_u32(), &mut budget) {
                            Some((at, _)) => {
                                tops.extend(at.iter().map(|a| top_of(s, a)));
                                true
                            }
                            None => false,
                        });
                if !read {
                    continue;
                }
                let mut got: Vec<_> = tops.iter().filter_map(|top| top.last().copied()).collect();
                got.sort_unstable();
                got.dedup();
                let mut want: Vec<_> = shifts.origins[origin as usize]
                    .iter()
                    .flat_map(|n| parser.shift_tops(n, t).unwrap())
                    .collect();
                want.sort_unstable();
                want.dedup();
                assert_eq!(got, want, "{state:?} {}", parser.terminal_name(t));
                compared += 1;
            }
        }
    }
    assert!(compared > 100);
}

/// A [`Top`] is the last [`TOP_DEPTH`] states of the stack as the reductions leave it: the
/// states they did not pop, then the ones they pushed.
#[test]
fn a_top_is_what_the_reductions_leave() {
    let states = |xs: &[u32]| -> Stack {
        xs.iter()
            .map(|&x| crate::lr::LrState::from_usize(x as usize))
            .collect()
    };
    let stack = states(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    let cases: [(usize, &[u32], &[u32]); 5] = [
        (0, &[], &[3, 4, 5, 6, 7, 8, 9, 10]),
        (3, &[20], &[1, 2, 3, 4, 5, 6, 7, 20]),
        (9, &[20, 21], &[1, 20, 21]),
        (
            2,
            &[20, 21, 22, 23, 24, 25, 26, 27, 28],
            &[21, 22, 23, 24, 25, 26, 27, 28],
        ),
        (
            1,
            &[20, 21, 22, 23, 24, 25, 26],
            &[9, 20, 21, 22, 23, 24, 25, 26],
        ),
    ];
    for (popped, pushed, want) in cases {
        let top = top_of(&stack, &(popped, states(pushed)));
        assert_eq!(
            top.as_slice(),
            states(want).as_slice(),
            "{popped} {pushed:?}"
        );
    }
}

/// The states a [`TopsMemo`] recalls for a head's stacks, stored from other heads' stacks that
/// share the states the reductions read, are the ones its own stacks give ([`shift_tops`]).
#[test]
fn remembered_tops_are_the_stacks_own() {
    let (mut recalled, mut asked) = (0, 0);
    for (parser, _, texts) in grammars() {
        let fix = IndentFix::new(&parser).unwrap();
        let tables = parser.tables();
        for state in states_of(&parser, texts) {
            let heads = head_keys(&state, &fix.reps);
            let mut shifts = Shifts::new(&state, &heads, &fix.reps);
            for origin in 0..heads.len() as u32 {
                let Some(stacks) = shifts.stacks(origin) else {
                    continue;
                };
                let nodes = shifts.origins[origin as usize].clone();
                for t in (0..parser.cfg().terminal_len()).map(TerminalId::from_usize) {
                    asked += 1;
                    let mut want = smallvec::SmallVec::new();
                    let mut budget = STACK_RUN_WORK;
                    let read = stacks.iter().all(|s| {
                        match shift_tops(tables, s, t.as_u32(), &mut budget) {
                            Some((at, _)) => {
                                want.extend(at.iter().map(|a| top_of(s, a)));
                                true
                            }
                            None => false,
                        }
                    });
                    if let Some(mut got) = fix.tops.recall(&nodes, t.as_u32(), &mut ReadMemo::new())
                    {
                        recalled += 1;
                        assert!(read, "{state:?} {}", parser.terminal_name(t));
                        for tops in [&mut got, &mut want] {
                            tops.sort_unstable();
                            tops.dedup();
                        }
                        assert_eq!(got, want, "{state:?} {}", parser.terminal_name(t));
                    }
                    // Stored as a mask stores it.
                    let _ = shifts.tops(&parser, &fix.tops, origin, t);
                }
            }
        }
    }
    assert!(
        recalled > 100 && recalled < asked,
        "{recalled} of {asked} recalled"
    );
}

/// The test grammars with their vocabularies and texts.
fn grammars() -> [(Arc<Parser>, Arc<Vocabulary>, &'static [&'static str]); 2] {
    [
        (parser(), vocab(), TEXTS),
        (
            crate::parser::indent_tests::indented_parser(&docstring_grammar()),
            vocab_of(DOCSTRING_TOKENS),
            DOCSTRING_TEXTS,
        ),
    ]
}

/// A token's signature from a set of heads is its signatures from each head alone side by
/// side (paths from different heads never merge), so [`IndentFix::classes`] may put tokens in
/// one class by their per-head signatures ([`HeadSigs`]), which a new set of known heads reuses.
#[test]
fn signatures_from_several_heads_are_each_heads_side_by_side() {
    let mut several = 0;
    for (parser, vocab, texts) in grammars() {
        let fix = IndentFix::new(&parser).unwrap();
        for state in states_of(&parser, texts) {
            let heads = head_keys(&state, &fix.reps);
            if heads.len() < 2 {
                continue;
            }
            several += 1;
            for (_, bytes) in vocab.text_tokens() {
                let whole = signature(&parser, &heads, bytes);
                let alone: Option<Vec<Signature>> = heads
                    .iter()
                    .map(|&k| signature(&parser, &[k], bytes))
                    .collect();
                let Some(alone) = alone else {
                    continue;
                };
                let side_by_side: Signature = alone
                    .iter()
                    .enumerate()
                    .flat_map(|(i, sig)| {
                        sig.iter().map(move |(b, e)| {
                            let b = Branch {
                                origin: i as u32,
                                ..*b
                            };
                            (b, e.clone())
                        })
                    })
                    .collect();
                if let Some(whole) = whole {
                    assert_eq!(whole, side_by_side, "{state:?} {bytes:?}");
                }
            }
            // The memo's ids name those signatures: two class members with equal ids from
            // every head have equal signatures from the set.
            let classes = fix.classes(&parser, &vocab, heads.clone());
            for class in classes.list.iter() {
                let bytes = |n: TrieNode| {
                    let t = vocab.trie().tokens_at(n)[0];
                    vocab.token_bytes(t).unwrap()
                };
                let first = signature(&parser, &heads, bytes(class.nodes[0]));
                for &n in &class.nodes[1..] {
                    assert_eq!(signature(&parser, &heads, bytes(n)), first);
                }
            }
        }
    }
    assert!(several > 10, "{several} states with several heads");
}

/// Whether a sequence's later terminals shift after its first, asked per LR state only when a
/// mask meets that state ([`RestReach::at_top`]), is the answer of the tables run from that
/// state at once, for every state that shifts the first terminal.
#[test]
fn rest_reach_asked_per_state_is_the_tables_answer() {
    let (mut asked, mut later) = (0, 0);
    for (parser, vocab, texts) in grammars() {
        let fix = IndentFix::new(&parser).unwrap();
        let shifts_of = shift_pairs(&parser);
        let mut sequences: Vec<smallvec::SmallVec<[TerminalId; 4]>> = Vec::new();
        for state in states_of(&parser, texts) {
            let heads = head_keys(&state, &fix.reps);
            for class in fix.classes(&parser, &vocab, heads).list.iter() {
                for path in fix.shifts_of(&parser, class).unwrap_or_default() {
                    sequences.push(path.terminals.clone());
                }
            }
        }
        sequences.sort_unstable();
        sequences.dedup();
        for terminals in sequences.iter().filter(|t| t.len() > 1) {
            // No work at once: every state whose answer needs its own run is asked later.
            let lazy = after_first_within(&parser, &shifts_of, terminals, 0);
            let eager = after_first_within(&parser, &shifts_of, terminals, usize::MAX);
            let rest: smallvec::SmallVec<[u32; 8]> =
                terminals[1..].iter().map(|t| t.as_u32()).collect();
            for &(x, s) in &shifts_of[terminals[0].as_usize()] {
                let mut stack: Stack = smallvec::smallvec![x, s];
                let mut budget = usize::MAX;
                let want = run_tables(parser.tables(), &mut stack, &rest, &mut budget, 0);
                let unknown = lazy
                    .by_top
                    .iter()
                    .any(|(y, _, c)| *y == x && c.load(std::sync::atomic::Ordering::Relaxed) == 0);
                later += usize::from(unknown);
                assert_eq!(lazy.at_top(&parser, x), want, "{terminals:?} from {x:?}");
                assert_eq!(eager.at_top(&parser, x), want, "{terminals:?} from {x:?}");
                asked += 1;
            }
        }
    }
    assert!(asked > 100, "{asked} states asked");
    assert!(later > 10, "{later} answered when first asked");
}

/// A token's [`TokenParts`]: every token spelling a proper prefix of it, shortest first, and
/// as stand-ins its part before its first or last newline byte, alone or with a space, where
/// those are tokens.
#[test]
fn token_parts_are_its_prefixes_and_stand_ins() {
    let (parser, vocab) = (parser(), vocab());
    let fix = IndentFix::new(&parser).unwrap();
    let trie = vocab.trie();
    let spell = |&(_, t): &(TrieNode, TokenId)| vocab.token_bytes(t).unwrap().to_vec();
    for (_, bytes) in vocab.text_tokens() {
        let parts = fix.parts(&vocab, trie.find(bytes).unwrap(), bytes);
        let want: Vec<Vec<u8>> = (1..bytes.len())
            .map(|k| bytes[..k].to_vec())
            .filter(|p| trie.find(p).is_some_and(|n| !trie.tokens_at(n).is_empty()))
            .collect();
        assert_eq!(parts.prefixes.iter().map(spell).collect::<Vec<_>>(), want);
        for u in parts.stand_ins.iter().map(spell) {
            let cut = u
                .strip_suffix(b" ")
                .filter(|c| bytes.get(c.len()) != Some(&b' '));
            let j = cut.map_or(u.len(), <[u8]>::len);
            assert!(fix.nl_bytes[bytes[j] as usize], "{bytes:?} {u:?}");
            assert_eq!(&bytes[..j], &u[..j]);
        }
    }
    let stand_ins = |text: &str| {
        let bytes = text.as_bytes();
        let parts = fix.parts(&vocab, trie.find(bytes).unwrap(), bytes);
        parts.stand_ins.iter().map(spell).collect::<Vec<_>>()
    };
    assert!(stand_ins(",\n    ").contains(&b",".to_vec()));
    assert!(stand_ins("\n").contains(&b" ".to_vec()));
    assert!(stand_ins("),\n  x").contains(&b"),".to_vec()));
}

#[test]
fn a_full_mask_memo_keeps_the_newest_masks_in_old_buffers() {
    let memo: RwLock<AHashMap<u32, Arc<TokenMask>>> = Default::default();
    let cap = 4;
    let len = 100;
    let mask_of = |i: u32| {
        let mut m = TokenMask::new(len);
        m.insert(TokenId::from_usize(i as usize));
        m.insert(TokenId::from_usize(i as usize + 50));
        m
    };
    let mut buffers = std::collections::HashSet::new();
    for i in 0..20u32 {
        let mut m = mask_of(i);
        remember_mask(&memo, i, &m.as_mut(), cap);
        let held = memo.read().unwrap();
        assert!(held.len() <= cap);
        // The mask just stored is its own, whatever buffer holds it; the others kept theirs.
        for (&k, known) in held.iter() {
            assert_eq!(
                known.words(),
                mask_of(k).words(),
                "mask {k} after storing {i}"
            );
        }
        assert!(held.contains_key(&i));
        buffers.extend(held.values().map(|a| a.words().as_ptr() as usize));
    }
    // Once full, a new mask takes an evicted one's buffer rather than a fresh one.
    assert_eq!(buffers.len(), cap);
    // A buffer a reader still holds is not written over.
    let held: Vec<Arc<TokenMask>> = memo.read().unwrap().values().cloned().collect();
    let before: Vec<Vec<u32>> = held.iter().map(|a| a.words().to_vec()).collect();
    for i in 20..30u32 {
        remember_mask(&memo, i, &mask_of(i).as_mut(), cap);
    }
    for (a, w) in held.iter().zip(&before) {
        assert_eq!(a.words(), &w[..]);
    }
    for (&k, known) in memo.read().unwrap().iter() {
        assert_eq!(known.words(), mask_of(k).words());
    }
}

/// Whether a head's stacks shift a terminal, answered by [`TopsMemo`] from its keys alone (read
/// less deep than a [`Top`] needs), is the parser's own answer.
#[test]
fn the_memo_says_whether_stacks_shift_as_the_parser_does() {
    let (mut yes, mut no, mut asked) = (0, 0, 0);
    for (parser, _, texts) in grammars() {
        let fix = IndentFix::new(&parser).unwrap();
        let mut cache = ShiftCache::new();
        for state in states_of(&parser, texts) {
            let heads = head_keys(&state, &fix.reps);
            let mut shifts = Shifts::new(&state, &heads, &fix.reps);
            for origin in 0..heads.len() as u32 {
                let nodes = shifts.origins[origin as usize].clone();
                for t in (0..parser.cfg().terminal_len()).map(TerminalId::from_usize) {
                    if parser.is_ignored(t) {
                        continue;
                    }
                    asked += 1;
                    let want = nodes.iter().any(|n| parser.can_shift(n, t, &mut cache));
                    match fix
                        .tops
                        .shifts_any(&nodes, t.as_u32(), &mut ReadMemo::new())
                    {
                        Some(true) => yes += 1,
                        Some(false) => no += 1,
                        None => {}
                    }
                    if let Some(got) = fix
                        .tops
                        .shifts_any(&nodes, t.as_u32(), &mut ReadMemo::new())
                    {
                        assert_eq!(got, want, "{state:?} {}", parser.terminal_name(t));
                    }
                    // Stored as a mask stores it, and the mask's own answer is the parser's.
                    if let Some(got) = shifts.shifts_any(&parser, &fix.tops, origin, t) {
                        assert_eq!(got, want, "{state:?} {}", parser.terminal_name(t));
                    }
                }
            }
        }
    }
    assert!(yes > 50 && no > 50, "{yes} yes, {no} no of {asked}");
}

/// Inside a comment the width counts the words' spaces, yet only a `'\n'` ends the lexeme, so
/// no mask reads it: the masks of a comment's words are remembered once, whatever their spaces,
/// and are the oracle's. After a newline's indentation the width decides, and is read.
#[test]
fn a_comments_words_share_one_remembered_mask() {
    let (parser, vocab) = (parser(), vocab());
    let fix = IndentFix::new(&parser).unwrap();
    let oracle = Oracle::new(Arc::clone(&vocab));
    let mut cache = oracle.create_cache();
    let lex_state = |s: &ParserState| {
        s.heads()
            .find(|h| !h.lexeme_is_empty())
            .map(|h| h.lex_state())
            .unwrap()
    };
    let mut comment = ParserState::new(Arc::clone(&parser));
    comment.commit_bytes(b"a\n  # b").unwrap();
    assert!(
        !fix.line_start(&parser, &vocab, lex_state(&comment))
            .width_read
    );
    let mut indented = ParserState::new(Arc::clone(&parser));
    indented.commit_bytes(b"a\n  ").unwrap();
    assert!(
        fix.line_start(&parser, &vocab, lex_state(&indented))
            .width_read
    );
    for more in ["", "c", " c", "  c d", " c  d\te"] {
        let mut s = comment.clone();
        s.commit_bytes(more.as_bytes()).unwrap();
        let want = oracle.mask(&mut cache, &s);
        let mut got = TokenMask::new(vocab.len());
        fix.fill(&vocab, &s, got.as_mut(), &mut |s, m| {
            oracle.fill_into(&mut oracle.create_cache(), s, m)
        });
        assert_eq!(got.first_difference(&want), None, "{s:?}");
        assert_eq!(fix.inside_masks.read().unwrap().len(), 1, "{more:?}");
    }
}

/// At a line's indentation the head reads its width, and its state is rarely met again: its
/// mask is kept the second time the state is met, not the first. Both are the oracle's.
#[test]
fn an_indentations_mask_is_kept_when_met_again() {
    let (parser, vocab) = (parser(), vocab());
    let fix = IndentFix::new(&parser).unwrap();
    let oracle = Oracle::new(Arc::clone(&vocab));
    let mut state = ParserState::new(Arc::clone(&parser));
    state.commit_bytes(b"if a:\n  ").unwrap();
    let want = oracle.mask(&mut oracle.create_cache(), &state);
    for kept in [0, 1, 1] {
        let mut got = TokenMask::new(vocab.len());
        fix.fill(&vocab, &state, got.as_mut(), &mut |s, m| {
            oracle.fill_into(&mut oracle.create_cache(), s, m)
        });
        assert_eq!(got.first_difference(&want), None);
        assert_eq!(fix.inside_masks.read().unwrap().len(), kept);
    }
}

/// Tokens that end a newline lexeme inside brackets after a space or an indentation, with
/// rests that are no tokens (`" 'a',\n"` reads `"'a',\n"` after `" "`).
const REST_TOKENS: &[&str] = &[
    " 'a',\n",
    " 'a b',\n",
    " 'a')\n",
    " 'a'),\n",
    " ab,\n",
    " abc,\n",
    " ab)\n",
    " ab(\n",
    " ab]\n",
    "  ab,",
    "  'a',",
    "\n  'a',",
    "\n  ab,",
    "\n  ab)",
    "\n  ab(c",
    " ab = c\n",
    " :\n",
];

/// Inside brackets, a head inside a newline lexeme reads tokens whose rests are no tokens: the
/// rests are put in classes of one signature from the heads that completed the lexeme, and
/// answered per class (from the tables, else one commit). The masks are the oracle's, and the
/// classes hold more than one rest each.
#[test]
fn rests_that_are_no_tokens_are_answered_per_class() {
    let parser = parser();
    let vocab = vocab_of(&[TOKENS, REST_TOKENS].concat());
    let texts = [
        "x = f(a,\n  b,\n   'c',\n  d)\n",
        "x = [a,\n b(c,\n  d),\n]\n",
    ];
    assert!(fix_against_oracle(&parser, &vocab, &texts) > 40);
    // The same again with the fix's memos looked at: some class holds several rests, and the
    // tables answer some.
    let fix = IndentFix::new(&parser).unwrap();
    let oracle = Oracle::new(Arc::clone(&vocab));
    for state in states_of(&parser, &texts) {
        let mut got = TokenMask::new(vocab.len());
        fix.fill(&vocab, &state, got.as_mut(), &mut |s, m| {
            oracle.fill_into(&mut oracle.create_cache(), s, m)
        });
    }
    let (mut shared, mut by_tables) = (0, 0);
    for groups in fix.line_starts.read().unwrap().values() {
        for group in &groups.ends {
            for classes in group.rest_classes.read().unwrap().values() {
                shared += classes.iter().filter(|c| c.tokens.len() > 1).count();
                by_tables += classes.iter().filter(|c| c.paths.is_some()).count();
            }
        }
    }
    assert!(shared > 0 && by_tables > 0, "{shared} {by_tables}");
}
