//! Time of impact against the peer, from a prebuilt binary (`proxima bench toi`):
//! conservative advancement (`exact::advance`) against parry3d-f64's two queries on the
//! same batches of random rotating convex pairs (hulls of 8 to 512 vertices, each body
//! moving up to 4 and turning up to 0.9π over the step, two thirds to seven eighths of the
//! pairs meeting): `sweep_time_of_impact` (nlerp rotation, its own path, stopping within
//! 1.25e-6 of contact) and `cast_shapes_nonlinear` (the same screw motion, local centre
//! 0). Ours runs at its default tolerance (1e-9 of the coordinates' size) and at
//! `sweep_time_of_impact`'s 1e-6 (the same accuracy). The criterion bench
//! (`benches/toi.rs`) times the same batches.
//!
//! Two batches a size: `cached`, a few hundred pairs whose tables stay in the last-level
//! cache from one run to the next (ours up to about 32 vertices: a 512-vertex polytope's
//! tables take 470 kB, where the peer reads its 12 kB of points), and `uncached`, ten
//! times as many distinct pairs (at 8 vertices about 22 MB of our polytopes), whose tables
//! are out of cache at every query.
//!
//! Each round times the batch each way, side by side, in a fresh random order, each after
//! one untimed run of its own (so a cached batch is in cache for every way alike); a
//! figure is the median over rounds, per pair (`cast_shapes_nonlinear`, 25 to 60
//! times slower, is timed on the cached batch only).
//!
//! Every answer is checked before it is timed: ours ends in a hit or a miss (never capped),
//! a hit's bodies are within the tolerance at its time (the exact walk at the motions'
//! poses), and where `cast_shapes_nonlinear` reports a contact earlier than ours (or one we
//! miss) the bodies at its time must be apart by more than our tolerance, or ours was late:
//! an error, not a figure. The peers' misses (our hit, checked, where a peer reports none)
//! are counted.

use std::f64::consts::PI;
use std::time::Instant;

use glam::{DQuat, DVec3};
use parry3d_f64::query::{
    NonlinearRigidMotion, Sweep, SweepToiStatus, ToiProxy, cast_shapes_nonlinear,
    sweep_time_of_impact,
};
use parry3d_f64::shape::ConvexPolyhedron;
use serde::Serialize;

use crate::bodies::Pose;
use crate::exact::advance::{
    ContactTolerance, ToiInput, ToiOutput, ToiState, default_tolerance, times_of_impact,
};
use crate::exact::sat;
use crate::exact::walk::{WalkInput, WalkState, walk};
use crate::geometry::generators::random_points;
use crate::geometry::{ConvexPolytope, brute};
use crate::motion::ScrewMotion;
use crate::peer::{parry_pose, to_parry};
use crate::plot::{Series, loglog_svg};
use crate::rng::Rng;
use crate::{Error, Result};

/// `sweep_time_of_impact`'s linear slop: it stops within `1.25 × SLOP` of contact.
pub const SLOP: f64 = 1e-6;

/// Times closer than this are the same contact (the peers stop at their own tolerances).
const SAME_TIME: f64 = 1e-4;

/// One pair and its motions over the step.
#[derive(Clone, Debug)]
pub struct ToiCase {
    /// Body A.
    pub a: ConvexPolytope,
    /// A's motion: turning in place about its origin.
    pub ma: ScrewMotion,
    /// Body B.
    pub b: ConvexPolytope,
    /// B's motion: 2 to 3 from A, moving 1 to 4 toward it and up to 1.5 across, turning.
    pub mb: ScrewMotion,
}

/// `pairs` cases of random hulls of `vertices` points (seeded by the size: a larger batch
/// starts with the smaller one's pairs), apart at the start.
pub fn cases(vertices: usize, pairs: usize) -> Result<Vec<ToiCase>> {
    let mut rng = Rng::new(vertices as u64);
    let mut out = Vec::with_capacity(pairs);
    while out.len() < pairs {
        let mut hull = || {
            let radius = rng.range(0.5, 1.0);
            ConvexPolytope::from_points(&random_points(&mut rng, vertices, radius, 1.0))
        };
        let (a, b) = (hull()?, hull()?);
        let mut turn =
            |q: DQuat| DQuat::from_axis_angle(rng.unit_vector(), rng.range(0.0, 0.9 * PI)) * q;
        let ra = DQuat::IDENTITY;
        let ma =
            ScrewMotion::between(Pose::new(DVec3::ZERO, ra), Pose::new(DVec3::ZERO, turn(ra)))?;
        let u = rng.unit_vector();
        let start = u * rng.range(2.0, 3.0);
        let end = start - u * rng.range(1.0, 4.0) + rng.unit_vector() * rng.range(0.0, 1.5);
        let rb = rng.rotation();
        let mut turn =
            |q: DQuat| DQuat::from_axis_angle(rng.unit_vector(), rng.range(0.0, 0.9 * PI)) * q;
        let mb = ScrewMotion::between(Pose::new(start, rb), Pose::new(end, turn(rb)))?;
        if !sat::intersects(&a, &ma.start(), &b, &mb.start()) {
            out.push(ToiCase { a, ma, b, mb });
        }
    }
    Ok(out)
}

/// Ours on every case, at the default tolerance or at `tolerance`.
pub fn advance_all(cases: &[ToiCase], tolerance: Option<f64>) -> Result<Vec<ToiOutput>> {
    let tolerance = tolerance.map(ContactTolerance::new).transpose()?;
    Ok(times_of_impact(cases.iter().map(|c| ToiInput {
        tolerance,
        ..ToiInput::new(&c.a, c.ma, &c.b, c.mb)
    })))
}

/// The cases' bodies as parry3d-f64 shapes.
pub fn to_parry_pairs(cases: &[ToiCase]) -> Result<Vec<(ConvexPolyhedron, ConvexPolyhedron)>> {
    cases
        .iter()
        .map(|c| Ok((to_parry(&c.a)?, to_parry(&c.b)?)))
        .collect()
}

/// `sweep_time_of_impact` on every case: its time where it reports a contact.
pub fn sweep_all(
    cases: &[ToiCase],
    parry: &[(ConvexPolyhedron, ConvexPolyhedron)],
) -> Vec<Option<f64>> {
    let sweep_of = |m: &ScrewMotion| {
        Sweep::from_poses(&parry_pose(&m.start()), &parry_pose(&m.end()), DVec3::ZERO)
    };
    cases
        .iter()
        .zip(parry)
        .map(|(c, (pa, pb))| {
            let (Some(xa), Some(xb)) = (ToiProxy::from_shape(pa), ToiProxy::from_shape(pb)) else {
                return None;
            };
            let s = sweep_time_of_impact(&xa, &sweep_of(&c.ma), &xb, &sweep_of(&c.mb), 1.0, SLOP);
            matches!(s.status, SweepToiStatus::Hit | SweepToiStatus::Failed).then_some(s.fraction)
        })
        .collect()
}

/// `cast_shapes_nonlinear` on every case (the same screw motions): its time of impact
/// where it reports one.
pub fn nonlinear_all(
    cases: &[ToiCase],
    parry: &[(ConvexPolyhedron, ConvexPolyhedron)],
) -> Vec<Option<f64>> {
    let motion = |m: &ScrewMotion| {
        NonlinearRigidMotion::new(parry_pose(&m.start()), DVec3::ZERO, m.linear(), m.angular())
    };
    cases
        .iter()
        .zip(parry)
        .map(|(c, (pa, pb))| {
            cast_shapes_nonlinear(&motion(&c.ma), pa, &motion(&c.mb), pb, 0.0, 1.0, true)
                .ok()
                .flatten()
                .map(|h| h.time_of_impact)
        })
        .collect()
}

/// One batch's figures.
#[derive(Clone, Debug, Serialize)]
pub struct ToiFigures {
    /// Vertices of each hull.
    pub vertices: usize,
    /// "cached" (the batch stays in cache) or "uncached" (ten times as many pairs).
    pub batch: &'static str,
    /// Pairs in the batch.
    pub pairs: usize,
    /// Median µs per pair: ours at the default tolerance.
    pub ours_us: f64,
    /// Ours at `sweep_time_of_impact`'s 1e-6.
    pub ours_slop_us: f64,
    /// parry3d-f64's `sweep_time_of_impact`.
    pub sweep_us: f64,
    /// parry3d-f64's `cast_shapes_nonlinear` (cached batches only).
    pub nonlinear_us: Option<f64>,
    /// Ours over `sweep_time_of_impact`'s time (below 1: faster).
    pub ours_over_sweep: f64,
    /// Ours at 1e-6 over `sweep_time_of_impact`'s time.
    pub ours_slop_over_sweep: f64,
    /// Ours over `cast_shapes_nonlinear`'s time.
    pub ours_over_nonlinear: Option<f64>,
    /// Distance evaluations (walks) per pair, ours at the default tolerance.
    pub evaluations: f64,
    /// Contacts found: ours, ours at 1e-6, `sweep_time_of_impact`, `cast_shapes_nonlinear`.
    pub hits: [usize; 4],
    /// Our contacts (each checked) that `sweep_time_of_impact` reports no contact for.
    pub sweep_missed: usize,
    /// Our contacts that `cast_shapes_nonlinear` reports no contact for.
    pub nonlinear_missed: usize,
    /// `cast_shapes_nonlinear`'s contacts earlier than ours by more than 1e-4 (or where we
    /// report none) with the bodies apart at its time: its early or false contacts.
    pub nonlinear_early: usize,
}

/// The whole run.
#[derive(Clone, Debug, Serialize)]
pub struct ToiReport {
    /// Timed rounds per figure.
    pub rounds: usize,
    /// Each size's cached batch, then its uncached one where measured.
    pub batches: Vec<ToiFigures>,
}

/// What to measure.
#[derive(Clone, Debug)]
pub struct ToiBenchOptions {
    /// Hull sizes.
    pub vertices: Vec<usize>,
    /// Pairs in a cached batch (the uncached one has ten times as many).
    pub pairs: usize,
    /// Sizes up to this also get an uncached batch (0: none).
    pub uncached_up_to: usize,
    /// Timed rounds.
    pub rounds: usize,
}

/// Measures every size; `progress` hears of each figure.
pub fn run(options: &ToiBenchOptions, progress: &mut dyn FnMut(&ToiFigures)) -> Result<ToiReport> {
    if options.rounds == 0 || options.pairs == 0 {
        return Err(Error::Usage(
            "bench toi needs at least one pair and one round".into(),
        ));
    }
    let mut batches = Vec::new();
    for &n in &options.vertices {
        if n < 4 {
            return Err(Error::Usage(format!(
                "bench toi: a hull of {n} vertices has no volume (4 at least)"
            )));
        }
        let mut kinds = vec![("cached", options.pairs)];
        if n <= options.uncached_up_to {
            kinds.push(("uncached", 10 * options.pairs));
        }
        for &(batch, pairs) in &kinds {
            crate::bench::check_hull_memory(
                &format!("bench toi: the {batch} batch of {pairs} pairs of {n}-vertex hulls"),
                2 * pairs,
                n,
                "fewer --pairs, fewer --vertices or a lower --uncached-up-to",
            )?;
        }
        for (batch, pairs) in kinds {
            let figures = measure(&cases(n, pairs)?, n, batch, options.rounds)?;
            progress(&figures);
            batches.push(figures);
        }
    }
    Ok(ToiReport {
        rounds: options.rounds,
        batches,
    })
}

/// The exact distance between the case's bodies at `t` (0 when they overlap).
fn distance_at(c: &ToiCase, t: f64) -> f64 {
    let (pa, pb) = (c.ma.at(t), c.mb.at(t));
    let w = walk(&WalkInput::new(&c.a, pa, &c.b, pb));
    match w.state {
        WalkState::Separated => w.distance,
        WalkState::Touching | WalkState::Penetrating => 0.0,
        WalkState::Failed(_) if sat::intersects(&c.a, &pa, &c.b, &pb) => 0.0,
        WalkState::Failed(_) => brute::polytope_closest_pair(&c.a, &pa, &c.b, &pb).distance,
    }
}

/// Checks, then times, one batch.
fn measure(cases: &[ToiCase], n: usize, batch: &'static str, rounds: usize) -> Result<ToiFigures> {
    let parry = to_parry_pairs(cases)?;
    let ours = advance_all(cases, None)?;
    let slop = advance_all(cases, Some(SLOP))?;
    let sweep = sweep_all(cases, &parry);
    let nonlinear = nonlinear_all(cases, &parry);
    let hit = |o: &ToiOutput| (o.state == ToiState::Hit).then_some(o.toi);
    let (mut sweep_missed, mut nonlinear_missed, mut nonlinear_early) = (0, 0, 0);
    for (k, c) in cases.iter().enumerate() {
        let fail = |what: String| Err(Error::Bench(format!("toi {n} vertices, pair {k}: {what}")));
        let o = &ours[k];
        let tau = default_tolerance((c.a.reach(), &c.ma), (c.b.reach(), &c.mb));
        match o.state {
            ToiState::Hit => {
                let d = distance_at(c, o.toi);
                if d > tau * (1.0 + 1e-6) {
                    return fail(format!("a hit at {} with the bodies {d} apart", o.toi));
                }
            }
            ToiState::Miss => {}
            state => return fail(format!("advancement ended {state:?}")),
        }
        if let Some(t) = nonlinear[k]
            && hit(o).is_none_or(|ours| ours > t + SAME_TIME)
        {
            if distance_at(c, t) <= tau {
                return fail(format!(
                    "cast_shapes_nonlinear's contact at {t} is real, ours is {:?}",
                    hit(o)
                ));
            }
            nonlinear_early += 1;
        }
        if hit(o).is_some() {
            sweep_missed += usize::from(sweep[k].is_none());
            nonlinear_missed += usize::from(nonlinear[k].is_none());
        }
    }
    let count = |v: &[Option<f64>]| v.iter().flatten().count();
    let hits = [
        ours.iter().filter_map(hit).count(),
        slop.iter().filter_map(hit).count(),
        count(&sweep),
        count(&nonlinear),
    ];
    let evaluations =
        ours.iter().map(|o| u64::from(o.iterations)).sum::<u64>() as f64 / cases.len() as f64;
    let timed_nonlinear = batch == "cached";
    let mut times = [Vec::new(), Vec::new(), Vec::new(), Vec::new()];
    let mut sink = 0usize;
    let ways = if timed_nonlinear { 4 } else { 3 };
    let mut shuffle = Rng::new(0x70b);
    for _ in 0..rounds {
        // The ways in a fresh order each round (whichever runs right after another finds
        // the cache that one left: with a fixed cycle, ours at 1e-6 always followed ours and
        // read half as long at 512 vertices), and each runs the batch once untimed before it
        // is timed, so a cached batch is in cache for every way alike.
        let mut order: Vec<usize> = (0..ways).collect();
        for k in (1..ways).rev() {
            order.swap(k, shuffle.below(k as u64 + 1) as usize);
        }
        for way in order {
            let run = || -> Result<usize> {
                Ok(match way {
                    0 => advance_all(cases, None)?.len(),
                    1 => advance_all(cases, Some(SLOP))?.len(),
                    2 => count(&sweep_all(cases, &parry)),
                    _ => count(&nonlinear_all(cases, &parry)),
                })
            };
            sink += run()?;
            let t = Instant::now();
            sink += run()?;
            times[way].push(t.elapsed().as_secs_f64());
        }
    }
    std::hint::black_box(sink);
    let per_pair = |t: &mut Vec<f64>| crate::bench::median(t) / cases.len() as f64 * 1e6;
    let [mut t0, mut t1, mut t2, mut t3] = times;
    let (ours_us, ours_slop_us, sweep_us) =
        (per_pair(&mut t0), per_pair(&mut t1), per_pair(&mut t2));
    let nonlinear_us = timed_nonlinear.then(|| per_pair(&mut t3));
    Ok(ToiFigures {
        vertices: n,
        batch,
        pairs: cases.len(),
        ours_us,
        ours_slop_us,
        sweep_us,
        nonlinear_us,
        ours_over_sweep: ours_us / sweep_us,
        ours_slop_over_sweep: ours_slop_us / sweep_us,
        ours_over_nonlinear: nonlinear_us.map(|t| ours_us / t),
        evaluations,
        hits,
        sweep_missed,
        nonlinear_missed,
        nonlinear_early,
    })
}

impl ToiReport {
    /// The table printed by the command.
    pub fn table(&self) -> String {
        let mut s = format!(
            "time of impact per pair (µs, median of {} rounds; ours over the peer's time)\n",
            self.rounds
        );
        s += &format!(
            "{:>8}  {:>8}  {:>5}  {:>16}  {:>16}  {:>8}  {:>17}  {:>5}  {:>19}  {:>13}\n",
            "vertices",
            "batch",
            "pairs",
            "ours (ratio)",
            "ours 1e-6 (ratio)",
            "sweep",
            "nonlinear (ratio)",
            "evals",
            "hits ours/sw/nonlin",
            "missed sw/nl"
        );
        for f in &self.batches {
            let nonlinear = match (f.nonlinear_us, f.ours_over_nonlinear) {
                (Some(t), Some(r)) => format!("{t:>9.2} ({r:>5.3})"),
                _ => "-".into(),
            };
            s += &format!(
                "{:>8}  {:>8}  {:>5}  {:>7.2} ({:>5.2})  {:>7.2} ({:>5.2})  {:>8.2}  {:>17}  {:>5.2}  {:>19}  {:>13}\n",
                f.vertices,
                f.batch,
                f.pairs,
                f.ours_us,
                f.ours_over_sweep,
                f.ours_slop_us,
                f.ours_slop_over_sweep,
                f.sweep_us,
                nonlinear,
                f.evaluations,
                format!("{}/{}/{}", f.hits[0], f.hits[2], f.hits[3]),
                format!("{}/{}", f.sweep_missed, f.nonlinear_missed),
            );
        }
        s
    }

    /// A log-log plot of µs per pair against vertices, cached batches: ours at both
    /// tolerances and the two peers.
    pub fn svg(&self) -> String {
        let of = |time: fn(&ToiFigures) -> Option<f64>| {
            self.batches
                .iter()
                .filter(|f| f.batch == "cached")
                .filter_map(|f| Some((f.vertices as f64, time(f)?)))
                .collect()
        };
        let series = vec![
            Series {
                name: "proxima advancement".into(),
                points: of(|f| Some(f.ours_us)),
            },
            Series {
                name: "proxima advancement at 1e-6".into(),
                points: of(|f| Some(f.ours_slop_us)),
            },
            Series {
                name: "parry3d-f64 sweep_time_of_impact".into(),
                points: of(|f| Some(f.sweep_us)),
            },
            Series {
                name: "parry3d-f64 cast_shapes_nonlinear".into(),
                points: of(|f| f.nonlinear_us),
            },
        ];
        loglog_svg(
            "time of impact per pair",
            "vertices per hull",
            "time (µs)",
            &series,
        )
    }
}
