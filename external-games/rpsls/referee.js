// Rock Paper Scissors Lizard Spock for 2 to 8 bots: a koth referee.
//
// Every round each bot is asked at once (simultaneous moves), one line:
//   "<round> <rounds> <your seat> <every seat's move last round>"
// e.g. "3 100 0 R K -" (seats from 0; '-' for no move, and for every seat
// in round 1), and answers one letter: R (rock), P (paper), S (scissors),
// L (lizard) or K (Spock); lowercase is fine. Anything else, or no answer
// in time, is no move that round. Each pair of bots that both moved scores
// a point for the winner: scissors cuts paper, paper covers rock, rock
// crushes lizard, lizard poisons Spock, Spock smashes scissors, scissors
// decapitates lizard, lizard eats paper, paper disproves Spock, Spock
// vaporizes rock, rock crushes scissors. Most points after the last round
// wins. Settings: {"rounds": N} (1 to 1000, default 100).
//
// It speaks koth's referee protocol (docs/games/authoring.md): one JSON
// line in, one JSON line out.
'use strict';
const readline = require('readline');

const NAMES = { R: 'rock', P: 'paper', S: 'scissors', L: 'lizard', K: 'Spock' };
const BEATS = { S: 'PL', P: 'RK', R: 'LS', L: 'KP', K: 'SR' };
const SHOWN = 20; // rounds drawn on the board, the newest on the right

let game = null;

function start(msg) {
  const rounds = msg.settings && msg.settings.rounds !== undefined ? msg.settings.rounds : 100;
  if (!Number.isInteger(rounds) || rounds < 1 || rounds > 1000) {
    throw new Error(`settings.rounds must be a whole number from 1 to 1000, not ${JSON.stringify(rounds)}`);
  }
  game = {
    names: msg.seats.map((s) => s.name),
    rounds,
    round: 0,
    last: msg.seats.map(() => '-'),
    history: [], // one string per round: each seat's move or 'x'
    scores: msg.seats.map(() => 0),
  };
  return Object.assign({ initial: { rounds, seats: game.names.length } }, next());
}

function next(extra) {
  game.round += 1;
  const over = game.round > game.rounds;
  // `turn`: the turn whose answers this answers (0: the start).
  const out = Object.assign({ turn: game.round - 1, view: view(), scores: game.scores, over }, extra || {});
  if (!over) {
    out.requests = game.names.map((_, seat) => ({ seat, text: `${game.round} ${game.rounds} ${seat} ${game.last.join(' ')}` }));
  }
  return out;
}

function turn(msg) {
  const n = game.names.length;
  const moves = game.names.map(() => null);
  const judgements = [];
  for (const a of msg.answers) {
    if (a.status !== 'answer') continue;
    const m = a.text.trim().toUpperCase();
    if (m.length === 1 && NAMES[m]) {
      moves[a.seat] = m;
      judgements.push({ seat: a.seat, move: NAMES[m] });
    } else {
      judgements.push({ seat: a.seat, invalid: 'answer R, P, S, L or K; no move this round' });
    }
  }
  const points = moves.map(() => 0);
  const wins = [];
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      const [a, b] = [moves[i], moves[j]];
      if (!a || !b || a === b) continue;
      const w = BEATS[a].includes(b) ? i : BEATS[b].includes(a) ? j : -1;
      if (w < 0) continue;
      points[w] += 1;
      wins.push(`${game.names[w]} (${NAMES[moves[w]]}) beat ${game.names[w === i ? j : i]}`);
    }
  }
  points.forEach((p, s) => (game.scores[s] += p));
  game.last = moves.map((m) => m || '-');
  game.history.push(moves.map((m) => m || 'x').join(''));
  const text = `round ${game.round}: ` + (wins.length ? wins.join('; ') : 'no one won');
  const events = [{ type: 'round', round: game.round, moves: game.last, points, text }];
  return next({ judgements, events });
}

function view() {
  const n = game.names.length;
  const shown = game.history.slice(-SHOWN);
  let cells = '';
  for (let seat = 0; seat < n; seat++) {
    // The seat's own column first (its colour), then its last moves.
    cells += seat.toString(16);
    for (let k = 0; k < SHOWN; k++) {
      const r = shown[k - (SHOWN - shown.length)];
      cells += r === undefined ? '.' : r[seat];
    }
  }
  const played = game.history.length;
  return { width: SHOWN + 1, height: n, cells, caption: `${played} of ${game.rounds} rounds played: points ${game.scores.join(' ')}` };
}

const rl = readline.createInterface({ input: process.stdin });
rl.on('line', (line) => {
  const msg = JSON.parse(line);
  const out = msg.type === 'start' ? start(msg) : turn(msg);
  process.stdout.write(JSON.stringify(out) + '\n');
});
