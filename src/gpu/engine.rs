//! Runs a [`Recording`] on a device. The engine owns the compiled pipelines, a pool of
//! buffers reused across frames, a ring of readback (staging) buffers so that up to
//! [`READBACK_RING`] frames can be in flight while the CPU works on earlier ones, and the
//! timestamp queries. It knows nothing of collision detection.
//!
//! A readback sized by a count the GPU writes ([`Counted`]: a pass's pairs) copies its
//! head (what the caller expects) with the frame, and holds its buffer out of the pool
//! until the frame is collected; when the count needs more, the rest is copied then, in a
//! submission of its own. WebGPU has no copy whose size a buffer gives, so this is how the
//! bytes past the count never leave the device without a round trip in every frame.
//!
//! A stage's dispatches share compute passes: consecutive dispatches go into one pass, and
//! an upload or clear that is the first use of a pooled buffer (a pass's parameters) is
//! encoded at the stage's start, so it does not split them (`plan_passes`,
//! `hoisted_commands`). On an H100, side by side against a pass per dispatch with every
//! command in place (`proxima bench gpu --pass-per-dispatch`), the hash frame (bounds +
//! broadphase) took 0.089 against 0.158 ms at 10k bodies, 0.120 against 0.190 at 100k,
//! 0.540 against 0.626 at 1M; the radix sort's stage 0.209 against 0.353 ms at 10k pairs,
//! 0.453 against 0.602 at 1M.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use wgpu::BufferUsages;

use super::context::GpuContext;
use super::progress::StageSubmissions;
use crate::graph::{BufferId, BufferOrigin, BufferProxy, Command, Counted, ReadbackId, Recording};
use crate::profile::{Clock, Profile, StageTime};
use crate::shaders::{self, BindingKind, ShaderId, ShaderInfo};
use crate::{Error, Result};

/// Frames that may be in flight at once (each holds one readback slot).
pub const READBACK_RING: usize = 3;

/// How long a finished submission's map callback may take to land (it is delivered by
/// whichever thread polls the device next; as generous as a stall, since only a broken
/// device ever reaches it).
const MAP_TIMEOUT: Duration = super::progress::STALL_LIMIT;

/// How stages are timed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimingMode {
    /// Timestamp queries where the device has them, CPU timing otherwise.
    Auto,
    /// Submit and wait stage by stage and time each on the CPU.
    Cpu,
}

struct Pipeline {
    info: ShaderInfo,
    layout: wgpu::BindGroupLayout,
    pipeline: wgpu::ComputePipeline,
}

struct Slot {
    staging: Option<wgpu::Buffer>,
    busy: bool,
}

/// A frame submitted to the GPU whose readbacks are not collected yet.
#[derive(Debug)]
#[must_use = "a submitted frame holds a readback slot until `Engine::wait` collects it"]
pub struct PendingFrame {
    slot: usize,
    submissions: StageSubmissions,
    /// Each readback's place in the staging buffer and the bytes copied there.
    readbacks: Vec<(u64, u64)>,
    /// The readbacks sized by a count, and the buffers they read, held until collected.
    counted: Vec<CountedRead>,
    held: Vec<(wgpu::Buffer, BufferUsages)>,
    timestamps: Option<TimestampLayout>,
    cpu_stages: Vec<StageTime>,
    mapped: MapFlag,
    used_bytes: u64,
    started: Instant,
}

/// A readback sized by a count ([`Counted`]), as the engine runs it.
#[derive(Debug)]
struct CountedRead {
    /// Its index among the frame's readbacks.
    index: usize,
    /// The buffer read (its id in the recording, then the buffer once the frame has
    /// encoded), and the range the readback may cover.
    id: BufferId,
    buffer: Option<wgpu::Buffer>,
    offset: u64,
    size: u64,
    /// Bytes copied with the frame.
    head: u64,
    counted: Counted,
}

#[derive(Debug)]
struct TimestampLayout {
    offset: u64,
    /// Stage index of each timed span (span k wrote queries 2k and 2k+1).
    span_stage: Vec<usize>,
    stage_names: Vec<&'static str>,
    /// Per compute pass in encoding order: whether it begins its stage's span (writes the
    /// span's begin timestamp) and whether it ends it (writes the end).
    pass_ends: Vec<[bool; 2]>,
}

/// What a frame produced.
#[derive(Debug)]
pub struct FrameOutput {
    readbacks: Vec<Vec<u8>>,
    /// Stage timings.
    pub profile: Profile,
    /// Bytes copied from the frame's buffers to the CPU (a counted readback's head and
    /// tail; timestamps not included).
    pub copied_bytes: u64,
    /// Copies to the CPU the frame took: 1, plus one for each counted readback whose count
    /// passed its head.
    pub round_trips: u32,
}

impl FrameOutput {
    /// Bytes of a readback.
    pub fn bytes(&self, id: ReadbackId) -> &[u8] {
        &self.readbacks[id.0 as usize]
    }

    /// A readback as Pod values.
    pub fn values<T: bytemuck::Pod>(&self, id: ReadbackId) -> Vec<T> {
        bytemuck::pod_collect_to_vec(self.bytes(id))
    }
}

/// Runs recordings. See the module comment.
pub struct Engine {
    ctx: GpuContext,
    pipelines: HashMap<ShaderId, Pipeline>,
    pool: HashMap<(u64, BufferUsages), Vec<wgpu::Buffer>>,
    slots: Vec<Slot>,
    belt: wgpu::util::StagingBelt,
    queries: Option<(wgpu::QuerySet, u32, wgpu::Buffer)>,
    timing: TimingMode,
    /// Timestamps around every pass instead of every stage's run of passes (the A/B
    /// baseline of `bench gpu --pass-timestamps`).
    pass_timestamps: bool,
    /// A compute pass for every dispatch, every command in place (the A/B baseline of
    /// `bench gpu --pass-per-dispatch`).
    pass_per_dispatch: bool,
    overrides: Vec<(&'static str, f64)>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("adapter", &self.ctx.info.name)
            .field("pipelines", &self.pipelines.len())
            .field("timing", &self.timing)
            .finish_non_exhaustive()
    }
}

impl Engine {
    /// An engine on `ctx`.
    pub fn new(ctx: GpuContext) -> Self {
        // Chunks of 4 MiB, or what the device lets a buffer hold.
        let chunk = ctx.limits().max_buffer_size.min(1 << 22);
        let belt = wgpu::util::StagingBelt::new(ctx.device.clone(), chunk);
        Self {
            ctx,
            pipelines: HashMap::new(),
            pool: HashMap::new(),
            slots: (0..READBACK_RING)
                .map(|_| Slot {
                    staging: None,
                    busy: false,
                })
                .collect(),
            belt,
            queries: None,
            timing: TimingMode::Auto,
            pass_timestamps: false,
            pass_per_dispatch: false,
            overrides: Vec::new(),
        }
    }

    /// Sets a pipeline-overridable constant (`override NAME` in WGSL) for every shader
    /// that declares it, such as `PAIR_STAGING` (0 turns the workgroup pair staging off);
    /// pipelines are rebuilt at their next use.
    pub fn set_override(&mut self, name: &'static str, value: f64) {
        self.overrides.retain(|(n, _)| *n != name);
        self.overrides.push((name, value));
        self.pipelines.clear();
    }

    /// The context the engine runs on.
    pub fn context(&self) -> &GpuContext {
        &self.ctx
    }

    /// Chooses how stages are timed.
    pub fn set_timing(&mut self, timing: TimingMode) {
        self.timing = timing;
    }

    /// With `true`, GPU timestamps bracket every pass rather than each stage's run of
    /// passes: the same stage times, at the cost the timestamps add (for an A/B).
    pub fn set_pass_timestamps(&mut self, every_pass: bool) {
        self.pass_timestamps = every_pass;
    }

    /// With `true`, every dispatch is encoded in a compute pass of its own and every upload
    /// and clear where it was recorded (the encoding before `plan_passes`), rather than
    /// consecutive dispatches sharing one pass and first uploads moved to the stage's
    /// start: the same results, at the cost the passes and copies add (for an A/B).
    pub fn set_pass_per_dispatch(&mut self, own_pass: bool) {
        self.pass_per_dispatch = own_pass;
    }

    /// The clock the next frame will be timed with.
    pub fn clock(&self) -> Clock {
        if self.timing == TimingMode::Auto && self.ctx.has_timestamps() {
            Clock::GpuTimestamps
        } else {
            Clock::Cpu
        }
    }

    /// Compiles every shader now rather than at first use (so the first frame's timings
    /// do not include pipeline creation).
    pub fn prepare_all(&mut self) -> Result<()> {
        for &id in ShaderId::ALL {
            self.pipeline(id)?;
        }
        Ok(())
    }

    /// Submits and waits: the readbacks and timings of one frame.
    pub fn run(
        &mut self,
        recording: &Recording,
        externals: &[(BufferProxy, &wgpu::Buffer)],
    ) -> Result<FrameOutput> {
        let pending = self.submit(recording, externals)?;
        self.wait(pending)
    }

    /// Records `recording` into command buffers and submits it. `externals` supplies the
    /// buffers declared with [`Recording::external`].
    pub fn submit(
        &mut self,
        recording: &Recording,
        externals: &[(BufferProxy, &wgpu::Buffer)],
    ) -> Result<PendingFrame> {
        self.ctx.check()?;
        let started = Instant::now();
        for command in recording.commands() {
            if let Command::Dispatch { shader, .. } | Command::DispatchIndirect { shader, .. } =
                command
            {
                self.pipeline(*shader)?;
            }
        }
        let pipelines = &self.pipelines;
        let usages = recording.validate(&|id: ShaderId| {
            pipelines
                .get(&id)
                .map(|p| p.info.bindings.clone())
                .ok_or_else(|| Error::Recording(format!("{} not compiled", id.file_name())))
        })?;
        let slot = self
            .slots
            .iter()
            .position(|s| !s.busy)
            .ok_or_else(|| {
                Error::Readback(format!(
                    "all {READBACK_RING} readback slots are in flight: wait for a frame before submitting another"
                ))
            })?;
        self.check_limits(recording, &usages)?;

        // Layout of the staging buffer: the readbacks (of a counted one, its head), then
        // the timestamps. It is one buffer, within the device's max_buffer_size: the plain
        // readbacks and the timestamps must fit, and counted heads shrink to what is left
        // (their tails come after the frame).
        let PassPlan {
            hoisted,
            spans,
            opens,
            pass_ends,
        } = plan_passes(recording, self.pass_timestamps, self.pass_per_dispatch);
        let plain: u64 = recording
            .commands()
            .iter()
            .filter_map(|c| match c {
                Command::Readback {
                    size,
                    counted: None,
                    ..
                } => Some(size.next_multiple_of(wgpu::MAP_ALIGNMENT)),
                _ => None,
            })
            .sum();
        let limit = self.ctx.limits().max_buffer_size;
        let reserved = plain + 256 + u64::from(spans) * 2 * 8;
        if reserved > limit {
            return Err(Error::BufferLimit {
                label: "readback staging".into(),
                needed: reserved,
                limit,
                limit_name: "max_buffer_size",
            });
        }
        let mut room = limit - reserved;
        let mut readbacks = Vec::new();
        let mut counted = Vec::new();
        let mut used_bytes = 0u64;
        for command in recording.commands() {
            if let Command::Readback {
                buffer,
                size,
                offset,
                counted: how,
                ..
            } = command
            {
                let copy = match how {
                    Some(c) => {
                        let head = (c.head.min(*size) / 4 * 4).min(room / 8 * 8);
                        room -= head.next_multiple_of(wgpu::MAP_ALIGNMENT);
                        counted.push(CountedRead {
                            index: readbacks.len(),
                            id: buffer.id,
                            buffer: None,
                            offset: *offset,
                            size: *size,
                            head,
                            counted: *c,
                        });
                        head
                    }
                    None => *size,
                };
                readbacks.push((used_bytes, copy));
                used_bytes += copy.next_multiple_of(wgpu::MAP_ALIGNMENT);
            }
        }
        // A frame with more timed spans than one query set holds is timed on the CPU.
        let clock = match self.clock() {
            Clock::GpuTimestamps if spans * 2 > wgpu::QUERY_SET_MAX_QUERIES => Clock::Cpu,
            clock => clock,
        };
        let timestamps = (clock == Clock::GpuTimestamps && spans > 0).then(|| {
            let offset = used_bytes.next_multiple_of(256);
            used_bytes = offset + u64::from(spans) * 2 * 8;
            TimestampLayout {
                offset,
                span_stage: Vec::new(),
                stage_names: Vec::new(),
                pass_ends,
            }
        });
        let staging = self.staging(slot, used_bytes.max(8));
        if timestamps.is_some() {
            self.ensure_queries(spans * 2);
        }

        let mut run = FrameRun {
            ctx: &self.ctx,
            pipelines: &self.pipelines,
            pool: &mut self.pool,
            belt: &mut self.belt,
            usages: &usages,
            live: HashMap::new(),
            externals,
            recording,
            encoder: None,
            queries: self.queries.as_ref().map(|(q, _, _)| q),
            timestamps,
            spans_begun: 0,
            passes_encoded: 0,
            pass: None,
            opens: &opens,
            hoisted: &hoisted,
            dispatches_encoded: 0,
            stage_index: 0,
            cpu_stages: Vec::new(),
            cpu_stage_start: None,
            cpu_timing: clock == Clock::Cpu,
            stage: "unnamed",
            submissions: StageSubmissions::default(),
        };
        run.encode(&staging, &readbacks)?;
        let FrameRun {
            mut encoder,
            mut timestamps,
            mut cpu_stages,
            live,
            cpu_stage_start,
            stage,
            mut submissions,
            ..
        } = run;
        let mut encoder = encoder.take().expect("encode leaves an encoder open");
        if let (Some(layout), Some((set, _, resolve))) = (&mut timestamps, &self.queries) {
            let count = layout.span_stage.len() as u32;
            if count > 0 {
                encoder.resolve_query_set(set, 0..count * 2, resolve, 0);
                encoder.copy_buffer_to_buffer(
                    resolve,
                    0,
                    &staging,
                    layout.offset,
                    u64::from(count) * 16,
                );
            }
        }
        self.belt.finish();
        let submission = submissions.submit(&self.ctx, stage, encoder.finish());
        self.belt.recall();
        if let Some((name, start)) = cpu_stage_start {
            submissions.wait(&self.ctx, &submission)?;
            cpu_stages.push(StageTime {
                name,
                seconds: start.elapsed().as_secs_f64(),
            });
        }
        // Pooled buffers go back to the pool now: later submissions on this queue run after
        // this one, so reusing them cannot race with this frame. A buffer read by count is
        // held until the frame is collected (its tail may still be copied).
        for read in &mut counted {
            read.buffer = live.get(&read.id).cloned();
        }
        let mut held = Vec::new();
        for (id, buffer) in live {
            let (_, origin) = recording.buffers()[id.0 as usize];
            if origin == BufferOrigin::Pooled {
                if counted.iter().any(|read| read.id == id) {
                    held.push((buffer, usages[&id]));
                } else {
                    self.release(usages[&id], buffer);
                }
            }
        }
        let mapped = request_map(&staging, used_bytes.max(8));
        if let Err(e) = self.ctx.check() {
            // The frame never ran: drop its staging buffer (its map request is void).
            self.slots[slot].staging = None;
            return Err(e);
        }
        self.slots[slot].busy = true;
        Ok(PendingFrame {
            slot,
            submissions,
            readbacks,
            counted,
            held,
            timestamps,
            cpu_stages,
            mapped,
            used_bytes: used_bytes.max(8),
            started,
        })
    }

    /// Waits for a submitted frame and collects its readbacks and timings (taking the
    /// ticket by value makes waiting twice on one frame impossible).
    pub fn wait(&mut self, frame: PendingFrame) -> Result<FrameOutput> {
        let slot = frame.slot;
        let result = self.collect(&frame);
        // The buffers read by count go back to the pool once their tails are copied.
        for (buffer, usage) in frame.held {
            self.release(usage, buffer);
        }
        let staging = self.slots[slot].staging.as_ref();
        if let Some(staging) = staging {
            // Unmapping a buffer that is not mapped is a validation error, not a panic,
            // and after a failed map there is nothing else to do with it.
            if result.is_ok() {
                staging.unmap();
            } else {
                self.slots[slot].staging = None;
            }
        }
        self.slots[slot].busy = false;
        result
    }

    fn collect(&mut self, frame: &PendingFrame) -> Result<FrameOutput> {
        frame.submissions.wait_all(&self.ctx)?;
        await_mapped(&self.ctx, &frame.mapped)?;
        self.ctx.check()?;
        let staging = self.slots[frame.slot]
            .staging
            .as_ref()
            .ok_or_else(|| Error::Readback("readback slot lost its buffer".into()))?;
        let view = staging
            .slice(0..frame.used_bytes)
            .get_mapped_range()
            .map_err(|e| Error::Readback(format!("mapped range: {e:?}")))?;
        let mut readbacks: Vec<Vec<u8>> = frame
            .readbacks
            .iter()
            .map(|&(offset, size)| view[offset as usize..(offset + size) as usize].to_vec())
            .collect();
        let mut copied_bytes: u64 = frame.readbacks.iter().map(|&(_, size)| size).sum();
        let mut round_trips = 1;
        let (stages, clock) = match &frame.timestamps {
            Some(layout) => {
                let period = f64::from(self.ctx.queue.get_timestamp_period());
                let ticks: &[[u64; 2]] = bytemuck::cast_slice(
                    &view[layout.offset as usize
                        ..layout.offset as usize + layout.span_stage.len() * 16],
                );
                let seconds = stage_seconds_from_ticks(
                    ticks,
                    &layout.span_stage,
                    layout.stage_names.len(),
                    period,
                );
                // A stage of copies alone (upload, readback) has no GPU time to report, and
                // is left out rather than shown as 0.
                let stages: Vec<StageTime> = layout
                    .stage_names
                    .iter()
                    .zip(seconds)
                    .filter_map(|(&name, s)| s.map(|seconds| StageTime { name, seconds }))
                    .collect();
                (stages, Clock::GpuTimestamps)
            }
            None => (frame.cpu_stages.clone(), Clock::Cpu),
        };
        drop(view);
        for read in &frame.counted {
            let c = read.counted;
            let at = c.at as usize;
            let count = readbacks[c.counter.0 as usize]
                .get(at..at + 4)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .ok_or_else(|| {
                    Error::Readback(format!(
                        "the count of readback #{} is not in readback #{}",
                        read.index, c.counter.0
                    ))
                })?;
            let need = u64::from(count).saturating_mul(c.stride).min(read.size);
            if need <= read.head {
                readbacks[read.index].truncate(need as usize);
            } else {
                let source = read.buffer.as_ref().ok_or_else(|| {
                    Error::Readback(format!("readback #{} lost its buffer", read.index))
                })?;
                let tail = self.fetch(source, read.offset + read.head, need - read.head)?;
                readbacks[read.index].extend_from_slice(&tail);
                copied_bytes += need - read.head;
                round_trips += 1;
            }
        }
        Ok(FrameOutput {
            readbacks,
            profile: Profile {
                stages,
                clock,
                wall: frame.started.elapsed(),
            },
            copied_bytes,
            round_trips,
        })
    }

    /// Copies `size` bytes at `offset` of `source` to the CPU now: a counted readback's
    /// tail, after its frame has finished.
    fn fetch(&self, source: &wgpu::Buffer, offset: u64, size: u64) -> Result<Vec<u8>> {
        let staging = self.ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("proxima readback tail"),
            size,
            usage: BufferUsages::MAP_READ | BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = new_encoder(&self.ctx.device);
        encoder.copy_buffer_to_buffer(source, offset, &staging, 0, size);
        let mut submissions = StageSubmissions::default();
        submissions.submit(&self.ctx, "readback tail", encoder.finish());
        let mapped = request_map(&staging, size);
        submissions.wait_all(&self.ctx)?;
        await_mapped(&self.ctx, &mapped)?;
        self.ctx.check()?;
        let bytes = staging
            .slice(..)
            .get_mapped_range()
            .map_err(|e| Error::Readback(format!("mapped range: {e:?}")))?
            .to_vec();
        staging.unmap();
        Ok(bytes)
    }

    fn pipeline(&mut self, id: ShaderId) -> Result<&Pipeline> {
        if !self.pipelines.contains_key(&id) {
            // A device short of what the passes need is named by its limits, before wgpu's
            // own message about one shader.
            if let Some(short) = crate::gpu::sizes::shortfall(&self.ctx.limits()) {
                return Err(Error::Gpu(short));
            }
            let pipeline = create_pipeline(&self.ctx, id, &self.overrides)?;
            self.pipelines.insert(id, pipeline);
        }
        Ok(&self.pipelines[&id])
    }

    fn check_limits(
        &self,
        recording: &Recording,
        usages: &HashMap<BufferId, BufferUsages>,
    ) -> Result<()> {
        let limits = self.ctx.limits();
        for (proxy, _) in recording.buffers() {
            super::sizes::check_buffer(&limits, proxy.label, proxy.size, usages[&proxy.id])?;
        }
        Ok(())
    }

    fn staging(&mut self, slot: usize, size: u64) -> wgpu::Buffer {
        let current = &mut self.slots[slot].staging;
        match current {
            Some(b) if b.size() >= size => b.clone(),
            _ => {
                let b = self.ctx.device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("proxima readback"),
                    size: pool_size(size, self.ctx.limits().max_buffer_size),
                    usage: BufferUsages::MAP_READ | BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                });
                *current = Some(b.clone());
                b
            }
        }
    }

    fn ensure_queries(&mut self, count: u32) {
        if self.queries.as_ref().is_some_and(|(_, c, _)| *c >= count) {
            return;
        }
        let count = count
            .next_power_of_two()
            .clamp(64, wgpu::QUERY_SET_MAX_QUERIES);
        let set = self.ctx.device.create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("proxima timestamps"),
            ty: wgpu::QueryType::Timestamp,
            count,
        });
        let resolve = self.ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("proxima timestamp resolve"),
            size: u64::from(count) * 8,
            usage: BufferUsages::QUERY_RESOLVE | BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        self.queries = Some((set, count, resolve));
    }

    fn release(&mut self, usage: BufferUsages, buffer: wgpu::Buffer) {
        let key = (buffer.size(), pooled_usage(usage));
        self.pool.entry(key).or_default().push(buffer);
    }
}

/// Whether a buffer's map request has landed, and how.
pub(crate) type MapFlag = Arc<Mutex<Option<std::result::Result<(), String>>>>;

/// Asks for `size` bytes of `buffer` to be mapped for reading once the GPU is done with it.
fn request_map(buffer: &wgpu::Buffer, size: u64) -> MapFlag {
    let mapped = Arc::new(Mutex::new(None));
    let flag = Arc::clone(&mapped);
    buffer.map_async(wgpu::MapMode::Read, 0..size, move |r| {
        if let Ok(mut m) = flag.lock() {
            *m = Some(r.map_err(|e| e.to_string()));
        }
    });
    mapped
}

/// Waits for a map request of work that has finished. On a device other threads poll too
/// (a renderer's, or one shared by tests), the map callback of a finished submission may
/// be running on another thread's poll when ours returns: poll until it has landed.
pub(crate) fn await_mapped(ctx: &GpuContext, mapped: &MapFlag) -> Result<()> {
    let deadline = Instant::now() + MAP_TIMEOUT;
    loop {
        let state = mapped
            .lock()
            .map_err(|_| Error::Readback("map flag poisoned".into()))?
            .clone();
        match state {
            Some(Ok(())) => return Ok(()),
            Some(Err(e)) => return Err(Error::Readback(format!("mapping failed: {e}"))),
            None if Instant::now() > deadline => {
                return Err(Error::Readback(format!(
                    "the GPU finished but the readback buffer was not mapped within {} s",
                    MAP_TIMEOUT.as_secs()
                )));
            }
            None => {
                ctx.device
                    .poll(wgpu::PollType::Poll)
                    .map_err(|e| Error::Readback(format!("poll: {e}")))?;
                std::thread::yield_now();
            }
        }
    }
}

/// Every pooled buffer can be copied from and to, so one pool entry serves any frame.
fn pooled_usage(usage: BufferUsages) -> BufferUsages {
    usage | BufferUsages::COPY_SRC | BufferUsages::COPY_DST
}

/// Pool size classes: sizes round up to 1/8 steps of their power of two (≤ 12.5% waste),
/// but never past `max`.
fn pool_size(size: u64, max: u64) -> u64 {
    let size = size.max(256);
    let step = (size.next_power_of_two() / 8).max(256);
    let rounded = size.next_multiple_of(step);
    if rounded > max { size } else { rounded }
}

/// How a recording's dispatches are encoded into compute passes and timed.
#[derive(Debug, Default, PartialEq)]
struct PassPlan {
    /// Per command: whether it is encoded at the start of its stage ([`hoisted_commands`]).
    hoisted: Vec<bool>,
    /// Number of timed spans.
    spans: u32,
    /// Per dispatch in recording order: whether it opens a compute pass of its own.
    opens: Vec<bool>,
    /// Per compute pass in encoding order: whether it begins its stage's span (writes the
    /// span's begin timestamp) and whether it ends it (writes the end).
    pass_ends: Vec<[bool; 2]>,
}

/// The uploads and clears encoded at the start of their stage, ahead of its passes: each
/// that is the first command of the frame to name its buffer, a pooled one. Nothing earlier
/// in the frame touches that buffer, and it is taken from the pool when the stage starts,
/// before any of the stage's frees could hand it a buffer the stage is still using, so the
/// move changes no result; it keeps the stage's dispatches together in one compute pass
/// (a radix sort's parameters for every pass, a hash pass's mode). A second upload to a
/// buffer stays where it is.
fn hoisted_commands(recording: &Recording) -> Vec<bool> {
    let mut seen = vec![false; recording.buffers().len()];
    recording
        .commands()
        .iter()
        .map(|c| {
            let first = c.buffers().iter().any(|b| !seen[b.id.0 as usize]);
            let hoist = match c {
                Command::Upload { buffer, .. } | Command::Clear(buffer) => {
                    first && recording.buffers()[buffer.id.0 as usize].1 == BufferOrigin::Pooled
                }
                _ => false,
            };
            for b in c.buffers() {
                seen[b.id.0 as usize] = true;
            }
            hoist
        })
        .collect()
}

/// The compute passes of a recording and their timed spans. Consecutive dispatches share
/// one compute pass (wgpu still puts a barrier between two that use a buffer for writing),
/// up to the next command that is not a dispatch: an upload, clear, copy or readback is
/// encoded outside any pass (unless it moves to the stage's start, [`hoisted_commands`]),
/// and a stage mark closes the pass too. With `pass_per_dispatch`
/// every dispatch has a pass of its own and every command stays in place (the encoding
/// before, the A/B baseline of `bench gpu --pass-per-dispatch`).
///
/// A span is the run of passes between two stage marks, timed as one, its first pass
/// writing the begin timestamp and its last the end (a stage of copies alone, such as
/// upload or readback, has no GPU time to report). Timestamps around every pass cost GPU
/// time: on an H100 a radix sort of 24 passes took 0.12 to 0.28 ms longer with them than
/// timed by the CPU alone (`cargo bench --bench sort`). With `every_pass`, each dispatch
/// has a pass and a span of its own.
fn plan_passes(recording: &Recording, every_pass: bool, pass_per_dispatch: bool) -> PassPlan {
    let own_pass = every_pass || pass_per_dispatch;
    let mut plan = PassPlan {
        hoisted: if pass_per_dispatch {
            vec![false; recording.commands().len()]
        } else {
            hoisted_commands(recording)
        },
        ..PassPlan::default()
    };
    let mut in_span = false;
    let mut open = false;
    for (c, &hoisted) in recording.commands().iter().zip(&plan.hoisted) {
        if hoisted {
            continue;
        }
        match c {
            Command::Stage(_) => {
                if let Some(last) = plan.pass_ends.last_mut().filter(|_| in_span) {
                    last[1] = true;
                }
                in_span = false;
                open = false;
            }
            Command::Dispatch { .. } | Command::DispatchIndirect { .. } => {
                let opens = own_pass || !open;
                plan.opens.push(opens);
                open = true;
                if !opens {
                    continue;
                }
                if every_pass {
                    plan.pass_ends.push([true, true]);
                    plan.spans += 1;
                    continue;
                }
                plan.pass_ends.push([!in_span, false]);
                if !in_span {
                    plan.spans += 1;
                }
                in_span = true;
            }
            Command::Free(_) => {}
            Command::Upload { .. }
            | Command::Clear(_)
            | Command::Copy { .. }
            | Command::Readback { .. } => open = false,
        }
    }
    if let Some(last) = plan.pass_ends.last_mut().filter(|_| in_span) {
        last[1] = true;
    }
    plan
}

/// Seconds per stage from the timed spans' (begin, end) ticks, in encoding order. A
/// span's begin timestamp may be written before the work ahead of it has finished (a
/// begin-of-pass timestamp waits for nothing; the end one waits for everything before it),
/// so a span counts from the later of its begin and the previous span's end: no GPU time
/// is counted twice, and the stages sum to the frame's busy span.
pub fn stage_seconds_from_ticks(
    ticks: &[[u64; 2]],
    span_stage: &[usize],
    stages: usize,
    period_ns: f64,
) -> Vec<Option<f64>> {
    let mut seconds = vec![None; stages];
    let mut last_end: Option<u64> = None;
    for (&[begin, end], &stage) in ticks.iter().zip(span_stage) {
        let start = last_end.map_or(begin, |e| begin.max(e));
        let dt = end.saturating_sub(start) as f64 * period_ns * 1e-9;
        *seconds[stage].get_or_insert(0.0) += dt;
        last_end = Some(last_end.map_or(end, |e| e.max(end)));
    }
    seconds
}

/// naga's runtime checks for the compute shaders: its bounds checks, and no loop bounding.
///
/// Loop bounding adds a counter to every loop so that none can run forever (a loop without
/// end may be taken as unreachable by a driver's compiler). It cost the radix sort a quarter
/// of its time on an H200 (`proxima bench gpu --bodies 1000000,4000000 --methods hash`,
/// two runs of each binary alternating: the sort 0.287 / 0.766 ms at 1M / 4M keys with it,
/// 0.214 / 0.586 without; a scatter pass at 1M 24.2 -> 18.6 µs, a spine 10.1 -> 6.9; the
/// moving frame 0.483 -> 0.467 ms); turning the bounds checks off as well gained nothing
/// more (0.212 / 0.574), and off alone nothing (0.285 / 0.757), so they stay.
const COMPUTE_CHECKS: wgpu::ShaderRuntimeChecks = wgpu::ShaderRuntimeChecks {
    force_loop_bounding: false,
    ..wgpu::ShaderRuntimeChecks::checked()
};

/// A compute shader module from WGSL, with [`COMPUTE_CHECKS`].
fn compute_module(device: &wgpu::Device, label: &str, source: &str) -> wgpu::ShaderModule {
    let desc = wgpu::ShaderModuleDescriptor {
        label: Some(label),
        source: wgpu::ShaderSource::Wgsl(source.into()),
    };
    // SAFETY: the one unchecked property is that every loop ends, and every loop in
    // shaders/ ends by its own condition: counted loops over fixed counts or over counts
    // the CPU uploads (bounded by the buffers they index, far below u32's wrap), cell
    // ranges clamped to the grid (`cell_of`), binary searches whose range narrows each
    // round (sap_reach, sap_sweep), strides that halve or double to a bound, and the
    // look-back's waits, which give up after `params.patience` reads (radix_lookback,
    // radix8_lookback). Bounds checks stay on. tests/shaders.rs
    // (`every_compute_loop_ends_by_its_own_condition`) holds new loops to those forms.
    #[allow(unsafe_code)]
    unsafe {
        device.create_shader_module_trusted(desc, COMPUTE_CHECKS)
    }
}

fn create_pipeline(
    ctx: &GpuContext,
    id: ShaderId,
    overrides: &[(&'static str, f64)],
) -> Result<Pipeline> {
    let info = shaders::reflect(id)?;
    // A constant the module does not declare is an error: pass each only where declared.
    let constants: Vec<(&str, f64)> = overrides
        .iter()
        .copied()
        .filter(|(name, _)| info.source.contains(&format!("override {name}")))
        .collect();
    let device = &ctx.device;
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let module = compute_module(device, id.file_name(), &info.source);
    let entries: Vec<wgpu::BindGroupLayoutEntry> = info
        .bindings
        .iter()
        .enumerate()
        .map(|(i, kind)| wgpu::BindGroupLayoutEntry {
            binding: i as u32,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: match kind {
                    BindingKind::Uniform => wgpu::BufferBindingType::Uniform,
                    BindingKind::StorageRead => {
                        wgpu::BufferBindingType::Storage { read_only: true }
                    }
                    BindingKind::StorageReadWrite => {
                        wgpu::BufferBindingType::Storage { read_only: false }
                    }
                },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        })
        .collect();
    let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some(id.file_name()),
        entries: &entries,
    });
    let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some(id.file_name()),
        bind_group_layouts: &[Some(&layout)],
        immediate_size: 0,
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(id.file_name()),
        layout: Some(&pipeline_layout),
        module: &module,
        entry_point: Some("main"),
        compilation_options: wgpu::PipelineCompilationOptions {
            constants: &constants,
            ..Default::default()
        },
        cache: None,
    });
    if let Some(error) = pollster::block_on(scope.pop()) {
        return Err(Error::Shader {
            name: id.file_name().to_owned(),
            message: error.to_string(),
        });
    }
    ctx.check()?;
    Ok(Pipeline {
        info,
        layout,
        pipeline,
    })
}

fn new_encoder(device: &wgpu::Device) -> wgpu::CommandEncoder {
    device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
        label: Some("proxima frame"),
    })
}

/// The state of one frame being encoded.
struct FrameRun<'a> {
    ctx: &'a GpuContext,
    pipelines: &'a HashMap<ShaderId, Pipeline>,
    pool: &'a mut HashMap<(u64, BufferUsages), Vec<wgpu::Buffer>>,
    belt: &'a mut wgpu::util::StagingBelt,
    usages: &'a HashMap<BufferId, BufferUsages>,
    live: HashMap<BufferId, wgpu::Buffer>,
    externals: &'a [(BufferProxy, &'a wgpu::Buffer)],
    recording: &'a Recording,
    /// The open compute pass: consecutive dispatches share it ([`plan_passes`]). Declared
    /// before the encoder it borrows, so that on an early return it ends first.
    pass: Option<wgpu::ComputePass<'static>>,
    encoder: Option<wgpu::CommandEncoder>,
    queries: Option<&'a wgpu::QuerySet>,
    timestamps: Option<TimestampLayout>,
    /// Spans begun so far.
    spans_begun: u32,
    /// Compute passes encoded so far.
    passes_encoded: usize,
    /// Per dispatch: whether it opens a pass of its own.
    opens: &'a [bool],
    /// Per command: whether it is encoded at the start of its stage.
    hoisted: &'a [bool],
    /// Dispatches encoded so far.
    dispatches_encoded: usize,
    stage_index: usize,
    cpu_stages: Vec<StageTime>,
    cpu_stage_start: Option<(&'static str, Instant)>,
    cpu_timing: bool,
    /// The stage being encoded.
    stage: &'static str,
    /// One submission per stage, so a wait can see the GPU advance stage by stage.
    submissions: StageSubmissions,
}

impl<'a> FrameRun<'a> {
    fn encoder(&mut self) -> &mut wgpu::CommandEncoder {
        self.encoder
            .get_or_insert_with(|| new_encoder(&self.ctx.device))
    }

    fn buffer(&mut self, proxy: &BufferProxy) -> Result<wgpu::Buffer> {
        if let Some(b) = self.live.get(&proxy.id) {
            return Ok(b.clone());
        }
        let (_, origin) = self.recording.buffers()[proxy.id.0 as usize];
        let usage = self.usages[&proxy.id];
        let buffer = match origin {
            BufferOrigin::External { offset } => {
                let (_, b) = self
                    .externals
                    .iter()
                    .find(|(p, _)| p.id == proxy.id)
                    .ok_or_else(|| {
                        Error::Recording(format!(
                            "external buffer `{}` was not supplied",
                            proxy.label
                        ))
                    })?;
                if b.size() < offset.saturating_add(proxy.size) || !b.usage().contains(usage) {
                    return Err(Error::Recording(format!(
                        "external buffer `{}` is {} bytes with usage {:?}; the frame needs {} \
                         bytes from byte {offset} with {:?}",
                        proxy.label,
                        b.size(),
                        b.usage(),
                        proxy.size,
                        usage
                    )));
                }
                let align = u64::from(self.ctx.limits().min_storage_buffer_offset_alignment);
                if !offset.is_multiple_of(align) {
                    return Err(Error::Recording(format!(
                        "external buffer `{}`: a window at byte {offset} is not a multiple of \
                         the device's storage offset alignment ({align})",
                        proxy.label
                    )));
                }
                (*b).clone()
            }
            BufferOrigin::Pooled => {
                let max = self.ctx.limits().max_buffer_size;
                let key = (pool_size(proxy.size, max), pooled_usage(usage));
                match self.pool.get_mut(&key).and_then(Vec::pop) {
                    Some(b) => b,
                    None => self.ctx.device.create_buffer(&wgpu::BufferDescriptor {
                        label: Some(proxy.label),
                        size: key.0,
                        usage: key.1,
                        mapped_at_creation: false,
                    }),
                }
            }
        };
        self.live.insert(proxy.id, buffer.clone());
        Ok(buffer)
    }

    /// Where `proxy`'s bytes start in its buffer: a window's offset, else 0.
    fn offset(&self, proxy: &BufferProxy) -> u64 {
        match self.recording.buffers()[proxy.id.0 as usize].1 {
            BufferOrigin::External { offset } => offset,
            BufferOrigin::Pooled => 0,
        }
    }

    fn bind_group(
        &mut self,
        shader: ShaderId,
        bindings: &[BufferProxy],
    ) -> Result<wgpu::BindGroup> {
        let buffers = bindings
            .iter()
            .map(|b| self.buffer(b))
            .collect::<Result<Vec<_>>>()?;
        let entries: Vec<wgpu::BindGroupEntry> = buffers
            .iter()
            .zip(bindings)
            .enumerate()
            .map(|(i, (buffer, proxy))| wgpu::BindGroupEntry {
                binding: i as u32,
                resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                    buffer,
                    offset: self.offset(proxy),
                    size: wgpu::BufferSize::new(proxy.size),
                }),
            })
            .collect();
        Ok(self
            .ctx
            .device
            .create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some(shader.file_name()),
                layout: &self.pipelines[&shader].layout,
                entries: &entries,
            }))
    }

    /// Submits what the running stage encoded; with CPU timing, also waits for it and
    /// records its time.
    fn end_stage(&mut self) -> Result<()> {
        self.pass = None;
        if let Some(encoder) = self.encoder.take() {
            self.belt.finish();
            let submission = self
                .submissions
                .submit(self.ctx, self.stage, encoder.finish());
            self.belt.recall();
            if self.cpu_stage_start.is_some() {
                self.submissions.wait(self.ctx, &submission)?;
            }
        }
        if let Some((name, start)) = self.cpu_stage_start.take() {
            self.cpu_stages.push(StageTime {
                name,
                seconds: start.elapsed().as_secs_f64(),
            });
        }
        Ok(())
    }

    /// Encodes the uploads and clears moved to the start of the stage whose commands begin
    /// at `from` ([`hoisted_commands`]).
    fn encode_hoisted(&mut self, from: usize) -> Result<()> {
        let commands = &self.recording.commands()[from..];
        for (index, command) in (from..).zip(commands) {
            match command {
                Command::Stage(_) => break,
                Command::Upload { buffer, data } if self.hoisted[index] => {
                    self.upload(buffer, data)?;
                }
                Command::Clear(buffer) if self.hoisted[index] => self.clear(buffer)?,
                _ => {}
            }
        }
        Ok(())
    }

    fn upload(&mut self, buffer: &BufferProxy, data: &[u8]) -> Result<()> {
        self.pass = None;
        let target = self.buffer(buffer)?;
        if let Some(size) = wgpu::BufferSize::new(data.len() as u64) {
            let at = self.offset(buffer);
            let encoder = self
                .encoder
                .get_or_insert_with(|| new_encoder(&self.ctx.device));
            let mut view = self.belt.write_buffer(encoder, &target, at, size);
            view.copy_from_slice(data);
        }
        Ok(())
    }

    fn clear(&mut self, buffer: &BufferProxy) -> Result<()> {
        self.pass = None;
        let target = self.buffer(buffer)?;
        let at = self.offset(buffer);
        self.encoder().clear_buffer(&target, at, Some(buffer.size));
        Ok(())
    }

    fn encode(&mut self, staging: &wgpu::Buffer, readbacks: &[(u64, u64)]) -> Result<()> {
        let mut readback_index = 0;
        self.encode_hoisted(0)?;
        for (index, command) in self.recording.commands().iter().enumerate() {
            if self.hoisted[index] {
                continue;
            }
            match command {
                Command::Stage(name) => {
                    self.end_stage()?;
                    self.stage = name;
                    if self.cpu_timing {
                        self.cpu_stage_start = Some((name, Instant::now()));
                    }
                    if let Some(layout) = &mut self.timestamps {
                        layout.stage_names.push(name);
                        self.stage_index = layout.stage_names.len() - 1;
                    }
                    self.encode_hoisted(index + 1)?;
                }
                Command::Upload { buffer, data } => self.upload(buffer, data)?,
                Command::Clear(buffer) => self.clear(buffer)?,
                Command::Dispatch {
                    shader,
                    grid,
                    bindings,
                } => {
                    let group = self.bind_group(*shader, bindings)?;
                    self.compute_pass(*shader, &group, |pass| {
                        pass.dispatch_workgroups(grid[0], grid[1], grid[2]);
                    });
                }
                Command::DispatchIndirect {
                    shader,
                    args,
                    offset,
                    bindings,
                } => {
                    let group = self.bind_group(*shader, bindings)?;
                    let offset = *offset + self.offset(args);
                    let args = self.buffer(args)?;
                    self.compute_pass(*shader, &group, |pass| {
                        pass.dispatch_workgroups_indirect(&args, offset);
                    });
                }
                Command::Copy {
                    src,
                    src_offset,
                    dst,
                    dst_offset,
                    size,
                } => {
                    self.pass = None;
                    let s = self.buffer(src)?;
                    let d = self.buffer(dst)?;
                    let (src_at, dst_at) = (self.offset(src), self.offset(dst));
                    if *size > 0 {
                        self.encoder().copy_buffer_to_buffer(
                            &s,
                            *src_offset + src_at,
                            &d,
                            *dst_offset + dst_at,
                            *size,
                        );
                    }
                }
                Command::Readback { buffer, offset, .. } => {
                    self.pass = None;
                    let s = self.buffer(buffer)?;
                    let offset = &(*offset + self.offset(buffer));
                    let (staging_offset, size) = readbacks[readback_index];
                    readback_index += 1;
                    if size > 0 {
                        self.encoder().copy_buffer_to_buffer(
                            &s,
                            *offset,
                            staging,
                            staging_offset,
                            size,
                        );
                    }
                }
                Command::Free(buffer) => {
                    if let Some(b) = self.live.remove(&buffer.id) {
                        let usage = pooled_usage(self.usages[&buffer.id]);
                        self.pool.entry((b.size(), usage)).or_default().push(b);
                    }
                }
            }
        }
        // The last stage is closed by the final submission in `submit`.
        self.pass = None;
        if self.encoder.is_none() {
            self.encoder();
        }
        Ok(())
    }

    /// The next pass's timestamp writes, when the frame is timed on the GPU.
    fn timestamp_writes<'q>(&mut self) -> Option<wgpu::ComputePassTimestampWrites<'q>>
    where
        'a: 'q,
    {
        let set = self.queries?;
        let layout = self.timestamps.as_mut()?;
        let [begins, ends] = layout.pass_ends.get(self.passes_encoded).copied()?;
        self.passes_encoded += 1;
        if !begins && !ends {
            return None;
        }
        if layout.stage_names.is_empty() {
            layout.stage_names.push("unnamed");
        }
        if begins {
            layout.span_stage.push(self.stage_index);
            self.spans_begun += 1;
        }
        let index = self.spans_begun - 1;
        Some(wgpu::ComputePassTimestampWrites {
            query_set: set,
            beginning_of_pass_write_index: begins.then_some(2 * index),
            end_of_pass_write_index: ends.then_some(2 * index + 1),
        })
    }

    /// Encodes one dispatch: in the open compute pass, or in a new one when the plan
    /// opens one here.
    fn compute_pass(
        &mut self,
        shader: ShaderId,
        group: &wgpu::BindGroup,
        dispatch: impl FnOnce(&mut wgpu::ComputePass<'static>),
    ) {
        let opens = self
            .opens
            .get(self.dispatches_encoded)
            .copied()
            .unwrap_or(true);
        self.dispatches_encoded += 1;
        if opens || self.pass.is_none() {
            self.pass = None;
            let timestamp_writes = self.timestamp_writes();
            let encoder = self
                .encoder
                .get_or_insert_with(|| new_encoder(&self.ctx.device));
            let pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some(shader.file_name()),
                timestamp_writes,
            });
            self.pass = Some(pass.forget_lifetime());
        }
        let pass = self.pass.as_mut().expect("opened above");
        pass.set_pipeline(&self.pipelines[&shader].pipeline);
        pass.set_bind_group(0, group, &[]);
        dispatch(pass);
    }
}

#[cfg(test)]
mod tests {
    use super::{hoisted_commands, plan_passes, pool_size, stage_seconds_from_ticks};
    use crate::graph::Recording;
    use crate::shaders::ShaderId;

    /// Each stage's run of dispatches is one span, begun by its first pass and ended by
    /// its last; a stage of copies alone has none, and dispatches before any stage mark
    /// make a span of their own. Consecutive dispatches share a pass, up to an upload (a
    /// free is no GPU command and keeps the pass open).
    #[test]
    fn a_stage_of_passes_is_timed_as_one_span() {
        let mut rec = Recording::new();
        let data = rec.buffer(16, "data");
        let dispatch = |rec: &mut Recording| rec.dispatch(ShaderId::Bounds, [1, 1, 1], &[]);
        // The buffer's first use moves ahead; its upload in stage a stays in place.
        rec.clear(data);
        dispatch(&mut rec);
        rec.stage("a");
        dispatch(&mut rec);
        rec.upload(data, &[0u32; 4]);
        dispatch(&mut rec);
        rec.free(data);
        dispatch(&mut rec);
        rec.stage("copies");
        rec.clear(data);
        rec.stage("c");
        dispatch(&mut rec);
        let plan = plan_passes(&rec, true, false);
        assert_eq!(plan.spans, 5);
        assert_eq!(plan.opens, vec![true; 5]);
        assert_eq!(plan.pass_ends, vec![[true, true]; 5]);
        let plan = plan_passes(&rec, false, true);
        assert_eq!(plan.spans, 3);
        assert_eq!(plan.opens, vec![true; 5]);
        assert_eq!(
            plan.pass_ends,
            vec![
                [true, true],
                [true, false],
                [false, false],
                [false, true],
                [true, true],
            ]
        );
        let plan = plan_passes(&rec, false, false);
        assert_eq!(plan.spans, 3);
        assert_eq!(plan.opens, vec![true, true, true, false, true]);
        assert_eq!(
            plan.pass_ends,
            vec![[true, true], [true, false], [false, true], [true, true]]
        );
    }

    /// An upload or clear moves to its stage's start when it is the first command to name
    /// a pooled buffer; a second upload, an external buffer's and a copy stay in place,
    /// and the moved ones no longer split the stage's dispatches into passes.
    #[test]
    fn first_uploads_move_to_the_stage_start() {
        let mut rec = Recording::new();
        let params = rec.buffer(16, "params");
        let counts = rec.buffer(16, "counts");
        let outside = rec.external(16, "outside");
        let dispatch = |rec: &mut Recording, b| rec.dispatch(ShaderId::Bounds, [1, 1, 1], &[b]);
        rec.stage("a");
        dispatch(&mut rec, outside);
        rec.upload(params, &[1u32; 4]);
        dispatch(&mut rec, params);
        rec.clear(counts);
        rec.upload(outside, &[2u32; 4]);
        dispatch(&mut rec, counts);
        rec.upload(params, &[3u32; 4]);
        dispatch(&mut rec, params);
        rec.free(params);
        let later = rec.buffer(16, "later");
        rec.upload(later, &[4u32; 4]);
        rec.copy(later, 0, counts, 0, 16);
        dispatch(&mut rec, counts);
        let hoisted = hoisted_commands(&rec);
        let moved: Vec<usize> = (0..hoisted.len()).filter(|&i| hoisted[i]).collect();
        // Commands: 0 stage, 1 dispatch, 2 upload params, 3 dispatch, 4 clear counts,
        // 5 upload outside, 6 dispatch, 7 upload params again, 8 dispatch, 9 free,
        // 10 upload later, 11 copy, 12 dispatch.
        assert_eq!(moved, vec![2, 4, 10]);
        let plan = plan_passes(&rec, false, false);
        assert_eq!(plan.opens, vec![true, false, true, true, true]);
        let plan = plan_passes(&rec, false, true);
        assert!(plan.hoisted.iter().all(|&h| !h));
        assert_eq!(plan.opens, vec![true; 5]);
    }

    #[test]
    fn overlapping_pass_timestamps_are_counted_once() {
        // Stage 0: a pass 0..10. Stage 1: a pass whose begin was written early (5) and
        // ends at 30, then one from 30 to 35 with an idle gap before it (begin 32).
        // Stage 2: never timed.
        let ticks = [[0, 10], [5, 30], [32, 35]];
        let s = stage_seconds_from_ticks(&ticks, &[0, 1, 1], 3, 1e9);
        assert_eq!(s, vec![Some(10.0), Some(20.0 + 3.0), None]);
        // The stages sum to the busy span, never more than last end - first begin.
        let total: f64 = s.iter().flatten().sum();
        assert!(total <= 35.0);
    }

    #[test]
    fn pool_sizes_cover_the_request_with_bounded_waste() {
        for size in [
            1u64,
            255,
            256,
            257,
            1000,
            4096,
            5000,
            1 << 20,
            (1 << 27) - 4,
            3 << 26,
        ] {
            let p = pool_size(size, u64::MAX);
            assert!(p >= size, "{size}");
            assert!(
                p <= (size.max(256) * 9).div_ceil(8).max(512),
                "{size} -> {p}"
            );
        }
        assert_eq!(pool_size(130 << 20, 128 << 20), 130 << 20);
    }
}
