//! The lexer's ids, checked on construction (the pattern of [`munch_vocab::TokenId`]).

munch_vocab::define_id!(
    /// A terminal of the grammar: an index into the lexer's (and the grammar's) terminal list.
    TerminalId
);
munch_vocab::define_id!(
    /// A state of the lexer DFA.
    LexState
);
