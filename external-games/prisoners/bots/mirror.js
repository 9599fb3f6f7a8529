// Clams up first, then does what the other prisoner did last round (the
// history's first letter: R or E, it talked). Written for koth's corpus.
'use strict';
const h = process.argv[2] || '';
console.log(h[0] === 'R' || h[0] === 'E' ? 't' : 'c');
