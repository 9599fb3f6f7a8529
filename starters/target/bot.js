// Invisible target starter bot (JavaScript, Node.js 18 or newer).
// 2-16 bots wander a 32x32 torus while walls appear; at the end (when no
// more wall can be placed) the bot nearest the hidden target cell wins.
// Protocol (stdin/stdout, one long-lived process), every turn one line:
//   "POS WALL ENEMY..."  cells numbered row*32 + col; WALL is the wall added
//   since your last turn, or 1024 for none; enemies always in the same order.
// Answer one digit: 0 up, 1 left, 2 stay, 3 right, 4 down (the board wraps
// around); process.stdout.write sends it at once, no flush needed. Moving
// into a wall, or into a cell another bot also wants, leaves you where you
// are. 50 ms per move, or you stay. Nothing is sent at the end: stdin
// closes and the bot is stopped.
// Stderr is for debugging: koth shows it beside your moves in the replay.
// Try it:  koth match --game target bot.js   (watch: add --open)
const readline = require("readline");

const N = 32, CELLS = N * N, NO_WALL = 1024;
const DIRS = [0, 1, 3, 4];                  // up, left, right, down (2 = stay)
const wall = new Uint8Array(CELLS);         // walls never go away: remember them all

// The cell reached from p going d, wrapping around the edges.
function step(p, d) {
  let r = Math.floor(p / N), c = p % N;
  if (d === 0) r = (r + N - 1) % N;
  else if (d === 1) c = (c + N - 1) % N;
  else if (d === 3) c = (c + 1) % N;
  else if (d === 4) r = (r + 1) % N;
  return r * N + c;
}

// Walking distance (a BFS around walls) from start to the farthest likely
// target: a dead end (a cell with at most one open side) that no other bot
// stands on; while there are none, the farthest reachable cell.
const dist = new Int32Array(CELLS), todo = new Int32Array(CELLS);  // reused: no garbage
function farthest(start, enemy) {
  dist.fill(-1);
  let head = 0, tail = 0, farDeadEnd = -1;
  dist[start] = 0;
  todo[tail++] = start;
  while (head < tail) {
    const p = todo[head++];
    let openSides = 0;
    for (const d of DIRS) {
      const q = step(p, d);
      if (wall[q]) continue;
      openSides++;
      if (dist[q] < 0) { dist[q] = dist[p] + 1; todo[tail++] = q; }
    }
    if (openSides <= 1 && !enemy[p]) farDeadEnd = dist[p];
  }
  // A BFS meets the farthest cells last.
  return farDeadEnd >= 0 ? farDeadEnd : dist[todo[tail - 1]];
}

// Strategy: the target is somewhere in the area we can reach (walls never cut
// a bot off from it). A wall can always fill a dead end unless a bot or the
// target is on it, so the dead ends that stay open are where the target hides:
// at the very end it is the only one no bot stands on. So stand where the
// farthest such dead end is nearest (early on, when there are none: at the
// centre of the area), and follow that spot as walls close in.
// This is the place to do better: weigh dead ends by how long they have stayed
// open, keep out of other bots' way or block them...
let turn = 0, lastPos = -1, lastMove = 2;
const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on("line", (line) => {
  const f = line.trim().split(/\s+/).map(Number);
  const [pos, newWall] = f;
  const enemy = new Uint8Array(CELLS);      // the other bots, this turn
  for (const e of f.slice(2)) enemy[e] = 1;
  turn++;
  if (newWall !== NO_WALL) wall[newWall] = 1;
  let best = 2, bestFar = farthest(pos, enemy);    // staying is the default
  for (const d of DIRS) {
    const q = step(pos, d);
    if (wall[q] || enemy[q]) continue;      // that move would fail
    const far = farthest(q, enemy);
    if (far < bestFar) { best = d; bestFar = far; }
  }
  // A move that did not happen means another bot wanted the same cell; if
  // both insist, neither ever moves again. So after one, wait half the time.
  if (lastMove !== 2 && pos === lastPos && Math.random() < 0.5) best = 2;
  lastPos = pos;
  lastMove = best;
  if (newWall !== NO_WALL)
    process.stderr.write(`turn ${turn}: wall at ${newWall}, I'm at ${pos}, move ${best}, farthest likely target ${bestFar} steps away\n`);
  process.stdout.write(best + "\n");
});
