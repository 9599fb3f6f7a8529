// Slime starter bot (Node.js 18 or newer).
// Four slimes start in the corners of an 8x8 board; each turn you spread,
// jump or merge one of your slimes, and whoever covers the most squares wins.
// Protocol: a NEW process is started every turn; the state is the one
// command-line argument "p,row0,row1,...,row7" (p = your player 1-4, rows
// of '.' for empty and '1'-'4' for slime). Answer one line "r0 c0 r1 c1"
// (move the slime at row r0, column c0 to r1 c1) on stdout; 0.1 s per turn.
// Node itself takes ~70 ms of that to start, so keep the work per turn light.
// Stderr is for debugging: koth shows it beside your moves in the replay.
// Your folder is the working directory and is writable (keep files there).
// Try it:  koth match --game slime bot.js        (your bot in all 4 seats)
// Watch:   koth match --game slime bot.js --open (replay in the browser)
"use strict";

const fields = process.argv[2].split(",");
const me = fields[0];            // your player number, as a string
const board = fields.slice(1);   // board[r][c] is '.', '1', '2', '3' or '4'
const n = board.length;

// How many squares we gain by moving (r, c) to (r2, c2); null if illegal.
// Distance is Chebyshev: diagonal neighbours are 1 away.
function gain(r, c, r2, c2) {
  const dist = Math.max(Math.abs(r2 - r), Math.abs(c2 - c));
  const target = board[r2][c2];
  let enemies = 0, empty = 0;
  for (let a = r2 - 1; a <= r2 + 1; a++) {
    for (let b = c2 - 1; b <= c2 + 1; b++) {
      if (a < 0 || b < 0 || a >= n || b >= n || (a === r2 && b === c2)) continue;
      if (board[a][b] === ".") empty++;
      else if (board[a][b] !== me) enemies++;
    }
  }
  // Spread (1 away) keeps the old slime; jump (2 away) moves it. Either
  // way every enemy slime around the target becomes ours.
  if (target === "." && (dist === 1 || dist === 2)) return enemies + (dist === 1 ? 1 : 0);
  // Merge: the moved slime disappears (its cell stays empty) and the
  // empty cells around the target become ours.
  if (target === me && dist === 1) return empty - 1;
  return null;
}

// Strategy: the legal move that gains the most squares (first found wins
// ties). This is the place to do better: look ahead, defend...
let best = null, bestGain = -100;
for (let r = 0; r < n; r++) {
  for (let c = 0; c < n; c++) {
    if (board[r][c] !== me) continue;
    for (let r2 = r - 2; r2 <= r + 2; r2++) {
      for (let c2 = c - 2; c2 <= c + 2; c2++) {
        if (r2 < 0 || c2 < 0 || r2 >= n || c2 >= n) continue;
        const g = gain(r, c, r2, c2);
        if (g !== null && g > bestGain) {
          best = [r, c, r2, c2];
          bestGain = g;
        }
      }
    }
  }
}

// console.log / console.error write synchronously to pipes, so nothing is
// left unflushed when the script ends.
if (best === null) {
  // No slime left, or none can move: all that is left is to pass, which
  // koth records as an invalid move (the game goes on).
  console.error("no legal move: passing");
  console.log("pass");
} else {
  // Debug output goes BEFORE the answer: the process is stopped as soon
  // as its answer line is read.
  console.error(`player ${me}: move ${best.join(" ")} gains ${bestGain}`);
  console.log(best.join(" "));
}
