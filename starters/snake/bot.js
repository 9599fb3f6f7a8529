// Snake starter bot (JavaScript, Node.js 18 or newer).
// Tron light cycles for 2 players on a 32x32 board: both snakes move one cell
// per turn at the same time and leave a permanent trail; whoever crashes
// (edge, any trail, or the other head) last wins.
// Protocol (stdin/stdout, one long-lived process):
//   first print an id line (your bot's name);
//   then each turn you get "ME THEM": the cells of both heads, cell = row*32 + col
//   (you always see the board as the snake that started at 484);
//   answer one line "u", "d", "l" or "r". Anything else crashes you.
//   At the end you get "WIN", "LOSS" or "TIE" instead; then exit.
// Only the heads are sent: remember the trails yourself. 200 ms per move.
// Stderr is for debugging: koth shows it beside your moves in the replay.
// Try it:  koth match --game snake bot.js   (watch: add --open)
const readline = require("readline");

const N = 32;
const taken = new Array(N * N).fill(false); // every cell either snake has ever occupied
const DIRS = { u: [-1, 0], d: [1, 0], l: [0, -1], r: [0, 1] };

// The cell reached from p going d, or -1 past the edge.
function step(p, d) {
  const r = Math.floor(p / N) + DIRS[d][0], c = (p % N) + DIRS[d][1];
  return r >= 0 && r < N && c >= 0 && c < N ? r * N + c : -1;
}

const isFree = (p) => p >= 0 && !taken[p];

// How many free cells can be reached from start (a flood fill).
function room(start) {
  const seen = new Array(N * N).fill(false);
  const todo = [start];
  seen[start] = true;
  let count = 1;
  while (todo.length > 0) {
    const p = todo.pop();
    for (const d in DIRS) {
      const q = step(p, d);
      if (isFree(q) && !seen[q]) { seen[q] = true; todo.push(q); count++; }
    }
  }
  return count;
}

// Your strategy goes here. This one: go where the most room is; on a tie,
// prefer a cell the opponent cannot also step into (head-on = tie).
function choose(me, them) {
  let best = "u", bestScore = -1; // if every way is blocked we crash anyway
  for (const d in DIRS) {
    const q = step(me, d);
    if (!isFree(q)) continue;
    const contested = Object.keys(DIRS).some((e) => step(them, e) === q);
    const score = room(q) * 2 + (contested ? 0 : 1);
    if (score > bestScore) { best = d; bestScore = score; }
  }
  return best;
}

// process.stdout.write to a pipe is sent at once: no flush call is needed.
process.stdout.write("starter_js\n"); // the id line
const rl = readline.createInterface({ input: process.stdin });
rl.on("line", (line) => {
  const words = line.trim().split(/\s+/);
  if (words.length !== 2) { // WIN, LOSS or TIE: the match is over
    console.error("result: " + line);
    process.exit(0); // stdin may stay open, so leave explicitly
  }
  const me = Number(words[0]), them = Number(words[1]);
  taken[me] = taken[them] = true;
  const move = choose(me, them);
  console.error(`at ${me}, opponent at ${them}: ${move}`);
  process.stdout.write(move + "\n");
});
