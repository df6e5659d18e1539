//! Distance and collision between hull trees (`geometry::hull_tree`): the pair tree (BVTT)
//! walked with the closest-feature walk at every node pair.
//!
//! Distance is best-first: node pairs wait in a heap ordered by their hulls' distance,
//! which bounds from below the distance of every piece pair under them. The pair popped
//! first whose nodes are both leaves is the closest piece pair: every pair still waiting,
//! and everything under it, is at least as far. So a node pair whose hull distance is no
//! less than the best leaf distance is never opened. An inner pair is opened by splitting
//! the node with the larger hull (by radius); a leaf against an inner node splits the
//! inner one.
//!
//! Collision is depth-first with early exit: a node pair whose hulls are separated is
//! dropped, the first leaf pair that touches or overlaps answers yes.
//!
//! Every node pair's closest features are kept in a [`TreeCache`], so the next query on
//! slightly moved poses starts each walk where the last one ended. A walk that gives up is
//! settled exactly at a leaf pair (the separating-axis test, then enumeration over
//! feature pairs); at an inner pair its bound is taken as 0, so the pair is opened.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};

use glam::DVec3;

use super::rounded::{self, Contact};
use super::sat;
use super::walk::{self, WalkInput, WalkState};
use crate::bodies::Pose;
use crate::geometry::hull_tree::NodeKind;
use crate::geometry::rounded::Rounded;
use crate::geometry::{ConvexPolytope, FeatureId, HullTree, brute};

/// Closest features per node pair, kept across queries on the same two trees.
#[derive(Clone, Debug, Default)]
pub struct TreeCache {
    features: HashMap<(u32, u32), (FeatureId, FeatureId)>,
}

impl TreeCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// Node pairs remembered.
    pub fn len(&self) -> usize {
        self.features.len()
    }

    /// True when nothing is remembered.
    pub fn is_empty(&self) -> bool {
        self.features.is_empty()
    }
}

/// How two trees stand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TreeState {
    /// Disjoint.
    Separated,
    /// A piece of each touches (distance exactly 0), without overlap between those two.
    Touching,
    /// A piece of each overlaps.
    Penetrating,
}

/// The closest pieces of two trees.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TreeDistance {
    /// How they stand.
    pub state: TreeState,
    /// Distance (0 when touching or penetrating).
    pub distance: f64,
    /// Closest point on A, world space (a witness of the overlap when penetrating).
    pub point_a: DVec3,
    /// Closest point on B, world space.
    pub point_b: DVec3,
    /// The pieces (A's, B's) the points lie on.
    pub pieces: (u32, u32),
    /// The pieces' closest features.
    pub features: (FeatureId, FeatureId),
    /// Node pairs evaluated (walks run).
    pub node_pairs: u32,
}

/// One node pair's exact answer.
#[derive(Clone, Copy, Debug)]
struct PairAnswer {
    state: TreeState,
    distance: f64,
    point_a: DVec3,
    point_b: DVec3,
    features: (FeatureId, FeatureId),
}

/// The two trees at their poses, with the cache.
struct Pair<'a> {
    a: &'a HullTree,
    pose_a: Pose,
    b: &'a HullTree,
    pose_b: Pose,
    cache: &'a mut TreeCache,
    evaluated: u32,
}

impl Pair<'_> {
    /// The walk between two nodes' hulls, warm-started from the cache; a walk that gives
    /// up is settled by the separating-axis test and enumeration.
    fn evaluate(&mut self, na: u32, nb: u32) -> PairAnswer {
        self.evaluated += 1;
        let (ha, hb) = (&self.a.node(na).hull, &self.b.node(nb).hull);
        let start = self.cache.features.get(&(na, nb)).copied();
        let w = walk::walk(&WalkInput {
            start,
            ..WalkInput::new(ha, self.pose_a, hb, self.pose_b)
        });
        let state = match w.state {
            WalkState::Separated => TreeState::Separated,
            WalkState::Touching => TreeState::Touching,
            WalkState::Penetrating => TreeState::Penetrating,
            WalkState::Failed(_) => {
                self.cache.features.remove(&(na, nb));
                if self.leaf_pair(na, nb) {
                    return settle(ha, &self.pose_a, hb, &self.pose_b);
                }
                // An inner pair only bounds what is under it: distance 0 is a bound that
                // always holds, and opening the pair costs less than settling its large
                // hulls by enumeration.
                return PairAnswer {
                    state: TreeState::Touching,
                    distance: 0.0,
                    point_a: w.point_a,
                    point_b: w.point_b,
                    features: w.features,
                };
            }
        };
        self.cache.features.insert((na, nb), w.features);
        PairAnswer {
            state,
            distance: w.distance,
            point_a: w.point_a,
            point_b: w.point_b,
            features: w.features,
        }
    }

    /// A node pair evaluated, as the heap holds it.
    fn waiting(&mut self, na: u32, nb: u32) -> Waiting {
        let answer = self.evaluate(na, nb);
        Waiting {
            distance: answer.distance,
            inner: !self.leaf_pair(na, nb),
            na,
            nb,
            answer,
        }
    }

    /// Whether the node pair's subtree can be passed over by a search for pieces no
    /// farther apart than `margin`: its hulls are apart by more than that, and an inner
    /// pair by more than the rounding of their points too. An inner hull holds its
    /// pieces' vertices exactly, but its walk rounds otherwise than theirs: a block model's
    /// piece touching a box exactly (the distance query found 0) sat under an inner pair
    /// the walk put 1e-19 apart, and `collide` and `penetration` answered no contact.
    fn passed_over(&self, na: u32, nb: u32, answer: &PairAnswer, margin: f64) -> bool {
        if answer.state != TreeState::Separated || answer.distance <= margin {
            return false;
        }
        self.leaf_pair(na, nb) || {
            let (ha, hb) = (&self.a.node(na).hull, &self.b.node(nb).hull);
            answer.distance > margin + walk::points_rounding(ha, &self.pose_a, hb, &self.pose_b)
        }
    }

    fn leaf_pair(&self, na: u32, nb: u32) -> bool {
        matches!(
            (self.a.node(na).kind, self.b.node(nb).kind),
            (NodeKind::Leaf(_), NodeKind::Leaf(_))
        )
    }

    fn leaf_answer(&self, na: u32, nb: u32, p: PairAnswer) -> Option<TreeDistance> {
        match (self.a.node(na).kind, self.b.node(nb).kind) {
            (NodeKind::Leaf(pa), NodeKind::Leaf(pb)) => Some(TreeDistance {
                state: p.state,
                distance: p.distance,
                point_a: p.point_a,
                point_b: p.point_b,
                pieces: (pa, pb),
                features: p.features,
                node_pairs: self.evaluated,
            }),
            _ => None,
        }
    }

    /// The child pairs of an inner pair: the larger node (by hull radius) is split.
    fn children(&self, na: u32, nb: u32) -> [(u32, u32); 2] {
        let (ka, kb) = (self.a.node(na).kind, self.b.node(nb).kind);
        let split_a = match (ka, kb) {
            (NodeKind::Inner(_), NodeKind::Leaf(_)) => true,
            (NodeKind::Leaf(_), NodeKind::Inner(_)) => false,
            _ => self.a.node(na).hull.radius() >= self.b.node(nb).hull.radius(),
        };
        match (split_a, ka, kb) {
            (true, NodeKind::Inner([l, r]), _) => [(l, nb), (r, nb)],
            (false, _, NodeKind::Inner([l, r])) => [(na, l), (na, r)],
            _ => unreachable!("an inner pair has an inner node"),
        }
    }
}

/// A walk that gave up, settled exactly.
fn settle(a: &ConvexPolytope, pose_a: &Pose, b: &ConvexPolytope, pose_b: &Pose) -> PairAnswer {
    let c = brute::polytope_closest_pair(a, pose_a, b, pose_b);
    if sat::intersects(a, pose_a, b, pose_b) {
        let state = if sat::max_separation(a, pose_a, b, pose_b).distance < 0.0 {
            TreeState::Penetrating
        } else {
            TreeState::Touching
        };
        return PairAnswer {
            state,
            distance: 0.0,
            point_a: c.point_a,
            point_b: c.point_b,
            features: c.features,
        };
    }
    PairAnswer {
        state: TreeState::Separated,
        distance: c.distance,
        point_a: c.point_a,
        point_b: c.point_b,
        features: c.features,
    }
}

/// A heap entry: smaller distance first, leaf pairs before inner pairs at equal distance.
#[derive(Clone, Copy, Debug)]
struct Waiting {
    distance: f64,
    inner: bool,
    na: u32,
    nb: u32,
    answer: PairAnswer,
}

impl PartialEq for Waiting {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Waiting {}
impl PartialOrd for Waiting {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Waiting {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: BinaryHeap pops the greatest.
        other
            .distance
            .total_cmp(&self.distance)
            .then(other.inner.cmp(&self.inner))
            .then(other.na.cmp(&self.na))
            .then(other.nb.cmp(&self.nb))
    }
}

/// The distance between two trees: the closest pieces, their points and features.
pub fn distance(
    a: &HullTree,
    pose_a: Pose,
    b: &HullTree,
    pose_b: Pose,
    cache: &mut TreeCache,
) -> TreeDistance {
    let mut pair = Pair {
        a,
        pose_a,
        b,
        pose_b,
        cache,
        evaluated: 0,
    };
    let mut heap = BinaryHeap::new();
    heap.push(pair.waiting(HullTree::ROOT, HullTree::ROOT));
    while let Some(w) = heap.pop() {
        if let Some(found) = pair.leaf_answer(w.na, w.nb, w.answer) {
            return found;
        }
        for (ca, cb) in pair.children(w.na, w.nb) {
            heap.push(pair.waiting(ca, cb));
        }
    }
    unreachable!("the heap holds a leaf pair under every inner pair it opens")
}

/// Whether two trees touch or overlap, with the first piece pair found that does.
pub fn collide(
    a: &HullTree,
    pose_a: Pose,
    b: &HullTree,
    pose_b: Pose,
    cache: &mut TreeCache,
) -> Option<TreeDistance> {
    let mut pair = Pair {
        a,
        pose_a,
        b,
        pose_b,
        cache,
        evaluated: 0,
    };
    let mut stack = vec![(HullTree::ROOT, HullTree::ROOT)];
    while let Some((na, nb)) = stack.pop() {
        let answer = pair.evaluate(na, nb);
        if pair.passed_over(na, nb, &answer, 0.0)
            || (answer.state == TreeState::Separated && pair.leaf_pair(na, nb))
        {
            continue;
        }
        if let Some(found) = pair.leaf_answer(na, nb, answer) {
            return Some(found);
        }
        let [first, second] = pair.children(na, nb);
        stack.extend([second, first]);
    }
    None
}

/// Every piece pair of two trees no farther apart than `margin` (touching and overlapping
/// pairs included), depth-first: a node pair whose hulls are farther apart than `margin`
/// is dropped with everything under it. The pieces a contact manifold is built on.
pub fn pieces_within(
    a: &HullTree,
    pose_a: Pose,
    b: &HullTree,
    pose_b: Pose,
    margin: f64,
    cache: &mut TreeCache,
) -> Vec<(u32, u32)> {
    let mut pair = Pair {
        a,
        pose_a,
        b,
        pose_b,
        cache,
        evaluated: 0,
    };
    let mut found = Vec::new();
    let mut stack = vec![(HullTree::ROOT, HullTree::ROOT)];
    while let Some((na, nb)) = stack.pop() {
        let answer = pair.evaluate(na, nb);
        if pair.passed_over(na, nb, &answer, margin) {
            continue;
        }
        if let Some(leaf) = pair.leaf_answer(na, nb, answer) {
            found.push(leaf.pieces);
            continue;
        }
        let [first, second] = pair.children(na, nb);
        stack.extend([second, first]);
    }
    found.sort_unstable();
    found
}

/// Every piece of a tree no farther than `margin` from a rounded body.
pub fn pieces_within_rounded(
    a: &HullTree,
    pose_a: Pose,
    b: &Rounded,
    pose_b: Pose,
    margin: f64,
) -> Vec<u32> {
    let mut found = Vec::new();
    let mut stack = vec![HullTree::ROOT];
    while let Some(node) = stack.pop() {
        let hull = rounded::plain(a.node(node).hull.clone());
        let d = rounded::distance(&hull, &pose_a, b, &pose_b);
        if d.contact == Contact::Separated && d.distance > margin {
            continue;
        }
        match a.node(node).kind {
            NodeKind::Leaf(piece) => found.push(piece),
            NodeKind::Inner([l, r]) => stack.extend([r, l]),
        }
    }
    found.sort_unstable();
    found
}

/// A tree against a rounded body (sphere, capsule, rounded polytope): the same descent over
/// the tree's nodes alone, each node's hull against the body by `exact::rounded` (a node's
/// distance to the body bounds its pieces' from below, as its hull contains them). The
/// answer's `pieces.1` is 0.
pub fn distance_to_rounded(a: &HullTree, pose_a: Pose, b: &Rounded, pose_b: Pose) -> TreeDistance {
    let mut evaluated = 0;
    let mut evaluate = |node: u32| {
        evaluated += 1;
        let hull = rounded::plain(a.node(node).hull.clone());
        let d = rounded::distance(&hull, &pose_a, b, &pose_b);
        PairAnswer {
            state: match d.contact {
                Contact::Separated => TreeState::Separated,
                Contact::Touching => TreeState::Touching,
                Contact::Penetrating => TreeState::Penetrating,
            },
            distance: d.distance,
            point_a: d.point_a,
            point_b: d.point_b,
            features: d.features,
        }
    };
    let mut heap = BinaryHeap::new();
    let push = |heap: &mut BinaryHeap<Waiting>, node: u32, answer: PairAnswer| {
        heap.push(Waiting {
            distance: answer.distance,
            inner: matches!(a.node(node).kind, NodeKind::Inner(_)),
            na: node,
            nb: 0,
            answer,
        });
    };
    let root = evaluate(HullTree::ROOT);
    push(&mut heap, HullTree::ROOT, root);
    while let Some(w) = heap.pop() {
        match a.node(w.na).kind {
            NodeKind::Leaf(piece) => {
                return TreeDistance {
                    state: w.answer.state,
                    distance: w.answer.distance,
                    point_a: w.answer.point_a,
                    point_b: w.answer.point_b,
                    pieces: (piece, 0),
                    features: w.answer.features,
                    node_pairs: evaluated,
                };
            }
            NodeKind::Inner(children) => {
                for child in children {
                    let answer = evaluate(child);
                    push(&mut heap, child, answer);
                }
            }
        }
    }
    unreachable!("the heap holds a leaf under every inner node it opens")
}

/// Whether a tree and a rounded body touch or overlap (depth-first, early exit).
pub fn collide_with_rounded(a: &HullTree, pose_a: Pose, b: &Rounded, pose_b: Pose) -> bool {
    let mut stack = vec![HullTree::ROOT];
    while let Some(node) = stack.pop() {
        let hull = rounded::plain(a.node(node).hull.clone());
        if !rounded::collide(&hull, &pose_a, b, &pose_b) {
            continue;
        }
        match a.node(node).kind {
            NodeKind::Leaf(_) => return true,
            NodeKind::Inner([l, r]) => stack.extend([r, l]),
        }
    }
    false
}
