//! First contacts of many moving bodies over one step, in time order: the broadphase over
//! swept boxes, then conservative advancement of every candidate pair interleaved through
//! one priority queue of wake-up times (Lin 1993, ch. 5, eq. 5.1; ../shared/seeds/001_*).
//!
//! Lin wakes a pair at `now + max(t_c, t_min)` with `t_c = (√(v² + 2 a_max d) − v)/a_max`,
//! a bound for bodies whose future motion is unknown but whose acceleration is bounded.
//! Over a step the motions here are known screw motions, and the pair's next
//! conservative-advancement time ([`crate::exact::advance`]) is such a bound itself,
//! proved for the whole step rather than assumed from `a_max`: a pair sleeps until it, far
//! pairs wake once or never, near pairs often, and none is missed. A pair whose balls
//! about the body origins stay apart over the step is a miss and is not queued
//! ([`crate::exact::advance::balls_stay_apart`]); each queued pair runs exactly the
//! evaluations [`crate::exact::advance::time_of_impact`] would, so the queue's
//! contacts equal the all-pairs answer (tests check it on 10,000 bodies); what the queue
//! adds is the order: contacts come out earliest first, and a caller that only needs the
//! first few may stop early ([`FirstContacts::next_contact`]).
//!
//! Swept boxes: a body that does not turn sweeps the box of its start and end boxes; one
//! that turns stays within its reach (the largest distance of a vertex from its origin)
//! of its origin's path, a segment. Boxes are rounded outward to f32 for the broadphase.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use glam::DVec3;

use crate::bodies::GpuAabb;
use crate::broadphase::cpu_pairs;
use crate::exact::advance::{
    Advancement, Progress, ToiInput, ToiOutput, ToiState, balls_stay_apart,
};
use crate::geometry::ConvexPolytope;
use crate::geometry::polytope::{round_down, round_up};
use crate::motion::ScrewMotion;
use crate::passes::broadphase::Method;
use crate::{Error, Result};

/// A body over the step: its shape (an index into the shape table) and its motion.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MovingBody {
    /// Index into the shapes.
    pub shape: u32,
    /// Its motion over the step, `t` in `[0, 1]`.
    pub motion: ScrewMotion,
}

/// The first contact of one pair.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FirstContact {
    /// The lower body index.
    pub a: u32,
    /// The higher body index.
    pub b: u32,
    /// Advancement's answer: `Hit` (time, points, normal, features), `Overlapping` at the
    /// start, or `Capped` (no contact before `toi`, nothing known after).
    pub output: ToiOutput,
}

/// The queue: candidate pairs waiting for their next evaluation.
#[derive(Debug)]
pub struct FirstContacts<'a> {
    pairs: Vec<(u32, u32, Advancement<'a>)>,
    queue: BinaryHeap<Wake>,
    evaluations: u64,
}

/// A pair's wake-up time; the heap's top is the earliest (then the lowest pair index, so
/// the order is deterministic).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Wake {
    time: f64,
    pair: usize,
}

impl Eq for Wake {}

impl Ord for Wake {
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .time
            .total_cmp(&self.time)
            .then(other.pair.cmp(&self.pair))
    }
}

impl PartialOrd for Wake {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<'a> FirstContacts<'a> {
    /// Candidate pairs from the broadphase over the bodies' swept boxes, all awake at 0.
    /// A body naming a missing shape is a named error.
    pub fn new(shapes: &'a [ConvexPolytope], bodies: &[MovingBody]) -> Result<Self> {
        let boxes = bodies
            .iter()
            .enumerate()
            .map(|(i, body)| {
                let shape = shapes
                    .get(body.shape as usize)
                    .ok_or_else(|| Error::InvalidShape {
                        body: i as u32,
                        what: format!(
                            "shape {} does not exist ({} shapes)",
                            body.shape,
                            shapes.len()
                        ),
                    })?;
                Ok(swept_box(shape, &body.motion))
            })
            .collect::<Result<Vec<_>>>()?;
        let candidates = cpu_pairs(&boxes, Method::Hash)?;
        let pairs: Vec<_> = candidates
            .into_iter()
            .filter_map(|[i, j]| {
                let (bi, bj) = (&bodies[i as usize], &bodies[j as usize]);
                let (a, b) = (&shapes[bi.shape as usize], &shapes[bj.shape as usize]);
                // A pair whose balls stay apart is a miss with no walk: not queued.
                if balls_stay_apart((a.radius(), &bi.motion), (b.radius(), &bj.motion)) {
                    return None;
                }
                let input = ToiInput::new(a, bi.motion, b, bj.motion);
                Some((i, j, Advancement::new(input)))
            })
            .collect();
        let queue = (0..pairs.len())
            .map(|pair| Wake { time: 0.0, pair })
            .collect();
        Ok(Self {
            pairs,
            queue,
            evaluations: 0,
        })
    }

    /// The candidate pairs queued: those the broadphase found, less those whose balls
    /// stay apart.
    pub fn candidates(&self) -> usize {
        self.pairs.len()
    }

    /// Distance evaluations so far.
    pub fn evaluations(&self) -> u64 {
        self.evaluations
    }

    /// The next first contact at or before `until` in time order (ties by pair), or `None`
    /// when no pair meets before then. Pairs proved apart past `until` are left asleep.
    pub fn next_contact(&mut self, until: f64) -> Option<FirstContact> {
        while let Some(wake) = self.queue.peek().copied() {
            if wake.time > until {
                return None;
            }
            self.queue.pop();
            let (a, b, run) = &mut self.pairs[wake.pair];
            let before = run.evaluations();
            let progress = run.step();
            self.evaluations += u64::from(run.evaluations() - before);
            match progress {
                Progress::Until(time) => self.queue.push(Wake {
                    time,
                    pair: wake.pair,
                }),
                Progress::Done(output) if output.state == ToiState::Miss => {}
                Progress::Done(output) => {
                    return Some(FirstContact {
                        a: *a,
                        b: *b,
                        output,
                    });
                }
            }
        }
        None
    }

    /// Every first contact at or before `until`, in time order.
    pub fn until(&mut self, until: f64) -> Vec<FirstContact> {
        std::iter::from_fn(|| self.next_contact(until)).collect()
    }
}

/// A box that holds the body over the whole step (see the module comment).
pub fn swept_box(shape: &ConvexPolytope, motion: &ScrewMotion) -> GpuAabb {
    let (lo, hi) = if motion.angular() == DVec3::ZERO {
        let (s, e) = (motion.start(), motion.end());
        let mut lo = DVec3::INFINITY;
        let mut hi = DVec3::NEG_INFINITY;
        for &v in shape.vertices() {
            for x in [s.transform_point(v), e.transform_point(v)] {
                (lo, hi) = (lo.min(x), hi.max(x));
            }
        }
        (lo, hi)
    } else {
        let reach = shape.radius();
        let (s, e) = (motion.start().translation, motion.end().translation);
        (
            s.min(e) - DVec3::splat(reach),
            s.max(e) + DVec3::splat(reach),
        )
    };
    // Outward to f32: the box must still hold every point after rounding. A transformed
    // vertex is rounded too (a few ulps of its coordinates), which the relative widening
    // covers.
    let widen = |x: DVec3| DVec3::splat(x.abs().max_element() * 1e-12);
    GpuAabb::new(round_down(lo - widen(lo)), round_up(hi + widen(hi)))
}
