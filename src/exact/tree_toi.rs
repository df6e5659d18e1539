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

use super::advance::{Advancement, Progress, ToiInput, ToiOutput, ToiState};
use super::dynamic_obb::{self, MAX_DEPTH};
use crate::geometry::HullTree;
use crate::motion::ScrewMotion;

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
    let candidates = dynamic_obb::piece_pairs_during(a, &motion_a, b, &motion_b, MAX_DEPTH);
    let mut heap: BinaryHeap<Waiting<'_>> = candidates
        .iter()
        .map(|&(pa, pb)| Waiting {
            time: 0.0,
            pieces: (pa, pb),
            run: Advancement::new(ToiInput::new(a.piece(pa), motion_a, b.piece(pb), motion_b)),
        })
        .collect();
    let mut evaluations = 0;
    let mut miss: Option<(ToiOutput, (u32, u32))> = None;
    while let Some(mut w) = heap.pop() {
        evaluations += 1;
        match w.run.step() {
            Progress::Until(time) => {
                w.time = time;
                heap.push(w);
            }
            Progress::Done(out) if out.state == ToiState::Miss => {
                miss.get_or_insert((out, w.pieces));
            }
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
    let (output, pieces) = miss.unwrap_or_else(|| {
        // No pair survived the filter: apart through the whole step.
        let end = (motion_a.end(), motion_b.end());
        (
            ToiOutput {
                state: ToiState::Miss,
                toi: 1.0,
                distance: f64::INFINITY,
                point_a: end.0.translation,
                point_b: end.1.translation,
                normal: glam::DVec3::ZERO,
                features: (
                    crate::geometry::FeatureId::Vertex(0),
                    crate::geometry::FeatureId::Vertex(0),
                ),
                iterations: 0,
            },
            (0, 0),
        )
    });
    TreeToi {
        output,
        pieces,
        candidates: candidates.len(),
        evaluations,
    }
}
