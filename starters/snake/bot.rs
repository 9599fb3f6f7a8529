// Snake starter bot (Rust 1.63, edition 2021, no crates).
// Tron light cycles for 2 players on a 32x32 board: both snakes move one cell
// per turn at the same time and leave a permanent trail; whoever crashes
// (edge, any trail, or the other head) last wins.
// Protocol (stdin/stdout, one long-lived process):
//   first print an id line (your bot's name);
//   then each turn you get "ME THEM": the cells of both heads, cell = row*32 + col
//   (you always see the board as the snake that started at 484);
//   answer one line "u", "d", "l" or "r" and flush. Anything else crashes you.
//   At the end you get "WIN", "LOSS" or "TIE" instead; then exit.
// Only the heads are sent: remember the trails yourself. 200 ms per move.
// Stderr is for debugging: koth shows it beside your moves in the replay.
// Try it:  koth match --game snake bot.rs   (watch: add --open)
use std::io::{self, BufRead, Write};

const N: usize = 32;
const DIRS: [char; 4] = ['u', 'd', 'l', 'r'];

/// The cell reached from p going d, or None past the edge.
fn step(p: usize, d: char) -> Option<usize> {
    let (r, c) = (p / N, p % N);
    match d {
        'u' if r > 0 => Some(p - N),
        'd' if r + 1 < N => Some(p + N),
        'l' if c > 0 => Some(p - 1),
        'r' if c + 1 < N => Some(p + 1),
        _ => None,
    }
}

/// How many free cells can be reached from start (a flood fill).
fn room(taken: &[bool], start: usize) -> usize {
    let mut seen = vec![false; N * N];
    let mut todo = vec![start];
    seen[start] = true;
    let mut count = 1;
    while let Some(p) = todo.pop() {
        for d in DIRS {
            if let Some(q) = step(p, d) {
                if !taken[q] && !seen[q] {
                    seen[q] = true;
                    todo.push(q);
                    count += 1;
                }
            }
        }
    }
    count
}

/// Your strategy goes here. This one: go where the most room is; on a tie,
/// prefer a cell the opponent cannot also step into (head-on = tie).
fn choose(taken: &[bool], me: usize, them: usize) -> char {
    let mut best = 'u'; // if every way is blocked we crash anyway
    let mut best_score = 0;
    for d in DIRS {
        let q = match step(me, d) {
            Some(q) if !taken[q] => q,
            _ => continue,
        };
        let contested = DIRS.iter().any(|&e| step(them, e) == Some(q));
        let score = room(taken, q) * 2 + if contested { 0 } else { 1 };
        if score > best_score {
            best = d;
            best_score = score;
        }
    }
    best
}

fn main() {
    let mut taken = vec![false; N * N]; // every cell either snake has ever occupied
    let mut out = io::stdout().lock();
    writeln!(out, "starter_rs").unwrap(); // the id line
    out.flush().unwrap();
    for line in io::stdin().lock().lines() {
        let line = line.expect("reading stdin");
        let nums: Vec<usize> = line.split_whitespace().filter_map(|w| w.parse().ok()).collect();
        if nums.len() != 2 {
            // WIN, LOSS or TIE: the match is over
            eprintln!("result: {}", line);
            break;
        }
        let (me, them) = (nums[0], nums[1]);
        taken[me] = true;
        taken[them] = true;
        let mv = choose(&taken, me, them);
        eprintln!("at {}, opponent at {}: {}", me, them, mv);
        writeln!(out, "{}", mv).unwrap();
        out.flush().unwrap(); // without this the answer sits in a buffer
    }
}
