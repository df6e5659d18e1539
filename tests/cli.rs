//! The `proxima` binary end to end: the main job on the GPU and on the CPU twins gives the
//! same result line; with no Vulkan driver at all it falls back and says so in one line;
//! bad usage is an error, not a panic.

mod common;

use std::process::{Command, Output};

fn proxima(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_proxima"));
    cmd.args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("the binary starts")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn result_line(o: &Output) -> String {
    let text = stdout(o);
    text.lines()
        .find(|l| l.starts_with("result"))
        .unwrap_or_else(|| panic!("no result line in:\n{text}"))
        .to_owned()
}

/// Environment that hides every Vulkan driver from the loader: a machine without one.
const NO_DRIVER: &[(&str, &str)] = &[
    ("VK_DRIVER_FILES", "/nonexistent/proxima-no-driver.json"),
    ("VK_ICD_FILENAMES", "/nonexistent/proxima-no-driver.json"),
    ("WGPU_BACKEND", "vulkan"),
];

#[test]
fn main_job_gives_the_same_result_on_gpu_and_cpu() {
    let args = ["run", "--bodies", "3000", "--frames", "3"];
    let cpu = proxima(&[&args[..], &["--device", "cpu"]].concat(), &[]);
    assert!(cpu.status.success(), "{cpu:?}");
    assert!(stdout(&cpu).contains("CPU twins"));
    if common::gpu("cli gpu run").is_none() {
        return;
    }
    let gpu = proxima(&[&args[..], &["--device", "gpu"]].concat(), &[]);
    assert!(gpu.status.success(), "{gpu:?}");
    assert!(!stdout(&gpu).contains("CPU twins"), "{}", stdout(&gpu));
    assert!(stdout(&gpu).contains("bounds"), "stage timings are printed");
    assert_eq!(result_line(&gpu), result_line(&cpu));
    // The default scene (no arguments) too, broadphase included.
    let gpu = proxima(&[], &[]);
    let cpu = proxima(&["run", "--device", "cpu"], &[]);
    assert!(gpu.status.success() && !stdout(&gpu).contains("CPU twins"));
    assert_eq!(result_line(&gpu), result_line(&cpu));
    let pairs = |o: &Output| {
        stdout(o)
            .lines()
            .find(|l| l.starts_with("pairs"))
            .map(str::to_owned)
    };
    assert!(
        pairs(&gpu).is_some_and(|l| l.contains("hash broadphase")),
        "{}",
        stdout(&gpu)
    );
    assert_eq!(pairs(&gpu), pairs(&cpu));
}

#[test]
fn without_a_driver_the_default_job_falls_back_with_one_line() {
    let fallback = proxima(&[], NO_DRIVER);
    assert!(fallback.status.success(), "{fallback:?}");
    let text = stdout(&fallback);
    let notices: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("no GPU adapter"))
        .collect();
    assert_eq!(notices.len(), 1, "{text}");
    assert!(notices[0].contains("mesa-vulkan-drivers"), "{text}");
    let cpu = proxima(&["run", "--device", "cpu"], &[]);
    assert_eq!(result_line(&fallback), result_line(&cpu));
    // `info` says the same instead of failing.
    let info = proxima(&["info"], NO_DRIVER);
    assert!(info.status.success() && stdout(&info).contains("mesa-vulkan-drivers"));
}

#[test]
fn demanding_the_gpu_without_one_is_an_error() {
    let o = proxima(&["run", "--device", "gpu", "--bodies", "10"], NO_DRIVER);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("error: no GPU adapter"), "{err}");
}

#[test]
fn info_describes_the_adapter() {
    let o = proxima(&["info"], &[]);
    assert!(o.status.success(), "{o:?}");
    if common::gpu("cli info").is_some() {
        let text = stdout(&o);
        for key in [
            "adapter:",
            "backend:",
            "timestamp queries:",
            "max storage binding",
        ] {
            assert!(text.contains(key), "{key} missing from:\n{text}");
        }
    }
}

#[test]
fn bad_usage_is_reported() {
    for args in [
        &["run", "--bodies", "many"][..],
        &["frobnicate"],
        &["bench", "bounds", "--frames", "0"],
    ] {
        let o = proxima(args, &[]);
        assert!(!o.status.success(), "{args:?} should fail");
        assert!(
            !String::from_utf8_lossy(&o.stderr).is_empty(),
            "{args:?}: no message"
        );
        assert!(
            !String::from_utf8_lossy(&o.stderr).contains("panicked"),
            "{args:?}"
        );
    }
}

#[test]
fn bench_broadphase_prints_rows_and_writes_the_plot() {
    let svg = std::env::temp_dir().join(format!("proxima-bp-{}.svg", std::process::id()));
    let o = proxima(
        &[
            "bench",
            "broadphase",
            "--bodies",
            "500,2000",
            "--runs",
            "1",
            "--svg",
            svg.to_str().unwrap(),
        ],
        &[],
    );
    assert!(o.status.success(), "{o:?}");
    let text = stdout(&o);
    assert!(
        text.lines().any(|l| l.trim_start().starts_with("500 ")),
        "{text}"
    );
    assert!(
        text.lines().any(|l| l.trim_start().starts_with("2000 ")),
        "{text}"
    );
    let plot = std::fs::read_to_string(&svg).unwrap();
    assert!(plot.starts_with("<svg") && plot.contains("polyline") && plot.contains("cpu hash"));
    // One method only: the other's columns are dashes and it is not plotted.
    let o = proxima(
        &[
            "bench",
            "broadphase",
            "--bodies",
            "800",
            "--runs",
            "1",
            "--methods",
            "sweep",
            "--svg",
            svg.to_str().unwrap(),
        ],
        &[],
    );
    assert!(o.status.success(), "{o:?}");
    let text = stdout(&o);
    let row = text
        .lines()
        .find(|l| l.trim_start().starts_with("800 "))
        .unwrap_or_else(|| panic!("{text}"));
    let cols: Vec<&str> = row.split_whitespace().collect();
    assert_eq!((cols[2], cols[4]), ("-", "-"), "{row}");
    assert!(cols[3].ends_with("ms") && cols[5].ends_with("ms"), "{row}");
    let plot = std::fs::read_to_string(&svg).unwrap();
    assert!(plot.contains("cpu sweep") && !plot.contains("cpu hash"));
    let _ = std::fs::remove_file(&svg);
}

#[test]
fn bench_bounds_prints_a_row_per_size() {
    let o = proxima(
        &["bench", "bounds", "--bodies", "1000,4000", "--frames", "2"],
        &[],
    );
    assert!(o.status.success(), "{o:?}");
    let text = stdout(&o);
    assert!(
        text.lines().any(|l| l.trim_start().starts_with("1000 ")),
        "{text}"
    );
    assert!(
        text.lines().any(|l| l.trim_start().starts_with("4000 ")),
        "{text}"
    );
}
