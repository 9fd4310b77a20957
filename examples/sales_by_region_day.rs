//! A group-by over tuple keys with a lazy gather: revenue per (region, day) of sales whose
//! price is looked up in a product table. The price lookup (`prices.gather(&product)`) is read
//! inside the pass that multiplies it by the quantity, so no gathered array is stored; the
//! (region, day) pairs sort as one packed radix key; the best day of each region comes from
//! a second group-by over the regions. Checked against a plain loop over a `BTreeMap`; exits
//! non-zero where they differ.
//!
//!     cargo run --release --example sales_by_region_day [-- --len N]

mod common;

use devseq::{Device, DeviceSeq, Expr, Op};
use std::collections::BTreeMap;

fn main() -> devseq::Result<()> {
    let n: usize = common::flag("--len", 2_000_000);
    let (regions, days, products) = (12u64, 365u64, 5_000u64);
    let dev = Device::auto()?;
    println!("device: {}, {n} sales", dev.name());

    let mut s = 0x9E37_79B9_7F4A_7C15u64;
    let mut rnd = |m: u64| {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s % m
    };
    let region: Vec<u8> = (0..n).map(|_| rnd(regions) as u8).collect();
    let day: Vec<u16> = (0..n).map(|_| rnd(days) as u16).collect();
    let product: Vec<u32> = (0..n).map(|_| rnd(products) as u32).collect();
    let quantity: Vec<u32> = (0..n).map(|_| 1 + rnd(20) as u32).collect();
    // Prices in cents, so that every sum is exact.
    let prices: Vec<u64> = (0..products).map(|_| 100 + rnd(100_000)).collect();

    let d_prices = DeviceSeq::from_slice(&dev, &prices)?;
    let d_product = DeviceSeq::from_slice(&dev, &product)?;
    let d_quantity = DeviceSeq::from_slice(&dev, &quantity)?;
    // Revenue of each sale: the price read through the lazy gather, in the same pass.
    let revenue = d_prices
        .gather(&d_product)?
        .zip_map(&d_quantity, |p, q| p * q.cast::<u64>())?;
    let keys = DeviceSeq::zip(
        &DeviceSeq::from_slice(&dev, &region)?,
        &DeviceSeq::from_slice(&dev, &day)?,
    )?;
    // Every (region, day) once, ascending, with its revenue.
    let (by_day, totals) = keys.group_by_key(&revenue, Op::Add)?;
    // The best day of each region: the largest (revenue, day) of each region's run.
    let (rk, dk) = by_day.unzip();
    let ranked = DeviceSeq::zip(&totals, &dk)?;
    let (best_region, best) = rk.reduce_by_key_with(&ranked, |a, b| {
        let take_b = b.0.gt(a.0) | (b.0.eq(a.0) & b.1.lt(a.1));
        (
            Expr::select(take_b, b.0, a.0),
            Expr::select(take_b, b.1, a.1),
        )
    })?;

    let got: Vec<((u8, u16), u64)> = by_day.to_vec()?.into_iter().zip(totals.to_vec()?).collect();
    let best: Vec<(u8, (u64, u16))> = best_region
        .to_vec()?
        .into_iter()
        .zip(best.to_vec()?)
        .collect();

    let mut want: BTreeMap<(u8, u16), u64> = BTreeMap::new();
    for i in 0..n {
        *want.entry((region[i], day[i])).or_default() +=
            prices[product[i] as usize] * quantity[i] as u64;
    }
    let mut want_best: BTreeMap<u8, (u64, u16)> = BTreeMap::new();
    for (&(r, d), &t) in &want {
        let e = want_best.entry(r).or_insert((t, d));
        if t > e.0 {
            *e = (t, d);
        }
    }
    let ok = got == want.into_iter().collect::<Vec<_>>()
        && best == want_best.into_iter().collect::<Vec<_>>();
    println!("{} (region, day) groups; best days:", got.len());
    for (r, (t, d)) in &best {
        println!("  region {r:2}: day {d:3}, {}.{:02}", t / 100, t % 100);
    }
    println!("matches a plain loop: {ok}");
    if !ok {
        std::process::exit(1);
    }
    Ok(())
}
