//! The one thing a user drives: shapes registered once, bodies referencing them, poses
//! (and, for impacts, velocities) set each frame, and [`World::step`] returning a
//! [`FrameReport`]: the broadphase pairs, the contact manifolds, the first contacts over
//! the coming step, and the time each stage took.
//!
//! A frame: bounds and broadphase on the GPU (or their CPU twins without an adapter, see
//! [`Pipeline`]), then on all cores the exact stage over the pairs (`narrowphase`): a
//! manifold per touching pair, warm-started from the last frame's features, and the time
//! of impact of every pair whose swept boxes meet.
//!
//! Poses are f64 here; the GPU gets them rounded to f32. The bounds pass's margin
//! (`passes::bounds`, 128 ulps of f32 of each coordinate's scale, of which its own
//! arithmetic uses about 20) also covers that rounding (half an ulp of the position, a
//! few of the rotation), so a box holds its body at the f64 pose too. Each shape's bounds
//! are grown by half the speculative distance, so two bodies closer than it have boxes
//! that meet: no pair within the speculative distance is left out.
//!
//! A renderer that keeps its instance transforms in a wgpu buffer binds it
//! ([`World::bind_pose_buffer`]): each step then gathers the poses on the GPU from it.
//!
//! A GPU that is lost mid-run (driver reset, destroyed device, out of memory) is not the
//! end of the run: the world moves to the CPU twins, runs the frame again there (same
//! pairs) and says so in [`World::fallback_notice`]. A bound pose buffer cannot move with
//! it: then the loss is the error.
//!
//! Frames whose poses are known ahead run pipelined ([`World::step_frames`]): the GPU
//! stages of frame k+1 are in flight while the CPU computes frame k's contacts and
//! impacts (the engine's ring of readback slots holds both frames' results).
//!
//! A GPU frame reads back the broadphase's counter and only the counted pairs (the boxes
//! stay on the device): the pairs the last frame found, and a ninth more, come back with
//! the frame, and a frame that found more copies the rest once it has finished.
//!
//! With [`World::set_depth_estimate`] the frame runs the GPU's sampled depth estimate
//! after the broadphase, and the pairs it proves farther apart than the speculative
//! distance skip the exact stage, and a pair of polytopes that overlaps with no warm
//! start begins its depth walk at the facet the estimate's direction points at.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Instant;

use glam::{DQuat, DVec3, Vec3};

use crate::bodies::{GpuAabb, GpuBody, GpuShapeBounds, Pose};
use crate::broadphase::Choice;
use crate::crowd::{Crowd, Motion};
use crate::exact::advance::{
    ToiOutput, ToiState, apart_throughout, balls_stay_apart, contact_tolerance,
};
use crate::exact::depth::Toward;
use crate::geometry::decompose::{Cache, DecomposeParams};
use crate::geometry::polytope::{round_down, round_up};
use crate::geometry::{ConvexPolytope, HullTree, TriMesh};
use crate::gpu::{ContextOptions, GpuContext};
use crate::motion::{ScrewMotion, step_length};
use crate::narrowphase::{ContactState, ExactBody, ExactShape, Narrowphase, PairContact};
use crate::parallel::{self, par_chunks, par_chunks_mut, par_map};
use crate::passes::broadphase::Method;
use crate::passes::depth::{DepthShapes, check_resolution};
use crate::passes::pose_gather::PoseLayout;
use crate::pipeline::{DeviceChoice, Pipeline};
use crate::profile::{Profile, StageTime};
use crate::scene::Scene;
use crate::shape::ShapeGeometry;
use crate::{Error, Result};

/// A registered shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ShapeId(pub u32);

/// A body.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BodyId(pub u32);

/// Constant velocities of a body over a step (world frame, per second).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Velocity {
    /// Of the body frame's origin.
    pub linear: DVec3,
    /// Axis × radians per second, about the body frame's origin.
    pub angular: DVec3,
}

/// The motions made for the poses counted `at` over a step of `dt`: each body's with the
/// velocity it was made from. A frame asks for the same motions several times (the swept
/// boxes, each impact round, the advance): bodies whose velocity stands are not made again.
/// The table keeps its allocation from frame to frame and its entries are read in place
/// (at a million bodies, making it anew and copying the motions out took more than making
/// them): an entry counts only when made in the table's current generation, which moves
/// on with the poses or the step.
#[derive(Clone, Debug, Default)]
struct MadeMotions {
    at: u64,
    dt: f64,
    generation: u64,
    of: Vec<Made>,
}

/// One body's entry in [`MadeMotions`].
#[derive(Clone, Copy, Debug)]
struct Made {
    generation: u64,
    velocity: Velocity,
    motion: ScrewMotion,
}

impl Default for Made {
    fn default() -> Self {
        Made {
            generation: 0,
            velocity: Velocity::default(),
            motion: ScrewMotion::resting(Pose::IDENTITY),
        }
    }
}

/// The first contact of one pair during the step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Impact {
    /// The bodies (lower index first).
    pub bodies: [u32; 2],
    /// The pieces of non-convex bodies that meet (0 for convex and rounded bodies).
    pub pieces: (u32, u32),
    /// Seconds after the frame's poses.
    pub time: f64,
    /// Conservative advancement's answer (`toi` a fraction of the step): `Hit` with the
    /// points, normal and features, or `Capped` (no contact before `toi`, unknown after).
    pub output: ToiOutput,
}

/// What one frame found.
#[derive(Clone, Debug)]
pub struct FrameReport {
    /// Frame number, from 0.
    pub frame: u64,
    /// Pairs whose boxes overlap, `[a, b]` with `a < b`, sorted.
    pub pairs: Vec<[u32; 2]>,
    /// How many of them the depth estimate proved farther apart than the speculative
    /// distance, so that the exact stage skipped them (0 without the depth stage:
    /// [`World::set_depth_estimate`]).
    pub proved_apart: usize,
    /// A manifold per touching pair (per piece pair of non-convex bodies), in pair order.
    pub contacts: Vec<PairContact>,
    /// First contacts over the step under the bodies' velocities, earliest first (empty
    /// when nothing moves).
    pub impacts: Vec<Impact>,
    /// The broadphase that ran.
    pub broadphase: Option<Method>,
    /// Per-stage timings: the pipeline's stages, then `contacts` and (for a step with a
    /// duration) `impacts`, on the CPU clock.
    pub profile: Profile,
}

/// Shapes, bodies and the pipeline that runs their frames.
#[derive(Debug)]
pub struct World {
    pipeline: Pipeline,
    narrow: Narrowphase,
    /// Each shape's own bounds (before the speculative growth).
    bounds: Vec<GpuShapeBounds>,
    /// Each shape's reach (largest distance of a point from its origin).
    reach: Vec<f64>,
    bodies: Vec<ExactBody>,
    velocities: Vec<Velocity>,
    crowd: Crowd,
    state: ContactState,
    /// Counts the changes of the bodies' poses (set, advanced, read from a pose buffer).
    poses_changed: u64,
    /// The count when the contact state's separations were measured: while it stands,
    /// they hold for the current poses.
    separations_at: Option<u64>,
    /// Motions made for a step, kept while the poses and the step stand (see
    /// [`World::make_motions`]).
    made: MadeMotions,
    speculative: f64,
    frame: u64,
    cache: Cache,
    /// The meshes decomposed so far and their trees: their scaled copies take them.
    decomposed: Vec<(Arc<TriMesh>, Arc<HullTree>)>,
    /// A renderer's instance buffer the poses are read from, and its layout.
    pose_buffer: Option<(wgpu::Buffer, PoseLayout)>,
    /// The depth stage's cube-map resolution, when frames run it, and how many shapes
    /// the pipeline's tables hold.
    depth: Option<(u32, usize)>,
    /// Where the GPU's f32 positions are measured from (see [`World::recenter`]).
    origin: DVec3,
}

impl World {
    /// An empty world on the chosen device (`Auto`: a hardware GPU, or the CPU twins with a
    /// notice when there is none).
    pub fn new(device: DeviceChoice) -> Result<Self> {
        Ok(Self::on(Pipeline::new(device, &ContextOptions::default())?))
    }

    /// An empty world on a renderer's device (its limits and features are respected).
    pub fn on_context(ctx: GpuContext) -> Self {
        Self::on(Pipeline::on_gpu(ctx))
    }

    /// An empty world on a pipeline.
    pub fn on(pipeline: Pipeline) -> Self {
        World {
            pipeline,
            narrow: Narrowphase::default(),
            bounds: Vec::new(),
            reach: Vec::new(),
            bodies: Vec::new(),
            velocities: Vec::new(),
            crowd: Crowd::default(),
            state: ContactState::default(),
            poses_changed: 0,
            separations_at: None,
            made: MadeMotions::default(),
            speculative: 0.0,
            frame: 0,
            cache: Cache::from_env(),
            decomposed: Vec::new(),
            pose_buffer: None,
            depth: None,
            origin: DVec3::ZERO,
        }
    }

    /// The cache non-convex meshes are decomposed through (default: `Cache::from_env`).
    pub fn set_decomposition_cache(&mut self, cache: Cache) {
        self.cache = cache;
    }

    /// The line to show when `Auto` chose the CPU twins.
    pub fn fallback_notice(&self) -> Option<&str> {
        self.pipeline.fallback_notice.as_deref()
    }

    /// The world's pipeline back, when its GPU is wanted elsewhere (`None` on the CPU
    /// twins).
    pub fn into_pipeline(self) -> Option<Pipeline> {
        matches!(self.pipeline.backend(), crate::pipeline::Backend::Gpu(_)).then_some(self.pipeline)
    }

    /// The GPU context the frames run on (`None` on the CPU twins).
    pub fn gpu_context(&self) -> Option<&GpuContext> {
        match self.pipeline.backend() {
            crate::pipeline::Backend::Gpu(engine) => Some(engine.context()),
            crate::pipeline::Backend::Cpu => None,
        }
    }

    /// One line naming the device the wide passes run on.
    pub fn device_name(&self) -> String {
        self.pipeline.device_name()
    }

    /// The broadphase (hash, sweep, or chosen from the first frame's boxes).
    pub fn set_broadphase(&mut self, choice: Choice) {
        self.pipeline.set_broadphase(choice);
    }

    /// Registers a shape: a convex polytope, a sphere, capsule or rounded polytope, or a
    /// closed non-convex mesh (decomposed into a hull tree through the cache; `progress`
    /// hears about a decomposition that has to run).
    pub fn add_shape(
        &mut self,
        geometry: &ShapeGeometry,
        progress: &mut dyn FnMut(&str),
    ) -> Result<ShapeId> {
        let id = self.bounds.len() as u32;
        // The constructors' rules, for shapes built from their public fields.
        match geometry {
            ShapeGeometry::Convex(_) => Ok(()),
            ShapeGeometry::Mesh(m) => m.check(),
            ShapeGeometry::Rounded(r) => r.check(),
        }
        .map_err(|e| match e {
            Error::Geometry(m) => Error::Geometry(format!("shape {id}: {m}")),
            e => e,
        })?;
        // The rule the OBJ loader and a scene's `points` apply, for shapes built in code
        // too: a hull 1e9 from its own origin passed, and its contacts came out 0.1 apart
        // at a speculative distance of 0.
        let points = match geometry {
            ShapeGeometry::Convex(p) => Some(p.vertices()),
            ShapeGeometry::Mesh(m) => Some(&m.vertices[..]),
            ShapeGeometry::Rounded(r) => match &r.core {
                crate::geometry::rounded::Core::Polytope(p) => Some(p.vertices()),
                _ => None,
            },
        };
        if let Some(message) = points.and_then(crate::geometry::far_from_origin) {
            return Err(Error::Geometry(format!("shape {id}: {message}")));
        }
        // Past f32, where the GPU passes hold a shape's bounds, before a mesh is decomposed
        // (a mesh scaled by 1e40 was decomposed and cached, then refused by its bounds).
        if let Some(far) = points
            .and_then(|p| p.iter().map(|v| v.abs().max_element()).reduce(f64::max))
            .filter(|&far| !(far as f32).is_finite())
        {
            return Err(Error::Geometry(format!(
                "shape {id}: its points reach {far:e} from its origin, past f32's range \
                 (±3.4e38) in which the GPU passes hold its bounds: scale it down"
            )));
        }
        let exact = match geometry {
            ShapeGeometry::Convex(p) => ExactShape::Convex(p.clone()),
            ShapeGeometry::Rounded(r) => ExactShape::Rounded(r.clone()),
            ShapeGeometry::Mesh(m) => ExactShape::Tree(self.hull_tree(id, m, progress)?),
        };
        let reach = exact.reach();
        // A decomposed mesh is bounded by its pieces, which may reach past the mesh (a cut
        // piece is scaled to hold what it dropped): a torus's box held its triangles, and
        // a torus resting on a floor by its pieces had no pair with the floor and sank a
        // frame's fall into it.
        let bounds = match &exact {
            ExactShape::Tree(t) => t.hull().gpu_bounds(),
            _ => geometry.gpu_bounds()?,
        };
        bounds.validate(id)?;
        self.narrow.push(exact);
        self.bounds.push(bounds);
        self.reach.push(reach);
        self.crowd.shapes.push(grown(&bounds, self.box_growth()));
        Ok(ShapeId(id))
    }

    /// The hull tree of a non-convex mesh: a mesh decomposed before in this world, scaled
    /// about its origin (a scene's scale variants), takes that tree's pieces scaled;
    /// another is decomposed (through the cache) and kept for the meshes after it. The
    /// decomposition is not scale-invariant to the last voxel, so each variant decomposed
    /// on its own took its own pieces, and 6-7 s each for the bunny.
    fn hull_tree(
        &mut self,
        id: u32,
        mesh: &Arc<TriMesh>,
        progress: &mut dyn FnMut(&str),
    ) -> Result<Arc<HullTree>> {
        // The same mesh again (a scale of exactly 1) shares the tree itself.
        let scaled =
            self.decomposed
                .iter()
                .find_map(|(base, tree)| match mesh.scale_from(base)? {
                    1.0 => Some(tree.clone()),
                    s => tree.scaled(s).ok().map(Arc::new),
                });
        if let Some(tree) = scaled {
            return Ok(tree);
        }
        let tree = HullTree::decompose(mesh, &DecomposeParams::default(), &self.cache, progress)
            .map_err(|e| Error::Geometry(format!("shape {id} cannot be decomposed: {e}")))?;
        let tree = Arc::new(tree);
        self.decomposed.push((mesh.clone(), tree.clone()));
        Ok(tree)
    }

    /// Adds a scene's shapes and bodies (poses and velocities as the scene gives them);
    /// returns the first new body's index.
    pub fn add_scene(&mut self, scene: &Scene, progress: &mut dyn FnMut(&str)) -> Result<u32> {
        let (n, poses, motions) = (
            scene.crowd.bodies.len(),
            scene.poses.len(),
            scene.crowd.motions.len(),
        );
        if poses != n || motions != n {
            return Err(Error::Usage(format!(
                "scene {}: {n} bodies, {poses} poses and {motions} motions; each body needs one \
                 of each",
                scene.path.display()
            )));
        }
        crate::memory::check(
            || format!("scene {}: its {n} bodies", scene.path.display()),
            crate::memory::estimate(self.bodies.len() + n, 0),
        )?;
        let first_shape = self.bounds.len() as u32;
        for (i, g) in scene.geometry.iter().enumerate() {
            // A shape that fails here (a mesh that cannot be decomposed) is named where
            // the scene writes it, and so is a decomposition's progress.
            let at = scene.shape_at.get(i);
            let mut said = |line: &str| match at {
                Some(at) => progress(&format!("scene {}, {at}: {line}", scene.path.display())),
                None => progress(line),
            };
            self.add_shape(g, &mut said)
                .map_err(|e| match scene.shape_at.get(i) {
                    Some(at) => Error::Scene {
                        path: scene.path.clone(),
                        message: format!("{at}: {e}"),
                    },
                    None => e,
                })?;
        }
        let first = self.bodies.len() as u32;
        let bodies = scene.crowd.bodies.iter().zip(&scene.poses);
        for ((body, pose), motion) in bodies.zip(&scene.crowd.motions) {
            let id = self.add_body(ShapeId(first_shape + body.shape), *pose)?;
            self.set_velocity(
                id,
                Velocity {
                    linear: motion.linear.as_dvec3(),
                    angular: motion.angular.as_dvec3(),
                },
            )?;
        }
        Ok(first)
    }

    /// Registers a convex polytope.
    pub fn add_convex(&mut self, polytope: ConvexPolytope) -> Result<ShapeId> {
        self.add_shape(&ShapeGeometry::Convex(Arc::new(polytope)), &mut |_| {})
    }

    /// Adds a body of a registered shape at `pose`.
    pub fn add_body(&mut self, shape: ShapeId, pose: Pose) -> Result<BodyId> {
        let id = self.bodies.len() as u32;
        if shape.0 as usize >= self.bounds.len() {
            return Err(Error::InvalidShape {
                body: id,
                what: format!(
                    "shape {} does not exist ({} shapes)",
                    shape.0,
                    self.bounds.len()
                ),
            });
        }
        let pose = checked(id, pose)?;
        self.bodies.push(ExactBody {
            shape: shape.0,
            pose,
        });
        self.velocities.push(Velocity::default());
        self.crowd
            .bodies
            .push(gpu_body(&pose, shape.0, self.origin));
        self.crowd.motions.push(Motion::default());
        Ok(BodyId(id))
    }

    /// Removes a body. The last body takes its id, as [`Vec::swap_remove`] does: the
    /// answer is that body's old id when one moved (`None` when the removed body was the
    /// last), so a caller's handles can follow it, and a renderer whose pose buffer is
    /// bound moves its instance the same way (body `i` is instance `i`). The warm starts
    /// of the two bodies' pairs are dropped (the moved body's pairs start cold once); every
    /// other pair keeps its own.
    pub fn remove_body(&mut self, body: BodyId) -> Result<Option<BodyId>> {
        let i = self.index(body)?;
        let last = self.bodies.len() - 1;
        self.bodies.swap_remove(i);
        self.velocities.swap_remove(i);
        self.crowd.bodies.swap_remove(i);
        self.crowd.motions.swap_remove(i);
        self.state.forget([i as u32, last as u32]);
        // Motions kept and the contacts' separations were for the old numbering.
        self.poses_changed += 1;
        Ok((i != last).then_some(BodyId(last as u32)))
    }

    /// Number of bodies.
    pub fn len(&self) -> usize {
        self.bodies.len()
    }

    /// True when there are no bodies.
    pub fn is_empty(&self) -> bool {
        self.bodies.is_empty()
    }

    /// Every body's shape and pose.
    pub fn bodies(&self) -> &[ExactBody] {
        &self.bodies
    }

    /// The exact shapes, by shape id.
    pub fn shapes(&self) -> &[ExactShape] {
        self.narrow.shapes()
    }

    /// Whether a contact's bodies (at their poses now) overlap by more than their contact
    /// tolerance ([`contact_tolerance`]): less is a touch, and closing on it an impact at 0.
    pub fn overlaps_past_touch(&self, c: &PairContact) -> bool {
        overlaps_past_touch(&self.reach, &self.bodies, c)
    }

    /// Moves one body. A non-finite pose or a quaternion far from unit length is a named
    /// error and changes nothing.
    pub fn set_pose(&mut self, body: BodyId, pose: Pose) -> Result<()> {
        let i = self.index(body)?;
        let pose = checked(body.0, pose)?;
        self.poses_changed += 1;
        self.bodies[i].pose = pose;
        self.crowd.bodies[i] = gpu_body(&pose, self.bodies[i].shape, self.origin);
        Ok(())
    }

    /// Moves every body (one pose per body, in body order). Every pose is checked first:
    /// one bad pose is a named error and changes nothing.
    pub fn set_poses(&mut self, poses: &[Pose]) -> Result<()> {
        self.one_per_body(poses.len(), "poses")?;
        // On all cores (a crowd's frame moves every body): first every pose checked, so
        // that one bad pose changes nothing, then each set.
        check_all(poses, |i, p| checked(i, *p).map(|_| ()))?;
        let origin = self.origin;
        self.poses_changed += 1;
        // Each body and its GPU twin written in one pass.
        let chunk = parallel::chunk_len(poses.len(), MOTIONS_A_THREAD);
        let parts = self
            .bodies
            .chunks_mut(chunk)
            .zip(self.crowd.bodies.chunks_mut(chunk));
        parallel::on_threads(parts.enumerate().collect(), |(c, (bodies, gpus))| {
            for (k, (body, gpu)) in bodies.iter_mut().zip(gpus).enumerate() {
                let i = c * chunk + k;
                body.pose = checked(i as u32, poses[i])?;
                *gpu = gpu_body(&body.pose, body.shape, origin);
            }
            Ok(())
        })
        .into_iter()
        .collect()
    }

    /// `given` items, one per body, or the named error.
    fn one_per_body(&self, given: usize, what: &str) -> Result<()> {
        if given == self.bodies.len() {
            Ok(())
        } else {
            Err(Error::Usage(format!(
                "{given} {what} for {} bodies",
                self.bodies.len()
            )))
        }
    }

    /// Moves the origin the GPU's f32 positions are measured from to the middle of the
    /// bodies when they have strayed from it by more than [`RECENTER_BEYOND`] times their
    /// own extent (a floating origin), and repacks them. The bounds pass widens each box by 2^-17 of its
    /// coordinates (what f32 rounding asks), so far from the origin small bodies got boxes
    /// wider than the bodies by that much: 1e-3 boxes around 1e6 were 15 units wide and
    /// every pair of 2,000 of them was a candidate. Measured from the middle of the bodies,
    /// the widening is relative to the world's own extent. The exact stage does not depend
    /// on the origin (the candidate pairs only through the widening).
    fn recenter(&mut self) {
        if let Some(middle) =
            floating_origin(self.bodies.iter().map(|b| b.pose.translation), self.origin)
        {
            self.repack(middle);
        }
    }

    /// A frame's error, where it names a body whose position the GPU could not hold: each
    /// pose is within ±1e75, but the passes hold positions about the floating origin in
    /// f32, and bodies 2e39 apart were refused as "position [-inf, ...] is not finite", a
    /// position nobody gave. Asked only on the way out of a failed frame.
    fn explain_lost_position(&self, e: Error) -> Error {
        // Bodies so far out that the boxes' growth by the contact tolerance there (128
        // ulps of the origin's coordinates) is past f32: it was "shape 0's bounds are not
        // finite ... the shape is too large; scale the scene down", of a unit cube.
        let growth = self.box_growth();
        if !(growth as f32).is_finite() {
            return Error::Usage(format!(
                "the bodies lie {:.3e} from the world origin, where their contact tolerance \
                 ({growth:.1e}: 128 ulps of the coordinates) is past f32's range (±3.4e38), \
                 in which the GPU passes grow their boxes by it: keep a world's bodies within \
                 about 1e52 of the origin",
                self.origin.abs().max_element()
            ));
        }
        let Error::InvalidPose { body, .. } = &e else {
            return e;
        };
        let (Some(exact), Some(gpu)) = (
            self.bodies.get(*body as usize),
            self.crowd.bodies.get(*body as usize),
        ) else {
            return e;
        };
        let at = exact.pose.translation;
        if !at.is_finite() || gpu.position.iter().all(|x| x.is_finite()) {
            return e;
        }
        Error::InvalidPose {
            body: *body,
            what: format!(
                "position {at} lies {:.3e} from the world's floating origin {}, past f32's range \
                 (±3.4e38) in which the GPU passes hold positions about it: a world's bodies \
                 must lie within about 1e38 of one another",
                (at - self.origin).abs().max_element(),
                self.origin
            ),
        }
    }

    /// Measures the GPU's positions from `origin` from now on, every body repacked.
    fn repack(&mut self, origin: DVec3) {
        self.origin = origin;
        for (body, gpu) in self.bodies.iter().zip(&mut self.crowd.bodies) {
            *gpu = gpu_body(&body.pose, body.shape, origin);
        }
        self.regrow_shapes();
    }

    /// Reads the poses from a renderer's own instance buffer from now on: each step
    /// gathers them on the GPU (`passes::pose_gather`; nothing is uploaded from the CPU)
    /// and brings the table back for the exact stage, so [`World::bodies`] shows the poses
    /// the step used. Body `i` is instance `i`; `layout` says where its position (3 × f32)
    /// and rotation (a quaternion x, y, z, w, or a rotation matrix's columns:
    /// [`PoseLayout::model_matrix`]) lie. The buffer must belong to the world's device,
    /// have `STORAGE` usage and hold an instance per body: anything else is a named error,
    /// here and at every step (bodies may be added later), as is a matrix that is not a
    /// rotation or a quaternion far from unit length. (A buffer of another device of the
    /// same wgpu instance is wgpu's error at the step; one of another instance cannot be
    /// told apart by wgpu's handles.) Poses set on the CPU are overwritten by the next
    /// step's.
    pub fn bind_pose_buffer(&mut self, buffer: &wgpu::Buffer, layout: PoseLayout) -> Result<()> {
        if self.gpu_context().is_none() {
            return Err(Error::Usage(
                "a renderer's pose buffer needs the GPU path; this world runs the CPU twins".into(),
            ));
        }
        layout.check(buffer.size(), buffer.usage(), self.bodies.len())?;
        self.pose_buffer = Some((buffer.clone(), layout));
        // The renderer's positions are its own, measured from the world's origin.
        self.repack(DVec3::ZERO);
        Ok(())
    }

    /// Goes back to poses set on the CPU (the last step's gathered poses stay).
    pub fn unbind_pose_buffer(&mut self) {
        self.pose_buffer = None;
    }

    /// Sets a body's velocities (for the impacts of the coming steps).
    pub fn set_velocity(&mut self, body: BodyId, velocity: Velocity) -> Result<()> {
        let i = self.index(body)?;
        finite(body.0, &velocity)?;
        self.velocities[i] = velocity;
        Ok(())
    }

    /// Sets every body's velocities (one per body, in body order). Every velocity is
    /// checked first: one that is not finite is a named error and changes nothing.
    pub fn set_velocities(&mut self, velocities: &[Velocity]) -> Result<()> {
        self.one_per_body(velocities.len(), "velocities")?;
        // On all cores, as the poses are: every velocity checked first, so that one bad
        // velocity changes nothing, then each copied.
        check_all(velocities, finite)?;
        par_chunks_mut(&mut self.velocities, MOTIONS_A_THREAD, |offset, part| {
            part.copy_from_slice(&velocities[offset..offset + part.len()]);
            Ok(())
        })
    }

    /// Every body's velocities, in body order.
    pub fn velocities(&self) -> &[Velocity] {
        &self.velocities
    }

    /// A body's velocities.
    pub fn velocity(&self, body: BodyId) -> Result<Velocity> {
        Ok(self.velocities[self.index(body)?])
    }

    /// Contacts are reported for pairs up to this far apart (default 0: touching or
    /// overlapping only); their points carry a positive separation.
    pub fn set_speculative(&mut self, distance: f64) -> Result<()> {
        // Boxes are grown by half of it in f32: 3.4e38 made infinite boxes, which the CPU
        // twin refused at the next step and the GPU did not.
        if !(distance.is_finite() && (0.0..=MAX_SPECULATIVE).contains(&distance)) {
            return Err(Error::Usage(format!(
                "the speculative distance must be finite, non-negative and at most \
                 {MAX_SPECULATIVE:e} (the boxes grown by half of it are held in f32), got \
                 {distance:e}"
            )));
        }
        let growth = self.box_growth_with(distance);
        if let Some(i) = (0..self.bounds.len())
            .find(|&i| grown(&self.bounds[i], growth).validate(i as u32).is_err())
        {
            return Err(Error::Usage(format!(
                "the speculative distance {distance:e} grows shape {i}'s bounds past f32's range \
                 (±3.4e38), in which the GPU passes hold them"
            )));
        }
        self.speculative = distance;
        self.regrow_shapes();
        Ok(())
    }

    /// The distance two bodies' boxes are grown to meet across: the speculative distance,
    /// and the part of the contact tolerance (`advance::contact_tolerance`: at least 64
    /// ulps of the pair's largest coordinate) that the GPU's boxes, measured from the
    /// floating origin, do not cover. Their margin covers 2^-17 of the coordinates from
    /// the origin, far more than the tolerance's share of them; of the origin's own
    /// coordinates they know nothing, so twice the tolerance's 64 ulps of those is added
    /// (boxes 1e-4 wide at 1e9, 1.7e-8 apart and in contact, had boxes that missed).
    fn box_growth(&self) -> f64 {
        self.box_growth_with(self.speculative)
    }

    /// [`World::box_growth`] with this speculative distance.
    fn box_growth_with(&self, speculative: f64) -> f64 {
        speculative + 128.0 * f64::EPSILON * self.origin.abs().max_element()
    }

    /// Every shape's GPU bounds grown by [`World::box_growth`].
    fn regrow_shapes(&mut self) {
        let growth = self.box_growth();
        self.crowd.shapes = self.bounds.iter().map(|b| grown(b, growth)).collect();
    }

    /// Runs the sampled depth estimate after the broadphase in every frame (a k × k cube
    /// map per face, [`crate::passes::depth::DEFAULT_K`] a good start; `None`, the default,
    /// turns it off): on the GPU straight from the broadphase's buffers, or on the CPU
    /// twin. A pair it proves farther apart than the speculative distance (its sampled
    /// separation, less the estimate's rounding allowance and the poses' rounding to f32)
    /// skips the exact stage: it has no contact. Each shape enters as a convex polytope
    /// that holds it ([`ExactShape::outer_hull`]), so the proof holds for non-convex and
    /// curved bodies too. Worth it where the GPU is fast and many box pairs are apart;
    /// on a software adapter it costs more than it saves.
    pub fn set_depth_estimate(&mut self, k: Option<u32>) -> Result<()> {
        if let Some(k) = k {
            check_resolution(k)?;
        }
        self.depth = k.map(|k| (k, usize::MAX));
        if k.is_none() {
            self.pipeline.set_depth_estimate(None)?;
        }
        self.refresh_depth()
    }

    /// The depth estimate's resolution, when it runs ([`World::set_depth_estimate`]).
    pub fn depth_estimate(&self) -> Option<u32> {
        self.depth.map(|(k, _)| k)
    }

    /// Gives the pipeline depth tables for every registered shape (shapes added since the
    /// last frame included).
    fn refresh_depth(&mut self) -> Result<()> {
        let shapes = self.narrow.shapes();
        let Some((k, covered)) = self.depth else {
            return Ok(());
        };
        if covered == shapes.len() || shapes.is_empty() {
            return Ok(());
        }
        let hulls = shapes
            .iter()
            .enumerate()
            .map(|(i, s)| {
                s.outer_hull()
                    .map_err(|e| Error::Geometry(format!("shape {i}: no outer hull: {e}")))
            })
            .collect::<Result<Vec<_>>>()?;
        self.pipeline.set_depth_estimate(Some((
            DepthShapes::new(hulls.iter().map(AsRef::as_ref))?,
            k,
        )))?;
        self.depth = Some((k, shapes.len()));
        Ok(())
    }

    /// Runs one frame on the current poses: the pairs, a manifold per touching pair, and
    /// the first contacts over the next `dt` seconds under the bodies' velocities (`dt` 0:
    /// no impacts). Bodies do not move: [`World::advance`] moves them.
    pub fn step(&mut self, dt: f64) -> Result<FrameReport> {
        step_length(dt)?;
        self.refresh_depth()?;
        let frame = match &self.pose_buffer {
            Some((buffer, layout)) => {
                let (frame, gathered) =
                    self.pipeline.frame_gathered(&self.crowd, buffer, *layout)?;
                self.poses_changed += 1;
                for (i, (body, gpu)) in self.bodies.iter_mut().zip(&gathered).enumerate() {
                    // Checked as written, before it is made unit: a quaternion far
                    // from unit length is the one rule's named error (it was made unit
                    // without a word). The pose is then the one the CPU twin reads.
                    let written = Pose::new(
                        DVec3::from_array(gpu.position.map(f64::from)),
                        DQuat::from_array(gpu.rotation.map(f64::from)),
                    );
                    checked(i as u32, written)?;
                    body.pose = checked(i as u32, Pose::from_gpu(gpu))?;
                }
                self.crowd.bodies = gathered;
                frame
            }
            None => {
                self.recenter();
                let frame = self.pipeline.frame(&self.crowd);
                self.or_on_cpu(frame)?
            }
        };
        let bodies = std::mem::take(&mut self.bodies);
        let report = self.exact_stage(frame, &bodies, self.poses_changed, dt);
        self.bodies = bodies;
        report
    }

    /// Runs frames whose poses are known ahead (an animation, a replay, a renderer's next
    /// frame), overlapping the GPU stages of each frame with the CPU exact stage of the one
    /// before: frame k+1's bounds and broadphase are submitted before frame k's contacts
    /// and impacts are computed. `poses` yields one pose per body per frame; `each` gets
    /// every frame's report in order, as [`World::step`] would give it, with one more
    /// stage, `gpu wait`: how long the CPU waited for the frame's GPU stages (near zero
    /// once the two overlap). Returns the number of frames. Not with a bound pose buffer
    /// (its poses are the renderer's, one frame at a time).
    pub fn step_frames<I>(
        &mut self,
        poses: I,
        dt: f64,
        mut each: impl FnMut(FrameReport) -> Result<()>,
    ) -> Result<u64>
    where
        I: IntoIterator,
        I::Item: AsRef<[Pose]>,
    {
        step_length(dt)?;
        if self.pose_buffer.is_some() {
            return Err(Error::Usage(
                "step_frames takes its poses from the caller; unbind the pose buffer first".into(),
            ));
        }
        self.refresh_depth()?;
        let mut poses = poses.into_iter();
        let Some(first) = poses.next() else {
            return Ok(0);
        };
        self.set_poses(first.as_ref()).map_err(|e| e.in_frame(0))?;
        let mut flight = self.submit_or_on_cpu()?;
        let mut count = 0;
        loop {
            let t = Instant::now();
            let frame = self.pipeline.collect(&self.crowd, flight);
            let mut frame = self.or_on_cpu(frame)?;
            frame.profile.stages.push(StageTime {
                name: "gpu wait",
                seconds: t.elapsed().as_secs_f64(),
            });
            // This frame's poses; the next frame's go to the GPU before the exact stage.
            let (bodies, at) = (self.bodies.clone(), self.poses_changed);
            // Refused poses for the next frame end the run after this frame is reported
            // (it was lost with them), with an error naming the frame.
            let next = match poses.next() {
                Some(p) => match self.set_poses(p.as_ref()) {
                    Ok(()) => Some(self.submit_or_on_cpu()?),
                    Err(e) => {
                        each(self.exact_stage(frame, &bodies, at, dt)?)?;
                        return Err(e.in_frame(count + 1));
                    }
                },
                None => None,
            };
            each(self.exact_stage(frame, &bodies, at, dt)?)?;
            count += 1;
            match next {
                Some(f) => flight = f,
                None => return Ok(count),
            }
        }
    }

    /// A frame's outcome, or, when the GPU is gone (lost, out of memory), the same frame
    /// on the CPU twins, which run every later frame too.
    fn or_on_cpu(
        &mut self,
        frame: Result<crate::frame::FrameResult>,
    ) -> Result<crate::frame::FrameResult> {
        let frame = match frame {
            Err(e) if self.pipeline.gpu_gone(&e) => {
                self.pipeline.fall_back_to_cpu(&e);
                self.pipeline.frame(&self.crowd)
            }
            other => other,
        };
        frame.map_err(|e| self.explain_lost_position(e))
    }

    /// Submits the current poses' frame, on the CPU twins when the GPU is gone.
    fn submit_or_on_cpu(&mut self) -> Result<crate::pipeline::InFlight> {
        self.recenter();
        match self.pipeline.submit(&self.crowd) {
            Err(e) if self.pipeline.gpu_gone(&e) => {
                self.pipeline.fall_back_to_cpu(&e);
                self.pipeline.submit(&self.crowd)
            }
            other => other,
        }
    }

    /// The CPU exact stage of a frame of `bodies`: contacts, then impacts over `dt`.
    /// The frame's contacts and impacts; `bodies` are the poses as they stood when
    /// `poses_changed` had the count `at`.
    fn exact_stage(
        &mut self,
        frame: crate::frame::FrameResult,
        bodies: &[ExactBody],
        at: u64,
        dt: f64,
    ) -> Result<FrameReport> {
        // Each pair keeps a warm start and may have a manifold: a frame whose pairs would
        // take more memory than the machine has is refused before they are made.
        crate::memory::check(
            || {
                format!(
                    "frame {}'s {} pairs among {} bodies",
                    self.frame,
                    frame.pairs.len(),
                    bodies.len()
                )
            },
            crate::memory::estimate(bodies.len(), frame.pairs.len()),
        )?;
        let t = Instant::now();
        let near = self.not_proved_apart(&frame, bodies);
        let mut profile = frame.profile;
        let skipped = near
            .as_ref()
            .map_or(0, |(p, _)| frame.pairs.len() - p.len());
        let contacts = self.narrow.contacts(
            bodies,
            near.as_ref().map_or(&frame.pairs, |(p, _)| p),
            near.as_ref().map(|(_, t)| t.as_slice()),
            self.speculative,
            &mut self.state,
        )?;
        self.separations_at = Some(at);
        profile.stages.push(StageTime {
            name: "contacts",
            seconds: t.elapsed().as_secs_f64(),
        });
        let t = Instant::now();
        // A pair that overlaps now by more than its contact tolerance has no first contact
        // ahead: no need to advance it. Within the tolerance the bodies touch (a crate
        // written in decimals on a floor is 2.8e-17 into it), and closing is an impact at 0,
        // as `impacts` says: taking every overlap as past touching lost those (a crate
        // pushed down into the floor it rested on, a row of crates on a 0.1 grid pushed
        // together). The set is made when the first candidate asks (a world at rest has
        // none, and spent 0.4-0.6 s of a 6 s frame on it at 1M bodies).
        let overlapping = std::sync::OnceLock::new();
        let reach = self.reach.clone();
        let impacts = self.impacts_of(bodies, at, dt, |a, b| {
            !overlapping
                .get_or_init(|| {
                    contacts
                        .iter()
                        .filter(|c| overlaps_past_touch(&reach, bodies, c))
                        .map(|c| c.bodies)
                        .collect::<HashSet<[u32; 2]>>()
                })
                .contains(&[a, b])
        })?;
        if dt > 0.0 {
            profile.stages.push(StageTime {
                name: "impacts",
                seconds: t.elapsed().as_secs_f64(),
            });
        }
        let report = FrameReport {
            frame: self.frame,
            pairs: frame.pairs,
            proved_apart: skipped,
            contacts,
            impacts,
            broadphase: frame.broadphase,
            profile,
        };
        self.frame += 1;
        Ok(report)
    }

    /// The frame's pairs less those its depth estimates prove farther apart than the
    /// speculative distance, each with its estimate's direction, where a depth walk with
    /// no warm start begins (`None` when the frame has no estimates). An estimate's
    /// sampled s < 0 is a gap between the bodies' projections on its direction, so the
    /// bodies are at least −s − slack apart at the f32 poses the GPU saw; the f64 poses
    /// differ from those by rounding (half an f32 ulp of each coordinate, a few of the
    /// rotation: under 2^−20 of the coordinates and reaches; that allowance also exceeds
    /// every pair's contact tolerance, below which a pair has a manifold whatever the
    /// speculative distance).
    fn not_proved_apart(
        &self,
        frame: &crate::frame::FrameResult,
        bodies: &[ExactBody],
    ) -> Option<(Vec<[u32; 2]>, Vec<Toward>)> {
        if frame.estimates.len() != frame.pairs.len() || frame.pairs.is_empty() {
            return None;
        }
        let shapes = self.narrow.shapes();
        let scale = |b: &ExactBody| {
            b.pose.translation.abs().max_element() + shapes[b.shape as usize].reach()
        };
        Some(
            frame
                .pairs
                .iter()
                .zip(&frame.estimates)
                .filter(|&(&[a, b], e)| {
                    let rounding = (scale(&bodies[a as usize]) + scale(&bodies[b as usize]))
                        / f64::from(1u32 << 20);
                    let gap = -f64::from(e.depth) - f64::from(e.slack) - rounding;
                    !(e.separated != 0 && gap > self.speculative)
                })
                .map(|(&p, e)| {
                    let toward = Toward {
                        normal: Vec3::from(e.normal).as_dvec3(),
                        vertices: (e.witness_a, e.witness_b),
                    };
                    (p, toward)
                })
                .unzip(),
        )
    }

    /// Moves every body along its velocities for `dt` seconds (a screw motion: the origin
    /// on a line, the rotation at constant angular velocity).
    pub fn advance(&mut self, dt: f64) -> Result<()> {
        step_length(dt)?;
        let bodies = std::mem::take(&mut self.bodies);
        let made = self.make_motions(&bodies, self.poses_changed, dt, None);
        self.bodies = bodies;
        made?;
        let ends: Vec<Pose> = par_map(&self.made.of, MOTIONS_A_THREAD, |_, m| m.motion.end());
        self.set_poses(&ends)
    }

    /// Each body's motion over the next `dt` seconds.
    pub fn motions(&self, dt: f64) -> Result<Vec<ScrewMotion>> {
        step_length(dt)?;
        self.motions_of(&self.bodies, dt)
    }

    fn motions_of(&self, bodies: &[ExactBody], dt: f64) -> Result<Vec<ScrewMotion>> {
        par_map(bodies, MOTIONS_A_THREAD, |i, b| {
            motion_of(i, b, &self.velocities[i], dt)
        })
        .into_iter()
        .collect()
    }

    /// Makes the motions over `dt` of the bodies `which` (all of them for `None`) at the
    /// poses `bodies` counted `at` ([`World::poses_changed`]) in the table, on all cores,
    /// where not made already for these poses, this step and the body's velocity now: the
    /// same motions [`motion_of`] makes. They are read from `self.made.of` in place.
    fn make_motions(
        &mut self,
        bodies: &[ExactBody],
        at: u64,
        dt: f64,
        which: Option<&[usize]>,
    ) -> Result<()> {
        let made = &mut self.made;
        if made.at != at || made.dt != dt || made.of.len() != bodies.len() || made.generation == 0 {
            made.at = at;
            made.dt = dt;
            made.generation += 1;
            made.of.resize(bodies.len(), Made::default());
        }
        let generation = made.generation;
        let velocities = &self.velocities;
        let stale = |i: usize, m: &Made| m.generation != generation || m.velocity != velocities[i];
        let fresh = |i: usize| -> Result<Made> {
            Ok(Made {
                generation,
                velocity: velocities[i],
                motion: motion_of(i, &bodies[i], &velocities[i], dt)?,
            })
        };
        match which {
            // Every body: each thread makes its run of the table in place.
            None => par_chunks_mut(&mut made.of, MOTIONS_A_THREAD, |offset, part| {
                for (k, m) in part.iter_mut().enumerate() {
                    let i = offset + k;
                    if stale(i, m) {
                        *m = fresh(i)?;
                    }
                }
                Ok(())
            }),
            // A few bodies (a round of impacts after some stopped): the stale ones made on
            // all cores, then written in.
            Some(which) => {
                let table = &made.of;
                let stale: Vec<usize> = par_chunks(which, MOTIONS_A_THREAD, |_, part| {
                    part.iter()
                        .copied()
                        .filter(|&i| stale(i, &table[i]))
                        .collect()
                });
                let made_now = par_map(&stale, MOTIONS_A_THREAD, |_, &i| fresh(i));
                for (&i, m) in stale.iter().zip(made_now) {
                    made.of[i] = m?;
                }
                Ok(())
            }
        }
    }

    /// First contacts over the next `dt` under the current velocities, earliest first:
    /// swept boxes, the broadphase over them (on the GPU, or the CPU twin), then
    /// conservative advancement of every candidate pair on all cores. Pairs that overlap at
    /// the start are not impacts (the contacts report them), nor are bodies (or pieces of
    /// non-convex ones) touching at the start that stay in that contact or part
    /// ([`crate::exact::advance::holds_or_parts`]: a crate sliding on a floor or lifting
    /// off it); touching bodies that close are, at 0.
    pub fn impacts(&mut self, dt: f64) -> Result<Vec<Impact>> {
        self.impacts_where(dt, |_, _| true)
    }

    /// [`World::impacts`] over the candidate pairs `keep` accepts (bodies `a < b`).
    pub fn impacts_where(
        &mut self,
        dt: f64,
        keep: impl Fn(u32, u32) -> bool + Sync,
    ) -> Result<Vec<Impact>> {
        step_length(dt)?;
        let bodies = std::mem::take(&mut self.bodies);
        let impacts = self.impacts_of(&bodies, self.poses_changed, dt, keep);
        self.bodies = bodies;
        impacts
    }

    /// Impacts of `bodies` (the world's shapes at the poses counted `at`) under the
    /// velocities.
    fn impacts_of(
        &mut self,
        bodies: &[ExactBody],
        at: u64,
        dt: f64,
        keep: impl Fn(u32, u32) -> bool + Sync,
    ) -> Result<Vec<Impact>> {
        let mut candidates = self.candidates_of(bodies, at, dt)?;
        candidates.retain(|&[a, b]| keep(a, b));
        self.advance_pairs(bodies, at, dt, &candidates)
    }

    /// The pairs whose swept boxes over the next `dt` meet: every pair that can touch
    /// during the step under the current velocities. A body whose velocity is then lowered
    /// to zero only shrinks its swept box, so these pairs still hold every candidate.
    pub fn impact_candidates(&mut self, dt: f64) -> Result<Vec<[u32; 2]>> {
        step_length(dt)?;
        let bodies = std::mem::take(&mut self.bodies);
        let found = self.candidates_of(&bodies, self.poses_changed, dt);
        self.bodies = bodies;
        found
    }

    /// [`World::impacts`] over the given pairs (bodies `a < b`) only.
    pub fn impacts_among(&mut self, dt: f64, pairs: &[[u32; 2]]) -> Result<Vec<Impact>> {
        step_length(dt)?;
        let bodies = std::mem::take(&mut self.bodies);
        let found = self.advance_pairs(&bodies, self.poses_changed, dt, pairs);
        self.bodies = bodies;
        found
    }

    /// Swept boxes and their pairs, on the GPU (or its CPU twin).
    fn candidates_of(&mut self, bodies: &[ExactBody], at: u64, dt: f64) -> Result<Vec<[u32; 2]>> {
        if dt == 0.0 || !self.moving() {
            return Ok(Vec::new());
        }
        self.make_motions(bodies, at, dt, None)?;
        let made = &self.made.of;
        // The boxes only meet one another: measured from the world's origin, or from the
        // middle of these bodies where they have strayed from it (impacts asked before
        // any frame ran, or of other poses).
        let origin = floating_origin(bodies.iter().map(|b| b.pose.translation), self.origin)
            .unwrap_or(self.origin);
        // Each body's box, on all cores.
        let boxes: Vec<GpuAabb> = par_map(bodies, MOTIONS_A_THREAD, |i, b| {
            let shape = b.shape as usize;
            swept_box(
                &self.bounds[shape],
                self.reach[shape],
                &made[i].motion,
                origin,
            )
        });
        // A box past f32 is the motion's, named as such (a velocity of 1e40 read as a box
        // the broadphase could not take).
        if let Some(i) = boxes
            .iter()
            .position(|b| !b.min.iter().chain(&b.max).all(|x| x.is_finite()))
        {
            let motion = &made[i].motion;
            return Err(Error::Usage(format!(
                "body {i}: its motion over the step of {dt:e} (from {} to {}) sweeps a box past \
                 f32's range (±3.4e38) from the world's origin, in which the broadphase holds \
                 the swept boxes: its velocity is too large for the step",
                motion.start().translation,
                motion.end().translation
            )));
        }
        match self.pipeline.box_pairs(&boxes) {
            Err(e) if self.pipeline.gpu_gone(&e) => {
                self.pipeline.fall_back_to_cpu(&e);
                self.pipeline.box_pairs(&boxes)
            }
            other => other,
        }
    }

    fn moving(&self) -> bool {
        self.velocities
            .iter()
            .any(|v| v.linear != DVec3::ZERO || v.angular != DVec3::ZERO)
    }

    /// Conservative advancement of `pairs` of `bodies` (the poses counted `at`) over the
    /// next `dt`, on all cores: the hits and capped runs, earliest first.
    fn advance_pairs(
        &mut self,
        bodies: &[ExactBody],
        at: u64,
        dt: f64,
        pairs: &[[u32; 2]],
    ) -> Result<Vec<Impact>> {
        for &[a, b] in pairs {
            // As every pair is given and reported: [0, 0] answered nothing, and [1, 0]
            // an impact whose bodies were not lower index first.
            if a >= b {
                return Err(Error::Usage(format!(
                    "impacts: pair [{a}, {b}] must name two bodies, the lower index first"
                )));
            }
            if b as usize >= bodies.len() {
                let has = match bodies.len() {
                    0 => "no bodies".to_string(),
                    n => format!("{n} (ids 0 to {})", n - 1),
                };
                return Err(Error::Usage(format!(
                    "impacts: pair [{a}, {b}] names body {b}, and the world has {has}"
                )));
            }
        }
        // Each pair once: a pair given twice was reported twice. The broadphase's pairs come
        // sorted and are checked where they lie; others are sorted in a copy.
        let sorted: std::borrow::Cow<[[u32; 2]]> = if pairs.is_sorted() {
            pairs.into()
        } else {
            let mut copy = pairs.to_vec();
            copy.sort_unstable();
            copy.into()
        };
        if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
            let [a, b] = w[0];
            return Err(Error::Usage(format!(
                "impacts: pair [{a}, {b}] is given more than once"
            )));
        }
        if dt == 0.0 || !self.moving() || pairs.is_empty() {
            return Ok(Vec::new());
        }
        // The motions of the bodies the pairs name only (a few pairs of a large world are
        // asked again after some bodies stop).
        let mut seen = vec![false; bodies.len()];
        let mut named = Vec::new();
        for &[a, b] in pairs {
            for i in [a as usize, b as usize] {
                if !seen[i] {
                    seen[i] = true;
                    named.push(i);
                }
            }
        }
        self.make_motions(bodies, at, dt, Some(&named))?;
        let made = &self.made.of;
        // The contacts' separations hold for these poses: a pair they show apart by more
        // than its bodies can approach over the step needs no walk.
        let separations = self.separations_at == Some(at);
        let motion = |i: u32| &made[i as usize].motion;
        let (narrow, shapes) = (&self.narrow, self.narrow.shapes());
        // Each thread walks its run of the (sorted) pairs and of the held ones together,
        // and keeps only the impacts.
        let mut impacts: Vec<Impact> = par_chunks(pairs, PAIRS_A_THREAD, |offset, part| {
            let mut held = self.state.cursor();
            let mut found = Vec::new();
            for (k, &[a, b]) in part.iter().enumerate() {
                narrow.prefetch_pair(bodies, pairs.get(offset + k + 1));
                let (ba, bb) = (&bodies[a as usize], &bodies[b as usize]);
                let (sa, sb) = (&shapes[ba.shape as usize], &shapes[bb.shape as usize]);
                let (ma, mb) = (motion(a), motion(b));
                // Only contacts are asked for: a pair whose balls stay apart is no walk's.
                if balls_stay_apart((sa.reach(), ma), (sb.reach(), mb)) {
                    continue;
                }
                if separations
                    && let Some(d) = held.separation([a, b])
                    && apart_throughout(d, (sa.reach(), ma), (sb.reach(), mb))
                {
                    continue;
                }
                // Bodies held in contact from the start (a crate sliding on a floor) are
                // the contacts', not an impact at 0: the narrowphase answers new contacts.
                let (output, pieces) =
                    narrow.time_of_impact(sa, *ma, sb, *mb, held.walk_start([a, b]));
                if matches!(output.state, ToiState::Hit | ToiState::Capped) {
                    found.push(Impact {
                        bodies: [a, b],
                        pieces,
                        time: output.toi * dt,
                        output,
                    });
                }
            }
            found
        });
        impacts.sort_by(|x, y| x.time.total_cmp(&y.time).then(x.bodies.cmp(&y.bodies)));
        Ok(impacts)
    }

    fn index(&self, body: BodyId) -> Result<usize> {
        let i = body.0 as usize;
        if i >= self.bodies.len() {
            return Err(Error::Usage(format!(
                "body {} does not exist ({} bodies)",
                body.0,
                self.bodies.len()
            )));
        }
        Ok(i)
    }
}

/// The largest speculative distance ([`World::set_speculative`]).
pub const MAX_SPECULATIVE: f64 = 1e36;

/// `velocity` of `body` when it is finite, else the named error.
fn finite(body: u32, velocity: &Velocity) -> Result<()> {
    if velocity.linear.is_finite() && velocity.angular.is_finite() {
        Ok(())
    } else {
        Err(Error::Motion(format!(
            "body {body}: velocity {} / {} is not finite",
            velocity.linear, velocity.angular
        )))
    }
}

/// A body's pose the exact stage can use ([`Pose::checked`]), or the error naming the body.
fn checked(body: u32, pose: Pose) -> Result<Pose> {
    pose.checked().map_err(|fault| Error::InvalidPose {
        body,
        what: fault.to_string(),
    })
}

/// How far (in the bodies' own extent) their middle may stray from the origin of the
/// GPU's positions before the origin moves to it: the bounds pass's widening, 2^-17 of the
/// coordinates, then stays below 2^-11 of the extent, and a world about the origin keeps
/// the very positions it was given (a renderer's pose buffer is read as it is).
const RECENTER_BEYOND: f64 = 64.0;

/// The middle of `positions` when it has strayed from `origin` by more than
/// [`RECENTER_BEYOND`] times their extent (the origin to measure them from instead), or
/// `None` (keep `origin`; also for no positions).
fn floating_origin(positions: impl Iterator<Item = DVec3>, origin: DVec3) -> Option<DVec3> {
    let (lo, hi) = positions.fold(None, |acc: Option<(DVec3, DVec3)>, p| {
        Some(acc.map_or((p, p), |(lo, hi)| (lo.min(p), hi.max(p))))
    })?;
    let (middle, extent) = ((lo + hi) * 0.5, (hi - lo).max_element());
    ((middle - origin).abs().max_element() > RECENTER_BEYOND * extent).then_some(middle)
}

/// A body for the GPU passes: its position measured from `origin`, in f32.
fn gpu_body(pose: &Pose, shape: u32, origin: DVec3) -> GpuBody {
    GpuBody::new(
        (pose.translation - origin).as_vec3(),
        pose.rotation.as_quat(),
        shape,
    )
}

/// Bounds grown by half of `distance` (rounded up).
fn grown(b: &GpuShapeBounds, distance: f64) -> GpuShapeBounds {
    if distance == 0.0 {
        return *b;
    }
    let half = DVec3::from_array(b.half_extents.map(f64::from)) + DVec3::splat(distance / 2.0);
    let radius = round_up(DVec3::splat(f64::from(b.radius) + distance / 2.0)).x;
    GpuShapeBounds::new(Vec3::from_array(b.center), round_up(half), radius)
}

/// Whether contact `c` of `bodies` (each shape's reach in `reach`) overlaps past its
/// bodies' contact tolerance.
fn overlaps_past_touch(reach: &[f64], bodies: &[ExactBody], c: &PairContact) -> bool {
    let [a, b] = c.bodies.map(|i| &bodies[i as usize]);
    let tau = contact_tolerance(
        (reach[a.shape as usize], a.pose.translation),
        (reach[b.shape as usize], b.pose.translation),
    );
    -c.manifold.min_separation() > tau
}

/// A box that holds a body over its motion (see `swept_bounds`), measured from `origin`
/// and rounded outward to f32. The widening covers the rounding of the world coordinates
/// (and of the shift), so it is taken from them.
fn swept_box(bounds: &GpuShapeBounds, reach: f64, motion: &ScrewMotion, origin: DVec3) -> GpuAabb {
    let (lo, hi) = swept_bounds(bounds, reach, motion);
    let widen = |x: DVec3| DVec3::splat(x.abs().max_element() * 1e-12);
    GpuAabb::new(
        round_down(lo - origin - widen(lo)),
        round_up(hi - origin + widen(hi)),
    )
}

/// A box that holds a body over its screw motion: the box of its boxes at the start and
/// at the end, grown by `reach · θ² / 8` (θ the motion's whole turn). A point of the body
/// is at `x(t) = p(t) + R(t) r`; `p` is linear in `t`, and `R(t) r` turns on a circle of
/// radius at most `|r| ≤ reach` at constant speed, so it strays from the chord between
/// its ends by at most `max |d²/dt² R(t) r| · t(1 − t)/2 ≤ reach · θ² / 8`. The chord
/// stays in the box of the two end boxes (it joins a point of each).
fn swept_bounds(bounds: &GpuShapeBounds, reach: f64, motion: &ScrewMotion) -> (DVec3, DVec3) {
    let c = DVec3::from_array(bounds.center.map(f64::from));
    let h = DVec3::from_array(bounds.half_extents.map(f64::from));
    let r = f64::from(bounds.radius);
    let at = |pose: Pose| {
        let m = glam::DMat3::from_quat(pose.rotation);
        let centre = pose.translation + m * c;
        let half = DVec3::new(
            m.row(0).abs().dot(h),
            m.row(1).abs().dot(h),
            m.row(2).abs().dot(h),
        )
        .min(DVec3::splat(r));
        (centre - half, centre + half)
    };
    let (s, e) = (at(motion.start()), at(motion.end()));
    let turn = motion.angular().length();
    let sag = DVec3::splat(reach * turn * turn / 8.0);
    (s.0.min(e.0) - sag, s.1.max(e.1) + sag)
}

/// Motions a thread makes at the least (a motion is a fraction of a microsecond).
const MOTIONS_A_THREAD: usize = 4096;

/// Pairs a thread advances at the least: threads pay for themselves past a few hundred.
const PAIRS_A_THREAD: usize = 256;

/// Body `i`'s motion over `dt` from its pose under `velocity`, or the error naming it.
fn motion_of(i: usize, b: &ExactBody, velocity: &Velocity, dt: f64) -> Result<ScrewMotion> {
    ScrewMotion::from_velocity(b.pose, velocity.linear, velocity.angular, dt).map_err(|e| match e {
        Error::Motion(what) => Error::Motion(format!("body {i}: {what}")),
        other => other,
    })
}

/// `check` of every item (with its body index) on all cores: the first error, in body
/// order, or none.
fn check_all<T: Sync>(items: &[T], check: impl Fn(u32, &T) -> Result<()> + Sync) -> Result<()> {
    let bad = par_chunks(items, MOTIONS_A_THREAD, |offset, part| {
        part.iter()
            .enumerate()
            .find_map(|(k, x)| check((offset + k) as u32, x).err())
            .into_iter()
            .collect()
    });
    bad.into_iter().next().map_or(Ok(()), Err)
}
