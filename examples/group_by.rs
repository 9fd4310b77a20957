//! Group-by: total and count of sales per customer with `scatter_combine`, deterministic for
//! floats (run twice, the bits agree, unlike atomics), and the mean per customer. Checked
//! against a plain loop; exits non-zero where they differ.
//!
//!     cargo run --release --example group_by

use devseq::{Device, DeviceSeq, Op};

fn main() -> devseq::Result<()> {
    let dev = Device::auto()?;
    println!("device: {}", dev.name());
    let (n, customers) = (2_000_000usize, 10_000usize);
    let mut s = 0x9E3779B97F4A7C15u64;
    let mut rnd = |m: u64| {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s % m
    };
    let who: Vec<u32> = (0..n).map(|_| rnd(customers as u64) as u32).collect();
    let amount: Vec<f64> = (0..n).map(|_| rnd(100_000) as f64 / 100.0).collect();

    let d_who = DeviceSeq::from_slice(&dev, &who)?;
    let d_amount = DeviceSeq::from_slice(&dev, &amount)?;
    let zeros = DeviceSeq::filled(&dev, 0f64, customers)?;
    let totals = d_amount.scatter_combine(&d_who, &zeros, Op::Add)?;
    let again = d_amount.scatter_combine(&d_who, &zeros, Op::Add)?;
    let counts = DeviceSeq::filled(&dev, 1u32, n)?.scatter_combine(
        &d_who,
        &DeviceSeq::filled(&dev, 0u32, customers)?,
        Op::Add,
    )?;
    let means = totals.zip_map(&counts, |t, c| t / c.cast::<f64>().max(1.0))?;

    let (t, t2, c, m) = (
        totals.to_vec()?,
        again.to_vec()?,
        counts.to_vec()?,
        means.to_vec()?,
    );
    let bits_equal = t.iter().zip(&t2).all(|(a, b)| a.to_bits() == b.to_bits());
    let mut want_t = vec![0f64; customers];
    let mut want_c = vec![0u32; customers];
    for (&w, &a) in who.iter().zip(&amount) {
        want_t[w as usize] += a;
        want_c[w as usize] += 1;
    }
    let close = t
        .iter()
        .zip(&want_t)
        .all(|(g, w)| (g - w).abs() <= 1e-9 * w.abs().max(1.0));
    println!(
        "customer 0: {} sales, total {:.2}, mean {:.2}; two runs bitwise equal: {bits_equal}",
        c[0], t[0], m[0]
    );
    if !(close && c == want_c && bits_equal) {
        eprintln!("MISMATCH against the plain loop (or between runs)");
        std::process::exit(1);
    }
    println!("ok: matches the plain loop");
    Ok(())
}
