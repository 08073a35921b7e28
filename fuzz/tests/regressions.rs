//! Every input the fuzz targets found failing, as printed by its `Debug`, with a comment on the
//! root cause. They run on the stable toolchain with `cargo test --manifest-path
//! fuzz/Cargo.toml`.
