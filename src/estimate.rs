//! Running the sampled depth estimate ([`crate::passes::depth`]) over pairs: on the GPU,
//! with the shape tables uploaded once and kept on the device (a frame uploads only the
//! bodies and the pairs), or on the CPU twin.

use crate::bodies::GpuBody;
use crate::gpu::Engine;
use crate::graph::{BufferProxy, Recording};
use crate::passes::depth::{
    DepthShapeBuffers, DepthShapes, GpuDepthEstimate, GpuDepthParams, check_cut, check_inputs,
    depth_estimate_cpu, record_depth_estimate,
};
use crate::{Error, Result};

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
    /// Uploads the tables of `shapes` to `engine`'s device.
    pub fn new(engine: &Engine, shapes: DepthShapes) -> Self {
        let ctx = engine.context();
        let buffer = |label, bytes: &[u8]| ctx.storage_buffer(label, bytes);
        let buffers = [
            buffer("depth shapes", bytemuck::cast_slice(&shapes.shapes)),
            buffer("depth vertices", bytemuck::cast_slice(&shapes.vertices)),
            buffer("depth normals", bytemuck::cast_slice(&shapes.normals)),
        ];
        GpuDepthEstimator { shapes, buffers }
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

    /// One estimate per pair of `bodies`, with a k × k cube map per face.
    pub fn run(
        &self,
        engine: &mut Engine,
        bodies: &[GpuBody],
        pairs: &[[u32; 2]],
        k: u32,
    ) -> Result<DepthRun> {
        check_inputs(&self.shapes, bodies, pairs)?;
        if pairs.is_empty() {
            return Ok(DepthRun {
                estimates: Vec::new(),
                gpu_time: 0.0,
            });
        }
        let n = u32::try_from(pairs.len())
            .map_err(|_| Error::Usage("depth estimate: more than 2^32 − 1 pairs".into()))?;
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
    let n = u32::try_from(pairs.len())
        .map_err(|_| Error::Usage("depth estimate: more than 2^32 − 1 pairs".into()))?;
    let params = GpuDepthParams::new(n, k, shapes)?;
    Ok(depth_estimate_cpu(shapes, bodies, pairs, &params))
}
