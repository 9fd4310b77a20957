//! The ordered circle renderer as devseq steps, and a sequential renderer to check it against.
//! Shared by the example (main.rs) and the test suite (tests/it/main.rs includes this file).
//!
//! A circle is `(x, y, radius, colour)`: the centre and radius in image units (the image is
//! the unit square, y down), the colour packed as RGBA8 (red in the low byte, straight alpha
//! in the high byte). Every pixel starts white and takes the circles that cover its centre in
//! input order, each blended over what is there: `dst = a * colour + (1 - a) * dst`.

#![allow(dead_code)] // the test suite uses the renderers, not the scenes' names

use devseq::{Device, DeviceSeq, Expr, Op, Result};

/// A circle: centre x, centre y, radius (image units), RGBA8 colour.
pub type Circle = (f32, f32, f32, u32);
/// A pixel's colour, premultiplied by its alpha (the background is opaque, so alpha ends at 1).
pub type Rgba = (f32, f32, f32, f32);

/// Pixels per side of a tile.
pub const TILE: u32 = 16;
const TILE_PIXELS: u32 = TILE * TILE;

/// The scenes the example knows.
pub const SCENES: [&str; 4] = ["rgb", "rand10k", "rand100k", "pattern"];

/// The circles of scene `name`, generated on `dev` (lazily, from the random sequences, where
/// the scene is random).
pub fn scene(dev: &Device, name: &str, seed: u64) -> Result<DeviceSeq<Circle>> {
    let random = |n: usize, r_lo: f32, r_hi: f32| -> Result<DeviceSeq<Circle>> {
        let u = |k: u64| DeviceSeq::<f32>::random_uniform(dev, n, seed.wrapping_add(k));
        let x = u(0)?;
        let y = u(1)?;
        let r = u(2)?.map(move |v| v * (r_hi - r_lo) + r_lo)?;
        let col = DeviceSeq::zip4(&u(3)?, &u(4)?, &u(5)?, &u(6)?)?
            .map(|(r, g, b, a)| pack(r, g, b, a * 0.5 + 0.3))?;
        DeviceSeq::zip4(&x, &y, &r, &col)
    };
    match name {
        "rgb" => DeviceSeq::from_slice(
            dev,
            &[
                (0.40, 0.40, 0.28, 0x80_20_20_f0),
                (0.60, 0.40, 0.28, 0x80_20_f0_20),
                (0.50, 0.60, 0.28, 0x80_f0_20_20),
            ],
        ),
        "rand10k" => random(10_000, 0.01, 0.05),
        "rand100k" => random(100_000, 0.003, 0.015),
        "pattern" => {
            // A sunflower: circle i at angle i times the golden angle and distance sqrt(i / n)
            // from the centre, the small inner circles drawn first, hues turning with the angle.
            let n = 20_000usize;
            let nf = n as f32;
            let i = DeviceSeq::<f32>::sequence(dev, n)?;
            i.map(move |i| {
                let a = i * 2.399_963;
                let d = ((i + 0.5) / nf).sqrt();
                let hue = |shift: f32| (a + shift).cos() * 0.5 + 0.5;
                (
                    a.cos() * d * 0.46 + 0.5,
                    a.sin() * d * 0.46 + 0.5,
                    d * 0.012 + 0.004,
                    pack(hue(0.0), hue(2.094), hue(4.189), d * 0.4 + 0.4),
                )
            })
        }
        _ => Err(devseq::Error::InvalidArgument(format!(
            "no scene {name:?} (scenes: {SCENES:?})"
        ))),
    }
}

/// RGBA8 of four channels in [0, 1].
fn pack(r: Expr<f32>, g: Expr<f32>, b: Expr<f32>, a: Expr<f32>) -> Expr<u32> {
    let byte = |c: Expr<f32>| (c * 255.0).round().cast::<u32>();
    byte(r) | byte(g) << 8 | byte(b) << 16 | byte(a) << 24
}

/// The channel at `shift` of an RGBA8 colour, in [0, 1].
fn channel(col: Expr<u32>, shift: u32) -> Expr<f32> {
    (col >> shift & 255).cast::<f32>() / 255.0
}

/// Circle colour premultiplied by its alpha, where the pixel centre `(fx, fy)` is inside the
/// circle; transparent (the identity of `over`) where it is not.
fn paint(c: (Expr<f32>, Expr<f32>, Expr<f32>, Expr<u32>), fx: Expr<f32>, fy: Expr<f32>) -> Rgba4 {
    let (x, y, r, col) = c;
    let (dx, dy) = (fx - x, fy - y);
    let inside = (dx * dx + dy * dy).le(r * r);
    let a = Expr::select(inside, channel(col, 24), 0.0);
    (
        channel(col, 0) * a,
        channel(col, 8) * a,
        channel(col, 16) * a,
        a,
    )
}

type Rgba4 = (Expr<f32>, Expr<f32>, Expr<f32>, Expr<f32>);

/// Premultiplied "over": `later` drawn on top of `earlier`. Associative, not commutative; the
/// left operand holds the earlier circles, as devseq's `_with` methods promise.
pub fn over(earlier: Rgba4, later: Rgba4) -> Rgba4 {
    let t = 1.0 - later.3;
    (
        later.0 + t * earlier.0,
        later.1 + t * earlier.1,
        later.2 + t * earlier.2,
        later.3 + t * earlier.3,
    )
}

/// The centre of pixel `p` (a column or row index) in image units.
fn centre(p: Expr<u32>, size: u32) -> Expr<f32> {
    (p.cast::<f32>() + 0.5) / size as f32
}

/// The rendered image, row-major, `size` x `size` pixels (`size` a multiple of [`TILE`]).
///
/// The steps, each one devseq call over all circles, pairs or pixels at once:
/// 1. each circle's range of tiles (lazy) and an inclusive scan of their counts;
/// 2. the (tile, circle) pairs: pair `j` belongs to the first circle whose running count
///    passes `j` (`upper_bound`), its tile follows from its rank within the circle;
/// 3. a stable sort of the pairs by tile, so each tile's circles stay in input order, and
///    each tile's first pair by `lower_bound`;
/// 4. one element per (pixel, circle of its tile), plus a white one in front of each pixel:
///    the pixel's colour is the `over`-reduction of its segment (`segmented_reduce_with`),
///    every element's colour computed in the reduction's own kernels;
/// 5. the pixels from tile order to row order (`gather`).
pub fn render(dev: &Device, circles: &DeviceSeq<Circle>, size: u32) -> Result<DeviceSeq<Rgba>> {
    if size == 0 || !size.is_multiple_of(TILE) {
        return Err(devseq::Error::InvalidArgument(format!(
            "the image size {size} is not a positive multiple of {TILE}"
        )));
    }
    let t = size / TILE; // tiles a side
    let nt = (t * t) as usize;
    let npix = size as usize * size as usize;
    let white = || DeviceSeq::filled(dev, (1.0f32, 1.0, 1.0, 1.0), npix);
    if circles.is_empty() {
        return white();
    }

    // 1. Each circle's tiles: columns lx..lx + w, rows ly..ly + h (clamped to the image; the
    //    bounds are conservative, a pixel's own test decides).
    let (tf, tmax) = (t as f32, t - 1);
    let span = move |c: Expr<f32>, r: Expr<f32>| {
        let tile = |v: Expr<f32>| (v * tf).floor().cast::<u32>().min(tmax); // as: negative -> 0
        let lo = tile(c - r);
        (lo, tile(c + r) - lo + 1)
    };
    let (x, y, r, _) = circles.unzip();
    let tiles = DeviceSeq::zip3(&x, &y, &r)?
        .map(move |(x, y, r)| {
            let (lx, w) = span(x, r);
            let (ly, h) = span(y, r);
            (lx, ly, w, w * h)
        })?
        .copy()?;
    let (_, _, _, count) = tiles.unzip();
    let ends = count.inclusive_scan(Op::Add)?;
    let pairs = ends.slice(ends.len() - 1..).to_vec()?[0] as usize;

    // 2. Pair j: circle c = upper_bound(ends, j), rank j - start(c) within the circle's tiles.
    let j = DeviceSeq::<u32>::sequence(dev, pairs)?;
    let circle = ends.upper_bound::<u32>(&j)?;
    let first = tiles.zip_map(&ends, |(lx, ly, w, count), end| (end - count, lx, ly, w))?;
    let tile = first
        .gather(&circle)?
        .zip_map(&j, move |(start, lx, ly, w), j| {
            let k = j - start;
            (ly + k / w) * t + lx + k % w
        })?;

    // 3. Stable sort by tile (circles stay in input order within a tile); tile q's pairs are
    //    tile_start[q]..tile_start[q + 1].
    let (sorted, by_tile) = tile.sort_pairs(&circle)?;
    let by_tile = circles.gather(&by_tile)?;
    let tile_start = sorted.lower_bound::<u32>(&DeviceSeq::<u32>::sequence(dev, nt + 1)?)?;

    // 4. Tile q holds 256 pixels of c + 1 elements each (c its circles): the white background
    //    and then its circles in order. Its elements start at 256 (tile_start[q] + q).
    let total = TILE_PIXELS as u64 * (pairs + nt) as u64;
    if total > u32::MAX as u64 {
        return Err(devseq::Error::InvalidArgument(format!(
            "{total} pixel-circle pairs: more than this example's u32 positions hold"
        )));
    }
    let total = total as usize;
    let tile_end = tile_start
        .slice(1..)
        .zip_map(&DeviceSeq::<u32>::sequence(dev, nt)?, |s, q| {
            (s + q + 1) * TILE_PIXELS
        })?
        .copy()?;
    let e = DeviceSeq::<u32>::sequence(dev, total)?;
    let q = tile_end.upper_bound::<u32>(&e)?;
    let range = DeviceSeq::zip(&tile_start.slice(..nt), &tile_start.slice(1..))?.gather(&q)?;
    let (ps, pe) = range.unzip();
    let at = DeviceSeq::zip4(&e, &q, &ps, &pe)?;
    // Element e of tile q: pixel `local / (c + 1)` of the tile, and its item k = local % (c + 1)
    // (0: the background, else the tile's circle k - 1).
    let slot = |(e, q, ps, pe): (Expr<u32>, Expr<u32>, Expr<u32>, Expr<u32>)| {
        let c1 = pe - ps + 1;
        let local = e - (ps + q) * TILE_PIXELS;
        (local / c1, local % c1, q, ps)
    };
    let which = at.map(move |a| {
        let (_, k, _, ps) = slot(a);
        Expr::select(k.eq(0), 0, ps + k - 1)
    })?;
    let drawn = by_tile.gather(&which)?;
    let colour = drawn.zip_map(&at, move |c, at| {
        let (pixel, k, q, _) = slot(at);
        let px = q % t * TILE + pixel % TILE;
        let py = q / t * TILE + pixel / TILE;
        let (r, g, b, a) = paint(c, centre(px, size), centre(py, size));
        let bg = |v: Expr<f32>| Expr::select(k.eq(0), 1.0, v);
        (bg(r), bg(g), bg(b), bg(a))
    })?;
    let heads = at.map(move |a| slot(a).1.eq(0))?;
    let by_slot = colour.segmented_reduce_with(&heads, over)?;

    // 5. Row-major pixel (px, py) is slot 256 (tile) + 16 (py % 16) + px % 16 of tile order.
    let rows = DeviceSeq::<u32>::sequence(dev, npix)?.map(move |p| {
        let (px, py) = (p % size, p / size);
        (py / TILE * t + px / TILE) * TILE_PIXELS + py % TILE * TILE + px % TILE
    })?;
    by_slot.gather(&rows)
}

/// The same image by a plain loop: circles in order, each blended into the pixels whose
/// centres it covers (straight alpha, as the definition says).
pub fn render_host(circles: &[Circle], size: u32) -> Vec<[f32; 3]> {
    let s = size as usize;
    let mut img = vec![[1.0f32; 3]; s * s];
    let centre = |p: usize| (p as f32 + 0.5) / size as f32;
    for &(x, y, r, col) in circles {
        let ch = |shift: u32| ((col >> shift) & 255) as f32 / 255.0;
        let (rgb, a) = ([ch(0), ch(8), ch(16)], ch(24));
        // The pixel rows and columns whose centres can be inside, with a pixel to spare.
        let range = |c: f32| {
            let lo = ((c - r) * size as f32 - 1.0).floor().max(0.0) as usize;
            let hi = ((c + r) * size as f32 + 1.0).ceil().max(0.0) as usize;
            lo.min(s)..hi.min(s)
        };
        for py in range(y) {
            for px in range(x) {
                let (dx, dy) = (centre(px) - x, centre(py) - y);
                if dx * dx + dy * dy <= r * r {
                    let p = &mut img[py * s + px];
                    for c in 0..3 {
                        p[c] = a * rgb[c] + (1.0 - a) * p[c];
                    }
                }
            }
        }
    }
    img
}

/// The largest difference of any channel between the two images, and where it is.
pub fn largest_difference(gpu: &[Rgba], host: &[[f32; 3]]) -> (f32, usize) {
    gpu.iter()
        .zip(host)
        .enumerate()
        .map(|(i, (g, h))| {
            let d = [g.0 - h[0], g.1 - h[1], g.2 - h[2], g.3 - 1.0]
                .iter()
                .fold(0.0f32, |m, v| m.max(v.abs()));
            (d, i)
        })
        .fold((0.0, 0), |m, v| if v.0 > m.0 { v } else { m })
}
