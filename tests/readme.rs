//! The README's library example is code that compiles and runs: the test below holds it
//! line for line between its markers, and a second test holds the README's block to
//! those lines, so neither can change without the other.

use proxima::Result;

/// The README's example, then what it promises: the crate sunk 0.01 into the floor is one
/// contact, its normal along z. Not formatted by rustfmt: it is the README's text.
#[rustfmt::skip]
#[test]
fn the_readme_library_example_runs() -> Result<()> {
    // README: begin
    use proxima::{DeviceChoice, bodies::Pose, world::{World, Velocity}};
    use proxima::geometry::generators::cuboid;
    use glam::{DQuat, DVec3};

    let mut world = World::new(DeviceChoice::Auto)?;      // a hardware GPU, or the CPU twins
    let crate_ = world.add_convex(cuboid(DVec3::splat(0.5))?)?;
    let floor = world.add_convex(cuboid(DVec3::new(5.0, 5.0, 0.5))?)?;
    world.add_body(floor, Pose::IDENTITY)?;
    let b = world.add_body(crate_, Pose::new(DVec3::new(0.0, 0.0, 0.99), DQuat::IDENTITY))?;
    world.set_velocity(b, Velocity { linear: DVec3::new(1.0, 0.0, 0.0), ..Default::default() })?;
    let report = world.step(1.0 / 60.0)?;   // pairs, contacts, impacts, per-stage times
    for c in &report.contacts {
        // c.bodies, c.manifold.normal (A to B), up to 4 points with separation and ids
        println!("{:?}: {} points", c.bodies, c.manifold.points.len());
    }
    world.advance(1.0 / 60.0)?;             // move the bodies along their velocities
    // README: end
    // The floor's top at z = 0.5, the crate's bottom at 0.49: one pair, overlapping by
    // 0.01 over the crate's whole bottom face.
    assert_eq!(report.contacts.len(), 1);
    let m = &report.contacts[0].manifold;
    assert_eq!(report.contacts[0].bodies, [0, 1]);
    assert!((m.normal - DVec3::Z).length() < 1e-12, "{:?}", m.normal);
    assert_eq!(m.points.len(), 4);
    for p in &m.points {
        assert!((p.separation + 0.01).abs() < 1e-12, "{p:?}");
    }
    // Moved along its velocity for the step.
    let moved = world.bodies()[1].pose.translation;
    assert!((moved - DVec3::new(1.0 / 60.0, 0.0, 0.99)).length() < 1e-12, "{moved}");
    Ok(())
}

/// The README's ```rust block is the example above, line for line (the test's indent
/// aside).
#[test]
fn the_readme_shows_the_example_that_runs() {
    let readme = include_str!("../README.md");
    let block: Vec<&str> = readme
        .split("```rust\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("a rust block in README.md")
        .lines()
        .collect();
    let this = include_str!("readme.rs");
    let marker = "// README: begin\n";
    let begin = this.find(marker).expect("a begin marker") + marker.len();
    let end = this[begin..]
        .find("    // README: end")
        .expect("an end marker")
        + begin;
    let example: Vec<&str> = this[begin..end]
        .lines()
        .map(|l| l.strip_prefix("    ").unwrap_or(l))
        .collect();
    assert_eq!(
        block, example,
        "README.md's library example and tests/readme.rs differ"
    );
}
