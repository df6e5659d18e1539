//! `proxima bench`: every benchmark the binary runs, each with side-by-side ratios.

use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::{Subcommand, ValueEnum};

use crate::{DeviceArg, open_bench_pipeline, open_pipeline, writable};
use proxima::bench::{ClockKeeper, keep_clock, median};
use proxima::crowd::Crowd;
use proxima::frame;
use proxima::pipeline::Backend;
use proxima::scene::Scene;
use proxima::{Error, Result};

#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// The bounds pass: GPU against its CPU twin.
    Bounds(BenchArgs),
    /// The broadphase: GPU hash and sweep against their CPU twins, on the default scene
    /// resized; prints bodies/ms and ratios, writes an SVG scaling plot.
    Broadphase(BroadphaseBenchArgs),
    /// Every GPU pass against its CPU twin (bounds, sort, moving frames with hash and
    /// sweep), 10k to 16M bodies on a hardware GPU: a table, a JSON file and a log-log plot.
    Gpu(GpuBenchArgs),
    /// The pipeline (bounds, broadphase, contacts) on the GPU, on the CPU twins and as
    /// parry3d-f64 (BVH + GJK/EPA) on the default crowd: per stage, with missed pairs and
    /// depth errors; a table, a JSON file and a log-log plot.
    Pipeline(PipelineBenchArgs),
    /// Penetration depth: the Gauss-map walk, warm and cold, against parry3d-f64's EPA on
    /// coherent sequences of overlapping hulls, every answer checked: a table, a JSON file
    /// and a log-log plot.
    Penetration(PenetrationBenchArgs),
    /// Time of impact: conservative advancement against parry3d-f64's
    /// sweep_time_of_impact and cast_shapes_nonlinear on batches of rotating hulls, in
    /// cache and out of it, every answer checked: a table, a JSON file and a log-log plot.
    Toi(ToiBenchArgs),
}

/// Runs the benchmark `which` names.
pub fn run(which: BenchCommand) -> Result<()> {
    match which {
        BenchCommand::Bounds(args) => bench_bounds(&args),
        BenchCommand::Broadphase(args) => bench_broadphase(&args),
        BenchCommand::Gpu(args) => bench_gpu(&args),
        BenchCommand::Pipeline(args) => bench_pipeline(&args),
        BenchCommand::Penetration(args) => bench_penetration(&args),
        BenchCommand::Toi(args) => bench_toi(&args),
    }
}

#[derive(clap::Args, Debug)]
#[command(allow_negative_numbers = true)]
pub struct ToiBenchArgs {
    /// Vertices per hull, comma separated.
    #[arg(long, value_delimiter = ',', default_value = "8,32,128,512")]
    vertices: Vec<usize>,
    /// Pairs in a batch that stays in cache (the out-of-cache batch has ten times as many).
    #[arg(long, default_value_t = 200)]
    pairs: usize,
    /// Sizes up to this also get the out-of-cache batch (0: none).
    #[arg(long, default_value_t = 32)]
    uncached_up_to: usize,
    /// Timed rounds per figure (the median is reported).
    #[arg(long, default_value_t = 9)]
    rounds: usize,
    /// Where to write the figures as JSON.
    #[arg(long, default_value = "bench-toi.json")]
    json: PathBuf,
    /// Where to write the log-log plot.
    #[arg(long, default_value = "bench-toi.svg")]
    svg: PathBuf,
}

#[derive(clap::Args, Debug)]
#[command(allow_negative_numbers = true)]
pub struct PenetrationBenchArgs {
    /// Vertices per hull, comma separated.
    #[arg(long, value_delimiter = ',', default_value = "8,32,128,512,2048")]
    vertices: Vec<usize>,
    /// Frames per sequence (those where the hulls overlap are queried).
    #[arg(long, default_value_t = 200)]
    frames: usize,
    /// Timed rounds per figure (the median is reported).
    #[arg(long, default_value_t = 9)]
    rounds: usize,
    /// How the hulls overlap, comma separated: B resting on A pressed in (shallow),
    /// centres 0.9 apart (deep), one centre (centred: bodies spawned at one point).
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "shallow,deep,centred"
    )]
    kinds: Vec<KindArg>,
    /// Where to write the figures as JSON.
    #[arg(long, default_value = "bench-penetration.json")]
    json: PathBuf,
    /// Where to write the log-log plot.
    #[arg(long, default_value = "bench-penetration.svg")]
    svg: PathBuf,
}

#[derive(clap::Args, Debug)]
#[command(allow_negative_numbers = true)]
pub struct PipelineBenchArgs {
    /// Body counts, comma separated (each at least 1).
    #[arg(long, value_delimiter = ',', value_parser = crate::at_least_one, default_value = "10000,100000")]
    bodies: Vec<usize>,
    /// Timed frames per size (after one warm-up frame; at least 1).
    #[arg(long, default_value_t = 3, value_parser = crate::at_least_one)]
    frames: usize,
    /// Where the wide passes of proxima's GPU column run: `auto` takes any adapter, a
    /// software one too (the column names it), `cpu` leaves the column out.
    #[arg(long, value_enum, default_value_t = DeviceArg::Auto, hide_possible_values = true)]
    device: DeviceArg,
    /// Where to write the figures as JSON.
    #[arg(long, default_value = "bench-pipeline.json")]
    json: PathBuf,
    /// Where to write the log-log plot.
    #[arg(long, default_value = "bench-pipeline.svg")]
    svg: PathBuf,
}

#[derive(clap::Args, Debug)]
#[command(allow_negative_numbers = true)]
pub struct GpuBenchArgs {
    /// Body counts, comma separated (each at least 1) [default: 10k to 16M on a hardware
    /// GPU, 10k to 1M on a software adapter]
    #[arg(long, value_delimiter = ',', value_parser = crate::at_least_one)]
    bodies: Option<Vec<usize>>,
    /// Timed GPU runs per figure (after one warm-up run).
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// Timed CPU-twin runs per figure.
    #[arg(long, default_value_t = 1)]
    cpu_runs: usize,
    /// Where to write the figures as JSON.
    #[arg(long, default_value = "bench-gpu.json")]
    json: PathBuf,
    /// Where to write the log-log scaling plot.
    #[arg(long, default_value = "bench-gpu.svg")]
    svg: PathBuf,
    /// Every pair takes the global counter instead of a workgroup stage (the A/B baseline).
    #[arg(long)]
    no_pair_staging: bool,
    /// GPU timestamps around every pass instead of each stage's run of passes (the A/B
    /// baseline: the timestamps' own cost).
    #[arg(long)]
    pass_timestamps: bool,
    /// A compute pass for every dispatch instead of one for each run of consecutive
    /// dispatches (the A/B baseline: the passes' own cost).
    #[arg(long)]
    pass_per_dispatch: bool,
    /// Time only the three-dispatch radix sort, not the look-back ones beside it (4-bit
    /// digits, the broadphase's, and 8-bit)
    #[arg(long)]
    no_lookback_sort: bool,
    /// Reads of a late block's status word before a look-back sort counts that block's
    /// keys itself (the A/B of the fallback: `late blocks counted` on the sort's line)
    #[arg(long, default_value_t = proxima::passes::radix::LOOKBACK_PATIENCE)]
    sort_patience: u32,
    /// The sampled depth estimate (k = 16) runs over a size's pairs when there are at
    /// most this many [default: 1200000 on a hardware GPU, 5000 on a software adapter]
    #[arg(long)]
    depth_max_pairs: Option<usize>,
    /// Broadphase methods to run frames with, comma separated.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "hash,sweep")]
    methods: Vec<MethodArg>,
}

#[derive(clap::Args, Debug)]
#[command(allow_negative_numbers = true)]
pub struct BroadphaseBenchArgs {
    /// Body counts, comma separated (each at least 1) [default: 10000,100000,1000000, and
    /// 4000000 on a hardware adapter]
    #[arg(long, value_delimiter = ',', value_parser = crate::at_least_one)]
    bodies: Option<Vec<usize>>,
    /// Timed runs per size and method (after one warm-up run).
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// Where to write the SVG scaling plot.
    #[arg(long, default_value = "broadphase-scaling.svg")]
    svg: PathBuf,
    /// Methods to time, comma separated (GPU and CPU twin each).
    #[arg(long, value_enum, value_delimiter = ',', default_value = "hash,sweep")]
    methods: Vec<MethodArg>,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum KindArg {
    Shallow,
    Deep,
    Centred,
}

impl From<KindArg> for proxima::penetration_bench::Kind {
    fn from(k: KindArg) -> Self {
        use proxima::penetration_bench::Kind;
        match k {
            KindArg::Shallow => Kind::Shallow,
            KindArg::Deep => Kind::Deep,
            KindArg::Centred => Kind::Centred,
        }
    }
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum MethodArg {
    Hash,
    Sweep,
}

#[derive(clap::Args, Debug)]
#[command(allow_negative_numbers = true)]
pub struct BenchArgs {
    /// Body counts, comma separated (each at least 1).
    #[arg(long, value_delimiter = ',', value_parser = crate::at_least_one, default_value = "10000,100000,1000000")]
    bodies: Vec<usize>,
    /// Timed frames per size (after one warm-up frame; at least 1).
    #[arg(long, default_value_t = 10, value_parser = crate::at_least_one)]
    frames: usize,
}

fn bench_bounds(args: &BenchArgs) -> Result<()> {
    check_sizes(&args.bodies)?;
    let mut gpu = open_bench_pipeline()?;
    let has_gpu = matches!(gpu.backend(), Backend::Gpu(_));
    let keeper = ClockKeeper::of(&gpu);
    say!("bounds pass on {}", gpu.device_name());
    say!(
        "{:>10} {:>14} {:>14} {:>14} {:>10}",
        "bodies",
        "cpu twin ms",
        "gpu pass ms",
        "gpu frame ms",
        "cpu/gpu"
    );
    for &n in &args.bodies {
        let world = Crowd::random(n, 1);
        let mut cpu_s = Vec::new();
        let mut pass_s = Vec::new();
        let mut frame_s = Vec::new();
        // Interleave the two sides so both see the same machine load.
        for f in 0..=args.frames {
            let t = Instant::now();
            let cpu = frame::cpu(&world.bodies, &world.shapes, None)?;
            let cpu_t = t.elapsed().as_secs_f64();
            std::hint::black_box(&cpu.aabbs);
            let (p, w) = if has_gpu {
                keep_clock(&mut gpu, &keeper)?;
                let r = gpu.bounds(&world)?;
                (
                    r.profile.stage_seconds(frame::stage::BOUNDS),
                    r.profile.wall.as_secs_f64(),
                )
            } else {
                (f64::NAN, f64::NAN)
            };
            if f > 0 {
                cpu_s.push(cpu_t);
                pass_s.push(p);
                frame_s.push(w);
            }
        }
        let (c, p, w) = (
            median(&mut cpu_s),
            median(&mut pass_s),
            median(&mut frame_s),
        );
        say!(
            "{n:>10} {:>14.3} {} {} {}",
            c * 1e3,
            figure(p * 1e3, 14, 3),
            figure(w * 1e3, 14, 3),
            figure(c / p, 10, 2)
        );
    }
    say!(
        "(medians; 'gpu pass' is the bounds dispatch alone, 'gpu frame' adds upload and \
         readback; cpu/gpu is the twin's time over the pass's)"
    );
    Ok(())
}

fn bench_broadphase(args: &BroadphaseBenchArgs) -> Result<()> {
    use proxima::broadphase::{GpuBroadphase, cpu_pairs};
    use proxima::passes::broadphase::Method;
    use proxima::plot::{Series, loglog_svg};
    writable(&[&args.svg])?;
    if args.runs == 0 {
        return Err(Error::Usage("--runs must be at least 1".into()));
    }
    let mut pipeline = open_bench_pipeline()?;
    let keeper = ClockKeeper::of(&pipeline);
    say!(
        "broadphase on {}; default scene resized, boxes from the bounds pass",
        pipeline.device_name()
    );
    say!(
        "{:>9} {:>10} {:>11} {:>11} {:>11} {:>11} {:>13} {:>10}",
        "bodies",
        "pairs",
        "gpu hash",
        "gpu sweep",
        "cpu hash",
        "cpu sweep",
        "best gpu b/ms",
        "cpu/gpu"
    );
    let hardware = match pipeline.backend_mut() {
        Backend::Gpu(engine) => !engine.context().is_software(),
        Backend::Cpu => false,
    };
    let sizes = args.bodies.clone().unwrap_or_else(|| {
        let mut sizes = vec![10_000, 100_000, 1_000_000];
        if hardware {
            sizes.push(4_000_000);
        }
        sizes
    });
    check_sizes(&sizes)?;
    let names = ["gpu hash", "gpu sweep", "cpu hash", "cpu sweep"];
    let mut series: Vec<Series> = names
        .iter()
        .map(|n| Series {
            name: (*n).into(),
            points: Vec::new(),
        })
        .collect();
    for &n in &sizes {
        let scene = Scene::default_scene(Some(n as u64))?;
        let aabbs = pipeline.bounds(&scene.crowd)?.aabbs;
        let mut times = [f64::NAN; 4];
        let mut pairs = 0;
        let mut gpu = GpuBroadphase::default();
        for (k, method) in [Method::Hash, Method::Sweep].into_iter().enumerate() {
            let wanted = match method {
                Method::Hash => MethodArg::Hash,
                Method::Sweep => MethodArg::Sweep,
            };
            if !args.methods.contains(&wanted) {
                continue;
            }
            let mut t = Vec::new();
            for r in 0..=args.runs {
                let start = Instant::now();
                let p = cpu_pairs(&aabbs, method)?;
                if r > 0 {
                    t.push(start.elapsed().as_secs_f64());
                }
                pairs = p.len();
            }
            times[2 + k] = median(&mut t);
            if let Backend::Gpu(engine) = pipeline.backend_mut() {
                let mut t = Vec::new();
                for r in 0..=args.runs {
                    if r > 0 {
                        keeper.keep(engine)?;
                    }
                    let run = gpu.run(engine, &aabbs, method)?;
                    if run.pairs.len() != pairs {
                        return Err(Error::Gpu(format!(
                            "gpu {} found {} pairs, the cpu twin {pairs}",
                            method.name(),
                            run.pairs.len()
                        )));
                    }
                    if r > 0 {
                        // GPU timestamps where the adapter has them, else wall time.
                        t.push(if run.gpu_time > 0.0 {
                            run.gpu_time
                        } else {
                            run.wall.as_secs_f64()
                        });
                    }
                }
                times[k] = median(&mut t);
            }
        }
        for (s, t) in series.iter_mut().zip(times) {
            if t.is_finite() {
                s.points.push((n as f64, t * 1e3));
            }
        }
        // f64::min skips NaN: the best of the methods timed.
        let best_gpu = times[0].min(times[1]);
        let best_cpu = times[2].min(times[3]);
        let ms = |t: f64| {
            if t.is_finite() {
                format!("{:>9.3}ms", t * 1e3)
            } else {
                format!("{:>11}", "-")
            }
        };
        say!(
            "{n:>9} {pairs:>10} {} {} {} {} {} {}",
            ms(times[0]),
            ms(times[1]),
            ms(times[2]),
            ms(times[3]),
            figure(n as f64 / (best_gpu * 1e3), 13, 0),
            figure(best_cpu / best_gpu, 10, 2)
        );
    }
    series.retain(|s| !s.points.is_empty());
    let svg = loglog_svg(
        "broadphase scaling",
        "bodies",
        "time per frame (ms)",
        &series,
    );
    std::fs::write(&args.svg, svg).map_err(|source| Error::Io {
        path: args.svg.clone(),
        source,
    })?;
    say!(
        "(medians of {} runs; GPU columns are the broadphase stage's GPU time; plot: {})",
        args.runs,
        args.svg.display()
    );
    Ok(())
}

/// `x` right-aligned in `width` with `digits` decimals; a dash where nothing was timed (a
/// GPU figure on the CPU twins alone).
fn figure(x: f64, width: usize, digits: usize) -> String {
    if x.is_finite() {
        format!("{x:>width$.digits$}")
    } else {
        format!("{:>width$}", "-")
    }
}

/// Checks a bench's body counts before any is timed: each within the body limit and the
/// machine's memory (a count past them was named only when its turn came, after the
/// sizes before it had run, and `bench bounds` aborted allocating a billion bodies).
fn check_sizes(sizes: &[usize]) -> Result<()> {
    for &n in sizes {
        if n > proxima::bodies::MAX_BODIES {
            return Err(Error::Usage(format!(
                "--bodies {n}: more than the {} bodies a world holds",
                proxima::bodies::MAX_BODIES
            )));
        }
        proxima::memory::check(|| format!("--bodies {n}"), proxima::memory::estimate(n, 0))?;
    }
    Ok(())
}

/// Checks a bench's figures and plot outputs before any work: each writable where asked,
/// and two files (the plot written over the figures left no JSON).
fn check_outputs(json: &Path, svg: &Path) -> Result<()> {
    writable(&[json, svg])?;
    let same = json == svg
        || matches!(
            (std::fs::canonicalize(json), std::fs::canonicalize(svg)),
            (Ok(a), Ok(b)) if a == b
        );
    if same {
        return Err(Error::Usage(format!(
            "--json and --svg name the same file ({}): the plot would be written over the figures",
            json.display()
        )));
    }
    Ok(())
}

/// Writes a benchmark's figures as JSON and its plot as SVG.
fn write_figures(
    report: &impl serde::Serialize,
    json: &Path,
    svg: String,
    svg_path: &Path,
) -> Result<()> {
    let write = |path: &Path, text: String| {
        std::fs::write(path, text).map_err(|source| Error::Io {
            path: path.to_owned(),
            source,
        })
    };
    let text = serde_json::to_string_pretty(report)
        .map_err(|e| Error::Bench(format!("report as JSON: {e}")))?;
    write(json, text + "\n")?;
    write(svg_path, svg)?;
    say!("figures: {}, plot: {}", json.display(), svg_path.display());
    Ok(())
}

fn bench_pipeline(args: &PipelineBenchArgs) -> Result<()> {
    check_outputs(&args.json, &args.svg)?;
    check_sizes(&args.bodies)?;
    let gpu = match args.device {
        DeviceArg::Cpu => None,
        DeviceArg::Gpu => Some(open_pipeline(DeviceArg::Gpu)?),
        DeviceArg::Auto => {
            let pipeline = open_bench_pipeline()?;
            matches!(pipeline.backend(), Backend::Gpu(_)).then_some(pipeline)
        }
    };
    let report = proxima::peer::run(&args.bodies, args.frames, gpu, &mut |f| match &f.error {
        None => eprintln!("  {} bodies done", f.bodies),
        Some(e) => eprintln!("  {} bodies: {e}", f.bodies),
    })?;
    say!("{}", report.table().trim_end_matches('\n'));
    write_figures(&report, &args.json, report.svg(), &args.svg)?;
    let failed = report.sizes.iter().filter(|f| f.error.is_some()).count();
    if failed > 0 {
        return Err(Error::Bench(format!(
            "{failed} of {} sizes could not run (their errors are above and in the JSON)",
            report.sizes.len()
        )));
    }
    Ok(())
}

fn bench_penetration(args: &PenetrationBenchArgs) -> Result<()> {
    check_outputs(&args.json, &args.svg)?;
    // Each kind once (`--kinds deep,deep` ran it twice).
    let mut kinds: Vec<_> = Vec::new();
    for &k in &args.kinds {
        if !kinds.contains(&k) {
            kinds.push(k);
        }
    }
    let kinds: Vec<_> = kinds.into_iter().map(|k| k.into()).collect();
    let report = proxima::penetration_bench::run(
        &args.vertices,
        &kinds,
        args.frames,
        args.rounds,
        &mut |f| eprintln!("  {} vertices, {}: done", f.vertices, f.kind),
    )?;
    say!("{}", report.table().trim_end_matches('\n'));
    write_figures(&report, &args.json, report.svg(), &args.svg)
}

fn bench_toi(args: &ToiBenchArgs) -> Result<()> {
    check_outputs(&args.json, &args.svg)?;
    let options = proxima::toi_bench::ToiBenchOptions {
        vertices: args.vertices.clone(),
        pairs: args.pairs,
        uncached_up_to: args.uncached_up_to,
        rounds: args.rounds,
    };
    let report = proxima::toi_bench::run(&options, &mut |f| {
        eprintln!("  {} vertices, {}: done", f.vertices, f.batch);
    })?;
    say!("{}", report.table().trim_end_matches('\n'));
    write_figures(&report, &args.json, report.svg(), &args.svg)
}

fn bench_gpu(args: &GpuBenchArgs) -> Result<()> {
    use proxima::bench::{GpuBenchOptions, run_gpu_bench};
    check_outputs(&args.json, &args.svg)?;
    if let Some(sizes) = &args.bodies {
        check_sizes(sizes)?;
    }
    let mut pipeline = open_pipeline(DeviceArg::Gpu)?;
    let hardware = match pipeline.backend() {
        Backend::Gpu(engine) => !engine.context().is_software(),
        Backend::Cpu => false,
    };
    let options = GpuBenchOptions {
        sizes: args
            .bodies
            .clone()
            .unwrap_or_else(|| GpuBenchOptions::default_sizes(hardware)),
        runs: args.runs,
        cpu_runs: args.cpu_runs,
        pair_staging: !args.no_pair_staging,
        pass_timestamps: args.pass_timestamps,
        pass_per_dispatch: args.pass_per_dispatch,
        lookback_sort: !args.no_lookback_sort,
        sort_patience: args.sort_patience,
        depth_max_pairs: args
            .depth_max_pairs
            .unwrap_or(if hardware { 1_200_000 } else { 5_000 }),
        methods: args
            .methods
            .iter()
            .map(|m| match m {
                MethodArg::Hash => proxima::passes::broadphase::Method::Hash,
                MethodArg::Sweep => proxima::passes::broadphase::Method::Sweep,
            })
            .collect(),
    };
    say!("bench gpu on {}", pipeline.device_name());
    let report = run_gpu_bench(&mut pipeline, &options, |f| match &f.error {
        None => eprintln!("  {} bodies done", f.bodies),
        Some(e) => eprintln!("  {} bodies: {e}", f.bodies),
    })?;
    say!("{}", report.table().trim_end_matches('\n'));
    write_figures(&report, &args.json, report.svg(), &args.svg)?;
    let failed = report.sizes.iter().filter(|f| f.error.is_some()).count();
    if failed > 0 {
        return Err(Error::Bench(format!(
            "{failed} of {} sizes could not run (their errors are above and in the JSON)",
            report.sizes.len()
        )));
    }
    Ok(())
}
