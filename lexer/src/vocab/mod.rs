//! LLM vocabularies: token id → bytes, EOS ids, byte trie, tokenizer fetching.
