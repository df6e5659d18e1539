//! One frame, in stage order. [`record_frame`] writes the GPU frame as a recording;
//! [`cpu_frame`] runs the CPU twins of the same stages on the same inputs. Later stages
//! (broadphase, penetration estimate, narrowphase) are added here, in order.

use std::time::Instant;

use crate::Result;
use crate::bodies::{GpuAabb, GpuBody, GpuShapeBounds};
use crate::broadphase::{cpu_pairs, sorted_pairs};
use crate::graph::{BufferProxy, ReadbackId, Recording};
use crate::passes::bounds::{self, GpuBoundsParams};
use crate::passes::broadphase::{Capacities, GpuPairCounter, Method, record_broadphase};
use crate::passes::round_contacts::record_round_contacts;
use crate::passes::status::GpuPassStatus;
use crate::profile::{Clock, Profile, StageTime};

/// Stage names, shared by the GPU and CPU paths so their profiles line up.
pub mod stage {
    /// Poses and shapes to the GPU.
    pub const UPLOAD: &str = "upload";
    /// World AABBs.
    pub const BOUNDS: &str = "bounds";
    /// Candidate pairs (spatial hash or sort-and-sweep); on the GPU timed in parts,
    /// `broadphase/setup`, `broadphase/table`, … ([`crate::profile::Profile::stage_seconds`]
    /// sums them).
    pub const BROADPHASE: &str = "broadphase";
    /// Sphere and capsule contacts of the pairs.
    pub const CONTACTS: &str = "contacts";
    /// Results back to the CPU.
    pub const READBACK: &str = "readback";
}

/// What a frame produces.
#[derive(Clone, Debug)]
pub struct FrameResult {
    /// World box of every body.
    pub aabbs: Vec<GpuAabb>,
    /// Overlapping box pairs `[a, b]`, `a < b`, sorted (empty when no broadphase ran).
    pub pairs: Vec<[u32; 2]>,
    /// The broadphase method that ran, if any.
    pub broadphase: Option<Method>,
    /// Stage timings.
    pub profile: Profile,
}

/// Where the GPU frame's results come back.
#[derive(Clone, Copy, Debug)]
pub struct FrameReadbacks {
    /// The boxes.
    pub aabbs: ReadbackId,
    /// The bounds pass status.
    pub bounds_status: ReadbackId,
}

/// Records the GPU frame for `bodies` over `shapes`: the bounds pass alone.
pub fn record_frame(bodies: &[GpuBody], shapes: &[GpuShapeBounds]) -> (Recording, FrameReadbacks) {
    let mut rec = Recording::new();
    let (_, out) = record_upload_and_bounds(&mut rec, bodies, shapes);
    rec.stage(stage::READBACK);
    let readbacks = read_bounds(&mut rec, &out, bodies.len());
    (rec, readbacks)
}

/// The first stages of every frame: poses and shapes up, then the bounds pass. Returns
/// the bodies' buffer with the pass's outputs.
fn record_upload_and_bounds(
    rec: &mut Recording,
    bodies: &[GpuBody],
    shapes: &[GpuShapeBounds],
) -> (BufferProxy, bounds::BoundsOutputs) {
    rec.stage(stage::UPLOAD);
    let body_buf = rec.array_buffer::<GpuBody>(bodies.len(), "bodies");
    rec.upload(body_buf, bodies);
    let shape_buf = rec.array_buffer::<GpuShapeBounds>(shapes.len(), "shapes");
    rec.upload(shape_buf, shapes);

    rec.stage(stage::BOUNDS);
    let params = GpuBoundsParams::new(bodies.len() as u32, shapes.len() as u32);
    (
        body_buf,
        bounds::record_bounds(rec, body_buf, shape_buf, params),
    )
}

fn read_bounds(rec: &mut Recording, out: &bounds::BoundsOutputs, bodies: usize) -> FrameReadbacks {
    FrameReadbacks {
        aabbs: rec.readback_range(out.aabbs, 0, bodies as u64 * size_of::<GpuAabb>() as u64),
        bounds_status: rec.readback(out.status),
    }
}

/// Turns the GPU frame's readbacks into a result, checking each pass's status.
pub fn finish_gpu_frame(
    output: &crate::gpu::FrameOutput,
    readbacks: FrameReadbacks,
    bodies: &[GpuBody],
    shapes: &[GpuShapeBounds],
) -> Result<FrameResult> {
    let status: Vec<GpuPassStatus> = output.values(readbacks.bounds_status);
    bounds::check_status(&status[0], bodies, shapes.len() as u32)?;
    Ok(FrameResult {
        aabbs: output.values(readbacks.aabbs),
        pairs: Vec::new(),
        broadphase: None,
        profile: output.profile.clone(),
    })
}

/// The same frame on the CPU twins.
pub fn cpu_frame(bodies: &[GpuBody], shapes: &[GpuShapeBounds]) -> Result<FrameResult> {
    let started = Instant::now();
    let params = GpuBoundsParams::new(bodies.len() as u32, shapes.len() as u32);
    let mut aabbs = Vec::new();
    let t = Instant::now();
    let status = bounds::bounds_cpu(bodies, shapes, params, &mut aabbs);
    let bounds_seconds = t.elapsed().as_secs_f64();
    bounds::check_status(&status, bodies, shapes.len() as u32)?;
    Ok(FrameResult {
        aabbs,
        pairs: Vec::new(),
        broadphase: None,
        profile: Profile {
            stages: vec![StageTime {
                name: stage::BOUNDS,
                seconds: bounds_seconds,
            }],
            clock: Clock::Cpu,
            wall: started.elapsed(),
        },
    })
}

/// Where the full frame's results come back.
#[derive(Clone, Copy, Debug)]
pub struct FullReadbacks {
    /// Boxes and bounds status.
    pub bounds: FrameReadbacks,
    /// The pair counter.
    pub counter: ReadbackId,
    /// The pairs.
    pub pairs: ReadbackId,
}

/// Records the whole frame: bounds, then the broadphase on the boxes where they lie.
pub fn record_full_frame(
    bodies: &[GpuBody],
    shapes: &[GpuShapeBounds],
    method: Method,
    caps: Capacities,
) -> (Recording, FullReadbacks) {
    let mut rec = Recording::new();
    let (_, out) = record_upload_and_bounds(&mut rec, bodies, shapes);

    // record_broadphase names its own stages: broadphase/setup, broadphase/table, ...
    let bp = record_broadphase(&mut rec, out.aabbs, bodies.len() as u32, method, caps);

    rec.stage(stage::READBACK);
    let bounds = read_bounds(&mut rec, &out, bodies.len());
    let counter = rec.readback(bp.counter);
    let pairs = rec.readback(bp.pairs);
    (
        rec,
        FullReadbacks {
            bounds,
            counter,
            pairs,
        },
    )
}

/// The full frame's result and its pair counter (the caller re-runs when it overflowed).
pub fn finish_full_gpu_frame(
    output: &crate::gpu::FrameOutput,
    readbacks: FullReadbacks,
    bodies: &[GpuBody],
    shapes: &[GpuShapeBounds],
    method: Method,
) -> Result<(FrameResult, GpuPairCounter)> {
    let mut result = finish_gpu_frame(output, readbacks.bounds, bodies, shapes)?;
    let counter: GpuPairCounter = output.values::<GpuPairCounter>(readbacks.counter)[0];
    let raw: Vec<[u32; 2]> = output.values(readbacks.pairs);
    result.pairs = sorted_pairs(&raw, &counter);
    result.broadphase = Some(method);
    Ok((result, counter))
}

/// The whole frame on the CPU twins.
pub fn cpu_full_frame(
    bodies: &[GpuBody],
    shapes: &[GpuShapeBounds],
    method: Method,
) -> Result<FrameResult> {
    let mut result = cpu_frame(bodies, shapes)?;
    let t = Instant::now();
    result.pairs = cpu_pairs(&result.aabbs, method)?;
    result.broadphase = Some(method);
    let elapsed = t.elapsed();
    result.profile.stages.push(StageTime {
        name: stage::BROADPHASE,
        seconds: elapsed.as_secs_f64(),
    });
    result.profile.wall += elapsed;
    Ok(result)
}

/// Where the particle frame's results come back.
#[derive(Clone, Copy, Debug)]
pub struct ParticleReadbacks {
    /// Boxes, bounds status, pair counter and pairs.
    pub full: FullReadbacks,
    /// One contact per pair slot, in the pairs' order.
    pub contacts: ReadbackId,
}

/// Records a particle crowd's frame: bounds, broadphase, and the sphere and capsule
/// contacts of every pair straight from the broadphase's buffers (the pass reads the pair
/// count on the GPU: nothing comes back between the stages). `round_shapes` is the
/// resident shape table, bound by the caller as an external buffer of `round_bytes`.
pub fn record_particle_frame(
    bodies: &[GpuBody],
    shapes: &[GpuShapeBounds],
    method: Method,
    caps: Capacities,
    round_bytes: u64,
) -> (Recording, ParticleReadbacks, BufferProxy) {
    let mut rec = Recording::new();
    let (body_buf, out) = record_upload_and_bounds(&mut rec, bodies, shapes);
    let bp = record_broadphase(&mut rec, out.aabbs, bodies.len() as u32, method, caps);
    rec.stage(stage::CONTACTS);
    let table = rec.external(round_bytes, "round shapes");
    let contacts =
        record_round_contacts(&mut rec, bp.counter, body_buf, bp.pairs, table, caps.pairs);
    rec.stage(stage::READBACK);
    let bounds = read_bounds(&mut rec, &out, bodies.len());
    let counter = rec.readback(bp.counter);
    let pairs = rec.readback(bp.pairs);
    let contacts = rec.readback(contacts);
    (
        rec,
        ParticleReadbacks {
            full: FullReadbacks {
                bounds,
                counter,
                pairs,
            },
            contacts,
        },
        table,
    )
}
