//! The picture of a frame: the right size, unsheared (rows padded to 256 bytes on the GPU
//! and unpadded on the way out), bodies in contact highlighted (touching, and only near),
//! and the PNG reads back the same.

mod common;

use glam::{DQuat, DVec3};
use proxima::Pipeline;
use proxima::bodies::Pose;
use proxima::geometry::generators::{cuboid, icosphere};
use proxima::picture::{BACKGROUND, Picture, render};
use proxima::world::World;

fn covered(p: &Picture, x: u32, y: u32) -> bool {
    p.pixel(x, y) != BACKGROUND
}

/// Columns of the first and last covered pixel of row `y`.
fn span(p: &Picture, y: u32) -> Option<(u32, u32)> {
    let xs: Vec<u32> = (0..p.width).filter(|&x| covered(p, x, y)).collect();
    Some((*xs.first()?, *xs.last()?))
}

#[test]
fn a_ball_at_the_centre_is_drawn_unsheared() {
    let Some(ctx) = common::gpu("a_ball_at_the_centre_is_drawn_unsheared") else {
        return;
    };
    let mut world = World::on(Pipeline::cpu());
    let ball = world.add_convex(icosphere(1.0, 3).unwrap()).unwrap();
    world.add_body(ball, Pose::IDENTITY).unwrap();
    // 301 pixels: 1204 bytes a row, padded to 1280 on the GPU.
    let p = render(&ctx, &world, None, 301, 203).unwrap();
    assert_eq!((p.width, p.height, p.rgba.len()), (301, 203, 301 * 203 * 4));
    let rows: Vec<(u32, (u32, u32))> = (0..p.height)
        .filter_map(|y| Some((y, span(&p, y)?)))
        .collect();
    assert!(rows.len() > 40, "the ball covers {} rows", rows.len());
    // Every covered row is centred on the middle column: a wrong stride shifts each row by
    // the padding (76 bytes = 19 pixels) more than the one above.
    for &(y, (a, b)) in &rows {
        let centre = f64::from(a + b) / 2.0;
        assert!((centre - 150.0).abs() <= 2.0, "row {y}: {a}..{b}");
    }
    let (top, bottom) = (rows[0].0, rows[rows.len() - 1].0);
    assert!(
        (f64::from(top + bottom) / 2.0 - 101.0).abs() <= 2.0,
        "rows {top}..{bottom}"
    );
    // The corners are background.
    for (x, y) in [(0, 0), (300, 0), (0, 202), (300, 202)] {
        assert!(!covered(&p, x, y));
    }
}

/// A scene far from the origin is drawn as it is at the origin: a stack of crates on a
/// floor at 1e7 gives the picture it gives about the origin, pixel for pixel (positions
/// went to the GPU rounded to f32 where they lie, 1 apart at 1e7, and the picture came
/// out speckled and full of holes).
#[test]
fn a_scene_far_from_the_origin_is_drawn_as_at_the_origin() {
    let Some(ctx) = common::gpu("a_scene_far_from_the_origin_is_drawn_as_at_the_origin") else {
        return;
    };
    let picture = |offset: DVec3| {
        let mut world = World::on(Pipeline::cpu());
        let floor = world
            .add_convex(cuboid(DVec3::new(4.0, 4.0, 0.5)).unwrap())
            .unwrap();
        let krate = world
            .add_convex(cuboid(DVec3::splat(0.5)).unwrap())
            .unwrap();
        let at = |p: DVec3| Pose::new(offset + p, DQuat::IDENTITY);
        world
            .add_body(floor, at(DVec3::new(0.0, 0.0, -0.5)))
            .unwrap();
        for k in 0..27 {
            let (i, j, l) = (f64::from(k % 3), f64::from(k / 3 % 3), f64::from(k / 9));
            world
                .add_body(krate, at(DVec3::new(i - 1.0, j - 1.0, l + 0.5)))
                .unwrap();
        }
        render(&ctx, &world, None, 160, 120).unwrap()
    };
    let near = picture(DVec3::ZERO);
    let far = picture(DVec3::new(1e7, 1e7, -1e7));
    let differ = (0..near.height)
        .flat_map(|y| (0..near.width).map(move |x| (x, y)))
        .filter(|&(x, y)| near.pixel(x, y) != far.pixel(x, y))
        .count();
    assert_eq!(differ, 0, "{differ} of {} pixels differ", 160 * 120);
}

#[test]
fn bodies_in_contact_are_highlighted_and_the_png_reads_back() {
    let Some(ctx) = common::gpu("bodies_in_contact_are_highlighted_and_the_png_reads_back") else {
        return;
    };
    let mut world = World::on(Pipeline::cpu());
    let crate_ = world
        .add_convex(cuboid(DVec3::splat(0.5)).unwrap())
        .unwrap();
    // Two crates resting on each other, and one apart.
    world.add_body(crate_, Pose::IDENTITY).unwrap();
    world
        .add_body(
            crate_,
            Pose::new(DVec3::new(0.2, 0.1, 0.99), DQuat::from_rotation_z(0.4)),
        )
        .unwrap();
    world
        .add_body(
            crate_,
            Pose::new(DVec3::new(3.0, 0.0, 0.0), DQuat::IDENTITY),
        )
        .unwrap();
    // Two more 0.005 apart: within the speculative distance, not touching.
    for x in [-3.0, -1.995] {
        world
            .add_body(crate_, Pose::new(DVec3::new(x, 0.0, 0.0), DQuat::IDENTITY))
            .unwrap();
    }
    world.set_speculative(0.01).unwrap();
    let report = world.step(0.0).unwrap();
    assert_eq!(report.contacts.len(), 2);
    let p = render(&ctx, &world, Some(&report), 320, 240).unwrap();
    let (mut warm, mut near, mut cool, mut line) = (0, 0, 0, 0);
    for y in 0..p.height {
        for x in 0..p.width {
            let [r, g, b, _] = p.pixel(x, y);
            let (r, g, b) = (u32::from(r), u32::from(g), u32::from(b));
            if g > 2 * r && g > 2 * b {
                line += 1;
            } else if r > 2 * g && r > 3 * b {
                warm += 1;
            } else if r > 3 * b && g > 3 * b && g > r / 2 + r / 4 {
                near += 1;
            } else if b > r && b > 60 {
                cool += 1;
            }
        }
    }
    assert!(
        warm > 500 && near > 500 && cool > 200 && line > 5,
        "warm {warm} near {near} cool {cool} line {line}"
    );
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("picture.png");
    p.write_png(&path).unwrap();
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!((info.width, info.height), (320, 240));
    assert_eq!(&buf[..info.buffer_size()], &p.rgba[..]);
}

#[test]
fn a_picture_too_large_for_the_device_is_a_named_error() {
    let Some(ctx) = common::gpu("a_picture_too_large_for_the_device_is_a_named_error") else {
        return;
    };
    let world = World::on(Pipeline::cpu());
    let err = render(&ctx, &world, None, 1_000_000, 10)
        .unwrap_err()
        .to_string();
    assert!(err.contains("1000000x10"), "{err}");
    assert!(render(&ctx, &world, None, 0, 10).is_err());
    // A readback past the device's largest buffer (256 x 256 RGBA8 on 64 KiB) is named as
    // such, not wgpu's message about an invalid buffer.
    let small = common::small_device("picture", 64 << 10).expect("an adapter");
    let err = render(&small, &world, None, 256, 256).unwrap_err();
    assert!(
        matches!(&err, proxima::Error::BufferLimit { label, needed: 262_144, .. } if label == "picture readback"),
        "{err}"
    );
    // A world with no bodies draws (its empty tables were 16 bytes, less than one body).
    if let Err(e) = render(&small, &world, None, 64, 64) {
        panic!("{e}")
    }
}

#[test]
fn the_render_shader_validates() {
    let source = proxima::picture::shader_source().unwrap();
    proxima::shaders::parse_and_validate("render/picture.wgsl", &source).unwrap();
}
