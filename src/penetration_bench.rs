//! Penetration depth against the peer, from a prebuilt binary (`proxima bench
//! penetration`): the Gauss-map walk (`exact::depth`), warm-started by each pair's
//! [`DepthCache`] and cold, against parry3d-f64's EPA (`query::contact`, which runs GJK
//! first), on coherent sequences of overlapping random hulls of 8 to 2048 vertices: A
//! spinning in place, B orbiting and tumbling, either resting on A pressed in by at most
//! 0.02 (`shallow`, contacts as a simulation has them) or through it, centres 0.9 apart
//! (`deep`), or tumbling about A's centre (`centred`: bodies spawned at one point, the
//! deepest case, where EPA under-reports most). The criterion bench (`benches/depth.rs`)
//! times the same sequences.
//!
//! Each round times the whole sequence three ways, side by side (warm with a fresh cache,
//! cold, EPA); a figure is the median over rounds, per query. Every answer is checked before
//! it is timed: warm equals cold, and on hulls up to [`ENUMERATED_UP_TO`] vertices both
//! equal the enumeration of every candidate facet, within 1e-9 of the depth; a difference
//! is an error, not a figure. EPA's depth is compared and reported, not required (it stops
//! short of the depth now and then).
//!
//! The GPU's sampled estimate over many pairs is measured by `proxima bench gpu`.

use std::time::Instant;

use glam::{DQuat, DVec3};
use serde::Serialize;

use crate::bodies::Pose;
use crate::exact::depth::{DepthCache, DepthInput, enumerate, walk};
use crate::exact::walk::collide;
use crate::geometry::ConvexPolytope;
use crate::geometry::generators::random_points;
use crate::peer::{parry_pose, to_parry};
use crate::plot::{Series, loglog_svg};
use crate::rng::Rng;
use crate::{Error, Result};

/// Hull sizes whose answers are also checked against enumeration (O(edges²) a query: a
/// 2048-vertex pair would take seconds a frame).
pub const ENUMERATED_UP_TO: usize = 128;

/// Relative agreement required between two exact answers.
const AGREE: f64 = 1e-9;

/// A coherent sequence of overlapping poses of two hulls.
#[derive(Clone, Debug)]
pub struct Sequence {
    /// Body A.
    pub a: ConvexPolytope,
    /// Body B.
    pub b: ConvexPolytope,
    /// The frames where they overlap (or touch), in order.
    pub poses: Vec<(Pose, Pose)>,
}

/// How the sequence's bodies overlap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// B pressed into A by 0.02 along the line of centres (brought closer in steps of 0.02
    /// where the spiky small hulls still miss each other): contacts as a simulation has
    /// them.
    Shallow,
    /// Centres 0.9 apart.
    Deep,
    /// One centre: bodies spawned at one point.
    Centred,
}

impl Kind {
    /// Every kind, in the order the bench runs them.
    pub const ALL: [Kind; 3] = [Kind::Shallow, Kind::Deep, Kind::Centred];

    /// Its name in tables and figures.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Shallow => "shallow",
            Kind::Deep => "deep",
            Kind::Centred => "centred",
        }
    }
}

/// The sequence of `frames` frames for two random hulls of `vertices` points each (seeded
/// by the size), overlapping as `kind` says. Frames where they do not overlap are left out.
pub fn sequence(vertices: usize, kind: Kind, frames: usize) -> Result<Sequence> {
    let hull = |seed: u64| {
        ConvexPolytope::from_points(&random_points(&mut Rng::new(seed), vertices, 1.0, 1.0))
    };
    let a = hull(vertices as u64)?;
    let b = hull(vertices as u64 + 7)?;
    let poses = (0..frames)
        .map(|k| frame(k, &a, &b, kind))
        .filter(|(pa, pb)| collide(&a, pa, &b, pb))
        .collect();
    Ok(Sequence { a, b, poses })
}

/// Frame `k` of the sequence (see [`sequence`]).
fn frame(k: usize, a: &ConvexPolytope, b: &ConvexPolytope, kind: Kind) -> (Pose, Pose) {
    let t = k as f64 * 0.01;
    let pa = Pose::new(DVec3::ZERO, DQuat::from_rotation_y(0.7 * t));
    let d = DVec3::new(t.cos(), 0.3 * (2.0 * t).sin(), t.sin()).normalize();
    let rb = DQuat::from_rotation_z(1.3 * t) * DQuat::from_rotation_x(0.5 * t);
    match kind {
        Kind::Deep => return (pa, Pose::new(d * 0.9, rb)),
        Kind::Centred => return (pa, Pose::new(DVec3::ZERO, rb)),
        Kind::Shallow => {}
    }
    let reach = |p: &ConvexPolytope, q: DQuat, dir: DVec3| {
        p.vertices()
            .iter()
            .map(|v| (q * *v).dot(dir))
            .fold(f64::MIN, f64::max)
    };
    let mut distance = reach(a, pa.rotation, d) + reach(b, rb, -d) - 0.02;
    for _ in 0..50 {
        if collide(a, &pa, b, &Pose::new(d * distance, rb)) {
            break;
        }
        distance -= 0.02;
    }
    (pa, Pose::new(d * distance, rb))
}

/// One sequence's figures.
#[derive(Clone, Debug, Serialize)]
pub struct PenetrationFigures {
    /// Vertices of each hull.
    pub vertices: usize,
    /// "shallow", "deep" or "centred" ([`Kind::name`]).
    pub kind: &'static str,
    /// Overlapping frames (queries per sequence).
    pub queries: usize,
    /// Median µs per query, warm (the pair's cache).
    pub warm_us: f64,
    /// Median µs per query, cold.
    pub cold_us: f64,
    /// Median µs per query, parry3d-f64's EPA.
    pub epa_us: f64,
    /// Warm over EPA's time (below 1: faster).
    pub warm_over_epa: f64,
    /// Cold over EPA's time.
    pub cold_over_epa: f64,
    /// Facets visited per query, warm.
    pub warm_steps: f64,
    /// Facets visited per query, cold.
    pub cold_steps: f64,
    /// Whether every answer was also checked against enumeration.
    pub enumerated: bool,
    /// Largest |EPA's depth − ours|.
    pub epa_difference: f64,
    /// Queries where EPA's depth is shallower than ours by more than 1e-9 (relative):
    /// it under-reports.
    pub epa_shallower: usize,
}

/// The whole run.
#[derive(Clone, Debug, Serialize)]
pub struct PenetrationReport {
    /// Timed rounds per figure.
    pub rounds: usize,
    /// Frames per sequence (before the non-overlapping ones are left out).
    pub frames: usize,
    /// Each size, of each kind asked for, in order.
    pub sequences: Vec<PenetrationFigures>,
}

/// Measures every size in `vertices`, of each of `kinds`; `progress` hears of each figure.
pub fn run(
    vertices: &[usize],
    kinds: &[Kind],
    frames: usize,
    rounds: usize,
    progress: &mut dyn FnMut(&PenetrationFigures),
) -> Result<PenetrationReport> {
    if rounds == 0 || frames == 0 || kinds.is_empty() {
        return Err(Error::Usage(
            "bench penetration needs at least one frame, one round and one kind".into(),
        ));
    }
    let mut sequences = Vec::new();
    for &n in vertices {
        if n < 4 {
            return Err(Error::Usage(format!(
                "bench penetration: a hull of {n} vertices has no volume (4 at least)"
            )));
        }
        crate::bench::check_hull_memory(
            &format!("bench penetration: two hulls of {n} vertices"),
            2,
            n,
            "fewer --vertices",
        )?;
        for &kind in kinds {
            let figures = measure(&sequence(n, kind, frames)?, n, kind, rounds)?;
            progress(&figures);
            sequences.push(figures);
        }
    }
    Ok(PenetrationReport {
        rounds,
        frames,
        sequences,
    })
}

/// Checks, then times, one sequence.
fn measure(seq: &Sequence, n: usize, kind: Kind, rounds: usize) -> Result<PenetrationFigures> {
    let kind = kind.name();
    if seq.poses.is_empty() {
        return Err(Error::Bench(format!(
            "penetration: no frame of the {kind} {n}-vertex sequence overlaps (try more frames)"
        )));
    }
    let (a, b) = (&seq.a, &seq.b);
    let (pa_parry, pb_parry) = (to_parry(a)?, to_parry(b)?);
    let epa = |pa: &Pose, pb: &Pose| {
        parry3d_f64::query::contact(&parry_pose(pa), &pa_parry, &parry_pose(pb), &pb_parry, 0.0)
            .ok()
            .flatten()
            .map_or(0.0, |c| -c.dist)
    };
    let enumerated = n <= ENUMERATED_UP_TO;
    let (mut warm_steps, mut cold_steps) = (0u64, 0u64);
    let (mut epa_difference, mut epa_shallower) = (0.0f64, 0);
    let mut cache = DepthCache::default();
    for (k, (pa, pb)) in seq.poses.iter().enumerate() {
        let missing = || Error::Bench(format!("{kind} {n} frame {k}: no depth for overlap"));
        let warm = cache.query(a, *pa, b, *pb).ok_or_else(missing)?;
        let cold = walk(&DepthInput::new(a, *pa, b, *pb)).ok_or_else(missing)?;
        let mut truths = vec![("cold", cold.depth)];
        if enumerated {
            truths.push((
                "enumeration",
                enumerate(a, pa, b, pb).ok_or_else(missing)?.depth,
            ));
        }
        for (name, want) in truths {
            if (warm.depth - want).abs() > AGREE * want.max(1e-3) {
                return Err(Error::Bench(format!(
                    "{kind} {n} frame {k}: warm depth {} but {name} {want}",
                    warm.depth
                )));
            }
        }
        warm_steps += u64::from(warm.steps);
        cold_steps += u64::from(cold.steps);
        let theirs = epa(pa, pb);
        epa_difference = epa_difference.max((theirs - warm.depth).abs());
        epa_shallower += usize::from(theirs < warm.depth - AGREE * warm.depth.max(1e-3));
    }
    let queries = seq.poses.len() as f64;
    let mut times = [Vec::new(), Vec::new(), Vec::new()];
    let mut sink = 0.0;
    for _ in 0..rounds {
        let t = Instant::now();
        let mut cache = DepthCache::default();
        for (pa, pb) in &seq.poses {
            sink += cache.query(a, *pa, b, *pb).map_or(0.0, |p| p.depth);
        }
        times[0].push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        for (pa, pb) in &seq.poses {
            sink += walk(&DepthInput::new(a, *pa, b, *pb)).map_or(0.0, |p| p.depth);
        }
        times[1].push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        for (pa, pb) in &seq.poses {
            sink += epa(pa, pb);
        }
        times[2].push(t.elapsed().as_secs_f64());
    }
    std::hint::black_box(sink);
    let [warm_us, cold_us, epa_us] =
        times.map(|mut t| crate::bench::median(&mut t) / queries * 1e6);
    Ok(PenetrationFigures {
        vertices: n,
        kind,
        queries: seq.poses.len(),
        warm_us,
        cold_us,
        epa_us,
        warm_over_epa: warm_us / epa_us,
        cold_over_epa: cold_us / epa_us,
        warm_steps: warm_steps as f64 / queries,
        cold_steps: cold_steps as f64 / queries,
        enumerated,
        epa_difference,
        epa_shallower,
    })
}

impl PenetrationReport {
    /// The table printed by the command.
    pub fn table(&self) -> String {
        let mut s = format!(
            "penetration depth per query (µs, median of {} rounds; ours over EPA's time)\n",
            self.rounds
        );
        s += &format!(
            "{:>8}  {:>7}  {:>7}  {:>16}  {:>16}  {:>9}  {:>11}  {:>22}\n",
            "vertices",
            "kind",
            "queries",
            "warm (ratio)",
            "cold (ratio)",
            "EPA",
            "checked by",
            "EPA diff / shallower"
        );
        for f in &self.sequences {
            s += &format!(
                "{:>8}  {:>7}  {:>7}  {:>8.3} ({:>5.2})  {:>8.3} ({:>5.2})  {:>9.3}  {:>11}  {:>12.1e} / {:>5}\n",
                f.vertices,
                f.kind,
                f.queries,
                f.warm_us,
                f.warm_over_epa,
                f.cold_us,
                f.cold_over_epa,
                f.epa_us,
                if f.enumerated {
                    "enumeration"
                } else {
                    "cold walk"
                },
                f.epa_difference,
                f.epa_shallower
            );
        }
        s
    }

    /// A log-log plot of µs per query against vertices: warm, cold and EPA, of every kind measured.
    pub fn svg(&self) -> String {
        let mut series = Vec::new();
        // The kinds the run measured (`--kinds` may leave some out: no empty series).
        let measured = Kind::ALL
            .map(Kind::name)
            .into_iter()
            .filter(|&kind| self.sequences.iter().any(|f| f.kind == kind));
        for kind in measured {
            let of = |time: fn(&PenetrationFigures) -> f64| {
                self.sequences
                    .iter()
                    .filter(|f| f.kind == kind)
                    .map(|f| (f.vertices as f64, time(f)))
                    .collect()
            };
            series.push(Series {
                name: format!("proxima warm, {kind}"),
                points: of(|f| f.warm_us),
            });
            series.push(Series {
                name: format!("proxima cold, {kind}"),
                points: of(|f| f.cold_us),
            });
            series.push(Series {
                name: format!("parry3d-f64 EPA, {kind}"),
                points: of(|f| f.epa_us),
            });
        }
        loglog_svg(
            "penetration depth per query",
            "vertices per hull",
            "time (µs)",
            &series,
        )
    }
}
