//! munch facade.
