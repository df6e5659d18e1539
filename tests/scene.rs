//! Scene files: the default scene, resizing, OBJ shapes, determinism, and errors that name
//! the file, the line and the field.

use std::path::Path;

use glam::Vec3;
use proxima::Error;
use proxima::scene::{Scene, ShapeGeometry};

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
            other.map(|s| s.world.len())
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
    assert_eq!(scene.world.len(), 100_000);
    assert_eq!(scene.world.shapes.len(), 20);
    assert_eq!(scene.geometry.len(), 20);
    for (bounds, geometry) in scene.world.shapes.iter().zip(&scene.geometry) {
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
    let (lo, hi) = scene.world.wrap.expect("the crowd wraps");
    for b in &scene.world.bodies {
        let p = Vec3::from_array(b.position);
        assert!(p.cmpge(lo).all() && p.cmple(hi).all());
        assert!((b.shape as usize) < scene.world.shapes.len());
    }
}

#[test]
fn resizing_keeps_the_density() {
    for n in [1u64, 999, 12_345] {
        let scene = Scene::default_scene(Some(n)).unwrap();
        assert_eq!(scene.world.len() as u64, n);
        let (lo, hi) = scene.world.wrap.unwrap();
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
    assert_eq!(a.world.bodies, b.world.bodies);
    assert_eq!(a.world.shapes.len(), 3);
    let widths: Vec<f32> = a.world.shapes.iter().map(|s| s.half_extents[0]).collect();
    assert!(
        (widths[0] - 0.5).abs() < 1e-6 && (widths[2] - 1.0).abs() < 1e-6,
        "{widths:?}"
    );
    assert!(
        (widths[1] - 0.5 * 2f32.sqrt()).abs() < 1e-5,
        "log-uniform middle: {widths:?}"
    );
    for m in &a.world.motions {
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
