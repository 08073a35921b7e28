//! The summaries against brute force: for every head of states reached by random sentences,
//! and terminal sequences with ties and ignored terminals, "the stack can take this sequence,
//! then one of these terminals" computed by reading the GSS with the summaries equals
//! [`Parser::shift_from`] / [`Parser::can_shift`] applied step by step. The summaries read the
//! tables' quotient ([`ClassTables`]), terminals and states as their classes.

use std::sync::Arc;

use ahash::AHashSet;
use munch_glr::gss::{GssNode, GssNodeId};
use munch_glr::lark::{load, LoadConfig};
use munch_glr::parser::{Parser, ParserState, ShiftCache};
use munch_lexer::TerminalId;
use munch_testkit::generate::{render_text, GenerateConfig, Generator, SeededRng};
use munch_testkit::grammar::parser;

use crate::template::{item, parts, Cont, Conts, Item, Templates, FIN, INIT, SUCC};
use munch_glr::lr::ClassTables;

/// Builds the continuation of "lexemes `seq` (each a tie set), then an open lexeme that can
/// complete one of `end`".
fn chain(lr: &ClassTables, conts: &mut Conts, seq: &[Vec<TerminalId>], end: &[TerminalId]) -> Cont {
    let p = lr.parser();
    let shiftable = |t: TerminalId| !p.is_ignored(t) && t.as_usize() < p.cfg().terminal_len();
    let ctrls: Vec<(u32, Cont)> = end
        .iter()
        .filter(|&&t| shiftable(t))
        .map(|&t| (lr.terminal(t).expect("a CFG terminal"), FIN))
        .collect();
    let mut k = conts.intern(ctrls, end.iter().any(|&t| p.is_ignored(t)));
    for lexeme in seq.iter().rev() {
        let mut ctrls: Vec<(u32, Cont)> = lexeme
            .iter()
            .filter(|&&t| shiftable(t))
            .map(|&t| (lr.terminal(t).expect("a CFG terminal"), k))
            .collect();
        let ignored = lexeme.iter().any(|&t| p.is_ignored(t));
        if ignored {
            ctrls.extend_from_slice(conts.offers(k));
        }
        let succ = ignored && conts.succeeds(k);
        k = conts.intern(ctrls, succ);
    }
    k
}

/// The nondeterministic reading of the GSS below `node` with the summaries, every exit read
/// as the one that stands for it ([`Templates::canonical`]; itself unless exits were merged).
fn read(lr: &ClassTables, tpl: &mut Templates, node: &GssNode, k: Cont) -> bool {
    let conts = tpl.conts();
    if conts.succeeds(k) {
        return true;
    }
    let mut seen: AHashSet<(Item, GssNodeId)> = AHashSet::new();
    let mut stack: Vec<(Item, GssNode)> = conts
        .offers(k)
        .iter()
        .map(|&(t, k2)| (item(t, INIT, k2), node.clone()))
        .collect();
    while let Some((it, n)) = stack.pop() {
        let x = lr.state(n.state()).as_u32();
        let (t, code, k) = parts(it);
        let mut outs: Vec<Item> = Vec::new();
        if code == INIT {
            let top = tpl.top(t, x).unwrap();
            outs.extend(top.codes.iter().map(|&c| item(t, c, k)));
            if top.shifts() {
                tpl.shifted(&top, t, k, x, &mut outs).unwrap();
            }
        } else {
            let (a, r) = tpl.split(code);
            if r > 0 {
                outs.push(it - (1 << 32));
            } else {
                let pre = tpl.pre(t, a, x).unwrap();
                outs.extend(tpl.pre_codes(pre).iter().map(|&c| item(t, c, k)));
                if !tpl.pre_shift_at(pre).is_empty() {
                    tpl.post(pre, t, k, x, &mut outs).unwrap();
                }
            }
        }
        for o in outs {
            let o = tpl.canonical_item(o);
            if o == SUCC {
                return true;
            }
            for m in n.predecessors() {
                if seen.insert((o, m.id())) {
                    stack.push((o, m));
                }
            }
        }
    }
    false
}

/// The same question answered by the GLR runtime.
fn brute(p: &Parser, node: &GssNode, seq: &[Vec<TerminalId>], end: &[TerminalId]) -> bool {
    let mut frontier = vec![node.clone()];
    for lexeme in seq {
        let mut next: Vec<GssNode> = Vec::new();
        for n in &frontier {
            for &t in lexeme {
                if p.is_ignored(t) {
                    next.push(n.clone());
                } else {
                    next.extend(p.shift_from(n, t).unwrap());
                }
            }
        }
        let mut ids = AHashSet::new();
        next.retain(|n| ids.insert(n.id()));
        frontier = next;
    }
    if frontier.is_empty() {
        return false;
    }
    if end.iter().any(|&t| p.is_ignored(t)) {
        return true;
    }
    let mut cache = ShiftCache::new();
    frontier.iter().any(|n| {
        end.iter()
            .any(|&t| t.as_usize() < p.cfg().terminal_len() && p.can_shift(n, t, &mut cache))
    })
}

/// Random sentences of the grammar as text, committed byte by byte; at every byte, every
/// head's node is checked on every sequence of up to two lexemes (single terminals, plus one
/// tie of all terminals) followed by each single terminal and by all terminals.
/// Returns the nonterminals [`Templates::merge_exits`] merged away.
pub(crate) fn check_grammar(source: &str, sentences: u64, separator: &[u8]) -> usize {
    let p = parser(source);
    let grammar = load(source.as_bytes(), &LoadConfig::default()).unwrap();
    let terminals: Vec<TerminalId> = (0..p.terminal_len()).map(TerminalId::from_usize).collect();
    let mut lexemes: Vec<Vec<TerminalId>> = terminals.iter().map(|&t| vec![t]).collect();
    lexemes.push(terminals.clone());
    let mut ends: Vec<Vec<TerminalId>> = terminals.iter().map(|&t| vec![t]).collect();
    ends.push(terminals.clone());
    let mut seqs: Vec<Vec<Vec<TerminalId>>> = vec![vec![]];
    for a in &lexemes {
        seqs.push(vec![a.clone()]);
        for b in &lexemes {
            seqs.push(vec![a.clone(), b.clone()]);
        }
    }
    let lr = Arc::new(ClassTables::new(Arc::clone(&p)));
    let mut conts = Conts::new();
    let ks: Vec<Vec<Cont>> = seqs
        .iter()
        .map(|s| ends.iter().map(|e| chain(&lr, &mut conts, s, e)).collect())
        .collect();
    let conts = Arc::new(conts);
    let mut tpl = Templates::new(Arc::clone(&lr), Arc::clone(&conts), usize::MAX);
    // The same questions with exits merged: every merged exit must answer as its own.
    let mut merged = Templates::new(Arc::clone(&lr), Arc::clone(&conts), usize::MAX);
    let merges = merged.merge_exits().unwrap();
    // And with every refinement that takes a second round given up (its terminal unmerged).
    let mut capped = Templates::new(Arc::clone(&lr), conts, usize::MAX);
    capped.merge_exits_within(0).unwrap();
    let gen = Generator::new(p.cfg());
    let config = GenerateConfig {
        max_depth: 8,
        max_len: 14,
    };
    let mut checked = 0usize;
    let mut seen_nodes: AHashSet<GssNodeId> = AHashSet::new();
    for seed in 0..sentences {
        let mut rng = SeededRng::new(seed);
        let Some(sentence) = gen.sentence(&mut rng, &config) else {
            continue;
        };
        let Some(text) = render_text(&grammar, p.lexer(), &sentence, separator, &mut rng, 20)
        else {
            continue;
        };
        let mut state = ParserState::new(Arc::clone(&p));
        for at in 0..=text.len() {
            for h in state.heads() {
                let node = h.node();
                if !seen_nodes.insert(node.id()) {
                    continue;
                }
                for (s, seq) in seqs.iter().enumerate() {
                    for (e, end) in ends.iter().enumerate() {
                        let want = brute(&p, node, seq, end);
                        let got = read(&lr, &mut tpl, node, ks[s][e]);
                        let got_merged = read(&lr, &mut merged, node, ks[s][e]);
                        let got_capped = read(&lr, &mut capped, node, ks[s][e]);
                        assert_eq!(
                            (got, got_merged, got_capped),
                            (want, want, want),
                            "text {:?}, head at state {} ({:?}), lexemes {:?}, then one of {:?}",
                            String::from_utf8_lossy(&text[..at]),
                            node.state(),
                            h,
                            seq.iter()
                                .map(|l| l.iter().map(|&t| p.terminal_name(t)).collect::<Vec<_>>())
                                .collect::<Vec<_>>(),
                            end.iter().map(|&t| p.terminal_name(t)).collect::<Vec<_>>()
                        );
                        checked += 1;
                    }
                }
            }
            if at < text.len() && state.commit_bytes(&text[at..at + 1]).is_err() {
                break;
            }
        }
    }
    assert!(checked > 100, "only {checked} checks");
    merges
}

#[test]
fn hidden_left_recursion_and_epsilon() {
    check_grammar("start: s\ns: b s \"a\" | \"x\"\nb: | \"y\"\n", 40, b"");
}

#[test]
fn right_recursion() {
    check_grammar("start: l\nl: \"a\" l | \"a\" | \"b\" l \"c\"\n", 40, b"");
}

#[test]
fn ambiguous_expressions() {
    check_grammar(
        "start: e\ne: e \"+\" e | e \"*\" e | \"(\" e \")\" | \"n\" | e e\n",
        40,
        b"",
    );
}

#[test]
fn nullable_sequences_and_ignored() {
    check_grammar(
        "start: a b c d\na: \"a\"?\nb: \"b\"*\nc: a b | \"c\"\nd: (\"d\" a)*\n%ignore \" \"\n",
        60,
        b" ",
    );
}

#[test]
fn interchangeable_keywords_and_states() {
    // `a` and `b` (and the states after them) merge in the quotient; `c` does not.
    check_grammar(
        "start: item*\nitem: \"a\" | \"b\" | \"c\" | \"x\" \"c\" | \"(\" item* \")\"\n",
        60,
        b"",
    );
}

#[test]
fn tied_terminals() {
    check_grammar(
        "start: (x | y)+\nx: A \";\"\ny: B \",\"\nA: /[a-c]+/\nB: /[b-d]+/\n",
        40,
        b"",
    );
}

#[test]
fn precedence_levels_merge_where_a_lookahead_reduces_them_alike() {
    // Under `)` or the end, a finished `f`, `t` or `e` reduces on up to `e` alike; under `*`
    // a `t` waits for more where an `e` cannot, so not every exit merges.
    let merges = check_grammar(
        "start: e\ne: e \"+\" t | t\nt: t \"*\" f | f\nf: \"n\" | \"(\" e \")\" | \"-\" f\n",
        60,
        b"",
    );
    assert!(merges > 0, "no exits merged");
}

#[test]
fn lists_and_options_merge_only_where_they_agree() {
    let merges = check_grammar(
        "start: s*\ns: a \";\" | b \";\" | \"{\" s* \"}\" | a \",\" b \";\"\na: \"x\" | \"x\" \"y\" | c\nb: \"x\" | \"z\"\nc: \"w\" c?\n",
        80,
        b"",
    );
    assert!(merges > 0, "no exits merged");
}

#[test]
fn exits_that_shift_into_different_states_stay_apart() {
    // Under `"x"`, `a` and `b` reduce alike (nothing left below) but shift `"x"` into states
    // that want different terminals next.
    check_grammar(
        "start: a \"x\" \"1\" | b \"x\" \"2\" | a \"y\" | b \"y\"\na: \"p\"\nb: \"q\"\n",
        40,
        b"",
    );
}

#[test]
fn exits_whose_exits_differ_below_stay_apart() {
    // Under `"x"`, `a` and `c` each leave one exit below their state, to `p` and to `q`, which
    // differ only once `"x"` is shifted: the first round of refinement cannot tell them apart.
    check_grammar(
        "start: p \"x\" \"1\" | q \"x\" \"2\"\np: \"u\" a\nq: \"u\" c\na: \"k\"\nc: \"m\"\n",
        40,
        b"",
    );
}
