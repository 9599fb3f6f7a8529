// Minimal Flit bot: answers every "M" line with the move "0 0 0 0".
const readline = require("readline");

process.stderr.write("hello from javascript\n");
const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on("line", (line) => {
  if (line.replace(/\r$/, "") === "M") process.stdout.write("0 0 0 0\n");
});
