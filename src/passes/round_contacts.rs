//! Sphere and capsule contacts for every broadphase pair, all on the GPU: GPU side
//! `shaders/round_contacts.wgsl`, CPU twin [`round_contacts_cpu`] (the same f32
//! operations in the same order). A particle crowd's frame (bounds, broadphase, contacts)
//! needs no exact CPU stage: the closest points of two spheres or capsules have a closed
//! form.
//!
//! A shape is a segment along its body's z axis, half length `half_height` (0 for a
//! sphere), swept by `radius`. A contact is the unit normal from A to B between the
//! segments' closest points (zero when the segments share a point: concentric spheres,
//! crossing axes; any direction serves there) and the distance between the surfaces,
//! negative when they overlap (the depth). In f32 the distance carries a rounding error of
//! a few ulps of the coordinates' size; the exact answer in f64 is `exact::rounded`.
//!
//! The pass writes one of two outputs: a contact per pair slot
//! ([`record_round_contacts`], the standalone pass), or ([`record_touching`]) only the contacts within a distance the caller asks for (0 for
//! touching and overlapping pairs, a speculative margin above it), gathered into a list
//! with their pairs ([`GpuTouchContact`], twin [`touching_cpu`]): a frame writes and reads
//! back only those, never a slot per pair.

use glam::{Quat, Vec2, Vec3};

use crate::bodies::GpuBody;
use crate::geometry::rounded::{Core, Rounded};
use crate::gpu::sizes::DEFAULT_MAX_GROUPS_X;
use crate::graph::{BufferProxy, Recording};
use crate::passes::bounds::quat_to_mat3;
use crate::passes::dispatch_args::record_dispatch_args;
use crate::shaders::ShaderId;
use crate::{Error, Result, wgsl_twin};

/// Threads per workgroup.
pub const ROUND_WORKGROUP_SIZE: u32 = 64;

wgsl_twin! {
    /// Twin of `RoundShape`.
    pub struct GpuRoundShape as "RoundShape" {
        /// Half the core segment's length (0: a sphere).
        pub half_height: f32,
        /// Radius.
        pub radius: f32,
        /// Padding.
        pub _pad0: u32,
        /// Padding.
        pub _pad1: u32,
    }
}

wgsl_twin! {
    /// Twin of `RoundContact`: one pair's contact.
    pub struct GpuRoundContact as "RoundContact" {
        /// Unit normal from A to B (zero where any direction serves).
        pub normal: [f32; 3],
        /// Distance between the surfaces; negative: the depth.
        pub distance: f32,
    }
}

wgsl_twin! {
    /// Twin of `RoundParams`.
    pub struct GpuRoundParams as "RoundParams" {
        /// Contacts at this distance or closer are gathered.
        pub within: f32,
        /// 1: gather those within; 0: a contact per pair slot.
        pub gather: u32,
        /// Padding.
        pub _pad1: u32,
        /// Padding.
        pub _pad2: u32,
    }
}

wgsl_twin! {
    /// Twin of `TouchContact`: a contact within the asked distance, with its pair.
    pub struct GpuTouchContact as "TouchContact" {
        /// The bodies `[a, b]` (as the broadphase paired them: `a < b`).
        pub pair: [u32; 2],
        /// Distance between the surfaces; negative: the depth.
        pub distance: f32,
        /// Unit normal from A to B (zero where any direction serves).
        pub normal: [f32; 3],
    }
}

/// What the gathering pass fills: the contacts within the asked distance in the GPU's
/// order, and how many (one u32).
#[derive(Clone, Copy, Debug)]
pub struct TouchingOut {
    /// The list (the pairs' room in entries).
    pub touching: BufferProxy,
    /// Its length.
    pub touch_count: BufferProxy,
}

impl GpuRoundShape {
    /// The GPU form of a sphere or a capsule (a polytope core is a named error: its
    /// contacts are the exact CPU stage's).
    pub fn new(r: &Rounded) -> Result<Self> {
        let half_height = match &r.core {
            Core::Point => 0.0,
            Core::Segment { half_height } => *half_height as f32,
            Core::Polytope(_) => {
                return Err(Error::Usage(
                    "round contacts: a rounded polytope has no closed-form contact; only \
                     spheres and capsules run on the GPU"
                        .into(),
                ));
            }
        };
        Ok(GpuRoundShape {
            half_height,
            radius: r.radius as f32,
            _pad0: 0,
            _pad1: 0,
        })
    }
}

/// Records the contacts of the first `min(count, room)` pairs of `pairs` (`[[u32; 2]]`)
/// of `bodies`, where `counter` starts with `[count, room]` (a broadphase
/// [`crate::passes::broadphase::GpuPairCounter`] does): the grid comes from the count on
/// the GPU. Returns a slot per pair (`capacity` entries, the pairs' room).
pub fn record_round_contacts(
    rec: &mut Recording,
    inputs: RoundInputs,
    capacity: u32,
) -> BufferProxy {
    let [contacts, touching, touch_count] = record(rec, inputs, capacity, None);
    rec.free(touching);
    rec.free(touch_count);
    contacts
}

/// [`record_round_contacts`] writing only the contacts at `within` or closer, gathered
/// with their pairs into a list of `capacity` entries; no slot per pair.
pub fn record_touching(
    rec: &mut Recording,
    inputs: RoundInputs,
    capacity: u32,
    within: f32,
) -> TouchingOut {
    let [contacts, touching, touch_count] = record(rec, inputs, capacity, Some(within));
    rec.free(contacts);
    TouchingOut {
        touching,
        touch_count,
    }
}

/// The buffers the contact pass reads: `[count, room]`, the body table, the pairs and
/// the shapes' table.
#[derive(Clone, Copy, Debug)]
pub struct RoundInputs {
    /// `[count, room]` of the pairs.
    pub counter: BufferProxy,
    /// The body table.
    pub bodies: BufferProxy,
    /// The pairs.
    pub pairs: BufferProxy,
    /// [`GpuRoundShape`]s.
    pub shapes: BufferProxy,
}

/// The pass: `[slots, list, count]`, the output not asked for one entry long.
fn record(
    rec: &mut Recording,
    inputs: RoundInputs,
    capacity: u32,
    within: Option<f32>,
) -> [BufferProxy; 3] {
    let room = capacity.max(1) as usize;
    let (slots, listed) = if within.is_some() {
        (1, room)
    } else {
        (room, 1)
    };
    let contacts = rec.array_buffer::<GpuRoundContact>(slots, "round contacts");
    let touching = rec.array_buffer::<GpuTouchContact>(listed, "touching contacts");
    let touch_count = rec.buffer(4, "touching count");
    rec.clear(touch_count);
    let params = rec.array_buffer::<GpuRoundParams>(1, "round params");
    rec.upload(
        params,
        &[GpuRoundParams {
            within: within.unwrap_or(f32::NEG_INFINITY),
            gather: u32::from(within.is_some()),
            ..Default::default()
        }],
    );
    let RoundInputs {
        counter,
        bodies,
        pairs,
        shapes,
    } = inputs;
    let args = record_dispatch_args(rec, counter, 0, ROUND_WORKGROUP_SIZE, DEFAULT_MAX_GROUPS_X);
    rec.dispatch_indirect(
        ShaderId::RoundContacts,
        args,
        0,
        &[
            counter,
            bodies,
            pairs,
            shapes,
            contacts,
            params,
            touching,
            touch_count,
        ],
    );
    rec.free(args);
    rec.free(params);
    [contacts, touching, touch_count]
}

/// Checks what the shader trusts: every pair names two bodies, every body a shape.
pub fn check_inputs(
    shapes: &[GpuRoundShape],
    bodies: &[GpuBody],
    pairs: &[[u32; 2]],
) -> Result<()> {
    for (i, &[a, b]) in pairs.iter().enumerate() {
        for body in [a, b] {
            let Some(g) = bodies.get(body as usize) else {
                return Err(Error::Usage(format!(
                    "round contacts: pair {i} names body {body}, but there are {} bodies",
                    bodies.len()
                )));
            };
            if g.shape as usize >= shapes.len() {
                return Err(Error::InvalidShape {
                    body,
                    what: format!(
                        "shape index {} is past the {} round shapes",
                        g.shape,
                        shapes.len()
                    ),
                });
            }
        }
    }
    Ok(())
}

/// Twin of `segment_of`.
fn segment_of(body: &GpuBody, shape: &GpuRoundShape) -> Vec3 {
    let q = Quat::from_array(body.rotation);
    let r = quat_to_mat3(q * (1.0 / q.dot(q).sqrt()));
    r.z_axis * (shape.half_height + shape.half_height)
}

/// Twin of `closest_params`.
fn closest_params(p0: Vec3, d1: Vec3, q0: Vec3, d2: Vec3) -> Vec2 {
    let r = p0 - q0;
    let a = d1.dot(d1);
    let e = d2.dot(d2);
    let f = d2.dot(r);
    if a == 0.0 && e == 0.0 {
        return Vec2::ZERO;
    }
    if a == 0.0 {
        return Vec2::new(0.0, (f / e).clamp(0.0, 1.0));
    }
    let c = d1.dot(r);
    if e == 0.0 {
        return Vec2::new((-c / a).clamp(0.0, 1.0), 0.0);
    }
    let b = d1.dot(d2);
    let denom = a * e - b * b;
    let mut s = 0.0;
    if denom != 0.0 {
        s = ((b * f - c * e) / denom).clamp(0.0, 1.0);
    }
    let mut t = (b * s + f) / e;
    if t < 0.0 {
        t = 0.0;
        s = (-c / a).clamp(0.0, 1.0);
    } else if t > 1.0 {
        t = 1.0;
        s = ((b - c) / a).clamp(0.0, 1.0);
    }
    Vec2::new(s, t)
}

/// The CPU twin: one contact per pair.
pub fn round_contacts_cpu(
    shapes: &[GpuRoundShape],
    bodies: &[GpuBody],
    pairs: &[[u32; 2]],
) -> Result<Vec<GpuRoundContact>> {
    check_inputs(shapes, bodies, pairs)?;
    Ok(pairs
        .iter()
        .map(|&[a, b]| {
            let (body_a, body_b) = (&bodies[a as usize], &bodies[b as usize]);
            let (sa, sb) = (
                &shapes[body_a.shape as usize],
                &shapes[body_b.shape as usize],
            );
            let d1 = segment_of(body_a, sa);
            let d2 = segment_of(body_b, sb);
            let p0 = Vec3::from_array(body_a.position) - d1 * 0.5;
            let q0 = Vec3::from_array(body_b.position) - d2 * 0.5;
            let st = closest_params(p0, d1, q0, d2);
            let gap = (q0 + d2 * st.y) - (p0 + d1 * st.x);
            let len = gap.dot(gap).sqrt();
            let normal = if len > 0.0 { gap / len } else { Vec3::ZERO };
            GpuRoundContact {
                normal: normal.to_array(),
                distance: len - (sa.radius + sb.radius),
            }
        })
        .collect())
}

/// The CPU twin of the gathered list: the contacts of `pairs` (one each, in order) at
/// `within` or closer, with their pairs. The GPU's list, sorted by pair, equals it.
pub fn touching_cpu(
    pairs: &[[u32; 2]],
    contacts: &[GpuRoundContact],
    within: f32,
) -> Vec<GpuTouchContact> {
    pairs
        .iter()
        .zip(contacts)
        .filter(|(_, c)| c.distance <= within)
        .map(|(&pair, c)| GpuTouchContact {
            pair,
            distance: c.distance,
            normal: c.normal,
        })
        .collect()
}
