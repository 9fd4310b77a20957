//! The ordered, semi-transparent circle renderer, as a devseq pipeline. Every pixel blends the
//! circles that cover it in input order, so the image depends on the order of the circles:
//! the classic exercise in which a GPU renderer must stay correct while it works on many
//! circles and pixels at once. Here it is five data-parallel steps (render.rs says which): bin
//! the circles into 16x16-pixel tiles with a scan, a search and a stable sort, then reduce,
//! for each pixel, the circles of its tile with the premultiplied "over" operator, which is
//! associative but not commutative, as one segmented reduction.
//!
//! Each scene is rendered on the device (timed), checked pixel by pixel against a sequential
//! renderer on the host (within 1/255 per channel; exits non-zero otherwise), and written as a
//! PNG.
//!
//!     cargo run --release --example render_circles [-- --scene NAME --size N --seed N --out DIR]
//!
//! Scenes: rgb (3 circles), rand10k, rand100k (random circles from devseq's counter-based
//! random sequences), pattern (a sunflower of 20 000 circles); all four by default on a GPU,
//! rgb alone on the host. The size is 1024 on a GPU and 64 on the host; the PNGs go to `DIR/render_circles_<scene>.png`
//! (the current directory by default).

#[path = "../common/mod.rs"]
mod common;
mod render;

use devseq::{Device, DeviceSeq};
use render::{Circle, Rgba};

fn write_png(path: &str, img: &[Rgba], size: u32) -> std::io::Result<()> {
    let file = std::io::BufWriter::new(std::fs::File::create(path)?);
    let mut enc = png::Encoder::new(file, size, size);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    let byte = |c: f32| (c.clamp(0.0, 1.0) * 255.0).round() as u8;
    // The background is opaque, so the premultiplied colour is the colour.
    let data: Vec<u8> = img
        .iter()
        .flat_map(|p| [byte(p.0), byte(p.1), byte(p.2)])
        .collect();
    enc.write_header()
        .and_then(|mut w| w.write_image_data(&data))
        .map_err(std::io::Error::other)
}

fn main() -> devseq::Result<()> {
    let dev = Device::auto()?;
    let size: u32 = common::flag("--size", if dev.is_cuda() { 1024 } else { 64 });
    let seed: u64 = common::flag("--seed", 15418);
    let out = common::value("--out").unwrap_or_else(|| ".".into());
    let scenes: Vec<String> = match common::value("--scene") {
        Some(s) => vec![s],
        None if dev.is_cuda() => render::SCENES.iter().map(|s| s.to_string()).collect(),
        None => {
            // The host backend interprets each element's expression (about 3 us for a
            // pixel-circle element here): the random scenes take minutes there.
            println!("on the host: the rgb scene only, unless --scene names another");
            vec!["rgb".into()]
        }
    };
    println!("device: {}, {size} x {size} pixels", dev.name());
    let mut failed = false;
    for name in &scenes {
        let circles: DeviceSeq<Circle> = render::scene(&dev, name, seed)?.copy()?;
        // Warm up: compiles the kernels (or loads them from the disk cache) on a GPU.
        render::render(&dev, &circles.slice(..circles.len().min(64)), 32)?.to_vec()?;
        let mut img = None;
        let ms = dev.time(|| {
            img = Some(render::render(&dev, &circles, size)?);
            Ok(())
        })?;
        let img = img.expect("rendered").to_vec()?;

        let t = std::time::Instant::now();
        let host = render::render_host(&circles.to_vec()?, size);
        let host_ms = t.elapsed().as_secs_f64() * 1e3;
        let (diff, at) = render::largest_difference(&img, &host);
        let ok = diff <= 1.0 / 255.0;
        failed |= !ok;
        let path = format!("{out}/render_circles_{name}.png");
        write_png(&path, &img, size).expect("write the PNG");
        println!(
            "{name:>9}: {:>6} circles  {ms:8.3} ms on the device  (sequential host renderer \
             {host_ms:8.1} ms)  largest channel difference {diff:.2e} at pixel ({}, {}): {}  -> {path}",
            circles.len(),
            at % size as usize,
            at / size as usize,
            if ok { "ok" } else { "MISMATCH" }
        );
    }
    if failed {
        eprintln!("an image differs from the sequential renderer by more than 1/255");
        std::process::exit(1);
    }
    Ok(())
}
