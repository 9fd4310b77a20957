//! The render_circles example's pipeline (examples/render_circles/render.rs, included here)
//! at small sizes, against its sequential renderer: edge cases of circles and tiles, a slice
//! of a random scene, the order of the circles, and bad sizes.

#[path = "../../examples/render_circles/render.rs"]
mod pipeline;

use crate::common::{Rng, dev};
use devseq::{DeviceSeq, Error};
use pipeline::{Circle, largest_difference, render, render_host, scene};

fn check(circles: &[Circle], size: u32, what: &str) {
    let d = dev();
    let seq = DeviceSeq::from_slice(&d, circles).unwrap();
    let img = render(&d, &seq, size).unwrap().to_vec().unwrap();
    assert_eq!(img.len(), (size * size) as usize);
    let (diff, at) = largest_difference(&img, &render_host(circles, size));
    assert!(
        diff <= 1.0 / 255.0,
        "{what} at {size}: channel difference {diff} at pixel {at}"
    );
}

/// Circles that cover everything, nothing, one pixel, tile edges and corners, or lie off the
/// image, with alphas 0 and 1; image sizes of 1, 3 and 5 tiles a side.
#[test]
fn edge_circles() {
    let mut r = Rng::new("render edges");
    let mut circles: Vec<Circle> = vec![
        (0.5, 0.5, 2.0, 0x40_80_80_80),              // covers every pixel
        (-0.5, 0.5, 0.2, 0xff_00_00_ff),             // left of the image
        (0.5, 1.7, 0.3, 0xff_00_ff_00),              // below it
        (0.25, 0.25, 0.0, 0xff_ff_00_00),            // radius 0
        (1.0 / 3.0, 1.0 / 3.0, 0.05, 0xff_10_20_30), // on a tile corner at 48 pixels
        (0.5, 0.5, 0.01, 0x00_ff_ff_ff),             // alpha 0
        (0.9, 0.1, 0.3, 0xff_20_c0_40),              // opaque, clipped at a corner
    ];
    for _ in 0..40 {
        let c = (
            r.unit() as f32,
            r.unit() as f32,
            0.2 * r.unit() as f32,
            r.next() as u32,
        );
        circles.push(c);
    }
    for size in [16, 48, 80] {
        check(&circles, size, "edge circles");
        // Order matters ("over" does not commute): reversed, still the sequential answer.
        let rev: Vec<Circle> = circles.iter().rev().copied().collect();
        check(&rev, size, "reversed");
    }
    check(&circles[..1], 16, "one circle");
}

/// The first 300 circles of the rand10k scene (lazy random sequences), and the rgb scene.
#[test]
fn scenes_small() {
    let d = dev();
    for (name, n, size) in [("rand10k", 300, 64), ("rgb", 3, 32)] {
        let circles = scene(&d, name, 7).unwrap().slice(..n);
        let host = render_host(&circles.to_vec().unwrap(), size);
        let img = render(&d, &circles, size).unwrap().to_vec().unwrap();
        let (diff, at) = largest_difference(&img, &host);
        assert!(diff <= 1.0 / 255.0, "{name}: {diff} at pixel {at}");
        // Not all white: the scene was drawn.
        assert!(img.iter().any(|p| p.0 < 0.99), "{name}: nothing drawn");
    }
}

#[test]
fn bad_sizes_and_no_circles() {
    let d = dev();
    let none = DeviceSeq::<Circle>::from_slice(&d, &[]).unwrap();
    let img = render(&d, &none, 16).unwrap().to_vec().unwrap();
    assert!(img.iter().all(|p| *p == (1.0, 1.0, 1.0, 1.0)));
    let one = DeviceSeq::from_slice(&d, &[(0.5f32, 0.5f32, 0.1f32, 0xffu32)]).unwrap();
    for size in [0, 15, 17] {
        assert!(matches!(
            render(&d, &one, size),
            Err(Error::InvalidArgument(_))
        ));
    }
    assert!(matches!(
        scene(&d, "nothing", 1),
        Err(Error::InvalidArgument(_))
    ));
}
