//! Generates the LR(1) parser from `src/grammar.lalrpop` into `OUT_DIR`.

fn main() {
    if let Err(e) = lalrpop::Configuration::new()
        .set_in_dir("./src")
        .emit_rerun_directives(true)
        .process()
    {
        eprintln!("lalrpop failed: {e}");
        std::process::exit(1);
    }
}
