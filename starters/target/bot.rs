// Invisible target starter bot (Rust 1.63, edition 2021, no crates).
// 2-16 bots wander a 32x32 torus while walls appear; at the end (when no
// more wall can be placed) the bot nearest the hidden target cell wins.
// Protocol (stdin/stdout, one long-lived process), every turn one line:
//   "POS WALL ENEMY..."  cells numbered row*32 + col; WALL is the wall added
//   since your last turn, or 1024 for none; enemies always in the same order.
// Answer one digit and flush: 0 up, 1 left, 2 stay, 3 right, 4 down
// (the board wraps around). Moving into a wall, or into a cell another bot
// also wants, leaves you where you are. 50 ms per move, or you stay.
// Nothing is sent at the end: stdin closes and the bot is stopped.
// Stderr is for debugging: koth shows it beside your moves in the replay.
// Try it:  koth match --game target bot.rs   (watch: add --open)
use std::io::{self, BufRead, Write};
use std::time::{SystemTime, UNIX_EPOCH};

const N: usize = 32;
const CELLS: usize = N * N;
const NO_WALL: usize = 1024;
const DIRS: [u8; 4] = [0, 1, 3, 4]; // up, left, right, down (2 = stay)

/// The cell reached from p going d, wrapping around the edges.
fn step(p: usize, d: u8) -> usize {
    // (rows, columns) to add; N - 1 is one up or one left, once wrapped around
    let (dr, dc) = [(N - 1, 0), (0, N - 1), (0, 0), (0, 1), (1, 0)][d as usize];
    (p / N + dr) % N * N + (p % N + dc) % N
}

/// Walking distance (a BFS around walls) from start to the farthest likely
/// target: a dead end (a cell with at most one open side) that no other bot
/// stands on; while there are none, the farthest reachable cell.
fn farthest(start: usize, wall: &[bool], enemy: &[bool]) -> usize {
    let mut dist = vec![usize::MAX; CELLS];
    let mut todo = vec![start];
    let mut far_dead_end = None;
    dist[start] = 0;
    let mut i = 0;
    while i < todo.len() {
        let p = todo[i];
        i += 1;
        let mut open_sides = 0;
        for d in DIRS {
            let q = step(p, d);
            if wall[q] {
                continue;
            }
            open_sides += 1;
            if dist[q] == usize::MAX {
                dist[q] = dist[p] + 1;
                todo.push(q);
            }
        }
        if open_sides <= 1 && !enemy[p] {
            far_dead_end = Some(dist[p]);
        }
    }
    // A BFS meets the farthest cells last.
    far_dead_end.unwrap_or(dist[todo[todo.len() - 1]])
}

// Strategy: the target is somewhere in the area we can reach (walls never cut
// a bot off from it). A wall can always fill a dead end unless a bot or the
// target is on it, so the dead ends that stay open are where the target hides:
// at the very end it is the only one no bot stands on. So stand where the
// farthest such dead end is nearest (early on, when there are none: at the
// centre of the area), and follow that spot as walls close in.
// This is the place to do better: weigh dead ends by how long they have stayed
// open, keep out of other bots' way or block them...
fn main() {
    let mut wall = vec![false; CELLS]; // walls never go away: remember them all

    // No crates, so a tiny random generator (xorshift), seeded from the clock.
    let mut seed = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos() as u64 | 1;
    let mut coin = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed & 1 == 1
    };
    let mut out = io::stdout().lock();
    let (mut turn, mut last_pos, mut last_move) = (0, usize::MAX, 2);
    for line in io::stdin().lock().lines() {
        let line = line.expect("reading stdin");
        let f: Vec<usize> = line.split_whitespace().map(|x| x.parse().expect("a number")).collect();
        let (pos, new_wall) = (f[0], f[1]);
        let mut enemy = vec![false; CELLS]; // the other bots, this turn
        for &e in &f[2..] {
            enemy[e] = true;
        }
        turn += 1;
        if new_wall != NO_WALL {
            wall[new_wall] = true;
        }
        let (mut best, mut best_far) = (2, farthest(pos, &wall, &enemy)); // staying is the default
        for d in DIRS {
            let q = step(pos, d);
            if wall[q] || enemy[q] {
                continue; // that move would fail
            }
            let far = farthest(q, &wall, &enemy);
            if far < best_far {
                best = d;
                best_far = far;
            }
        }
        // A move that did not happen means another bot wanted the same cell; if
        // both insist, neither ever moves again. So after one, wait half the time.
        if last_move != 2 && pos == last_pos && coin() {
            best = 2;
        }
        last_pos = pos;
        last_move = best;
        if new_wall != NO_WALL {
            eprintln!("turn {turn}: wall at {new_wall}, I'm at {pos}, move {best}, farthest likely target {best_far} steps away");
        }
        writeln!(out, "{best}").unwrap();
        out.flush().unwrap();
    }
}
