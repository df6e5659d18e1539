//! GPU figures in one command (`proxima bench gpu`): every GPU pass against its CPU twin
//! on the default scene resized, size by size, from a prebuilt binary (no cargo, no
//! network), so the same command measures a laptop, CI's software adapter and a data-centre
//! GPU. Per size it times
//!
//! - the bounds pass (GPU stage time against `frame::cpu`),
//! - the radix sort of as many random key/value pairs as bodies (GPU stage time against the
//!   twin, a stable sort), with its effective bandwidth at 64 bytes per pair: an LSD sort
//!   with 8-bit digits reads and writes 8 bytes per pair in each of 4 passes, so that
//!   figure over the device's copy bandwidth is the fraction of the floor reached,
//! - a whole moving frame (upload, bounds, broadphase, readback) with the hash and with the
//!   sweep, each against the same frame on the CPU twins, with every stage's GPU time,
//!
//! - the particle frame (`scenes/particles.toml` resized: bounds, broadphase and sphere and
//!   capsule contacts in one GPU submission) against the same stages on the CPU twins,
//!
//! checks that GPU and CPU found the same pairs (and the same sorted keys), and names the
//! stage that dominates the faster GPU frame. A size the device cannot hold is reported
//! with its named error and the next size still runs.
//!
//! Every timed GPU run starts on a GPU at its working clock (`ClockKeeper`), and the CPU
//! twins run after a measurement's GPU runs, not between them.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::bodies::GpuAabb;
use crate::broadphase::{Choice, cpu_pairs};
use crate::estimate::{GpuDepthEstimator, estimate_cpu};
use crate::frame::{self, stage};
use crate::gpu::Engine;
use crate::graph::{BufferProxy, Recording};
use crate::particles::{GpuRoundContacts, contacts_cpu};
use crate::passes::broadphase::Method;
use crate::passes::depth::{DEFAULT_K, DepthShapes, GpuDepthEstimate};
use crate::passes::radix::{
    DISPATCH_STAGES, Digits, LOOKBACK_STAGES, Lookback, RADIX8_STAGES, record_sort_pairs,
    record_sort_pairs_by_dispatch, record_sort_pairs_lookback_with, sort_pairs_cpu,
};
use crate::passes::round_contacts::{GpuRoundShape, touching_cpu};
use crate::pipeline::{Backend, Pipeline};
use crate::plot::{Series, loglog_svg};
use crate::profile::Profile;
use crate::rng::Rng;
use crate::scene::Scene;
use crate::shape::ShapeGeometry;
use crate::{Error, Result};

/// Bytes a key/value radix sort must move per pair at best: 4 passes of 8-bit digits, each
/// reading and writing a 4-byte key and a 4-byte value.
pub const SORT_FLOOR_BYTES_PER_PAIR: f64 = 64.0;

/// Seconds of simulated time between two timed frames: the bodies move.
const FRAME_DT: f32 = 1.0 / 60.0;

/// How long [`ClockKeeper::keep`] keeps the GPU busy before a timed run.
const KEEP_BUSY: Duration = Duration::from_millis(250);

/// Pairs the clock keeper sorts, and sorts per submission: about 5 ms of work a submission
/// on an H100, so the GPU is busy most of the time the keeper runs.
const KEEPER_PAIRS: usize = 4_000_000;
const KEEPER_SORTS: usize = 4;

/// Keeps a hardware GPU at its working clock for a timed run. Power management drops a
/// GPU's clock within a second or two of light load: an H100 works at 1,980 MHz and idles
/// at 345, and `nvidia-smi` read 345 through most of this bench's frames, whose uploads,
/// readbacks and CPU twins kept the GPU busy about a tenth of the time. A pass timed on such
/// a GPU read up to 5x its working time, and how much depended on what ran before it (the
/// same frame of a million bodies 0.57 ms in one process and 1.73 ms in another). Before
/// every timed run [`ClockKeeper::keep`] keeps the GPU fully busy for 250 ms with a
/// load of its own (radix sorts of resident pairs), which brings the clock up and leaves it
/// up for the run. A software adapter has no clock to keep. The GPU benches (`bench gpu`,
/// `bench bounds`, `bench broadphase`) call it before every timed GPU run.
#[derive(Debug)]
pub struct ClockKeeper {
    pairs: Option<ResidentPairs>,
}

impl ClockKeeper {
    /// A keeper for `engine`'s device (idle on a software adapter).
    pub fn new(engine: &Engine) -> Self {
        let pairs = (!engine.context().is_software()).then(|| {
            let (keys, values) = random_pairs(KEEPER_PAIRS);
            ResidentPairs::new(engine, &keys, &values)
        });
        ClockKeeper { pairs }
    }

    /// A keeper for `pipeline`'s GPU (idle on the CPU twins).
    pub fn of(pipeline: &Pipeline) -> Self {
        match pipeline.backend() {
            Backend::Gpu(engine) => Self::new(engine),
            Backend::Cpu => ClockKeeper { pairs: None },
        }
    }

    /// Keeps the GPU busy for 250 ms (`KEEP_BUSY`).
    pub fn keep(&self, engine: &mut Engine) -> Result<()> {
        let Some(input) = &self.pairs else {
            return Ok(());
        };
        let start = Instant::now();
        while start.elapsed() < KEEP_BUSY {
            let mut rec = Recording::new();
            let (k0, v0) = input.record_copy(&mut rec);
            let (mut k, mut v) = (k0.1, v0.1);
            for _ in 0..KEEPER_SORTS {
                (k, v) = record_sort_pairs(&mut rec, k, v, input.count, 32);
            }
            engine.run(&rec, &[(k0.0, &input.keys), (v0.0, &input.values)])?;
        }
        Ok(())
    }
}

/// [`ClockKeeper::keep`] on `pipeline`'s GPU (nothing on the CPU twins).
pub fn keep_clock(pipeline: &mut Pipeline, keeper: &ClockKeeper) -> Result<()> {
    match pipeline.backend_mut() {
        Backend::Gpu(engine) => keeper.keep(engine),
        _ => Ok(()),
    }
}

/// What to measure.
#[derive(Clone, Debug)]
pub struct GpuBenchOptions {
    /// Body counts.
    pub sizes: Vec<usize>,
    /// Timed GPU runs per measurement, after one warm-up (medians are reported).
    pub runs: usize,
    /// Timed CPU-twin runs per measurement (no warm-up).
    pub cpu_runs: usize,
    /// Broadphase methods to run frames with.
    pub methods: Vec<Method>,
    /// The sampled depth estimate runs over a size's pairs when there are at most this
    /// many (and every shape is convex).
    pub depth_max_pairs: usize,
    /// Pairs staged in workgroup memory before one global reservation per workgroup (the
    /// default); off, every pair takes the global counter (the A/B baseline).
    pub pair_staging: bool,
    /// GPU timestamps around every pass instead of each stage's run of passes (the A/B
    /// baseline).
    pub pass_timestamps: bool,
    /// A compute pass for every dispatch instead of one for each run of dispatches (the
    /// A/B baseline).
    pub pass_per_dispatch: bool,
    /// The radix sorts by decoupled look-back (4-bit digits, the broadphase's, and 8-bit)
    /// are timed beside the three-dispatch one (off: only the latter).
    pub lookback_sort: bool,
    /// Reads of a late block's status word before a look-back sort counts its keys
    /// itself ([`crate::passes::radix::LOOKBACK_PATIENCE`] by default).
    pub sort_patience: u32,
}

impl GpuBenchOptions {
    /// The default sizes: 10k to 1M on a software adapter or the CPU; 10k to 16M on a
    /// hardware GPU, roughly ×3 apart for the scaling curve.
    pub fn default_sizes(hardware: bool) -> Vec<usize> {
        if hardware {
            vec![
                10_000, 30_000, 100_000, 300_000, 1_000_000, 4_000_000, 16_000_000,
            ]
        } else {
            vec![10_000, 100_000, 1_000_000]
        }
    }
}

/// A GPU time against its CPU twin's.
#[derive(Clone, Debug, Serialize)]
pub struct Versus {
    /// Median GPU time (the stage's timestamps where the adapter has them), ms.
    pub gpu_ms: f64,
    /// Median CPU-twin time, ms.
    pub cpu_ms: f64,
    /// cpu_ms / gpu_ms.
    pub ratio: f64,
}

impl Versus {
    fn new(gpu: f64, cpu: f64) -> Self {
        Versus {
            gpu_ms: gpu * 1e3,
            cpu_ms: cpu * 1e3,
            ratio: cpu / gpu,
        }
    }
}

/// The sort at one size.
#[derive(Clone, Debug, Serialize)]
pub struct SortFigures {
    /// GPU against the CPU twin.
    #[serde(flatten)]
    pub versus: Versus,
    /// Pairs per second over [`SORT_FLOOR_BYTES_PER_PAIR`], in GB/s.
    pub floor_gb_per_s: f64,
    /// Median wall time of a timed sort's submission, from recording to the GPU done, ms
    /// (the GPU time plus what the host and the driver add).
    pub wall_ms: f64,
    /// Each of a pass's dispatches timed on its own (in sorts recorded with a stage a
    /// dispatch, which adds their cost: not comparable to the sort's time), median µs a
    /// pass, by stage name (`sort/count`, `sort/spine`, `sort/scatter`).
    pub dispatch_us: BTreeMap<String, f64>,
    /// The same sort by decoupled look-back (`passes::radix::record_sort_pairs_lookback`),
    /// timed in the same runs (unless asked not to be).
    pub lookback: Option<LookbackFigures>,
    /// The same sort with 8-bit digits by look-back (`record_sort_pairs_radix8`: half the
    /// passes), timed in the same runs (unless the look-back sorts are asked not to be).
    pub radix8: Option<LookbackFigures>,
}

/// A look-back sort (4- or 8-bit digits) at one size.
#[derive(Clone, Debug, Serialize)]
pub struct LookbackFigures {
    /// Median GPU time of the sort, ms.
    pub gpu_ms: f64,
    /// Its time over the three-dispatch sort's (below 1: faster).
    pub over_spine: f64,
    /// Pairs per second over [`SORT_FLOOR_BYTES_PER_PAIR`], in GB/s.
    pub floor_gb_per_s: f64,
    /// The histogram, and each pass's dispatch, timed on their own: median µs (the
    /// histogram once a sort, with the 8-bit digits' first slots; `sort/lookback` or
    /// `sort8/lookback` a pass).
    pub dispatch_us: BTreeMap<String, f64>,
    /// In the checked run (the first, untimed), how many times a block counted a late
    /// block's keys of a digit itself instead of waiting longer (`passes::radix::
    /// LOOKBACK_PATIENCE`): 0 where every block published in time.
    pub fallbacks: u32,
}

/// A whole frame with one broadphase method at one size.
#[derive(Clone, Debug, Serialize)]
pub struct FrameFigures {
    /// Bounds and broadphase stages' GPU time against the CPU twins' frame.
    #[serde(flatten)]
    pub versus: Versus,
    /// The broadphase stages alone, GPU against CPU twin.
    pub broadphase: Versus,
    /// Median wall time of the GPU frame, upload and readback included, ms.
    pub wall_ms: f64,
    /// Every stage's median GPU time, ms.
    pub stages_ms: BTreeMap<String, f64>,
    /// The stage with the most GPU time.
    pub dominant_stage: String,
}

/// The sampled depth estimate at one size.
#[derive(Clone, Debug, Serialize)]
pub struct DepthFigures {
    /// GPU pass against its CPU twin.
    #[serde(flatten)]
    pub versus: Versus,
    /// Pairs estimated.
    pub pairs: usize,
    /// Pairs per second on the GPU.
    pub gpu_pairs_per_s: f64,
    /// Pairs the CPU twin checked and was timed on (evenly spaced); its time is scaled to
    /// all the pairs.
    pub cpu_twin_pairs: usize,
}

/// The particle frame at one size.
#[derive(Clone, Debug, Serialize)]
pub struct ParticleFigures {
    /// Bounds, broadphase and contacts' GPU time against the CPU twins of the same stages.
    #[serde(flatten)]
    pub versus: Versus,
    /// The contact pass alone, GPU against CPU twin.
    pub contacts: Versus,
    /// Pairs in the last frame.
    pub pairs: usize,
    /// Of which touching or overlapping.
    pub touching: usize,
}

/// Everything measured at one size.
#[derive(Clone, Debug, Serialize)]
pub struct SizeFigures {
    /// Bodies.
    pub bodies: usize,
    /// Overlapping pairs in the last timed frame.
    pub pairs: Option<usize>,
    /// The bounds pass.
    pub bounds: Option<Versus>,
    /// Bodies whose GPU box differs in any bit from the CPU twin's (both round outward,
    /// each in its own way: the boxes agree within the bounds margin, not bit for bit).
    pub boxes_not_bitwise_equal: Option<usize>,
    /// The radix sort.
    pub sort: Option<SortFigures>,
    /// The frame with the spatial hash.
    pub hash: Option<FrameFigures>,
    /// The frame with sort-and-sweep.
    pub sweep: Option<FrameFigures>,
    /// The sampled depth estimate (k = 16) over the last frame's pairs.
    pub depth: Option<DepthFigures>,
    /// The limit on the depth estimate's pairs, where this size's pairs passed it and the
    /// estimate was not run (`--depth-max-pairs`).
    pub depth_skipped_above: Option<usize>,
    /// The particle frame (spheres and capsules, hash broadphase).
    pub particles: Option<ParticleFigures>,
    /// The faster GPU method at this size.
    pub best_method: Option<String>,
    /// Best CPU-twin frame over best GPU frame.
    pub best_ratio: Option<f64>,
    /// The stage that dominates the best GPU frame.
    pub dominant_stage: Option<String>,
    /// Why this size (or part of it) could not run.
    pub error: Option<String>,
}

/// The whole report, as written to JSON.
#[derive(Clone, Debug, Serialize)]
pub struct GpuBenchReport {
    /// Adapter name.
    pub adapter: String,
    /// Backend and device type.
    pub backend: String,
    /// Driver and its version.
    pub driver: String,
    /// True for a software adapter (lavapipe, WARP).
    pub software: bool,
    /// CPU threads the twins ran on.
    pub cpu_threads: usize,
    /// Timed GPU runs per figure.
    pub runs: usize,
    /// Timed CPU runs per figure.
    pub cpu_runs: usize,
    /// Whether pairs were staged per workgroup.
    pub pair_staging: bool,
    /// Whether every pass had its own timestamps.
    pub pass_timestamps: bool,
    /// Whether every dispatch had a compute pass of its own.
    pub pass_per_dispatch: bool,
    /// Whether the look-back sorts were timed beside the three-dispatch one.
    pub lookback_sort: bool,
    /// The look-back sorts' patience (`--sort-patience`).
    pub sort_patience: u32,
    /// The most pairs the depth estimate runs on (`--depth-max-pairs`).
    pub depth_max_pairs: usize,
    /// The broadphase methods timed (`--methods`).
    pub methods: Vec<&'static str>,
    /// One entry per size.
    pub sizes: Vec<SizeFigures>,
}

/// Runs every figure at every size on `pipeline`'s GPU; `progress` is called with each
/// size's figures as they are done.
pub fn run_gpu_bench(
    pipeline: &mut Pipeline,
    options: &GpuBenchOptions,
    mut progress: impl FnMut(&SizeFigures),
) -> Result<GpuBenchReport> {
    if options.runs == 0 || options.cpu_runs == 0 {
        return Err(Error::Usage(
            "--runs and --cpu-runs must be at least 1".into(),
        ));
    }
    let Backend::Gpu(engine) = pipeline.backend_mut() else {
        return Err(Error::Usage(
            "bench gpu needs a GPU adapter (the CPU twins are the baseline, not the subject)"
                .into(),
        ));
    };
    engine.set_override("PAIR_STAGING", f64::from(u8::from(options.pair_staging)));
    engine.set_pass_timestamps(options.pass_timestamps);
    engine.set_pass_per_dispatch(options.pass_per_dispatch);
    let ctx = engine.context();
    let info = &ctx.info;
    let mut report = GpuBenchReport {
        adapter: info.name.clone(),
        backend: format!("{:?} {:?}", info.backend, info.device_type),
        driver: format!("{} {}", info.driver, info.driver_info),
        software: ctx.is_software(),
        cpu_threads: crate::parallel::threads(),
        runs: options.runs,
        cpu_runs: options.cpu_runs,
        pair_staging: options.pair_staging,
        pass_timestamps: options.pass_timestamps,
        pass_per_dispatch: options.pass_per_dispatch,
        lookback_sort: options.lookback_sort,
        sort_patience: options.sort_patience,
        depth_max_pairs: options.depth_max_pairs,
        methods: options.methods.iter().map(|m| m.name()).collect(),
        sizes: Vec::new(),
    };
    let keeper = ClockKeeper::new(engine);
    for &n in &options.sizes {
        let figures = size_figures(pipeline, &keeper, options, n);
        progress(&figures);
        report.sizes.push(figures);
    }
    Ok(report)
}

fn size_figures(
    pipeline: &mut Pipeline,
    keeper: &ClockKeeper,
    options: &GpuBenchOptions,
    n: usize,
) -> SizeFigures {
    let mut f = SizeFigures {
        bodies: n,
        pairs: None,
        bounds: None,
        boxes_not_bitwise_equal: None,
        sort: None,
        hash: None,
        sweep: None,
        depth: None,
        depth_skipped_above: None,
        particles: None,
        best_method: None,
        best_ratio: None,
        dominant_stage: None,
        error: None,
    };
    if let Err(e) = fill_size(pipeline, keeper, options, n, &mut f) {
        f.error = Some(e.to_string());
    }
    f
}

fn fill_size(
    pipeline: &mut Pipeline,
    keeper: &ClockKeeper,
    options: &GpuBenchOptions,
    n: usize,
    f: &mut SizeFigures,
) -> Result<()> {
    if n == 0 {
        return Err(Error::Usage("0 bodies: nothing to measure".into()));
    }
    let mut scene = Scene::default_scene(Some(n as u64))?;
    let world = &mut scene.crowd;

    // Bounds alone.
    let mut gpu = Vec::new();
    let mut gpu_boxes = Vec::new();
    for r in 0..=options.runs {
        if r > 0 {
            keep_clock(pipeline, keeper)?;
        }
        let out = pipeline.bounds(world)?;
        if r > 0 {
            gpu.push(out.profile.stage_seconds(stage::BOUNDS));
        }
        gpu_boxes = out.aabbs;
    }
    let mut cpu_boxes = Vec::new();
    let cpu = timed(options.cpu_runs, || {
        cpu_boxes = frame::cpu(&world.bodies, &world.shapes, None)?.aabbs;
        Ok(())
    })?;
    f.bounds = Some(Versus::new(median(&mut gpu), cpu));
    f.boxes_not_bitwise_equal = Some(
        gpu_boxes
            .iter()
            .zip(&cpu_boxes)
            .filter(|(g, c)| bytemuck::bytes_of(*g) != bytemuck::bytes_of(*c))
            .count(),
    );

    f.sort = Some(sort_figures(pipeline, keeper, options, n)?);

    // Whole moving frames, one method at a time; the CPU twin frames run afterwards on the
    // last frame's poses.
    let mut last_pairs: Option<Vec<[u32; 2]>> = None;
    for &method in &options.methods {
        pipeline.set_broadphase(Choice::Method(method));
        let mut stages: BTreeMap<String, Vec<f64>> = BTreeMap::new();
        let (mut gpu, mut gpu_bp, mut wall) = (Vec::new(), Vec::new(), Vec::new());
        let mut pairs = Vec::new();
        for r in 0..=options.runs {
            world.advance(FRAME_DT);
            if r > 0 {
                keep_clock(pipeline, keeper)?;
            }
            let out = pipeline.frame(world)?;
            pairs = out.pairs;
            if r == 0 {
                continue;
            }
            let p = &out.profile;
            gpu.push(p.stage_seconds(stage::BOUNDS) + p.stage_seconds(stage::BROADPHASE));
            gpu_bp.push(p.stage_seconds(stage::BROADPHASE));
            wall.push(p.wall.as_secs_f64());
            for s in &p.stages {
                stages
                    .entry(s.name.to_string())
                    .or_default()
                    .push(s.seconds);
            }
        }
        let (mut cpu, mut cpu_bp) = (Vec::new(), Vec::new());
        for _ in 0..options.cpu_runs {
            let t = Instant::now();
            let twin = frame::cpu(&world.bodies, &world.shapes, Some(method))?;
            cpu.push(t.elapsed().as_secs_f64());
            cpu_bp.push(twin.profile.stage_seconds(stage::BROADPHASE));
        }
        // A pair frame keeps its boxes on the device: the same poses' bounds frame gives
        // the boxes the GPU paired (the bounds pass is deterministic).
        let boxes = pipeline.bounds(world)?.aabbs;
        check_same_pairs(&pairs, &boxes, method)?;
        f.pairs = Some(pairs.len());
        last_pairs = Some(pairs);
        let stages_ms: BTreeMap<String, f64> = stages
            .into_iter()
            .map(|(k, mut v)| (k, median(&mut v) * 1e3))
            .collect();
        let dominant_stage = stages_ms
            .iter()
            .filter(|(k, _)| k.as_str() != stage::UPLOAD && k.as_str() != stage::READBACK)
            .max_by(|a, b| a.1.total_cmp(b.1))
            .map_or_else(String::new, |(k, _)| k.clone());
        let figures = FrameFigures {
            versus: Versus::new(median(&mut gpu), median(&mut cpu)),
            broadphase: Versus::new(median(&mut gpu_bp), median(&mut cpu_bp)),
            wall_ms: median(&mut wall) * 1e3,
            stages_ms,
            dominant_stage,
        };
        match method {
            Method::Hash => f.hash = Some(figures),
            Method::Sweep => f.sweep = Some(figures),
        }
    }
    if let Some(pairs) = &last_pairs {
        if pairs.len() <= options.depth_max_pairs {
            f.depth = depth_figures(pipeline, keeper, options, &scene, pairs)?;
        } else {
            f.depth_skipped_above = Some(options.depth_max_pairs);
        }
    }
    // A particle frame the device cannot bind even in slabs (a pile denser than a frame
    // holds): its limit error is this size's note, and the figures above stand.
    match particle_figures(pipeline, keeper, options, n) {
        Ok(p) => f.particles = Some(p),
        Err(e @ Error::BufferLimit { .. }) => f.error = Some(format!("particle frame: {e}")),
        Err(e) => return Err(e),
    }
    let ran = [("hash", &f.hash), ("sweep", &f.sweep)];
    let best = ran
        .iter()
        .filter_map(|(name, figures)| figures.as_ref().map(|x| (*name, x)))
        .min_by(|a, b| a.1.versus.gpu_ms.total_cmp(&b.1.versus.gpu_ms));
    if let Some((name, best)) = best {
        let best_cpu = ran
            .iter()
            .filter_map(|(_, figures)| figures.as_ref().map(|x| x.versus.cpu_ms))
            .fold(f64::INFINITY, f64::min);
        f.best_method = Some(name.into());
        f.best_ratio = Some(best_cpu / best.versus.gpu_ms);
        f.dominant_stage = Some(best.dominant_stage.clone());
    }
    Ok(())
}

/// The particle scene resized to `n`: the whole GPU particle frame against the CPU twins
/// of its stages, with the same pairs checked.
fn particle_figures(
    pipeline: &mut Pipeline,
    keeper: &ClockKeeper,
    options: &GpuBenchOptions,
    n: usize,
) -> Result<ParticleFigures> {
    let text = include_str!("../scenes/particles.toml");
    let path = std::path::Path::new("scenes/particles.toml");
    let scene = Scene::parse_resized(path, std::path::Path::new("scenes"), text, Some(n as u64))?;
    let mut table = Vec::with_capacity(scene.geometry.len());
    for g in &scene.geometry {
        let ShapeGeometry::Rounded(r) = g else {
            return Err(Error::Usage(
                "the particle scene holds a non-round shape".into(),
            ));
        };
        table.push(GpuRoundShape::new(r)?);
    }
    // The boxes the GPU pairs (its bounds pass, deterministic) for the pair check: the
    // twin's own boxes may differ in the last bit (a fused multiply-add), and so may a
    // pair whose boxes just touch.
    let gpu_boxes = pipeline.bounds(&scene.crowd)?.aabbs;
    let Backend::Gpu(engine) = pipeline.backend_mut() else {
        return Err(Error::Usage(
            "the particle frame is measured on a GPU only".into(),
        ));
    };
    let (bodies, bounds) = (&scene.crowd.bodies, &scene.crowd.shapes);
    let mut pass = GpuRoundContacts::new(engine, table.clone())?;
    let (mut gpu, mut gpu_contacts) = (Vec::new(), Vec::new());
    let mut last = None;
    for r in 0..=options.runs {
        if r > 0 {
            keeper.keep(engine)?;
        }
        let f = pass.frame(engine, bodies, bounds, Method::Hash, 0.0)?;
        if r > 0 {
            let p = &f.profile;
            gpu.push(
                p.stage_seconds(stage::BOUNDS)
                    + p.stage_seconds(stage::BROADPHASE)
                    + p.stage_seconds(stage::CONTACTS),
            );
            gpu_contacts.push(p.stage_seconds(stage::CONTACTS));
        }
        last = Some(f);
    }
    let last = last.expect("at least one run");
    let (mut cpu, mut cpu_contacts) = (Vec::new(), Vec::new());
    for _ in 0..options.cpu_runs.max(1) {
        let t = Instant::now();
        let twin = frame::cpu(bodies, bounds, Some(Method::Hash))?;
        let c = Instant::now();
        let contacts = contacts_cpu(&table, bodies, &twin.pairs)?;
        std::hint::black_box(touching_cpu(&twin.pairs, &contacts, 0.0));
        cpu_contacts.push(c.elapsed().as_secs_f64());
        cpu.push(t.elapsed().as_secs_f64());
    }
    let twin_pairs = cpu_pairs(&gpu_boxes, Method::Hash)?.len();
    if twin_pairs != last.pairs as usize {
        return Err(Error::Gpu(format!(
            "particle frame: the GPU found {} pairs, the CPU twin {twin_pairs} on the same boxes",
            last.pairs
        )));
    }
    Ok(ParticleFigures {
        versus: Versus::new(median(&mut gpu), median(&mut cpu)),
        contacts: Versus::new(median(&mut gpu_contacts), median(&mut cpu_contacts)),
        pairs: last.pairs as usize,
        touching: last.contacts.len(),
    })
}

/// Pairs of a size the depth estimate's CPU twin checks and is timed on, at most: at k = 16
/// a pair of the crowd's icospheres (162 vertices) costs the twin over a million dot
/// products, so all of a million bodies' pairs took it minutes on 16 threads.
const DEPTH_TWIN_PAIRS: usize = 20_000;

/// The sampled depth estimate over `pairs` of the scene's bodies, GPU against CPU twin
/// (the twin on at most DEPTH_TWIN_PAIRS of them, evenly spaced, its time scaled to all);
/// `None` when a shape is not convex.
fn depth_figures(
    pipeline: &mut Pipeline,
    keeper: &ClockKeeper,
    options: &GpuBenchOptions,
    scene: &Scene,
    pairs: &[[u32; 2]],
) -> Result<Option<DepthFigures>> {
    let mut polytopes = Vec::with_capacity(scene.geometry.len());
    for g in &scene.geometry {
        match g {
            ShapeGeometry::Convex(p) => polytopes.push(p.as_ref()),
            ShapeGeometry::Mesh(_) | ShapeGeometry::Rounded(_) => return Ok(None),
        }
    }
    let tables = DepthShapes::new(polytopes)?;
    let Backend::Gpu(engine) = pipeline.backend_mut() else {
        return Err(Error::Usage(
            "the depth estimate is measured on a GPU only".into(),
        ));
    };
    let bodies = &scene.crowd.bodies;
    let estimator = GpuDepthEstimator::new(engine, tables)?;
    // The twin checks and is timed on evenly spaced pairs, at most DEPTH_TWIN_PAIRS.
    let step = pairs.len().div_ceil(DEPTH_TWIN_PAIRS).max(1);
    let sample: Vec<[u32; 2]> = pairs.iter().step_by(step).copied().collect();
    let mut gpu = Vec::new();
    for r in 0..=options.runs {
        if r > 0 {
            keeper.keep(engine)?;
        }
        let run = estimator.run(engine, bodies, pairs, DEFAULT_K)?;
        if r == 0 {
            let twin = estimate_cpu(estimator.shapes(), bodies, &sample, DEFAULT_K)?;
            let gpu_sample: Vec<GpuDepthEstimate> =
                run.estimates.iter().step_by(step).copied().collect();
            check_same_estimates(&gpu_sample, &twin)?;
        } else {
            gpu.push(run.gpu_time);
        }
    }
    let cpu_sample = timed(options.cpu_runs, || {
        estimate_cpu(estimator.shapes(), bodies, &sample, DEFAULT_K).map(drop)
    })?;
    let cpu = cpu_sample * pairs.len() as f64 / sample.len().max(1) as f64;
    let gpu = median(&mut gpu);
    Ok(Some(DepthFigures {
        versus: Versus::new(gpu, cpu),
        pairs: pairs.len(),
        gpu_pairs_per_s: pairs.len() as f64 / gpu,
        cpu_twin_pairs: sample.len(),
    }))
}

/// GPU estimates against the twin's: the same least within rounding, the same verdict.
fn check_same_estimates(gpu: &[GpuDepthEstimate], cpu: &[GpuDepthEstimate]) -> Result<()> {
    for (i, (g, c)) in gpu.iter().zip(cpu).enumerate() {
        let tol = 2.0 * g.slack.max(c.slack);
        if (g.depth - c.depth).abs() > tol || (c.depth.abs() > tol && g.separated != c.separated) {
            return Err(Error::Bench(format!(
                "depth estimate of pair {i}: gpu {g:?}, cpu twin {c:?}"
            )));
        }
    }
    Ok(())
}

/// The GPU broadphase must report exactly the pairs a CPU twin finds on the boxes the GPU
/// bounds pass made (the hash twin for both methods: every exact method finds the same
/// set, and the sweep's twin takes minutes on a uniform crowd of millions). (The twins' own boxes may differ from those in the last bits: each
/// bounds pass rounds outward on its own, and a GPU may fuse a multiply-add the CPU
/// rounds twice, so a pair whose boxes just touch can differ between the two frames.)
fn check_same_pairs(pairs: &[[u32; 2]], boxes: &[GpuAabb], method: Method) -> Result<()> {
    let twin = cpu_pairs(boxes, Method::Hash)?;
    if pairs != twin {
        let missing = twin
            .iter()
            .filter(|p| pairs.binary_search(p).is_err())
            .count();
        let extra = pairs
            .iter()
            .filter(|p| twin.binary_search(p).is_err())
            .count();
        return Err(Error::Bench(format!(
            "gpu {} found {} pairs, the cpu hash twin on the same boxes {} ({missing} \
             missing, {extra} extra)",
            method.name(),
            pairs.len(),
            twin.len()
        )));
    }
    Ok(())
}

/// Random key/value pairs as many as bodies, resident on the device: the GPU sort (its
/// stage time, and the wall time of its submission) against the twin, the first sort
/// checked against it.
fn sort_figures(
    pipeline: &mut Pipeline,
    keeper: &ClockKeeper,
    options: &GpuBenchOptions,
    n: usize,
) -> Result<SortFigures> {
    let Backend::Gpu(engine) = pipeline.backend_mut() else {
        return Err(Error::Usage("the sort is measured on a GPU only".into()));
    };
    let (keys, values) = random_pairs(n);
    let input = ResidentPairs::new(engine, &keys, &values);
    let (mut ck, mut cv) = (keys.clone(), values.clone());
    sort_pairs_cpu(&mut ck, &mut cv, 32);
    // Every path in each run, in turn: the same clock and load for all. Times and
    // fallbacks by way (`SortWay as usize`).
    let mut wall = Vec::new();
    let mut times: [Vec<f64>; 3] = Default::default();
    let mut fallbacks = [0u32; 3];
    let ways: &[SortWay] = if options.lookback_sort {
        &[SortWay::Spine, SortWay::Lookback, SortWay::Radix8]
    } else {
        &[SortWay::Spine]
    };
    for r in 0..=options.runs {
        for &way in ways {
            if r > 0 {
                keeper.keep(engine)?;
            }
            let start = Instant::now();
            let (profile, sorted) = gpu_sort(engine, &input, way, options, false, r == 0)?;
            let seconds = profile.stage_seconds("sort");
            if let Some(checked) = sorted {
                if checked.keys != ck || checked.values != cv {
                    return Err(Error::Bench(format!(
                        "the gpu radix sort of {n} pairs ({}) differs from its cpu twin",
                        way.name()
                    )));
                }
                fallbacks[way as usize] = checked.fallbacks.unwrap_or(0);
            } else {
                times[way as usize].push(seconds);
                if way == SortWay::Spine {
                    wall.push(start.elapsed().as_secs_f64());
                }
            }
        }
    }
    // Then each dispatch timed on its own, in sorts of their own.
    let mut dispatch_us: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for _ in 0..options.runs {
        for &way in ways {
            keeper.keep(engine)?;
            let (profile, _) = gpu_sort(engine, &input, way, options, true, false)?;
            for s in profile.stages.iter().filter(|s| {
                [&DISPATCH_STAGES[..], &LOOKBACK_STAGES, &RADIX8_STAGES]
                    .iter()
                    .any(|stages| stages.contains(&s.name))
            }) {
                dispatch_us
                    .entry(s.name.to_string())
                    .or_default()
                    .push(s.seconds * 1e6);
            }
        }
    }
    let cpu = timed(options.cpu_runs, || {
        let (mut k, mut v) = (keys.clone(), values.clone());
        sort_pairs_cpu(&mut k, &mut v, 32);
        std::hint::black_box((k, v));
        Ok(())
    })?;
    let [mut gpu, mut lookback, mut radix8] = times;
    let gpu = median(&mut gpu);
    // GB/s at the floor's bytes a pair, for a sort of `seconds`.
    let floor_rate = |seconds: f64| n as f64 * SORT_FLOOR_BYTES_PER_PAIR / seconds / 1e9;
    let mut dispatch_us: BTreeMap<String, f64> = dispatch_us
        .into_iter()
        .map(|(name, mut us)| (name, median(&mut us)))
        .collect();
    let mut figures = |stages: &[&str], times: &mut Vec<f64>, fallbacks: u32| {
        let dispatch_us = stages
            .iter()
            .filter_map(|&name| Some((name.to_string(), dispatch_us.remove(name)?)))
            .collect();
        (!times.is_empty()).then(|| {
            let seconds = median(times);
            LookbackFigures {
                gpu_ms: seconds * 1e3,
                over_spine: seconds / gpu,
                floor_gb_per_s: floor_rate(seconds),
                dispatch_us,
                fallbacks,
            }
        })
    };
    let lookback = figures(&LOOKBACK_STAGES, &mut lookback, fallbacks[1]);
    let radix8 = figures(&RADIX8_STAGES, &mut radix8, fallbacks[2]);
    Ok(SortFigures {
        versus: Versus::new(gpu, cpu),
        floor_gb_per_s: floor_rate(gpu),
        wall_ms: median(&mut wall) * 1e3,
        dispatch_us,
        lookback,
        radix8,
    })
}

/// Which of the sorts (`passes::radix`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SortWay {
    /// Count, spine and scatter a pass.
    Spine,
    /// One histogram, then a dispatch a pass by decoupled look-back.
    Lookback,
    /// The same with 8-bit digits: half the passes.
    Radix8,
}

impl SortWay {
    /// The look-back sort's digits (none: the three-dispatch sort).
    fn digits(self) -> Option<Digits> {
        match self {
            SortWay::Spine => None,
            SortWay::Lookback => Some(Digits::Four),
            SortWay::Radix8 => Some(Digits::Eight),
        }
    }

    fn name(self) -> &'static str {
        match self {
            SortWay::Spine => "count, spine and scatter",
            SortWay::Lookback => "look-back",
            SortWay::Radix8 => "8-bit look-back",
        }
    }
}

/// `n` random keys (seeded by `n`) and their indices as values.
fn random_pairs(n: usize) -> (Vec<u32>, Vec<u32>) {
    let mut rng = Rng::new(n as u64);
    let keys = (0..n).map(|_| rng.next_u64() as u32).collect();
    (keys, (0..n as u32).collect())
}

/// The unsorted pairs, resident on the device: each timed sort starts from a device copy
/// of them, so no host upload (whose copy a first pass's begin timestamp may overlap)
/// lands in the sort's time.
#[derive(Debug)]
struct ResidentPairs {
    keys: wgpu::Buffer,
    values: wgpu::Buffer,
    count: u32,
}

impl ResidentPairs {
    fn new(engine: &Engine, keys: &[u32], values: &[u32]) -> Self {
        use wgpu::util::DeviceExt;
        let device = &engine.context().device;
        let buffer = |label, data: &[u32]| {
            device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents: bytemuck::cast_slice(data),
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            })
        };
        ResidentPairs {
            keys: buffer("unsorted keys", keys),
            values: buffer("unsorted values", values),
            count: keys.len() as u32,
        }
    }

    /// Records copies of the pairs into pooled buffers: for keys and for values, the
    /// resident buffer's proxy (bound by the caller) and the copy's.
    fn record_copy(
        &self,
        rec: &mut Recording,
    ) -> ((BufferProxy, BufferProxy), (BufferProxy, BufferProxy)) {
        let n = self.count as usize;
        let k0 = rec.external(self.keys.size(), "unsorted keys");
        let v0 = rec.external(self.values.size(), "unsorted values");
        let k = rec.array_buffer::<u32>(n, "sort keys");
        let v = rec.array_buffer::<u32>(n, "sort values");
        rec.copy(k0, 0, k, 0, self.keys.size());
        rec.copy(v0, 0, v, 0, self.values.size());
        ((k0, k), (v0, v))
    }
}

/// One GPU sort of the resident pairs `way` (in the stage `sort`, or with `by_dispatch`
/// each dispatch in a stage of its own, [`DISPATCH_STAGES`], [`LOOKBACK_STAGES`] or
/// [`RADIX8_STAGES`]): the
/// frame's stage times, and the sorted pairs when `read` (the warm-up run checks them;
/// timed runs read nothing back).
fn gpu_sort(
    engine: &mut Engine,
    input: &ResidentPairs,
    way: SortWay,
    options: &GpuBenchOptions,
    by_dispatch: bool,
    read: bool,
) -> Result<(Profile, Option<Checked>)> {
    let mut rec = Recording::new();
    rec.stage(stage::UPLOAD);
    let ((k0, k), (v0, v)) = input.record_copy(&mut rec);
    rec.stage("sort");
    // A look-back sort's checked run counts its fallbacks (timed runs copy nothing out).
    let fallbacks = (read && way.digits().is_some()).then(|| rec.buffer(4, "look-back fallbacks"));
    let (sk, sv) = match way.digits() {
        None if by_dispatch => record_sort_pairs_by_dispatch(&mut rec, k, v, input.count, 32),
        None => record_sort_pairs(&mut rec, k, v, input.count, 32),
        Some(digits) => {
            let how = Lookback {
                by_dispatch,
                patience: options.sort_patience,
                fallbacks,
                ..Lookback::new(digits)
            };
            record_sort_pairs_lookback_with(&mut rec, (k, v), input.count, 32, how)
        }
    };
    let readbacks = read.then(|| {
        rec.stage(stage::READBACK);
        (rec.readback(sk), rec.readback(sv))
    });
    let counted = fallbacks.map(|f| rec.readback(f));
    let out = engine.run(&rec, &[(k0, &input.keys), (v0, &input.values)])?;
    let sorted = readbacks.map(|(rk, rv)| Checked {
        keys: out.values(rk),
        values: out.values(rv),
        fallbacks: counted.map(|f| out.values::<u32>(f)[0]),
    });
    Ok((out.profile, sorted))
}

/// A checked run's sorted pairs, and the look-back's fallbacks there.
struct Checked {
    keys: Vec<u32>,
    values: Vec<u32>,
    fallbacks: Option<u32>,
}

/// Median seconds of `runs` calls.
fn timed(runs: usize, mut f: impl FnMut() -> Result<()>) -> Result<f64> {
    let mut t = Vec::with_capacity(runs);
    for _ in 0..runs {
        let start = Instant::now();
        f()?;
        t.push(start.elapsed().as_secs_f64());
    }
    Ok(median(&mut t))
}

/// Memory a hull takes per vertex in the exact benches, ours and the peer's together,
/// rounded up (ours: 1.2 kB at 8 to 512 vertices, most of it the Voronoi planes and the
/// edges' Gauss-map arcs).
const HULL_BYTES_PER_VERTEX: f64 = 2000.0;

/// The most the hulls of one exact bench's batch may take.
const HULL_BYTES_AT_MOST: f64 = 8e9;

/// Refuses, before anything is built, a batch of `hulls` hulls of `vertices` vertices that
/// would take more memory than a bench should ask for: the error names `what` and how to
/// ask for less (`fewer`).
pub fn check_hull_memory(what: &str, hulls: usize, vertices: usize, fewer: &str) -> Result<()> {
    let bytes = hulls as f64 * vertices as f64 * HULL_BYTES_PER_VERTEX;
    if bytes > HULL_BYTES_AT_MOST {
        return Err(Error::Usage(format!(
            "{what} would take about {:.0} GB of hulls ({:.0} GB at most): {fewer}",
            bytes / 1e9,
            HULL_BYTES_AT_MOST / 1e9
        )));
    }
    Ok(())
}

/// The median (upper middle); NaN for no values.
pub fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

impl SizeFigures {
    /// The faster CPU-twin frame of the methods that ran, ms.
    pub fn best_cpu_ms(&self) -> Option<f64> {
        [&self.hash, &self.sweep]
            .into_iter()
            .flatten()
            .map(|x| x.versus.cpu_ms)
            .reduce(f64::min)
    }
}

impl GpuBenchReport {
    /// What the run changed from the default, for the table's title ("" for none).
    fn variant(&self) -> String {
        [
            (!self.pair_staging, "pair staging off"),
            (self.pass_timestamps, "timestamps around every pass"),
            (self.pass_per_dispatch, "a compute pass per dispatch"),
        ]
        .iter()
        .filter(|(on, _)| *on)
        .map(|(_, what)| format!("; {what}"))
        .collect()
    }

    /// The report as a fixed-width table, one row per size.
    pub fn table(&self) -> String {
        let mut s = format!(
            "{} ({}; {}), CPU twins on {} threads; medians of {} GPU / {} CPU runs, ms{}\n",
            self.adapter,
            self.backend,
            self.driver,
            self.cpu_threads,
            self.runs,
            self.cpu_runs,
            self.variant()
        );
        s += &format!(
            "{:>9} {:>9} | {:>8} {:>8} {:>6} | {:>8} {:>8} {:>6} {:>6} | {:>8} {:>8} {:>8} {:>8} {:>7} | {}\n",
            "bodies",
            "pairs",
            "bounds",
            "cpu",
            "x",
            "sort",
            "cpu",
            "x",
            "GB/s",
            "hash",
            "sweep",
            "bp-only",
            "best cpu",
            "x",
            "dominant stage"
        );
        let ms = |v: Option<f64>| v.map_or_else(|| format!("{:>8}", "-"), |v| format!("{v:>8.3}"));
        let x = |v: Option<f64>| v.map_or_else(|| format!("{:>6}", "-"), |v| format!("{v:>6.1}"));
        for f in &self.sizes {
            let best = match f.best_method.as_deref() {
                Some("hash") => f.hash.as_ref(),
                Some(_) => f.sweep.as_ref(),
                None => None,
            };
            s += &format!(
                "{:>9} {:>9} | {} {} {} | {} {} {} {} | {} {} {} {} {:>7} | {}\n",
                f.bodies,
                f.pairs.map_or_else(|| "-".into(), |p| p.to_string()),
                ms(f.bounds.as_ref().map(|b| b.gpu_ms)),
                ms(f.bounds.as_ref().map(|b| b.cpu_ms)),
                x(f.bounds.as_ref().map(|b| b.ratio)),
                ms(f.sort.as_ref().map(|b| b.versus.gpu_ms)),
                ms(f.sort.as_ref().map(|b| b.versus.cpu_ms)),
                x(f.sort.as_ref().map(|b| b.versus.ratio)),
                x(f.sort.as_ref().map(|b| b.floor_gb_per_s)),
                ms(f.hash.as_ref().map(|h| h.versus.gpu_ms)),
                ms(f.sweep.as_ref().map(|h| h.versus.gpu_ms)),
                ms(best.map(|b| b.broadphase.gpu_ms)),
                ms(f.best_cpu_ms()),
                f.best_ratio
                    .map_or_else(|| "-".into(), |r| format!("{r:.1}")),
                f.dominant_stage.as_deref().unwrap_or("-"),
            );
            if let Some(sort) = f.sort.as_ref().filter(|s| !s.dispatch_us.is_empty()) {
                let parts = |stages: &[&str], us: &BTreeMap<String, f64>| {
                    stages
                        .iter()
                        .filter_map(|&name| {
                            let us = us.get(name)?;
                            let short = name.split_once('/').map_or(name, |(_, s)| s);
                            Some(format!("{short} {us:.1}"))
                        })
                        .collect::<Vec<String>>()
                        .join(", ")
                };
                s += &format!(
                    "{:>9}   sort, each dispatch timed on its own (µs a pass): {}\n",
                    "",
                    parts(&DISPATCH_STAGES, &sort.dispatch_us)
                );
                for (what, figures, stages) in [
                    ("sort by look-back", &sort.lookback, &LOOKBACK_STAGES),
                    ("8-bit sort by look-back", &sort.radix8, &RADIX8_STAGES),
                ] {
                    if let Some(lb) = figures {
                        s += &format!(
                            "{:>9}   {what}: gpu {:.3} ms ({:.2} of the above, {:.1} GB/s over \
                             the floor); timed on their own (µs): {}; late blocks counted: {}\n",
                            "",
                            lb.gpu_ms,
                            lb.over_spine,
                            lb.floor_gb_per_s,
                            parts(stages, &lb.dispatch_us),
                            lb.fallbacks
                        );
                    }
                }
            }
            if f.depth.as_ref().is_some_and(|d| d.pairs == 0) {
                s += &format!(
                    "{:>9}   depth estimate (k = 16): no pairs at this size\n",
                    ""
                );
            } else if let Some(d) = &f.depth {
                s += &format!(
                    "{:>9}   depth estimate (k = 16) over {} pairs: gpu {:.3} ms ({:.3e} pairs/s), \
                     cpu twin {:.3} ms (timed on {} pairs{}), {:.1}x\n",
                    "",
                    d.pairs,
                    d.versus.gpu_ms,
                    d.gpu_pairs_per_s,
                    d.versus.cpu_ms,
                    d.cpu_twin_pairs,
                    if d.cpu_twin_pairs < d.pairs {
                        ", scaled to all"
                    } else {
                        ""
                    },
                    d.versus.ratio
                );
            } else if let Some(limit) = f.depth_skipped_above {
                s += &format!(
                    "{:>9}   depth estimate (k = 16): not run, {} pairs past --depth-max-pairs {limit}\n",
                    "",
                    f.pairs.unwrap_or(0)
                );
            }
            if let Some(p) = &f.particles {
                s += &format!(
                    "{:>9}   particle frame ({} pairs, {} touching): gpu {:.3} ms, cpu twins \
                     {:.3} ms, {:.1}x; contacts alone gpu {:.3} ms, cpu {:.3} ms, {:.1}x\n",
                    "",
                    p.pairs,
                    p.touching,
                    p.versus.gpu_ms,
                    p.versus.cpu_ms,
                    p.versus.ratio,
                    p.contacts.gpu_ms,
                    p.contacts.cpu_ms,
                    p.contacts.ratio
                );
            }
            if let Some(e) = &f.error {
                s += &format!("{:>9}   error: {e}\n", "");
            }
        }
        s += "(hash, sweep: bounds + broadphase GPU time of a moving frame; bp-only: the best \
              method's broadphase stages; best cpu: the faster CPU-twin frame; GB/s: sorted \
              pairs x 64 B per second)\n";
        s
    }

    /// A log–log plot of time against bodies: GPU frames by method, the best CPU-twin
    /// frame, the sort (both paths) and the bounds pass.
    pub fn svg(&self) -> String {
        let mut series = vec![
            ("gpu frame, hash", Vec::new()),
            ("gpu frame, sweep", Vec::new()),
            ("gpu sort", Vec::new()),
            ("gpu sort, look-back", Vec::new()),
            ("gpu sort, 8-bit look-back", Vec::new()),
            ("gpu bounds", Vec::new()),
            ("best cpu twin frame", Vec::new()),
        ];
        for f in &self.sizes {
            let n = f.bodies as f64;
            let values = [
                f.hash.as_ref().map(|h| h.versus.gpu_ms),
                f.sweep.as_ref().map(|h| h.versus.gpu_ms),
                f.sort.as_ref().map(|s| s.versus.gpu_ms),
                f.sort
                    .as_ref()
                    .and_then(|s| s.lookback.as_ref())
                    .map(|l| l.gpu_ms),
                f.sort
                    .as_ref()
                    .and_then(|s| s.radix8.as_ref())
                    .map(|l| l.gpu_ms),
                f.bounds.as_ref().map(|b| b.gpu_ms),
                f.best_cpu_ms(),
            ];
            for ((_, points), v) in series.iter_mut().zip(values) {
                if let Some(v) = v.filter(|v| v.is_finite() && *v > 0.0) {
                    points.push((n, v));
                }
            }
        }
        let series: Vec<Series> = series
            .into_iter()
            .filter(|(_, p)| !p.is_empty())
            .map(|(name, points)| Series {
                name: name.into(),
                points,
            })
            .collect();
        loglog_svg(
            &format!("proxima on {}", self.adapter),
            "bodies",
            "time (ms)",
            &series,
        )
    }
}
