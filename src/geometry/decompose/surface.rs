//! A closed mesh's triangles in a bounding-volume hierarchy, for the queries a
//! decomposition makes of its solid by the thousand: inside or not (ray parity), in the
//! closed solid (on the mesh too), the nearest mesh point, and the triangles in a box.

use glam::DVec3;

use crate::geometry::TriMesh;
use crate::geometry::closest::closest_on_triangle;

/// The mesh's triangles in a bounding-volume hierarchy (median splits, a few triangles a
/// leaf).
pub(super) struct Surface<'a> {
    mesh: &'a TriMesh,
    /// Within this of a plane is on it, and within this of the mesh is in the solid: the
    /// rounding of the planes and points a split computes (1e-10 of the mesh's size, far
    /// above it). A block model's triangles lie in its pieces' face planes, and its pieces'
    /// corners on its faces: taken by the rounding as outside, a split dropped them, and
    /// its halves left a crack in the solid that no piece covered.
    on: f64,
    /// Triangle indices in leaf order.
    order: Vec<u32>,
    nodes: Vec<Node>,
}

/// A node: its box, and either two children or a range of `order`.
struct Node {
    lo: DVec3,
    hi: DVec3,
    /// Children (`Inner`) or the leaf's range in `order`.
    kind: Kind,
}

enum Kind {
    Inner(u32, u32),
    Leaf(u32, u32),
}

/// Triangles a leaf holds at most.
const LEAF: usize = 4;

impl<'a> Surface<'a> {
    pub(super) fn new(mesh: &'a TriMesh) -> Self {
        let (lo, hi) = mesh
            .vertices
            .iter()
            .fold((DVec3::INFINITY, DVec3::NEG_INFINITY), |(lo, hi), v| {
                (lo.min(*v), hi.max(*v))
            });
        let mut surface = Surface {
            mesh,
            on: 1e-10 * (hi - lo).length(),
            order: (0..mesh.triangles.len() as u32).collect(),
            nodes: Vec::new(),
        };
        if !surface.order.is_empty() {
            surface.build(0, surface.order.len());
        }
        surface
    }

    /// Builds the node over `order[from..to]`, returns its index.
    fn build(&mut self, from: usize, to: usize) -> u32 {
        let boxed = |s: &Self, i: u32| {
            let [a, b, c] = s.triangle(i);
            (a.min(b).min(c), a.max(b).max(c))
        };
        let (mut lo, mut hi) = (DVec3::INFINITY, DVec3::NEG_INFINITY);
        for &i in &self.order[from..to] {
            let (l, h) = boxed(self, i);
            (lo, hi) = (lo.min(l), hi.max(h));
        }
        let index = self.nodes.len() as u32;
        self.nodes.push(Node {
            lo,
            hi,
            kind: Kind::Leaf(from as u32, to as u32),
        });
        if to - from > LEAF {
            let axis = (hi - lo).max_position();
            let mid = (from + to) / 2;
            let mesh = self.mesh;
            let centre = |i: &u32| {
                let t = mesh.triangles[*i as usize];
                t.iter()
                    .map(|&v| mesh.vertices[v as usize][axis])
                    .sum::<f64>()
            };
            self.order[from..to]
                .select_nth_unstable_by(mid - from, |x, y| centre(x).total_cmp(&centre(y)));
            let left = self.build(from, mid);
            let right = self.build(mid, to);
            self.nodes[index as usize].kind = Kind::Inner(left, right);
        }
        index
    }

    pub(super) fn triangle(&self, i: u32) -> [DVec3; 3] {
        self.mesh.triangles[i as usize].map(|v| self.mesh.vertices[v as usize])
    }

    /// Calls `visit` with every triangle in a node `enter` accepts (a node's box).
    pub(super) fn each(
        &self,
        enter: &mut dyn FnMut(DVec3, DVec3) -> bool,
        visit: &mut dyn FnMut(u32),
    ) {
        if self.nodes.is_empty() {
            return;
        }
        let mut stack = vec![0u32];
        while let Some(n) = stack.pop() {
            let node = &self.nodes[n as usize];
            if !enter(node.lo, node.hi) {
                continue;
            }
            match node.kind {
                Kind::Inner(l, r) => stack.extend([l, r]),
                Kind::Leaf(from, to) => {
                    for &i in &self.order[from as usize..to as usize] {
                        visit(i);
                    }
                }
            }
        }
    }

    /// Whether `p` lies inside the solid: the parity of crossings, by majority of three
    /// rays in unrelated directions.
    pub(super) fn inside(&self, p: DVec3) -> bool {
        const RAYS: [DVec3; 3] = [
            DVec3::new(0.573_517_2, 0.577_350_3, 0.581_159_1),
            DVec3::new(-0.701_3, 0.412_9, 0.581_7),
            DVec3::new(0.123_456_7, -0.890_123_4, 0.438_271_6),
        ];
        let odd = |dir: DVec3| {
            let mut hits = 0usize;
            self.each(&mut |lo, hi| ray_box(p, dir, (lo, hi)), &mut |i| {
                hits += usize::from(ray_hits(p, dir, self.triangle(i)));
            });
            hits % 2 == 1
        };
        // Two rays that agree are the majority: the third is cast only to break a tie.
        let first = odd(RAYS[0]);
        if odd(RAYS[1]) == first {
            return first;
        }
        odd(RAYS[2])
    }

    /// Within this of a plane is on it, and within this of the mesh is in the solid (see
    /// the field).
    pub(super) fn on(&self) -> f64 {
        self.on
    }

    /// Whether `p` lies in the closed solid: inside, or on the mesh (within [`Self::on`]
    /// of it, where ray parity may go either way).
    pub(super) fn in_solid(&self, p: DVec3) -> bool {
        self.nearest(p).distance(p) <= self.on || self.inside(p)
    }

    /// The point of the mesh nearest `p`.
    pub(super) fn nearest(&self, p: DVec3) -> DVec3 {
        let mut best = (f64::INFINITY, p);
        if self.nodes.is_empty() {
            return p;
        }
        // Depth first, the nearer child first, boxes no nearer than the best skipped.
        let box_distance = |n: u32| {
            let node = &self.nodes[n as usize];
            (p - p.clamp(node.lo, node.hi)).length_squared()
        };
        let mut stack = vec![(0.0, 0u32)];
        while let Some((d, n)) = stack.pop() {
            if d >= best.0 {
                continue;
            }
            match self.nodes[n as usize].kind {
                Kind::Inner(l, r) => {
                    let (dl, dr) = (box_distance(l), box_distance(r));
                    if dl < dr {
                        stack.extend([(dr, r), (dl, l)]);
                    } else {
                        stack.extend([(dl, l), (dr, r)]);
                    }
                }
                Kind::Leaf(from, to) => {
                    for &i in &self.order[from as usize..to as usize] {
                        let [a, b, c] = self.triangle(i);
                        let q = closest_on_triangle(p, a, b, c);
                        let d = (p - q).length_squared();
                        if d < best.0 {
                            best = (d, q);
                        }
                    }
                }
            }
        }
        best.1
    }
}

/// Whether the ray from `p` along `dir` meets the box.
fn ray_box(p: DVec3, dir: DVec3, (lo, hi): (DVec3, DVec3)) -> bool {
    let inv = dir.recip();
    let (t0, t1) = ((lo - p) * inv, (hi - p) * inv);
    let (near, far) = (t0.min(t1).max_element(), t0.max(t1).min_element());
    far >= near.max(0.0)
}

/// Whether the ray from `p` along `dir` crosses the triangle (Möller–Trumbore).
fn ray_hits(p: DVec3, dir: DVec3, [a, b, c]: [DVec3; 3]) -> bool {
    let (e1, e2) = (b - a, c - a);
    let h = dir.cross(e2);
    let det = e1.dot(h);
    if det == 0.0 {
        return false;
    }
    let s = p - a;
    let u = s.dot(h) / det;
    if !(0.0..=1.0).contains(&u) {
        return false;
    }
    let q = s.cross(e1);
    let v = dir.dot(q) / det;
    if v < 0.0 || u + v > 1.0 {
        return false;
    }
    e2.dot(q) / det > 0.0
}
