// Linkage starter bot (Rust 1.63, edition 2021, standard library only).
// Two players, More and Fewer, take turns laying shared coloured dominoes
// (6 each of R B G Y) on a 7x7 board; at the end More wins with 12 or more
// one-colour groups, Fewer with fewer than 12.
// Protocol: a NEW process is started every turn in your folder. Read
// input.txt: "M6666" (M = you are More, F = Fewer; then dominoes left in
// R B G Y) and 7 rows of '.' empty, 'X' centre, 'x' empty but touching the
// opponent's last domino (forbidden), RBGY played. Write order.txt: colour
// + two adjacent cells, column A-G then row 1-7 from the top ("YA1A2"), or
// "Skip" only when nothing fits. 5 s per turn. Started with any argument,
// print one id line on stdout instead. Stderr is for debugging: koth shows
// it beside your moves in the replay.
// Try it:  koth match --game linkage bot.rs   (watch: add --open)
use std::io::Write;

/// How many cells next to the domino (r,c)-(r2,c2) already hold `colour`.
fn touching(grid: &[Vec<u8>], colour: u8, r: i32, c: i32, r2: i32, c2: i32) -> i32 {
    let mut n = 0;
    for (cr, cc) in [(r, c), (r2, c2)] {
        for (dr, dc) in [(1, 0), (-1, 0), (0, 1), (0, -1)] {
            let (rr, c3) = (cr + dr, cc + dc);
            if rr < 0 || rr >= 7 || c3 < 0 || c3 >= 7 || (rr, c3) == (r, c) || (rr, c3) == (r2, c2) {
                continue;
            }
            if grid[rr as usize][c3 as usize] == colour {
                n += 1;
            }
        }
    }
    n
}

fn main() {
    if std::env::args().len() > 1 {
        println!("StarterRust. koth starter kit (Rust), v1");
        std::io::stdout().flush().unwrap();
        return;
    }
    let text = std::fs::read_to_string("input.txt").expect("input.txt");
    let lines: Vec<&str> = text.split_whitespace().collect();
    let head = lines[0].as_bytes(); // b"M6666": role, then dominoes left in R B G Y
    let me = head[0]; // b'M' (More) or b'F' (Fewer)
    // grid[row][col], row 0 is row 1
    let grid: Vec<Vec<u8>> = lines[1..8].iter().map(|l| l.as_bytes().to_vec()).collect();
    let colours = b"RBGY";

    // Strategy: More wants many groups, so it lays the domino touching the
    // fewest cells of its own colour; Fewer wants few groups, so it touches
    // the most. First found wins ties. This is the place to do better: look
    // ahead, count real groups, block the opponent with your 'x' zone...
    let mut order = String::from("Skip"); // legal only when nothing fits
    let mut best_score: Option<i32> = None;
    for k in 0..4 {
        if head[1 + k] == b'0' {
            continue; // none of this colour left
        }
        for r in 0..7i32 {
            for c in 0..7i32 {
                for (r2, c2) in [(r, c + 1), (r + 1, c)] {
                    // right, down. Only '.' is free: 'x' touches the opponent's last domino.
                    if r2 > 6 || c2 > 6 || grid[r as usize][c as usize] != b'.' || grid[r2 as usize][c2 as usize] != b'.' {
                        continue;
                    }
                    let t = touching(&grid, colours[k], r, c, r2, c2);
                    let score = if me == b'M' { -t } else { t };
                    if best_score.map_or(true, |b| score > b) {
                        best_score = Some(score);
                        let col = |x: i32| (b'A' + x as u8) as char;
                        order = format!("{}{}{}{}{}", colours[k] as char, col(c), r + 1, col(c2), r2 + 1);
                    }
                }
            }
        }
    }

    eprintln!("{} {}: {} (score {:?})", me as char, &lines[0][1..], order, best_score);
    std::fs::write("order.txt", format!("{}\n", order)).expect("order.txt"); // read once this process exits
}
