//! The pipeline a user drives: frames on the GPU through the engine, or on the CPU twins
//! when there is no adapter (or when asked to). Both paths take the same [`Crowd`] and
//! return the same [`FrameResult`].

use crate::bodies::{GpuAabb, GpuBody};
use crate::broadphase::{Attempt, Choice, cpu_pairs, run_until_fits};
use crate::crowd::Crowd;
use crate::estimate::GpuDepthEstimator;
use crate::frame::{self, FrameResult};
use crate::gpu::sizes::largest_binding;
use crate::gpu::{ContextOptions, Engine, GpuContext, PendingFrame};
use crate::graph::BufferProxy;
use crate::passes::broadphase::{self, Capacities, Method};
use crate::passes::depth::{DepthShapes, GpuDepthParams, pairs_within_limits};
use crate::passes::pose_gather::PoseLayout;
use crate::profile::{Profile, StageTime};
use crate::slabs;
use crate::{Error, Result};

/// Which hardware runs the wide passes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceChoice {
    /// A hardware GPU if one is found, else the CPU twins (with a one-line notice). A
    /// software adapter (lavapipe, WARP) runs the passes on the CPU's own cores, slower
    /// than their twins: `proxima run`'s default crowd on two cores took 8.5-8.8 s on
    /// lavapipe against 3.1-3.4 s on the twins, the same state hash; [`Self::Gpu`] runs on it.
    Auto,
    /// Any GPU adapter, a software one included, else the CPU twins (with a notice): what
    /// a bench that times each GPU pass beside its twin wants.
    AnyGpu,
    /// The GPU; no adapter is an error.
    Gpu,
    /// The CPU twins.
    Cpu,
}

impl DeviceChoice {
    /// Whether this choice runs the passes on `ctx`'s adapter rather than the CPU twins:
    /// `Auto` only on a hardware one.
    pub fn runs_on(self, ctx: &GpuContext) -> bool {
        match self {
            DeviceChoice::Auto => !ctx.is_software(),
            DeviceChoice::AnyGpu | DeviceChoice::Gpu => true,
            DeviceChoice::Cpu => false,
        }
    }
}

/// Where the frames actually run.
#[derive(Debug)]
pub enum Backend {
    /// A GPU engine.
    Gpu(Box<Engine>),
    /// The CPU twins.
    Cpu,
}

/// A frame submitted and not yet collected ([`Pipeline::submit`]).
#[derive(Debug)]
pub struct InFlight(Flight);

#[derive(Debug)]
enum Flight {
    Gpu(Box<GpuFlight>),
    Done(FrameResult),
}

#[derive(Debug)]
struct GpuFlight {
    pending: PendingFrame,
    readbacks: frame::Readbacks,
    caps: Capacities,
}

/// Runs frames of a world.
#[derive(Debug)]
pub struct Pipeline {
    backend: Backend,
    /// Broadphase choice; `Auto` is resolved on the first frame's boxes.
    choice: Choice,
    method: Option<Method>,
    caps: Option<Capacities>,
    /// Capacities for [`Pipeline::box_pairs`] (swept boxes have pair counts of their own).
    box_caps: Option<Capacities>,
    /// Set when `Auto` fell back to the CPU: the one line to show the user.
    pub fallback_notice: Option<String>,
    /// The depth stage, when frames run it.
    depth: Option<DepthStage>,
}

/// The sampled depth estimate as a frame stage: the cube-map resolution and the shapes'
/// tables, resident on the GPU or, on the CPU twins, on the CPU.
#[derive(Debug)]
struct DepthStage {
    k: u32,
    tables: DepthTables,
}

#[derive(Debug)]
enum DepthTables {
    Cpu(DepthShapes),
    Gpu(GpuDepthEstimator),
}

impl DepthStage {
    fn shapes(&self) -> &DepthShapes {
        match &self.tables {
            DepthTables::Cpu(shapes) => shapes,
            DepthTables::Gpu(gpu) => gpu.shapes(),
        }
    }

    fn gpu(&self) -> Option<&GpuDepthEstimator> {
        match &self.tables {
            DepthTables::Cpu(_) => None,
            DepthTables::Gpu(gpu) => Some(gpu),
        }
    }
}

impl Pipeline {
    /// Opens the pipeline on the chosen device.
    pub fn new(choice: DeviceChoice, options: &ContextOptions) -> Result<Self> {
        match choice {
            DeviceChoice::Cpu => Ok(Self::cpu()),
            DeviceChoice::Gpu => Ok(Self::on_gpu(GpuContext::new(options)?)),
            DeviceChoice::Auto | DeviceChoice::AnyGpu => match GpuContext::new(options) {
                Ok(ctx) if !choice.runs_on(&ctx) => Ok(Self {
                    fallback_notice: Some(crate::gpu::software_adapter_notice(&ctx.info.name)),
                    ..Self::cpu()
                }),
                Ok(ctx) => Ok(Self::on_gpu(ctx)),
                Err(e) if e.is_no_adapter() => Ok(Self {
                    fallback_notice: Some(crate::gpu::fallback_line(&e)),
                    ..Self::cpu()
                }),
                Err(e) => Err(e),
            },
        }
    }

    /// A pipeline on the CPU twins.
    pub fn cpu() -> Self {
        Self {
            backend: Backend::Cpu,
            choice: Choice::Auto,
            method: None,
            caps: None,
            box_caps: None,
            fallback_notice: None,
            depth: None,
        }
    }

    /// A pipeline on an existing context (e.g. a renderer's device).
    pub fn on_gpu(ctx: GpuContext) -> Self {
        Self {
            backend: Backend::Gpu(Box::new(Engine::new(ctx))),
            ..Self::cpu()
        }
    }

    /// Whether `error` means the GPU cannot go on (the device is lost, or out of memory)
    /// while the CPU twins could run the same frame.
    pub fn gpu_gone(&self, error: &Error) -> bool {
        let Backend::Gpu(engine) = &self.backend else {
            return false;
        };
        match error {
            Error::DeviceLost(_) => true,
            Error::Gpu(message) | Error::Readback(message) => {
                engine.context().is_lost() || message.to_lowercase().contains("out of memory")
            }
            _ => engine.context().is_lost(),
        }
    }

    /// Moves to the CPU twins after the GPU failed with `error`, keeping the broadphase
    /// choice; the notice says so.
    pub fn fall_back_to_cpu(&mut self, error: &Error) {
        self.backend = Backend::Cpu;
        if let Some(d) = &mut self.depth {
            d.tables = DepthTables::Cpu(d.shapes().clone());
        }
        self.caps = None;
        self.box_caps = None;
        self.fallback_notice = Some(format!(
            "the GPU failed ({error}); the frames go on on the CPU twins"
        ));
    }

    /// The backend in use.
    pub fn backend(&self) -> &Backend {
        &self.backend
    }

    /// Mutable access to the backend (to set engine options).
    pub fn backend_mut(&mut self) -> &mut Backend {
        &mut self.backend
    }

    /// One line naming the device the frames run on.
    pub fn device_name(&self) -> String {
        match &self.backend {
            Backend::Gpu(engine) => {
                let i = &engine.context().info;
                format!("{} ({:?}, {:?})", i.name, i.backend, i.device_type)
            }
            Backend::Cpu => format!("CPU twins ({} threads)", crate::parallel::threads()),
        }
    }

    /// Frames from now on run the sampled depth estimate over their pairs after the
    /// broadphase (`shapes`: one table entry per shape of the worlds to come, a k × k cube
    /// map per face), on the GPU straight from the broadphase's buffers, or on the CPU
    /// twin; [`FrameResult::estimates`] holds them. `None` stops it.
    pub fn set_depth_estimate(&mut self, depth: Option<(DepthShapes, u32)>) -> Result<()> {
        self.depth = match depth {
            None => None,
            Some((shapes, k)) => {
                GpuDepthParams::new(1, k, &shapes)?;
                let tables = match &self.backend {
                    Backend::Gpu(engine) => {
                        DepthTables::Gpu(GpuDepthEstimator::new(engine, shapes)?)
                    }
                    Backend::Cpu => DepthTables::Cpu(shapes),
                };
                Some(DepthStage { k, tables })
            }
        };
        Ok(())
    }

    /// A CPU frame with the depth stage when it is on.
    fn cpu_frame(&self, world: &Crowd, method: Method) -> Result<FrameResult> {
        let mut f = frame::cpu(&world.bodies, &world.shapes, Some(method))?;
        if let Some(d) = &self.depth {
            frame::cpu_estimates(&mut f, &world.bodies, d.shapes(), d.k)?;
        }
        Ok(f)
    }

    /// Sets the broadphase (hash, sweep, or chosen from the first frame's boxes).
    pub fn set_broadphase(&mut self, choice: Choice) {
        self.choice = choice;
        self.method = None;
    }

    /// Runs one full frame (bounds, broadphase) over the world's current poses. A pair
    /// buffer that overflows is grown and the frame re-run: no pair is dropped.
    pub fn frame(&mut self, world: &Crowd) -> Result<FrameResult> {
        Ok(self.run_frame(world, None)?.0)
    }

    /// [`Pipeline::frame`] with the poses read on the GPU from a renderer's instance buffer
    /// (`instances`, laid out as `layout`; `world` gives the shapes, its poses are not
    /// read). Returns the body table the GPU gathered as well. The buffer is checked
    /// first: a wrong one is a named error. GPU path only.
    pub fn frame_gathered(
        &mut self,
        world: &Crowd,
        instances: &wgpu::Buffer,
        layout: PoseLayout,
    ) -> Result<(FrameResult, Vec<GpuBody>)> {
        layout.check(instances.size(), instances.usage(), world.len())?;
        if !matches!(self.backend, Backend::Gpu(_)) {
            return Err(Error::Usage(
                "a renderer's pose buffer needs the GPU path; this pipeline runs the CPU twins"
                    .into(),
            ));
        }
        let (result, bodies) = self.run_frame(world, Some((instances, layout)))?;
        Ok((
            result,
            bodies.expect("a gathered frame returns its body table"),
        ))
    }

    /// The overlapping pairs of boxes given by the caller (swept boxes for impacts): the
    /// broadphase alone, on the GPU with re-runs on overflow (in slabs past what one frame
    /// binds), or on the CPU twin. Pairs `[a, b]`, `a < b`, sorted; the same on both paths.
    /// Under `Auto` the method is chosen for each set of boxes (from a sample of a large
    /// one, [`broadphase::CHOOSE_SAMPLE`]): swept boxes spread as the velocities do.
    pub fn box_pairs(&mut self, boxes: &[GpuAabb]) -> Result<Vec<[u32; 2]>> {
        broadphase::check_body_count(boxes.len())?;
        if let Some(cap) = self.slab_capacity(boxes.len())? {
            broadphase::validate_boxes(boxes)?;
            let merged = slabs::run(boxes, cap, |members| {
                let part: Vec<GpuAabb> = members.iter().map(|&i| boxes[i as usize]).collect();
                let pairs = self.box_pairs(&part)?;
                Ok(pairs.into_iter().map(|p| (p, ())).collect())
            })?;
            return Ok(merged.into_iter().map(|(p, ())| p).collect());
        }
        let method = match self.choice {
            Choice::Method(m) => m,
            Choice::Auto => broadphase::choose_method(boxes),
        };
        match &mut self.backend {
            Backend::Gpu(engine) => {
                let caps = self
                    .box_caps
                    .unwrap_or_else(|| Capacities::guess(boxes.len()));
                let max = Capacities::device_max(&engine.context().limits());
                let ((pairs, _, _), next) = run_until_fits(caps, method, max, |caps| {
                    let plan = frame::Plan::Pairs(method, caps);
                    let (rec, rb) = frame::record(frame::Bodies::Boxes(boxes), &[], plan);
                    let output = engine.run(&rec, &[])?;
                    let done = frame::finish(&output, &rb, &[], &[])?;
                    Ok(Attempt {
                        value: done.result.pairs,
                        counter: done.counter.expect("the plan has a broadphase"),
                    })
                })?;
                self.box_caps = Some(next);
                Ok(pairs)
            }
            Backend::Cpu => cpu_pairs(boxes, method),
        }
    }

    /// Starts a frame (bounds, broadphase) and returns without waiting for the GPU:
    /// [`Pipeline::collect`] gets its result. Meanwhile the CPU is free (the world runs the
    /// exact stage of the previous frame then). On the CPU twins the frame runs here.
    pub fn submit(&mut self, world: &Crowd) -> Result<InFlight> {
        world.validate()?;
        broadphase::check_body_count(world.len())?;
        if self.slab_capacity(world.len())?.is_some() {
            // Slab after slab, here: each slab's frame waits for the one before.
            return Ok(InFlight(Flight::Done(self.frame(world)?)));
        }
        let method = self.method_for(world)?;
        let Backend::Gpu(engine) = &self.backend else {
            return Ok(InFlight(Flight::Done(self.cpu_frame(world, method)?)));
        };
        let limits = engine.context().limits();
        let caps = self.caps.unwrap_or_else(|| Capacities::guess(world.len()));
        let caps = caps.capped(Capacities::device_max(&limits), None);
        if caps.pairs > depth_pairs_max(&self.depth, &limits) {
            // More pairs than the depth passes bind in one frame: the frame, then the
            // estimate in runs, here.
            return Ok(InFlight(Flight::Done(self.frame(world)?)));
        }
        let plan = pair_plan(&self.depth, method, caps, &limits)?;
        let (rec, readbacks) =
            frame::record(frame::Bodies::Upload(&world.bodies), &world.shapes, plan);
        let externals = depth_externals(&self.depth, &readbacks);
        let Backend::Gpu(engine) = &mut self.backend else {
            unreachable!("matched above");
        };
        let pending = engine.submit(&rec, &externals)?;
        Ok(InFlight(Flight::Gpu(Box::new(GpuFlight {
            pending,
            readbacks,
            caps,
        }))))
    }

    /// Waits for a submitted frame. `world` must still hold the poses it was submitted
    /// with: a pair buffer that overflowed is grown and the frame run again on them.
    pub fn collect(&mut self, world: &Crowd, flight: InFlight) -> Result<FrameResult> {
        let GpuFlight {
            pending,
            readbacks,
            caps,
        } = match flight.0 {
            Flight::Done(result) => return Ok(result),
            Flight::Gpu(f) => *f,
        };
        let Backend::Gpu(engine) = &mut self.backend else {
            return Err(Error::Usage(
                "a frame submitted to the GPU was collected on the CPU twins".into(),
            ));
        };
        let output = engine.wait(pending)?;
        let done = frame::finish(&output, &readbacks, &world.bodies, &world.shapes)?;
        let counter = done.counter.expect("the plan has a broadphase");
        if counter.cut != 0 || counter.wrapped != 0 || caps.overflowed(&counter) {
            // Rare after the first frames (capacities keep a quarter of headroom): the
            // synchronous path grows the buffers, or names the error.
            return self.frame(world);
        }
        let max = Capacities::device_max(&engine.context().limits());
        self.caps = Some(Capacities::fitted_to(&counter).capped(max, Some(&counter)));
        Ok(done.result)
    }

    fn method_for(&mut self, world: &Crowd) -> Result<Method> {
        if let Some(m) = self.method {
            return Ok(m);
        }
        let m = match self.choice {
            Choice::Method(m) => m,
            Choice::Auto => {
                let boxes = frame::cpu(&world.bodies, &world.shapes, None)?.aabbs;
                broadphase::choose_method(&boxes)
            }
        };
        self.method = Some(m);
        Ok(m)
    }

    fn run_frame(
        &mut self,
        world: &Crowd,
        instances: Option<(&wgpu::Buffer, PoseLayout)>,
    ) -> Result<(FrameResult, Option<Vec<GpuBody>>)> {
        world.validate()?;
        broadphase::check_body_count(world.len())?;
        if let Some((buffer, layout)) = instances
            && let Some(run) = self.gather_run(world.len(), buffer, layout)
        {
            let (result, bodies) = self.gathered_in_runs(world, buffer, layout, run)?;
            return Ok((result, Some(bodies)));
        }
        if let (Some(cap), None) = (self.slab_capacity(world.len())?, instances) {
            let boxes = timed(|| Ok(frame::cpu(&world.bodies, &world.shapes, None)?.aabbs))?;
            return Ok((self.slab_frame(world, cap, boxes)?, None));
        }
        let method = self.method_for(world)?;
        let shape_of: Vec<u32> = match instances {
            Some(_) => world.bodies.iter().map(|b| b.shape).collect(),
            None => Vec::new(),
        };
        if matches!(self.backend, Backend::Cpu) {
            return Ok((self.cpu_frame(world, method)?, None));
        }
        let depth = &self.depth;
        match &mut self.backend {
            Backend::Gpu(engine) => {
                let limits = engine.context().limits();
                let caps = self.caps.unwrap_or_else(|| Capacities::guess(world.len()));
                let max = Capacities::device_max(&limits);
                let ((result, _, _), next) = run_until_fits(caps, method, max, |caps| {
                    let plan = pair_plan(depth, method, caps, &limits)?;
                    let bodies = match instances {
                        Some((buffer, layout)) => frame::Bodies::Gather {
                            shape_of: &shape_of,
                            layout,
                            first: 0,
                            bytes: buffer.size(),
                        },
                        None => frame::Bodies::Upload(&world.bodies),
                    };
                    let (rec, rb) = frame::record(bodies, &world.shapes, plan);
                    let mut externals: Vec<(BufferProxy, &wgpu::Buffer)> = rb
                        .instances
                        .zip(instances.map(|(b, _)| b))
                        .into_iter()
                        .collect();
                    externals.extend(depth_externals(depth, &rb));
                    let output = engine.run(&rec, &externals)?;
                    let done = frame::finish(&output, &rb, &world.bodies, &world.shapes)?;
                    Ok(Attempt {
                        value: (done.result, done.bodies),
                        counter: done.counter.expect("the plan has a broadphase"),
                    })
                })?;
                self.caps = Some(next);
                let (mut result, gathered) = result;
                if let Some((d, gpu)) = on_gpu(depth)
                    && result.estimates.len() != result.pairs.len()
                {
                    // More pairs than the depth passes bind in one frame: the estimate
                    // in runs over the frame's pairs.
                    let bodies = gathered.as_deref().unwrap_or(&world.bodies);
                    let started = std::time::Instant::now();
                    let run = gpu.run(engine, bodies, &result.pairs, d.k)?;
                    result.estimates = run.estimates;
                    result.profile.stages.push(StageTime {
                        name: frame::stage::DEPTH,
                        seconds: run.gpu_time,
                    });
                    result.profile.wall += started.elapsed();
                }
                Ok((result, gathered))
            }
            Backend::Cpu => unreachable!("the CPU twins returned above"),
        }
    }

    /// On the GPU, when `n` bodies are more than one frame binds: how many one frame
    /// binds (see `slabs`).
    fn slab_capacity(&self, n: usize) -> Result<Option<usize>> {
        let Backend::Gpu(engine) = &self.backend else {
            return Ok(None);
        };
        let limits = engine.context().limits();
        if let Some(short) = crate::gpu::sizes::shortfall(&limits) {
            return Err(Error::Gpu(short));
        }
        let cap = slabs::frame_capacity(&limits);
        Ok((n > cap).then_some(cap))
    }

    /// A frame of a world too large for one, given its boxes (and the seconds they took:
    /// the CPU twin of the bounds pass, which names a bad pose, or the gather's runs): a
    /// frame per slab of its bodies.
    fn slab_frame(
        &mut self,
        world: &Crowd,
        cap: usize,
        (boxes, placing): (Vec<GpuAabb>, f64),
    ) -> Result<FrameResult> {
        let mut profiles = Vec::new();
        let mut method = None;
        let merged = slabs::run(&boxes, cap, |members| {
            let part = Crowd {
                bodies: members.iter().map(|&i| world.bodies[i as usize]).collect(),
                shapes: world.shapes.clone(),
                motions: vec![Default::default(); members.len()],
                ..Default::default()
            };
            let r = self.frame(&part)?;
            method = r.broadphase;
            profiles.push(r.profile);
            let estimates = r.estimates;
            Ok(r.pairs
                .into_iter()
                .enumerate()
                .map(|(i, p)| (p, estimates.get(i).copied()))
                .collect())
        })?;
        let with_estimates = merged.first().is_some_and(|(_, e)| e.is_some());
        let (pairs, estimates): (Vec<[u32; 2]>, Vec<_>) = merged.into_iter().unzip();
        Ok(FrameResult {
            aabbs: Vec::new(),
            pairs,
            estimates: if with_estimates {
                estimates.into_iter().flatten().collect()
            } else {
                Vec::new()
            },
            broadphase: method,
            profile: Profile::of_slabs(placing, profiles),
        })
    }

    /// When a renderer's pose buffer is more than one frame gathers at once (more bodies
    /// than a frame binds, or an instance buffer larger than one binding): the bodies a run
    /// of the gather takes, a multiple of 256 (so each run's window of the buffer meets any
    /// storage offset alignment) whose instances, body table and boxes a binding and the
    /// frame's readback staging hold.
    fn gather_run(&self, n: usize, buffer: &wgpu::Buffer, layout: PoseLayout) -> Option<usize> {
        let Backend::Gpu(engine) = &self.backend else {
            return None;
        };
        let limits = engine.context().limits();
        let binding = largest_binding(&limits);
        if n <= slabs::frame_capacity(&limits) && buffer.size() <= binding {
            return None;
        }
        let stride = u64::from(layout.stride).max(1);
        // The body table and boxes come back, 64 bytes a body, beside the passes'
        // statuses and timestamps.
        let read = limits.max_buffer_size.saturating_sub(STATUS_ROOM) / 64;
        let run = (binding / stride)
            .min(read)
            .min(binding / slabs::BODY_BYTES);
        Some((run / 256 * 256).max(256) as usize)
    }

    /// A renderer's frame past one gather: the pose gather and bounds pass in runs over
    /// windows of the instance buffer, their body tables and boxes read back (a bad matrix
    /// or pose named by its index in the buffer), then the frame of the gathered bodies:
    /// in slabs when they are more than a frame binds. Returns the result and the table.
    fn gathered_in_runs(
        &mut self,
        world: &Crowd,
        buffer: &wgpu::Buffer,
        layout: PoseLayout,
        run: usize,
    ) -> Result<(FrameResult, Vec<GpuBody>)> {
        let Backend::Gpu(engine) = &mut self.backend else {
            unreachable!("gather_run is only Some on the GPU");
        };
        let stride = u64::from(layout.stride);
        let (mut bodies, mut boxes) = (Vec::new(), Vec::new());
        let mut profiles = Vec::new();
        for start in (0..world.len()).step_by(run) {
            let end = (start + run).min(world.len());
            let offset = start as u64 * stride;
            let shape_of: Vec<u32> = world.bodies[start..end].iter().map(|b| b.shape).collect();
            let window = frame::Bodies::Gather {
                shape_of: &shape_of,
                layout,
                first: start as u32,
                bytes: (buffer.size() - offset).min((end - start) as u64 * stride),
            };
            let (rec, rb) = frame::record(window, &world.shapes, frame::Plan::Bounds);
            let instances = rb.instances.expect("a gather binds its instances");
            let output = engine.run(&rec, &[(instances, buffer)])?;
            let done = frame::finish(&output, &rb, &[], &world.shapes)
                .map_err(|e| e.with_body_offset(start as u32))?;
            bodies.extend(done.bodies.expect("a gather reads its table back"));
            boxes.extend(done.result.aabbs);
            profiles.push(done.result.profile);
        }
        let gathered = Crowd {
            motions: vec![Default::default(); bodies.len()],
            bodies,
            shapes: world.shapes.clone(),
            ..Default::default()
        };
        // The boxes that place the slabs came with the gather's runs, timed there.
        let mut result = match self.slab_capacity(gathered.len())? {
            Some(cap) => self.slab_frame(&gathered, cap, (boxes, 0.0))?,
            None => self.frame(&gathered)?,
        };
        profiles.push(result.profile);
        result.profile = Profile::joined(profiles);
        Ok((result, gathered.bodies))
    }

    /// Runs the bounds pass alone over the world's current poses (the bounds benchmark).
    /// Past what one frame binds and reads back, the bodies go in runs of as many as it
    /// does (each box depends on its own body alone), their boxes and stage times joined.
    pub fn bounds(&mut self, world: &Crowd) -> Result<FrameResult> {
        world.validate()?;
        let Backend::Gpu(engine) = &mut self.backend else {
            return frame::cpu(&world.bodies, &world.shapes, None);
        };
        // The boxes come back in one staging buffer of at most max_buffer_size, beside the
        // pass status and the timestamps.
        let room = largest_binding(&engine.context().limits()).saturating_sub(STATUS_ROOM);
        let cap = usize::try_from(room / slabs::BODY_BYTES)
            .unwrap_or(usize::MAX)
            .max(1);
        let mut joined: Option<FrameResult> = None;
        for (k, bodies) in world.bodies.chunks(cap).enumerate() {
            let (rec, rb) = frame::record(
                frame::Bodies::Upload(bodies),
                &world.shapes,
                frame::Plan::Bounds,
            );
            let output = engine.run(&rec, &[])?;
            // A bad body is named by its index in the world, not in the run.
            let done = frame::finish(&output, &rb, bodies, &world.shapes)
                .map_err(|e| e.with_body_offset((k * cap) as u32))?
                .result;
            match &mut joined {
                None => joined = Some(done),
                Some(j) => {
                    j.aabbs.extend(done.aabbs);
                    j.profile.append(done.profile);
                }
            }
        }
        match joined {
            Some(j) => Ok(j),
            None => frame::cpu(&world.bodies, &world.shapes, None),
        }
    }
}

/// Bytes a run of bodies (the bounds pass alone, the gather) leaves in its frame's one
/// readback staging buffer, beside the bodies' boxes or table, for the passes' statuses and
/// timestamps.
const STATUS_ROOM: u64 = 2048;

/// `f`'s value and the seconds it took.
fn timed<T>(f: impl FnOnce() -> Result<T>) -> Result<(T, f64)> {
    let started = std::time::Instant::now();
    let value = f()?;
    Ok((value, started.elapsed().as_secs_f64()))
}

/// The plan of a frame with a broadphase: with the depth stage when it is on (and its
/// tables are on the GPU) and the frame's room for pairs is within what the depth passes
/// bind ([`depth_pairs_max`]); past that the frame leaves the estimate to runs after it.
fn pair_plan(
    depth: &Option<DepthStage>,
    method: Method,
    caps: Capacities,
    limits: &wgpu::Limits,
) -> Result<frame::Plan> {
    Ok(match on_gpu(depth) {
        Some((d, gpu)) if caps.pairs <= depth_pairs_max(depth, limits) => frame::Plan::Depth {
            method,
            caps,
            params: GpuDepthParams::new(caps.pairs, d.k, gpu.shapes())?,
            table_bytes: gpu.table_bytes(),
        },
        _ => frame::Plan::Pairs(method, caps),
    })
}

/// The most pairs the depth passes bind in one frame (their estimates and partials,
/// [`pairs_within_limits`]); `u32::MAX` when the stage is off or on the CPU.
fn depth_pairs_max(depth: &Option<DepthStage>, limits: &wgpu::Limits) -> u32 {
    match on_gpu(depth) {
        // The stage's k was checked when it was set.
        Some((d, gpu)) => pairs_within_limits(limits, d.k, gpu.shapes()).unwrap_or(u32::MAX),
        None => u32::MAX,
    }
}

/// The depth stage with its tables on the GPU, when it is on and they are.
fn on_gpu(depth: &Option<DepthStage>) -> Option<(&DepthStage, &GpuDepthEstimator)> {
    depth.as_ref().and_then(|d| d.gpu().map(|g| (d, g)))
}

/// The external buffers a frame with these readbacks binds: the depth tables.
fn depth_externals<'a>(
    depth: &'a Option<DepthStage>,
    rb: &frame::Readbacks,
) -> Vec<(BufferProxy, &'a wgpu::Buffer)> {
    match (rb.depth_tables, depth.as_ref().and_then(DepthStage::gpu)) {
        (Some(tables), Some(gpu)) => gpu.bind(tables).to_vec(),
        _ => Vec::new(),
    }
}
