//! LALR(1) tables: golden state counts and conflict renderings on textbook grammars.

use munch_glr::cfg::{normalize, NormalizeConfig};
use munch_glr::lr::{Action, Lookahead, LrConfig, LrState, LrTables};
use munch_testkit::dsl;

fn tables(src: &str) -> LrTables {
    let g = dsl::parse(src).unwrap();
    let cfg = normalize(&g, &NormalizeConfig::default()).unwrap();
    LrTables::build(&cfg, &LrConfig::default()).unwrap()
}

#[test]
fn dragon_book_expression_grammar_is_lalr() {
    // Aho et al. 4.1: 12 LR(0) states (I0..I11), no conflicts.
    let t = tables("e -> e '+' t | t\nt -> t '*' f | f\nf -> '(' e ')' | 'id'");
    assert_eq!(t.state_len(), 12);
    assert!(t.conflicts().is_empty(), "{}", t.render_conflicts());
    // The start state shifts `(` and `id`, and has gotos on e, t, f.
    let shifts: Vec<_> = t
        .state_actions(LrState::START)
        .filter(|(_, a)| matches!(a, Action::Shift(_)))
        .map(|(k, _)| {
            t.cfg()
                .terminal_name(munch_lexer::TerminalId::from_usize(k as usize))
                .to_string()
        })
        .collect();
    assert_eq!(shifts, ["(", "id"]);
    assert_eq!(t.state_gotos(LrState::START).count(), 3);
}

#[test]
fn ambiguous_expressions_render_their_conflicts() {
    let t = tables("e -> e '+' e | e '*' e | 'a'");
    assert_eq!(t.state_len(), 7);
    let golden = "\
state 5 on `+`: shift/reduce
  after: e + e
  e -> e · + e    shift to state 3
  e -> e + e ·    reduce

state 5 on `*`: shift/reduce
  after: e + e
  e -> e + e ·    reduce
  e -> e · * e    shift to state 4

state 6 on `+`: shift/reduce
  after: e * e
  e -> e · + e    shift to state 3
  e -> e * e ·    reduce

state 6 on `*`: shift/reduce
  after: e * e
  e -> e · * e    shift to state 4
  e -> e * e ·    reduce
";
    assert_eq!(t.render_conflicts(), golden);
}

#[test]
fn reduce_reduce_conflict_is_kept() {
    // Not LR(1) at all: `x` reduces to a or b with the same lookahead.
    let t = tables("s -> a 'y' | b 'y'\na -> 'x'\nb -> 'x'");
    assert_eq!(t.conflicts().len(), 1);
    let c = &t.conflicts()[0];
    assert_eq!(c.kind(), "reduce/reduce");
    assert_eq!(
        c.lookahead,
        Lookahead::Terminal(munch_lexer::TerminalId::from_usize(0))
    );
    // Both reductions are in the table.
    let both = t.actions(c.state, c.lookahead);
    assert_eq!(both.len(), 2);
}

#[test]
fn epsilon_rules_get_right_nulled_reductions() {
    // s -> 'a' b c ; b, c nullable: after `a` the state reduces s with length 1 on `$`.
    let t = tables("s -> 'a' b c\nb -> 'b' | ε\nc -> 'c' | ε");
    let after_a = t
        .state_actions(LrState::START)
        .find_map(|(_, a)| match a {
            Action::Shift(s) => Some(s),
            _ => None,
        })
        .unwrap();
    let on_eof = t.actions(after_a, Lookahead::Eof);
    assert!(
        on_eof
            .iter()
            .any(|a| matches!(a, Action::Reduce { len: 1, .. })),
        "{on_eof:?}"
    );
    assert!(t.conflicts().is_empty(), "{}", t.render_conflicts());
}

#[test]
fn state_budget_is_a_typed_error() {
    let g = dsl::parse("e -> e '+' t | t\nt -> t '*' f | f\nf -> '(' e ')' | 'id'").unwrap();
    let cfg = normalize(&g, &NormalizeConfig::default()).unwrap();
    let err = LrTables::build(
        &cfg,
        &LrConfig {
            max_states: 5,
            ..LrConfig::default()
        },
    )
    .unwrap_err();
    assert_eq!(err.state_limit(), Some(5));
    assert!(err.to_string().contains("max_lr_states"));
}

#[test]
fn keyword_sets_share_one_lookahead_set() {
    // `s -> s k | ε` over 8,000 keywords: the 8,000 states after a keyword all reduce `k` on
    // the same 8,001 lookaheads. Stored per lookahead that was 64 M reduce actions; shared, the
    // tables hold one set and one reduction per state.
    let n = 8_000;
    let keywords: Vec<String> = (0..n).map(|i| format!("'k{i}'")).collect();
    let src = format!("s -> s k | ε\nk -> {}", keywords.join(" | "));
    let g = dsl::parse(&src).unwrap();
    let cfg = normalize(&g, &NormalizeConfig::default()).unwrap();
    let t = LrTables::build(&cfg, &LrConfig::default()).unwrap();
    assert!(t.conflicts().is_empty(), "{}", t.render_conflicts());
    assert!(t.lookahead_set_len() <= 3, "{}", t.lookahead_set_len());
    // Shifts (8,000 in two states), a reduction per state, the sets' words.
    assert!(t.stored_len() < 40_000, "{}", t.stored_len());
    // Answers per lookahead are those of the expanded table: after `k17`, every lookahead
    // (each keyword and `$`) reduces `k -> 'k17'`, and nothing else.
    let after = t
        .state_shifts(LrState::START)
        .chain(
            t.state_gotos(LrState::START)
                .flat_map(|(_, s)| t.state_shifts(s)),
        )
        .find_map(|(k, a)| match a {
            Action::Shift(s) if k == 17 => Some(s),
            _ => None,
        })
        .expect("a state shifts k17");
    assert_eq!(t.state_lookaheads(after).count(), n + 1);
    for k in t.state_lookaheads(after) {
        let actions: Vec<Action> = t.actions_at(after, k).copied().collect();
        assert!(
            matches!(actions[..], [Action::Reduce { len: 1, .. }]),
            "{k}: {actions:?}"
        );
    }
    assert_eq!(t.state_actions(after).count(), n + 1);
    assert!(t.actions_at(after, n as u32 + 1).is_empty());
}

#[test]
fn action_budget_is_a_typed_error_before_the_tables_are_built() {
    let keywords: Vec<String> = (0..300).map(|i| format!("'k{i}'")).collect();
    let src = format!("s -> s k | ε\nk -> {}", keywords.join(" | "));
    let g = dsl::parse(&src).unwrap();
    let cfg = normalize(&g, &NormalizeConfig::default()).unwrap();
    let budget = |max_actions| {
        LrTables::build(
            &cfg,
            &LrConfig {
                max_actions,
                ..LrConfig::default()
            },
        )
    };
    // Small tables also keep every (state, lookahead)'s actions expanded, for fast lookups;
    // one action less and they keep only the shared form, with the same answers.
    let t = budget(LrConfig::default().max_actions).unwrap();
    let full = t.stored_len();
    let compact = budget(full - 1).unwrap();
    assert!(compact.stored_len() < full);
    for s in 0..t.state_len() {
        let s = LrState::new(s).unwrap();
        assert!(t.state_actions(s).eq(compact.state_actions(s)));
        for k in 0..=t.eof_index() + 1 {
            assert!(t.actions_at(s, k).eq(compact.actions_at(s, k)), "{s} {k}");
        }
        // Far past the end of input (beyond the lookahead sets' words): nothing.
        assert!(compact.actions_at(s, t.eof_index() + 200).is_empty());
    }
    // A state's lookaheads as one bitset, read from the shared form's sets, are the ones
    // `state_lookaheads` visits one by one.
    let words = (t.eof_index() as usize + 1).div_ceil(64);
    for s in 0..t.state_len() {
        let s = LrState::new(s).unwrap();
        let mut bits = vec![0u64; words];
        compact.add_state_lookaheads(s, &mut bits);
        let listed: Vec<u32> = (0..=t.eof_index())
            .filter(|&k| bits[k as usize / 64] >> (k % 64) & 1 != 0)
            .collect();
        assert!(listed.iter().copied().eq(t.state_lookaheads(s)), "{s}");
    }
    // What is stored is what the budget counts: it passes at the shared form's size and not
    // below.
    let least = compact.stored_len();
    assert_eq!(budget(least).unwrap().stored_len(), least);
    let err = budget(least - 1).unwrap_err();
    assert_eq!(err.action_limit(), Some(least - 1));
    assert_eq!(err.state_limit(), None);
    assert!(err.to_string().contains("max_lr_actions"), "{err}");
}

#[test]
fn a_long_unit_chain_builds_in_linear_space() {
    // r0 -> r1, ..., r19999 -> 'a': listing each nonterminal's left closure up front took
    // 20,000² entries (1.6 GB), and the fixpoints one pass per link.
    let n = 20_000;
    let mut src: String = (0..n).map(|i| format!("r{i} -> r{}\n", i + 1)).collect();
    src.push_str(&format!("r{n} -> 'a'\n"));
    let g = dsl::parse(&src).unwrap();
    let cfg = normalize(&g, &NormalizeConfig::default()).unwrap();
    let t = LrTables::build(&cfg, &LrConfig::default()).unwrap();
    assert!(t.state_len() <= n + 4, "{}", t.state_len());
}

#[test]
fn conflict_len_counts_what_conflicts_lists() {
    for src in [
        "start: e\ne: e \"+\" e | e \"*\" e | \"a\"\n",
        "start: a | b\na: \"x\"\nb: \"x\"\n",
        "start: [x \"a\"] [x \"a\"] [x \"a\"] [x \"a\"]\nx: \"x\"\n",
        "start: \"a\"\n",
    ] {
        let g = munch_glr::lark::load(src.as_bytes(), &Default::default()).unwrap();
        let p = munch_glr::parser::Parser::new(&g, &Default::default()).unwrap();
        // Counted before and after the list is made.
        let counted = p.conflict_len();
        assert_eq!(counted, p.conflicts().len(), "{src}");
        assert_eq!(p.conflict_len(), counted, "{src}");
    }
}

/// `LrConfig::prefer_shift`: every shift/reduce conflict resolved by shifting (Lark's LALR
/// rule), reduce/reduce ones kept, and every other action as without it.
#[test]
fn prefer_shift_leaves_only_reduce_reduce_conflicts() {
    let src = "s -> e | 'x' 'y' | a 'z' | b 'z'\ne -> e '+' e | e '*' e | 'a' | o 'x'\no -> | 'q'\na -> 'w'\nb -> 'w'";
    let g = dsl::parse(src).unwrap();
    let cfg = normalize(&g, &NormalizeConfig::default()).unwrap();
    let both = LrTables::build(&cfg, &LrConfig::default()).unwrap();
    let shifted = LrTables::build(
        &cfg,
        &LrConfig {
            prefer_shift: true,
            ..LrConfig::default()
        },
    )
    .unwrap();
    let kinds = |t: &LrTables| -> Vec<String> { t.conflicts().iter().map(|c| c.kind()).collect() };
    assert!(
        kinds(&both).iter().any(|k| k == "shift/reduce"),
        "{}",
        both.render_conflicts()
    );
    assert!(kinds(&both).iter().any(|k| k == "reduce/reduce"));
    assert!(
        kinds(&shifted).iter().all(|k| k == "reduce/reduce"),
        "{}",
        shifted.render_conflicts()
    );
    assert!(!kinds(&shifted).is_empty());
    // Per state and lookahead: the shift-preferring table has the shifts of the other, its
    // reductions where there is no shift, and nothing else.
    assert_eq!(both.state_len(), shifted.state_len());
    for s in 0..both.state_len() {
        let st = LrState::new(s).unwrap();
        let mut want: Vec<(u32, Action)> = Vec::new();
        let all: Vec<(u32, Action)> = both.state_actions(st).collect();
        for &(k, a) in &all {
            let has_shift = all
                .iter()
                .any(|&(k2, a2)| k2 == k && matches!(a2, Action::Shift(_)));
            if !(has_shift && matches!(a, Action::Reduce { .. })) {
                want.push((k, a));
            }
        }
        let mut got: Vec<(u32, Action)> = shifted.state_actions(st).collect();
        want.sort_by_key(|&(k, a)| (k, format!("{a:?}")));
        got.sort_by_key(|&(k, a)| (k, format!("{a:?}")));
        assert_eq!(got, want, "state {s}");
    }
}
