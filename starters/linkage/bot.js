// Linkage starter bot (Node.js 18 or newer, standard library only).
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
// Try it:  koth match --game linkage bot.js   (watch: add --open)
const fs = require("fs");

if (process.argv.length > 2) {
  console.log("StarterJs. koth starter kit (JavaScript), v1");
  process.exit(0);
}

const lines = fs.readFileSync("input.txt", "utf8").trim().split(/\s+/);
const me = lines[0][0]; // 'M' (More) or 'F' (Fewer)
const left = lines[0].slice(1, 5); // dominoes left in R B G Y, e.g. "6666"
const grid = lines.slice(1, 8); // grid[row][col], row 0 is row 1

// How many cells next to the domino (r,c)-(r2,c2) already hold `colour`.
function touching(colour, r, c, r2, c2) {
  let n = 0;
  for (const [cr, cc] of [[r, c], [r2, c2]]) {
    for (const [dr, dc] of [[1, 0], [-1, 0], [0, 1], [0, -1]]) {
      const rr = cr + dr, c3 = cc + dc;
      if (rr < 0 || rr >= 7 || c3 < 0 || c3 >= 7) continue;
      if ((rr === r && c3 === c) || (rr === r2 && c3 === c2)) continue;
      if (grid[rr][c3] === colour) n++;
    }
  }
  return n;
}

// Strategy: More wants many groups, so it lays the domino touching the
// fewest cells of its own colour; Fewer wants few groups, so it touches the
// most. First found wins ties. This is the place to do better: look ahead,
// count real groups, block the opponent with your 'x' zone...
let order = "Skip"; // legal only when nothing fits
let bestScore = null;
for (let k = 0; k < 4; k++) {
  const colour = "RBGY"[k];
  if (left[k] === "0") continue; // none of this colour left
  for (let r = 0; r < 7; r++) {
    for (let c = 0; c < 7; c++) {
      for (const [r2, c2] of [[r, c + 1], [r + 1, c]]) { // right, down
        // Only '.' is free: 'x' touches the opponent's last domino.
        if (r2 > 6 || c2 > 6 || grid[r][c] !== "." || grid[r2][c2] !== ".") continue;
        const t = touching(colour, r, c, r2, c2);
        const score = me === "M" ? -t : t;
        if (bestScore === null || score > bestScore) {
          bestScore = score;
          order = colour + "ABCDEFG"[c] + (r + 1) + "ABCDEFG"[c2] + (r2 + 1);
        }
      }
    }
  }
}

console.error(`${me} ${left}: ${order} (score ${bestScore})`);
fs.writeFileSync("order.txt", order + "\n"); // read once this process exits
