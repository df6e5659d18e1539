//! Non-convex bodies: convex decomposition, hull trees, tree–tree distance and collide.
//! Oracles: every piece pair by brute force (the exact separating-axis test, then
//! enumeration over feature pairs), parry3d-f64's distance on the same pieces as a
//! compound, parry3d-f64's trimesh distance on an L-shaped prism that decomposes exactly,
//! and the mesh itself for the decomposition's coverage and deviation.

mod common;

use std::path::Path;
use std::sync::Arc;

use glam::{DQuat, DVec3};
use parry3d_f64::query::PointQuery;
use parry3d_f64::shape::{Compound, SharedShape};
use proxima::bodies::Pose;
use proxima::exact::sat;
use proxima::exact::tree::{self, TreeCache, TreeState};
use proxima::geometry::decompose::{self, Cache, DecomposeParams, Origin};
use proxima::geometry::{ConvexPolytope, HullTree, TriMesh, brute, generators};
use proxima::rng::Rng;

/// Decompositions shared by the tests of this binary (the cache test uses its own folder).
fn shared_cache() -> Cache {
    Cache::At(Path::new(env!("CARGO_TARGET_TMPDIR")).join("hull-cache"))
}

fn tree_of(mesh: &TriMesh) -> HullTree {
    HullTree::decompose(
        mesh,
        &DecomposeParams::default(),
        &shared_cache(),
        &mut |_| {},
    )
    .expect("decomposes")
}

fn torus() -> TriMesh {
    generators::torus(1.0, 0.3, 32, 16).unwrap()
}

fn bumpy() -> TriMesh {
    generators::bumpy_sphere(1.0, 3, 0.3, 5.0).unwrap()
}

/// An L-shaped prism: the union of [0,2]×[0,1]×[0,1] and [0,1]×[1,2]×[0,1].
fn l_prism() -> TriMesh {
    common::prism(&common::L_OUTLINE, &common::L_CAP, 1.0)
}

/// A random pose around the origin: `spread` wide, any rotation.
fn random_pose(rng: &mut Rng, spread: f64) -> Pose {
    Pose::new(
        rng.point_in(DVec3::splat(-spread), DVec3::splat(spread)),
        rng.rotation(),
    )
}

/// The distance between two trees by brute force over every piece pair: the exact
/// separating-axis test, then enumeration.
fn brute_distance(a: &HullTree, pose_a: &Pose, b: &HullTree, pose_b: &Pose) -> f64 {
    let mut best = f64::INFINITY;
    for x in a.pieces() {
        for y in b.pieces() {
            let d = if sat::intersects(x, pose_a, y, pose_b) {
                0.0
            } else {
                brute::polytope_closest_pair(x, pose_a, y, pose_b).distance
            };
            best = best.min(d);
        }
    }
    best
}

fn compound(t: &HullTree) -> Compound {
    Compound::new(
        t.pieces()
            .map(|p| {
                (
                    parry3d_f64::math::Pose::IDENTITY,
                    SharedShape::new(common::to_parry(p)),
                )
            })
            .collect(),
    )
}

/// A tree answer is consistent: its points lie on the named pieces at the poses, their
/// distance is the answer.
fn check_answer(a: &HullTree, pose_a: &Pose, b: &HullTree, pose_b: &Pose, d: &tree::TreeDistance) {
    if d.state == TreeState::Penetrating {
        return;
    }
    let (pa, pb) = (a.piece(d.pieces.0), b.piece(d.pieces.1));
    let scale = 1.0 + pose_a.translation.length() + pose_b.translation.length();
    assert!(common::height(pa, pose_a, d.point_a).abs() < 1e-9 * scale);
    assert!(common::height(pb, pose_b, d.point_b).abs() < 1e-9 * scale);
    assert!((d.point_a.distance(d.point_b) - d.distance).abs() < 1e-12 * scale);
}

#[test]
fn tree_distance_is_the_closest_piece_pair() {
    let shapes = [
        ("torus", tree_of(&torus())),
        ("bumpy sphere", tree_of(&bumpy())),
        (
            "box",
            HullTree::from_convex(Arc::new(
                generators::cuboid(DVec3::new(0.6, 0.2, 0.4)).unwrap(),
            )),
        ),
    ];
    let mut rng = Rng::new(12);
    let (mut checked, mut overlapping) = (0, 0);
    for (na, a) in &shapes {
        for (nb, b) in &shapes {
            for _ in 0..12 {
                let pose_a = random_pose(&mut rng, 0.5);
                let pose_b = random_pose(&mut rng, 2.0);
                let d = tree::distance(a, pose_a, b, pose_b, &mut TreeCache::new());
                let truth = brute_distance(a, &pose_a, b, &pose_b);
                assert!(
                    (d.distance - truth).abs() <= 1e-12 * (1.0 + truth),
                    "{na} vs {nb}: tree {} ({:?}), brute {truth}",
                    d.distance,
                    d.state
                );
                check_answer(a, &pose_a, b, &pose_b, &d);
                let collides = tree::collide(a, pose_a, b, pose_b, &mut TreeCache::new());
                assert_eq!(collides.is_some(), truth == 0.0, "{na} vs {nb}: collide");
                checked += 1;
                overlapping += usize::from(truth == 0.0);
            }
        }
    }
    assert!(
        overlapping > 10 && overlapping < checked - 10,
        "{overlapping} of {checked}"
    );
}

/// parry3d-f64's distance on the same pieces as a compound (its BVH and GJK) as the peer,
/// on the real meshes too.
#[test]
fn tree_distance_agrees_with_parry_on_the_same_pieces() {
    let mut shapes = vec![
        ("torus", tree_of(&torus())),
        ("bumpy sphere", tree_of(&bumpy())),
    ];
    for name in ["cow.obj", "rocker-arm.obj"] {
        if let Some(m) = common::shared_mesh(name) {
            // Scaled to a size like the others.
            let scale = 2.0 / m.vertices.iter().map(|v| v.length()).fold(0.0, f64::max);
            let m =
                TriMesh::new(m.vertices.iter().map(|v| *v * scale).collect(), m.triangles).unwrap();
            shapes.push((name, tree_of(&m)));
        }
    }
    let mut rng = Rng::new(5);
    let (mut worst, mut pairs, mut node_pairs) = (0.0f64, 0, 0);
    for (na, a) in &shapes {
        let ca = compound(a);
        for (nb, b) in &shapes {
            let cb = compound(b);
            for _ in 0..40 {
                let pose_a = random_pose(&mut rng, 0.5);
                let pose_b = random_pose(&mut rng, 2.5);
                let d = tree::distance(a, pose_a, b, pose_b, &mut TreeCache::new());
                let peer = parry3d_f64::query::distance(
                    &common::parry_pose(&pose_a),
                    &ca,
                    &common::parry_pose(&pose_b),
                    &cb,
                )
                .unwrap()
                .distance;
                let err = (d.distance - peer).abs();
                assert!(
                    err < 1e-8,
                    "{na} vs {nb}: ours {} ({:?}), parry {peer}",
                    d.distance,
                    d.state
                );
                check_answer(a, &pose_a, b, &pose_b, &d);
                worst = worst.max(err);
                pairs += 1;
                node_pairs += d.node_pairs;
            }
        }
    }
    eprintln!(
        "{pairs} tree pairs: largest difference from parry {worst:e}, {:.1} node pairs per query",
        f64::from(node_pairs) / f64::from(pairs)
    );
}

/// Warm starts: a body sliding past another, each frame's query warm-started from the
/// last, answers as a cold query does.
#[test]
fn warm_started_queries_answer_as_cold_ones() {
    let a = tree_of(&torus());
    let b = tree_of(&bumpy());
    let mut cache = TreeCache::new();
    let spin = DQuat::from_axis_angle(DVec3::new(1.0, 2.0, 3.0).normalize(), 0.01);
    let mut pose_b = Pose::new(DVec3::new(-4.0, 0.3, 0.2), DQuat::IDENTITY);
    let (mut warm_pairs, mut cold_pairs, mut touched) = (0, 0, 0);
    for _ in 0..400 {
        pose_b = Pose::new(
            pose_b.translation + DVec3::new(0.02, 0.0, 0.0),
            spin * pose_b.rotation,
        );
        let warm = tree::distance(&a, Pose::default(), &b, pose_b, &mut cache);
        let cold = tree::distance(&a, Pose::default(), &b, pose_b, &mut TreeCache::new());
        assert!(
            (warm.distance - cold.distance).abs() < 1e-12,
            "{warm:?} vs {cold:?}"
        );
        warm_pairs += warm.node_pairs;
        cold_pairs += cold.node_pairs;
        touched += usize::from(warm.distance == 0.0);
    }
    assert!(
        touched > 50,
        "the path passes through the torus ({touched} frames)"
    );
    assert!(!cache.is_empty());
    eprintln!("node pairs over 400 frames: warm {warm_pairs}, cold {cold_pairs}");
}

/// Exact touches between non-convex bodies: an L prism resting on a box, and two L prisms
/// side by side, touch (distance exactly 0, collide true) without overlapping.
#[test]
fn l_prisms_touch_exactly() {
    let l = tree_of(&l_prism());
    let slab = HullTree::from_convex(Arc::new(
        generators::cuboid(DVec3::new(3.0, 3.0, 0.5)).unwrap(),
    ));
    let on_top = Pose::new(DVec3::new(0.0, 0.0, -0.5), DQuat::IDENTITY);
    let d = tree::distance(&l, Pose::default(), &slab, on_top, &mut TreeCache::new());
    assert_eq!((d.state, d.distance), (TreeState::Touching, 0.0), "{d:?}");
    assert!(tree::collide(&l, Pose::default(), &slab, on_top, &mut TreeCache::new()).is_some());
    // A second L turned half a turn about z nests into the notch: (1,1) corner to corner.
    let nested = Pose::new(
        DVec3::new(3.0, 3.0, 0.0),
        DQuat::from_rotation_z(std::f64::consts::PI),
    );
    let d = tree::distance(&l, Pose::default(), &l, nested, &mut TreeCache::new());
    assert_eq!(d.distance, 0.0, "{d:?}");
    assert_ne!(d.state, TreeState::Penetrating, "{d:?}");
    // Lifted by 1e-9 they are apart by exactly that.
    let lifted = Pose::new(
        on_top.translation - DVec3::new(0.0, 0.0, 1e-9),
        DQuat::IDENTITY,
    );
    let d = tree::distance(&l, Pose::default(), &slab, lifted, &mut TreeCache::new());
    assert_eq!(d.state, TreeState::Separated);
    assert!((d.distance - 1e-9).abs() < 1e-15, "{d:?}");
}

/// Two boxes meeting face to face along x = 1, as two components of one mesh (the way
/// collision proxies are modelled from convex parts): the same solid as [`l_prism`].
fn l_from_two_boxes() -> TriMesh {
    let mut vertices = Vec::new();
    let mut triangles = Vec::new();
    for (lo, hi) in [
        (DVec3::ZERO, DVec3::new(2.0, 1.0, 1.0)),
        (DVec3::new(0.0, 1.0, 0.0), DVec3::new(1.0, 2.0, 1.0)),
    ] {
        let centre = 0.5 * (lo + hi);
        let b = generators::cuboid(0.5 * (hi - lo)).unwrap();
        let base = vertices.len() as u32;
        vertices.extend(b.vertices().iter().map(|v| *v + centre));
        for f in 0..b.num_faces() {
            let ring: Vec<u32> = b.face_vertices(f).collect();
            for k in 1..ring.len() - 1 {
                triangles.push([base + ring[0], base + ring[k], base + ring[k + 1]]);
            }
        }
    }
    TriMesh::new(vertices, triangles).unwrap()
}

/// The distance from the L's tree to random probes around it (the notch included), with
/// parry3d-f64's trimesh distance to the L's surface: pairs where the probe is clear of
/// the solid.
fn l_distances(l: &HullTree) -> Vec<(f64, f64)> {
    let mesh = l_prism();
    let trimesh = parry3d_f64::shape::TriMesh::new(mesh.vertices, mesh.triangles).unwrap();
    let probe_poly = generators::cuboid(DVec3::new(0.2, 0.1, 0.15)).unwrap();
    let probe_parry = common::to_parry(&probe_poly);
    let probe = HullTree::from_convex(Arc::new(probe_poly));
    let mut rng = Rng::new(77);
    let mut out = Vec::new();
    for _ in 0..400 {
        let pose = Pose::new(
            rng.point_in(DVec3::new(-1.0, -1.0, -0.8), DVec3::new(3.0, 3.0, 1.8)),
            rng.rotation(),
        );
        let d = tree::distance(l, Pose::default(), &probe, pose, &mut TreeCache::new());
        let peer = parry3d_f64::query::distance(
            &parry3d_f64::math::Pose::IDENTITY,
            &trimesh,
            &common::parry_pose(&pose),
            &probe_parry,
        )
        .unwrap()
        .distance;
        if d.distance > 0.0 && peer > 0.0 {
            out.push((d.distance, peer));
        }
    }
    assert!(out.len() > 200, "{}", out.len());
    out
}

/// An L modelled from two boxes decomposes exactly (each convex component is a piece), so
/// its tree's distance to a probe equals parry3d-f64's trimesh distance to the L's
/// surface. The same L as one closed mesh goes through VHACD, whose cut lands a voxel or
/// two past the notch (measured: 2/63 of the width at resolution 64): its distances are
/// never more than that below the exact ones.
#[test]
fn l_prism_tree_equals_parry_trimesh_distance() {
    let exact = tree_of(&l_from_two_boxes());
    assert_eq!(exact.num_pieces(), 2);
    for (ours, peer) in l_distances(&exact) {
        assert!(
            (ours - peer).abs() < 1e-9,
            "ours {ours}, parry trimesh {peer}"
        );
    }
    let voxel = 2.0 / 63.0;
    let mut worst = 0.0f64;
    for (ours, peer) in l_distances(&tree_of(&l_prism())) {
        assert!(
            ours <= peer + 1e-9 && ours >= peer - 2.0 * voxel,
            "ours {ours}, parry {peer}"
        );
        worst = worst.max(peer - ours);
    }
    eprintln!("L prism through VHACD: distances at most {worst:.4} short of the exact ones");
}

/// The winding number of a closed mesh around `p` (1 inside, 0 outside): the triangles'
/// solid angles (Van Oosterom and Strackee) over 4π.
fn winding_number(mesh: &TriMesh, p: DVec3) -> f64 {
    let mut total = 0.0;
    for t in &mesh.triangles {
        let [a, b, c] = t.map(|i| mesh.vertices[i as usize] - p);
        let (la, lb, lc) = (a.length(), b.length(), c.length());
        let numerator = a.dot(b.cross(c));
        let denominator = la * lb * lc + a.dot(b) * lc + b.dot(c) * la + c.dot(a) * lb;
        total += 2.0 * numerator.atan2(denominator);
    }
    total / (4.0 * std::f64::consts::PI)
}

/// Distance from `p` to the union of the pieces (0 inside one).
fn distance_to_pieces(pieces: &[ConvexPolytope], p: DVec3) -> f64 {
    pieces
        .iter()
        .map(|piece| {
            let outside = (0..piece.num_faces())
                .any(|f| piece.face_normal(f).dot(p) - piece.face_offset(f) > 0.0);
            if outside {
                brute::closest_feature(piece, p).1
            } else {
                0.0
            }
        })
        .fold(f64::INFINITY, f64::min)
}

/// How a decomposition sits on its mesh.
struct Fit {
    pieces: usize,
    /// Largest distance of a mesh vertex from the pieces.
    uncovered: f64,
    /// Points of a grid over the mesh's box inside its solid that no piece holds.
    cracks: Vec<DVec3>,
    /// The simplification's reported shortfall.
    shortfall: f64,
    /// The deviation the decomposition reports (refinement's bound).
    reported: f64,
    /// Largest distance from the mesh of a point of the pieces' surfaces outside the
    /// mesh's solid (by the winding number), over a dense sampling of every face.
    deviation: f64,
    /// The mesh's box diagonal.
    size: f64,
}

/// Points over the polygon `ring`, none farther than `spacing` from the nearest: its
/// fan's triangles each cut into n² similar ones (their centroids and corners).
fn dense_samples(ring: &[DVec3], spacing: f64, out: &mut Vec<DVec3>) {
    for k in 1..ring.len() - 1 {
        let [a, b, c] = [ring[0], ring[k], ring[k + 1]];
        let longest = a.distance(b).max(b.distance(c)).max(c.distance(a));
        let n = (longest / spacing).ceil().max(1.0) as usize;
        let at = |i: f64, j: f64| a + (b - a) * (i / n as f64) + (c - a) * (j / n as f64);
        for i in 0..n {
            for j in 0..n - i {
                let (x, y) = (i as f64, j as f64);
                out.push(at(x, y));
                out.push(at(x + 1.0 / 3.0, y + 1.0 / 3.0));
                if i + j + 1 < n {
                    out.push(at(x + 2.0 / 3.0, y + 2.0 / 3.0));
                }
            }
        }
        out.push(b);
        out.push(c);
    }
}

fn fit(mesh: &TriMesh, params: &DecomposeParams) -> Fit {
    let d = decompose::load(mesh, params, &Cache::Off, &mut |_| {}).unwrap();
    let Origin::Computed {
        simplify_deviation,
        deviation: reported,
        ..
    } = d.origin
    else {
        panic!("no cache was given")
    };
    let (lo, hi) = mesh
        .vertices
        .iter()
        .fold((DVec3::INFINITY, DVec3::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(*v), hi.max(*v))
        });
    let size = (hi - lo).length();
    assert!(
        d.pieces
            .iter()
            .all(|p| p.num_vertices() <= params.max_piece_vertices)
    );
    let uncovered = mesh
        .vertices
        .iter()
        .map(|&v| distance_to_pieces(&d.pieces, v))
        .fold(0.0, f64::max);
    // Every face sampled at a quarter of the tolerance: a stretch of surface straying
    // past the tolerance is found unless it is narrower than that.
    let spacing = 0.25 * params.max_deviation * size;
    let mut samples = Vec::new();
    for p in &d.pieces {
        for f in 0..p.num_faces() {
            let ring: Vec<DVec3> = p.face_vertices(f).map(|v| p.vertex(v)).collect();
            dense_samples(&ring, spacing, &mut samples);
        }
    }
    // Distances and sides by parry3d-f64's trimesh (its pseudo-normals; the mesh wound
    // outward), the farthest sample outside confirmed by the winding number: the largest
    // deviation sampled.
    let mut outward = mesh.clone();
    if common::enclosed_volume(&outward) < 0.0 {
        outward.triangles.iter_mut().for_each(|t| t.swap(1, 2));
    }
    let trimesh = parry3d_f64::shape::TriMesh::with_flags(
        outward.vertices,
        outward.triangles,
        parry3d_f64::shape::TriMeshFlags::ORIENTED,
    )
    .unwrap();
    let mut far: Vec<(f64, DVec3)> = samples
        .into_iter()
        .filter_map(|x| {
            let p = trimesh.project_local_point(x, true);
            (!p.is_inside).then(|| (p.point.distance(x), x))
        })
        .collect();
    far.sort_unstable_by(|a, b| b.0.total_cmp(&a.0));
    let deviation = far
        .iter()
        .find(|(_, x)| winding_number(mesh, *x) < 0.5)
        .map_or(0.0, |f| f.0);
    // The solid covered: a 24³ grid over the box (at the cells' centres, off a block
    // model's faces), each point inside the solid held by a piece (inside by parry3d-f64's
    // side and the winding number both: the cow's pinched and crossing parts mislead
    // pseudo-normals at a few points).
    let n = 24;
    let step = (hi - lo) / f64::from(n);
    let held = |x: DVec3| {
        d.pieces.iter().any(|p| {
            (0..p.num_faces()).all(|f| p.face_normal(f).dot(x) <= p.face_offset(f) + 1e-12 * size)
        })
    };
    let mut cracks = Vec::new();
    for i in 0..n {
        for j in 0..n {
            for k in 0..n {
                let x = lo + step * (DVec3::new(i.into(), j.into(), k.into()) + 0.5);
                if trimesh.project_local_point(x, true).is_inside
                    && !held(x)
                    && winding_number(mesh, x) > 0.5
                {
                    cracks.push(x);
                }
            }
        }
    }
    Fit {
        pieces: d.pieces.len(),
        uncovered,
        cracks,
        shortfall: simplify_deviation,
        reported,
        deviation,
        size,
    }
}

/// A square frame of blocks around a square hole, and a U: pieces that bridge the hole or
/// the gap between the arms stray from the mesh in the middle of a face, where no corner,
/// edge midpoint or face centroid of the piece lies.
fn frame_and_u() -> [(&'static str, TriMesh); 2] {
    let frame: Vec<[i32; 3]> = (0..3)
        .flat_map(|x| (0..3).map(move |y| [x, y, 0]))
        .filter(|&c| c != [1, 1, 0])
        .collect();
    let u: Vec<[i32; 3]> = (0..3)
        .flat_map(|x| (0..3).map(move |y| [x, y, 0]))
        .filter(|&[x, y, _]| x != 1 || y == 0)
        .collect();
    [("frame", common::blocks(&frame)), ("U", common::blocks(&u))]
}

/// The decomposition covers the mesh (every vertex inside a piece: a simplified piece is
/// scaled to hold the vertices it dropped; and every point of a grid inside the solid)
/// and hugs it: the pieces' surfaces stay within
/// the length tolerance (`max_deviation` of the mesh's box diagonal) of it, sampled
/// densely over every face, and within the bound refinement reports, at the default
/// concavity and a finer one, and at a tolerance of 1% (VHACD alone leaves the bumpy
/// sphere's narrow pits and the gaps between the cow's legs bridged by 4.5%; the
/// refinement splits the pieces that stray), on blocks built into a frame and a U too.
#[test]
fn decomposition_covers_and_hugs_the_mesh() {
    let mut meshes = vec![("torus", torus()), ("bumpy sphere", bumpy())];
    meshes.extend(frame_and_u());
    // The frame at a thousandth: its corners are no longer binary fractions, and a split
    // there dropped the triangles lying in a piece's face planes (a crack 0.2 of a block
    // wide, inside the solid and open at its side).
    let [(_, frame), _] = frame_and_u();
    meshes.push((
        "frame at 1e-3",
        TriMesh::new(
            frame.vertices.iter().map(|v| *v * 1e-3).collect(),
            frame.triangles,
        )
        .unwrap(),
    ));
    if let Some(m) = common::shared_mesh("cow.obj") {
        meshes.push(("cow", m));
    }
    let fine = DecomposeParams {
        concavity: 0.002,
        ..DecomposeParams::default()
    };
    let tight = DecomposeParams {
        max_deviation: 0.01,
        ..DecomposeParams::default()
    };
    for (name, mesh) in &meshes {
        for params in [DecomposeParams::default(), fine, tight] {
            let f = fit(mesh, &params);
            eprintln!(
                "{name}, concavity {}, max deviation {}: {} pieces, vertices covered within {:.2e} (shortfall {:.2e}), surface within {:.3e} of the mesh ({:.2}% of its size {:.2}; reported {:.2}%)",
                params.concavity,
                params.max_deviation,
                f.pieces,
                f.uncovered,
                f.shortfall,
                f.deviation,
                100.0 * f.deviation / f.size,
                f.size,
                100.0 * f.reported / f.size,
            );
            assert!(
                f.uncovered <= 1e-12 * f.size,
                "{name}: a vertex {} from the pieces",
                f.uncovered
            );
            assert!(
                f.cracks.is_empty(),
                "{name}: {} points of the solid in no piece, the first {}",
                f.cracks.len(),
                f.cracks[0]
            );
            let allowed = params.max_deviation * f.size * (1.0 + 1e-9);
            assert!(
                f.deviation <= allowed && f.deviation <= f.reported * (1.0 + 1e-9),
                "{name}: deviation {} over {} of the size {} (reported {})",
                f.deviation,
                params.max_deviation,
                f.size,
                f.reported
            );
        }
    }
}

/// Whether `(x, y)` lies inside the polygon `outline` (crossings of a ray along +x).
fn in_outline(outline: &[[f64; 2]], x: f64, y: f64) -> bool {
    let mut inside = false;
    for (i, &[ax, ay]) in outline.iter().enumerate() {
        let [bx, by] = outline[(i + 1) % outline.len()];
        if (ay > y) != (by > y) && x < ax + (y - ay) * (bx - ax) / (by - ay) {
            inside = !inside;
        }
    }
    inside
}

/// Thin plates cut as an L and a U (one non-convex mesh each, 2^-7 to 2^-30 thick, their
/// outlines 2 and 3 across) are covered whole: every point of the plate, on a grid over its outline at a
/// quarter, half and three quarters of its thickness, lies in a piece, and a crate resting
/// on the plate's top face touches it. The engine's hulls of its parts drop points
/// within its own tolerance of a hull's face: the plate's top corners were dropped from
/// a part's hull as lying on its bottom face, the pieces under an L 1e-3 thick reached
/// half its thickness at places, and at 1e-6 a whole arm was in no piece.
#[test]
fn thin_plates_are_covered_whole() {
    for (name, outline, cap) in [
        ("L", &common::L_OUTLINE[..], &common::L_CAP[..]),
        ("U", &common::U_OUTLINE[..], &common::U_CAP[..]),
    ] {
        // Powers of two, so that a crate on the top face touches it exactly.
        for thickness in [-7, -10, -13, -20, -30].map(|e| 2f64.powi(e)) {
            let mesh = common::prism(outline, cap, thickness);
            let d = decompose::load(&mesh, &DecomposeParams::default(), &Cache::Off, &mut |_| {})
                .unwrap_or_else(|e| panic!("{name} {thickness}: {e}"));
            let held = |x: DVec3| {
                d.pieces.iter().any(|p| {
                    (0..p.num_faces()).all(|f| p.face_normal(f).dot(x) <= p.face_offset(f))
                })
            };
            let n = 30;
            let (mut points, mut cracks) = (0, Vec::new());
            for i in 0..n {
                for j in 0..n {
                    let (x, y) = (
                        3.0 * (f64::from(i) + 0.5) / f64::from(n),
                        2.0 * (f64::from(j) + 0.5) / f64::from(n),
                    );
                    if !in_outline(outline, x, y) {
                        continue;
                    }
                    for k in [0.25, 0.5, 0.75] {
                        points += 1;
                        let p = DVec3::new(x, y, k * thickness);
                        if !held(p) {
                            cracks.push(p);
                        }
                    }
                }
            }
            assert!(
                cracks.is_empty(),
                "{name} {thickness} thick, {} pieces: {} of {points} points of the plate in \
                 no piece, the first {}",
                d.pieces.len(),
                cracks.len(),
                cracks[0]
            );
            // A crate on the top face of the first arm, and one sunk half the plate's
            // thickness into it.
            let tree = HullTree::new(d.pieces).unwrap();
            let crate_ =
                HullTree::from_convex(Arc::new(generators::cuboid(DVec3::splat(0.0625)).unwrap()));
            for sunk in [0.0, 0.5 * thickness] {
                let pose = Pose::new(
                    DVec3::new(0.5, 0.5, thickness + 0.0625 - sunk),
                    DQuat::IDENTITY,
                );
                let d =
                    tree::distance(&tree, Pose::default(), &crate_, pose, &mut TreeCache::new());
                assert_eq!(
                    d.distance, 0.0,
                    "{name} {thickness} thick, crate sunk {sunk}: {d:?}"
                );
                assert!(
                    tree::collide(&tree, Pose::default(), &crate_, pose, &mut TreeCache::new())
                        .is_some(),
                    "{name} {thickness} thick, crate sunk {sunk}"
                );
            }
        }
    }
}

/// The cache: a second load reads the same pieces back; a corrupt file is recomputed, not
/// trusted; `Off` never writes.
#[test]
fn decompositions_are_cached_and_checked() {
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cache-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let cache = Cache::At(dir.clone());
    let mesh = torus();
    let params = DecomposeParams::default();
    let mut heard = Vec::new();
    let first = decompose::load(&mesh, &params, &cache, &mut |l| heard.push(l.to_owned())).unwrap();
    assert!(matches!(first.origin, Origin::Computed { .. }));
    assert_eq!(heard.len(), 2, "{heard:?}");
    let second = decompose::load(&mesh, &params, &cache, &mut |_| {
        panic!("no progress on a hit")
    })
    .unwrap();
    let Origin::Cached(file) = &second.origin else {
        panic!("{:?}", second.origin)
    };
    assert_eq!(first.pieces.len(), second.pieces.len());
    for (x, y) in first.pieces.iter().zip(&second.pieces) {
        assert_eq!(x.vertices(), y.vertices());
    }
    // Other parameters are another entry.
    let coarse = DecomposeParams {
        resolution: 32,
        ..params
    };
    let third = decompose::load(&mesh, &coarse, &cache, &mut |_| {}).unwrap();
    assert!(matches!(third.origin, Origin::Computed { .. }));
    // A flipped byte fails the checksum: recomputed and rewritten.
    let mut bytes = std::fs::read(file).unwrap();
    let k = bytes.len() / 2;
    bytes[k] ^= 0x40;
    std::fs::write(file, &bytes).unwrap();
    let again = decompose::load(&mesh, &params, &cache, &mut |_| {}).unwrap();
    assert!(matches!(again.origin, Origin::Computed { .. }));
    assert!(matches!(
        decompose::load(&mesh, &params, &cache, &mut |_| {})
            .unwrap()
            .origin,
        Origin::Cached(_)
    ));
    // A truncated file too.
    std::fs::write(file, &bytes[..k]).unwrap();
    assert!(matches!(
        decompose::load(&mesh, &params, &cache, &mut |_| {})
            .unwrap()
            .origin,
        Origin::Computed { .. }
    ));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A closed mesh with small holes cut into it (a triangle, and the fans about a few
/// vertices: holes of 3 and of 6 to 8 edges) has them found and filled, closed and
/// consistently wound, enclosing the intact mesh's volume less the caps' difference, and
/// decomposes into pieces that hold every vertex of the intact mesh (within the
/// decomposition's deviation); a hole larger than a quarter of the mesh is left open.
#[test]
fn small_holes_are_filled_and_large_ones_named() {
    let volume = common::enclosed_volume;
    for intact in [torus(), bumpy()] {
        let mut holed = intact.clone();
        holed.triangles.remove(0);
        for v in [72u32, 232, 392] {
            holed.triangles.retain(|t| !t.contains(&v));
        }
        let holes = holed.holes().unwrap();
        let mut sizes: Vec<usize> = holes.iter().map(Vec::len).collect();
        sizes.sort_unstable();
        assert_eq!(sizes.len(), 4, "{sizes:?}");
        assert!(
            sizes[0] == 3 && sizes[1..].iter().all(|&n| (6..=8).contains(&n)),
            "{sizes:?}"
        );
        let (filled, line) = decompose::fill_small_holes(&holed);
        assert!(line.unwrap().starts_with("filled 4 holes"));
        let topo = filled.topology();
        assert_eq!((topo.boundary_edges, topo.repeated_directed_edges), (0, 0));
        // A fan about a hole's middle differs from the fan about the vertex cut away by a
        // sliver: a little of the volume.
        let (v0, v1) = (volume(&intact), volume(&filled));
        assert!(v1 > 0.0 && (v1 - v0).abs() < 0.01 * v0, "{v0} {v1}");
        let mut lines = Vec::new();
        let d = decompose::load(&holed, &DecomposeParams::default(), &Cache::Off, &mut |l| {
            lines.push(l.to_owned());
        })
        .unwrap();
        assert!(lines[0].starts_with("filled 4 holes"), "{lines:?}");
        // Every vertex the holed mesh kept is covered, as for any mesh; those cut away
        // lie within the decomposition's deviation of the pieces.
        let (lo, hi) = intact
            .vertices
            .iter()
            .fold((DVec3::INFINITY, DVec3::NEG_INFINITY), |(lo, hi), &p| {
                (lo.min(p), hi.max(p))
            });
        let size = (hi - lo).length();
        let kept: std::collections::HashSet<u32> =
            holed.triangles.iter().flatten().copied().collect();
        for (i, &p) in intact.vertices.iter().enumerate() {
            let outside = d
                .pieces
                .iter()
                .map(|piece| common::height(piece, &Pose::IDENTITY, p))
                .fold(f64::MAX, f64::min);
            let allowed = if kept.contains(&(i as u32)) {
                1e-12 * size
            } else {
                DecomposeParams::default().max_deviation * size
            };
            assert!(
                outside <= allowed,
                "vertex {i} {outside} outside every piece"
            );
        }
    }
    // A hole larger than a quarter of the mesh stays open: the error names it.
    let mut bowl = bumpy();
    bowl.triangles
        .retain(|t| t.iter().map(|&v| bowl.vertices[v as usize].z).sum::<f64>() < 1.5);
    let (same, line) = decompose::fill_small_holes(&bowl);
    assert!(line.is_none() && same.triangles.len() == bowl.triangles.len());
    let e = decompose::load(&bowl, &DecomposeParams::default(), &Cache::Off, &mut |_| {})
        .map(|d| d.pieces.len())
        .unwrap_err()
        .to_string();
    assert!(e.contains("1 hole, the largest"), "{e}");
}

/// Bad input: named errors, no panic.
#[test]
fn bad_meshes_and_parameters_are_named_errors() {
    let params = DecomposeParams::default();
    let error = |m: &TriMesh, p: &DecomposeParams| {
        decompose::load(m, p, &Cache::Off, &mut |_| {})
            .map(|d| d.pieces.len())
            .unwrap_err()
            .to_string()
    };
    // Empty: named as such (it read "no piece with volume (is the mesh flat?)").
    for mesh in [
        TriMesh::new(vec![], vec![]).unwrap(),
        TriMesh::new(vec![DVec3::ZERO, DVec3::X, DVec3::Y], vec![]).unwrap(),
    ] {
        let e = error(&mesh, &params);
        assert!(e.contains("the mesh has no triangles"), "{e}");
    }
    // Open: a torus with the top of its tube cut away, two rims as large as the torus
    // (small holes are filled: see `small_holes_are_filled_and_large_ones_named`).
    let mut open = torus();
    open.triangles
        .retain(|t| t.iter().map(|&v| open.vertices[v as usize].z).sum::<f64>() < 0.0);
    let e = error(&open, &params);
    assert!(
        e.contains("open (64 boundary edges, 2 holes, the largest 0.9"),
        "{e}"
    );
    // Open where no hole can be followed: a torus with a triangle removed and one of its
    // neighbours wound the wrong way.
    let mut tangled = torus();
    tangled.triangles.pop();
    tangled.triangles[3].swap(0, 1);
    let e = error(&tangled, &params);
    assert!(e.contains("not loops a filled hole could follow"), "{e}");
    // Closed, one triangle wound the wrong way: named as such, not as open (its edges
    // each have a triangle on both sides).
    let mut flipped = torus();
    flipped.triangles[0].swap(1, 2);
    assert_eq!(flipped.topology().boundary_edges, 0);
    assert!(error(&flipped, &params).contains("wound the wrong way"));
    // Non-manifold: a triangle repeated.
    let mut twice = torus();
    twice.triangles.push(twice.triangles[0]);
    assert!(error(&twice, &params).contains("2-manifold"));
    // Flat: a closed, double-sided square.
    let flat = TriMesh::new(
        vec![DVec3::ZERO, DVec3::X, DVec3::new(1.0, 1.0, 0.0), DVec3::Y],
        vec![[0, 1, 2], [0, 2, 3], [1, 0, 3], [1, 3, 2]],
    )
    .unwrap();
    let flat_error = error(&flat, &params);
    assert!(
        flat_error.contains("no piece with volume") || flat_error.contains("failed"),
        "{flat_error}"
    );
    for bad in [
        DecomposeParams {
            resolution: 4,
            ..params
        },
        DecomposeParams {
            concavity: f64::NAN,
            ..params
        },
        DecomposeParams {
            concavity: 0.0,
            ..params
        },
        DecomposeParams {
            max_piece_vertices: 3,
            ..params
        },
        DecomposeParams {
            max_deviation: 0.0,
            ..params
        },
        DecomposeParams {
            max_deviation: f64::INFINITY,
            ..params
        },
    ] {
        assert!(error(&torus(), &bad).contains("decomposition parameters"));
    }
    let huge = TriMesh::new(
        vec![DVec3::ZERO],
        vec![[0, 0, 0]; decompose::MAX_TRIANGLES + 1],
    )
    .unwrap();
    assert!(error(&huge, &params).contains("limit"));
    // The open meshes of ../shared/meshes are named as open.
    for name in ["teapot.obj", "suzanne.obj"] {
        if let Some(m) = common::shared_mesh(name) {
            assert!(error(&m, &params).contains("open"), "{name}");
        }
    }
}

/// The hulls of a finely tessellated torus's tree (pieces cut from 10,000 triangles; their
/// cut corners computed more than once): the walk between every pair of nodes over a
/// 200-frame sequence never gives up (near-duplicate corners are welded by the hull).
#[test]
fn walks_between_fine_tree_nodes_never_fail() {
    let t = tree_of(&generators::torus(1.0, 0.3, 100, 50).unwrap());
    let mut walks = 0;
    for k in 0..200 {
        let s = f64::from(k) * 0.02;
        let pa = Pose::new(DVec3::ZERO, DQuat::from_rotation_z(0.3 * s));
        let pb = Pose::new(
            DVec3::new(1.0 + 1.6 * s.cos(), 0.2, 1.6 * s.sin()),
            DQuat::from_rotation_x(0.9 * s) * DQuat::from_rotation_y(0.4 * s),
        );
        for i in 0..t.num_nodes() as u32 {
            for j in 0..t.num_nodes() as u32 {
                let w = proxima::exact::walk::walk(&proxima::exact::walk::WalkInput::new(
                    &t.node(i).hull,
                    pa,
                    &t.node(j).hull,
                    pb,
                ));
                assert!(
                    !matches!(w.state, proxima::exact::walk::WalkState::Failed(_)),
                    "nodes {i}, {j} at frame {k}: {w:?}"
                );
                walks += 1;
            }
        }
    }
    assert!(walks > 50_000);
}

/// A tree against spheres and capsules: the tree's descent equals the least distance over
/// every piece (each piece against the body by `exact::rounded`), and collide agrees.
#[test]
fn tree_against_rounded_bodies() {
    use proxima::exact::rounded;
    use proxima::geometry::rounded::Rounded;
    let t = tree_of(&torus());
    let bodies = [
        Rounded::sphere(0.3).unwrap(),
        Rounded::sphere(0.0).unwrap(),
        Rounded::capsule(0.8, 0.2).unwrap(),
    ];
    let mut rng = Rng::new(13);
    let (mut hits, mut misses) = (0, 0);
    for body in &bodies {
        for _ in 0..150 {
            let pose_a = random_pose(&mut rng, 0.3);
            let pose_b = random_pose(&mut rng, 1.3);
            let d = tree::distance_to_rounded(&t, pose_a, body, pose_b);
            let truth = t
                .pieces()
                .map(|p| {
                    rounded::distance(&rounded::plain(p.clone()), &pose_a, body, &pose_b).distance
                })
                .fold(f64::INFINITY, f64::min);
            assert!(
                (d.distance - truth).abs() <= 1e-12 * (1.0 + truth),
                "{d:?} vs {truth}"
            );
            let hit = tree::collide_with_rounded(&t, pose_a, body, pose_b);
            assert_eq!(hit, truth == 0.0);
            hits += usize::from(hit);
            misses += usize::from(!hit);
        }
    }
    assert!(hits > 50 && misses > 50, "{hits} / {misses}");
}
