//! The snapshot set-up of the tests that pin output in the workspace's
//! `snapshots/` directory: the end-to-end tests include it through
//! `tests/common/mod.rs`, the crates' tests by `#[path]`, so every pinned
//! snapshot is written and read the same way.

/// `insta::assert_snapshot!(name, value)` against `snapshots/<name>.snap`
/// at the workspace root (the nearest ancestor of the crate being tested
/// that has a `snapshots/` directory), without the module prefix in the
/// name and without the expression in the file's header.
#[macro_export]
macro_rules! assert_workspace_snapshot {
    ($name:expr, $value:expr $(,)?) => {
        insta::with_settings!({
            snapshot_path => std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .ancestors()
                .find(|dir| dir.join("snapshots").is_dir())
                .expect("the workspace has a snapshots/ directory")
                .join("snapshots"),
            prepend_module_to_snapshot => false,
            omit_expression => true,
        }, {
            insta::assert_snapshot!($name, $value);
        })
    };
}
