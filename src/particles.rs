//! Running the sphere and capsule contact pass ([`crate::passes::round_contacts`]) over
//! pairs: on the GPU, with the shape table uploaded once and kept on the device (a run
//! uploads the bodies and the pairs), or on the CPU twin.

use crate::bodies::{GpuBody, GpuShapeBounds};
use crate::broadphase::{Attempt, run_until_fits};
use crate::frame::{self, Plan};
use crate::gpu::Engine;
use crate::graph::Recording;
use crate::passes::broadphase::{Capacities, Method};
use crate::passes::round_contacts::{
    GpuRoundContact, GpuRoundShape, GpuTouchContact, RoundInputs, check_inputs,
    record_round_contacts, round_contacts_cpu, touching_cpu,
};
use crate::profile::Profile;
use crate::slabs::{self, PairRun};
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
    /// Pair room for the next frame (the last frame's count and a quarter).
    caps: Option<Capacities>,
    /// Contacts the next frame expects to read back.
    expect: Option<u32>,
}

impl GpuRoundContacts {
    /// Uploads `shapes` to `engine`'s device; the named buffer-limit error when they are
    /// more than the device binds.
    pub fn new(engine: &Engine, shapes: Vec<GpuRoundShape>) -> Result<Self> {
        if shapes.is_empty() {
            return Err(Error::Usage("round contacts: no shapes".into()));
        }
        let buffer = engine
            .context()
            .storage_buffer("round shapes", bytemuck::cast_slice(&shapes))?;
        Ok(GpuRoundContacts {
            shapes,
            buffer,
            caps: None,
            expect: None,
        })
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
        let inputs = RoundInputs {
            counter,
            bodies: b,
            pairs: p,
            shapes: table,
        };
        let contacts = record_round_contacts(&mut rec, inputs, n);
        rec.stage("readback");
        let rb = rec.readback(contacts);
        let frame = engine.run(&rec, &[(table, &self.buffer)])?;
        Ok(ContactRun {
            contacts: frame.values(rb),
            gpu_time: frame.profile.stage_seconds("contacts"),
        })
    }
}

/// A particle frame's result: what came back to the CPU.
#[derive(Clone, Debug, PartialEq)]
pub struct ParticleFrame {
    /// Box pairs the broadphase found (the pairs themselves stay on the device).
    pub pairs: u32,
    /// The contacts at the frame's distance or closer, sorted by pair.
    pub contacts: Vec<GpuTouchContact>,
    /// Bytes the frame copied back to the CPU (0 on the CPU twin).
    pub read_back: u64,
    /// Stage timings (`upload`, `bounds`, `broadphase/…`, `contacts`, `readback`; empty
    /// on the CPU twin).
    pub profile: Profile,
}

impl GpuRoundContacts {
    /// A whole particle frame on the GPU: bounds, broadphase and contacts in one
    /// submission, nothing read back between stages, and afterwards only the pair count
    /// and the contacts `within` the distance (0: touching or overlapping; a speculative
    /// margin above it); re-run with more room when the pairs overflowed (no pair is
    /// dropped). `bounds` are the shapes' local bounds, in the same order as this runner's
    /// shapes. Pair room and the contacts expected come from the last frame. Past what
    /// one frame binds, the bodies run in slabs ([`crate::slabs`]), each slab's pairs
    /// coming back too so that a pair across a cut is counted once.
    pub fn frame(
        &mut self,
        engine: &mut Engine,
        bodies: &[GpuBody],
        bounds: &[GpuShapeBounds],
        method: Method,
        within: f32,
    ) -> Result<ParticleFrame> {
        if bounds.len() != self.shapes.len() {
            return Err(Error::Usage(format!(
                "particle frame: {} shape bounds for {} round shapes",
                bounds.len(),
                self.shapes.len()
            )));
        }
        if within.is_nan() {
            return Err(Error::Usage(
                "particle frame: the contact distance is NaN".into(),
            ));
        }
        crate::passes::broadphase::check_body_count(bodies.len())?;
        let cap = slabs::frame_capacity(&engine.context().limits());
        let ask = Ask {
            bounds,
            method,
            within,
        };
        if bodies.len() > cap {
            return self.slab_frame(engine, bodies, ask, cap);
        }
        Ok(self.frame_once(engine, bodies, ask, false)?.0)
    }

    /// A particle frame of a scene too large for one: its boxes from the CPU twin of the
    /// bounds pass (which names a bad pose), then a frame per slab, each pair and its
    /// contact kept from the first slab holding both bodies.
    fn slab_frame(
        &mut self,
        engine: &mut Engine,
        bodies: &[GpuBody],
        ask: Ask<'_>,
        cap: usize,
    ) -> Result<ParticleFrame> {
        let started = std::time::Instant::now();
        let boxes = frame::cpu(bodies, ask.bounds, None)?.aabbs;
        let placing = started.elapsed().as_secs_f64();
        let mut profiles = Vec::new();
        let mut read_back = 0;
        let merged = slabs::run(&boxes, cap, |members| {
            let part: Vec<GpuBody> = members.iter().map(|&i| bodies[i as usize]).collect();
            let (f, pairs) = self.frame_once(engine, &part, ask, true)?;
            read_back += f.read_back;
            profiles.push(f.profile);
            Ok(with_contacts(pairs, f.contacts))
        })?;
        Ok(ParticleFrame {
            pairs: u32::try_from(merged.len())
                .map_err(|_| Error::Usage("particle frame: 2^32 or more pairs".into()))?,
            contacts: merged
                .into_iter()
                .filter_map(|(pair, c)| c.map(|c| GpuTouchContact { pair, ..c }))
                .collect(),
            read_back,
            profile: Profile::of_slabs(placing, profiles),
        })
    }

    /// One frame of `bodies` (at most what a frame binds), and its pairs when `pairs_back`
    /// (else none).
    fn frame_once(
        &mut self,
        engine: &mut Engine,
        bodies: &[GpuBody],
        ask: Ask<'_>,
        pairs_back: bool,
    ) -> Result<(ParticleFrame, Vec<[u32; 2]>)> {
        let Ask {
            bounds,
            method,
            within,
        } = ask;
        let caps = self.caps.unwrap_or_else(|| Capacities::guess(bodies.len()));
        // The gathered contacts take an entry per pair of room.
        let limits = engine.context().limits();
        let max = Capacities::device_max(&limits)
            .pairs_within(&limits, size_of::<GpuTouchContact>() as u64);
        let expect = self.expect;
        let ((result, _, _), next) = run_until_fits(caps, method, max, |caps| {
            let plan = Plan::Particles {
                method,
                caps,
                table_bytes: self.buffer.size(),
                within,
                // Before any frame: a contact for an eighth of the bodies.
                expect: expect.unwrap_or((bodies.len() / 8).max(256) as u32),
                pairs_back,
            };
            let (rec, rb) = frame::record(frame::Bodies::Upload(bodies), bounds, plan);
            let table = rb.table.expect("a particle plan binds its table");
            let output = engine.run(&rec, &[(table, &self.buffer)])?;
            let done = frame::finish(&output, &rb, bodies, bounds)?;
            let counter = done.counter.expect("a broadphase ran");
            let value = ParticleFrame {
                pairs: counter.count,
                contacts: done.touching.expect("a particle plan reads contacts back"),
                read_back: output.copied_bytes,
                profile: done.result.profile,
            };
            Ok(Attempt {
                value: (value, done.result.pairs),
                counter,
            })
        })?;
        self.caps = Some(next);
        let n = result.0.contacts.len() as u32;
        self.expect = Some(n.saturating_add(n / 8).max(256));
        Ok(result)
    }
}

/// What a particle frame is asked for, beside its bodies.
#[derive(Clone, Copy)]
struct Ask<'a> {
    /// The shapes' local bounds.
    bounds: &'a [GpuShapeBounds],
    /// The broadphase.
    method: Method,
    /// Contacts at this distance or closer come back.
    within: f32,
}

/// Each pair (sorted) with its contact, if it has one (`contacts`: sorted by pair, a
/// subset of the pairs).
fn with_contacts(
    pairs: Vec<[u32; 2]>,
    contacts: Vec<GpuTouchContact>,
) -> PairRun<Option<GpuTouchContact>> {
    let mut contacts = contacts.into_iter().peekable();
    pairs
        .into_iter()
        .map(|p| (p, contacts.next_if(|c| c.pair == p)))
        .collect()
}

/// The particle frame on the CPU twins of its stages (bounds, broadphase, contacts, the
/// gathering of those `within`): what [`GpuRoundContacts::frame`] returns, up to f32
/// rounding of the distances (a contact within a few ulps of `within` may be on one side
/// only).
pub fn particle_frame_cpu(
    shapes: &[GpuRoundShape],
    bodies: &[GpuBody],
    bounds: &[GpuShapeBounds],
    method: Method,
    within: f32,
) -> Result<ParticleFrame> {
    let twin = frame::cpu(bodies, bounds, Some(method))?;
    let contacts = round_contacts_cpu(shapes, bodies, &twin.pairs)?;
    Ok(ParticleFrame {
        pairs: u32::try_from(twin.pairs.len())
            .map_err(|_| Error::Usage("particle frame: 2^32 or more pairs".into()))?,
        contacts: touching_cpu(&twin.pairs, &contacts, within),
        read_back: 0,
        profile: twin.profile,
    })
}

/// The CPU twin over the same inputs.
pub fn contacts_cpu(
    shapes: &[GpuRoundShape],
    bodies: &[GpuBody],
    pairs: &[[u32; 2]],
) -> Result<Vec<GpuRoundContact>> {
    round_contacts_cpu(shapes, bodies, pairs)
}
