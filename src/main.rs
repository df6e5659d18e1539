//! The `proxima` command: the main job on the built-in default scene, adapter info, and
//! benchmarks. Run `proxima --help`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use clap::{Parser, Subcommand, ValueEnum};

use proxima::bench::{ClockKeeper, keep_clock, median};
use proxima::crowd::Crowd;
use proxima::frame;
use proxima::gpu::{ContextOptions, GpuContext};
use proxima::kinematic::{CrowdFrame, KinematicCrowd};
use proxima::pipeline::Backend;
use proxima::query::QueryEngine;
use proxima::scene::Scene;
use proxima::world::World;
use proxima::{DeviceChoice, Error, Pipeline, Result};

#[derive(Parser, Debug)]
#[command(
    name = "proxima",
    version,
    about = "GPU + exact CPU collision detection"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the main job on the built-in crowd (the default when no command is given).
    Run(RunArgs),
    /// Show the adapter the GPU path would use: backend, limits, timestamp support.
    Info,
    /// Answer geometric queries: JSON Lines in (a file, or stdin), one JSON answer per line.
    Query {
        /// Input file; stdin when absent or `-`.
        file: Option<PathBuf>,
    },
    /// Benchmarks with side-by-side ratios.
    Bench {
        #[command(subcommand)]
        which: BenchCommand,
    },
}

#[derive(Subcommand, Debug)]
enum BenchCommand {
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

#[derive(clap::Args, Debug)]
struct ToiBenchArgs {
    /// Vertices per hull, comma separated.
    #[arg(long, value_delimiter = ',', default_values_t = [8usize, 32, 128, 512])]
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
struct PenetrationBenchArgs {
    /// Vertices per hull, comma separated.
    #[arg(long, value_delimiter = ',', default_values_t = [8usize, 32, 128, 512, 2048])]
    vertices: Vec<usize>,
    /// Frames per sequence (those where the hulls overlap are queried).
    #[arg(long, default_value_t = 200)]
    frames: usize,
    /// Timed rounds per figure (the median is reported).
    #[arg(long, default_value_t = 9)]
    rounds: usize,
    /// How the hulls overlap, comma separated: B resting on A pressed in (shallow),
    /// centres 0.9 apart (deep), one centre (centred: bodies spawned at one point).
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = [KindArg::Shallow, KindArg::Deep, KindArg::Centred])]
    kinds: Vec<KindArg>,
    /// Where to write the figures as JSON.
    #[arg(long, default_value = "bench-penetration.json")]
    json: PathBuf,
    /// Where to write the log-log plot.
    #[arg(long, default_value = "bench-penetration.svg")]
    svg: PathBuf,
}

#[derive(clap::Args, Debug)]
struct PipelineBenchArgs {
    /// Body counts, comma separated.
    #[arg(long, value_delimiter = ',', default_values_t = [10_000usize, 100_000])]
    bodies: Vec<usize>,
    /// Timed frames per size (after one warm-up frame).
    #[arg(long, default_value_t = 3)]
    frames: usize,
    /// Where the wide passes of proxima's GPU column run (`cpu`: no GPU column).
    #[arg(long, value_enum, default_value_t = DeviceArg::Auto)]
    device: DeviceArg,
    /// Where to write the figures as JSON.
    #[arg(long, default_value = "bench-pipeline.json")]
    json: PathBuf,
    /// Where to write the log-log plot.
    #[arg(long, default_value = "bench-pipeline.svg")]
    svg: PathBuf,
}

#[derive(clap::Args, Debug)]
struct GpuBenchArgs {
    /// Body counts, comma separated [default: 10k to 16M on a hardware GPU, 10k to 1M on a
    /// software adapter]
    #[arg(long, value_delimiter = ',')]
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
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = [MethodArg::Hash, MethodArg::Sweep])]
    methods: Vec<MethodArg>,
}

#[derive(clap::Args, Debug)]
struct BroadphaseBenchArgs {
    /// Body counts, comma separated [default: 10000,100000,1000000, and 4000000 on a
    /// hardware adapter]
    #[arg(long, value_delimiter = ',')]
    bodies: Option<Vec<usize>>,
    /// Timed runs per size and method (after one warm-up run).
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// Where to write the SVG scaling plot.
    #[arg(long, default_value = "broadphase-scaling.svg")]
    svg: PathBuf,
    /// Methods to time, comma separated (GPU and CPU twin each).
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = [MethodArg::Hash, MethodArg::Sweep])]
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

#[derive(clap::Args, Debug, Clone)]
struct RunArgs {
    /// Scene file (TOML); the built-in scenes/crowd.toml when absent.
    scene_file: Option<PathBuf>,
    /// Scene file (TOML), as an option.
    #[arg(long, conflicts_with = "scene_file")]
    scene: Option<PathBuf>,
    /// Resize the scene to about this many bodies (counts and regions scale together).
    #[arg(long)]
    bodies: Option<u64>,
    /// Frames to run (at least 1).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    frames: u32,
    /// Where the wide passes run.
    #[arg(long, value_enum, default_value_t = DeviceArg::Auto)]
    device: DeviceArg,
    /// Broadphase method.
    #[arg(long, value_enum, default_value_t = BroadphaseArg::Auto)]
    broadphase: BroadphaseArg,
    /// Contacts are reported for pairs up to this far apart (the crowd's bodies stop just
    /// short of touching, so the default shows those about to).
    #[arg(long, default_value_t = DEFAULT_SPECULATIVE)]
    speculative: f64,
    /// Run the sampled depth estimate after the broadphase (K × K directions per cube-map
    /// face, 16 a good start): pairs it proves apart skip the exact stage.
    #[arg(long, value_name = "K")]
    depth_estimate: Option<u32>,
    /// Write per-frame pairs, contacts, impacts and stage times here (JSON).
    #[arg(long)]
    report: Option<PathBuf>,
    /// Render the last frame here (PNG): bodies in contact highlighted (orange: touching or
    /// overlapping; yellow: within the speculative distance), contact normals drawn.
    #[arg(long)]
    png: Option<PathBuf>,
    /// Size of the `--png` picture, WIDTHxHEIGHT.
    #[arg(long, default_value = "1280x800", value_parser = parse_size)]
    png_size: (u32, u32),
}

/// Most rounds the main job spends parting a scene's overlapping bodies before its first
/// frame (the default crowd takes 8; the boulders scene, whose rocks overlap each other
/// and push the crowd about, 32; later rounds move few bodies and cost little).
const SETTLE_ROUNDS: u32 = 100;

/// The main job's speculative distance: a hundredth of the default crowd's body size.
const DEFAULT_SPECULATIVE: f64 = 0.01;

fn parse_size(text: &str) -> std::result::Result<(u32, u32), String> {
    let (w, h) = text
        .split_once('x')
        .ok_or_else(|| format!("`{text}`: expected WIDTHxHEIGHT, e.g. 1280x800"))?;
    let side = |s: &str| {
        s.trim()
            .parse::<u32>()
            .ok()
            .filter(|&v| v > 0)
            .ok_or_else(|| format!("`{text}`: sides must be positive whole numbers"))
    };
    Ok((side(w)?, side(h)?))
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum BroadphaseArg {
    Auto,
    Hash,
    Sweep,
}

impl Default for RunArgs {
    fn default() -> Self {
        Self {
            scene_file: None,
            scene: None,
            bodies: None,
            frames: 10,
            device: DeviceArg::Auto,
            broadphase: BroadphaseArg::Auto,
            speculative: DEFAULT_SPECULATIVE,
            depth_estimate: None,
            report: None,
            png: None,
            png_size: (1280, 800),
        }
    }
}

#[derive(clap::Args, Debug)]
struct BenchArgs {
    /// Body counts, comma separated.
    #[arg(long, value_delimiter = ',', default_values_t = [10_000usize, 100_000, 1_000_000])]
    bodies: Vec<usize>,
    /// Timed frames per size (after one warm-up frame).
    #[arg(long, default_value_t = 10)]
    frames: usize,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum DeviceArg {
    Auto,
    Gpu,
    Cpu,
}

impl From<DeviceArg> for DeviceChoice {
    fn from(d: DeviceArg) -> Self {
        match d {
            DeviceArg::Auto => DeviceChoice::Auto,
            DeviceArg::Gpu => DeviceChoice::Gpu,
            DeviceArg::Cpu => DeviceChoice::Cpu,
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        None => run(&RunArgs::default()),
        Some(Command::Run(args)) => run(&args),
        Some(Command::Info) => info(),
        Some(Command::Query { file }) => query(file.as_deref()),
        Some(Command::Bench {
            which: BenchCommand::Bounds(args),
        }) => bench_bounds(&args),
        Some(Command::Bench {
            which: BenchCommand::Penetration(args),
        }) => bench_penetration(&args),
        Some(Command::Bench {
            which: BenchCommand::Toi(args),
        }) => bench_toi(&args),
        Some(Command::Bench {
            which: BenchCommand::Broadphase(args),
        }) => bench_broadphase(&args),
        Some(Command::Bench {
            which: BenchCommand::Gpu(args),
        }) => bench_gpu(&args),
        Some(Command::Bench {
            which: BenchCommand::Pipeline(args),
        }) => bench_pipeline(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("proxima: error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn open_pipeline(device: DeviceArg) -> Result<Pipeline> {
    let pipeline = Pipeline::new(device.into(), &ContextOptions::default())?;
    if let Some(notice) = &pipeline.fallback_notice {
        // On stderr: stdout carries the job's results, the same with or without a GPU.
        eprintln!("proxima: {notice}");
    }
    Ok(pipeline)
}

fn run(args: &RunArgs) -> Result<()> {
    let outputs: Vec<&Path> = [&args.report, &args.png]
        .into_iter()
        .flatten()
        .map(PathBuf::as_path)
        .collect();
    writable(&outputs)?;
    let scene_path = args.scene.clone().or_else(|| args.scene_file.clone());
    let scene = match &scene_path {
        Some(path) => Scene::load_resized(path, args.bodies)?,
        None => Scene::default_scene(args.bodies)?,
    };
    let mut pipeline = open_pipeline(args.device)?;
    pipeline.set_broadphase(match args.broadphase {
        BroadphaseArg::Auto => proxima::broadphase::Choice::Auto,
        BroadphaseArg::Hash => {
            proxima::broadphase::Choice::Method(proxima::passes::broadphase::Method::Hash)
        }
        BroadphaseArg::Sweep => {
            proxima::broadphase::Choice::Method(proxima::passes::broadphase::Method::Sweep)
        }
    });
    let device = pipeline.device_name();
    // A picture needs an adapter: where the frames run on the CPU twins, one is opened
    // now, so a machine with none says so before the frames rather than after them.
    let picture_context = match &args.png {
        Some(_) if matches!(pipeline.backend(), Backend::Cpu) => Some(picture_adapter()?),
        _ => None,
    };
    let mut world = World::on(pipeline);
    // The exact bodies first: a mesh that cannot be decomposed is an error before any
    // frame runs, and a decomposition says so while it runs.
    world.add_scene(&scene, &mut |line| eprintln!("proxima: {line}"))?;
    world.set_speculative(args.speculative)?;
    world.set_depth_estimate(args.depth_estimate)?;
    let walls = scene
        .crowd
        .wrap
        .map(|(lo, hi)| (lo.as_dvec3(), hi.as_dvec3()));
    let mut crowd = KinematicCrowd::new(world, walls);
    println!(
        "proxima: scene {}{}, {} bodies, {} shapes, {} frames on {device}",
        scene.path.display(),
        if scene_path.is_none() {
            " (built-in)"
        } else {
            ""
        },
        crowd.world.len(),
        scene.geometry.len(),
        args.frames,
    );
    // A body that turns half a turn or more in a frame has no motion the exact stage can
    // follow: said before any work rather than at the first frame.
    let dt = 1.0 / 60.0;
    crowd.world.motions(dt).map_err(|e| {
        Error::Usage(format!(
            "scene {}: {e} (the main job's frames are 1/60 s: spins under {:.0} rad/s)",
            scene.path.display(),
            std::f64::consts::PI * 60.0
        ))
    })?;
    // A scene placed at random starts with overlapping pairs: part them first, so that no
    // pair overlaps at any frame's start.
    let t = Instant::now();
    let settled = crowd.settle(SETTLE_ROUNDS)?;
    let seconds = t.elapsed().as_secs_f64();
    if settled.overlapping == 0 {
        println!(
            "proxima: start: {} overlapping pairs parted in {} rounds ({seconds:.1} s)",
            settled.initial, settled.rounds
        );
    } else {
        println!(
            "proxima: start: {} overlapping pairs, {} still overlapping after {} rounds \
             ({seconds:.1} s){}",
            settled.initial,
            settled.overlapping,
            settled.rounds,
            if settled.stuck {
                ": their pushes are below the rounding of their coordinates (bodies far \
                 smaller than their distance from the origin)"
            } else {
                ""
            }
        );
    }
    let bar = indicatif::ProgressBar::new(u64::from(args.frames));
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} frames, {per_sec} {msg}")
            .expect("a valid template"),
    );
    let mut totals: Vec<(&'static str, f64)> = Vec::new();
    let (mut wall, mut timed) = (0.0, 0u32);
    let mut rows = Vec::new();
    let mut last = None;
    for f in 0..args.frames {
        let t = Instant::now();
        let frame = crowd.frame(dt)?;
        let seconds = t.elapsed().as_secs_f64();
        bar.inc(1);
        bar.set_message(format!(
            "{} contacts, {} impacts",
            frame.report.contacts.len(),
            frame.impacts.len()
        ));
        // Frame 0 pays for pipeline compilation and first allocations: not averaged.
        if f > 0 || args.frames == 1 {
            timed += 1;
            wall += seconds;
            let stages = frame
                .report
                .profile
                .stages
                .iter()
                .map(|s| (s.name, s.seconds));
            for (name, t) in stages.chain(impact_stages(&frame)) {
                match totals.iter_mut().find(|(n, _)| *n == name) {
                    Some((_, sum)) => *sum += t,
                    None => totals.push((name, t)),
                }
            }
        }
        if args.report.is_some() {
            rows.push(frame_row(&frame, f, seconds));
        }
        last = Some(frame);
    }
    bar.finish_and_clear();
    if let Some(notice) = crowd.world.fallback_notice()
        && !device.starts_with("CPU twins")
    {
        // The GPU was lost mid-run: the frames went on on the CPU twins.
        eprintln!("proxima: {notice}");
    }
    let last = last.expect("at least one frame ran");
    let clock = match last.report.profile.clock {
        proxima::profile::Clock::GpuTimestamps => "gpu timestamps for the GPU stages",
        proxima::profile::Clock::Cpu => "cpu clock",
    };
    println!("stage timings, mean over {timed} frames ({clock}; contacts and impacts on the CPU):");
    for (name, t) in &totals {
        println!("  {name:<18} {:>10.3} ms", t / f64::from(timed) * 1e3);
    }
    println!(
        "  {:<18} {:>10.3} ms (wall, whole frame)",
        "frame",
        wall / f64::from(timed) * 1e3
    );
    let r = &last.report;
    println!(
        "pairs (last frame): {} overlapping box pairs ({} broadphase){}",
        r.pairs.len(),
        r.broadphase.map_or("no", |m| m.name()),
        if args.depth_estimate.is_some() {
            format!("; {} proved apart by the depth estimate", r.proved_apart)
        } else {
            String::new()
        }
    );
    println!(
        "contacts (last frame, exact): {} manifolds, {} points, {}",
        r.contacts.len(),
        r.contacts
            .iter()
            .map(|c| c.manifold.points.len())
            .sum::<usize>(),
        {
            let least = r
                .contacts
                .iter()
                .map(|c| c.manifold.min_separation())
                .fold(f64::INFINITY, f64::min);
            if least < 0.0 {
                format!("deepest {:.4}", -least)
            } else if least.is_finite() {
                format!("none overlapping (closest {least:.1e} apart)")
            } else {
                "none".to_string()
            }
        },
    );
    println!(
        "impacts (last frame): {} first contacts in {} rounds; {} bodies stopped, {} contact pairs bounced",
        last.impacts.len(),
        last.rounds,
        last.stopped,
        last.bounced
    );
    println!("result: {}", summarize(&crowd.world, &last));
    if let Some(path) = &args.png {
        picture(
            &mut crowd.world,
            picture_context.as_ref(),
            path,
            args.png_size,
        )?;
    }
    if let Some(path) = &args.report {
        let doc = serde_json::json!({
            "scene": scene.path.display().to_string(),
            "bodies": crowd.world.len(),
            "device": device,
            "dt": dt,
            "start": {
                "overlapping": settled.initial,
                "settle_rounds": settled.rounds,
                "still_overlapping": settled.overlapping,
            },
            "frames": rows,
        });
        let text = serde_json::to_string_pretty(&doc).expect("json values serialise");
        std::fs::write(path, text).map_err(|source| Error::Io {
            path: path.clone(),
            source,
        })?;
        println!("report: {}", path.display());
    }
    Ok(())
}

/// An adapter to render the picture with when the frames run on the CPU twins; with none
/// at all, an error that says how to get one.
fn picture_adapter() -> Result<GpuContext> {
    GpuContext::new(&ContextOptions::default()).map_err(|e| {
        Error::Usage(format!(
            "--png: no GPU adapter to render the picture with ({e}); for a software one \
             install Mesa's lavapipe (`apt-get install mesa-vulkan-drivers`)"
        ))
    })
}

/// Renders the world as the last frame left it, with its contacts there (the last frame's
/// report holds those at the frame's start): on the world's GPU, or on `other` (see
/// [`picture_adapter`]) when the frames ran on the CPU twins.
fn picture(
    world: &mut World,
    other: Option<&GpuContext>,
    path: &Path,
    (w, h): (u32, u32),
) -> Result<()> {
    let report = world.step(0.0)?;
    let world = &*world;
    let ctx = match world.gpu_context().or(other) {
        Some(ctx) => ctx,
        None => return Err(Error::Usage("--png: no GPU adapter to render with".into())),
    };
    let t = Instant::now();
    let image = proxima::picture::render(ctx, world, Some(&report), w, h)?;
    image.write_png(path)?;
    println!(
        "picture: {} ({w}x{h}, {:.0} ms on {})",
        path.display(),
        t.elapsed().as_secs_f64() * 1e3,
        ctx.info.name
    );
    Ok(())
}

/// The impacts' time, then its phases, as stages.
fn impact_stages(frame: &CrowdFrame) -> impl Iterator<Item = (&'static str, f64)> + '_ {
    std::iter::once(("impacts", frame.impact_seconds)).chain(frame.impact_phases)
}

/// One frame of the report; `index` counts the job's frames (the world's own count also
/// holds the start's settling steps).
fn frame_row(frame: &CrowdFrame, index: u32, seconds: f64) -> serde_json::Value {
    let r = &frame.report;
    let stages: serde_json::Map<String, serde_json::Value> = r
        .profile
        .stages
        .iter()
        .map(|s| (s.name, s.seconds))
        .chain(impact_stages(frame))
        .map(|(name, seconds)| (name.to_string(), serde_json::json!(seconds)))
        .collect();
    serde_json::json!({
        "frame": index,
        "pairs": r.pairs.len(),
        "contacts": r.contacts.len(),
        "contact_points": r.contacts.iter().map(|c| c.manifold.points.len()).sum::<usize>(),
        "impacts": frame.impacts.len(),
        "impact_rounds": frame.rounds,
        "stopped": frame.stopped,
        "bounced": frame.bounced,
        "seconds": seconds,
        "stages": stages,
    })
}

/// A backend-independent summary of the run: the last frame's pairs and contacts and an
/// FNV-1a hash of every body's final pose bits and the last frame's contact pairs. The GPU
/// broadphase and its CPU twin give the same pair sets, and everything after them is the
/// same f64 arithmetic, so both paths must print the same line.
fn summarize(world: &World, last: &CrowdFrame) -> String {
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    let mut eat = |x: u64| {
        for byte in x.to_le_bytes() {
            hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
        }
    };
    for b in world.bodies() {
        let (t, q) = (b.pose.translation, b.pose.rotation);
        for v in [t.x, t.y, t.z, q.x, q.y, q.z, q.w] {
            eat(v.to_bits());
        }
    }
    for c in &last.report.contacts {
        eat(u64::from(c.bodies[0]) << 32 | u64::from(c.bodies[1]));
    }
    format!(
        "{} pairs, {} contact manifolds, {} impacts in the last frame; state hash {hash:016x}",
        last.report.pairs.len(),
        last.report.contacts.len(),
        last.impacts.len()
    )
}

fn query(file: Option<&Path>) -> Result<()> {
    let mut engine = QueryEngine::new().with_progress();
    let stdout = std::io::stdout().lock();
    let out = std::io::BufWriter::new(stdout);
    let stats = match file {
        Some(path) if path != Path::new("-") => {
            let f = std::fs::File::open(path).map_err(|source| Error::Io {
                path: path.to_owned(),
                source,
            })?;
            engine.run(std::io::BufReader::new(f), out)?
        }
        _ => engine.run(std::io::stdin().lock(), out)?,
    };
    if stats.errors > 0 {
        // Every line was answered; the exit status tells a script that some were errors.
        return Err(Error::Query(format!(
            "{} of {} lines answered with an error",
            stats.errors, stats.answered
        )));
    }
    Ok(())
}

fn info() -> Result<()> {
    match GpuContext::new(&ContextOptions::default()) {
        Ok(ctx) => {
            println!("{}", ctx.describe());
            Ok(())
        }
        Err(e) if e.is_no_adapter() => {
            println!("proxima: {} [{e}]", proxima::gpu::NO_ADAPTER_HINT);
            Ok(())
        }
        Err(e) => Err(e),
    }
}

fn bench_bounds(args: &BenchArgs) -> Result<()> {
    if args.frames == 0 {
        return Err(Error::Usage("--frames must be at least 1".into()));
    }
    let mut gpu = open_pipeline(DeviceArg::Auto)?;
    let has_gpu = matches!(gpu.backend(), Backend::Gpu(_));
    let keeper = ClockKeeper::of(&gpu);
    println!("bounds pass on {}", gpu.device_name());
    println!(
        "{:>10} {:>14} {:>14} {:>14} {:>10}",
        "bodies", "cpu twin ms", "gpu pass ms", "gpu frame ms", "cpu/gpu"
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
        println!(
            "{n:>10} {:>14.3} {:>14.3} {:>14.3} {:>10.2}",
            c * 1e3,
            p * 1e3,
            w * 1e3,
            c / p
        );
    }
    println!(
        "(medians; 'gpu pass' is the bounds dispatch alone, 'gpu frame' adds upload and readback)"
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
    let mut pipeline = open_pipeline(DeviceArg::Auto)?;
    let keeper = ClockKeeper::of(&pipeline);
    println!(
        "broadphase on {}; default scene resized, boxes from the bounds pass",
        pipeline.device_name()
    );
    println!(
        "{:>9} {:>10} {:>11} {:>11} {:>11} {:>11} {:>13} {:>10}",
        "bodies",
        "pairs",
        "gpu hash",
        "gpu sweep",
        "cpu hash",
        "cpu sweep",
        "best gpu b/ms",
        "gpu/cpu"
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
        // With no GPU timed (the CPU twins only) the GPU's figures are dashes.
        let figure = |x: f64, width: usize, digits: usize| {
            if x.is_finite() {
                format!("{x:>width$.digits$}")
            } else {
                format!("{:>width$}", "-")
            }
        };
        println!(
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
    println!(
        "(medians of {} runs; GPU columns are the broadphase stage's GPU time; plot: {})",
        args.runs,
        args.svg.display()
    );
    Ok(())
}

/// Fails at once, naming the path, when an output file could not be written where asked
/// (its folder missing, or the path a folder): a long run should not end in that error.
fn writable(paths: &[&Path]) -> Result<()> {
    for path in paths {
        let folder = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let problem = if !folder.is_dir() {
            Some("its folder does not exist")
        } else if path.is_dir() {
            Some("it is a folder")
        } else {
            None
        };
        if let Some(problem) = problem {
            return Err(Error::Io {
                path: path.to_path_buf(),
                source: std::io::Error::new(std::io::ErrorKind::NotFound, problem),
            });
        }
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
    println!("figures: {}, plot: {}", json.display(), svg_path.display());
    Ok(())
}

fn bench_pipeline(args: &PipelineBenchArgs) -> Result<()> {
    writable(&[&args.json, &args.svg])?;
    let gpu = match args.device {
        DeviceArg::Cpu => None,
        choice => {
            let pipeline = open_pipeline(choice)?;
            matches!(pipeline.backend(), Backend::Gpu(_)).then_some(pipeline)
        }
    };
    let report = proxima::peer::run(&args.bodies, args.frames, gpu, &mut |f| match &f.error {
        None => eprintln!("  {} bodies done", f.bodies),
        Some(e) => eprintln!("  {} bodies: {e}", f.bodies),
    })?;
    print!("{}", report.table());
    write_figures(&report, &args.json, report.svg(), &args.svg)?;
    if report.sizes.iter().all(|f| f.error.is_some()) {
        return Err(Error::Bench("no size could run".into()));
    }
    Ok(())
}

fn bench_penetration(args: &PenetrationBenchArgs) -> Result<()> {
    writable(&[&args.json, &args.svg])?;
    let kinds: Vec<_> = args.kinds.iter().map(|&k| k.into()).collect();
    let report = proxima::penetration_bench::run(
        &args.vertices,
        &kinds,
        args.frames,
        args.rounds,
        &mut |f| eprintln!("  {} vertices, {}: done", f.vertices, f.kind),
    )?;
    print!("{}", report.table());
    write_figures(&report, &args.json, report.svg(), &args.svg)
}

fn bench_toi(args: &ToiBenchArgs) -> Result<()> {
    writable(&[&args.json, &args.svg])?;
    let options = proxima::toi_bench::ToiBenchOptions {
        vertices: args.vertices.clone(),
        pairs: args.pairs,
        uncached_up_to: args.uncached_up_to,
        rounds: args.rounds,
    };
    let report = proxima::toi_bench::run(&options, &mut |f| {
        eprintln!("  {} vertices, {}: done", f.vertices, f.batch);
    })?;
    print!("{}", report.table());
    write_figures(&report, &args.json, report.svg(), &args.svg)
}

fn bench_gpu(args: &GpuBenchArgs) -> Result<()> {
    use proxima::bench::{GpuBenchOptions, run_gpu_bench};
    writable(&[&args.json, &args.svg])?;
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
    println!("bench gpu on {}", pipeline.device_name());
    let report = run_gpu_bench(&mut pipeline, &options, |f| match &f.error {
        None => eprintln!("  {} bodies done", f.bodies),
        Some(e) => eprintln!("  {} bodies: {e}", f.bodies),
    })?;
    print!("{}", report.table());
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
