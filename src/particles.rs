//! Running the sphere and capsule contact pass ([`crate::passes::round_contacts`]) over
//! pairs: on the GPU, with the shape table uploaded once and kept on the device (a run
//! uploads the bodies and the pairs), or on the CPU twin.

use crate::bodies::GpuBody;
use crate::gpu::Engine;
use crate::graph::Recording;
use crate::passes::round_contacts::{
    GpuRoundContact, GpuRoundShape, check_inputs, record_round_contacts, round_contacts_cpu,
};
use crate::{Error, Result};

/// One GPU run: the contacts and the GPU time of the pass.
#[derive(Clone, Debug)]
pub struct ContactRun {
    /// One per pair.
    pub contacts: Vec<GpuRoundContact>,
    /// Seconds of GPU time in the `contacts` stage (wall time where the adapter has no
    /// timestamps).
    pub gpu_time: f64,
}

/// The round shapes, resident on one device.
#[derive(Debug)]
pub struct GpuRoundContacts {
    shapes: Vec<GpuRoundShape>,
    buffer: wgpu::Buffer,
}

impl GpuRoundContacts {
    /// Uploads `shapes` to `engine`'s device.
    pub fn new(engine: &Engine, shapes: Vec<GpuRoundShape>) -> Result<Self> {
        use wgpu::util::DeviceExt;
        if shapes.is_empty() {
            return Err(Error::Usage("round contacts: no shapes".into()));
        }
        let buffer =
            engine
                .context()
                .device
                .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some("round shapes"),
                    contents: bytemuck::cast_slice(&shapes),
                    usage: wgpu::BufferUsages::STORAGE,
                });
        Ok(GpuRoundContacts { shapes, buffer })
    }

    /// The shapes.
    pub fn shapes(&self) -> &[GpuRoundShape] {
        &self.shapes
    }

    /// One contact per pair of `bodies`.
    pub fn run(
        &self,
        engine: &mut Engine,
        bodies: &[GpuBody],
        pairs: &[[u32; 2]],
    ) -> Result<ContactRun> {
        check_inputs(&self.shapes, bodies, pairs)?;
        if pairs.is_empty() {
            return Ok(ContactRun {
                contacts: Vec::new(),
                gpu_time: 0.0,
            });
        }
        let n = u32::try_from(pairs.len())
            .map_err(|_| Error::Usage("round contacts: more than 2^32 − 1 pairs".into()))?;
        let mut rec = Recording::new();
        rec.stage("upload");
        let b = rec.array_buffer::<GpuBody>(bodies.len(), "bodies");
        rec.upload(b, bodies);
        let p = rec.array_buffer::<[u32; 2]>(pairs.len(), "pairs");
        rec.upload(p, pairs);
        let table = rec.external(self.buffer.size(), "round shapes");
        rec.stage("contacts");
        let out = record_round_contacts(&mut rec, b, p, table, n);
        rec.stage("readback");
        let rb = rec.readback(out);
        let frame = engine.run(&rec, &[(table, &self.buffer)])?;
        Ok(ContactRun {
            contacts: frame.values(rb),
            gpu_time: frame.profile.stage_seconds("contacts"),
        })
    }
}

/// The CPU twin over the same inputs.
pub fn contacts_cpu(
    shapes: &[GpuRoundShape],
    bodies: &[GpuBody],
    pairs: &[[u32; 2]],
) -> Result<Vec<GpuRoundContact>> {
    round_contacts_cpu(shapes, bodies, pairs)
}
