//! Sparse matrix (CSR) times vector: y[r] = sum of values[k] * x[cols[k]] over the entries k
//! of row r. Composed as: gather x by column, multiply, a segmented reduce per row (row
//! starts as head flags), scatter the row sums into y (rows without entries stay 0).
//! Checked against a plain loop; exits non-zero where they differ.
//!
//!     cargo run --release --example csr_spmv

use devseq::{Device, DeviceSeq, Op};

fn main() -> devseq::Result<()> {
    let dev = Device::auto()?;
    println!("device: {}", dev.name());
    let (rows, cols) = (200_000usize, 150_000usize);
    // A random matrix with 0 to 20 entries a row; values and x are small integers / 8 so the
    // float sums are exact and the check can be exact too.
    let mut s = 88172645463325252u64;
    let mut rnd = |m: u64| {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s % m
    };
    let mut row_ptr = vec![0usize];
    let (mut col_idx, mut vals) = (Vec::new(), Vec::new());
    for _ in 0..rows {
        for _ in 0..rnd(21) {
            col_idx.push(rnd(cols as u64) as u32);
            vals.push((rnd(17) as f32 - 8.0) / 8.0);
        }
        row_ptr.push(col_idx.len());
    }
    let x: Vec<f32> = (0..cols).map(|_| (rnd(9) as f32 - 4.0) / 8.0).collect();
    let nnz = vals.len();

    // Head flags at each nonempty row's first entry, and which rows those are.
    let mut flags = vec![0u8; nnz];
    let mut nonempty = Vec::new();
    for r in 0..rows {
        if row_ptr[r] < row_ptr[r + 1] {
            flags[row_ptr[r]] = 1;
            nonempty.push(r as u32);
        }
    }

    let d_vals = DeviceSeq::from_slice(&dev, &vals)?;
    let d_cols = DeviceSeq::from_slice(&dev, &col_idx)?;
    let d_x = DeviceSeq::from_slice(&dev, &x)?;
    let d_flags = DeviceSeq::from_slice(&dev, &flags)?;
    let d_rows = DeviceSeq::from_slice(&dev, &nonempty)?;

    let products = d_vals.zip_map(&d_x.gather(&d_cols)?, |a, b| a * b)?;
    let sums = products.segmented_reduce(&d_flags, Op::Add)?;
    let y = sums
        .scatter(&d_rows, &DeviceSeq::filled(&dev, 0f32, rows)?)?
        .to_vec()?;

    let want: Vec<f32> = (0..rows)
        .map(|r| {
            (row_ptr[r]..row_ptr[r + 1])
                .map(|k| vals[k] * x[col_idx[k] as usize])
                .sum()
        })
        .collect();
    println!(
        "{rows} x {cols} matrix, {nnz} entries; y[0..4] = {:?}",
        &y[..4]
    );
    if y != want {
        eprintln!("MISMATCH against the plain loop");
        std::process::exit(1);
    }
    println!("ok: matches the plain loop");
    Ok(())
}
