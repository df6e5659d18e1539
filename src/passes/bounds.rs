//! Bounds pass: the world AABB of every body from its pose and its shape's local bounds.
//! GPU side `shaders/bounds.wgsl`; CPU twin [`bounds_cpu`], same inputs, same outputs,
//! same arithmetic step by step.
//!
//! Per axis i the box is `p_i + (R c)_i ± min(Σ_j |R_ij| h_j, r) ± margin_i` with
//! `margin_i = MARGIN_REL · (|p_i| + ‖c‖₁ + ‖h‖₁) + MARGIN_ABS`.
//!
//! Why the margin is safe: with u = 2^-24, normalising q costs ≤ 3u relative (inverseSqrt
//! is within 2 ulp in WGSL), each entry of R then differs from the exact rotation's by
//! ≤ 10u, so `(R c)_i` is off by ≤ 14u‖c‖₁, `Σ|R_ij| h_j` by ≤ 14u‖h‖₁, and the two
//! additions and the subtraction of the margin add ≤ 3u(|p_i| + ‖c‖₁ + ‖h‖₁). The total,
//! about 20u · (|p_i| + ‖c‖₁ + ‖h‖₁), is well under `MARGIN_REL = 2^-17 = 128u` times the
//! same scale, so the f32 box always contains the exact one and exceeds it by at most
//! `margin_i · (1 + 1/6)`. `MARGIN_ABS` covers values flushed to zero as denormals.
//! `tests/bounds.rs` checks both claims against an f64 oracle that transforms the eight
//! corners.

use glam::{Mat3, Quat, Vec3};

use super::status::GpuPassStatus;
use crate::bodies::{GpuAabb, GpuBody, GpuShapeBounds};
use crate::gpu::sizes::{BODY_WORKGROUP_SIZE, DEFAULT_MAX_GROUPS_X, dispatch_grid};
use crate::graph::{BufferProxy, Recording};
use crate::parallel;
use crate::shaders::ShaderId;
use crate::{Error, Result, wgsl_twin};

/// Relative inflation of every box (see the module comment).
pub const MARGIN_REL: f32 = 1.0 / 131_072.0;
/// Absolute inflation of every box.
pub const MARGIN_ABS: f32 = 1e-36;

/// Error kind: non-finite pose or zero quaternion (twin of `ERROR_POSE` in bounds.wgsl).
pub const ERROR_POSE: u32 = 1;
/// Error kind: shape index out of range (twin of `ERROR_SHAPE`).
pub const ERROR_SHAPE: u32 = 2;

wgsl_twin! {
    /// Twin of `BoundsParams` in `shaders/bounds.wgsl`.
    pub struct GpuBoundsParams as "BoundsParams" {
        /// Number of bodies.
        pub body_count: u32,
        /// Number of shapes in the shape table.
        pub shape_count: u32,
        /// Relative margin.
        pub margin_rel: f32,
        /// Absolute margin.
        pub margin_abs: f32,
    }
}

impl GpuBoundsParams {
    /// Parameters for `body_count` bodies over `shape_count` shapes with the standard margins.
    pub fn new(body_count: u32, shape_count: u32) -> Self {
        Self {
            body_count,
            shape_count,
            margin_rel: MARGIN_REL,
            margin_abs: MARGIN_ABS,
        }
    }
}

/// Buffers the bounds pass writes.
#[derive(Clone, Copy, Debug)]
pub struct BoundsOutputs {
    /// One [`GpuAabb`] per body.
    pub aabbs: BufferProxy,
    /// One [`GpuPassStatus`].
    pub status: BufferProxy,
}

/// Records the bounds pass over `bodies` (`[GpuBody; body_count]`) and `shapes`
/// (`[GpuShapeBounds; shape_count]`), both already on the GPU.
pub fn record_bounds(
    rec: &mut Recording,
    bodies: BufferProxy,
    shapes: BufferProxy,
    params: GpuBoundsParams,
) -> BoundsOutputs {
    let params_buf = rec.buffer(size_of::<GpuBoundsParams>() as u64, "bounds params");
    rec.upload(params_buf, &[params]);
    let aabbs = rec.array_buffer::<GpuAabb>(params.body_count as usize, "aabbs");
    let status = rec.buffer(size_of::<GpuPassStatus>() as u64, "bounds status");
    rec.upload(status, &[GpuPassStatus::INITIAL]);
    let grid = dispatch_grid(params.body_count, BODY_WORKGROUP_SIZE, DEFAULT_MAX_GROUPS_X);
    rec.dispatch(
        ShaderId::Bounds,
        grid,
        &[params_buf, bodies, shapes, aabbs, status],
    );
    rec.free(params_buf);
    BoundsOutputs { aabbs, status }
}

/// CPU twin of `bounds.wgsl`: fills `aabbs` (one per body) and returns the pass status.
/// Runs on all cores.
pub fn bounds_cpu(
    bodies: &[GpuBody],
    shapes: &[GpuShapeBounds],
    params: GpuBoundsParams,
    aabbs: &mut Vec<GpuAabb>,
) -> GpuPassStatus {
    let n = params.body_count as usize;
    aabbs.clear();
    aabbs.resize(n, GpuAabb::default());
    let chunk = parallel::chunk_len(n, 4096);
    let parts = aabbs
        .chunks_mut(chunk)
        .zip(bodies[..n].chunks(chunk))
        .enumerate()
        .collect();
    parallel::on_threads(parts, |(c, (out, ins))| {
        let mut status = GpuPassStatus::INITIAL;
        for (k, (o, b)) in out.iter_mut().zip(ins).enumerate() {
            let index = (c * chunk + k) as u32;
            *o = body_aabb(b, shapes, params, index, &mut status);
        }
        status
    })
    .into_iter()
    .fold(GpuPassStatus::INITIAL, GpuPassStatus::merge)
}

/// One body's box, exactly as `bounds.wgsl` computes it.
fn body_aabb(
    body: &GpuBody,
    shapes: &[GpuShapeBounds],
    params: GpuBoundsParams,
    index: u32,
    status: &mut GpuPassStatus,
) -> GpuAabb {
    let everything = GpuAabb::new(Vec3::NEG_INFINITY, Vec3::INFINITY);
    let q = Quat::from_array(body.rotation);
    let n2 = q.dot(q);
    let p = Vec3::from_array(body.position);
    if !p.is_finite() || !q.is_finite() || n2 < 1e-30 || !n2.is_finite() {
        status.report(index, ERROR_POSE);
        return everything;
    }
    if body.shape >= params.shape_count || body.shape as usize >= shapes.len() {
        status.report(index, ERROR_SHAPE);
        return everything;
    }
    let shape = &shapes[body.shape as usize];
    let r = quat_to_mat3(q * n2.sqrt().recip());
    let c = Vec3::from_array(shape.center);
    let h = Vec3::from_array(shape.half_extents);
    let center = p + r * c;
    let rt = r.transpose();
    let box_half = Vec3::new(
        rt.x_axis.abs().dot(h),
        rt.y_axis.abs().dot(h),
        rt.z_axis.abs().dot(h),
    );
    let half = box_half.min(Vec3::splat(shape.radius));
    let scale = p.abs() + Vec3::splat(c.abs().dot(Vec3::ONE) + h.dot(Vec3::ONE));
    let margin = scale * params.margin_rel + Vec3::splat(params.margin_abs);
    GpuAabb::new(center - half - margin, center + half + margin)
}

/// Twin of `quat_to_mat3` in `shaders/shared/bodies.wgsl` (same operation order).
pub fn quat_to_mat3(q: Quat) -> Mat3 {
    let (x2, y2, z2) = (q.x + q.x, q.y + q.y, q.z + q.z);
    let (xx, xy, xz) = (q.x * x2, q.x * y2, q.x * z2);
    let (yy, yz, zz) = (q.y * y2, q.y * z2, q.z * z2);
    let (wx, wy, wz) = (q.w * x2, q.w * y2, q.w * z2);
    Mat3::from_cols(
        Vec3::new(1.0 - (yy + zz), xy + wz, xz - wy),
        Vec3::new(xy - wz, 1.0 - (xx + zz), yz + wx),
        Vec3::new(xz + wy, yz - wx, 1.0 - (xx + yy)),
    )
}

/// Turns a bounds status into a named error, describing the first bad body from the
/// inputs the pass saw.
pub fn check_status(status: &GpuPassStatus, bodies: &[GpuBody], shape_count: u32) -> Result<()> {
    if status.is_ok() {
        return Ok(());
    }
    let i = status.first_error;
    let others = status.error_count - 1;
    let also = if others > 0 {
        format!("; {others} more bad bodies")
    } else {
        String::new()
    };
    let body = bodies.get(i as usize);
    if status.error_kinds & ERROR_POSE != 0 && body.is_none_or(|b| pose_problem(b).is_some()) {
        let what = body
            .and_then(pose_problem)
            .unwrap_or_else(|| "unusable pose".into());
        return Err(Error::InvalidPose {
            body: i,
            what: format!("{what}{also}"),
        });
    }
    let shape = body.map_or(u32::MAX, |b| b.shape);
    Err(Error::InvalidShape {
        body: i,
        what: format!(
            "shape index {shape} is out of range (the scene has {shape_count} shapes){also}"
        ),
    })
}

/// What makes a body's pose unusable in f32 (a position or rotation not finite, a
/// quaternion whose norm² is below 1e-30 or past f32's range), or `None`.
pub(crate) fn pose_problem(b: &GpuBody) -> Option<String> {
    let q = Quat::from_array(b.rotation);
    if !Vec3::from_array(b.position).is_finite() {
        Some(format!("position {:?} is not finite", b.position))
    } else if !q.is_finite() {
        Some(format!("rotation {:?} is not finite", b.rotation))
    } else if q.dot(q) < 1e-30 || !q.dot(q).is_finite() {
        Some(format!(
            "rotation {:?} is not a usable quaternion (norm² {})",
            b.rotation,
            q.dot(q)
        ))
    } else {
        None
    }
}
