//! The two ways a backend reads a lazy sequence give the same bits: whole ranges (`to_vec`:
//! on the host, evaluated a block of elements at a time, node by node) and single elements
//! at gathered positions (on the host, one element's graph at a time). For every kind of
//! leaf (columns of each width, f16/bf16 with raw bits, row numbers, constants, head flags,
//! random sequences) and slices that start inside and between blocks.

use crate::common::{assert_bits, dev};
use devseq::{DeviceSeq, Element, Expr, bf16, f16};

/// `s` and slices of it, read whole and by a gather of every position.
fn check<T: Element + std::fmt::Debug>(name: &str, s: &DeviceSeq<T>) {
    let n = s.len();
    let ranges = [
        (0, n),
        (1.min(n), n),
        (n / 3, n),
        (n / 2, n / 2 + 1.min(n - n / 2)),
        (n, n),
        (255.min(n), 513.min(n)),
        (257.min(n), n),
    ];
    for (a, b) in ranges {
        let sl = s.slice(a..b);
        let whole = sl.to_vec().unwrap();
        let idx = DeviceSeq::<u32>::sequence(sl.device(), sl.len()).unwrap();
        let each = sl.gather(&idx).unwrap().to_vec().unwrap();
        assert_eq!(whole.len(), sl.len(), "{name} {a}..{b}");
        assert_bits(&whole, &each, &format!("{name} {a}..{b}"));
    }
}

/// Floats with edge values (zeros, NaNs of both signs and other payloads, infinities, a
/// subnormal, f16's largest and past it) every third element.
fn floats(n: usize) -> Vec<f32> {
    let edge = [
        0.0f32,
        -0.0,
        f32::NAN,
        -f32::NAN,
        f32::from_bits(0x7f80_0001),
        f32::from_bits(0xffa0_0001),
        f32::INFINITY,
        f32::NEG_INFINITY,
        1e-40,
        65504.0,
        65520.0,
        3.4e38,
        1.0,
        -1.5,
        0.5,
    ];
    (0..n)
        .map(|i| match i % 3 {
            0 => edge[(i / 3) % edge.len()],
            _ => (i as f32 * 0.37).sin() * 1e3,
        })
        .collect()
}

#[test]
fn whole_and_gathered_reads_agree() {
    let d = dev();
    for n in [0usize, 1, 255, 256, 257, 1000, 16385, 40000] {
        let fx = floats(n);
        let f = DeviceSeq::from_slice(&d, &fx).unwrap();
        let hx: Vec<f16> = fx.iter().map(|&x| f16::from_f32(x)).collect();
        let h = DeviceSeq::from_slice(&d, &hx).unwrap();
        let raw: Vec<u16> = (0..n).map(|i| (i as u16).wrapping_mul(40503)).collect();
        let hraw: Vec<f16> = raw.iter().map(|&b| f16::from_bits(b)).collect();
        let hraw = DeviceSeq::from_slice(&d, &hraw).unwrap();
        let braw: Vec<bf16> = raw.iter().map(|&b| bf16::from_bits(b)).collect();
        let braw = DeviceSeq::from_slice(&d, &braw).unwrap();
        let ix: Vec<i32> = (0..n)
            .map(|i| (i as i32).wrapping_mul(-1640531535))
            .collect();
        let ints = DeviceSeq::from_slice(&d, &ix).unwrap();
        let pos = DeviceSeq::<u32>::sequence(&d, n).unwrap();
        let runs: Vec<u8> = (0..n).map(|i| (i / 3) as u8).collect();
        let runs = DeviceSeq::from_slice(&d, &runs).unwrap();
        let one = f16::from_f32(1.0);

        check("f32", &f);
        let m = f.map(|x| ((x * 2.0 + 1.0).sqrt().min(x) - x.abs()).max(x / 3.0));
        check("f32 map", &m.unwrap());
        check(
            "f32 select",
            &f.map(|x| Expr::select(x.lt(1.0f32), x.exp(), x.ln()))
                .unwrap(),
        );
        check(
            "f32 bits",
            &f.map(|x| (x + 1.0f32).to_bits() ^ x.to_bits()).unwrap(),
        );
        check("f32 as f16", &f.cast::<f16>().unwrap());
        check("f32 as bf16", &f.cast::<bf16>().unwrap());
        check("f32 as i8", &f.cast::<i8>().unwrap());
        check("f32 as u64", &f.cast::<u64>().unwrap());
        check("f16", &h);
        check("f16 raw", &hraw);
        check("bf16 raw", &braw);
        check("f16 raw map", &hraw.map(|x| x * one).unwrap());
        check("f16 raw bits", &hraw.map(|x| x.to_bits()).unwrap());
        check("bf16 raw bits", &braw.map(|x| x.to_bits()).unwrap());
        check("f16 raw as f32", &hraw.cast::<f32>().unwrap());
        check("bf16 raw as f64", &braw.cast::<f64>().unwrap());
        check("f16 map", &h.map(|x| (x * x + x).sqrt()).unwrap());
        check(
            "f16 chain",
            &h.map(|x| x * x).unwrap().map(|y| y + y).unwrap(),
        );
        check("f16 as u8", &h.cast::<u8>().unwrap());
        let ops = ints.zip_map(&pos, |x, s| ((x << s) ^ (x >> 3u32)) % 7 - (!x).min(x / 5));
        check("i32 ops", &ops.unwrap());
        check(
            "i32 select",
            &ints.map(|x| Expr::select(x.ge(0), x, -x)).unwrap(),
        );
        check("i32 as f16", &ints.cast::<f16>().unwrap());
        check("i32 as bf16", &ints.cast::<bf16>().unwrap());
        check("u32 sequence", &pos);
        check("u8 sequence", &DeviceSeq::<u8>::sequence(&d, n).unwrap());
        check("f16 sequence", &DeviceSeq::<f16>::sequence(&d, n).unwrap());
        check("u64 sequence", &DeviceSeq::<u64>::sequence(&d, n).unwrap());
        check("sequence map", &pos.map(|i| i * 3u32 + 1u32).unwrap());
        check(
            "filled",
            &DeviceSeq::filled(&d, f16::from_f32(1.5), n).unwrap(),
        );
        let sevens = DeviceSeq::filled(&d, 7i8, n).unwrap();
        check(
            "filled zip",
            &sevens.zip_map(&runs, |a, b| a + b.cast::<i8>()).unwrap(),
        );
        check("heads", &runs.head_flags().unwrap());
        check("heads raw", &hraw.head_flags().unwrap());
        let heads = runs.head_flags().unwrap();
        check(
            "heads zip",
            &heads
                .zip_map(&runs, |h, x| h.cast::<u8>() * 10u8 + x)
                .unwrap(),
        );
        check(
            "random u32",
            &DeviceSeq::<u32>::random_bits(&d, n, 5).unwrap(),
        );
        check(
            "random u64",
            &DeviceSeq::<u64>::random_bits(&d, n, 5).unwrap(),
        );
        check(
            "uniform f16",
            &DeviceSeq::<f16>::random_uniform(&d, n, 5).unwrap(),
        );
        check(
            "normal bf16",
            &DeviceSeq::<bf16>::random_normal(&d, n, 5).unwrap(),
        );
        check(
            "normal f64",
            &DeviceSeq::<f64>::random_normal(&d, n, 5).unwrap(),
        );
        let normal = DeviceSeq::<f32>::random_normal(&d, n, 5).unwrap();
        check("normal zip", &normal.zip_map(&f, |a, b| a * b).unwrap());
        let (a, b) = (f.slice(n / 4..), pos.slice(..n - n / 4));
        check(
            "sliced zip",
            &a.zip_map(&b, |x, i| x + i.cast::<f32>()).unwrap(),
        );
        let (a, b) = (h.slice(n / 4..), hraw.slice(..n - n / 4));
        check("sliced f16 zip", &a.zip_map(&b, |x, y| x - y).unwrap());
        if n > 3 {
            let heads = runs.slice(1..).head_flags().unwrap();
            check("sliced heads", &heads.slice(1..));
            let bits = DeviceSeq::<u32>::random_bits(&d, n, 9).unwrap();
            check("sliced random", &bits.slice(3..));
            let twice = DeviceSeq::<u64>::sequence(&d, n).unwrap().slice(2..);
            check(
                "sliced sequence",
                &twice.map(|x| x * 2u64).unwrap().slice(1..),
            );
        }
    }
}
