// Positive control: Node with worker threads under the hostile suite's limits.
const { Worker, isMainThread, parentPort, workerData } = require('worker_threads');
if (isMainThread) {
  let done = 0, total = 0;
  for (let i = 0; i < 4; i++) {
    const w = new Worker(__filename, { workerData: i });
    w.on('message', (v) => { total += v; if (++done === 4) console.log('node workers ok ' + total); });
    w.on('error', (e) => { console.error(e); process.exit(1); });
  }
} else {
  let s = 0;
  for (let i = 0; i < 5e6; i++) s += (i ^ workerData) % 7;
  parentPort.postMessage(s);
}
