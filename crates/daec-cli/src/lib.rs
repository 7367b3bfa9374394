//! The `daec` command-line driver.
