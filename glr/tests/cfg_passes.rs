//! The normalisation passes, one module each, in pipeline order: [`lower`] (EBNF → flat
//! productions), [`reduce`] (unproductive and unreachable symbols), [`analysis`] (nullable and
//! FIRST) and [`patterns`] (every used terminal has a pattern). Grammars are written in the test
//! kit's DSL, whose anonymous terminals are named by their text, so expected CFGs read as the
//! grammar does.

mod lower {
    use munch_glr::cfg::lower::lower;
    use munch_glr::cfg::NormalizeConfig;
    use munch_testkit::dsl;

    fn lowered(src: &str) -> String {
        let g = dsl::parse(src).unwrap();
        lower(&g, &NormalizeConfig::default()).unwrap().to_string()
    }

    #[test]
    fn optional_and_alt_distribute() {
        assert_eq!(
            lowered("s -> 'a' ['b'] ('c' | 'd')"),
            "s -> a b c\ns -> a b d\ns -> a c\ns -> a d\n"
        );
    }

    #[test]
    fn plus_and_star_are_left_recursive_helpers() {
        assert_eq!(
            lowered("s -> 'a'* 'b'+"),
            "s -> s__plus1 s__plus2\ns -> s__plus2\n\
             s__plus1 -> a\ns__plus1 -> s__plus1 a\n\
             s__plus2 -> b\ns__plus2 -> s__plus2 b\n"
        );
    }

    #[test]
    fn bounded_repeat_is_copies_then_optional_chain() {
        assert_eq!(
            lowered("s -> 'a' ~ 2..4"),
            "s -> a a s__upto2\n\
             s__upto1 -> ε\ns__upto1 -> a\n\
             s__upto2 -> ε\ns__upto2 -> a s__upto1\n"
        );
        assert_eq!(lowered("s -> 'a' ~ 0"), "s -> ε\n");
    }

    #[test]
    fn wide_products_get_helpers() {
        let out = lowered("s -> ('a'|'b'|'c'|'d'|'e') ('a'|'b'|'c'|'d'|'e')");
        // 25 > 16: the first widest part becomes a helper, leaving 5 alternatives.
        assert_eq!(out.lines().filter(|l| l.starts_with("s ->")).count(), 5);
        assert!(out.contains("s__group1 -> e"));
    }

    #[test]
    fn unit_self_loops_are_dropped() {
        assert_eq!(lowered("s -> s | 'a'"), "s -> a\n");
    }

    #[test]
    fn huge_repeat_hits_the_budget() {
        let g = dsl::parse("s -> 'a' ~ 1000000").unwrap();
        let err = lower(
            &g,
            &NormalizeConfig {
                max_cfg_symbols: 10_000,
            },
        )
        .unwrap_err();
        assert!(err.to_string().contains("max_cfg_symbols"), "{err}");
    }
}

mod reduce {
    use munch_glr::cfg::reduce::{reduce, reduce_ignoring};
    use munch_glr::cfg::{lower, Cfg, NormalizeConfig};
    use munch_lexer::TerminalId;
    use munch_testkit::dsl;

    fn reduced(src: &str) -> Cfg {
        let g = dsl::parse(src).unwrap();
        reduce(&lower::lower(&g, &NormalizeConfig::default()).unwrap())
    }

    #[test]
    fn drops_unproductive_then_unreachable() {
        // `b` is unproductive (only recursion); `c` is reachable only through `b`.
        let cfg = reduced("s -> 'x' | b\nb -> b c\nc -> 'y'\nd -> 'z'");
        assert_eq!(cfg.to_string(), "s -> x\n");
        assert!(!cfg.is_empty_language());
    }

    #[test]
    fn empty_language() {
        let cfg = reduced("s -> s 'x'");
        assert!(cfg.is_empty_language());
        assert_eq!(cfg.productions().len(), 0);
    }

    #[test]
    fn keeps_everything_useful() {
        let src = "s -> a s | ε\na -> 'x' | 'y' a";
        let before = lower::lower(&dsl::parse(src).unwrap(), &NormalizeConfig::default()).unwrap();
        assert_eq!(reduced(src).to_string(), before.to_string());
    }

    #[test]
    fn productions_using_an_ignored_terminal_are_unproductive() {
        // `b` needs `z`, which is ignored: `s -> x b` can never complete, `b` goes with it.
        let src = "s -> 'x' b | 'y'\nb -> 'z'";
        let lowered = lower::lower(&dsl::parse(src).unwrap(), &NormalizeConfig::default()).unwrap();
        let ignored: Vec<bool> = (0..lowered.terminal_len())
            .map(|t| lowered.terminal_name(TerminalId::from_usize(t)) == "z")
            .collect();
        assert!(ignored.iter().any(|&i| i), "the DSL names the terminal `z`");
        assert_eq!(reduce_ignoring(&lowered, &ignored).to_string(), "s -> y\n");
        assert_eq!(reduce(&lowered).productions().len(), 3);
    }
}

mod analysis {
    use munch_glr::cfg::analysis::Analysis;
    use munch_glr::cfg::{normalize, NonterminalId, NormalizeConfig};
    use munch_testkit::dsl;

    #[test]
    fn nullable_and_first_on_a_textbook_grammar() {
        // Dragon book 4.28 shape with ε-rules.
        let g = dsl::parse(
            "e -> t ep\nep -> '+' t ep | ε\nt -> f tp\ntp -> '*' f tp | ε\nf -> '(' e ')' | 'id'",
        )
        .unwrap();
        let cfg = normalize(&g, &NormalizeConfig::default()).unwrap();
        let a = Analysis::new(&cfg);
        let nt = |name: &str| {
            NonterminalId::from_usize(
                cfg.nonterminals()
                    .iter()
                    .position(|n| n.name == name)
                    .unwrap(),
            )
        };
        let names = |n: NonterminalId| -> Vec<String> {
            a.first(n)
                .map(|t| cfg.terminal_name(t).to_string())
                .collect()
        };
        assert!(!a.is_nullable(nt("e")));
        assert!(a.is_nullable(nt("ep")));
        assert!(a.is_nullable(nt("tp")));
        let mut fe = names(nt("e"));
        fe.sort();
        assert_eq!(fe, ["(", "id"]);
        assert_eq!(names(nt("ep")), ["+"]);
        assert_eq!(names(nt("tp")), ["*"]);
    }

    #[test]
    fn first_sees_through_nullable_prefixes() {
        let g = dsl::parse("s -> a b 'z'\na -> 'x' | ε\nb -> 'y' | ε").unwrap();
        let cfg = normalize(&g, &NormalizeConfig::default()).unwrap();
        let a = Analysis::new(&cfg);
        let mut f: Vec<_> = a.first(cfg.start()).map(|t| cfg.terminal_name(t)).collect();
        f.sort();
        assert_eq!(f, ["x", "y", "z"]);
        assert!(!a.is_nullable(cfg.start()));
    }
}

mod patterns {
    use munch_glr::cfg::patterns::check;
    use munch_glr::cfg::{normalize, NormalizeConfig};
    use munch_glr::grammar::NoPattern;
    use munch_testkit::dsl;

    #[test]
    fn declared_terminal_in_a_reachable_rule_is_named() {
        let mut g =
            dsl::parse("s -> 'a' INDENT | 'b'\nINDENT: 'i'\nu -> OTHER\nOTHER: 'o'").unwrap();
        for t in &mut g.terminals {
            if t.name == "INDENT" || t.name == "OTHER" {
                t.pattern = Err(NoPattern::Declared);
            }
        }
        let cfg = normalize(&g, &NormalizeConfig::default()).unwrap();
        let err = check(&g, &cfg, |_| false).unwrap_err();
        // OTHER is only used by the unreachable `u`.
        assert_eq!(err.terminals.len(), 1);
        assert_eq!(err.terminals[0].1, "INDENT");
        assert!(err.to_string().contains("postlex = python"));
    }

    #[test]
    fn all_patterns_present_passes() {
        let g = dsl::parse("s -> 'a' s | 'b'").unwrap();
        let cfg = normalize(&g, &NormalizeConfig::default()).unwrap();
        assert_eq!(check(&g, &cfg, |_| false), Ok(()));
    }
}
