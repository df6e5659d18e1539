//! Time of impact between hull trees (non-convex bodies, or a convex body as a one-node
//! tree) under screw motions: the OBB trees first list the piece pairs whose boxes may
//! touch during the step (`dynamic_obb::piece_pairs_during`, conservative), then each
//! listed pair runs conservative advancement (`advance::Advancement`), interleaved: the
//! pair proved apart for the shortest time is always the one stepped next. So when a pair
//! reports contact at its current time, every other pair is already proved apart until at
//! least then, and that contact is the bodies' first. A pair that reaches the iteration
//! cap ends the query the same way, at the last time it proved safe (never later than
//! the first contact).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use glam::DVec3;

use super::advance::{self, Advancement, Progress, ToiInput, ToiOutput, ToiState};
use super::dynamic_obb;
use super::{rounded, rounded_toi};
use crate::geometry::obb::Obb;
use crate::geometry::rounded::Rounded;
use crate::geometry::{FeatureId, HullTree};
use crate::motion::ScrewMotion;

/// Halvings of the step in the two trees' filter. Deeper keeps fewer piece pairs, and
/// proves them apart until later (each pair's advancement starts there), but costs more
/// box tests: on the tree bench's tori and bumpy spheres (1k to 102k triangles) 4 levels
/// answer in 0.75 to 0.80 of the time 8 take (22 walks a query on the 1k torus against
/// 11), 3 levels in 1.05 to 1.15 of the time 4 take.
pub const FILTER_DEPTH: u32 = 4;

/// The first contact of two trees over a step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TreeToi {
    /// The answer of the piece pair that decided it (for a miss, `state` is `Miss` and
    /// `toi` 1; the other fields then mean nothing).
    pub output: ToiOutput,
    /// The pieces (A's, B's) that make the first contact.
    pub pieces: (u32, u32),
    /// Piece pairs the OBB filter kept.
    pub candidates: usize,
    /// Distance evaluations over all pairs.
    pub evaluations: u32,
}

struct Waiting<'a> {
    time: f64,
    pieces: (u32, u32),
    run: Advancement<'a>,
}

impl PartialEq for Waiting<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Waiting<'_> {}
impl PartialOrd for Waiting<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Waiting<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: BinaryHeap pops the greatest; the earliest safe time first.
        other
            .time
            .total_cmp(&self.time)
            .then(other.pieces.cmp(&self.pieces))
    }
}

/// The first contact of `a` and `b` over their motions (`t` in `[0, 1]`).
pub fn time_of_impact(
    a: &HullTree,
    motion_a: ScrewMotion,
    b: &HullTree,
    motion_b: ScrewMotion,
) -> TreeToi {
    first_contact(a, motion_a, b, motion_b, false)
}

/// [`time_of_impact`] of the contacts that are new: a piece pair touching at the start
/// that stays in that contact or parts ([`advance::holds_or_parts`] on the two pieces,
/// each convex) is no contact, and the other piece pairs go on (a non-convex body sliding
/// on a floor meets it nowhere new, unless another of its pieces comes down on it).
pub fn first_new_contact(
    a: &HullTree,
    motion_a: ScrewMotion,
    b: &HullTree,
    motion_b: ScrewMotion,
) -> TreeToi {
    first_contact(a, motion_a, b, motion_b, true)
}

fn first_contact(
    a: &HullTree,
    motion_a: ScrewMotion,
    b: &HullTree,
    motion_b: ScrewMotion,
    new_only: bool,
) -> TreeToi {
    let candidates = dynamic_obb::candidates_during(a, &motion_a, b, &motion_b, FILTER_DEPTH);
    let mut heap: BinaryHeap<Waiting<'_>> = candidates
        .iter()
        .map(|c| {
            let (pa, pb) = c.pieces;
            Waiting {
                time: c.apart_until,
                pieces: c.pieces,
                run: Advancement::new(ToiInput::new(a.piece(pa), motion_a, b.piece(pb), motion_b))
                    .starting_at(c.apart_until),
            }
        })
        .collect();
    let mut evaluations = 0;
    let mut miss: Option<(ToiOutput, (u32, u32))> = None;
    while let Some(mut w) = heap.pop() {
        let before = w.run.evaluations();
        let progress = w.run.step();
        evaluations += w.run.evaluations() - before;
        match progress {
            Progress::Until(time) => {
                w.time = time;
                heap.push(w);
            }
            Progress::Done(out) if out.state == ToiState::Miss => {
                miss.get_or_insert((out, w.pieces));
            }
            // A contact held from the start: no contact of this pair, the others go on.
            Progress::Done(out)
                if new_only
                    && advance::held_from_start_polytopes(
                        &out,
                        (a.piece(w.pieces.0), a.piece(w.pieces.0).radius(), &motion_a),
                        (b.piece(w.pieces.1), b.piece(w.pieces.1).radius(), &motion_b),
                    ) => {}
            Progress::Done(output) => {
                return TreeToi {
                    output,
                    pieces: w.pieces,
                    candidates: candidates.len(),
                    evaluations,
                };
            }
        }
    }
    // No pair survived the filter: apart through the whole step.
    let (output, pieces) = miss.unwrap_or_else(|| (miss_output(&motion_a, &motion_b), (0, 0)));
    TreeToi {
        output,
        pieces,
        candidates: candidates.len(),
        evaluations,
    }
}

/// The first contact of a hull tree and a rounded body (sphere, capsule, rounded
/// polytope) over their motions: the tree's OBBs and the step's sub-intervals against the
/// body's box (its core's box grown by its radius) list the pieces that may touch it
/// during the step, each with the time it is proved apart until
/// (`dynamic_obb::pieces_near_box`); in order of those times each runs the rounded
/// advancement (`exact::rounded_toi`) from its own, until a piece is proved apart past the
/// earliest contact found. The earliest answer is the first contact (each is never later
/// than its own pair's).
pub fn time_of_impact_rounded(
    a: &HullTree,
    motion_a: ScrewMotion,
    b: &Rounded,
    motion_b: ScrewMotion,
) -> TreeToi {
    first_contact_rounded(a, motion_a, b, motion_b, false)
}

/// [`time_of_impact_rounded`] of the contacts that are new (see [`first_new_contact`]).
pub fn first_new_contact_rounded(
    a: &HullTree,
    motion_a: ScrewMotion,
    b: &Rounded,
    motion_b: ScrewMotion,
) -> TreeToi {
    first_contact_rounded(a, motion_a, b, motion_b, true)
}

fn first_contact_rounded(
    a: &HullTree,
    motion_a: ScrewMotion,
    b: &Rounded,
    motion_b: ScrewMotion,
    new_only: bool,
) -> TreeToi {
    let core = b.core_points();
    let mut body_box = Obb::fit(&core);
    body_box.half += DVec3::splat(b.radius);
    let mut candidates =
        dynamic_obb::pieces_near_box(a, &motion_a, &body_box, &motion_b, FILTER_DEPTH);
    candidates.sort_by(|x, y| x.apart_until.total_cmp(&y.apart_until));
    let mut best: Option<(ToiOutput, u32)> = None;
    let mut evaluations = 0;
    for c in &candidates {
        if best.is_some_and(|(o, _)| c.apart_until >= o.toi) {
            break;
        }
        let piece = c.pieces.0;
        let out = rounded_toi::time_of_impact_from(
            &rounded::plain(a.piece(piece).clone()),
            motion_a,
            b,
            motion_b,
            None,
            None,
            c.apart_until,
        );
        evaluations += out.iterations;
        if new_only
            && advance::held_from_start(
                &out,
                (a.piece(piece).radius(), &motion_a),
                (b.reach(), &motion_b),
            )
        {
            continue;
        }
        if out.state != ToiState::Miss && best.is_none_or(|(o, _)| out.toi < o.toi) {
            best = Some((out, piece));
        }
    }
    match best {
        Some((output, piece)) => TreeToi {
            output,
            pieces: (piece, 0),
            candidates: candidates.len(),
            evaluations,
        },
        None => TreeToi {
            output: miss_output(&motion_a, &motion_b),
            pieces: (0, 0),
            candidates: candidates.len(),
            evaluations,
        },
    }
}

/// A miss with nothing evaluated: apart through the whole step.
fn miss_output(motion_a: &ScrewMotion, motion_b: &ScrewMotion) -> ToiOutput {
    ToiOutput {
        state: ToiState::Miss,
        toi: 1.0,
        distance: f64::INFINITY,
        point_a: motion_a.end().translation,
        point_b: motion_b.end().translation,
        normal: DVec3::ZERO,
        features: (FeatureId::Vertex(0), FeatureId::Vertex(0)),
        iterations: 0,
    }
}
