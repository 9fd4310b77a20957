//! Lazy sequences that read one stored column at several shifts (`xs.slice(s..s + n)` beside
//! `xs.slice(s + d..s + d + n)`: the neighbour differences and comparisons of stencils and
//! `find_repeats`, whose shifted column the GPU reads from the other's vectors): every consumer
//! gives what a plain loop over the stored elements gives, for elements of 1 to 8 bytes,
//! shifts of 1 to 3, slices that start anywhere, at edge sizes.

use crate::common::*;
use devseq::Op;

macro_rules! shifted_reads {
    ($name:ident, $t:ty) => {
        #[test]
        fn $name() {
            let mut r = Rng::new(stringify!($name));
            for &n in sizes() {
                for (s, d) in [(0usize, 1usize), (1, 1), (0, 2), (5, 3), (3, 2)] {
                    let xs: Vec<$t> = (0..n + s + d).map(|_| r.below(4) as $t).collect();
                    let a = upload(&xs);
                    let (x, y) = (a.slice(s..s + n), a.slice(s + d..s + d + n));
                    let what = format!("{} n={n} start {s} shift {d}", stringify!($t));
                    let want: Vec<$t> = (0..n)
                        .map(|i| xs[s + d + i].wrapping_sub(xs[s + i]))
                        .collect();
                    let diff = x.zip_map(&y, |p, q| q - p).unwrap();
                    assert_eq!(diff.to_vec().unwrap(), want, "{what}: differences");
                    let sum = want.iter().fold(0 as $t, |acc, &v| acc.wrapping_add(v));
                    if n > 0 {
                        assert_eq!(diff.reduce(Op::Add).unwrap(), sum, "{what}: reduce");
                    }
                    let scan: Vec<$t> = want
                        .iter()
                        .scan(0 as $t, |acc, &v| {
                            *acc = acc.wrapping_add(v);
                            Some(*acc)
                        })
                        .collect();
                    let got = diff.inclusive_scan(Op::Add).unwrap().to_vec().unwrap();
                    assert_eq!(got, scan, "{what}: inclusive scan");
                    let same: Vec<u32> = (0..n as u32)
                        .filter(|&i| xs[s + i as usize] == xs[s + d + i as usize])
                        .collect();
                    let eq = x.zip_map(&y, |p, q| p.eq(q)).unwrap();
                    let got = eq.nonzero_indices::<u32>().unwrap().to_vec().unwrap();
                    assert_eq!(got, same, "{what}: positions of equal neighbours");
                    let kept: Vec<$t> = (0..n)
                        .filter(|&i| xs[s + i] == xs[s + d + i])
                        .map(|i| xs[s + i])
                        .collect();
                    assert_eq!(
                        x.compact(&eq).unwrap().to_vec().unwrap(),
                        kept,
                        "{what}: compact"
                    );
                }
            }
        }
    };
}

shifted_reads!(shifted_reads_u8, u8);
shifted_reads!(shifted_reads_u16, u16);
shifted_reads!(shifted_reads_u32, u32);
shifted_reads!(shifted_reads_u64, u64);
shifted_reads!(shifted_reads_i32, i32);
