//! `proxima run`: the main job (a scene loaded into a `World`, its overlapping bodies parted,
//! frames of a kinematic crowd), its report, its picture and its result line.

use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::ValueEnum;

use crate::{DeviceArg, open_pipeline, writable};
use proxima::gpu::{ContextOptions, GpuContext};
use proxima::kinematic::{CrowdFrame, KinematicCrowd};
use proxima::pipeline::Backend;
use proxima::scene::Scene;
use proxima::world::World;
use proxima::{Error, Result};

#[derive(clap::Args, Debug, Clone)]
#[command(allow_negative_numbers = true)]
pub struct RunArgs {
    /// Scene file (TOML); the built-in scenes/crowd.toml when absent.
    scene_file: Option<PathBuf>,
    /// Scene file (TOML), as an option.
    #[arg(long, conflicts_with = "scene_file")]
    scene: Option<PathBuf>,
    /// Resize the scene to about this many bodies (the groups' counts, their regions and
    /// the wrap box scale together, keeping the density; bodies placed by hand stay; at
    /// least 1).
    #[arg(long, value_parser = body_count)]
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
    /// Write every body's state after the last frame here (JSON Lines: body, shape,
    /// position, rotation, velocity, spin; f64, each number reading back exactly): the
    /// state the result line's hash covers.
    #[arg(long)]
    poses: Option<PathBuf>,
    /// Size of the `--png` picture, WIDTHxHEIGHT.
    #[arg(
        long,
        default_value = "1280x800",
        value_parser = parse_size,
        requires = "png",
        allow_hyphen_values = true
    )]
    png_size: (u32, u32),
}

/// Most rounds the main job spends parting a scene's overlapping bodies before its first
/// frame (the default crowd takes 8; the boulders scene, whose rocks overlap each other
/// and push the crowd about, 32; later rounds move few bodies and cost little).
const SETTLE_ROUNDS: u32 = 100;

/// The main job's speculative distance: a hundredth of the default crowd's body size.
const DEFAULT_SPECULATIVE: f64 = 0.01;

/// `--bodies`: at least 1, and at most what a world holds (it blamed a line of the scene
/// it resized, the built-in one included).
fn body_count(text: &str) -> std::result::Result<u64, String> {
    let n = crate::at_least_one(text)? as u64;
    if n > proxima::bodies::MAX_BODIES as u64 {
        return Err(format!(
            "more than the {} bodies a world holds",
            proxima::bodies::MAX_BODIES
        ));
    }
    Ok(n)
}

fn parse_size(text: &str) -> std::result::Result<(u32, u32), String> {
    let (w, h) = text
        .split_once('x')
        .ok_or_else(|| format!("`{text}`: expected WIDTHxHEIGHT, e.g. 1280x800"))?;
    let side = |s: &str| match s.trim().parse::<u64>() {
        Ok(v) if v > 0 => u32::try_from(v)
            .map_err(|_| format!("`{text}`: a side of {v} pixels is past what a picture can have")),
        _ => Err(format!("`{text}`: sides must be positive whole numbers")),
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
            poses: None,
            png_size: (1280, 800),
        }
    }
}

pub fn run(args: &RunArgs) -> Result<()> {
    let outputs: Vec<&Path> = [&args.report, &args.png, &args.poses]
        .into_iter()
        .flatten()
        .map(PathBuf::as_path)
        .collect();
    writable(&outputs)?;
    // The picture is a PNG whatever the name says: a `.jpg` name got PNG bytes.
    if let Some(path) = &args.png
        && let Some(ext) = path.extension()
        && !ext.eq_ignore_ascii_case("png")
    {
        return Err(Error::Usage(format!(
            "--png {}: the picture is written as PNG; name the file .png",
            path.display()
        )));
    }
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
    crowd.fix(&scene.fixed)?;
    // A picture size the device cannot draw is named now, not after the frames.
    if args.png.is_some()
        && let Some(ctx) = picture_context.as_ref().or(crowd.world.gpu_context())
    {
        let (w, h) = args.png_size;
        proxima::picture::check_size(ctx, w, h)?;
    }
    say!(
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
    let dt = proxima::scene::FRAME_SECONDS;
    crowd.world.motions(dt).map_err(|e| {
        Error::Usage(format!(
            "scene {}: {e} (the main job's frames are 1/60 s: spins under {:.1} rad/s)",
            scene.path.display(),
            proxima::scene::MAX_SPIN
        ))
    })?;
    // A scene placed at random starts with overlapping pairs: part them first, so that no
    // pair overlaps at any frame's start.
    let t = Instant::now();
    let settled = crowd.settle(SETTLE_ROUNDS)?;
    let seconds = t.elapsed().as_secs_f64();
    if settled.overlapping == 0 {
        say!(
            "proxima: start: {} overlapping pairs parted in {} rounds ({seconds:.1} s)",
            settled.initial,
            settled.rounds
        );
    } else {
        say!(
            "proxima: start: {} overlapping pairs, {} still overlapping after {} rounds \
             ({seconds:.1} s){}",
            settled.initial,
            settled.overlapping,
            settled.rounds,
            if settled.pinched == 1 {
                ": 1 body is pushed opposite ways at once, caught between fixed bodies closer \
                 than it is wide"
                    .into()
            } else if settled.pinched > 1 {
                format!(
                    ": {} bodies are pushed opposite ways at once, caught between fixed bodies \
                     closer than they are wide",
                    settled.pinched
                )
            } else if settled.stuck {
                ": their pushes are below the rounding of their coordinates (bodies far \
                 smaller than their distance from the origin)"
                    .into()
            } else {
                String::new()
            }
        );
    }
    if settled.fixed_overlapping > 0 {
        say!(
            "proxima: start: {} overlapping pairs of fixed bodies, left as the scene placed them",
            settled.fixed_overlapping
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
    // Which frames: the first pays for pipeline compilation and first allocations.
    let frames = if timed < args.frames {
        format!("{timed} frames (frame 0 left out: it compiles the pipelines)")
    } else {
        format!("{timed} frames")
    };
    say!("stage timings, mean over {frames} ({clock}; contacts and impacts on the CPU):");
    for (name, t) in &totals {
        say!("  {name:<18} {:>10.3} ms", t / f64::from(timed) * 1e3);
    }
    say!(
        "  {:<18} {:>10.3} ms (wall, whole frame)",
        "frame",
        wall / f64::from(timed) * 1e3
    );
    if let Some(peak) = proxima::memory::peak() {
        say!("memory: {} at most resident", proxima::memory::human(peak));
    }
    let r = &last.report;
    say!(
        "pairs (last frame): {} overlapping box pairs ({} broadphase){}",
        r.pairs.len(),
        r.broadphase.map_or("no", |m| m.name()),
        if args.depth_estimate.is_some() {
            format!("; {} proved apart by the depth estimate", r.proved_apart)
        } else {
            String::new()
        }
    );
    say!(
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
                format!("deepest {:.4e}", -least)
            } else if least.is_finite() {
                // + 0.0: a touch's separation may be −0, printed "-0.0e0".
                format!("none overlapping (closest {:.1e} apart)", least + 0.0)
            } else {
                "none".to_string()
            }
        },
    );
    say!(
        "impacts (last frame): {} first contacts in {} rounds; {} bodies stopped, {} contact pairs bounced",
        last.impacts.len(),
        last.rounds,
        last.stopped,
        last.bounced
    );
    say!("result: {}", summarize(&crowd.world, &last));
    if let Some(path) = &args.png {
        picture(
            &mut crowd.world,
            picture_context.as_ref(),
            path,
            args.png_size,
        )?;
    }
    if let Some(path) = &args.poses {
        write_poses(&crowd.world, path)?;
        say!("poses: {}", path.display());
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
                "fixed_overlapping": settled.fixed_overlapping,
            },
            "frames": rows,
        });
        let text = serde_json::to_string_pretty(&doc).expect("json values serialise");
        std::fs::write(path, text).map_err(|source| Error::Io {
            path: path.clone(),
            source,
        })?;
        say!("report: {}", path.display());
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
    say!(
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

/// Every body's pose and velocity, a JSON line each, in body order.
fn write_poses(world: &World, path: &Path) -> Result<()> {
    use std::io::Write;
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).map_err(io)?);
    for (i, (b, v)) in world.bodies().iter().zip(world.velocities()).enumerate() {
        let line = serde_json::json!({
            "body": i,
            "shape": b.shape,
            "position": b.pose.translation.to_array(),
            "rotation": b.pose.rotation.to_array(),
            "velocity": v.linear.to_array(),
            "spin": v.angular.to_array(),
        });
        serde_json::to_writer(&mut out, &line).map_err(|e| io(e.into()))?;
        out.write_all(b"\n").map_err(io)?;
    }
    out.flush().map_err(io)
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
