//! The SynCode grammars can be fetched and read (once; then from the cache).

#[test]
fn every_syncode_grammar_is_fetched() {
    for name in munch_grammars::syncode::NAMES {
        let text = munch_grammars::syncode::grammar(name).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            text.contains(':'),
            "{name} does not look like a Lark grammar"
        );
    }
    assert!(munch_grammars::syncode::grammar("nope").is_err());
}
