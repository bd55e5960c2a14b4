//! The `innosim` command line.

fn main() {
    println!("innosim");
}
