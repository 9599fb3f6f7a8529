// Grid-Routing Battle, koth's own bot: builds a column from the top row
// down, in the first column (where column.py builds up from the bottom, so
// the two meet), skipping vertices someone already activated and moving
// one column east when the next one is broken. Breaks nothing.
const lines = require("readline").createInterface({ input: process.stdin });
let side = 0, col = 0, broken = new Set(), active = new Set();
const key = (x, y) => x + "," + y;
lines.on("line", (line) => {
  const w = line.trim().split(/\s+/);
  if (w[0] === "BEGIN") {
    side = +w[3]; col = 0; broken = new Set(); active = new Set();
  } else if (w[0] === "BROKEN" || w[0] === "OWNED") {
    for (const c of w.slice(2)) if (c !== "N") (w[0] === "BROKEN" ? broken : active).add(c);
  } else if (w[0] === "DESTROY") {
    process.stdout.write("NONE\n");
  } else if (w[0] === "ACTIVATE") {
    let y = side - 1;
    while (y >= 0 && (active.has(key(col, y)) || broken.has(key(col, y)))) {
      if (broken.has(key(col, y))) { col = (col + 1) % side; y = side - 1; continue; }
      y--;
    }
    process.stdout.write(y >= 0 ? "VERTEX " + key(col, y) + "\n" : "NONE\n");
  } else if (w[0] === "SCORE") {
    process.exit(0);
  }
});
