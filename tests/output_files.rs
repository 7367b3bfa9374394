//! The files `daec` writes (`-o` of every subcommand, `--plot`,
//! `--stats-json`): a regular file is replaced atomically, a symbolic
//! link's target is written and the link kept, a FIFO is written to, and
//! the input, a file named twice and a read-only file are refused before
//! any work (exit 2). Everything happens in a fresh temporary directory.

mod common;

use common::{daec, root};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

const PENDULUM: &str = "models/steinbrecher/pendulum.dae";

/// A fresh directory for one test, with a copy of the pendulum model.
fn sandbox(tag: &str) -> (PathBuf, PathBuf) {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("daec-out-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let model = dir.join("m.dae");
    std::fs::copy(root().join(PENDULUM), &model).unwrap();
    (dir, model)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A short simulation of `model` with `extra` arguments.
fn simulate(model: &Path, extra: &[&str]) -> common::Run {
    let mut args = vec!["simulate", s(model), "--t-end", "0.1", "--interval", "0.05"];
    args.extend_from_slice(extra);
    daec(&args)
}

#[test]
fn the_input_model_is_never_an_output() {
    let (dir, model) = sandbox("input");
    let original = std::fs::read(&model).unwrap();
    let hard = dir.join("hard.dae");
    std::fs::hard_link(&model, &hard).unwrap();
    let link = dir.join("link.dae");
    std::os::unix::fs::symlink("m.dae", &link).unwrap();
    let dotted = format!("{}/./m.dae", s(&dir));
    for out in [s(&model), dotted.as_str(), s(&hard), s(&link)] {
        for cmd in [
            vec!["flatten", s(&model), "-o", out],
            vec!["analyze", s(&model), "-o", out],
            vec!["regularize", s(&model), "--form", "hic", "-o", out],
        ] {
            let r = daec(&cmd);
            assert_eq!(r.code, 2, "{cmd:?}: {}", r.stderr);
            assert!(
                r.stderr.contains(&format!(
                    "-o: `{out}` is the input model `{}`; daec does not overwrite its input",
                    s(&model)
                )),
                "{cmd:?}: {}",
                r.stderr
            );
        }
        for option in ["-o", "--plot", "--stats-json"] {
            let r = simulate(&model, &[option, out]);
            assert_eq!(r.code, 2, "{option} {out}: {}", r.stderr);
            assert!(
                r.stderr
                    .contains(&format!("{option}: `{out}` is the input model")),
                "{}",
                r.stderr
            );
        }
    }
    assert_eq!(std::fs::read(&model).unwrap(), original);
    assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn two_options_naming_one_file_are_refused() {
    let (dir, model) = sandbox("twice");
    let out = dir.join("out");
    let other_name = format!(
        "{}/../{}/out",
        s(&dir),
        dir.file_name().unwrap().to_str().unwrap()
    );
    // a new name, and the same name once it exists
    for _ in 0..2 {
        let r = simulate(&model, &["-o", s(&out), "--plot", &other_name]);
        assert_eq!(r.code, 2, "{}", r.stderr);
        assert!(
            r.stderr.contains(&format!(
                "-o `{}` and --plot `{other_name}` are the same file",
                s(&out)
            )),
            "{}",
            r.stderr
        );
        std::fs::write(&out, "old").unwrap();
    }
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "old");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_symlink_keeps_its_link_and_its_target_is_written() {
    let (dir, model) = sandbox("symlink");
    let target = dir.join("target.csv");
    std::fs::write(&target, "old").unwrap();
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o640)).unwrap();
    let link = dir.join("link.csv");
    std::os::unix::fs::symlink("target.csv", &link).unwrap();
    let r = simulate(&model, &["-o", s(&link)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
    let csv = std::fs::read_to_string(&target).unwrap();
    assert!(csv.starts_with("time,x,y,v,w,lambda\n"), "{csv}");
    assert_eq!(csv.lines().count(), 4);
    // the permission bits of the replaced file are kept
    let mode = std::fs::metadata(&target).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o640);
    // a dangling link: its target is created
    std::fs::remove_file(&target).unwrap();
    let r = daec(&["flatten", s(&model), "-o", s(&link)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
    assert!(
        std::fs::read_to_string(&target)
            .unwrap()
            .starts_with("model Pendulum")
    );
    // no temporary file is left
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 3, "{names:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_fifo_is_written_to_not_replaced() {
    let (dir, model) = sandbox("fifo");
    let fifo = dir.join("pipe");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    let r = daec(&["flatten", s(&model), "-o", s(&fifo)]);
    if r.code != 0 {
        // (lets the reader end, so that the test fails rather than hangs)
        let _ = std::fs::OpenOptions::new().write(true).open(&fifo);
    }
    assert_eq!(r.code, 0, "{}", r.stderr);
    let text = reader.join().unwrap();
    assert!(text.starts_with("model Pendulum"), "{text}");
    let meta = std::fs::symlink_metadata(&fifo).unwrap();
    assert!(
        std::os::unix::fs::FileTypeExt::is_fifo(&meta.file_type()),
        "the FIFO was replaced"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_read_only_file_is_refused_and_kept() {
    let (dir, model) = sandbox("readonly");
    let out = dir.join("ro.json");
    std::fs::write(&out, "old").unwrap();
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o444)).unwrap();
    let ino = std::fs::metadata(&out).unwrap().ino();
    for cmd in [
        vec!["analyze", s(&model), "--format", "json", "-o", s(&out)],
        vec!["simulate", s(&model), "--stats-json", s(&out)],
    ] {
        let r = daec(&cmd);
        assert_eq!(r.code, 2, "{cmd:?}: {}", r.stderr);
        assert!(
            r.stderr
                .contains(&format!("cannot write `{}`: it is read-only", s(&out))),
            "{}",
            r.stderr
        );
        assert!(r.stdout.is_empty());
    }
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "old");
    assert_eq!(std::fs::metadata(&out).unwrap().ino(), ino);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_regular_output_is_replaced_and_every_output_written() {
    let (dir, model) = sandbox("regular");
    let (csv, svg, json) = (dir.join("o.csv"), dir.join("o.svg"), dir.join("o.json"));
    std::fs::write(
        &csv,
        "a much longer old content than the new one ".repeat(100),
    )
    .unwrap();
    let r = simulate(
        &model,
        &["-o", s(&csv), "--plot", s(&svg), "--stats-json", s(&json)],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(std::fs::read_to_string(&csv).unwrap().starts_with("time,x"));
    assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg"));
    let stats: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(stats["steps_accepted"].as_u64().unwrap() > 0);
    // a directory and a missing directory are refused
    let r = simulate(&model, &["--plot", s(&dir)]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("it is a directory"), "{}", r.stderr);
    let missing = dir.join("no/such/dir/x.csv");
    let r = daec(&["regularize", s(&model), "--form", "ste", "-o", s(&missing)]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("does not exist"), "{}", r.stderr);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn vars_patterns_choose_what_is_plotted_and_a_capped_plot_says_so() {
    let (dir, _) = sandbox("vars");
    let svg = dir.join("chain.svg");
    let chain = |vars: &[&str]| {
        let mut args = vec![
            "simulate",
            "models/scale/spring_chain.dae",
            "-p",
            "N=60",
            "--t-end",
            "0.1",
            "--interval",
            "0.05",
            "--plot",
            s(&svg),
            // (a constrained mechanical system: its default, index
            // scaling, would warn about the positions chosen with --vars)
            "--error-control",
            "all",
        ];
        args.extend_from_slice(vars);
        daec(&args)
    };
    let legend = |name: &str| format!(">\n{name}\n</text>");
    // 121 unknowns: the first 96 are drawn (8 panels of 12), said on
    // stderr and in the plot's caption
    let r = chain(&[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains(
            "warning: --plot draws at most 96 variables (8 panels of 12): the first 96 of the 121 chosen are drawn"
        ),
        "{}",
        r.stderr
    );
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.contains("(96 of 121 variables)"), "caption");
    assert!(text.contains(&legend("v[36]")) && !text.contains(&legend("v[37]")));
    // patterns: brackets are literal, `*` takes any characters
    let r = chain(&["--vars", "F,p[?],p[*]"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!r.stderr.contains("warning"), "{}", r.stderr);
    let text = std::fs::read_to_string(&svg).unwrap();
    for k in 1..=60 {
        assert!(text.contains(&legend(&format!("p[{k}]"))), "p[{k}]");
    }
    assert!(text.contains(&legend("F")));
    assert!(!text.contains(&legend("v[1]")));
    // F, then p[1]..p[9], then p[10]..p[60]: each once, in six panels
    assert_eq!(text.matches(">\ntime\n<").count(), 6);
    // a pattern that matches nothing is a usage error naming it
    let r = chain(&["--vars", "p[*],q*"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("--vars: the pattern `q*` matches no variable of the model"),
        "{}",
        r.stderr
    );
    let _ = std::fs::remove_dir_all(&dir);
}
