//! Running the sphere and capsule contact pass ([`crate::passes::round_contacts`]) over
//! pairs: on the GPU, with the shape table uploaded once and kept on the device (a run
//! uploads the bodies and the pairs), or on the CPU twin.

use crate::bodies::{GpuBody, GpuShapeBounds};
use crate::broadphase::{Attempt, run_until_fits};
use crate::frame::{self, Plan};
use crate::gpu::Engine;
use crate::graph::Recording;
use crate::passes::broadphase::{Capacities, GpuPairCounter, Method};
use crate::passes::round_contacts::{
    GpuRoundContact, GpuRoundShape, check_inputs, record_round_contacts, round_contacts_cpu,
};
use crate::profile::Profile;
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
        let counter = rec.buffer(8, "round pair count");
        rec.upload(counter, &[n, n]);
        let table = rec.external(self.buffer.size(), "round shapes");
        rec.stage("contacts");
        let out = record_round_contacts(&mut rec, counter, b, p, table, n);
        rec.stage("readback");
        let rb = rec.readback(out);
        let frame = engine.run(&rec, &[(table, &self.buffer)])?;
        Ok(ContactRun {
            contacts: frame.values(rb),
            gpu_time: frame.profile.stage_seconds("contacts"),
        })
    }
}

/// A particle frame's result: the broadphase pairs, sorted, and each one's contact.
#[derive(Clone, Debug)]
pub struct ParticleFrame {
    /// Overlapping box pairs `[a, b]`, `a < b`, sorted.
    pub pairs: Vec<[u32; 2]>,
    /// The contact of each pair.
    pub contacts: Vec<GpuRoundContact>,
    /// Stage timings (`upload`, `bounds`, `broadphase/…`, `contacts`, `readback`).
    pub profile: Profile,
}

impl GpuRoundContacts {
    /// A whole particle frame on the GPU: bounds, broadphase and contacts in one
    /// submission, nothing read back between stages; re-run with more room when the pairs
    /// overflowed (no pair is dropped). `bounds` are the shapes' local bounds, in the same
    /// order as this runner's shapes.
    pub fn frame(
        &self,
        engine: &mut Engine,
        bodies: &[GpuBody],
        bounds: &[GpuShapeBounds],
        method: Method,
    ) -> Result<ParticleFrame> {
        if bounds.len() != self.shapes.len() {
            return Err(Error::Usage(format!(
                "particle frame: {} shape bounds for {} round shapes",
                bounds.len(),
                self.shapes.len()
            )));
        }
        crate::passes::broadphase::check_body_count(bodies.len())?;
        let caps = Capacities::guess(bodies.len());
        let max = Capacities::device_max(&engine.context().limits());
        let ((result, _, _), _) = run_until_fits(caps, method, max, |caps| {
            let plan = Plan::Particles {
                method,
                caps,
                table_bytes: self.buffer.size(),
            };
            let (rec, rb) = frame::record(frame::Bodies::Upload(bodies), bounds, plan);
            let table = rb.table.expect("a particle plan binds its table");
            let output = engine.run(&rec, &[(table, &self.buffer)])?;
            let done = frame::finish(&output, &rb, bodies, bounds)?;
            let (full, counter) = (done.result, done.counter.expect("a broadphase ran"));
            let (_, pair_readback) = rb.pairs.expect("a broadphase ran");
            let raw_pairs: Vec<[u32; 2]> = output.values(pair_readback);
            let raw_contacts: Vec<GpuRoundContact> =
                output.values(rb.contacts.expect("a particle plan reads contacts back"));
            let value = ParticleFrame {
                pairs: full.pairs,
                contacts: paired(&raw_pairs, &raw_contacts, &counter),
                profile: full.profile,
            };
            Ok(Attempt { value, counter })
        })?;
        Ok(result)
    }
}

/// The valid raw pairs' contacts in sorted pair order (the order `sorted_pairs` gives).
fn paired(
    raw: &[[u32; 2]],
    contacts: &[GpuRoundContact],
    counter: &GpuPairCounter,
) -> Vec<GpuRoundContact> {
    let valid = (counter.count.min(counter.capacity) as usize)
        .min(raw.len())
        .min(contacts.len());
    let mut order: Vec<u32> = (0..valid as u32).collect();
    order.sort_unstable_by_key(|&i| raw[i as usize]);
    order.iter().map(|&i| contacts[i as usize]).collect()
}

/// The CPU twin over the same inputs.
pub fn contacts_cpu(
    shapes: &[GpuRoundShape],
    bodies: &[GpuBody],
    pairs: &[[u32; 2]],
) -> Result<Vec<GpuRoundContact>> {
    round_contacts_cpu(shapes, bodies, pairs)
}
