// Flit starter bot (JavaScript, Node.js 18 or newer).
// Four bots on a 32x32 torus (edges wrap; neighbours are up/down/left/right)
// take turns moving one of their pieces to any empty square next to ANOTHER
// of their pieces; landing next to a neutral piece converts it. Most pieces wins.
// Protocol (stdin/stdout, one long-lived process):
//   first line: your colour, "1" to "4";
//   then updates "x y c" (x = column, y = row, c = 0 empty, 1-4 a bot,
//   5 neutral) and, on your turn, "M": answer "x0 y0 x1 y1".
//   The board is never resent: keep it up to date from the updates yourself.
//   "x y x y" (same square twice) passes; an illegal move is a pass counted
//   as invalid output. Four passes in a row end the game.
//   50 ms per move; 5 timeouts in a row freeze you. There is no end message:
//   koth stops your process when the game ends (exit if stdin closes).
// Stderr is for debugging: koth shows it beside your moves in the replay.
// Try it:  koth match --game flit bot.js   (watch: add --open)
const readline = require("readline");

const N = 32, FAR = 99;                 // FAR: "distance" when there is no neutral piece
const board = new Array(N * N).fill(0); // board[y*N + x]: 0 empty, 1-4 bots, 5 neutral
const nb = [];                          // the 4 neighbours of each square
for (let y = 0; y < N; y++)
  for (let x = 0; x < N; x++)
    nb.push([y * N + (x + 1) % N, y * N + (x + N - 1) % N, ((y + 1) % N) * N + x, ((y + N - 1) % N) * N + x]);
let me = 0;

// How many of the neighbours of square i hold colour c.
const count = (i, c) => nb[i].filter((j) => board[j] === c).length;

// Steps from every square to the nearest neutral piece (a BFS).
function distances() {
  const dist = new Array(N * N).fill(FAR), todo = [];
  for (let i = 0; i < N * N; i++) if (board[i] === 5) { dist[i] = 0; todo.push(i); }
  for (let h = 0; h < todo.length; h++)
    for (const j of nb[todo[h]]) if (dist[j] === FAR) { dist[j] = dist[todo[h]] + 1; todo.push(j); }
  return dist;
}

// Your strategy goes here. This one: land where the most neutral pieces are
// taken, else as close as possible to one (else where our pieces are
// densest), and move our piece that is farthest from any neutral.
// Returns [origin, target, neutral pieces taken]; origin === target passes.
function choose() {
  const dist = distances();
  let best = -1, bestScore = -1, pieces = 0;
  for (let i = 0; i < N * N; i++) {     // a legal target: empty, next to our piece
    if (board[i] === me) pieces++;
    if (board[i] !== 0 || count(i, me) === 0) continue;
    const score = count(i, 5) * 10000 + (100 - dist[i]) * 10 + count(i, me);
    if (score > bestScore) { best = i; bestScore = score; }
  }
  if (best < 0 || pieces < 2) return [0, 0, 0];
  // The target must stay next to another of our pieces once the mover left.
  const anchors = nb[best].filter((j) => board[j] === me);
  const only = anchors.length === 1 ? anchors[0] : -1;
  let pick = -1, pickScore = -1;
  for (let i = 0; i < N * N; i++) {
    if (board[i] !== me || i === only) continue;
    const score = dist[i] * 10 + 4 - count(i, me);
    if (score > pickScore) { pick = i; pickScore = score; }
  }
  return [pick, best, Math.floor(bestScore / 10000)];
}

const rl = readline.createInterface({ input: process.stdin });
rl.on("line", (line) => {
  const w = line.trim().split(/\s+/);
  if (w[0] === "M") {
    const [o, t, takes] = choose();
    const move = `${o % N} ${Math.floor(o / N)} ${t % N} ${Math.floor(t / N)}`;
    if (takes) console.error(`${move}: takes ${takes} neutral`);
    process.stdout.write(move + "\n");  // sent at once to a pipe: no flush needed
  } else if (w.length === 3) {          // an update "x y c"
    board[Number(w[1]) * N + Number(w[0])] = Number(w[2]);
  } else if (w.length === 1 && w[0] !== "") {
    me = Number(w[0]);                  // the very first line: our colour
  }
});
rl.on("close", () => process.exit(0));
