// Minimal Flit bot: answers every "M" line with the move "0 0 0 0".
use std::io::{self, BufRead, Write};

fn main() {
    eprintln!("hello from rust");
    let mut out = io::stdout().lock();
    for line in io::stdin().lock().lines() {
        // lines() drops "\n" and "\r\n"
        if line.expect("reading stdin") == "M" {
            writeln!(out, "0 0 0 0").unwrap();
            out.flush().unwrap();
        }
    }
}
