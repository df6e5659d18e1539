//! The convex-hull tree of a non-convex body (Ehmann and Lin's SWIFT++ and the
//! conservative-advancement patent, ../shared/seeds/002_*): a binary hierarchy whose
//! leaves are the body's convex pieces and whose every inner node is the convex hull of
//! its children's vertices, so a node contains everything below it and the distance
//! between two nodes' hulls bounds the distance between any pieces below them from below.
//! Every node is a [`ConvexPolytope`] with its Voronoi regions: the closest-feature walk
//! runs at every level. Every node also has an oriented box around its hull (the OBB
//! tree), for the "may these collide during this step" filter (`exact::dynamic_obb`).
//!
//! Built top-down: a node's pieces are split in two at the median of their centroids
//! along the longest side of the centroids' box.

use std::sync::Arc;

use glam::DVec3;

use super::decompose::{self, Cache, DecomposeParams};
use super::obb::Obb;
use super::{ConvexPolytope, TriMesh};
use crate::{Error, Result};

/// A node of a [`HullTree`].
#[derive(Clone, Debug)]
pub struct HullNode {
    /// The hull of everything below this node.
    pub hull: Arc<ConvexPolytope>,
    /// A box around the hull (principal axes), for the dynamic filter.
    pub obb: Obb,
    /// A leaf's piece, or an inner node's two children.
    pub kind: NodeKind,
}

/// Leaf or inner node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    /// A piece (its index in [`HullTree::pieces`] order).
    Leaf(u32),
    /// Two children (node indices).
    Inner([u32; 2]),
}

/// A convex-hull tree: node 0 is the root.
#[derive(Clone, Debug)]
pub struct HullTree {
    nodes: Vec<HullNode>,
    /// The leaf node of each piece.
    leaf_of_piece: Vec<u32>,
}

impl HullTree {
    /// The tree over these convex pieces (at least one).
    pub fn new(pieces: Vec<ConvexPolytope>) -> Result<Self> {
        if pieces.is_empty() {
            return Err(Error::Geometry(
                "a hull tree needs at least one piece".into(),
            ));
        }
        let pieces: Vec<Arc<ConvexPolytope>> = pieces.into_iter().map(Arc::new).collect();
        let mut tree = HullTree {
            nodes: Vec::with_capacity(2 * pieces.len() - 1),
            leaf_of_piece: vec![0; pieces.len()],
        };
        let mut order: Vec<u32> = (0..pieces.len() as u32).collect();
        tree.build(&pieces, &mut order)?;
        Ok(tree)
    }

    /// The tree of a closed mesh's convex decomposition (from `cache` when it holds one;
    /// `progress` hears about a decomposition that has to run).
    pub fn decompose(
        mesh: &TriMesh,
        params: &DecomposeParams,
        cache: &Cache,
        progress: &mut dyn FnMut(&str),
    ) -> Result<Self> {
        Self::new(decompose::load(mesh, params, cache, progress)?.pieces)
    }

    /// A one-node tree: a convex body, so that convex–tree queries run as tree–tree.
    pub fn from_convex(piece: Arc<ConvexPolytope>) -> Self {
        HullTree {
            nodes: vec![HullNode {
                obb: Obb::fit(piece.vertices()),
                hull: piece,
                kind: NodeKind::Leaf(0),
            }],
            leaf_of_piece: vec![0],
        }
    }

    /// Builds the subtree over `ids` and returns its node index.
    fn build(&mut self, pieces: &[Arc<ConvexPolytope>], ids: &mut [u32]) -> Result<u32> {
        let index = self.nodes.len() as u32;
        if let [piece] = ids {
            self.leaf_of_piece[*piece as usize] = index;
            let hull = pieces[*piece as usize].clone();
            self.nodes.push(HullNode {
                obb: Obb::fit(hull.vertices()),
                hull,
                kind: NodeKind::Leaf(*piece),
            });
            return Ok(index);
        }
        let points: Vec<DVec3> = ids
            .iter()
            .flat_map(|&i| pieces[i as usize].vertices().iter().copied())
            .collect();
        let hull = Arc::new(ConvexPolytope::from_points(&points)?);
        self.nodes.push(HullNode {
            obb: Obb::fit(hull.vertices()),
            hull,
            kind: NodeKind::Inner([0, 0]),
        });
        let centroid = |i: &u32| pieces[*i as usize].centroid();
        let (lo, hi) = ids
            .iter()
            .fold((DVec3::INFINITY, DVec3::NEG_INFINITY), |(lo, hi), i| {
                (lo.min(centroid(i)), hi.max(centroid(i)))
            });
        let axis = (hi - lo).max_position();
        let mid = ids.len() / 2;
        ids.select_nth_unstable_by(mid, |x, y| {
            centroid(x)[axis]
                .total_cmp(&centroid(y)[axis])
                .then(x.cmp(y))
        });
        let (left, right) = ids.split_at_mut(mid);
        let l = self.build(pieces, left)?;
        let r = self.build(pieces, right)?;
        self.nodes[index as usize].kind = NodeKind::Inner([l, r]);
        Ok(index)
    }

    /// The root's index.
    pub const ROOT: u32 = 0;

    /// The tree of the same pieces scaled by `s` about the body origin (each piece's faces
    /// kept, the tree built again over them).
    pub fn scaled(&self, s: f64) -> Result<Self> {
        Self::new(
            self.pieces()
                .map(|p| p.scaled(s))
                .collect::<Result<Vec<_>>>()?,
        )
    }

    /// A node.
    pub fn node(&self, i: u32) -> &HullNode {
        &self.nodes[i as usize]
    }

    /// Number of nodes.
    pub fn num_nodes(&self) -> usize {
        self.nodes.len()
    }

    /// Number of pieces (leaves).
    pub fn num_pieces(&self) -> usize {
        self.leaf_of_piece.len()
    }

    /// A piece by index.
    pub fn piece(&self, p: u32) -> &Arc<ConvexPolytope> {
        &self.nodes[self.leaf_of_piece[p as usize] as usize].hull
    }

    /// The pieces in order.
    pub fn pieces(&self) -> impl Iterator<Item = &Arc<ConvexPolytope>> + '_ {
        (0..self.num_pieces() as u32).map(|p| self.piece(p))
    }

    /// The root's hull (the body's convex hull).
    pub fn hull(&self) -> &ConvexPolytope {
        &self.nodes[0].hull
    }

    /// Levels from the root to the deepest leaf (1 for a single piece).
    pub fn depth(&self) -> usize {
        fn down(t: &HullTree, i: u32) -> usize {
            match t.node(i).kind {
                NodeKind::Leaf(_) => 1,
                NodeKind::Inner([l, r]) => 1 + down(t, l).max(down(t, r)),
            }
        }
        down(self, Self::ROOT)
    }
}
