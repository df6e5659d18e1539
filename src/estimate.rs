//! Running the sampled depth estimate ([`crate::passes::depth`]) over pairs: on the GPU,
//! with the shape tables uploaded once and kept on the device (a frame uploads only the
//! bodies and the pairs), or on the CPU twin.

use crate::Result;
use crate::bodies::GpuBody;
use crate::gpu::Engine;
use crate::graph::{BufferProxy, Recording};
use crate::passes::depth::{
    DepthShapeBuffers, DepthShapes, GpuDepthEstimate, GpuDepthParams, check_cut, check_inputs,
    depth_estimate_cpu, pairs_within_limits, record_depth_estimate,
};

/// One GPU run: the estimates and the GPU time of the pass.
#[derive(Clone, Debug)]
pub struct DepthRun {
    /// One per pair.
    pub estimates: Vec<GpuDepthEstimate>,
    /// Seconds of GPU time in the `depth` stage (wall time where the adapter has no
    /// timestamps).
    pub gpu_time: f64,
}

/// The depth estimate's shape tables, resident on one device.
#[derive(Debug)]
pub struct GpuDepthEstimator {
    shapes: DepthShapes,
    buffers: [wgpu::Buffer; 3],
}

impl GpuDepthEstimator {
    /// Uploads the tables of `shapes` to `engine`'s device; the named buffer-limit error
    /// when a table is more than the device binds.
    pub fn new(engine: &Engine, shapes: DepthShapes) -> Result<Self> {
        let ctx = engine.context();
        let buffer = |label, bytes: &[u8]| ctx.storage_buffer(label, bytes);
        let buffers = [
            buffer("depth shapes", bytemuck::cast_slice(&shapes.shapes))?,
            buffer("depth vertices", bytemuck::cast_slice(&shapes.vertices))?,
            buffer("depth normals", bytemuck::cast_slice(&shapes.normals))?,
        ];
        Ok(GpuDepthEstimator { shapes, buffers })
    }

    /// The tables.
    pub fn shapes(&self) -> &DepthShapes {
        &self.shapes
    }

    /// The resident tables' sizes (shapes, vertices, normals), for a frame that declares
    /// them ([`crate::frame::Plan::Depth`]).
    pub fn table_bytes(&self) -> [u64; 3] {
        self.buffers.each_ref().map(wgpu::Buffer::size)
    }

    /// The resident tables bound to a frame's declarations of them.
    pub fn bind(&self, tables: DepthShapeBuffers) -> [(BufferProxy, &wgpu::Buffer); 3] {
        [
            (tables.shapes, &self.buffers[0]),
            (tables.vertices, &self.buffers[1]),
            (tables.normals, &self.buffers[2]),
        ]
    }

    /// One estimate per pair of `bodies`, with a k × k cube map per face: in runs of as
    /// many pairs as one run binds on the device ([`pairs_within_limits`]).
    pub fn run(
        &self,
        engine: &mut Engine,
        bodies: &[GpuBody],
        pairs: &[[u32; 2]],
        k: u32,
    ) -> Result<DepthRun> {
        check_inputs(&self.shapes, bodies, pairs)?;
        let most = pairs_within_limits(&engine.context().limits(), k, &self.shapes)?;
        let mut out = DepthRun {
            estimates: Vec::with_capacity(pairs.len()),
            gpu_time: 0.0,
        };
        for some in pairs.chunks(most.max(1) as usize) {
            let run = self.run_within_limits(engine, bodies, some, k)?;
            out.estimates.extend(run.estimates);
            out.gpu_time += run.gpu_time;
        }
        Ok(out)
    }

    /// One run of the pass over at most [`pairs_within_limits`] pairs.
    fn run_within_limits(
        &self,
        engine: &mut Engine,
        bodies: &[GpuBody],
        pairs: &[[u32; 2]],
        k: u32,
    ) -> Result<DepthRun> {
        let n = u32::try_from(pairs.len()).expect("at most pairs_within_limits pairs");
        let params = GpuDepthParams::new(n, k, &self.shapes)?;
        let mut rec = Recording::new();
        rec.stage("upload");
        let b = rec.array_buffer::<GpuBody>(bodies.len(), "bodies");
        rec.upload(b, bodies);
        let p = rec.array_buffer::<[u32; 2]>(pairs.len(), "pairs");
        rec.upload(p, pairs);
        let tables = DepthShapeBuffers {
            shapes: rec.external(self.buffers[0].size(), "depth shapes"),
            vertices: rec.external(self.buffers[1].size(), "depth vertices"),
            normals: rec.external(self.buffers[2].size(), "depth normals"),
        };
        rec.stage("depth");
        let out = record_depth_estimate(&mut rec, b, p, tables, params);
        rec.stage("readback");
        let rb_estimates = rec.readback(out.estimates);
        let rb_cut = rec.readback(out.cut);
        let frame = engine.run(
            &rec,
            &[
                (tables.shapes, &self.buffers[0]),
                (tables.vertices, &self.buffers[1]),
                (tables.normals, &self.buffers[2]),
            ],
        )?;
        check_cut(frame.values::<u32>(rb_cut)[0])?;
        Ok(DepthRun {
            estimates: frame.values(rb_estimates),
            gpu_time: frame.profile.stage_seconds("depth"),
        })
    }
}

/// The CPU twin over the same inputs.
pub fn estimate_cpu(
    shapes: &DepthShapes,
    bodies: &[GpuBody],
    pairs: &[[u32; 2]],
    k: u32,
) -> Result<Vec<GpuDepthEstimate>> {
    check_inputs(shapes, bodies, pairs)?;
    // The twin reads the parameters a pair's estimate needs, not the count (the GPU's
    // runs are as many as its limits ask).
    let params = GpuDepthParams::new(1, k, shapes)?;
    Ok(depth_estimate_cpu(shapes, bodies, pairs, &params))
}
