//! Sampled penetration depth ("rasterized" depth) for every broadphase pair: GPU side
//! `shaders/depth_estimate.wgsl` and `shaders/depth_reduce.wgsl`, CPU twin
//! [`depth_estimate_cpu`] (same inputs, same outputs, the same f32 operations in the same
//! order).
//!
//! For convex A and B, s(d) = h_A(d) + h_B(−d) (h the support function) is the overlap of
//! their projections on the unit direction d, and the penetration depth is the least s over
//! all unit d (the exact walk is `exact::depth`). The estimate is the least s over a fixed
//! sample: the 6k² cell centres of a cube map, plus the face normals of A and the negated
//! face normals of B (where face contacts put the exact minimiser). Some s < 0 certifies
//! that the bodies are separated.
//!
//! **The bound.** s(d) = h_{A−B}(d), the support function of the Minkowski difference, and
//! a support function is Lipschitz: |h_K(d₁) − h_K(d₂)| ≤ max_{x∈K}|x| · |d₁ − d₂|. Let d*
//! be the true minimiser and d_s the sample nearest it, at angle ≤ θ, the cube map's
//! covering radius; then |d* − d_s| = 2 sin(∠/2) ≤ 2 sin(θ/2), and
//!
//! ```text
//!   depth = s(d*) ≤ est = min over samples ≤ s(d_s) ≤ s(d*) + 2 R sin(θ/2),
//! ```
//!
//! so est ≥ depth ≥ est − 2R sin(θ/2) with R = max |x| over A − B. The pass bounds R by
//! max|R_a v + Δ/2| + max|R_b w − Δ/2| (Δ = p_a − p_b, the triangle inequality about the
//! midpoint of the body origins). θ is the largest angle from a cell's centre to its
//! corners over the cells of one face (the angle to a fixed direction is quasi-convex on
//! the face's plane, so a cell's farthest point is a corner, and every unit direction lies
//! in some cell); atan(√2/16) ≈ 0.088 rad for k = 16, at the cells in a face's middle.
//!
//! **Rounding.** Everything runs in f32 on shapes rounded to f32: each s is off by at most
//! a few dozen ulps of the coordinates' size, so each estimate carries
//! `slack = SLACK_REL · (reach_a + reach_b + |Δ|)` (reach: the largest |v| of a shape in
//! its body frame), and the guarantee is depth ∈ [est − bound − slack, est + slack]. A
//! pair is reported separated only when est < −slack. The guarantee is at the poses given,
//! their positions in f32 (a caller that rounds f64 poses adds that rounding: the World
//! does). Inputs outside f32's reach are named errors ([`check_inputs`], [`DepthShapes::new`]):
//! poses that do not normalise, positions past [`F32_REACH_MAX`], shapes whose reach lies
//! outside [`F32_REACH_MIN`]..[`F32_REACH_MAX`], where the squares under the lengths
//! overflow or sink to 0.
//!
//! Work: one item per (pair, chunk of directions), chunks sized so an item makes at most
//! [`LOOP_BUDGET`] loop iterations (llvmpipe stops an invocation's loops after 65535); each
//! workgroup of 64 items leaves one partial per pair its items serve (a pair of large
//! hulls keeps one per 64 of its items: [`GpuDepthParams::slots_per_pair`]), then one
//! invocation per pair reduces its partials (the first least on ties) and attaches the
//! bound. A loop the adapter stopped short anyway sets the `cut` word. The most pairs one
//! run binds is [`pairs_within_limits`]; [`crate::estimate::GpuDepthEstimator::run`] takes
//! more in runs of that many.

use glam::{Mat3, Vec3};

use crate::bodies::GpuBody;
use crate::geometry::ConvexPolytope;
use crate::gpu::sizes::{DEFAULT_MAX_GROUPS_X, dispatch_grid, items_in_binding};
use crate::graph::{BufferProxy, Recording};
use crate::parallel;
use crate::passes::bounds::{pose_problem, quat_to_mat3};
use crate::passes::dispatch_args::record_dispatch_args_per_item;
use crate::shaders::ShaderId;
use crate::{Error, Result, wgsl_twin};

/// Threads per workgroup of both depth shaders.
pub const DEPTH_WORKGROUP_SIZE: u32 = 64;
/// Most loop iterations one estimate work item makes (directions × vertices).
pub const LOOP_BUDGET: u32 = 16_384;
/// Relative rounding allowance of an estimate: 2^−18, 64 f32 ulps.
pub const SLACK_REL: f32 = 1.0 / 262_144.0;
/// The default cube-map resolution: 6 × 16 × 16 directions.
pub const DEFAULT_K: u32 = 16;
/// Twin of `NO_DIRECTION`.
pub const NO_DIRECTION: u32 = u32::MAX;
/// The largest reach of a shape and the largest position coordinate the pass takes: the
/// lengths it measures (the bound's and the slack's reaches, the bodies' offset) are
/// square roots of sums of squares in f32, which overflow past about 1.8e19.
pub const F32_REACH_MAX: f64 = 1e18;
/// The smallest reach of a shape the pass takes: below about 1e-19 a reach's square sinks
/// into f32's subnormals and then to 0, and the bound and the slack with it (boxes of
/// 1e-25 had both at 0 and were certified apart while overlapping).
pub const F32_REACH_MIN: f64 = 1e-18;

wgsl_twin! {
    /// Twin of `DepthShape`: a shape's vertices and face normals in the shared tables.
    pub struct GpuDepthShape as "DepthShape" {
        /// First vertex.
        pub vertex_offset: u32,
        /// Vertices.
        pub vertex_count: u32,
        /// First face normal.
        pub normal_offset: u32,
        /// Face normals.
        pub normal_count: u32,
    }
}

wgsl_twin! {
    /// Twin of `DepthParams`.
    pub struct GpuDepthParams as "DepthParams" {
        /// Pairs.
        pub pairs: u32,
        /// Cube-map resolution.
        pub k: u32,
        /// Directions per work item.
        pub chunk: u32,
        /// Work items per pair.
        pub chunks_per_pair: u32,
        /// sin(θ/2), rounded up.
        pub sin_half_theta: f32,
        /// [`SLACK_REL`].
        pub slack_rel: f32,
        /// Partials a pair keeps: one for each workgroup of 64 items its items meet, at
        /// most [`slots_for`]`(chunks_per_pair)`.
        pub slots_per_pair: u32,
        /// Padding.
        pub _pad0: u32,
    }
}

wgsl_twin! {
    /// Twin of `DepthPartial`: the least s over some of a pair's work items.
    pub struct GpuDepthPartial as "DepthPartial" {
        /// Least s (+∞ for an item with no directions).
        pub s: f32,
        /// Its direction's index.
        pub direction: u32,
        /// Supporting vertex of A.
        pub witness_a: u32,
        /// Supporting vertex of B.
        pub witness_b: u32,
    }
}

wgsl_twin! {
    /// Twin of `DepthEstimate`: a pair's estimate. The exact depth lies in
    /// `[depth − bound − slack, depth + slack]`.
    pub struct GpuDepthEstimate as "DepthEstimate" {
        /// Direction of least s, from A to B.
        pub normal: [f32; 3],
        /// Least s sampled (negative: separated by that much at least, up to slack).
        pub depth: f32,
        /// 2R sin(θ/2).
        pub bound: f32,
        /// Rounding allowance.
        pub slack: f32,
        /// Supporting vertex of A in the normal's direction.
        pub witness_a: u32,
        /// Supporting vertex of B against it.
        pub witness_b: u32,
        /// 1 when `depth < −slack`: certified separated.
        pub separated: u32,
        /// Padding.
        pub _pad0: u32,
        /// Padding.
        pub _pad1: u32,
        /// Padding.
        pub _pad2: u32,
    }
}

/// The convex shapes as the depth pass reads them: vertices and outward face normals of
/// every shape, f32, in two shared tables, uploaded once.
#[derive(Clone, Debug, Default)]
pub struct DepthShapes {
    /// One entry per shape.
    pub shapes: Vec<GpuDepthShape>,
    /// Every shape's vertices (xyz, w = 0).
    pub vertices: Vec<[f32; 4]>,
    /// Every shape's face normals (xyz, w = 0).
    pub normals: Vec<[f32; 4]>,
}

impl DepthShapes {
    /// The tables of `polytopes`, in order (shape index = position).
    pub fn new<'p>(polytopes: impl IntoIterator<Item = &'p ConvexPolytope>) -> Result<Self> {
        let mut t = DepthShapes::default();
        for (i, p) in polytopes.into_iter().enumerate() {
            let too_many = || Error::Geometry(format!("shape {i}: too many vertices or faces"));
            let shape = GpuDepthShape {
                vertex_offset: u32::try_from(t.vertices.len()).map_err(|_| too_many())?,
                vertex_count: u32::try_from(p.num_vertices()).map_err(|_| too_many())?,
                normal_offset: u32::try_from(t.normals.len()).map_err(|_| too_many())?,
                normal_count: u32::try_from(p.num_faces()).map_err(|_| too_many())?,
            };
            if shape.vertex_count == 0 {
                return Err(Error::Geometry(format!("shape {i}: no vertices")));
            }
            let reach = p.vertices().iter().map(|v| v.length()).fold(0.0, f64::max);
            if !(F32_REACH_MIN..=F32_REACH_MAX).contains(&reach) {
                return Err(Error::Geometry(format!(
                    "shape {i}: the depth estimate works in f32, where a shape's reach (its \
                     farthest vertex from its origin) must lie within {F32_REACH_MIN:e} to \
                     {F32_REACH_MAX:e}; this one's is {reach:e}"
                )));
            }
            t.vertices.extend(
                p.vertices()
                    .iter()
                    .map(|v| v.as_vec3().extend(0.0).to_array()),
            );
            t.normals.extend(
                (0..p.num_faces()).map(|f| p.face_normal(f).as_vec3().extend(0.0).to_array()),
            );
            t.shapes.push(shape);
        }
        Ok(t)
    }

    /// The most vertices of any shape.
    pub fn max_vertices(&self) -> u32 {
        self.shapes
            .iter()
            .map(|s| s.vertex_count)
            .max()
            .unwrap_or(0)
    }

    /// The most face normals of any shape.
    pub fn max_normals(&self) -> u32 {
        self.shapes
            .iter()
            .map(|s| s.normal_count)
            .max()
            .unwrap_or(0)
    }
}

/// θ, the largest angle from any unit direction to the nearest of the cube map's 6k² cell
/// centres (bounded by the largest centre-to-corner angle of a cell; see the module
/// comment), in f64.
pub fn covering_angle(k: u32) -> f64 {
    let k = k.max(1);
    let at = |i: f64| 2.0 * i / f64::from(k) - 1.0;
    let mut worst: f64 = 0.0;
    for j in 0..k {
        for i in 0..k {
            let c = glam::DVec3::new(at(f64::from(i) + 0.5), at(f64::from(j) + 0.5), 1.0);
            for (di, dj) in [(0.0, 0.0), (1.0, 0.0), (0.0, 1.0), (1.0, 1.0)] {
                let x = glam::DVec3::new(at(f64::from(i) + di), at(f64::from(j) + dj), 1.0);
                worst = worst.max(c.angle_between(x));
            }
        }
    }
    worst
}

impl GpuDepthParams {
    /// Parameters for `pairs` pairs over `shapes` with a k × k cube map per face; errors
    /// when k is 0 or above 1024, or when the work items would not fit a u32.
    pub fn new(pairs: u32, k: u32, shapes: &DepthShapes) -> Result<Self> {
        check_resolution(k)?;
        let directions = 6 * u64::from(k) * u64::from(k) + 2 * u64::from(shapes.max_normals());
        let per_direction = 2 * u64::from(shapes.max_vertices()) + 1;
        let chunk = (u64::from(LOOP_BUDGET) / per_direction).max(1);
        let chunks_per_pair = directions.div_ceil(chunk);
        if u64::from(pairs) * chunks_per_pair > u64::from(u32::MAX) {
            return Err(Error::Usage(format!(
                "depth estimate: {pairs} pairs × {chunks_per_pair} work items each is more \
                 than 2^32 − 1 items; estimate fewer pairs at a time or use a smaller k"
            )));
        }
        // sin(θ/2) rounded up, so the bound never shrinks in f32.
        let sin_half = (covering_angle(k) / 2.0).sin() as f32;
        Ok(GpuDepthParams {
            pairs,
            k,
            chunk: chunk as u32,
            chunks_per_pair: chunks_per_pair as u32,
            sin_half_theta: f32::from_bits(sin_half.to_bits() + 1),
            slack_rel: SLACK_REL,
            slots_per_pair: slots_for(chunks_per_pair as u32),
            _pad0: 0,
        })
    }

    /// Bytes each pair takes in the larger of the run's two per-pair buffers (its
    /// partials, its estimate).
    pub fn bytes_per_pair(&self) -> u64 {
        let partials = u64::from(self.slots_per_pair) * size_of::<GpuDepthPartial>() as u64;
        partials.max(size_of::<GpuDepthEstimate>() as u64)
    }
}

/// The most workgroups of [`DEPTH_WORKGROUP_SIZE`] items that `chunks_per_pair` consecutive
/// items meet, wherever they start: a pair's partials.
pub fn slots_for(chunks_per_pair: u32) -> u32 {
    let c = chunks_per_pair.max(1);
    c.min((c - 1).div_ceil(DEPTH_WORKGROUP_SIZE) + 1)
}

/// The most pairs one run of the pass over `shapes` at resolution `k` binds on a device
/// with `limits`: its partials and its estimates each within one storage binding, its work
/// items within a u32. Errors as [`GpuDepthParams::new`] does on `k`.
pub fn pairs_within_limits(limits: &wgpu::Limits, k: u32, shapes: &DepthShapes) -> Result<u32> {
    let one = GpuDepthParams::new(1, k, shapes)?;
    Ok(items_in_binding(limits, one.bytes_per_pair()).min(u32::MAX / one.chunks_per_pair))
}

/// Errors unless `k` is a cube-map resolution the pass takes: 1 to 1024 cells per side.
pub fn check_resolution(k: u32) -> Result<()> {
    if !(1..=1024).contains(&k) {
        return Err(Error::Usage(format!(
            "depth estimate: k = {k}; the cube map takes 1 to 1024 cells per side"
        )));
    }
    Ok(())
}

/// Errors when the passes' cut word (read back from [`DepthOutputs::cut`]) says the
/// adapter stopped a loop short: an estimate would be wrong.
pub fn check_cut(cut: u32) -> Result<()> {
    if cut != 0 {
        return Err(Error::Gpu(
            "depth estimate: the adapter stopped a shader loop before it ended, so an \
             estimate would be wrong (a software adapter's loop limit; use the CPU twin)"
                .into(),
        ));
    }
    Ok(())
}

/// The shape tables on the GPU.
#[derive(Clone, Copy, Debug)]
pub struct DepthShapeBuffers {
    /// `[GpuDepthShape]`.
    pub shapes: BufferProxy,
    /// `[[f32; 4]]` vertices.
    pub vertices: BufferProxy,
    /// `[[f32; 4]]` face normals.
    pub normals: BufferProxy,
}

/// Buffers the depth pass writes.
#[derive(Clone, Copy, Debug)]
pub struct DepthOutputs {
    /// One [`GpuDepthEstimate`] per pair.
    pub estimates: BufferProxy,
    /// One u32: nonzero when the adapter stopped a loop short.
    pub cut: BufferProxy,
}

/// Records the estimate for `params.pairs` pairs (`[[u32; 2]]`) of `bodies`.
pub fn record_depth_estimate(
    rec: &mut Recording,
    bodies: BufferProxy,
    pairs: BufferProxy,
    shapes: DepthShapeBuffers,
    params: GpuDepthParams,
) -> DepthOutputs {
    record_passes(rec, bodies, pairs, shapes, params, None)
}

/// Records the estimate for the pairs a broadphase found, straight from its buffers:
/// `counter` starts with `[count, room]` (a
/// [`crate::passes::broadphase::GpuPairCounter`]), `params.pairs` is the room (the
/// buffers' size), and the count reaches the passes on the GPU (`depth_setup.wgsl` writes
/// it into their parameters; their grids come from it).
pub fn record_depth_estimate_counted(
    rec: &mut Recording,
    bodies: BufferProxy,
    pairs: BufferProxy,
    counter: BufferProxy,
    shapes: DepthShapeBuffers,
    params: GpuDepthParams,
) -> DepthOutputs {
    record_passes(rec, bodies, pairs, shapes, params, Some(counter))
}

fn record_passes(
    rec: &mut Recording,
    bodies: BufferProxy,
    pairs: BufferProxy,
    shapes: DepthShapeBuffers,
    params: GpuDepthParams,
    counter: Option<BufferProxy>,
) -> DepthOutputs {
    let p = rec.buffer(size_of::<GpuDepthParams>() as u64, "depth params");
    rec.upload(p, &[params]);
    let items = params.pairs * params.chunks_per_pair;
    let slots = params.pairs as usize * params.slots_per_pair as usize;
    let partials = rec.array_buffer::<GpuDepthPartial>(slots, "depth partials");
    let cut = rec.buffer(4, "depth cut");
    rec.clear(cut);
    let tables = [shapes.shapes, shapes.vertices, shapes.normals];
    let estimate = [
        p, bodies, pairs, tables[0], tables[1], tables[2], partials, cut,
    ];
    let estimates = rec.array_buffer::<GpuDepthEstimate>(params.pairs as usize, "depth estimates");
    let reduce = [
        p, bodies, pairs, tables[0], tables[1], tables[2], partials, estimates, cut,
    ];
    match counter {
        None => {
            let grid = |n| dispatch_grid(n, DEPTH_WORKGROUP_SIZE, DEFAULT_MAX_GROUPS_X);
            rec.dispatch(ShaderId::DepthEstimate, grid(items), &estimate);
            rec.dispatch(ShaderId::DepthReduce, grid(params.pairs), &reduce);
        }
        Some(counter) => {
            rec.dispatch(ShaderId::DepthSetup, [1, 1, 1], &[counter, p]);
            // The count is word 0 of the parameters now.
            let args = |rec: &mut Recording, per_item| {
                record_dispatch_args_per_item(
                    rec,
                    p,
                    0,
                    per_item,
                    DEPTH_WORKGROUP_SIZE,
                    DEFAULT_MAX_GROUPS_X,
                )
            };
            let item_args = args(rec, params.chunks_per_pair);
            let pair_args = args(rec, 1);
            rec.dispatch_indirect(ShaderId::DepthEstimate, item_args, 0, &estimate);
            rec.dispatch_indirect(ShaderId::DepthReduce, pair_args, 0, &reduce);
            rec.free(item_args);
            rec.free(pair_args);
        }
    }
    rec.free(partials);
    rec.free(p);
    DepthOutputs { estimates, cut }
}

/// Checks what the shaders trust: every pair names two bodies, every body a shape and a
/// pose usable in f32 (finite, a quaternion that normalises, a position within
/// [`F32_REACH_MAX`]: a rotation of [1e20, 0, 0, 0] normalised to zero in f32 and turned
/// a body the wrong way, and a NaN position stopped the CPU twin).
pub fn check_inputs(shapes: &DepthShapes, bodies: &[GpuBody], pairs: &[[u32; 2]]) -> Result<()> {
    for (i, &[a, b]) in pairs.iter().enumerate() {
        for body in [a, b] {
            let Some(g) = bodies.get(body as usize) else {
                return Err(Error::Usage(format!(
                    "depth estimate: pair {i} names body {body}, but there are {} bodies",
                    bodies.len()
                )));
            };
            if let Some(what) = pose_problem(g).or_else(|| {
                let far = g
                    .position
                    .iter()
                    .any(|c| f64::from(c.abs()) > F32_REACH_MAX);
                far.then(|| {
                    format!(
                        "position {:?} is past ±{F32_REACH_MAX:e}, where the depth \
                         estimate's f32 lengths overflow",
                        g.position
                    )
                })
            }) {
                return Err(Error::InvalidPose { body, what });
            }
            if g.shape as usize >= shapes.shapes.len() {
                return Err(Error::InvalidShape {
                    body,
                    what: format!(
                        "shape index {} is past the {} shapes of the depth tables",
                        g.shape,
                        shapes.shapes.len()
                    ),
                });
            }
        }
    }
    Ok(())
}

/// A body as both shaders see it.
struct Placed {
    shape: GpuDepthShape,
    rotation: Mat3,
    position: Vec3,
}

impl Placed {
    fn new(shapes: &DepthShapes, body: &GpuBody) -> Self {
        let q = glam::Quat::from_array(body.rotation);
        let q = q * (1.0 / q.dot(q).sqrt());
        Placed {
            shape: shapes.shapes[body.shape as usize],
            rotation: quat_to_mat3(q),
            position: Vec3::from_array(body.position),
        }
    }
}

/// Twin of `cube_direction`.
pub fn cube_direction(index: u32, k: u32) -> Vec3 {
    let per_face = k * k;
    let face = index / per_face;
    let cell = index % per_face;
    let kf = k as f32;
    let u = (2.0 * (cell % k) as f32 + 1.0) / kf - 1.0;
    let v = (2.0 * (cell / k) as f32 + 1.0) / kf - 1.0;
    let sign = if face & 1 == 1 { -1.0 } else { 1.0 };
    let d = match face / 2 {
        0 => Vec3::new(sign, u, v),
        1 => Vec3::new(u, sign, v),
        _ => Vec3::new(u, v, sign),
    };
    d * (1.0 / d.dot(d).sqrt())
}

fn direction_of(t: &DepthShapes, index: u32, k: u32, a: &Placed, b: &Placed) -> Vec3 {
    let cube = 6 * k * k;
    let normal = |i: u32| Vec3::from_slice(&t.normals[i as usize][..3]);
    if index < cube {
        cube_direction(index, k)
    } else if index < cube + a.shape.normal_count {
        a.rotation * normal(a.shape.normal_offset + index - cube)
    } else {
        -(b.rotation * normal(b.shape.normal_offset + index - cube - a.shape.normal_count))
    }
}

/// Twin of `support`: the largest v·dir and its vertex (the first on ties).
fn support(t: &DepthShapes, shape: &GpuDepthShape, dir: Vec3) -> (f32, u32) {
    let vertex = |i: u32| Vec3::from_slice(&t.vertices[(shape.vertex_offset + i) as usize][..3]);
    let mut best = (vertex(0).dot(dir), 0);
    for i in 1..shape.vertex_count {
        let h = vertex(i).dot(dir);
        if h > best.0 {
            best = (h, i);
        }
    }
    best
}

/// Twin of one `depth_estimate.wgsl` work item.
fn estimate_item(
    t: &DepthShapes,
    params: &GpuDepthParams,
    a: &Placed,
    b: &Placed,
    chunk: u32,
) -> GpuDepthPartial {
    let offset = a.position - b.position;
    let cube = 6 * params.k * params.k;
    let total = cube + a.shape.normal_count + b.shape.normal_count;
    let first = (chunk * params.chunk).min(total);
    let last = (first + params.chunk).min(total);
    let mut best = GpuDepthPartial {
        s: f32::INFINITY,
        direction: NO_DIRECTION,
        witness_a: 0,
        witness_b: 0,
    };
    for index in first..last {
        let d = direction_of(t, index, params.k, a, b);
        // `d * R` in WGSL is Rᵀd.
        let (ha, wa) = support(t, &a.shape, a.rotation.transpose() * d);
        let (hb, wb) = support(t, &b.shape, -(b.rotation.transpose() * d));
        let s = ha + hb + offset.dot(d);
        if s < best.s {
            best = GpuDepthPartial {
                s,
                direction: index,
                witness_a: wa,
                witness_b: wb,
            };
        }
    }
    best
}

/// Twin of `reaches`: (largest |R v + shift|, largest |v|).
fn reaches(t: &DepthShapes, p: &Placed, shift: Vec3) -> (f32, f32) {
    let mut out = (0.0f32, 0.0f32);
    for i in 0..p.shape.vertex_count {
        let v = Vec3::from_slice(&t.vertices[(p.shape.vertex_offset + i) as usize][..3]);
        out = (
            out.0.max((p.rotation * v + shift).length()),
            out.1.max(v.length()),
        );
    }
    out
}

/// The estimate of one pair (both steps of the GPU pass).
fn estimate_pair(
    t: &DepthShapes,
    params: &GpuDepthParams,
    bodies: &[GpuBody],
    [a, b]: [u32; 2],
) -> GpuDepthEstimate {
    let pa = Placed::new(t, &bodies[a as usize]);
    let pb = Placed::new(t, &bodies[b as usize]);
    let mut best = estimate_item(t, params, &pa, &pb, 0);
    for c in 1..params.chunks_per_pair {
        let q = estimate_item(t, params, &pa, &pb, c);
        if q.s < best.s {
            best = q;
        }
    }
    let offset = pa.position - pb.position;
    let half = 0.5 * offset;
    let (ra, rb) = (reaches(t, &pa, half), reaches(t, &pb, -half));
    let slack = params.slack_rel * (ra.1 + rb.1 + offset.length());
    GpuDepthEstimate {
        normal: direction_of(t, best.direction, params.k, &pa, &pb).to_array(),
        depth: best.s,
        bound: 2.0 * (ra.0 + rb.0) * params.sin_half_theta,
        slack,
        witness_a: best.witness_a,
        witness_b: best.witness_b,
        separated: u32::from(best.s < -slack),
        ..Default::default()
    }
}

/// CPU twin of the pass: one estimate per pair, on all cores. The inputs must pass
/// [`check_inputs`].
pub fn depth_estimate_cpu(
    shapes: &DepthShapes,
    bodies: &[GpuBody],
    pairs: &[[u32; 2]],
    params: &GpuDepthParams,
) -> Vec<GpuDepthEstimate> {
    parallel::par_map(pairs, 64, |_, &pair| {
        estimate_pair(shapes, params, bodies, pair)
    })
}
