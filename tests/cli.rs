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

/// The default job on the CPU twins, run once for the tests that compare with it.
fn cpu_default() -> &'static Output {
    static RUN: std::sync::OnceLock<Output> = std::sync::OnceLock::new();
    RUN.get_or_init(|| proxima(&["run", "--device", "cpu"], &[]))
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
    // The default scene too, broadphase included.
    let gpu = proxima(&["run", "--device", "gpu"], &[]);
    let cpu = cpu_default();
    assert!(gpu.status.success() && !stdout(&gpu).contains("CPU twins"));
    assert_eq!(result_line(&gpu), result_line(cpu));
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
    assert_eq!(pairs(&gpu), pairs(cpu));
}

#[test]
fn the_default_job_takes_a_hardware_gpu_or_the_cpu_twins() {
    let Some(ctx) = common::gpu("cli default device") else {
        return;
    };
    let o = proxima(&["run", "--bodies", "2000", "--frames", "2"], &[]);
    assert!(o.status.success(), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    let notices: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("software GPU adapter"))
        .collect();
    if ctx.is_software() {
        // lavapipe runs the passes on the CPU's cores, slower than their twins.
        assert!(stdout(&o).contains("on CPU twins"), "{}", stdout(&o));
        assert_eq!(notices.len(), 1, "{err}");
        assert!(notices[0].contains(&ctx.info.name) && notices[0].contains("--device gpu"));
    } else {
        assert!(!stdout(&o).contains("CPU twins"), "{}", stdout(&o));
        assert!(notices.is_empty(), "{err}");
    }
    let cpu = proxima(
        &[
            "run", "--bodies", "2000", "--frames", "2", "--device", "cpu",
        ],
        &[],
    );
    assert_eq!(result_line(&o), result_line(&cpu));
}

#[test]
fn without_a_driver_the_default_job_falls_back_with_one_line() {
    let fallback = proxima(&[], NO_DRIVER);
    assert!(fallback.status.success(), "{fallback:?}");
    // The notice is one line on stderr (stdout carries the results).
    let text = String::from_utf8_lossy(&fallback.stderr).into_owned();
    assert!(!stdout(&fallback).contains("no GPU adapter"));
    let notices: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("no GPU adapter"))
        .collect();
    assert_eq!(notices.len(), 1, "{text}");
    assert!(notices[0].contains("mesa-vulkan-drivers"), "{text}");
    assert_eq!(result_line(&fallback), result_line(cpu_default()));
    // `info` says the same instead of failing.
    let info = proxima(&["info"], NO_DRIVER);
    assert!(info.status.success() && stdout(&info).contains("mesa-vulkan-drivers"));
}

#[test]
fn the_main_job_writes_a_report_per_frame() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-report");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("report.json");
    let _ = std::fs::remove_file(&path);
    let o = proxima(
        &[
            "run",
            "scenes/crowd.toml",
            "--bodies",
            "2000",
            "--frames",
            "4",
            "--device",
            "cpu",
            "--speculative",
            "0.01",
            "--report",
            path.to_str().unwrap(),
        ],
        &[],
    );
    assert!(o.status.success(), "{o:?}");
    let text = stdout(&o);
    for key in [
        "contacts (last frame, exact)",
        "impacts (last frame)",
        "contacts ",
        "impacts ",
    ] {
        assert!(text.contains(key), "{key} missing from:\n{text}");
    }
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let frames = doc["frames"].as_array().unwrap();
    assert_eq!(frames.len(), 4);
    assert_eq!(doc["bodies"], 2000);
    let mut met = 0;
    for (k, f) in frames.iter().enumerate() {
        assert_eq!(f["frame"], k);
        let (pairs, contacts) = (
            f["pairs"].as_u64().unwrap(),
            f["contacts"].as_u64().unwrap(),
        );
        // The start is parted; bodies that meet on the way stop just short and are
        // contacts (within the speculative distance) from the next frame on.
        assert!(pairs > 0 && contacts <= pairs, "{f}");
        met += contacts;
        assert!(f["contact_points"].as_u64().unwrap() <= 4 * contacts);
        assert!(f["stages"]["contacts"].as_f64().unwrap() >= 0.0);
        assert!(f["stages"]["bounds"].as_f64().is_some(), "{f}");
    }
    assert!(met > 0, "no contacts in any frame");
}

/// `--poses` writes each body's state after the last frame, a JSON line each: a fixed
/// crate where it was written, and a ball moving at 3 units/s and spinning at 2 rad/s
/// about z, 6 frames of 1/60 s on (analytic: x = 10.3, a turn of 0.2 rad).
#[test]
fn the_main_job_writes_the_last_poses() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-poses");
    std::fs::create_dir_all(&dir).unwrap();
    let scene = dir.join("ball.toml");
    std::fs::write(
        &scene,
        "[[body]]\nshape = { box = [1, 1, 1] }\nposition = [0, 0, 0]\nfixed = true\n\n\
         [[body]]\nshape = { sphere = { radius = 0.5 } }\nposition = [10, 0, 0]\n\
         velocity = [3, 0, 0]\nspin = [0, 0, 2]\n",
    )
    .unwrap();
    let path = dir.join("poses.jsonl");
    let _ = std::fs::remove_file(&path);
    let o = proxima(
        &[
            "run",
            scene.to_str().unwrap(),
            "--frames",
            "6",
            "--device",
            "cpu",
            "--poses",
            path.to_str().unwrap(),
        ],
        &[],
    );
    assert!(o.status.success(), "{o:?}");
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    let vector = |v: &serde_json::Value| -> Vec<f64> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect()
    };
    assert_eq!(lines[0]["body"], 0);
    assert_eq!(vector(&lines[0]["position"]), [0.0; 3]);
    assert_eq!(vector(&lines[0]["rotation"]), [0.0, 0.0, 0.0, 1.0]);
    let ball = &lines[1];
    assert_eq!(
        (ball["body"].as_u64(), ball["shape"].as_u64()),
        (Some(1), Some(1))
    );
    let close =
        |got: Vec<f64>, want: &[f64]| got.iter().zip(want).all(|(g, w)| (g - w).abs() < 1e-12);
    assert!(
        close(vector(&ball["position"]), &[10.3, 0.0, 0.0]),
        "{ball}"
    );
    let half: f64 = 0.1;
    assert!(
        close(
            vector(&ball["rotation"]),
            &[0.0, 0.0, half.sin(), half.cos()]
        ),
        "{ball}"
    );
    assert_eq!(vector(&ball["velocity"]), [3.0, 0.0, 0.0]);
    assert_eq!(vector(&ball["spin"]), [0.0, 0.0, 2.0]);
}

#[test]
fn the_main_job_draws_its_last_frame() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-png");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("frame.png");
    let png = path.to_str().unwrap();
    let args = [
        "run",
        "--bodies",
        "500",
        "--frames",
        "2",
        "--png",
        png,
        "--png-size",
        "250x170",
    ];
    // No adapter at all: the picture says why not, before any frame runs.
    let none = proxima(&args, NO_DRIVER);
    assert!(!none.status.success());
    let err = String::from_utf8_lossy(&none.stderr);
    assert!(
        err.contains("--png") && err.contains("mesa-vulkan-drivers"),
        "{err}"
    );
    assert!(!stdout(&none).contains("result:"), "{}", stdout(&none));
    if common::gpu("cli png").is_none() {
        return;
    }
    let _ = std::fs::remove_file(&path);
    let o = proxima(&args, &[]);
    assert!(o.status.success(), "{o:?}");
    assert!(stdout(&o).contains("picture: "), "{}", stdout(&o));
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    // IHDR: width and height.
    assert_eq!(&bytes[16..24], &[0, 0, 0, 250, 0, 0, 0, 170]);
    let bad = proxima(
        &["run", "--bodies", "10", "--png", png, "--png-size", "0x5"],
        &[],
    );
    assert!(!bad.status.success());
    // A side past u32 is too large, not "not a positive whole number".
    let bad = proxima(
        &[
            "run",
            "--bodies",
            "10",
            "--png",
            png,
            "--png-size",
            "4294967296x5",
        ],
        &[],
    );
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        !bad.status.success() && err.contains("past what a picture can have"),
        "{err}"
    );
}

#[test]
fn bench_pipeline_compares_with_parry_and_misses_nothing() {
    let (o, doc, plot) = bench_figures(
        "pipeline",
        &["--bodies", "1500", "--frames", "1", "--device", "cpu"],
    );
    assert!(stdout(&o).contains("parry3d-f64"), "{}", stdout(&o));
    let f = &doc["sizes"][0];
    assert_eq!(f["bodies"], 1500);
    let touching = f["touching"][2].as_u64().unwrap();
    assert!(touching > 100, "{f}");
    // Against the exact test, proxima misses no touching pair and invents none.
    assert_eq!(f["missed"][0], 0, "{f}");
    assert_eq!(f["false_touching"][0], 0, "{f}");
    assert!(f["depth_pairs"].as_u64().unwrap() > 0);
    // Over the scene's motions, proxima misses no first contact the samples find.
    assert!(f["impacts"][0].as_u64().unwrap() > 0, "{f}");
    assert_eq!(f["impacts_missed"][0], 0, "{f}");
    assert!(plot.starts_with("<svg") && plot.contains("parry3d-f64"));
}

/// Runs `proxima bench <which> <args>` writing its JSON and plot to a folder of the
/// target's; its output, the parsed JSON and the plot.
fn bench_figures(which: &str, args: &[&str]) -> (Output, serde_json::Value, String) {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cli-bench-{which}"));
    std::fs::create_dir_all(&dir).unwrap();
    let (json, svg) = (dir.join("figures.json"), dir.join("figures.svg"));
    let mut all = vec!["bench", which];
    all.extend_from_slice(args);
    all.extend([
        "--json",
        json.to_str().unwrap(),
        "--svg",
        svg.to_str().unwrap(),
    ]);
    let o = proxima(&all, &[]);
    assert!(o.status.success(), "{o:?}");
    let doc = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    (o, doc, std::fs::read_to_string(&svg).unwrap())
}

/// The depth bench checks every answer against enumeration before it times it (an error
/// otherwise) and reports EPA's agreement; a hull too small for a volume is bad usage.
#[test]
fn bench_penetration_checks_every_answer_and_compares_with_epa() {
    let (o, doc, plot) = bench_figures(
        "penetration",
        &["--vertices", "8,20", "--frames", "60", "--rounds", "1"],
    );
    let sequences = doc["sequences"].as_array().unwrap();
    // Two sizes, each shallow, deep and centred.
    assert_eq!(sequences.len(), 6, "{doc}");
    let kinds: Vec<&str> = sequences
        .iter()
        .map(|f| f["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["shallow", "deep", "centred"].repeat(2), "{doc}");
    for f in sequences {
        assert!(f["queries"].as_u64().unwrap() > 20, "{f}");
        assert_eq!(f["enumerated"], true, "{f}");
        // The same depths as parry3d-f64's EPA on these sequences.
        assert!(f["epa_difference"].as_f64().unwrap() < 1e-9, "{f}");
        for key in ["warm_us", "cold_us", "epa_us"] {
            assert!(f[key].as_f64().unwrap() > 0.0, "{f}");
        }
    }
    assert!(stdout(&o).contains("enumeration"), "{}", stdout(&o));
    assert!(plot.starts_with("<svg") && plot.contains("parry3d-f64 EPA"));
    // `--kinds` picks what is measured, and the plot shows only those.
    let (_, doc, plot) = bench_figures(
        "penetration",
        &[
            "--vertices",
            "8",
            "--kinds",
            "centred",
            "--frames",
            "30",
            "--rounds",
            "1",
        ],
    );
    let kinds: Vec<&str> = doc["sequences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["centred"], "{doc}");
    assert!(plot.contains("EPA, centred"), "{plot}");
    assert!(
        !plot.contains("shallow") && !plot.contains("deep"),
        "{plot}"
    );
    bad_usage_is_named(
        "penetration",
        &[
            ["--vertices", "3"],
            ["--rounds", "0"],
            // About 20 GB of hulls: refused before anything is built.
            ["--vertices", "5000000"],
        ],
    );
}

/// The time-of-impact bench checks every answer before it times it (a hit's bodies within
/// the tolerance, no contact of cast_shapes_nonlinear's before ours) and counts what the
/// peers miss; each size gets a cached batch, the small ones an uncached batch too.
#[test]
fn bench_toi_checks_every_answer_and_compares_with_both_peers() {
    let (o, doc, plot) = bench_figures(
        "toi",
        &[
            "--vertices",
            "8,12",
            "--pairs",
            "30",
            "--uncached-up-to",
            "8",
            "--rounds",
            "1",
        ],
    );
    let batches = doc["batches"].as_array().unwrap();
    let kinds: Vec<_> = batches
        .iter()
        .map(|f| {
            (
                f["vertices"].as_u64().unwrap(),
                f["batch"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [(8, "cached"), (8, "uncached"), (12, "cached")],
        "{doc}"
    );
    for f in batches {
        let hits: Vec<u64> = f["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h.as_u64().unwrap())
            .collect();
        // Our contacts are checked ones; the same screw motion's peer finds no other.
        assert!(hits[0] > 0 && hits[0] >= hits[3], "{f}");
        assert!(f["ours_us"].as_f64().unwrap() > 0.0, "{f}");
        assert!(f["ours_slop_us"].as_f64().unwrap() > 0.0, "{f}");
        assert!(f["sweep_us"].as_f64().unwrap() > 0.0, "{f}");
        let cached = f["batch"] == "cached";
        assert_eq!(f["nonlinear_us"].is_f64(), cached, "{f}");
    }
    assert_eq!(batches[1]["pairs"], 300, "{doc}");
    assert!(stdout(&o).contains("uncached"), "{}", stdout(&o));
    assert!(plot.starts_with("<svg") && plot.contains("sweep_time_of_impact"));
    bad_usage_is_named(
        "toi",
        &[
            ["--vertices", "3"],
            ["--rounds", "0"],
            ["--pairs", "0"],
            // About 32 GB of hulls: refused before anything is built.
            ["--pairs", "1000000"],
        ],
    );
}

/// Each bad option of `proxima bench <which>` fails with an error naming the command, no
/// panic.
fn bad_usage_is_named(which: &str, bad: &[[&str; 2]]) {
    for [option, value] in bad {
        let o = proxima(&["bench", which, option, value], &[]);
        assert!(!o.status.success(), "{option} {value} should fail");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains(&format!("bench {which}")) && !err.contains("panicked"),
            "{err}"
        );
    }
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
    if let Some(ctx) = common::gpu("cli info") {
        let text = stdout(&o);
        for key in [
            "adapter:",
            "backend:",
            "timestamp queries:",
            "max storage binding",
        ] {
            assert!(text.contains(key), "{key} missing from:\n{text}");
        }
        let auto = if ctx.is_software() {
            "the CPU twins"
        } else {
            "this adapter"
        };
        assert!(
            text.lines()
                .any(|l| l.starts_with("device auto:") && l.contains(auto)),
            "device auto: {auto} missing from:\n{text}"
        );
    }
}

/// A count of nothing is refused before any work, naming the option: no bodies to run or
/// time (a bench's ratios were 0 over 0), no frames to take medians of.
#[test]
fn counts_of_nothing_are_refused() {
    for args in [
        &["run", "--bodies", "0"][..],
        &["bench", "bounds", "--bodies", "0"],
        &["bench", "broadphase", "--bodies", "1000,0"],
        &["bench", "gpu", "--bodies", "0"],
        &["bench", "pipeline", "--bodies", "0"],
        &["bench", "pipeline", "--frames", "0"],
        &["bench", "bounds", "--frames", "0"],
    ] {
        let o = proxima(args, &[]);
        assert!(!o.status.success(), "{args:?} should fail");
        let err = String::from_utf8_lossy(&o.stderr);
        let option = args[args.len() - 2];
        assert!(
            err.contains(&format!("'{option} <")) && err.contains("must be at least 1"),
            "{args:?}: {err}"
        );
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

/// `run` is the default command with its options and scene too: `proxima --frames 1 ...`
/// was refused as an unexpected argument.
#[test]
fn the_main_jobs_options_need_no_command_word() {
    let with = proxima(
        &["run", "--frames", "1", "--device", "cpu", "--bodies", "500"],
        &[],
    );
    let without = proxima(
        &["--frames", "1", "--device", "cpu", "--bodies", "500"],
        &[],
    );
    assert!(without.status.success(), "{without:?}");
    assert_eq!(result_line(&with), result_line(&without));
    let scene = proxima(
        &["scenes/yard.toml", "--frames", "1", "--device", "cpu"],
        &[],
    );
    let named = proxima(
        &[
            "run",
            "scenes/yard.toml",
            "--frames",
            "1",
            "--device",
            "cpu",
        ],
        &[],
    );
    assert_eq!(result_line(&scene), result_line(&named));
}

/// A bench's sizes and outputs are checked before any size is timed: a billion bodies
/// (`bench bounds` aborted allocating them; the others named it after timing the sizes
/// before it), a size past the machine's memory, and one file for both the figures and
/// the plot (the plot was written over the figures). With no GPU the bounds bench's GPU
/// figures are dashes (they read NaN).
#[test]
fn bench_sizes_and_outputs_are_checked_before_any_work() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let same = dir.join("bench-same.out");
    let same = same.to_str().unwrap();
    for (args, want) in [
        (
            &["bench", "bounds", "--bodies", "1000,1000000000"][..],
            "1000000000",
        ),
        (
            &["bench", "broadphase", "--bodies", "1000,1000000000"],
            "1000000000",
        ),
        (
            &[
                "bench",
                "pipeline",
                "--device",
                "cpu",
                "--bodies",
                "1000,1000000000",
            ],
            "1000000000",
        ),
        (
            &["bench", "toi", "--json", same, "--svg", same],
            "name the same file",
        ),
        (
            &["bench", "penetration", "--json", same, "--svg", same],
            "name the same file",
        ),
    ] {
        let o = proxima(args, NO_DRIVER);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{args:?}");
        assert!(
            err.contains(want) && !err.contains("panicked"),
            "{args:?}: {err}"
        );
        // Refused before any size ran: no row was printed.
        assert!(
            !stdout(&o).contains("\n      1000 "),
            "{args:?}: {}",
            stdout(&o)
        );
    }
    let o = proxima(
        &["bench", "bounds", "--bodies", "1000", "--frames", "1"],
        &[("PROXIMA_MEMORY", "1000")],
    );
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("--bodies 1000"),
        "{o:?}"
    );
    let o = proxima(
        &["bench", "bounds", "--bodies", "1000", "--frames", "1"],
        NO_DRIVER,
    );
    assert!(o.status.success(), "{o:?}");
    let row = stdout(&o)
        .lines()
        .find(|l| l.trim_start().starts_with("1000 "))
        .unwrap_or_default()
        .to_owned();
    assert!(row.contains(" - ") && !row.contains("NaN"), "{row}");
}

/// A scene file of unit boxes in a grid of `count` from `at`, `step` apart on each axis.
fn grid_of_boxes(name: &str, at: [f64; 3], count: [u32; 3], step: f64) -> std::path::PathBuf {
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}.toml"));
    std::fs::write(
        &path,
        format!(
            "seed = 1\n[[body]]\nshape = {{ box = [0.5, 0.5, 0.5] }}\nposition = {at:?}\n\
             grid = {{ count = {count:?}, step = [{step:e}, {step:e}, {step:e}] }}\n"
        ),
    )
    .unwrap();
    path
}

/// Scenes the main job cannot run are named before any work: a spin past half a turn a
/// frame, and a speed past f32 (written short).
/// A scene larger than the machine's memory is refused by name before the work that would
/// fill it (the kernel would otherwise kill the process part way through). The machine is
/// stood in for by `PROXIMA_MEMORY`; the oracle is the run's own peak resident memory
/// (the kernel's count, which the main job prints): the same scene runs when the stand-in
/// is that peak (the estimate is not above what the run takes) and is refused at half of it
/// (the estimate is within a factor of two below).
#[test]
fn a_scene_past_the_machines_memory_is_named() {
    let path = grid_of_boxes("touching_grid", [0.0, 0.0, 0.5], [20, 20, 20], 1.0);
    let args = [
        "run",
        "--device",
        "cpu",
        "--frames",
        "2",
        path.to_str().unwrap(),
    ];
    let free = proxima(&args, &[]);
    assert!(free.status.success(), "{free:?}");
    let peak_line = stdout(&free)
        .lines()
        .find(|l| l.starts_with("memory: "))
        .map(str::to_owned)
        .expect("the main job prints its peak memory");
    let (value, unit) = peak_line["memory: ".len()..]
        .split_once(' ')
        .expect("a number and its unit");
    let scale = match &unit[..2] {
        "kB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        other => panic!("unit {other} in {peak_line}"),
    };
    let peak = (value.parse::<f64>().unwrap() * scale) as u64;
    let at = |bytes: u64| proxima(&args, &[("PROXIMA_MEMORY", &bytes.to_string())]);
    let enough = at(peak);
    assert!(enough.status.success(), "{enough:?}");
    assert_eq!(result_line(&enough), result_line(&free));
    // Boxes touching in a grid of n³: every two whose cells are neighbours along each
    // axis (3n − 2 ordered choices an axis), self pairs out, each pair once.
    let n: u64 = 20;
    let pairs = ((3 * n - 2).pow(3) - n.pow(3)) / 2;
    let short = at(peak / 2);
    let err = String::from_utf8_lossy(&short.stderr);
    assert!(!short.status.success() && !stdout(&short).contains("result"));
    assert!(
        err.contains(&format!(
            "frame 0's {pairs} pairs among {} bodies need about",
            n.pow(3)
        )) && err.contains("a smaller scene")
            && !err.contains("panicked"),
        "{err}"
    );
    // Bodies alone past it: refused before any frame, and before the scene makes them (a
    // quarter of a billion took all 24 GB first).
    let o = proxima(
        &["run", "--device", "cpu", "--bodies", "30000"],
        &[("PROXIMA_MEMORY", "1000000")],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{o:?}");
    assert!(
        err.contains("the scene's 30000 bodies need about 18 MB"),
        "{err}"
    );
    let o = proxima(&args, &[("PROXIMA_MEMORY", "lots")]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("PROXIMA_MEMORY=\"lots\" is not a number"));
}

/// A broadphase whose pairs would not fit the machine's memory stops as it finds them and
/// names the error, instead of growing its vectors until the kernel kills the process
/// (100,000 crates of 1e-3 packed among 512 of 1e3 asked for 4 GB at once): 3,000 boxes
/// at one point (4.5M pairs) against a stand-in of 200 MB stop near the 330,000 that fit.
#[test]
fn a_broadphase_past_the_machines_memory_stops_and_is_named() {
    let path = grid_of_boxes("one_point", [0.0; 3], [30, 10, 10], 1e-3);
    let args = [
        "run",
        "--device",
        "cpu",
        "--frames",
        "1",
        path.to_str().unwrap(),
    ];
    let o = proxima(&args, &[("PROXIMA_MEMORY", "200000000")]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && !err.contains("panicked"), "{o:?}");
    let stopped: u64 = err
        .split("it stopped at ")
        .nth(1)
        .and_then(|rest| rest.split(',').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{err}"));
    let fit = (200_000_000 - 3000 * 600) / 600;
    assert!(
        err.contains("the broadphase's pairs among 3000 bodies")
            && (fit..fit + 2 * 65_536 + 1).contains(&stopped),
        "{err}"
    );
}

#[test]
fn a_scene_the_main_job_cannot_run_is_named() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let group = |extra: &str| {
        format!(
            "seed = 1\n[[group]]\nshape = {{ box = [0.5, 0.5, 0.5] }}\ncount = 10\n\
             region = {{ min = [0, 0, 0], max = [4, 4, 4] }}\n{extra}\n"
        )
    };
    for (name, extra, want) in [
        (
            "spin.toml",
            "spin = [0.0, 400.0]",
            "line 6, field `group[0].spin`: 400 rad/s turns half a turn or more",
        ),
        (
            "speed.toml",
            "speed = [0.0, 1e308]",
            "[0.0, 1e308] must be finite",
        ),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, group(extra)).unwrap();
        let o = proxima(&["run", "--device", "cpu", path.to_str().unwrap()], &[]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{name}");
        assert!(
            err.contains(want) && !err.contains("panicked"),
            "{name}: {err}"
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

#[test]
fn bench_gpu_writes_every_figure_and_names_a_size_it_cannot_run() {
    let dir = std::env::temp_dir().join(format!("proxima-bench-gpu-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (json, svg) = (dir.join("figures.json"), dir.join("scaling.svg"));
    let args = |sizes: &str, staging: bool| {
        let mut a = vec![
            "bench".to_string(),
            "gpu".into(),
            "--bodies".into(),
            sizes.into(),
            "--runs".into(),
            "1".into(),
            "--json".into(),
            json.to_str().unwrap().into(),
            "--svg".into(),
            svg.to_str().unwrap().into(),
        ];
        if staging {
            // The depth estimate at the smaller size only (it is slow on a software adapter).
            a.extend(["--depth-max-pairs".into(), "2000".into()]);
        } else {
            a.extend([
                "--no-pair-staging".into(),
                "--depth-max-pairs".into(),
                "0".into(),
                "--no-lookback-sort".into(),
            ]);
        }
        a
    };
    let run = |a: Vec<String>| {
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        proxima(&a, &[])
    };
    for staging in [true, false] {
        let o = run(args("1500,3000", staging));
        if !common::gpu_required()
            && !o.status.success()
            && String::from_utf8_lossy(&o.stderr).contains("no GPU adapter")
        {
            return; // no adapter and none demanded: the bench has nothing to measure
        }
        assert!(o.status.success(), "{o:?}");
        let report: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        assert!(!report["adapter"].as_str().unwrap().is_empty());
        assert_eq!(report["pair_staging"], staging);
        // The settings an A/B run compares are in the figures.
        assert_eq!(report["lookback_sort"], staging);
        assert_eq!(report["depth_max_pairs"], if staging { 2000 } else { 0 });
        assert_eq!(report["methods"], serde_json::json!(["hash", "sweep"]));
        assert!(report["sort_patience"].as_u64().is_some(), "{report}");
        let sizes = report["sizes"].as_array().unwrap();
        assert_eq!(sizes.len(), 2);
        for (s, n) in sizes.iter().zip([1500, 3000]) {
            assert_eq!(s["bodies"], n);
            assert!(s["error"].is_null(), "{s}");
            // The bench itself compares the GPU's pairs with the CPU twin's on the same
            // boxes, and the sort with its twin: a size without an error passed both.
            assert!(s["pairs"].as_u64().unwrap() > 0, "{s}");
            for v in [
                &s["bounds"],
                &s["sort"],
                &s["hash"],
                &s["sweep"],
                &s["hash"]["broadphase"],
            ] {
                let (g, c, r) = (
                    v["gpu_ms"].as_f64().unwrap(),
                    v["cpu_ms"].as_f64().unwrap(),
                    v["ratio"].as_f64().unwrap(),
                );
                assert!(g > 0.0 && c > 0.0, "{v}");
                assert!((r - c / g).abs() <= 1e-9 * r, "{v}");
            }
            // The look-back sorts, 4- and 8-bit, timed beside the other in the same runs
            // (and checked against the twin inside the bench), unless left out.
            for (way, stages) in [
                ("lookback", ["sort/histogram", "sort/lookback"]),
                ("radix8", ["sort8/histogram", "sort8/lookback"]),
            ] {
                let lb = &s["sort"][way];
                if staging {
                    let (g, over) = (
                        lb["gpu_ms"].as_f64().unwrap(),
                        lb["over_spine"].as_f64().unwrap(),
                    );
                    let spine = s["sort"]["gpu_ms"].as_f64().unwrap();
                    assert!(g > 0.0 && (over - g / spine).abs() <= 1e-9 * over, "{lb}");
                    for stage in stages {
                        assert!(lb["dispatch_us"][stage].as_f64().unwrap() > 0.0, "{lb}");
                    }
                    // Late blocks counted in the checked run: a count, whatever it is.
                    assert!(lb["fallbacks"].as_u64().is_some(), "{lb}");
                } else {
                    assert!(lb.is_null(), "{lb}");
                }
            }
            let stages = s["hash"]["stages_ms"].as_object().unwrap();
            for stage in [
                "bounds",
                "broadphase/setup",
                "broadphase/table",
                "broadphase/pairs",
            ] {
                assert!(stages.contains_key(stage), "{stages:?}");
            }
            // The depth estimate ran where asked, over the frame's pairs, checked against
            // its twin inside the bench.
            if staging && n == 1500 {
                let d = &s["depth"];
                assert_eq!(d["pairs"], s["pairs"], "{s}");
                assert!(d["gpu_ms"].as_f64().unwrap() > 0.0, "{d}");
                assert!(d["gpu_pairs_per_s"].as_f64().unwrap() > 0.0, "{d}");
            } else {
                assert!(s["depth"].is_null(), "{s}");
            }
            let dominant = s["dominant_stage"].as_str().unwrap();
            let method = s["best_method"].as_str().unwrap();
            assert!(s[method]["stages_ms"].get(dominant).is_some(), "{s}");
        }
        let plot = std::fs::read_to_string(&svg).unwrap();
        assert!(plot.starts_with("<svg") && plot.contains("gpu frame, hash"));
    }
    // A size past the body limit is named before any size is timed (it was named when its
    // turn came, after the sizes before it had run), and the command fails.
    let o = run(args("1000,300000000", true));
    assert!(!o.status.success(), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--bodies 300000000") && err.contains("268435456"),
        "{err}"
    );
    assert!(!stdout(&o).contains("bench gpu on"), "{}", stdout(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

/// An output that cannot be written where asked (a missing folder, a folder in its place)
/// is a named error before the run starts, not after it: nothing is computed.
#[test]
fn unwritable_outputs_fail_before_the_run() {
    let missing = "/nonexistent-proxima-folder/out.json";
    for args in [
        vec!["run", "--device", "cpu", "--report", missing],
        vec!["run", "--device", "cpu", "--png", "/"],
        vec!["bench", "toi", "--json", missing],
        vec!["bench", "penetration", "--svg", missing],
    ] {
        let o = proxima(&args, &[]);
        assert!(!o.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("folder does not exist") || err.contains("is a folder"),
            "{args:?}: {err}"
        );
        assert!(
            !stdout(&o).contains("result:"),
            "{args:?} ran: {}",
            stdout(&o)
        );
        assert!(
            !stdout(&o).contains("per pair"),
            "{args:?} ran: {}",
            stdout(&o)
        );
    }
}

/// A reader that closes its end of the pipe (`proxima run | head -3`) ends the command
/// quietly and successfully: it panicked writing the next line (exit 101), and `query`
/// said "Broken pipe" as an error. The pipe's read end is closed before the command
/// starts, so every write it makes meets the closed pipe.
#[test]
fn a_closed_pipe_ends_the_command_quietly() {
    let runs: [(&[&str], &str); 4] = [
        (
            &["run", "--device", "cpu", "--bodies", "200", "--frames", "1"],
            "",
        ),
        (&["info"], ""),
        (&["--help"], ""),
        (
            &["query"],
            r#"{"id":1,"query":"distance","a":{"box":[1,1,1]},"b":{"box":[1,1,1]},"pose_b":{"translation":[3,0,0]}}"#,
        ),
    ];
    for (args, input) in runs {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let mut child = Command::new(env!("CARGO_BIN_EXE_proxima"))
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(writer)
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        {
            use std::io::Write;
            let mut stdin = child.stdin.take().unwrap();
            // The command may end before it reads: a write it does not take is fine.
            let _ = writeln!(stdin, "{input}");
        }
        let o = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{args:?}: {:?}\n{err}", o.status);
        assert!(
            !err.contains("panicked") && !err.contains("Broken pipe"),
            "{args:?}: {err}"
        );
    }
}

/// `--png` writes a PNG: a name that says otherwise is refused before the run (a `.jpg`
/// name got PNG bytes).
#[test]
fn a_picture_named_other_than_png_is_refused() {
    let o = proxima(&["run", "--device", "cpu", "--png", "frame.jpg"], &[]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--png frame.jpg") && err.contains(".png"),
        "{err}"
    );
    assert!(!stdout(&o).contains("result:"), "{}", stdout(&o));
    // A size past the device's largest texture is named before the frames too (it was
    // named after the whole run); without an adapter the picture's adapter is named.
    let o = proxima(
        &[
            "run",
            "--device",
            "cpu",
            "--png",
            "frame.png",
            "--png-size",
            "20000x10",
        ],
        &[],
    );
    assert!(!o.status.success());
    assert!(!stdout(&o).contains("result:"), "{}", stdout(&o));
}

/// A misspelt `WGPU_BACKEND` is named (wgpu skips names it does not know, which left no
/// backend to try and read "no suitable adapter"), and an adapter name that matches none of
/// the adapters present says so rather than asking for a driver.
#[test]
fn adapter_variables_that_match_nothing_are_named() {
    let o = proxima(&["info"], &[("WGPU_BACKEND", "vulkn")]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{o:?}");
    assert!(
        err.contains("WGPU_BACKEND") && err.contains("`vulkn` is not a backend"),
        "{err}"
    );
    let o = proxima(
        &["run", "--bodies", "10", "--frames", "1"],
        &[("WGPU_BACKEND", "vulkan, gl")],
    );
    assert!(o.status.success(), "{o:?}");
    // With an adapter present, a name matching none of them is named as such.
    let o = proxima(
        &["info"],
        &[("WGPU_ADAPTER_NAME", "no-such-adapter-anywhere")],
    );
    let err = stdout(&o) + &String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{o:?}");
    if err.contains("present: none") {
        assert!(!common::gpu_required(), "{err}");
    } else {
        assert!(
            err.contains("no GPU adapter's name contains `no-such-adapter-anywhere`")
                && !err.contains("mesa-vulkan-drivers"),
            "{err}"
        );
    }
}

/// What a user gets wrong on the command line is named before any work: a scene file not
/// named `.toml` runs as one; `--bodies` past what a world holds names `--bodies` (it blamed
/// a line of the built-in scene it resized); negative counts say what they must be (clap
/// read `-3` as a flag); `--png-size` without `--png` is refused (it was ignored); an
/// output the run could not write is refused before the frames (found after them); and a
/// folder given to `query` is named.
#[test]
fn command_line_mistakes_are_named_before_any_work() {
    let dir = std::env::temp_dir().join(format!("proxima-cli-mistakes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let scene = dir.join("myscene");
    std::fs::write(
        &scene,
        "[[body]]\nshape = { box = [1, 1, 1] }\nposition = [0, 0, 0]\n",
    )
    .unwrap();
    let scene = scene.to_str().unwrap();
    let o = proxima(&[scene, "--frames", "1", "--device", "cpu"], &[]);
    assert!(o.status.success(), "{o:?}");
    assert!(stdout(&o).contains("result:"), "{o:?}");
    let refused = |args: &[&str], want: &[&str]| {
        let o = proxima(args, &[]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{args:?} should fail");
        assert!(
            want.iter().all(|w| err.contains(w)) && !err.contains("panicked"),
            "{args:?}: {err}"
        );
        assert!(!stdout(&o).contains("result:"), "{args:?} ran");
    };
    refused(
        &["run", "--bodies", "300000000"],
        &["--bodies", "268435456 bodies a world holds"],
    );
    refused(&["run", "--bodies", "-3"], &["--bodies", "at least 1"]);
    refused(&["run", "--frames", "-1"], &["--frames"]);
    refused(
        &["run", "--speculative", "-1"],
        &["speculative distance", "non-negative"],
    );
    refused(&["run", "--png-size", "641x481"], &["--png"]);
    // A list's default reads as a list is written (it read "10000 100000 1000000").
    let help = stdout(&proxima(&["bench", "bounds", "--help"], &[]));
    assert!(help.contains("[default: 10000,100000,1000000]"), "{help}");
    refused(
        &["run", "--png-size", "-640x480", "--png", "x.png"],
        &["-640x480", "positive whole numbers"],
    );
    // sysfs takes no new files, root or not.
    refused(
        &[
            "run",
            scene,
            "--frames",
            "1",
            "--device",
            "cpu",
            "--poses",
            "/sys/proxima-poses.jsonl",
        ],
        &["/sys/proxima-poses.jsonl"],
    );
    let folder = dir.to_str().unwrap();
    refused(&["query", folder], &[folder, "folder"]);
    // The check made no file where there was none.
    let poses = dir.join("poses.jsonl");
    let o = proxima(
        &[
            "run",
            "/nonexistent/scene.toml",
            "--poses",
            poses.to_str().unwrap(),
        ],
        &[],
    );
    assert!(!o.status.success());
    assert!(!poses.exists());
    let _ = std::fs::remove_dir_all(&dir);
}
