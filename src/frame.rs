//! One frame, in stage order. [`record_frame`] writes the GPU frame as a recording;
//! [`cpu_frame`] runs the CPU twins of the same stages on the same inputs. Later stages
//! (broadphase, penetration estimate, narrowphase) are added here, in order.

use std::time::Instant;

use crate::Result;
use crate::bodies::{GpuAabb, GpuBody, GpuShapeBounds};
use crate::graph::{ReadbackId, Recording};
use crate::passes::bounds::{self, GpuBoundsParams};
use crate::passes::status::GpuPassStatus;
use crate::profile::{Clock, Profile, StageTime};

/// Stage names, shared by the GPU and CPU paths so their profiles line up.
pub mod stage {
    /// Poses and shapes to the GPU.
    pub const UPLOAD: &str = "upload";
    /// World AABBs.
    pub const BOUNDS: &str = "bounds";
    /// Results back to the CPU.
    pub const READBACK: &str = "readback";
}

/// What a frame produces.
#[derive(Clone, Debug)]
pub struct FrameResult {
    /// World box of every body.
    pub aabbs: Vec<GpuAabb>,
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

/// Records the GPU frame for `bodies` over `shapes`.
pub fn record_frame(bodies: &[GpuBody], shapes: &[GpuShapeBounds]) -> (Recording, FrameReadbacks) {
    let mut rec = Recording::new();
    let params = GpuBoundsParams::new(bodies.len() as u32, shapes.len() as u32);

    rec.stage(stage::UPLOAD);
    let body_buf = rec.array_buffer::<GpuBody>(bodies.len(), "bodies");
    rec.upload(body_buf, bodies);
    let shape_buf = rec.array_buffer::<GpuShapeBounds>(shapes.len(), "shapes");
    rec.upload(shape_buf, shapes);

    rec.stage(stage::BOUNDS);
    let out = bounds::record_bounds(&mut rec, body_buf, shape_buf, params);

    rec.stage(stage::READBACK);
    let readbacks = FrameReadbacks {
        aabbs: rec.readback_range(
            out.aabbs,
            0,
            bodies.len() as u64 * size_of::<GpuAabb>() as u64,
        ),
        bounds_status: rec.readback(out.status),
    };
    (rec, readbacks)
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
