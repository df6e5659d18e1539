//! `proxima bench pipeline`: the whole pipeline against its CPU twins and against a
//! pipeline built from parry3d-f64 on the same scene and poses, stage by stage, with
//! accuracy columns.
//!
//! Per size, on the default crowd resized (`scenes/crowd.toml`), over the same moving
//! frames:
//! - proxima on the GPU (when there is one) and on the CPU twins: a [`World`] step with
//!   its stages (bounds and broadphase, contacts), median per stage;
//! - parry3d-f64: every body's AABB (`Shape::compute_aabb`), its BVH built and traversed
//!   for overlapping leaf pairs (`Bvh::from_leaves`, `traverse_bvtt_single_tree`), then
//!   `query::contact` on each pair (GJK/EPA): the same three stages a physics engine built
//!   on parry runs.
//!
//! Time of impact over six frames of the scene's own motions: proxima's World impacts
//! against parry's swept AABBs (`compute_swept_aabb`), BVH and `cast_shapes_nonlinear`
//! per pair, pairs one side finds and the other not settled by 513 samples of the exact
//! collision test along the motions.
//!
//! Accuracy, on the last frame: the pairs each side reports touching (overlap or contact),
//! with every disagreement settled by the exact separating-axis test, and the depth
//! error of parry's EPA against proxima's exact depth (the deepest manifold point, which
//! equals the Gauss-map walk's exact depth for face contacts and the witnesses otherwise)
//! over the pairs both report.

use std::collections::BTreeSet;
use std::time::Instant;

use parry3d_f64::bounding_volume::Aabb;
use parry3d_f64::partitioning::{Bvh, BvhBuildStrategy, BvhWorkspace};
use parry3d_f64::shape::{ConvexPolyhedron, Shape};
use serde::Serialize;

use crate::bodies::Pose;
use crate::exact::sat;
use crate::geometry::ConvexPolytope;
use crate::narrowphase::ExactShape;
use crate::pipeline::Pipeline;
use crate::plot::{Series, loglog_svg};
use crate::scene::Scene;
use crate::world::{FrameReport, World};
use crate::{Error, Result};

/// A polytope as parry3d-f64 holds it: our hull's vertices, faces fan-triangulated (parry's
/// own hull of the points would merge and drop differently).
pub fn to_parry(poly: &ConvexPolytope) -> Result<ConvexPolyhedron> {
    let mut tris = Vec::new();
    for f in 0..poly.num_faces() {
        let ring: Vec<u32> = poly.face_vertices(f).collect();
        for k in 1..ring.len() - 1 {
            tris.push([ring[0], ring[k], ring[k + 1]]);
        }
    }
    ConvexPolyhedron::from_convex_mesh(poly.vertices().to_vec(), &tris)
        .ok_or_else(|| Error::Bench("parry3d-f64 refused one of the scene's hulls".into()))
}

/// A pose for parry3d-f64.
pub(crate) fn parry_pose(p: &Pose) -> parry3d_f64::math::Pose {
    parry3d_f64::math::Pose::from_parts(p.translation, p.rotation)
}

/// One size's figures.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PeerFigures {
    /// Bodies.
    pub bodies: usize,
    /// proxima on the GPU, per stage (ms, median over the timed frames): bounds and
    /// broadphase, contacts; absent without an adapter.
    pub gpu_ms: Option<[f64; 2]>,
    /// proxima on the CPU twins, per stage.
    pub cpu_ms: [f64; 2],
    /// proxima on the GPU, wall time per frame: one frame at a time, and pipelined (the
    /// GPU stages of each frame overlapping the exact stage of the one before).
    pub gpu_frame_ms: Option<[f64; 2]>,
    /// parry3d-f64: AABBs and BVH pairs, contacts.
    pub parry_ms: [f64; 2],
    /// Box pairs: proxima's broadphase, parry's BVH.
    pub box_pairs: [usize; 2],
    /// Touching pairs: proxima, parry, and the truth (the exact test on their union).
    pub touching: [usize; 3],
    /// Touching pairs each side missed (against the truth).
    pub missed: [usize; 2],
    /// Pairs each side reported touching that do not touch.
    pub false_touching: [usize; 2],
    /// Pairs whose depths are compared.
    pub depth_pairs: usize,
    /// Largest and median |parry EPA depth − proxima's exact depth|.
    pub depth_error: [f64; 2],
    /// Time of impact over one step of the scene's motions (ms): proxima's impacts
    /// (swept boxes, broadphase, advancement on all cores), parry3d-f64's (swept AABBs,
    /// BVH, `cast_shapes_nonlinear` per pair, one thread).
    pub toi_ms: [f64; 2],
    /// First contacts found during the step: proxima, parry.
    pub impacts: [usize; 2],
    /// Pairs one side says meet and the other not, settled by sampling the exact test at
    /// 512 times along the motions: contacts each side missed (proxima, parry).
    pub impacts_missed: [usize; 2],
    /// Hits the samples did not confirm (a graze between samples, or a false hit):
    /// proxima, parry.
    pub impacts_unconfirmed: [usize; 2],
    /// Largest |proxima's toi − parry's| over the pairs both report (fraction of the step).
    pub toi_difference: f64,
    /// A size that could not run: the named error.
    pub error: Option<String>,
}

/// The figures of every size, with the adapter's name.
#[derive(Clone, Debug, Serialize)]
pub struct PeerReport {
    /// The adapter proxima's GPU side ran on (or "none").
    pub adapter: String,
    /// Frames timed per size.
    pub frames: usize,
    /// Per size.
    pub sizes: Vec<PeerFigures>,
}

/// Runs the comparison: `gpu` is a pipeline on an adapter, or `None`.
pub fn run(
    sizes: &[usize],
    frames: usize,
    mut gpu: Option<Pipeline>,
    progress: &mut dyn FnMut(&PeerFigures),
) -> Result<PeerReport> {
    let adapter = gpu
        .as_ref()
        .map_or_else(|| "none".to_string(), Pipeline::device_name);
    let mut out = Vec::new();
    for &n in sizes {
        let figures = match one_size(n, frames.max(1), gpu.take()) {
            Ok((f, back)) => {
                gpu = back;
                f
            }
            Err(e) => PeerFigures {
                bodies: n,
                error: Some(e.to_string()),
                ..Default::default()
            },
        };
        progress(&figures);
        out.push(figures);
    }
    Ok(PeerReport {
        adapter,
        frames,
        sizes: out,
    })
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

/// Stage times of a world over `frames` moving frames, and its last report.
/// Stage times of a world over `frames` moving frames, its last report, and the wall
/// time per frame run one at a time and pipelined ([`World::step_frames`]: the GPU stages
/// of a frame overlap the exact stage of the one before).
fn time_world(
    world: &mut World,
    frames: usize,
    dt: f64,
) -> Result<([f64; 2], FrameReport, [f64; 2])> {
    let mut wide = Vec::new();
    let mut exact = Vec::new();
    let mut last = None;
    // The pipelined run's poses: the same motion from the start poses.
    let ahead: Vec<Vec<Pose>> = (1..=frames)
        .map(|k| {
            Ok(world
                .motions(dt * k as f64)?
                .iter()
                .map(|m| m.end())
                .collect())
        })
        .collect::<Result<_>>()?;
    // One warm-up frame (pipelines, first allocations).
    world.step(0.0)?;
    let started = Instant::now();
    for _ in 0..frames {
        world.advance(dt)?;
        let r = world.step(0.0)?;
        wide.push(r.profile.stage_seconds("bounds") + r.profile.stage_seconds("broadphase"));
        exact.push(r.profile.stage_seconds("contacts"));
        last = Some(r);
    }
    let one_at_a_time = started.elapsed().as_secs_f64() / frames as f64;
    let started = Instant::now();
    world.step_frames(&ahead, 0.0, |_| Ok(()))?;
    let pipelined = started.elapsed().as_secs_f64() / frames as f64;
    Ok((
        [median(wide) * 1e3, median(exact) * 1e3],
        last.expect("at least one frame"),
        [one_at_a_time * 1e3, pipelined * 1e3],
    ))
}

fn one_size(
    n: usize,
    frames: usize,
    gpu: Option<Pipeline>,
) -> Result<(PeerFigures, Option<Pipeline>)> {
    let scene = Scene::default_scene(Some(n as u64))?;
    let dt = 1.0 / 60.0;
    let mut figures = PeerFigures {
        bodies: scene.crowd.len(),
        ..Default::default()
    };
    let mut cpu_world = World::on(Pipeline::cpu());
    cpu_world.add_scene(&scene, &mut |_| {})?;
    let (cpu_ms, ours, _) = time_world(&mut cpu_world, frames, dt)?;
    figures.cpu_ms = cpu_ms;
    let gpu_back = match gpu {
        Some(pipeline) => {
            let mut world = World::on(pipeline);
            world.add_scene(&scene, &mut |_| {})?;
            let (ms, report, wall) = time_world(&mut world, frames, dt)?;
            figures.gpu_frame_ms = Some(wall);
            if report.pairs != ours.pairs {
                return Err(Error::Bench(format!(
                    "{n} bodies: the GPU found {} pairs, the CPU twins {}",
                    report.pairs.len(),
                    ours.pairs.len()
                )));
            }
            figures.gpu_ms = Some(ms);
            world.into_pipeline()
        }
        None => None,
    };

    // parry3d-f64 on the same shapes and the same (last) poses.
    let shapes: Vec<Option<ConvexPolyhedron>> = cpu_world
        .shapes()
        .iter()
        .map(|s| match s {
            ExactShape::Convex(p) => to_parry(p).map(Some),
            _ => Ok(None),
        })
        .collect::<Result<_>>()?;
    let bodies = cpu_world.bodies();
    if bodies.iter().any(|b| shapes[b.shape as usize].is_none()) {
        return Err(Error::Bench(
            "the parry pipeline here takes convex polytopes only".into(),
        ));
    }
    let shape = |i: usize| {
        shapes[bodies[i].shape as usize]
            .as_ref()
            .expect("checked convex")
    };
    let poses: Vec<parry3d_f64::math::Pose> = bodies.iter().map(|b| parry_pose(&b.pose)).collect();
    let mut wide = Vec::new();
    let mut exact = Vec::new();
    let mut parry_touching = BTreeSet::new();
    let mut parry_depth = std::collections::BTreeMap::new();
    let mut parry_pairs = 0;
    for _ in 0..frames {
        let t = Instant::now();
        let leaves: Vec<Aabb> = (0..bodies.len())
            .map(|i| shape(i).compute_aabb(&poses[i]))
            .collect();
        let bvh = Bvh::from_leaves(BvhBuildStrategy::default(), &leaves);
        let mut pairs = Vec::new();
        bvh.traverse_bvtt_single_tree::<false>(&mut BvhWorkspace::default(), &mut |a, b| {
            pairs.push(if a < b { [a, b] } else { [b, a] });
        });
        wide.push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        parry_touching.clear();
        parry_depth.clear();
        for &[a, b] in &pairs {
            let (ia, ib) = (a as usize, b as usize);
            let c = parry3d_f64::query::contact(&poses[ia], shape(ia), &poses[ib], shape(ib), 0.0)
                .map_err(|e| Error::Bench(format!("parry contact: {e:?}")))?;
            if let Some(c) = c
                && c.dist <= 0.0
            {
                parry_touching.insert([a, b]);
                parry_depth.insert([a, b], -c.dist);
            }
        }
        exact.push(t.elapsed().as_secs_f64());
        parry_pairs = pairs.len();
    }
    figures.parry_ms = [median(wide) * 1e3, median(exact) * 1e3];
    figures.box_pairs = [ours.pairs.len(), parry_pairs];

    // Accuracy on the last frame.
    let ours_touching: BTreeSet<[u32; 2]> = ours
        .contacts
        .iter()
        .filter(|c| c.manifold.min_separation() <= 0.0)
        .map(|c| c.bodies)
        .collect();
    let polytope = |i: usize| match &cpu_world.shapes()[bodies[i].shape as usize] {
        ExactShape::Convex(p) => p.clone(),
        _ => unreachable!("checked convex"),
    };
    let truth: BTreeSet<[u32; 2]> = ours_touching
        .union(&parry_touching)
        .copied()
        .filter(|&[a, b]| {
            let (a, b) = (a as usize, b as usize);
            sat::intersects(&polytope(a), &bodies[a].pose, &polytope(b), &bodies[b].pose)
        })
        .collect();
    figures.touching = [ours_touching.len(), parry_touching.len(), truth.len()];
    figures.missed = [
        truth.difference(&ours_touching).count(),
        truth.difference(&parry_touching).count(),
    ];
    figures.false_touching = [
        ours_touching.difference(&truth).count(),
        parry_touching.difference(&truth).count(),
    ];
    let mut errors: Vec<f64> = ours
        .contacts
        .iter()
        .filter_map(|c| {
            let theirs = parry_depth.get(&c.bodies)?;
            Some((theirs + c.manifold.min_separation().min(0.0)).abs())
        })
        .collect();
    figures.depth_pairs = errors.len();
    errors.sort_by(f64::total_cmp);
    figures.depth_error = [
        errors.last().copied().unwrap_or(0.0),
        errors.get(errors.len() / 2).copied().unwrap_or(0.0),
    ];
    time_of_impact(&mut cpu_world, &shapes, dt * 6.0, &mut figures)?;
    Ok((figures, gpu_back))
}

/// The impacts column: one step of the scene's own motions, proxima's World against a
/// parry3d-f64 pipeline, disagreements settled by sampling.
fn time_of_impact(
    world: &mut World,
    shapes: &[Option<ConvexPolyhedron>],
    dt: f64,
    figures: &mut PeerFigures,
) -> Result<()> {
    use parry3d_f64::query::{NonlinearRigidMotion, cast_shapes_nonlinear};
    let t = Instant::now();
    let ours = world.impacts(dt)?;
    let ours_ms = t.elapsed().as_secs_f64() * 1e3;
    let bodies = world.bodies().to_vec();
    let motions = world.motions(dt)?;
    let shape = |i: usize| {
        shapes[bodies[i].shape as usize]
            .as_ref()
            .expect("checked convex")
    };
    let polytope = |i: usize| match &world.shapes()[bodies[i].shape as usize] {
        ExactShape::Convex(p) => p.clone(),
        _ => unreachable!("checked convex"),
    };
    let t = Instant::now();
    let leaves: Vec<Aabb> = (0..bodies.len())
        .map(|i| {
            shape(i).compute_swept_aabb(
                &parry_pose(&motions[i].start()),
                &parry_pose(&motions[i].end()),
            )
        })
        .collect();
    let bvh = Bvh::from_leaves(BvhBuildStrategy::default(), &leaves);
    let mut pairs = Vec::new();
    bvh.traverse_bvtt_single_tree::<false>(&mut BvhWorkspace::default(), &mut |a, b| {
        pairs.push(if a < b { [a, b] } else { [b, a] });
    });
    let nonlinear = |i: usize| {
        NonlinearRigidMotion::new(
            parry_pose(&motions[i].start()),
            glam::DVec3::ZERO,
            motions[i].linear(),
            motions[i].angular(),
        )
    };
    let mut theirs = std::collections::BTreeMap::new();
    for &[a, b] in &pairs {
        let (ia, ib) = (a as usize, b as usize);
        let hit = cast_shapes_nonlinear(
            &nonlinear(ia),
            shape(ia),
            &nonlinear(ib),
            shape(ib),
            0.0,
            1.0,
            true,
        )
        .map_err(|e| Error::Bench(format!("parry cast: {e:?}")))?;
        if let Some(hit) = hit {
            theirs.insert([a, b], hit.time_of_impact);
        }
    }
    let parry_ms = t.elapsed().as_secs_f64() * 1e3;
    // Pairs already overlapping at the start are contacts, not impacts, on both sides.
    let overlapping = |[a, b]: [u32; 2]| {
        let (a, b) = (a as usize, b as usize);
        sat::intersects(
            &polytope(a),
            &motions[a].start(),
            &polytope(b),
            &motions[b].start(),
        )
    };
    theirs.retain(|&p, _| !overlapping(p));
    let ours_map: std::collections::BTreeMap<[u32; 2], f64> =
        ours.iter().map(|i| (i.bodies, i.output.toi)).collect();
    let sampled = |[a, b]: [u32; 2]| {
        let (a, b) = (a as usize, b as usize);
        (0..=512).any(|k| {
            let s = f64::from(k) / 512.0;
            crate::exact::walk::collide(
                &polytope(a),
                &motions[a].at(s),
                &polytope(b),
                &motions[b].at(s),
            )
        })
    };
    figures.toi_ms = [ours_ms, parry_ms];
    figures.impacts = [ours_map.len(), theirs.len()];
    for (&p, _) in ours_map.iter().filter(|(p, _)| !theirs.contains_key(*p)) {
        if sampled(p) {
            figures.impacts_missed[1] += 1;
        } else {
            figures.impacts_unconfirmed[0] += 1;
        }
    }
    for (&p, _) in theirs.iter().filter(|(p, _)| !ours_map.contains_key(*p)) {
        if sampled(p) {
            figures.impacts_missed[0] += 1;
        } else {
            figures.impacts_unconfirmed[1] += 1;
        }
    }
    figures.toi_difference = ours_map
        .iter()
        .filter_map(|(p, t)| Some((t - theirs.get(p)?).abs()))
        .fold(0.0, f64::max);
    Ok(())
}

impl PeerReport {
    /// The table printed by the command.
    pub fn table(&self) -> String {
        let mut s = format!(
            "pipeline per frame (ms, median of {} frames): bounds+broadphase | contacts; \
             proxima gpu on {}\n",
            self.frames, self.adapter
        );
        s += &format!(
            "{:>9}  {:>19}  {:>19}  {:>19}  {:>17}  {:>22}  {:>21}\n",
            "bodies",
            "proxima gpu",
            "proxima cpu",
            "parry3d-f64",
            "box pairs ours/parry",
            "touching ours/parry/true",
            "missed ours/parry"
        );
        for f in &self.sizes {
            if let Some(e) = &f.error {
                s += &format!("{:>9}  error: {e}\n", f.bodies);
                continue;
            }
            let pair = |v: [f64; 2]| format!("{:>8.2} | {:>8.2}", v[0], v[1]);
            s += &format!(
                "{:>9}  {:>19}  {:>19}  {:>19}  {:>9}/{:>10}  {:>7}/{:>7}/{:>7}  {:>10}/{:>10}\n",
                f.bodies,
                f.gpu_ms.map_or("-".into(), pair),
                pair(f.cpu_ms),
                pair(f.parry_ms),
                f.box_pairs[0],
                f.box_pairs[1],
                f.touching[0],
                f.touching[1],
                f.touching[2],
                f.missed[0],
                f.missed[1],
            );
            s += &format!(
                "{:>9}  time of impact over 6 frames' motion: proxima {:.2} ms, parry3d-f64 {:.2} ms; impacts {}/{}, missed {}/{}, unconfirmed {}/{}, largest toi difference {:.1e}\n",
                "",
                f.toi_ms[0],
                f.toi_ms[1],
                f.impacts[0],
                f.impacts[1],
                f.impacts_missed[0],
                f.impacts_missed[1],
                f.impacts_unconfirmed[0],
                f.impacts_unconfirmed[1],
                f.toi_difference
            );
            if let Some([one, piped]) = f.gpu_frame_ms {
                s += &format!(
                    "{:>9}  proxima gpu whole frame: {one:.2} ms one at a time, {piped:.2} ms pipelined\n",
                    ""
                );
            }
            s += &format!(
                "{:>9}  parry EPA depth vs exact over {} pairs: max {:.2e}, median {:.2e}; falsely touching ours/parry {}/{}\n",
                "",
                f.depth_pairs,
                f.depth_error[0],
                f.depth_error[1],
                f.false_touching[0],
                f.false_touching[1]
            );
        }
        s
    }

    /// A log-log plot of the whole frame per pipeline.
    pub fn svg(&self) -> String {
        let ok = || self.sizes.iter().filter(|f| f.error.is_none());
        let sum = |v: [f64; 2]| v[0] + v[1];
        let mut series = vec![
            Series {
                name: "proxima cpu twins".into(),
                points: ok().map(|f| (f.bodies as f64, sum(f.cpu_ms))).collect(),
            },
            Series {
                name: "parry3d-f64".into(),
                points: ok().map(|f| (f.bodies as f64, sum(f.parry_ms))).collect(),
            },
        ];
        let gpu: Vec<(f64, f64)> = ok()
            .filter_map(|f| Some((f.bodies as f64, sum(f.gpu_ms?))))
            .collect();
        if !gpu.is_empty() {
            series.insert(
                0,
                Series {
                    name: format!("proxima gpu ({})", self.adapter),
                    points: gpu,
                },
            );
        }
        loglog_svg(
            "pipeline frame: broadphase + contacts",
            "bodies",
            "time (ms)",
            &series,
        )
    }
}
