//! One frame, in stage order, as one plan with one GPU path and one CPU-twin path:
//! [`record`] writes the GPU frame for a [`Plan`] as a recording (upload, bounds, then the
//! broadphase and the particle contacts when the plan has them, readbacks last),
//! [`finish`] turns its readbacks into a [`FrameResult`] with every pass's status checked,
//! and [`cpu`] runs the CPU twins of the same stages on the same inputs. The exact CPU
//! stages after the readback (contacts, impacts) are the world's (`crate::world`).

use std::time::Instant;

use crate::Result;
use crate::bodies::{GpuAabb, GpuBody, GpuShapeBounds};
use crate::broadphase::{cpu_pairs, sorted_pairs};
use crate::estimate::estimate_cpu;
use crate::graph::{BufferProxy, Counted, ReadbackId, Recording};
use crate::passes::bounds::{self, GpuBoundsParams};
use crate::passes::broadphase::{Capacities, GpuPairCounter, Method, record_broadphase};
use crate::passes::depth::{
    DepthShapeBuffers, DepthShapes, GpuDepthEstimate, GpuDepthParams, check_cut,
    record_depth_estimate_counted,
};
use crate::passes::pose_gather::{self, PoseLayout, record_pose_gather};
use crate::passes::round_contacts::{GpuTouchContact, RoundInputs, record_touching};
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
    /// The sampled depth estimate of the pairs.
    pub const DEPTH: &str = "depth";
    /// Results back to the CPU.
    pub const READBACK: &str = "readback";
    /// The body table gathered from a renderer's instance buffer.
    pub const GATHER: &str = "gather";
}

/// What a frame produces.
#[derive(Clone, Debug)]
pub struct FrameResult {
    /// World box of every body, from a frame of the bounds pass alone ([`Plan::Bounds`], or
    /// the CPU twin without a method). A frame with a broadphase leaves it empty: its
    /// product is the pairs, and the boxes stay on the device.
    pub aabbs: Vec<GpuAabb>,
    /// Overlapping box pairs `[a, b]`, `a < b`, sorted (empty when no broadphase ran).
    pub pairs: Vec<[u32; 2]>,
    /// Each pair's sampled depth estimate, in the pairs' order (empty unless the frame
    /// ran the depth stage: [`Plan::Depth`], or [`cpu_estimates`] on the CPU twins).
    pub estimates: Vec<GpuDepthEstimate>,
    /// The broadphase method that ran, if any.
    pub broadphase: Option<Method>,
    /// Stage timings.
    pub profile: Profile,
}

/// The stages a frame runs after upload and bounds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Plan {
    /// The bounds pass alone.
    Bounds,
    /// Bounds, then the broadphase with these pair capacities.
    Pairs(Method, Capacities),
    /// Bounds, broadphase, then the sphere and capsule contacts of every pair straight
    /// from the broadphase's buffers (the pass reads the pair count on the GPU: nothing
    /// comes back between the stages) against a resident shape table of `table_bytes`,
    /// which the caller binds as an external buffer ([`Readbacks::table`]). The contacts
    /// `within` the distance come back (with the pair counter); the pairs only when asked.
    Particles {
        /// The broadphase method.
        method: Method,
        /// Pair capacities.
        caps: Capacities,
        /// Size of the resident round-shape table.
        table_bytes: u64,
        /// Contacts at this distance or closer come back (0: touching or overlapping).
        within: f32,
        /// How many the caller expects (the last frame's count): that many come back with
        /// the frame, any more in a second copy.
        expect: u32,
        /// Whether the pairs come back too (a slab of a larger scene: the pairs it shares
        /// with an earlier slab are counted there).
        pairs_back: bool,
    },
    /// Bounds, broadphase, then the sampled depth estimate of every pair straight from
    /// the broadphase's buffers (the count reaches the depth passes on the GPU) against
    /// resident shape tables of `table_bytes` (shapes, vertices, normals), which the caller
    /// binds as external buffers ([`Readbacks::depth_tables`]). The pairs and their
    /// estimates come back.
    Depth {
        /// The broadphase method.
        method: Method,
        /// Pair capacities.
        caps: Capacities,
        /// The depth passes' parameters, for `caps.pairs` pairs (the room; the count
        /// replaces it on the GPU).
        params: GpuDepthParams,
        /// Sizes of the resident depth tables.
        table_bytes: [u64; 3],
    },
}

impl Plan {
    /// The pair capacities of the plan's broadphase, if any.
    pub fn capacities(&self) -> Option<Capacities> {
        match *self {
            Plan::Bounds => None,
            Plan::Pairs(_, caps) | Plan::Particles { caps, .. } | Plan::Depth { caps, .. } => {
                Some(caps)
            }
        }
    }

    /// The broadphase the plan runs, if any.
    pub fn method(&self) -> Option<Method> {
        match *self {
            Plan::Bounds => None,
            Plan::Pairs(m, _)
            | Plan::Particles { method: m, .. }
            | Plan::Depth { method: m, .. } => Some(m),
        }
    }
}

/// Where a frame's body table comes from.
#[derive(Clone, Copy, Debug)]
pub enum Bodies<'a> {
    /// Uploaded from the CPU.
    Upload(&'a [GpuBody]),
    /// Boxes given by the caller (swept boxes, a renderer's own): no bounds pass; the
    /// shapes are not used. A particle plan then has no contacts (they need the bodies).
    Boxes(&'a [GpuAabb]),
    /// Gathered on the GPU from a renderer's instance buffer (the caller binds it as
    /// [`Readbacks::instances`]): the `bytes` from instance `first` on, one body per shape
    /// index uploaded beside it; the gathered table comes back with the results.
    Gather {
        /// Each body's shape.
        shape_of: &'a [u32],
        /// Where the poses lie in an instance.
        layout: PoseLayout,
        /// The instance the window starts at (0: the whole buffer; else a multiple of 256,
        /// so the window meets any device's storage offset alignment).
        first: u32,
        /// Size of the window (the whole buffer's size when `first` is 0).
        bytes: u64,
    },
}

impl Bodies<'_> {
    /// Number of bodies.
    pub fn len(&self) -> usize {
        match self {
            Bodies::Upload(b) => b.len(),
            Bodies::Gather { shape_of, .. } => shape_of.len(),
            Bodies::Boxes(b) => b.len(),
        }
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Where a GPU frame's results come back. Only what the CPU uses comes back: the boxes
/// from a bounds frame; from a broadphase, its counter and then the counted pairs (and
/// their contacts), not the buffers' whole capacity (their heads are sized for what
/// [`Capacities::expected_pairs`] expects; a larger count costs a second copy).
#[derive(Clone, Copy, Debug)]
pub struct Readbacks {
    /// The boxes (bounds frames).
    pub aabbs: Option<ReadbackId>,
    /// The bounds pass status (none when the boxes were given).
    pub bounds_status: Option<ReadbackId>,
    /// The pair counter, when the plan has a broadphase.
    pub counter: Option<ReadbackId>,
    /// The counted pairs (pair plans).
    pub pairs: Option<ReadbackId>,
    /// The count of contacts within the plan's distance and their list (particle plans).
    pub touching: Option<(ReadbackId, ReadbackId)>,
    /// The pairs' depth estimates, in the pair buffer's order, and the depth passes' cut
    /// word (depth plans).
    pub estimates: Option<(ReadbackId, ReadbackId)>,
    /// The external depth tables to bind (depth plans).
    pub depth_tables: Option<DepthShapeBuffers>,
    /// The external round-shape table to bind (particle plans).
    pub table: Option<BufferProxy>,
    /// The broadphase method that ran.
    pub method: Option<Method>,
    /// The external instance buffer to bind (gathered body tables).
    pub instances: Option<BufferProxy>,
    /// The gathered body table and the gather's status (gathered body tables).
    pub bodies: Option<(ReadbackId, ReadbackId)>,
    /// The instance the gathered window starts at (its errors name instances from there).
    pub gather_first: u32,
}

/// A GPU frame's result and, when a broadphase ran, its pair counter (the caller re-runs
/// the frame with larger capacities when it overflowed).
#[derive(Clone, Debug)]
pub struct GpuFrame {
    /// Boxes, pairs, profile.
    pub result: FrameResult,
    /// The broadphase's counter.
    pub counter: Option<GpuPairCounter>,
    /// The contacts within the particle plan's distance, sorted by pair.
    pub touching: Option<Vec<GpuTouchContact>>,
    /// The body table the frame gathered from an instance buffer.
    pub bodies: Option<Vec<GpuBody>>,
}

/// Records the GPU frame of `plan` for `bodies` over `shapes`.
pub fn record(bodies: Bodies<'_>, shapes: &[GpuShapeBounds], plan: Plan) -> (Recording, Readbacks) {
    let mut rec = Recording::new();
    rec.stage(stage::UPLOAD);
    let (body_buf, instances) = match bodies {
        Bodies::Upload(bodies) => {
            let body_buf = rec.array_buffer::<GpuBody>(bodies.len(), "bodies");
            rec.upload(body_buf, bodies);
            (Some(body_buf), None)
        }
        Bodies::Gather {
            shape_of,
            layout,
            first,
            bytes,
        } => {
            let offset = u64::from(first) * u64::from(layout.stride);
            let instances = rec.external_window(offset, bytes, "instances");
            let shape_buf = rec.array_buffer::<u32>(shape_of.len().max(1), "shape of");
            rec.upload(shape_buf, shape_of);
            rec.stage(stage::GATHER);
            let params = layout.params(shape_of.len());
            let out = record_pose_gather(&mut rec, instances, shape_buf, params);
            rec.free(shape_buf);
            (Some(out.bodies), Some((instances, out.status)))
        }
        Bodies::Boxes(_) => (None, None),
    };
    // The boxes: from the bounds pass, or as given.
    let (aabb_buf, bounds_status) = match (bodies, body_buf) {
        (Bodies::Boxes(boxes), _) => {
            let aabb_buf = rec.array_buffer::<GpuAabb>(boxes.len(), "boxes");
            rec.upload(aabb_buf, boxes);
            (aabb_buf, None)
        }
        (_, Some(body_buf)) => {
            let shape_buf = rec.array_buffer::<GpuShapeBounds>(shapes.len(), "shapes");
            rec.upload(shape_buf, shapes);
            rec.stage(stage::BOUNDS);
            let params = GpuBoundsParams::new(bodies.len() as u32, shapes.len() as u32);
            let out = bounds::record_bounds(&mut rec, body_buf, shape_buf, params);
            (out.aabbs, Some(out.status))
        }
        (_, None) => unreachable!("bodies other than boxes have a body buffer"),
    };
    let (instances, gather_status) = instances.unzip();

    // record_broadphase names its own stages: broadphase/setup, broadphase/table, ...
    let n = bodies.len() as u32;
    // After the broadphase: the particle contacts (and their shape table), or the depth
    // estimate (and its tables), when the plan has them and the bodies are on the GPU.
    let (bp, touching, table, depth) = match (plan, body_buf) {
        (Plan::Bounds, _) => (None, None, None, None),
        (Plan::Pairs(method, caps), _)
        | (Plan::Particles { method, caps, .. } | Plan::Depth { method, caps, .. }, None) => (
            Some(record_broadphase(&mut rec, aabb_buf, n, method, caps)),
            None,
            None,
            None,
        ),
        (
            Plan::Depth {
                method,
                caps,
                params,
                table_bytes,
            },
            Some(body_buf),
        ) => {
            let bp = record_broadphase(&mut rec, aabb_buf, n, method, caps);
            rec.stage(stage::DEPTH);
            let tables = DepthShapeBuffers {
                shapes: rec.external(table_bytes[0], "depth shapes"),
                vertices: rec.external(table_bytes[1], "depth vertices"),
                normals: rec.external(table_bytes[2], "depth normals"),
            };
            let out = record_depth_estimate_counted(
                &mut rec, body_buf, bp.pairs, bp.counter, tables, params,
            );
            (Some(bp), None, None, Some((out, tables)))
        }
        (
            Plan::Particles {
                method,
                caps,
                table_bytes,
                within,
                expect,
                ..
            },
            Some(body_buf),
        ) => {
            let bp = record_broadphase(&mut rec, aabb_buf, n, method, caps);
            rec.stage(stage::CONTACTS);
            let table = rec.external(table_bytes, "round shapes");
            let inputs = RoundInputs {
                counter: bp.counter,
                bodies: body_buf,
                pairs: bp.pairs,
                shapes: table,
            };
            let out = record_touching(&mut rec, inputs, caps.pairs, within);
            (Some(bp), Some((out, expect)), Some(table), None)
        }
    };

    rec.stage(stage::READBACK);
    let aabbs = bp.is_none().then(|| {
        rec.readback_range(
            aabb_buf,
            0,
            bodies.len() as u64 * size_of::<GpuAabb>() as u64,
        )
    });
    let bounds_status = bounds_status.map(|s| rec.readback(s));
    let counted = |counter, stride: usize, expect: u32| Counted {
        counter,
        at: 0,
        stride: stride as u64,
        head: u64::from(expect) * stride as u64,
    };
    let counter = bp.map(|bp| rec.readback(bp.counter));
    let expected_pairs = plan.capacities().map_or(0, Capacities::expected_pairs);
    // A particle frame's product is its contacts: its pairs stay on the device unless
    // asked for.
    let pairs_back = match plan {
        Plan::Particles { pairs_back, .. } => pairs_back,
        _ => true,
    };
    let pairs = bp
        .zip(counter)
        .filter(|_| touching.is_none() || pairs_back)
        .map(|(bp, counter)| {
            let stride = size_of::<[u32; 2]>();
            rec.readback_counted(bp.pairs, counted(counter, stride, expected_pairs))
        });
    let estimates = depth.map(|(out, _)| {
        let counter = counter.expect("the depth stage follows a broadphase");
        let stride = size_of::<GpuDepthEstimate>();
        let list = rec.readback_counted(out.estimates, counted(counter, stride, expected_pairs));
        (list, rec.readback(out.cut))
    });
    let touching = touching.map(|(out, expect)| {
        let count = rec.readback(out.touch_count);
        let stride = size_of::<GpuTouchContact>();
        let list = rec.readback_counted(out.touching, counted(count, stride, expect));
        (count, list)
    });
    let gathered_bodies = body_buf
        .zip(gather_status)
        .map(|(b, status)| (rec.readback(b), rec.readback(status)));
    let readbacks = Readbacks {
        aabbs,
        bounds_status,
        counter,
        pairs,
        touching,
        estimates,
        depth_tables: depth.map(|(_, tables)| tables),
        table,
        method: plan.method(),
        instances,
        bodies: gathered_bodies,
        gather_first: match bodies {
            Bodies::Gather { first, .. } => first,
            _ => 0,
        },
    };
    (rec, readbacks)
}

/// Turns a GPU frame's readbacks into a result, checking each pass's status.
pub fn finish(
    output: &crate::gpu::FrameOutput,
    readbacks: &Readbacks,
    bodies: &[GpuBody],
    shapes: &[GpuShapeBounds],
) -> Result<GpuFrame> {
    if let Some((_, status)) = readbacks.bodies {
        let status = output.values::<GpuPassStatus>(status)[0];
        pose_gather::check_status(&status, readbacks.gather_first)?;
    }
    let gathered: Option<Vec<GpuBody>> = readbacks.bodies.map(|(id, _)| output.values(id));
    if let Some(id) = readbacks.bounds_status {
        let status: Vec<GpuPassStatus> = output.values(id);
        bounds::check_status(
            &status[0],
            gathered.as_deref().unwrap_or(bodies),
            shapes.len() as u32,
        )?;
    }
    let mut result = FrameResult {
        aabbs: readbacks
            .aabbs
            .map(|id| output.values(id))
            .unwrap_or_default(),
        pairs: Vec::new(),
        estimates: Vec::new(),
        broadphase: readbacks.method,
        profile: output.profile.clone(),
    };
    let counter = readbacks
        .counter
        .map(|id| output.values::<GpuPairCounter>(id)[0]);
    if let (Some(id), Some(counter)) = (readbacks.pairs, &counter) {
        let raw: Vec<[u32; 2]> = output.values(id);
        match readbacks.estimates {
            None => result.pairs = sorted_pairs(&raw, counter),
            Some((estimates, cut)) => {
                check_cut(output.values::<u32>(cut)[0])?;
                let estimates: Vec<GpuDepthEstimate> = output.values(estimates);
                let valid = (counter.count.min(counter.capacity) as usize)
                    .min(raw.len())
                    .min(estimates.len());
                let mut order: Vec<usize> = (0..valid).collect();
                order.sort_unstable_by_key(|&i| raw[i]);
                result.pairs = order.iter().map(|&i| raw[i]).collect();
                result.estimates = order.iter().map(|&i| estimates[i]).collect();
            }
        }
    }
    let touching = readbacks.touching.map(|(_, list)| {
        let mut list: Vec<GpuTouchContact> = output.values(list);
        list.sort_unstable_by_key(|c| c.pair);
        list
    });
    Ok(GpuFrame {
        result,
        counter,
        touching,
        bodies: gathered,
    })
}

/// The same frame on the CPU twins: bounds, then the broadphase when `method` is given.
pub fn cpu(
    bodies: &[GpuBody],
    shapes: &[GpuShapeBounds],
    method: Option<Method>,
) -> Result<FrameResult> {
    let started = Instant::now();
    let params = GpuBoundsParams::new(bodies.len() as u32, shapes.len() as u32);
    let mut aabbs = Vec::new();
    let t = Instant::now();
    let status = bounds::bounds_cpu(bodies, shapes, params, &mut aabbs);
    let mut stages = vec![StageTime {
        name: stage::BOUNDS,
        seconds: t.elapsed().as_secs_f64(),
    }];
    bounds::check_status(&status, bodies, shapes.len() as u32)?;
    let mut pairs = Vec::new();
    if let Some(method) = method {
        let t = Instant::now();
        pairs = cpu_pairs(&aabbs, method)?;
        // As on the GPU: a frame with a broadphase returns its pairs, not its boxes.
        aabbs = Vec::new();
        stages.push(StageTime {
            name: stage::BROADPHASE,
            seconds: t.elapsed().as_secs_f64(),
        });
    }
    Ok(FrameResult {
        aabbs,
        pairs,
        estimates: Vec::new(),
        broadphase: method,
        profile: Profile {
            stages,
            clock: Clock::Cpu,
            wall: started.elapsed(),
        },
    })
}

/// The depth stage on the CPU twin: the sampled estimate of every pair of a CPU frame
/// (what [`Plan::Depth`] adds on the GPU), timed as its own stage.
pub fn cpu_estimates(
    frame: &mut FrameResult,
    bodies: &[GpuBody],
    shapes: &DepthShapes,
    k: u32,
) -> Result<()> {
    let t = Instant::now();
    frame.estimates = estimate_cpu(shapes, bodies, &frame.pairs, k)?;
    frame.profile.stages.push(StageTime {
        name: stage::DEPTH,
        seconds: t.elapsed().as_secs_f64(),
    });
    Ok(())
}
