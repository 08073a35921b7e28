//! masker-trie
