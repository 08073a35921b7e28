//! The tables' quotient (`munch_glr::lr::Quotient`) is a homomorphism: mapped to their classes,
//! every state's actions on every lookahead and its gotos are those of its class, up to which
//! production a reduction uses; and it merges what it should (a keyword set's terminals).

use std::collections::BTreeSet;

use munch_glr::cfg::{normalize, NormalizeConfig};
use munch_glr::lr::{Action, LrConfig, LrState, LrTables, Quotient};
use munch_testkit::dsl;
use munch_testkit::grammar::syncode_grammar;

fn tables(src: &str) -> LrTables {
    let g = dsl::parse(src).unwrap();
    let cfg = normalize(&g, &NormalizeConfig::default()).unwrap();
    LrTables::build(&cfg, &LrConfig::default()).unwrap()
}

/// An action with its states as `f` maps them and the production left out.
fn seen(a: Action, f: impl Fn(LrState) -> LrState) -> (u8, u32, u32) {
    match a {
        Action::Shift(to) => (0, f(to).as_u32(), 0),
        Action::Reduce { lhs, len, .. } => (1, lhs.as_usize() as u32, len),
        Action::Accept => (2, 0, 0),
    }
}

/// Every state's actions per lookahead and gotos, mapped, are its class's.
fn check_homomorphism(t: &LrTables, q: &Quotient) {
    let qt = q.tables();
    assert_eq!(q.state_class(LrState::START), LrState::START);
    assert_eq!(q.lookahead_class(t.eof_index()), qt.eof_index());
    for s in 0..t.state_len() {
        let s = LrState::new(s).unwrap();
        let c = q.state_class(s);
        for k in 0..=t.eof_index() {
            let mine: BTreeSet<_> = t
                .actions_at(s, k)
                .map(|&a| seen(a, |x| q.state_class(x)))
                .collect();
            let theirs: BTreeSet<_> = qt
                .actions_at(c, q.lookahead_class(k))
                .map(|&a| seen(a, |x| x))
                .collect();
            assert_eq!(mine, theirs, "state {s} lookahead {k}");
        }
        let gotos: Vec<_> = t
            .state_gotos(s)
            .map(|(n, to)| (n, q.state_class(to)))
            .collect();
        assert!(gotos.iter().copied().eq(qt.state_gotos(c)), "state {s}");
    }
}

#[test]
fn a_keyword_set_becomes_one_terminal() {
    let n = 2_000;
    let keywords: Vec<String> = (0..n).map(|i| format!("'k{i}'")).collect();
    let t = tables(&format!("s -> s k | ε\nk -> {}", keywords.join(" | ")));
    assert!(t.state_len() > n);
    let q = Quotient::new(&t).expect("the keywords merge");
    assert_eq!(q.tables().eof_index(), 1, "one terminal class and $");
    assert!(q.tables().state_len() < 8, "{}", q.tables().state_len());
    check_homomorphism(&t, &q);
}

#[test]
fn keywords_in_different_places_stay_apart() {
    // `a` and `b` are interchangeable; `c` is not (it also follows `x`).
    let t = tables("s -> s item | ε\nitem -> 'a' | 'b' | 'c' | 'x' 'c'");
    let q = Quotient::new(&t).expect("a and b merge");
    check_homomorphism(&t, &q);
    let class = |name: &str| {
        let k = (0..t.eof_index())
            .find(|&k| {
                t.cfg()
                    .terminal_name(munch_lexer::TerminalId::from_usize(k as usize))
                    == name
            })
            .unwrap();
        q.lookahead_class(k)
    };
    assert_eq!(class("a"), class("b"));
    assert_ne!(class("a"), class("c"));
    assert_ne!(class("c"), class("x"));
}

#[test]
fn textbook_grammars_map_homomorphically() {
    for src in [
        "e -> e '+' t | t\nt -> t '*' f | f\nf -> '(' e ')' | 'id'",
        "s -> 'if' e 'then' s | 'if' e 'then' s 'else' s | 'x'\ne -> 'b'",
        "s -> a a\na -> 'x' a | 'y'",
        "s -> l '=' r | r\nl -> '*' r | 'id'\nr -> l",
        "s -> s s | 'a' | ε",
    ] {
        let t = tables(src);
        if let Some(q) = Quotient::new(&t) {
            check_homomorphism(&t, &q);
        }
    }
}

#[test]
fn syncode_grammars_map_homomorphically() {
    for name in ["json", "go", "sql", "java"] {
        let g = syncode_grammar(name);
        let p = munch_glr::parser::Parser::new(&g, &Default::default()).unwrap();
        if let Some(q) = Quotient::new(p.tables()) {
            assert!(q.tables().state_len() <= p.tables().state_len());
            check_homomorphism(p.tables(), &q);
        }
    }
}

/// A stand-in (`"if"`, tied with `NAME`) is read as `NAME` from exactly the states where that
/// is what its column does on every stack: where `"if"` has no action, and no reduction on a
/// name can reach a state that has one; so not after `A C`
/// ([`munch_testkit::grammar::KEYWORDS_MERGED`]).
#[test]
fn stand_ins_read_as_their_regex_where_no_run_meets_the_literal() {
    use std::sync::Arc;

    use munch_glr::lr::ClassTables;
    use munch_glr::parser::ParserState;

    let p = munch_testkit::grammar::parser(munch_testkit::grammar::KEYWORDS_MERGED);
    let stand_ins = p.lexer().stand_ins();
    assert_eq!(stand_ins.len(), 3, "{stand_ins:?}");
    let stand_in = stand_ins
        .iter()
        .find(|s| p.lexer().terminal(s.literal).name == "IF")
        .unwrap_or_else(|| panic!("the stand-in of \"if\": {stand_ins:?}"));
    let classes = ClassTables::new(Arc::clone(&p));
    let readings = classes.regex_readings();
    assert!(!readings.is_empty());
    let (s, literal, name) = (
        classes.terminal(stand_in.terminal).unwrap(),
        classes.terminal(stand_in.literal).unwrap(),
        classes.terminal(stand_in.regex).unwrap(),
    );
    let top = |text: &str| {
        let mut state = ParserState::new(Arc::clone(&p));
        state.commit_bytes(text.as_bytes()).unwrap();
        let states: BTreeSet<u32> = state
            .heads()
            .map(|h| classes.state(h.node().state()).as_u32())
            .collect();
        assert_eq!(states.len(), 1, "{text:?}");
        states.into_iter().next().unwrap()
    };
    let after_a_c = top("A C ");
    let tables = classes.tables();
    let has_literal = |x: u32| {
        !tables
            .actions_at(LrState::new(x as usize).unwrap(), literal)
            .is_empty()
    };
    assert!(!has_literal(after_a_c));
    assert_eq!(readings.reading(s, after_a_c), s);
    // Everywhere else, the stand-in is the name exactly where the literal has no action.
    for x in 0..tables.state_len() as u32 {
        let expected = if x == after_a_c || has_literal(x) {
            s
        } else {
            name
        };
        assert_eq!(readings.reading(s, x), expected, "state {x}");
    }
    assert_ne!(top("B C "), after_a_c);
    assert_eq!(readings.reading(name, after_a_c), name);
    // Without stand-ins, nothing is read as another class.
    let reserved = munch_testkit::grammar::parser_with(
        "start: \"if\" NAME\nNAME: /[a-z]+/\n%ignore \" \"\n",
        &munch_glr::parser::ParserConfig {
            contextual_literals: false,
            ..Default::default()
        },
    );
    assert!(ClassTables::new(reserved).regex_readings().is_empty());
}
