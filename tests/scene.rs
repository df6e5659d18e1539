//! Scene files: the default scene, resizing, OBJ shapes, determinism, and errors that name
//! the file, the line and the field.

mod common;

use std::collections::BTreeSet;
use std::path::Path;

use glam::{DVec3, Vec3};
use parry3d_f64::shape::{Ball, Segment, SharedShape};
use proxima::Error;
use proxima::geometry::rounded::Core;
use proxima::kinematic::KinematicCrowd;
use proxima::pipeline::DeviceChoice;
use proxima::scene::Scene;
use proxima::shape::ShapeGeometry;
use proxima::world::World;

fn parse(text: &str) -> Result<Scene, Error> {
    Scene::parse(Path::new("test.toml"), Path::new("."), text)
}

fn expect_error(text: &str, needles: &[&str]) {
    match parse(text) {
        Err(e @ Error::Scene { .. }) => {
            let m = e.to_string();
            assert!(m.contains("test.toml"), "`{m}` does not name the file");
            for n in needles {
                assert!(m.contains(n), "`{m}` does not say `{n}`");
            }
        }
        other => panic!(
            "expected a scene error saying {needles:?}, got {:?}",
            other.map(|s| s.crowd.len())
        ),
    }
}

const ONE_GROUP: &str = "seed = 3\n\
[[group]]\n\
shape = { box = [0.5, 0.5, 0.5] }\n\
count = 100\n\
scale = [1.0, 2.0]\n\
scale_variants = 3\n\
region = { min = [-5, -5, -5], max = [5, 5, 5] }\n\
speed = [0.0, 1.0]\n";

#[test]
fn the_default_scene_loads_with_sound_bounds() {
    let scene = Scene::default_scene(None).unwrap();
    assert_eq!(scene.crowd.len(), 100_000);
    assert_eq!(scene.crowd.shapes.len(), 20);
    assert_eq!(scene.geometry.len(), 20);
    for (bounds, geometry) in scene.crowd.shapes.iter().zip(&scene.geometry) {
        let ShapeGeometry::Convex(poly) = geometry else {
            panic!("the crowd is convex")
        };
        let c = Vec3::from_array(bounds.center).as_dvec3();
        let h = Vec3::from_array(bounds.half_extents).as_dvec3();
        for v in poly.vertices() {
            assert!(((*v - c).abs() - h).max_element() <= 0.0);
            assert!(v.distance(c) <= f64::from(bounds.radius));
        }
    }
    let (lo, hi) = scene.crowd.wrap.expect("the crowd wraps");
    for b in &scene.crowd.bodies {
        let p = Vec3::from_array(b.position);
        assert!(p.cmpge(lo).all() && p.cmple(hi).all());
        assert!((b.shape as usize) < scene.crowd.shapes.len());
    }
}

#[test]
fn resizing_keeps_the_density() {
    for n in [1u64, 999, 12_345] {
        let scene = Scene::default_scene(Some(n)).unwrap();
        assert_eq!(scene.crowd.len() as u64, n);
        let (lo, hi) = scene.crowd.wrap.unwrap();
        let volume = f64::from((hi - lo).x).powi(3);
        let density = n as f64 / volume;
        assert!(
            (density - 100_000.0 / 92.8f64.powi(3)).abs() < 1e-3,
            "{n}: {density}"
        );
    }
}

#[test]
fn scale_variants_and_determinism() {
    let a = parse(ONE_GROUP).unwrap();
    let b = parse(ONE_GROUP).unwrap();
    assert_eq!(a.crowd.bodies, b.crowd.bodies);
    assert_eq!(a.crowd.shapes.len(), 3);
    let widths: Vec<f32> = a.crowd.shapes.iter().map(|s| s.half_extents[0]).collect();
    assert!(
        (widths[0] - 0.5).abs() < 1e-6 && (widths[2] - 1.0).abs() < 1e-6,
        "{widths:?}"
    );
    assert!(
        (widths[1] - 0.5 * 2f32.sqrt()).abs() < 1e-5,
        "log-uniform middle: {widths:?}"
    );
    for m in &a.crowd.motions {
        assert!(m.linear.length() <= 1.0 + 1e-6 && m.angular == Vec3::ZERO);
    }
}

#[test]
fn obj_shapes_resolve_relative_to_the_scene_file() {
    let dir = std::env::temp_dir().join(format!("proxima-scene-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("meshes")).unwrap();
    std::fs::write(
        dir.join("meshes/tetra.obj"),
        "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n",
    )
    .unwrap();
    let text = ONE_GROUP.replace(
        "{ box = [0.5, 0.5, 0.5] }",
        "{ obj = \"meshes/tetra.obj\" }",
    );
    std::fs::write(dir.join("s.toml"), &text).unwrap();
    let scene = Scene::load(&dir.join("s.toml")).unwrap();
    assert!(matches!(&scene.geometry[0], ShapeGeometry::Convex(p) if p.num_vertices() == 4));
    let missing = ONE_GROUP.replace("{ box = [0.5, 0.5, 0.5] }", "{ obj = \"nowhere.obj\" }");
    expect_error(&missing, &["line 3", "group[0].shape", "nowhere.obj"]);
}

#[test]
fn errors_name_the_line_and_the_field() {
    expect_error("seed = 1\n[[group\n", &["line 2"]);
    expect_error(
        &ONE_GROUP.replace("count = 100", "count = \"many\""),
        &["line 4", "count"],
    );
    expect_error(
        &ONE_GROUP.replace("scale = [1.0, 2.0]", "scale = [2.0, 1.0]"),
        &["line 5", "group[0].scale"],
    );
    expect_error(
        &ONE_GROUP.replace("scale = [1.0, 2.0]", "scale = [0.0, 1.0]"),
        &["group[0].scale", "positive"],
    );
    expect_error(
        &ONE_GROUP.replace("scale = [1.0, 2.0]", "scale = [1.0, 2.0, 3.0]"),
        &["line 5", "invalid length 3", "array of 2"],
    );
    expect_error(
        &ONE_GROUP.replace("max = [5, 5, 5]", "max = [5, -6, 5]"),
        &["line 7", "group[0].region"],
    );
    expect_error(&ONE_GROUP.replace("speed =", "sped ="), &["line 8", "sped"]);
    expect_error(
        &ONE_GROUP.replace("box = [0.5, 0.5, 0.5]", "box = [0.5, 0.0, 0.5]"),
        &["line 3", "group[0].shape", "hy"],
    );
    expect_error(
        &ONE_GROUP.replace("scale_variants = 3", "scale_variants = 0"),
        &["line 6", "scale_variants"],
    );
    expect_error("seed = 1\n", &["no [[group]]"]);
    expect_error(
        &ONE_GROUP.replace("count = 100", "count = 0"),
        &["line 4", "group[0].count", "at least 1"],
    );
    // A shape past f32's range, where the GPU passes hold the bounds, is named so (it was
    // "unusable local bounds", NaN).
    expect_error(
        &ONE_GROUP.replace("box = [0.5, 0.5, 0.5]", "box = [1e39, 1e39, 1e39]"),
        &["line 3", "group[0].shape", "not finite in f32"],
    );
    // One side past it is named so too (it was "all hull input points are collinear").
    expect_error(
        &ONE_GROUP.replace("box = [0.5, 0.5, 0.5]", "box = [1e39, 0.5, 0.5]"),
        &["line 3", "group[0].shape", "1e39 is not finite in f32"],
    );
    // A shape written with a `kind` key, or with a kind the crate does not have: the line,
    // the field and every shape's key.
    for shape in [
        "{ kind = \"box\", half = [0.5, 0.5, 0.5] }",
        "{ mesh = \"bunny.obj\" }",
        "{}",
        "\"box\"",
    ] {
        expect_error(
            &ONE_GROUP.replace("{ box = [0.5, 0.5, 0.5] }", shape),
            &["line 3", "group[0].shape", "not a shape", "obj_hull, torus"],
        );
    }
    expect_error(
        &ONE_GROUP.replace(
            "{ box = [0.5, 0.5, 0.5] }",
            "{ kind = \"obj\", path = \"bunny.obj\" }",
        ),
        &["a table with 2 keys: kind, path"],
    );
    expect_error(
        &ONE_GROUP.replace("count = 100", "count = 300000000"),
        &["at most"],
    );
}

#[test]
fn huge_counts_sides_and_points_are_named_errors_not_aborts() {
    let near = 1u64 << 62;
    let three = [1, 2, 3]
        .map(|_| {
            ONE_GROUP
                .replace("seed = 3\n", "")
                .replace("count = 100", &format!("count = {near}"))
        })
        .join("");
    expect_error(&format!("seed = 3\n{three}"), &["count", "at most"]);
    let max = ONE_GROUP.replace("count = 100", &format!("count = {}", u64::MAX));
    expect_error(&max, &["18446744073709551615 bodies"]);
    let two = format!("{max}{}", max.replace("seed = 3\n", ""));
    expect_error(&two, &["more than 2^64 - 1 bodies"]);
    let cyl = ONE_GROUP.replace(
        "shape = { box = [0.5, 0.5, 0.5] }",
        "shape = { cylinder = { radius = 1.0, half_height = 1.0, sides = 4000000000 } }",
    );
    let hull = ONE_GROUP.replace(
        "shape = { box = [0.5, 0.5, 0.5] }",
        "shape = { random_hull = { points = 100000000000, radius = 1.0 } }",
    );
    for (text, field) in [(cyl, "sides"), (hull, "points")] {
        match parse(&text) {
            Err(e) => assert!(e.to_string().contains(field), "{e}"),
            Ok(_) => panic!("a shape with too many {field} was built"),
        }
    }
}

#[test]
fn values_beyond_f32_name_their_field() {
    for (from, to, needles) in [
        (
            "scale = [1.0, 2.0]",
            "scale = [1.0, 1e300]",
            ["line 5", "group[0].scale"],
        ),
        (
            "speed = [0.0, 1.0]",
            "speed = [0.0, 1e300]",
            ["line 8", "group[0].speed"],
        ),
        (
            "speed = [0.0, 1.0]",
            "spin = [1e300, 1e300]",
            ["line 8", "group[0].spin"],
        ),
        (
            "max = [5, 5, 5]",
            "max = [5, 1e300, 5]",
            ["line 7", "group[0].region"],
        ),
    ] {
        expect_error(&ONE_GROUP.replace(from, to), &needles);
    }
    // Each number fits f32; the scaled shape does not.
    expect_error(
        &ONE_GROUP
            .replace("scale = [1.0, 2.0]", "scale = [1e30, 1e30]")
            .replace("box = [0.5, 0.5, 0.5]", "box = [1e10, 1e10, 1e10]"),
        &["line 3", "group[0].shape", "at scale"],
    );
}

/// A spin of half a turn or more a frame (1/60 s) is named at the scene's line and field,
/// a group's range and a body's alike: the run refused it at its first frame as "body 0",
/// which for a group names no entry of the file. Just under the limit loads.
#[test]
fn spins_past_half_a_turn_a_frame_name_their_field() {
    use proxima::scene::MAX_SPIN;
    assert!(
        (MAX_SPIN - 60.0 * std::f64::consts::PI).abs() < 1e-3,
        "{MAX_SPIN}"
    );
    expect_error(
        &ONE_GROUP.replace("speed = [0.0, 1.0]", "spin = [150.0, 250.0]"),
        &["line 8", "group[0].spin", "250 rad/s", "under 188.5 rad/s"],
    );
    let body = |spin: &str| {
        format!(
            "{ONE_GROUP}[[body]]\nshape = {{ box = [1, 1, 1] }}\nposition = [0, 0, 20]\nspin = {spin}\n"
        )
    };
    expect_error(
        &body("[0.0, 120.0, 160.0]"),
        &["line 12", "body[0].spin", "200 rad/s"],
    );
    parse(&ONE_GROUP.replace("speed = [0.0, 1.0]", "spin = [0.0, 188.0]")).unwrap();
    parse(&body("[0.0, 0.0, 188.0]")).unwrap();
}

/// A flat, open mesh (a figure's outline, as woody.obj is) is named as open, as its
/// decomposition names it: the scene said only that its points were coplanar.
#[test]
fn a_flat_open_mesh_is_named_as_open() {
    let dir = std::env::temp_dir().join(format!("proxima-scene-flat-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let square = dir.join("square.obj");
    std::fs::write(
        &square,
        "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf 1 2 3\nf 1 3 4\n",
    )
    .unwrap();
    let text = format!(
        "[[body]]\nshape = {{ obj = {:?} }}\nposition = [0, 0, 0]\n",
        square.display().to_string()
    );
    expect_error(&text, &["line 2", "body[0].shape", "the mesh is open"]);
}

/// Random scene text: every field of a valid scene replaced by odd values, and the text
/// cut, doubled and sprinkled with bytes. Oracle: the parser's contract, a scene or a
/// scene error naming the file, never a panic. Counts stay small (a loaded scene of
/// random size would only measure memory).
#[test]
fn random_scene_text_is_a_scene_or_a_named_error() {
    use proxima::rng::Rng;
    const VALUES: &[&str] = &[
        "-1",
        "0",
        "1",
        "3",
        "1.5",
        "1e300",
        "-1e300",
        "nan",
        "inf",
        "-inf",
        "\"x\"",
        "[]",
        "[1, 2]",
        "[2, 1]",
        "[1, 2, 3]",
        "[1e300, 1e300]",
        "[0, 1e39]",
        "[-1, 1]",
        "{}",
        "true",
        "18446744073709551615",
        "{ box = [1, 1, 1] }",
        "{ torus = { major = 1, minor = 2 } }",
        "{ obj = \"missing.obj\" }",
        "{ cone = { radius = 1, half_height = 0 } }",
        "{ points = [[0,0,0],[1,0,0],[0,1,0]] }",
        "{ min = [0, 0, 0], max = [1, 1, 1] }",
        "{ min = [1, 1, 1], max = [0, 0, 0] }",
    ];
    const NOISE: &[u8] = b"[]{}=,\"#\n 0123456789.-eE";
    let mut rng = Rng::new(99);
    let (mut scenes, mut errors) = (0, 0);
    // Every other case adds bodies placed by hand, with every field they take.
    let with_bodies = format!(
        "{ONE_GROUP}[[body]]\n\
         shape = {{ box = [0.5, 0.25, 0.5], radius = 0.1 }}\n\
         position = [1, 2, 3]\n\
         rotation = [0, 0, 0.6, 0.8]\n\
         velocity = [1, 0, 0]\n\
         spin = [0, 0, 1]\n\
         grid = {{ count = [2, 3, 1], step = [1, 1, 1] }}\n\
         fixed = true\n"
    );
    for case in 0..3000 {
        let base = if case % 2 == 0 {
            ONE_GROUP
        } else {
            &with_bodies
        };
        let mut lines: Vec<String> = base.lines().map(str::to_owned).collect();
        for _ in 0..1 + rng.below(3) {
            let k = rng.below(lines.len() as u64) as usize;
            if let Some((key, _)) = lines[k].split_once(" = ") {
                let value = VALUES[rng.below(VALUES.len() as u64) as usize];
                // Counts take only small values or ones past the limit.
                let value = if key == "count" && value.len() > 2 && !value.starts_with('1') {
                    "2"
                } else {
                    value
                };
                lines[k] = format!("{key} = {value}");
            }
        }
        let mut text = lines.join("\n");
        match rng.below(4) {
            0 => text.truncate(rng.below(text.len() as u64 + 1) as usize),
            1 => text = format!("{text}\n{text}"),
            2 => {
                for _ in 0..1 + rng.below(3) {
                    let at = rng.below(text.len() as u64 + 1) as usize;
                    let byte = NOISE[rng.below(NOISE.len() as u64) as usize];
                    if text.is_char_boundary(at) {
                        text.insert(at, byte as char);
                    }
                }
            }
            _ => {}
        }
        // Digits sprinkled into `count = 100` or a grid's counts could ask for millions
        // of bodies.
        if text.lines().any(|l| {
            (l.starts_with("count") || l.starts_with("grid"))
                && l.chars().filter(char::is_ascii_digit).count()
                    > 3 + 4 * usize::from(l.starts_with("grid"))
                && !l.contains("18446744073709551615")
        }) {
            continue;
        }
        match parse(&text) {
            Ok(scene) => {
                scenes += 1;
                assert!(scene.crowd.len() <= 1000, "case {case}: {text}");
            }
            Err(e @ Error::Scene { .. }) => {
                errors += 1;
                assert!(e.to_string().contains("test.toml"), "case {case}: {e}");
            }
            Err(e) => panic!("case {case}: not a scene error: {e}\n{text}"),
        }
    }
    assert!(
        scenes > 100 && errors > 1000,
        "{scenes} scenes, {errors} errors"
    );
}

#[test]
fn a_shape_can_be_rounded_and_its_fields_go_by_name() {
    // `radius` beside a convex shape's key rounds it, as in a query: a crate with a margin.
    let rounded = ONE_GROUP.replace(
        "{ box = [0.5, 0.5, 0.5] }",
        "{ box = [0.5, 0.25, 0.5], radius = 0.125 }",
    );
    let scene = parse(&rounded).unwrap();
    let scales = [1.0, 2f64.sqrt(), 2.0];
    for ((geometry, bounds), s) in scene.geometry.iter().zip(&scene.crowd.shapes).zip(scales) {
        let ShapeGeometry::Rounded(r) = geometry else {
            panic!("a rounded box was read as {geometry:?}");
        };
        let Core::Polytope(core) = &r.core else {
            panic!("a rounded box's core is not its box");
        };
        assert!(
            (r.radius - 0.125 * s).abs() < 1e-12 * s,
            "radius {}",
            r.radius
        );
        let (_, reach) = core.extreme(DVec3::Y, 0);
        assert!((reach - 0.25 * s).abs() < 1e-12 * s, "core reach {reach}");
        // The bounds hold the ball-swept box: half extent 0.25 + 0.125 along y.
        let want = (0.375 * s) as f32;
        assert!(bounds.half_extents[1] >= want && bounds.half_extents[1] < want * 1.001);
    }
    // Every shape's key has a form for the errors to give, and nothing else has one.
    for key in proxima::shape::SHAPE_KEYS.split(", ") {
        assert!(proxima::shape::shape_form(key).is_some(), "{key}");
    }
    assert_eq!(proxima::shape::shape_form("mesh"), None);
    // A shape whose fields are named takes them by name: an array would be read in an
    // order the file does not show. Each error names the shape and the form it takes.
    for (shape, needles) in [
        (
            "{ capsule = [0.5, 2.0] }",
            &["`capsule` takes { half_height, radius }", "not an array"][..],
        ),
        (
            "{ sphere = 0.5 }",
            &["`sphere` takes { radius }", "not a float"],
        ),
        (
            "{ sphere = { r = 0.5 } }",
            &["`sphere` takes { radius }", "unknown field `r`"],
        ),
        (
            "{ cylinder = { radius = 1.0, half_height = 1.0, sides = 1e40 } }",
            &["`cylinder` takes", "`1e40`", "a whole number"],
        ),
        (
            "{ torus = { major = 1.0, minor = 0.25 }, radius = 0.1 }",
            &["`radius` rounds a convex shape"],
        ),
        (
            "{ sphere = { radius = 1.0 }, radius = 0.1 }",
            &["has its own radius"],
        ),
        (
            "{ box = [0.5, 0.5, 0.5], radius = \"thick\" }",
            &["`radius` must be a number"],
        ),
        (
            "{ box = [0.5, 0.5, 0.5], radius = -0.1 }",
            &["rounding radius"],
        ),
    ] {
        let text = ONE_GROUP.replace("{ box = [0.5, 0.5, 0.5] }", shape);
        let mut with_line = vec!["line 3", "group[0].shape"];
        with_line.extend_from_slice(needles);
        expect_error(&text, &with_line);
        // No number written out digit by digit.
        let m = parse(&text).unwrap_err().to_string();
        assert!(!m.contains("00000000"), "{m}");
    }
}

const YARD: &str = "seed = 2\n\
[[body]]\n\
shape = { box = [10.0, 10.0, 0.5] }\n\
position = [0.0, 0.0, -0.5]\n\
[[body]]\n\
shape = { box = [0.5, 0.5, 0.5] }\n\
position = [0.0, 0.0, 0.5]\n\
grid = { count = [3, 3, 4], step = [1.0, 1.0, 1.0] }\n\
[[body]]\n\
shape = { box = [2.0, 0.1, 0.05] }\n\
position = [5.0, 0.0, 0.05]\n\
[[body]]\n\
shape = { box = [2.0, 0.1, 0.05] }\n\
position = [5.0, 0.0, 0.15]\n\
rotation = [0.0, 0.0, 0.7071067811865476, 0.7071067811865476]\n\
[[body]]\n\
shape = { sphere = { radius = 0.5 } }\n\
position = [-5.0, 0.0, 3.0]\n\
velocity = [0.0, 0.0, -4.0]\n\
spin = [0.0, 1.0, 0.0]\n";

#[test]
fn bodies_placed_by_hand_stack_and_touch() {
    let scene = parse(YARD).unwrap();
    let crowd = &scene.crowd;
    // A floor, 36 crates, two planks (one shape), a ball: four shapes.
    assert_eq!(crowd.len(), 40);
    assert_eq!(crowd.shapes.len(), 4);
    assert_eq!(crowd.bodies[37].shape, crowd.bodies[38].shape);
    // The grid: position + (i, j, k) * step, i slowest.
    let mut cells: Vec<[i32; 3]> = Vec::new();
    for i in 0..3 {
        for j in 0..3 {
            for k in 0..4 {
                cells.push([i, j, k]);
            }
        }
    }
    for (n, [i, j, k]) in cells.iter().enumerate() {
        let want = Vec3::new(*i as f32, *j as f32, *k as f32 + 0.5);
        assert_eq!(Vec3::from(crowd.bodies[1 + n].position), want, "crate {n}");
    }
    let turned = glam::Quat::from_array(crowd.bodies[38].rotation);
    let want = glam::Quat::from_rotation_z(std::f32::consts::FRAC_PI_2);
    assert!((turned - want).length() < 1e-6, "{turned}");
    assert_eq!(crowd.motions[39].linear, Vec3::new(0.0, 0.0, -4.0));
    assert_eq!(crowd.motions[39].angular, Vec3::new(0.0, 1.0, 0.0));
    assert_eq!(crowd.motions[5].linear, Vec3::ZERO);

    // Their contacts, exact touches all, against the layout: crates whose cells are
    // neighbours (faces, edges and corners), the floor under the bottom layer and under
    // the lower plank, the planks crossed.
    let mut want = BTreeSet::new();
    for (a, ca) in cells.iter().enumerate() {
        if ca[2] == 0 {
            want.insert([0, 1 + a as u32]);
        }
        for (b, cb) in cells.iter().enumerate().skip(a + 1) {
            if (0..3).all(|d| (ca[d] - cb[d]).abs() <= 1) {
                want.insert([1 + a as u32, 1 + b as u32]);
            }
        }
    }
    want.insert([0, 37]);
    want.insert([37, 38]);
    let mut world = World::new(DeviceChoice::Cpu).unwrap();
    world.add_scene(&scene, &mut |_| {}).unwrap();
    let report = world.step(0.0).unwrap();
    let got: BTreeSet<[u32; 2]> = report.contacts.iter().map(|c| c.bodies).collect();
    assert_eq!(got, want);
    for c in &report.contacts {
        for p in &c.manifold.points {
            assert!(
                p.separation.abs() < 1e-12,
                "{:?}: {}",
                c.bodies,
                p.separation
            );
        }
    }
}

#[test]
fn bodies_placed_by_hand_are_checked() {
    let one = "seed = 1\n[[body]]\nshape = { box = [0.5, 0.5, 0.5] }\nposition = [0, 0, 0]\n";
    for (extra, needles) in [
        (
            "rotation = [0, 0, 0, 2]",
            &["line 5", "body[0].rotation", "not a unit quaternion"][..],
        ),
        (
            "velocity = [nan, 0, 0]",
            &["line 5", "body[0].velocity", "finite"],
        ),
        (
            "grid = { count = [0, 1, 1], step = [1, 1, 1] }",
            &["line 5", "body[0].grid", "at least 1"],
        ),
        (
            "grid = { count = [10, 1, 1], step = [1e38, 0, 0] }",
            &["line 5", "body[0].grid", "far corner"],
        ),
        (
            "grid = { count = [100000, 100000, 100000], step = [1, 1, 1] }",
            &["1000000000000000 bodies", "at most"],
        ),
        (
            "grid = { count = [4294967296, 4294967296, 4294967296], step = [0, 0, 0] }",
            &["more than 2^64 - 1"],
        ),
        ("turn = 1", &["line 5", "unknown field `turn`"]),
        // An array longer than its field: serde read the first items and dropped the
        // rest without a word.
        (
            "velocity = [1, 0, 0, 9]",
            &["line 5", "invalid length 4", "array of 3"],
        ),
        (
            "rotation = [0, 0, 0, 1, 5]",
            &["line 5", "invalid length 5", "array of 4"],
        ),
        (
            "grid = { count = [2, 1, 1, 5], step = [1, 1, 1] }",
            &["line 5", "invalid length 4", "array of 3"],
        ),
    ] {
        expect_error(&format!("{one}{extra}\n"), needles);
    }
    expect_error(
        &one.replace("position = [0, 0, 0]\n", ""),
        &["missing field `position`"],
    );
    expect_error(
        &one.replace("[0, 0, 0]", "[0, 0.5, 1, 2]"),
        &["line 4", "invalid length 4", "array of 3"],
    );
    expect_error(
        &one.replace("[0, 0, 0]", "[1e300, 0, 0]"),
        &["line 4", "body[0].position", "f32"],
    );
    // The walls keep the bodies inside the wrap box: a body, a grid's far corner or a
    // group's region outside it is named (the walls herded such a body in, unasked).
    let walled = one.replace(
        "seed = 1\n",
        "seed = 1\nwrap = { min = [-5, -5, -5], max = [5, 5, 5] }\n",
    );
    assert_eq!(parse(&walled).unwrap().crowd.len(), 1);
    expect_error(
        &walled.replace("[0, 0, 0]", "[20, 0, 0]"),
        &["line 5", "body[0].position", "outside the wrap box"],
    );
    let six = format!("{walled}grid = {{ count = [6, 1, 1], step = [1, 0, 0] }}\n");
    assert_eq!(parse(&six).unwrap().crowd.len(), 6);
    expect_error(
        &format!("{walled}grid = {{ count = [7, 1, 1], step = [1, 0, 0] }}\n"),
        &[
            "line 6",
            "body[0].grid",
            "[6.0, 0.0, 0.0] lies outside the wrap box",
        ],
    );
    expect_error(
        &ONE_GROUP.replace(
            "seed = 3\n",
            "seed = 3\nwrap = { min = [-4, -5, -5], max = [5, 5, 5] }\n",
        ),
        &["line 8", "group[0].region", "outside the wrap box"],
    );
    // Resizing scales the groups; bodies placed by hand stay, so a scene of them alone
    // has its own count only.
    let resized =
        |text: &str, n| Scene::parse_resized(Path::new("t.toml"), Path::new("."), text, Some(n));
    assert_eq!(resized(one, 1).unwrap().crowd.len(), 1);
    assert!(
        resized(one, 10)
            .unwrap_err()
            .to_string()
            .contains("only the groups' counts")
    );
    let both = format!("{ONE_GROUP}{}", one.replace("seed = 1\n", ""));
    assert_eq!(resized(&both, 500).unwrap().crowd.len(), 500);
    assert!(resized(&both, 0).is_err());
    // The wrap box resizes with the groups' regions, and a body placed by hand that it
    // leaves outside is named as such (the error blamed a line the file has right).
    let walled_both = format!(
        "{}{}",
        ONE_GROUP.replace(
            "seed = 3\n",
            "seed = 3\nwrap = { min = [-5, -5, -5], max = [5, 5, 5] }\n"
        ),
        one.replace("seed = 1\n", "")
            .replace("[0, 0, 0]", "[0, 0, -4.5]")
    );
    assert_eq!(resized(&walled_both, 101).unwrap().crowd.len(), 101);
    let shrunk = resized(&walled_both, 21).unwrap_err().to_string();
    for part in [
        "line 12",
        "body[0].position",
        "outside the wrap box",
        "resized with the groups' regions to about 21 bodies",
    ] {
        assert!(shrunk.contains(part), "{part:?} in {shrunk}");
    }
    // A group past the body limit is named by its line (it named no line).
    expect_error(
        &ONE_GROUP.replace("count = 100", "count = 100000000000"),
        &["line 4", "group[0].count", "100000000000 bodies in all"],
    );
}

/// The core of a shape for parry3d-f64 and the radius that sweeps it (0 for a polytope).
fn parry_shape(g: &ShapeGeometry) -> (SharedShape, f64) {
    match g {
        ShapeGeometry::Convex(p) => (SharedShape::new(common::to_parry(p)), 0.0),
        ShapeGeometry::Rounded(r) => {
            let core = match &r.core {
                Core::Point => SharedShape::new(Ball::new(0.0)),
                Core::Segment { half_height } => SharedShape::new(Segment::new(
                    DVec3::new(0.0, 0.0, -half_height),
                    DVec3::new(0.0, 0.0, *half_height),
                )),
                Core::Polytope(p) => SharedShape::new(common::to_parry(p)),
            };
            (core, r.radius)
        }
        ShapeGeometry::Mesh(_) => panic!("the yard has no meshes"),
    }
}

/// The yard (`scenes/yard.toml`): everyday bodies placed by hand, every touch exact as
/// written. Parting its overlaps moves nothing (the planks written in decimals overlap by
/// their rounding, 1.4e-17: a touch, not an overlap), and its contacts are the pairs
/// parry3d-f64 puts within 1e-9 of each other (the cores' distance less the radii).
#[test]
fn the_yards_touches_are_its_contacts() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/yard.toml");
    let scene = Scene::load(&file).unwrap();
    assert_eq!(scene.fixed, [0], "the floor, and only it, is fixed");
    // A scene put together by hand with a pose missing is refused whole, not cut short.
    let mut short = scene.clone();
    short.poses.pop();
    let mut world = World::new(DeviceChoice::Cpu).unwrap();
    let refused = world
        .add_scene(&short, &mut |_| {})
        .unwrap_err()
        .to_string();
    assert!(refused.contains("93 bodies, 92 poses"), "{refused}");
    assert!(world.is_empty() && world.shapes().is_empty());
    world.add_scene(&scene, &mut |_| {}).unwrap();
    let mut crowd = KinematicCrowd::new(world, None);
    let settled = crowd.settle(10).unwrap();
    assert_eq!((settled.initial, settled.moved), (0, 0), "{settled:?}");
    for (body, pose) in crowd.world.bodies().iter().zip(&scene.poses) {
        assert_eq!(body.pose, *pose);
    }
    let report = crowd.world.step(0.0).unwrap();
    let got: BTreeSet<[u32; 2]> = report.contacts.iter().map(|c| c.bodies).collect();

    let shapes: Vec<(SharedShape, f64)> = scene.geometry.iter().map(parry_shape).collect();
    let bodies = crowd.world.bodies();
    let mut want = BTreeSet::new();
    for a in 0..bodies.len() {
        for b in a + 1..bodies.len() {
            let (sa, ra) = &shapes[bodies[a].shape as usize];
            let (sb, rb) = &shapes[bodies[b].shape as usize];
            let (pa, pb) = (
                common::parry_pose(&bodies[a].pose),
                common::parry_pose(&bodies[b].pose),
            );
            let d = parry3d_f64::query::distance(&pa, &**sa, &pb, &**sb)
                .unwrap()
                .distance
                - ra
                - rb;
            if d <= 1e-9 {
                want.insert([a as u32, b as u32]);
            } else {
                assert!(
                    d > 1e-3,
                    "{a}, {b}: {d:e} apart, neither touching nor clear"
                );
            }
        }
    }
    assert_eq!(got, want);
    assert!(want.len() > 300, "{} touches", want.len());
}

/// A group far from the origin keeps its bodies where they are drawn: its f64 poses are
/// the near group's shifted (to the rounding of the shift), and the World finds the same
/// pairs. The poses were rounded to f32 first, and at 1e6 f32's grid is 0.0625 apart: 2,000
/// boxes 1e-3 across in a 0.25 cube stood on 64 points and overlapped in about 21,600
/// pairs, where near the origin they overlap in none.
#[test]
fn a_group_far_from_the_origin_keeps_its_drawn_poses() {
    let group = |c: f64| {
        format!(
            "seed = 1\n[[group]]\nshape = {{ box = [0.0005, 0.0005, 0.0005] }}\ncount = 2000\n\
             region = {{ min = [{c:?}, {c:?}, {c:?}], max = [{:?}, {:?}, {:?}] }}\n",
            c + 0.25,
            c + 0.25,
            c + 0.25
        )
    };
    let shift = 1e6;
    let (near, far) = (parse(&group(0.0)).unwrap(), parse(&group(shift)).unwrap());
    assert_eq!(near.poses.len(), 2000);
    for (n, f) in near.poses.iter().zip(&far.poses) {
        let moved = f.translation - DVec3::splat(shift);
        assert!(
            (moved - n.translation).abs().max_element() < 1e-9,
            "{n:?} {f:?}"
        );
        assert_eq!(n.rotation, f.rotation);
    }
    let pairs = |scene: &Scene| {
        let mut world = World::new(DeviceChoice::Cpu).unwrap();
        world.add_scene(scene, &mut |_| {}).unwrap();
        let report = world.step(0.0).unwrap();
        let overlapping = report
            .contacts
            .iter()
            .filter(|c| c.manifold.min_separation() < 0.0)
            .count();
        (report.pairs, overlapping)
    };
    let (near_pairs, near_overlapping) = pairs(&near);
    assert_eq!(near_overlapping, 0);
    assert_eq!(pairs(&far), (near_pairs, 0));
}

/// A mesh that reads but cannot be decomposed (open: a box without its lid) fails when the
/// World takes the scene, and the error names the scene file, the line and the field that
/// wrote the shape, as every other scene error does (it said "geometry: shape 0 cannot be
/// decomposed", naming neither).
#[test]
fn a_mesh_that_cannot_be_decomposed_is_named_where_the_scene_writes_it() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("scene-open-mesh");
    std::fs::create_dir_all(&dir).unwrap();
    let mut obj = String::new();
    for z in [-1, 1] {
        for (x, y) in [(-1, -1), (1, -1), (1, 1), (-1, 1)] {
            obj += &format!("v {x} {y} {z}\n");
        }
    }
    obj += "f 1 3 2\nf 1 4 3\nf 1 2 6\nf 1 6 5\nf 2 3 7\nf 2 7 6\nf 3 4 8\nf 3 8 7\nf 4 1 5\nf 4 5 8\n";
    std::fs::write(dir.join("lidless.obj"), obj).unwrap();
    let path = dir.join("open.toml");
    std::fs::write(
        &path,
        "seed = 1\n[[group]]\nshape = { box = [0.5, 0.5, 0.5] }\ncount = 4\n\
         region = { min = [0, 0, 0], max = [4, 4, 4] }\n[[body]]\n\
         shape = { obj = \"lidless.obj\" }\nposition = [9, 0, 0]\n",
    )
    .unwrap();
    let scene = Scene::load(&path).unwrap();
    let mut world = World::new(DeviceChoice::Cpu).unwrap();
    world.set_decomposition_cache(proxima::geometry::decompose::Cache::Off);
    let e = world.add_scene(&scene, &mut |_| {}).unwrap_err();
    let m = e.to_string();
    assert!(matches!(e, Error::Scene { .. }), "{m}");
    for needle in ["open.toml", "line 7", "body[0].shape", "open"] {
        assert!(m.contains(needle), "`{m}` does not say `{needle}`");
    }
}

/// Scene files as users get them wrong, each named where it is: bytes that are not UTF-8
/// by their line (the message was the reader's, naming no line), a UTF-16 file as such, a
/// line a million characters long quoted by the part about the error (it was echoed
/// whole), a grid past the body limit by its body (no line, no field), and a shape whose
/// box overflows f32 once turned (a sphere of 2e38 loaded and failed in the first frame
/// naming no line). Groups resized to no bodies keep their wrap box (it shrank to a point
/// and blamed the body placed by hand).
#[test]
fn scene_files_users_get_wrong_are_named_where_they_are() {
    let dir = std::env::temp_dir().join(format!("proxima-scene-wrong-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let load = |name: &str, bytes: &[u8]| {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        Scene::load(&path)
            .map(|s| s.crowd.len())
            .map_err(|e| e.to_string())
    };
    let body = "[[body]]\nshape = { box = [1, 1, 1] }\nposition = [0, 0, 0]\n";
    let mut latin1 = body.as_bytes().to_vec();
    latin1.extend_from_slice(b"# caf\xe9\n");
    let e = load("latin1.toml", &latin1).unwrap_err();
    assert!(
        e.contains("latin1.toml") && e.contains("line 4") && e.contains("not UTF-8"),
        "{e}"
    );
    let e = load("utf16.toml", b"\xff\xfe[\x00[\x00").unwrap_err();
    assert!(e.contains("UTF-16"), "{e}");
    let long = format!("{body}scale = 1{}x\n", "0".repeat(1_000_000));
    let e = load("long.toml", long.as_bytes()).unwrap_err();
    assert!(
        e.contains("line 4") && e.len() < 500,
        "{}",
        &e[..e.len().min(600)]
    );
    std::fs::remove_dir_all(&dir).unwrap();

    expect_error(
        &format!(
            "{body}[[body]]\nshape = {{ box = [1, 1, 1] }}\nposition = [5, 0, 0]\n\
             grid = {{ count = [100000, 100000, 100000], step = [2, 2, 2] }}\n"
        ),
        &["line 7", "body[1].grid", "1000000000000001 bodies in all"],
    );
    for shape in [
        "sphere = { radius = 2e38 }",
        "box = [1.9e38, 1.9e38, 1.9e38]",
    ] {
        expect_error(
            &body.replace("box = [1, 1, 1]", shape),
            &["line 2", "body[0].shape", "not finite in f32"],
        );
    }
    let walled = "wrap = { min = [-10, -10, -10], max = [10, 10, 10] }\n\
        [[group]]\ncount = 100\nshape = { box = [0.1, 0.1, 0.1] }\n\
        region = { min = [-5, -5, -5], max = [5, 5, 5] }\n\
        [[body]]\nshape = { box = [1, 1, 1] }\nposition = [9, 0, 0]\n";
    let scene =
        Scene::parse_resized(Path::new("test.toml"), Path::new("."), walled, Some(1)).unwrap();
    assert_eq!(scene.crowd.len(), 1);
}
