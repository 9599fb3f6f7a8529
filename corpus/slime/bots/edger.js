// Slime bot for koth's corpus (koth's own): spreads (else jumps) to the
// empty cell nearest the board's centre, the first found on ties; passes
// with "0 0 0 0" when it cannot move.
const [me, ...rows] = process.argv[2].split(",");
const n = rows.length;
const mid = (n - 1) / 2;
let best = null;
let bestKey = null;
for (let r = 0; r < n; r++) {
  for (let c = 0; c < n; c++) {
    if (rows[r][c] !== me) continue;
    for (let r2 = Math.max(0, r - 2); r2 <= Math.min(n - 1, r + 2); r2++) {
      for (let c2 = Math.max(0, c - 2); c2 <= Math.min(n - 1, c + 2); c2++) {
        if (rows[r2][c2] !== ".") continue;
        const dist = Math.max(Math.abs(r2 - r), Math.abs(c2 - c));
        const key = [dist, Math.max(Math.abs(r2 - mid), Math.abs(c2 - mid)) + Math.abs(r2 - mid) + Math.abs(c2 - mid)];
        if (bestKey === null || key[0] < bestKey[0] || (key[0] === bestKey[0] && key[1] < bestKey[1])) {
          best = [r, c, r2, c2];
          bestKey = key;
        }
      }
    }
  }
}
console.log((best || [0, 0, 0, 0]).join(" "));
