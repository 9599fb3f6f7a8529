// Invisible target starter bot (Rust 1.63, edition 2021, no crates).
// 2-16 bots wander a 32x32 torus while walls appear; at the end (when no
// more wall can be placed) the bot nearest the hidden target cell wins.
// Protocol (stdin/stdout, one long-lived process), every turn one line:
//   "POS WALL ENEMY..."  cells numbered row*32 + col; WALL is the wall added
//   since your last turn, or 1024 for none; enemies always in the same order.
// Answer one digit and flush: 0 up, 1 left, 2 stay, 3 right, 4 down
// (the board wraps around). Moving into a wall or into a cell another bot
// also wants just leaves you where you are. 50 ms per move, or you stay.
// Nothing is sent at the end: stdin closes and the bot is stopped.
// Stderr is for debugging: koth shows it beside your moves in the replay.
// Try it:  koth match --game target bot.rs   (watch: add --open)
use std::io::{self, BufRead, Write};

const N: usize = 32;
const CELLS: usize = N * N;
const NO_WALL: usize = 1024;
const DIRS: [u8; 4] = [0, 1, 3, 4]; // up, left, right, down (2 = stay)

/// The cell reached from p going d, wrapping around the edges.
fn step(p: usize, d: u8) -> usize {
    let (mut r, mut c) = (p / N, p % N);
    match d {
        0 => r = (r + N - 1) % N,
        1 => c = (c + N - 1) % N,
        3 => c = (c + 1) % N,
        4 => r = (r + 1) % N,
        _ => {}
    }
    r * N + c
}

/// Sum of walking distances (a BFS) from start to every cell it can reach.
fn total(start: usize, wall: &[bool]) -> usize {
    let mut dist = vec![usize::MAX; CELLS];
    let mut todo = vec![start];
    dist[start] = 0;
    let mut i = 0;
    while i < todo.len() {
        let p = todo[i];
        i += 1;
        for d in DIRS {
            let q = step(p, d);
            if dist[q] == usize::MAX && !wall[q] {
                dist[q] = dist[p] + 1;
                todo.push(q);
            }
        }
    }
    todo.iter().map(|&p| dist[p]).sum()
}

// Strategy: the target is somewhere in the area we can reach (walls never cut
// a bot off from it), so stand where the AVERAGE walking distance to that area
// is smallest, and follow that spot as walls close the area in.
// This is the place to do better: weigh cells by how likely they are to be
// the target, keep out of other bots' way, block them...
fn main() {
    let mut wall = vec![false; CELLS]; // walls never go away: remember them all
    let mut out = io::stdout().lock();
    let mut turn = 0;
    for line in io::stdin().lock().lines() {
        let line = line.expect("reading stdin");
        let f: Vec<usize> = line.split_whitespace().map(|x| x.parse().expect("a number")).collect();
        let (pos, new_wall, enemies) = (f[0], f[1], &f[2..]);
        turn += 1;
        if new_wall != NO_WALL {
            wall[new_wall] = true;
        }
        let (mut best, mut best_total) = (2, total(pos, &wall)); // staying is the default
        for d in DIRS {
            let q = step(pos, d);
            if wall[q] || enemies.contains(&q) {
                continue; // that move would fail
            }
            let t = total(q, &wall);
            if t < best_total {
                best = d;
                best_total = t;
            }
        }
        if new_wall != NO_WALL {
            eprintln!("turn {turn}: wall at {new_wall}, I'm at {pos}, move {best} (sum of distances {best_total})");
        }
        writeln!(out, "{best}").unwrap();
        out.flush().unwrap();
    }
}
