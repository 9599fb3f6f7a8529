// koth's pages. Each page is a shell that names what it shows
// (<body data-page="bot" data-id="7">); this script fills it from the JSON
// API, so a page can show nothing the API would not. Text from users and
// bots (names, stderr, compile logs) only ever goes into the page as text,
// through el() and textContent, never as HTML.
'use strict';

const TOKEN_KEY = 'koth.token';
// koth_games::view::SEAT_COLOURS, which a test holds equal: no game's
// legend looks like one of its seats (Linkage's dominoes are red, blue,
// green and yellow, so seats 1 and 2 are purple and cyan).
const SEAT_COLOURS = ['#911eb4', '#42d4f4', '#e6194b', '#3cb44b', '#4363d8', '#f58231', '#f032e6', '#bfef45',
  '#fabed4', '#469990', '#dcbeff', '#9a6324', '#800000', '#aaffc3', '#808000', '#000075'];
const SEAT_CODES = '0123456789abcdef';

// ---- helpers -------------------------------------------------------------

// What a match counts for (the API's `kind`), in words.
const KIND_LABELS = {
  rated: 'rated',
  standings: 'counts in the standings',
  finals: 'finals',
  challenge: 'challenge (counts nowhere)',
  validation: 'validation game (counts nowhere)',
  ab: 'A/B test game (counts nowhere)',
};
function kindLabel(kind) { return KIND_LABELS[kind] || kind; }

function token() { return localStorage.getItem(TOKEN_KEY); }

/** Call the API; resolves to the JSON (or text) body, rejects with the API's error message. */
/** A replay opened on /replay: the three match routes are answered from it. */
let DROPPED = null;

async function api(path, opts = {}) {
  if (DROPPED && path in DROPPED) return DROPPED[path];
  const headers = Object.assign({}, opts.headers || {});
  const t = token();
  if (t) headers.Authorization = 'Bearer ' + t;
  const resp = await fetch(path, Object.assign({}, opts, { headers }));
  const type = resp.headers.get('content-type') || '';
  const body = type.includes('json') ? await resp.json() : await resp.text();
  if (!resp.ok) {
    const e = new Error(body && body.error ? body.error : resp.status + ' ' + resp.statusText);
    e.status = resp.status;
    throw e;
  }
  return body;
}

/** An element: el('a', {href: '/x', class: 'c', onclick: f}, 'text', child, [more]). */
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (k === 'class') e.className = v;
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

function table(head, rows, attrs) {
  return el('table', attrs || {}, el('thead', {}, el('tr', {}, head.map(h => el('th', {}, h)))),
    el('tbody', {}, rows.map(r => el('tr', {}, r.map(c => el('td', {}, c))))));
}

/** A seat's colour square. Colours are set through the CSSOM: the CSP forbids inline styles in markup. */
function swatch(seat) {
  const e = el('span', { class: 'swatch', 'data-seat': seat });
  e.style.background = SEAT_COLOURS[seat % SEAT_COLOURS.length];
  return e;
}

function fmt(x, digits = 1) {
  return x === null || x === undefined ? '–' : Number(x).toFixed(digits);
}

function when(ts) { return ts ? ts.replace(/\.\d+/, '').replace(/\+00(:00)?$/, ' UTC') : '–'; }

function errorBox(e) { return el('p', { class: 'error', role: 'alert' }, e.message || String(e)); }

function setMain(...children) {
  const main = document.getElementById('main');
  main.replaceChildren(...children.flat().filter(c => c !== null && c !== undefined && c !== false));
}

const sleep = ms => new Promise(r => setTimeout(r, ms));

/** A replay served by `koth replay view` on the author's machine: no site, no accounts. */
let LOCAL = document.body.dataset.local === '1';

let mePromise = null;
/** The signed-in account, or null. */
function me() {
  if (!mePromise) {
    mePromise = token() ? api('/api/me').catch(e => (e.status === 401 ? (localStorage.removeItem(TOKEN_KEY), null) : null))
      : Promise.resolve(null);
  }
  return mePromise;
}

// ---- header --------------------------------------------------------------

async function header() {
  const box = document.getElementById('account');
  if (!box || LOCAL) return;
  const who = await me();
  if (who) {
    box.replaceChildren(el('a', { class: 'who', href: '/me', id: 'me-link' }, who.name, who.is_host ? ' (host)' : ''), ' ',
      ...(who.is_host ? [el('a', { href: '/audit', id: 'audit-link' }, 'Audit trail'), ' '] : []),
      el('button', { class: 'link', id: 'sign-out', onclick: () => { localStorage.removeItem(TOKEN_KEY); location.reload(); } }, 'Sign out'));
  } else {
    box.replaceChildren(el('a', { href: '/#account-box' }, 'Sign in'));
  }
}

// ---- home: the front door -------------------------------------------------

// How many leaders of each ladder the home page shows.
const HOME_LEADERS = 3;

async function homePage() {
  const [ladders, who] = await Promise.all([api('/api/ladders'), me()]);
  // Each ladder's leaders and the matches it is playing now, from the
  // ladder's own reads (its leaderboard, its recent matches).
  const perLadder = await Promise.all(ladders.map(async l => {
    const [board, matches] = await Promise.all([
      api(`/api/ladders/${l.id}/leaderboard`).catch(() => null), api(`/api/ladders/${l.id}/matches`).catch(() => [])]);
    return { l, board, playing: matches.filter(m => m.state === 'queued' && m.running) };
  }));
  const rows = ladders.map(l => [
    el('a', { href: '/games/' + l.game }, l.game),
    el('a', { href: '/ladders/' + l.id, class: 'ladder-link' }, l.name),
    l.format.replace('_', ' '), l.bots, l.paused ? 'paused' : 'running', contestText(l.phase, l.deadline)]);
  setMain(el('h1', {}, 'koth ', el('small', {}, 'King of the Hill')),
    el('p', { id: 'what' }, 'koth runs King-of-the-Hill contests between programs: you write a bot that plays one of the games below, ',
      'in the language you like, and submit its source; koth compiles it and plays it against everyone else\'s bots, ',
      'ranking them on a ladder by their results.'),
    el('section', { id: 'start' }, el('h2', {}, 'Where to start'), el('ul', {},
      el('li', { id: 'start-authors' }, el('strong', {}, 'Bot authors: '), 'pick a game and download its starter kit from ',
        el('a', { href: '/games' }, 'the games\' pages'), ', play it on your machine with ', el('code', {}, 'koth match --game GAME bot.py --open'),
        ', then sign up below and ', el('a', { href: '/submit' }, 'submit your bot'), '.'),
      el('li', { id: 'start-hosts' }, el('strong', {}, 'Hosts: '), el('code', {}, 'koth up'), ' runs a server like this one on your machine; ',
        'signed in as its host, you create ladders and add games on this page (', el('a', { href: '/games/authoring' }, 'how a game is written'),
        '). Everything the pages show is in ', el('a', { href: '/api/openapi.json' }, 'the API'), '.'))),
    el('section', { id: 'leaders' }, el('h2', {}, 'Leaders'),
      ladders.length ? perLadder.map(leaders) : el('p', {}, 'No ladders yet: a host creates them.')),
    el('section', { id: 'playing-now' }, el('h2', {}, 'Playing now'), playingNow(perLadder)),
    el('h2', {}, 'Ladders'),
    ladders.length ? table(['game', 'ladder', 'format', 'bots', 'state', 'submissions'], rows, { id: 'ladders' }) : el('p', {}, 'No ladders yet: a host creates them.'),
    who && who.is_host ? await newLadderForm() : null,
    who && who.is_host ? await addGameForm() : null,
    el('section', { id: 'account-box' }, el('h2', { id: 'account-title' }, 'Your account'), who ? signedIn(who) : signIn()));
}

/** A ladder's first few bots on its leaderboard, with its first column (the format's score). */
function leaders({ l, board }) {
  const top = board ? board.rows.slice(0, HOME_LEADERS) : [];
  const col = board && board.columns[0];
  const value = v => typeof v === 'number' && !Number.isInteger(v) ? fmt(v, 2) : v;
  return el('div', { class: 'ladder-leaders', 'data-ladder': l.id },
    el('h3', {}, el('a', { href: '/ladders/' + l.id }, l.name), l.game !== l.name ? [' ', el('small', {}, l.game)] : ''),
    top.length ? el('ol', {}, top.map(r => el('li', {}, botLink(r.bot, r.name), col ? el('small', {}, ` ${col.label} ${value(r[col.key])}`) : '')))
      : el('p', { class: 'hint' }, 'No ranked bots yet.'));
}

/** The matches runners are playing now, each linked to its page, where it is drawn as it is played. */
function playingNow(perLadder) {
  const items = perLadder.flatMap(({ l, playing }) => playing.map(m => el('li', {},
    el('a', { href: '/matches/' + m.match }, `Match ${m.match}`), ` on ${l.name}${l.game !== l.name ? ` (${l.game})` : ''}: `,
    m.seats.map(s => s.name).join(' vs '))));
  return items.length ? el('ul', { id: 'playing' }, items) : el('p', { class: 'hint' }, 'No match is being played right now.');
}

/** A contest's phase in words. */
function contestText(phase, deadline) {
  return {
    open: deadline ? `open until ${when(deadline)}` : 'open',
    closed: `closed at ${when(deadline)}`,
    finals: 'closed: finals playing',
    final: 'closed; the finals are over',
  }[phase] || phase;
}

/** Hosts: create a ladder; format and settings start from the game's seed. */
async function newLadderForm() {
  const [games, formats] = await Promise.all([api('/api/games'), api('/api/formats')]);
  const out = el('div', { id: 'new-ladder-result' });
  const name = el('input', { id: 'new-ladder-name', required: true, pattern: '[A-Za-z0-9_.\\-]{1,40}' });
  // Added games are offered once their validation match has passed.
  const game = el('select', { id: 'new-ladder-game' }, games.filter(g => g.status === 'ready').map(g => el('option', { value: g.name }, g.name)));
  const format = el('select', { id: 'new-ladder-format' }, el('option', { value: '' }, "the game's own"),
    formats.map(f => el('option', { value: f.name }, f.name.replace('_', ' '))));
  const settings = el('textarea', { id: 'new-ladder-settings', rows: 2, cols: 50, placeholder: '{"seats": 2, "max_turns": 300}' });
  const form = el('form', {
    id: 'new-ladder', onsubmit: async ev => {
      ev.preventDefault();
      try {
        const body = { name: name.value, game: game.value };
        if (format.value) body.format = format.value;
        if (settings.value.trim()) {
          try { body.settings = JSON.parse(settings.value); } catch (e) { throw new Error('The settings are not JSON: ' + e.message); }
        }
        const r = await api('/api/ladders', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
        location.href = '/ladders/' + r.id;
      } catch (e) { out.replaceChildren(errorBox(e)); }
    }
  }, el('p', {}, el('label', {}, 'Name ', name), ' ', el('label', {}, 'Game ', game), ' ', el('label', {}, 'Format ', format)),
    el('p', {}, el('label', {}, 'Settings (JSON, optional) ', settings)),
    el('button', { type: 'submit' }, 'Create the ladder'));
  return el('section', { id: 'host-box' }, el('h2', {}, 'Create a ladder'), form, out);
}

/** Hosts: add a game (its folder as an archive) and follow the games added. */
async function addGameForm() {
  const added = (await api('/api/games')).filter(g => g.added);
  const out = el('div', { id: 'add-game-result' });
  const file = el('input', { id: 'add-game-file', type: 'file', accept: '.tar,.gz,.tgz,.zip', required: true });
  const form = el('form', {
    id: 'add-game', onsubmit: async ev => {
      ev.preventDefault();
      try {
        const f = file.files[0];
        const name = f.name.replace(/[^A-Za-z0-9_.-]/g, '_');
        const r = await api('/api/games?file=' + encodeURIComponent(name),
          { method: 'POST', headers: { 'Content-Type': 'application/octet-stream' }, body: f });
        out.replaceChildren(el('p', {}, 'Added ', el('a', { href: '/games/' + r.name }, r.name),
          `: its example bots (${r.example_bots.join(', ')}) are playing its validation match; it is offered once that passes.`));
      } catch (e) { out.replaceChildren(errorBox(e)); }
    }
  }, el('label', {}, "The game's folder as an archive (.tar.gz, .zip) ", file), ' ', el('button', { type: 'submit' }, 'Add the game'));
  const rows = added.map(g => [el('a', { href: '/games/' + g.name }, g.name), g.title || '', g.status]);
  return el('section', { id: 'add-game-box' }, el('h2', {}, 'Add a game'),
    el('p', {}, 'A game is a folder: ', el('code', {}, 'game.json'), ', its referee and example bots (', el('a', { href: '/games/authoring' }, 'how to write one'), ').'),
    form, out, rows.length ? table(['game', 'title', 'status'], rows, { id: 'added-games' }) : null);
}

/** An added game: what its manifest says, its validation, its folder. */
async function gamePage() {
  const name = document.body.dataset.game;
  const g = await api('/api/games/' + encodeURIComponent(name));
  const time = g.time && g.time.per_move !== undefined ? `${g.time.per_move} ms a move` : JSON.stringify(g.time);
  setMain(el('h1', {}, g.title || g.name),
    el('p', {}, `${g.name}: ${g.seats[0]} to ${g.seats[1]} players, ${time}; added by ${g.added_by || 'a host'}.`),
    el('p', {}, 'Status: ', el('strong', { id: 'game-status' }, g.status)),
    g.log ? el('pre', { id: 'game-log' }, g.log) : null,
    kitsSection(g),
    el('p', {}, el('a', { href: `/api/games/${name}/folder`, download: name + '.tar' }, 'Download its folder'),
      ' (game.json, its referee, its example bots) to play it on your machine: ',
      el('code', {}, `mkdir ${name} && tar xf ${name}.tar -C ${name} && koth match --game ./${name} mybot.py ${name}/bots/…`)),
    el('p', {}, el('a', { href: '/games/authoring' }, 'How games are written'), ' · ', el('a', { href: '/games' }, 'All games')));
}

/** An added game's starter kits (its folder's starters/, else its example
 * bots): the ones this server's runners can run, and the others named with why not. */
function kitsSection(g) {
  if (!g.starters.length) return null;
  const offered = g.starters.filter(k => k.available);
  const missing = g.starters.filter(k => !k.available);
  return el('section', { id: 'starter-kits' }, el('h2', {}, 'Starter kits'),
    offered.length ? [
      el('p', {}, "Bots to start from, the game's own: save one under its name, try it with the game's folder (below), make it smarter and ",
        el('a', { href: '/submit' }, 'submit it'), '.'),
      el('ul', { class: 'kits' }, offered.map(k => el('li', {},
        el('a', { href: k.url, download: k.file, 'data-language': k.language }, k.display), ' ', el('code', {}, k.file))))]
      : el('p', {}, "This server's runners can run none of the languages this game has kits in."),
    missing.length ? [el('p', {}, "Not offered: this server's runners cannot run bots in these languages."),
      el('ul', { id: 'kits-unavailable' }, missing.map(k => el('li', { 'data-language': k.language }, k.display, ': ', k.unavailable)))] : null);
}

function signedIn(who) {
  return el('div', {}, el('p', {}, 'Signed in as ', el('strong', {}, who.name), who.is_host ? ' (host).' : '.', ' ', el('a', { href: '/me' }, 'Your bots and tokens')),
    el('p', {}, el('a', { href: '/submit' }, 'Submit a bot'), ' · the command line: ', el('code', {}, 'koth submit --server ' + location.origin + ' …')));
}

function signIn() {
  const out = el('div', { id: 'account-result' });
  const name = el('input', { id: 'new-name', name: 'name', required: true, pattern: '[A-Za-z0-9_.\\-]{1,40}', placeholder: 'letters, digits, _ . -' });
  const tok = el('input', { id: 'token', name: 'token', required: true, placeholder: 'your API token' });
  const signup = el('form', {
    id: 'sign-up', onsubmit: async ev => {
      ev.preventDefault();
      try {
        const u = await api('/api/users', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ name: name.value }) });
        localStorage.setItem(TOKEN_KEY, u.token);
        out.replaceChildren(el('p', {}, 'Welcome, ', el('strong', {}, u.name), '. Your API token (shown once; this browser keeps it, keep a copy for the command line):'),
          el('pre', { id: 'new-token' }, u.token), el('p', {}, el('a', { href: '/submit' }, 'Submit your first bot')));
        mePromise = null; header();
      } catch (e) { out.replaceChildren(errorBox(e)); }
    }
  }, el('label', {}, 'New account: name ', name), ' ', el('button', { type: 'submit' }, 'Sign up'));
  const signin = el('form', {
    id: 'sign-in', onsubmit: async ev => {
      ev.preventDefault();
      localStorage.setItem(TOKEN_KEY, tok.value.trim());
      mePromise = null;
      const who = await me();
      if (who) location.reload(); else out.replaceChildren(errorBox(new Error('That token is unknown: check it, or sign up.')));
    }
  }, el('label', {}, 'Or sign in with your token ', tok), ' ', el('button', { type: 'submit' }, 'Sign in'));
  return el('div', {}, signup, signin, out);
}

// ---- ladder --------------------------------------------------------------

async function ladderPage(id) {
  const [ladders, board, bots, matches, contest, who, formats] = await Promise.all([
    api('/api/ladders'), api(`/api/ladders/${id}/leaderboard`), api(`/api/ladders/${id}/bots`), api(`/api/ladders/${id}/matches`),
    api(`/api/ladders/${id}/contest`), me(), api('/api/formats')]);
  const host = who && who.is_host;
  const l = ladders.find(x => x.id === id);
  document.title = l.name + ' · koth';
  // The columns are the ladder format's own: any format draws the same way.
  const head = ['#', 'bot', ...board.columns.map(c => c.label)];
  const cell = v => typeof v === 'number' && !Number.isInteger(v) ? fmt(v, 2) : v;
  const rows = board.rows.map(r => [r.rank, botLink(r.bot, r.name), ...board.columns.map(c => cell(r[c.key]))]);
  const hostControls = who && who.is_host && contest.phase !== 'final' ? el('p', {},
    el('button', {
      id: 'pause', onclick: async () => {
        try { await api(`/api/ladders/${id}/${l.paused ? 'resume' : 'pause'}`, { method: 'POST' }); location.reload(); } catch (e) { alert(e.message); }
      }
    }, l.paused ? 'Resume the ladder' : 'Pause the ladder')) : null;
  setMain(el('h1', {}, l.name, ' ', el('small', {}, el('a', { href: '/games/' + l.game }, l.game), ' · ', l.format.replace('_', ' '), l.paused ? ' · paused' : '')),
    hostControls,
    contestSection(id, contest, host, formats),
    contest.phase === 'open' ? el('p', {}, el('a', { href: `/submit?ladder=${id}` }, 'Submit a bot to this ladder')) : null,
    el('h2', {}, contest.finals ? 'Leaderboard before the finals' : 'Leaderboard'),
    rows.length ? table(head, rows, { id: 'leaderboard' }) : el('p', {}, 'No results yet.'),
    el('h2', {}, 'Recent matches'), matchTable(matches, null, host),
    el('h2', {}, 'Bots'),
    table(['bot', 'owner', 'version', 'language', 'latest version', 'state', ''],
      bots.map(b => [botLink(b.id, b.name), b.owner, b.current_version ?? '–', b.language ?? '–', b.latest_status ?? '–', b.disabled_reason || 'active',
        host ? disableButton(b) : '']), { id: 'bots' }));
}

/** Hosts: take a bot off the ladder (with a reason its owner sees), or back on. */
function disableButton(b) {
  return el('button', {
    class: 'disable-bot', 'data-bot': b.name, onclick: async () => {
      try {
        if (b.disabled_reason) {
          await api(`/api/bots/${b.id}/enable`, { method: 'POST' });
        } else {
          const reason = prompt(`Why is ${b.name} taken off the ladder? Its owner sees this.`);
          if (reason === null) return;
          await api(`/api/bots/${b.id}/disable`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ reason }) });
        }
        location.reload();
      } catch (e) { alert(e.message); }
    }
  }, b.disabled_reason ? 'Enable' : 'Disable');
}

/** The contest: phase and deadline, the finals' standings, and the host's controls. */
function contestSection(id, c, host, formats) {
  const out = el('div', { id: 'contest-result' });
  const post = async (path, body) => {
    try {
      await api(`/api/ladders/${id}/${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
      location.reload();
    } catch (e) { out.replaceChildren(errorBox(e)); }
  };
  const parts = [el('p', { id: 'contest-phase' }, 'Submissions: ', contestText(c.phase, c.deadline), '.')];
  if (c.played_out && !c.finals) {
    parts.push(el('p', { id: 'played-out' }, 'Every match of this ladder\'s format has been played: its standings are complete. A bot that joins gets its games.'));
  }
  if (c.standings) {
    const s = c.standings;
    const cell = v => typeof v === 'number' && !Number.isInteger(v) ? fmt(v, 2) : v;
    // Adaptive finals (a budget) give each place a rank interval too.
    const adaptive = s.budget !== undefined && s.budget !== null;
    const rankText = r => r.rank_low === r.rank_high ? `${r.rank_low}` : `${r.rank_low} – ${r.rank_high}`;
    const rows = s.rows.map(r => [r.rank, botLink(r.bot, r.name), ...s.columns.map(k => cell(r[k.key])),
      r.low === null ? '–' : `${fmt(r.low, 2)} – ${fmt(r.high, 2)}`, ...(adaptive ? [rankText(r)] : []), r.settled ? 'settled' : 'could change']);
    const how = adaptive
      ? [`${s.matches} finals matches of a budget of ${s.budget} (adaptive, top ${c.finals.top}); `,
        `${s.unsettled} of ${s.rows.length} places are not yet ordered with both neighbours (95%, sign test on paired games).`]
      : [`${s.matches} finals matches (${c.finals.format.replace('_', ' ')}, top ${c.finals.top}); `,
        `${s.unsettled} of ${s.rows.length} places are within the uncertainty of a neighbour's (95% interval of points per match).`];
    parts.push(el('h2', {}, c.phase === 'final' ? 'Final standings' : 'Finals so far'),
      el('p', { id: 'finals-summary' }, ...how,
        c.phase === 'final' ? [' ', el('a', { id: 'export-csv', href: `/api/ladders/${id}/final-standings.csv` }, 'Download as CSV'),
          ' · ', el('a', { href: `/api/ladders/${id}/contest` }, 'as JSON')] : ''),
      table(['#', 'bot', ...s.columns.map(k => k.label), 'interval', ...(adaptive ? ['rank interval'] : []), ''], rows, { id: 'final-standings' }));
  }
  if (host && (c.phase === 'open' || c.phase === 'closed')) {
    const at = el('input', { id: 'deadline-at', type: 'datetime-local' });
    parts.push(el('form', {
      id: 'deadline-form', onsubmit: ev => { ev.preventDefault(); if (at.value) post('deadline', { at: new Date(at.value).toISOString() }); }
    }, el('label', {}, 'Deadline ', at), ' ', el('button', { type: 'submit' }, 'Set the deadline'), ' ',
      el('button', { type: 'button', id: 'close-now', onclick: () => post('deadline', { in_seconds: 0 }) }, 'Close submissions now'), ' ',
      c.deadline ? el('button', { type: 'button', id: 'no-deadline', onclick: () => post('deadline', {}) }, 'Remove the deadline') : ''));
  }
  if (host && c.phase === 'closed') {
    const top = el('input', { id: 'finals-top', type: 'number', min: 2, value: 8, size: 4 });
    // The formats that end, as the server lists them: only those can be final.
    const format = el('select', { id: 'finals-format' },
      formats.filter(f => f.ends).map(f => el('option', { value: f.name }, f.name.replace('_', ' '))));
    const rounds = el('input', { id: 'finals-rounds', type: 'number', min: 1, value: 2, size: 4 });
    // Empty: the format's fixed schedule; a number: adaptive finals of at most that many matches.
    const budget = el('input', { id: 'finals-budget', type: 'number', min: 2, placeholder: 'none', size: 6 });
    parts.push(el('form', {
      id: 'finals-form', onsubmit: ev => {
        ev.preventDefault();
        const body = { top: Number(top.value), format: format.value, settings: { rounds: Number(rounds.value) } };
        if (budget.value) body.budget = Number(budget.value);
        post('finals', body);
      }
    }, el('label', {}, 'Finals: the top ', top), ' ', el('label', {}, 'play ', format), ' ', el('label', {}, 'rounds ', rounds), ' ',
      el('label', { title: 'Adaptive finals: paired games for the adjacent places least settled, until all are ordered (95%) or this many matches are played' },
        'or adaptive, at most ', budget, ' matches'), ' ',
      el('button', { type: 'submit' }, 'Start the finals')));
  }
  parts.push(out);
  return el('section', { id: 'contest' }, parts);
}

/** A link to a bot's page. */
function botLink(bid, name) { return el('a', { href: '/bots/' + bid }, name || ('bot ' + bid)); }

/** Matches with their seats; `self` (a bot id) puts that bot's result first. */
function matchTable(matches, self, host) {
  if (!matches.length) return el('p', {}, 'No matches yet.');
  const rows = matches.map(m => {
    const mine = self === null ? null : m.seats.find(s => s.bot === self);
    const seats = m.seats.map((s, i) => [i ? ', ' : '', swatch(s.seat), el('a', { href: '/bots/' + s.bot }, s.name), s.rank ? ` (${s.rank})` : '']);
    // Its data not saved (over its quota, ...): said beside its result.
    const note = mine && mine.data_note ? [' ', el('span', { class: 'data-note' }, `(data not saved: ${mine.data_note})`)] : '';
    const row = [el('a', { href: '/matches/' + m.match }, '#' + m.match), seats,
      [mine && mine.result ? mine.result : (m.running ? 'running' : m.state), note], kindLabel(m.kind), m.turns ?? '–', when(m.finished)];
    // Hosts: a queued match no runner has started can be cancelled.
    if (host) row.push(m.state === 'queued' && !m.running ? cancelButton(m.match) : '');
    return row;
  });
  return table(['match', 'seats (rank)', self === null ? 'state' : 'result', '', 'turns', 'finished', ...(host ? [''] : [])], rows, { class: 'matches' });
}

function cancelButton(id) {
  return el('button', {
    class: 'cancel-match', 'data-match': id, onclick: async () => {
      try { await api(`/api/matches/${id}/cancel`, { method: 'POST' }); location.reload(); } catch (e) { alert(e.message); }
    }
  }, 'Cancel');
}

// ---- bot -----------------------------------------------------------------

async function botPage(id) {
  const [bot, who] = await Promise.all([api('/api/bots/' + id), me()]);
  document.title = bot.name + ' · koth';
  const owner = who && (who.is_host || who.name === bot.owner);
  const [ratings, matches, h2h, tests] = await Promise.all([api(`/api/bots/${id}/ratings`), api(`/api/bots/${id}/matches`), api(`/api/bots/${id}/head-to-head`), api(`/api/bots/${id}/ab`)]);
  const logBox = el('div', { id: 'compile-log' });
  const versions = bot.versions.slice().reverse().map(v => [
    v.number, v.language, v.main,
    [el('span', { class: 'status-' + v.status }, v.status), v.validation_match ? [' ', el('a', { href: '/matches/' + v.validation_match, title: 'its validation game: a match against copies of itself' }, 'validation game')] : ''],
    el('span', { class: 'ab-beside', 'data-number': v.number }, abBeside(tests, v.number)),
    when(v.submitted),
    owner ? [el('button', { class: 'link', 'data-version': v.id, onclick: () => showLog(v, logBox) }, 'logs'), ' ',
      el('button', { class: 'link', onclick: () => download(`/api/versions/${v.id}/source`, `${bot.name}-v${v.number}.tar`) }, 'sources')] : '']);
  const controls = owner ? el('p', {},
    el('a', { href: `/submit?ladder=${bot.ladder}&name=${encodeURIComponent(bot.name)}` }, 'Submit a new version'), ' · ',
    el('button', {
      class: 'link', onclick: async () => {
        if (!confirm('Withdraw this bot from the ladder? Its matches stay in history.')) return;
        try { await api(`/api/bots/${id}/delete`, { method: 'POST' }); location.reload(); } catch (e) { alert(e.message); }
      }
    }, 'Withdraw')) : null;
  setMain(
    el('h1', {}, bot.name, ' ', el('small', {}, 'by ', bot.owner, ' in ', el('a', { href: '/ladders/' + bot.ladder }, bot.ladder_name), ' (', el('a', { href: '/games/' + bot.game }, bot.game), ')')),
    bot.disabled_reason ? el('p', { class: 'error' }, 'Not playing: ', bot.disabled_reason) : null,
    bot.rating ? el('p', { id: 'rating' }, `Rating μ ${fmt(bot.rating.mu, 2)}, σ ${fmt(bot.rating.sigma, 2)} after ${bot.rating.games} games.`) : null,
    controls,
    el('h2', {}, 'Versions'),
    table(['#', 'language', 'main file', 'status', 'A/B tests', 'submitted', ''], versions, { id: 'versions' }), logBox,
    abSection(id, bot, tests, who && who.name === bot.owner),
    el('h2', {}, 'Rating history'), ratingPlot(ratings, bot.format),
    el('h2', {}, 'Recent matches'), matchTable(matches, id),
    el('h2', {}, 'Head to head'),
    h2h.length ? table(['opponent', 'played', 'won', 'lost', 'tied'], h2h.map(o => [el('a', { href: '/bots/' + o.bot }, o.name), o.played, o.won, o.lost, o.tied]), { id: 'head-to-head' })
      : el('p', {}, 'No finished matches yet.'));
}

// ---- A/B tests: is version #N better than #M? (docs/ab.md) -----------------

const AB_WORDS = { running: 'running', better: 'better', not_better: 'not better', undecided: 'undecided', stopped: 'stopped' };

/** How a test reads beside one of its versions: the new one's ("better than #1") or the old one's ("#2 better than it"). */
const AB_BESIDE = {
  running: [o => `being tested against #${o}`, n => `#${n} being tested against it`],
  better: [o => `better than #${o}`, n => `#${n} better than it`],
  not_better: [o => `not better than #${o}`, n => `#${n} not better than it`],
  undecided: [o => `undecided against #${o}`, n => `#${n} undecided against it`],
  stopped: [o => `test against #${o} stopped`, n => `#${n}'s test against it stopped`],
};

/** A version's A/B results, beside it in the versions table. */
function abBeside(tests, number) {
  return tests.filter(t => t.new_number === number || t.old_number === number).map((t, i) => [i ? '; ' : '',
    el('span', { class: 'ab-' + t.state, 'data-ab-test': t.id },
      t.new_number === number ? AB_BESIDE[t.state][0](t.old_number) : AB_BESIDE[t.state][1](t.new_number))]);
}

/** The bot's A/B tests and, for its owner, the form that starts one; a running test is followed. */
function abSection(id, bot, tests, owner) {
  const box = el('div', { id: 'ab-tests' });
  const ready = bot.versions.filter(v => v.status === 'ready').map(v => v.number).sort((a, b) => b - a);
  const pick = (name, chosen) => el('select', { name, id: 'ab-' + name }, ready.map(n => el('option', { value: n, selected: n === chosen }, '#' + n)));
  const form = owner && ready.length >= 2 ? el('form', {
    id: 'ab-form', onsubmit: async ev => {
      ev.preventDefault();
      const f = ev.target;
      const err = f.querySelector('.error');
      err.textContent = '';
      try {
        await api(`/api/bots/${id}/ab`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ new: Number(f.new.value), old: Number(f.old.value) }) });
        render(await api(`/api/bots/${id}/ab`));
      } catch (e) { err.textContent = e.message; }
    }
  }, 'Is version ', pick('new', ready[0]), ' better than ', pick('old', ready[1]), '? ',
    el('button', { type: 'submit', id: 'ab-start' }, 'Start an A/B test'),
    el('p', { class: 'hint' }, 'Pairs of unrated games on one seed with the seats swapped, within your share of the runners, until a sequential test says better or not better (α = β = 0.05, H0 +0 Elo, H1 +30 Elo) or 200 pairs are played.'),
    el('p', { class: 'error', role: 'alert' })) : null;
  const render = list => {
    const rows = list.map(t => [t.id, `#${t.new_number} against #${t.old_number}`,
      el('span', { class: 'ab-verdict ab-' + t.state }, AB_WORDS[t.state], t.error ? ': ' + t.error : ''),
      `${t.pairs} of ${t.max_pairs}`, t.counts.join(' / '), fmt(100 * t.score) + '%',
      t.elo !== null ? fmt(t.elo, 0) : t.pairs && t.score >= 1 ? '+inf' : t.pairs && t.score <= 0 ? '−inf' : '–',
      `${fmt(t.llr, 2)} [${fmt(t.lower, 2)}, ${fmt(t.upper, 2)}]`,
      t.matches.map((m, i) => [i ? ' ' : '', el('a', { href: '/matches/' + m.match, title: `pair ${m.pair}` }, '#' + m.match)])]);
    box.replaceChildren(list.length
      ? table(['test', 'versions', 'verdict', 'pairs', 'pair scores (0 … 1)', 'score', 'elo', 'LLR [bounds]', 'games (unrated)'], rows, { id: 'ab-table' })
      : el('p', {}, 'No A/B tests yet.'));
    // Beside each version in the versions table, as it stands now.
    for (const cell of document.querySelectorAll('.ab-beside')) cell.replaceChildren(...abBeside(list, Number(cell.dataset.number)).flat());
    if (list.some(t => t.state === 'running')) setTimeout(async () => { try { render(await api(`/api/bots/${id}/ab`)); } catch (e) { /* the next visit shows it */ } }, 2000);
  };
  render(tests);
  return [el('h2', {}, 'A/B tests'), form, box];
}

async function showLog(v, box) {
  try {
    const log = await api(`/api/versions/${v.id}/log`);
    box.replaceChildren(el('h3', {}, `Compile log of version ${v.number} (${log.status})`), el('pre', { class: 'log' }, log.log || '(empty)'),
      log.validation ? [el('h3', {}, 'Validation game'), el('pre', { class: 'log', id: 'validation-log' }, log.validation)] : '');
  } catch (e) { box.replaceChildren(errorBox(e)); }
}

async function download(path, name) {
  try {
    const t = token();
    const resp = await fetch(path, { headers: t ? { Authorization: 'Bearer ' + t } : {} });
    if (!resp.ok) throw new Error((await resp.json()).error);
    const url = URL.createObjectURL(await resp.blob());
    const a = el('a', { href: url, download: name });
    document.body.append(a); a.click(); a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
  } catch (e) { alert(e.message); }
}

/** The rating history as an SVG plot: μ and the leaderboard score μ − 3σ, per rated match. */
function ratingPlot(points, format) {
  if (!points.length) {
    return el('p', { id: 'rating-plot-empty' }, format === 'rated' ? 'No rated matches yet.'
      : `This ladder ranks by ${format.replace('_', ' ')} standings, not ratings: see its leaderboard.`);
  }
  const W = 640, H = 220, P = 36;
  const ys = points.flatMap(p => [p.mu, p.score]);
  let lo = Math.min(...ys), hi = Math.max(...ys);
  if (hi - lo < 1) { hi += 0.5; lo -= 0.5; }
  const x = i => P + (points.length === 1 ? (W - 2 * P) / 2 : i * (W - 2 * P) / (points.length - 1));
  const y = v => H - P + (lo - v) * (H - 2 * P) / (hi - lo);
  const NS = 'http://www.w3.org/2000/svg';
  const s = (tag, attrs, text) => {
    const e = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const svg = s('svg', { viewBox: `0 0 ${W} ${H}`, class: 'plot', id: 'rating-plot', role: 'img', 'aria-label': 'rating history' });
  svg.append(s('line', { x1: P, y1: H - P, x2: W - P, y2: H - P, class: 'axis' }), s('line', { x1: P, y1: P, x2: P, y2: H - P, class: 'axis' }));
  for (const v of [lo, (lo + hi) / 2, hi]) svg.append(s('text', { x: 2, y: y(v) + 4, class: 'tick' }, v.toFixed(1)));
  svg.append(s('text', { x: W - P, y: H - 8, class: 'tick', 'text-anchor': 'end' }, `${points.length} rated matches`));
  const line = (key, cls) => s('polyline', { points: points.map((p, i) => `${x(i).toFixed(1)},${y(p[key]).toFixed(1)}`).join(' '), class: cls });
  svg.append(line('mu', 'mu'), line('score', 'score'));
  const last = points[points.length - 1];
  svg.append(s('circle', { cx: x(points.length - 1), cy: y(last.mu), r: 3, class: 'mu-dot' }));
  return el('figure', {}, svg, el('figcaption', {}, el('span', { class: 'key-mu' }, '— μ'), '  ', el('span', { class: 'key-score' }, '— μ − 3σ (the leaderboard score)')));
}

// ---- match and the replay viewer ----------------------------------------

async function matchPage(id) {
  let m = await api('/api/matches/' + id);
  document.title = LOCAL ? 'Replay · koth' : `Match ${id} · koth`;
  // The game first: title and state in two short lines, the viewer (board,
  // controls, the turn's moves), then the seats and how to play it again.
  const render = () => setMain(
    LOCAL ? el('h1', { class: 'match-title' }, 'Replay ', el('small', {}, m.game, ' · seed ', m.seed))
      : el('h1', { class: 'match-title' }, `Match ${id} `, el('small', {}, m.ladder ? el('a', { href: '/ladders/' + m.ladder }, m.ladder_name) : 'challenge', m.game ? [' · ', el('a', { href: '/games/' + m.game }, m.game)] : '',
        ' · ', kindLabel(m.kind), ' · seed ', m.seed)),
    el('p', { id: 'match-state' }, LOCAL ? `A replay on this machine: ${m.turns} turns, played by ${m.engine || 'koth'}.`
      : m.state === 'finished' ? `Finished ${when(m.finished)} after ${m.turns} turns.`
      : m.state === 'failed' ? 'This match could not be played: ' + (m.error || 'unknown error')
      : m.state === 'cancelled' ? 'This match was ' + (m.error || 'cancelled') + ' before it was played.' : liveText(m)),
    m.ab_test && m.seats.length ? el('p', { id: 'ab-of-match' }, `Game ${m.ab_pair ? 'of pair ' + m.ab_pair + ' ' : ''}of `,
      el('a', { href: '/bots/' + m.seats[0].bot }, `A/B test ${m.ab_test}`), ' between two versions of ', m.seats[0].name, ': unrated.') : null,
    el('div', { id: 'viewer' }),
    table(['seat', 'bot', 'owner', 'result', 'rank', 'score', 'status'], m.seats.map(s => [
      [swatch(s.seat), ' ', s.seat + 1], LOCAL ? s.name : el('a', { href: '/bots/' + s.bot }, s.name), s.owner || '–', s.result ?? '–', s.rank ?? '–', fmt(s.score, 2),
      [statusText(s.status), dataText(s.data)]]), { id: 'seats' }),
    m.reproduce ? el('details', { id: 'reproduce-box' },
      el('summary', {}, 'Play this match again on your machine'),
      el('p', {}, 'The same game, seed and seats with the same engine (', el('code', {}, 'cargo install --path .'),
        ' in koth\'s repository gives you ', el('code', {}, 'koth'), '). Each seat\'s argument is named after its bot: put that bot\'s source there (yours is on your bot\'s page).'),
      el('pre', { id: 'reproduce' }, m.reproduce), copyButton(() => m.reproduce, 'Copy the command')) : '');
  render();
  // A match being played is drawn as its runner writes its turns (about
  // once a second); the replay viewer takes over when it ends.
  let live = null;
  while (m.state === 'queued') {
    if (m.running) {
      try { live = live ? (await live.follow(), live) : await liveViewer(m, document.getElementById('viewer')); }
      catch (e) { /* the next poll tries again; the state line still follows the match */ }
    }
    await sleep(live ? 1000 : 2000);
    m = await api('/api/matches/' + id);
    if (m.state !== 'queued') render();
    else document.getElementById('match-state').textContent = liveText(m);
  }
  if (m.state === 'finished') await replayViewer(m, document.getElementById('viewer'));
}

/** A queued match as it stands: waiting, or being played and how far. */
function liveText(m) {
  // A try that gave no result (the machine was overloaded, a runner
  // stopped): said, with the reason, until the match is played.
  if (!m.running) return m.error ? 'Waiting for a runner to play it again: the last try gave no result (' + m.error + ').' : 'Waiting for a runner…';
  return m.progress ? `Playing now: turn ${m.progress} so far (drawn as it is played; the whole replay opens when it ends).` : 'Playing now: starting…';
}

/** The viewer of a match being played, fed the frames and turns its
 * runner has written so far (GET /api/matches/{id}/live?from=K); `null`
 * while nothing is written yet. follow() adds what came since. */
async function liveViewer(m, box) {
  const first = await api(`/api/matches/${m.id}/live`);
  if (!first.running || !first.frames) return null;
  const viewer = drawViewer(m, box, { turns: first.turns, seats: [] }, first.frames, {}, true);
  return {
    async follow() {
      const more = await api(`/api/matches/${m.id}/live?from=${viewer.frames()}`);
      if (more.running && more.frames) viewer.extend(more.turns, more.frames.frames);
    },
  };
}

/** What became of a seat's data, where its ladder carries bots' data (docs/scheduler.md, "Bot data"). */
function dataText(d) {
  if (!d) return '';
  return el('span', { class: 'data-note' }, d.written ? '; data saved' : `; data not saved: ${d.note || 'the previous snapshot is kept'}`);
}

function statusText(st) {
  if (!st) return '–';
  const parts = [st.kind.replace(/_/g, ' ')];
  for (const [k, v] of Object.entries(st)) if (k !== 'kind') parts.push(`${k} ${typeof v === 'object' ? JSON.stringify(v) : v}`);
  return parts.join(', ');
}

/** A button that copies `text()` to the clipboard, and says whether it did. */
function copyButton(text, label) {
  const b = el('button', { type: 'button', class: 'copy', onclick: async () => {
    try { await navigator.clipboard.writeText(text()); b.textContent = 'Copied'; }
    catch (e) { b.textContent = 'Select and copy it by hand'; }
    setTimeout(() => { b.textContent = label; }, 1500);
  } }, label);
  return b;
}

/** Frames as the API sends them: the first with every cell, the rest with changes. */
class Board {
  constructor(f) {
    this.f = f;
    this.cells = Array.from(f.frames[0].cells);
    this.at = 0;
    this.checkpoints = new Map([[0, this.cells.slice()]]);
  }
  /** Move to frame k (keeps a copy every 256 frames, so jumping back is cheap). */
  go(k) {
    if (k < this.at) {
      const base = Math.floor(k / 256) * 256;
      this.cells = this.checkpoints.get(base).slice();
      this.at = base;
    }
    while (this.at < k) {
      this.at += 1;
      for (const [i, c] of this.f.frames[this.at].changes) this.cells[i] = c;
      if (this.at % 256 === 0 && !this.checkpoints.has(this.at)) this.checkpoints.set(this.at, this.cells.slice());
    }
  }
}

async function replayViewer(m, box) {
  box.replaceChildren(el('p', {}, 'Loading the replay…'));
  let replay, frames;
  try {
    [replay, frames] = await Promise.all([api(`/api/matches/${m.id}/replay`), api(`/api/matches/${m.id}/frames`)]);
  } catch (e) { box.replaceChildren(errorBox(e)); return; }
  // Each seat's stderr, by turn, beside each move: the replay carries it
  // for the seats the reader owns (a host: all; `koth match`: every seat
  // of the file), and for nobody else's.
  const stderr = {};
  (replay.seats || []).forEach((st, i) => { if (st.stderr) stderr[i] = st.stderr; });
  drawViewer(m, box, replay, frames, stderr, false);
}

// The keyboard and resize listeners of the viewer on the page now (a live
// viewer is replaced by the replay's when the match ends).
let viewerListeners = null;

/** The viewer: board, controls, the turn's moves. `live`: frames and turns
 * still arrive (extend()); it follows the newest turn while the reader is
 * at the last one. */
function drawViewer(m, box, replay, frames, stderr, live) {
  if (viewerListeners) viewerListeners.abort();
  viewerListeners = new AbortController();
  const listening = { signal: viewerListeners.signal };
  // The engine's own words for how each bot's match went (the replay's).
  (replay.seats || []).forEach((st, i) => {
    const row = document.querySelectorAll('#seats tbody tr')[i];
    if (st.status && row) row.lastElementChild.textContent = st.status;
  });
  // What each seat is, where the game gives seats roles (Linkage's More and
  // Fewer): beside the bot's name in the seats, the legend and the turn's
  // moves, with what it means under the name in the seats. Frames kept by
  // older servers have no roles, and no events in words.
  const inWords = Array.isArray(frames.roles);
  const roles = frames.roles || [];
  const roleTag = seat => roles[seat] ? el('span', { class: 'role', 'data-seat': seat, title: roles[seat].note }, roles[seat].name) : '';
  m.seats.forEach((s, i) => {
    const row = document.querySelectorAll('#seats tbody tr')[i];
    if (!roles[s.seat] || !row) return;
    row.children[1].append(' ', roleTag(s.seat), el('div', { class: 'role-note' }, roles[s.seat].note));
  });
  const board = new Board(frames);
  let last = frames.frames.length - 1;
  const legend = new Map(frames.legend.map(e => [e.code, e]));
  // The board fills what the window has left beside (or, narrow, above)
  // the turn panel, small boards scaled up: a 1280x720 screen shows the
  // board, the controls and the turn's moves without scrolling.
  let cell = 8;
  const canvas = el('canvas', { id: 'board', 'data-game': frames.game });
  const ctx = canvas.getContext('2d');
  function fit() {
    const wide = window.innerWidth >= 900;
    const main = document.querySelector('main');
    const width = Math.min(window.innerWidth, main ? main.clientWidth : window.innerWidth) - 48;
    const room = wide ? Math.min(width - 360, window.innerHeight - 250) : Math.min(width, window.innerHeight - 470);
    cell = Math.max(4, Math.min(48, Math.floor(room / Math.max(frames.width, frames.height))));
    canvas.width = frames.width * cell;
    canvas.height = frames.height * cell;
    panel.style.maxHeight = wide ? `${Math.max(canvas.height + 60, 240)}px` : '';
  }
  const slider = el('input', { type: 'range', min: 0, max: last, value: 0, id: 'scrub', 'aria-label': 'turn' });
  const label = el('span', { id: 'turn-label' });
  const turnLink = el('a', { id: 'turn-link', title: 'a link that opens this match at this turn' }, 'link to this turn');
  const turnUrl = () => `${location.origin}/matches/${m.id}?turn=${frames.frames[k].turn}`;
  const caption = el('p', { id: 'caption' });
  const panel = el('div', { id: 'turn-panel' });
  const speeds = [1, 2, 5, 10, 20, 50, 100, 250];
  const guess = speeds.find(s => last / s <= 30) || 250;
  const speed = el('select', { id: 'speed', 'aria-label': 'speed' }, speeds.map(s => el('option', { value: s, selected: s === guess }, `${s} turns/s`)));
  let k = 0, timer = null;
  const playBtn = el('button', { id: 'play', onclick: () => (timer ? pause() : play()) }, 'Play');

  function colour(code) {
    if (code === '.') return '#f3f1ea';
    const seat = SEAT_CODES.indexOf(code);
    if (seat >= 0) return SEAT_COLOURS[seat];
    return legend.has(code) ? legend.get(code).colour : '#000';
  }
  function draw() {
    board.go(k);
    const fr = frames.frames[k];
    for (let i = 0; i < board.cells.length; i++) {
      ctx.fillStyle = colour(board.cells[i]);
      ctx.fillRect((i % frames.width) * cell, Math.floor(i / frames.width) * cell, cell, cell);
    }
    ctx.strokeStyle = 'rgba(0,0,0,0.08)';
    ctx.lineWidth = 1;
    for (let x = 0; x <= frames.width; x++) { ctx.beginPath(); ctx.moveTo(x * cell + 0.5, 0); ctx.lineTo(x * cell + 0.5, canvas.height); ctx.stroke(); }
    for (let y = 0; y <= frames.height; y++) { ctx.beginPath(); ctx.moveTo(0, y * cell + 0.5); ctx.lineTo(canvas.width, y * cell + 0.5); ctx.stroke(); }
    for (const mk of fr.marks) {
      const x = (mk.cell % frames.width) * cell, y = Math.floor(mk.cell / frames.width) * cell;
      ctx.lineWidth = Math.max(2, cell / 8);
      ctx.strokeStyle = mk.label === 'target' ? '#7a5c00' : '#111';
      if (mk.label === 'from') {
        ctx.setLineDash([3, 3]); ctx.strokeRect(x + 2, y + 2, cell - 4, cell - 4); ctx.setLineDash([]);
      } else if (mk.label === 'crashed') {
        ctx.beginPath(); ctx.moveTo(x + 2, y + 2); ctx.lineTo(x + cell - 2, y + cell - 2); ctx.moveTo(x + cell - 2, y + 2); ctx.lineTo(x + 2, y + cell - 2); ctx.stroke();
      } else if (mk.label === 'target') {
        ctx.beginPath(); ctx.arc(x + cell / 2, y + cell / 2, cell / 2 - 1, 0, 2 * Math.PI); ctx.stroke();
      } else {
        ctx.strokeRect(x + 1.5, y + 1.5, cell - 3, cell - 3);
      }
    }
    slider.value = k;
    label.textContent = `turn ${k} / ${last}`;
    turnLink.href = turnUrl();
    caption.textContent = fr.caption;
    turnPanel();
  }
  // A seat's stderr in turn n ('' when it wrote nothing; null when the
  // replay does not carry its stderr). Text written after the last turn
  // shows with the last; a log cut at koth's cap says so where it stops.
  function stderrOf(seat, n) {
    const s = stderr[seat];
    if (!s) return null;
    const lastTurn = replay.turns.length ? replay.turns[replay.turns.length - 1].turn : 0;
    const mine = (s.turns || []).filter(x => x.turn === n || ((x.turn === null || x.turn === undefined) && n === lastTurn));
    let text = mine.map(x => x.text).join('');
    const turns = s.turns || [];
    if (s.cut && turns.length && mine.includes(turns[turns.length - 1])) {
      text += '\n[koth] this bot\'s stderr reached koth\'s cap here: what came after was not kept\n';
    }
    return text;
  }
  function turnPanel() {
    if (k === 0) { panel.replaceChildren(el('p', {}, 'Before the first move.')); return; }
    const t = replay.turns[k - 1];
    const times = new Map((t.times || []).map(x => [x.seat, x]));
    const verdicts = new Map((t.judgements || []).map(j => [j.seat, j]));
    const rows = (t.answers || []).map(a => {
      const seat = m.seats[a.seat];
      const tm = times.get(a.seat) || {};
      const j = verdicts.get(a.seat);
      const said = a.answer !== undefined ? a.answer : a.timeout ? '(no answer in time)' : a.why ? `(gone: ${a.why})` : '(gone)';
      const verdict = !j || j.verdict === 'gone' ? '' : j.verdict === 'accepted' ? 'ok' : j.verdict === 'timed_out' ? 'timed out' : 'invalid: ' + j.reason;
      const err = stderrOf(a.seat, t.turn);
      return el('div', { class: 'move' + (tm.over_limit ? ' late' : ''), 'data-seat': a.seat },
        el('div', { class: 'move-head' }, swatch(a.seat), ' ', el('strong', {}, seat ? seat.name : 'seat ' + a.seat), roleTag(a.seat),
          el('span', { class: 'ms' }, tm.wall_ms !== undefined ? `${fmt(tm.wall_ms, 2)} ms` : ''), tm.cpu_ms !== undefined ? el('span', { class: 'ms cpu' }, `cpu ${fmt(tm.cpu_ms, 2)} ms`) : ''),
        el('div', {}, el('code', { class: 'answer' }, said), ' ', el('span', { class: 'verdict' }, verdict)),
        err !== null ? el('pre', { class: 'stderr' }, err || '(nothing on stderr this turn)') : null);
    });
    // The turn's events in the game's words; as the replay wrote them for
    // frames drawn before there were words.
    const events = inWords ? (frames.frames[k].sentences || []).map(sentence => el('li', {}, sentence))
      : (t.events || []).map(ev => {
        const { type, ...rest } = ev; delete rest.board;
        return el('li', {}, type, Object.keys(rest).length ? ' ' + JSON.stringify(rest) : '');
      });
    panel.replaceChildren(el('h3', {}, `Turn ${k}`), ...rows, el('ul', { class: inWords ? 'events in-words' : 'events' }, events));
  }
  function go(n) { k = Math.max(0, Math.min(last, n)); draw(); }
  function play() {
    if (k >= last) go(0);
    playBtn.textContent = 'Pause';
    const tick = () => { if (k >= last) { pause(); return; } go(k + 1); timer = setTimeout(tick, 1000 / Number(speed.value)); };
    timer = setTimeout(tick, 1000 / Number(speed.value));
  }
  function pause() { clearTimeout(timer); timer = null; playBtn.textContent = 'Play'; }
  slider.addEventListener('input', () => { pause(); go(Number(slider.value)); });
  const legendItems = [...m.seats.map(s => el('span', { class: 'key' }, swatch(s.seat), ' ', s.name, roleTag(s.seat))),
    ...frames.legend.map(e => {
      const sw = el('span', { class: 'swatch legend', 'data-code': e.code });
      sw.style.background = e.colour;
      return el('span', { class: 'key' }, sw, ' ', e.name);
    })];
  box.replaceChildren(
    el('div', { class: 'viewer' },
      el('div', { class: 'stage' }, canvas, caption,
        el('div', { class: 'controls' },
          el('button', { id: 'first', title: 'first turn', onclick: () => { pause(); go(0); } }, '«'),
          el('button', { id: 'step-back', title: 'previous turn', onclick: () => { pause(); go(k - 1); } }, '◀'),
          playBtn,
          el('button', { id: 'step', title: 'next turn', onclick: () => { pause(); go(k + 1); } }, '▶'),
          el('button', { id: 'last', title: 'last turn', onclick: () => { pause(); go(last); } }, '»'),
          speed, label),
        slider, el('div', { class: 'turn-links' }, turnLink, ' ', copyButton(turnUrl, 'Copy link to this turn'))),
      panel,
      // Below both (on a phone, below the turn's moves): what the colours are.
      el('div', { class: 'legend-row' }, legendItems)));
  document.addEventListener('keydown', ev => {
    if (ev.target.tagName === 'INPUT' || ev.target.tagName === 'SELECT') return;
    if (ev.key === ' ') { ev.preventDefault(); timer ? pause() : play(); }
    if (ev.key === 'ArrowRight') { pause(); go(k + 1); }
    if (ev.key === 'ArrowLeft') { pause(); go(k - 1); }
  }, listening);
  let resizing = null;
  window.addEventListener('resize', () => { clearTimeout(resizing); resizing = setTimeout(() => { fit(); draw(); }, 100); }, listening);
  fit();
  // ?turn=N opens the match at turn N (the frame after that turn's moves);
  // a live match opens at its newest turn.
  const asked = Number(new URLSearchParams(location.search).get('turn'));
  if (Number.isInteger(asked) && asked > 0) {
    const at = frames.frames.findIndex(f => f.turn >= asked);
    k = at >= 0 ? at : last;
  } else if (live) {
    k = last;
  }
  draw();
  // When the page's first board was on screen (performance.now() time):
  // the browser test prints it for the longest replay.
  if (!performance.getEntriesByName('koth-first-frame').length) performance.mark('koth-first-frame');
  return {
    frames: () => frames.frames.length,
    extend(turns, more) {
      const following = k === last && !timer;
      replay.turns.push(...turns);
      frames.frames.push(...more);
      last = frames.frames.length - 1;
      slider.max = last;
      if (following) go(last);
      else label.textContent = `turn ${k} / ${last}`;
    },
  };
}

// ---- submit --------------------------------------------------------------

async function submitPage() {
  const [ladders, languages, who] = await Promise.all([api('/api/ladders'), api('/api/languages'), me()]);
  const params = new URLSearchParams(location.search);
  if (!who) {
    setMain(el('h1', {}, 'Submit a bot'), el('p', {}, 'You need an account: ', el('a', { href: '/#account-box' }, 'sign up or sign in'), ' first.'));
    return;
  }
  const ladder = el('select', { id: 'ladder', name: 'ladder' }, ladders.map(l => el('option', { value: l.id, selected: String(l.id) === params.get('ladder') }, `${l.game} · ${l.name}`)));
  const name = el('input', { id: 'bot-name', name: 'name', required: true, pattern: '[A-Za-z0-9_.\\-]{1,40}', value: params.get('name') || '' });
  const runnable = languages.filter(l => l.available);
  const unavailable = languages.filter(l => !l.available);
  const exts = runnable.flatMap(l => l.extensions.map(x => '.' + x)).concat(['.tar', '.tar.gz', '.tgz', '.zip']);
  const file = el('input', { id: 'bot-file', name: 'file', type: 'file', required: true, accept: exts.join(',') });
  const progress = el('div', { id: 'progress', 'aria-live': 'polite' });
  const form = el('form', {
    id: 'submit-form', onsubmit: async ev => {
      ev.preventDefault();
      const f = file.files[0];
      if (!f) return;
      progress.replaceChildren(el('p', {}, 'Uploading…'));
      try {
        const body = await f.arrayBuffer();
        const r = await api(`/api/ladders/${ladder.value}/bots/${encodeURIComponent(name.value)}?file=${encodeURIComponent(f.name)}`, { method: 'POST', body });
        await follow(r, progress);
      } catch (e) { progress.replaceChildren(errorBox(e)); }
    }
  },
  el('p', {}, el('label', {}, 'Ladder ', ladder)),
  el('p', {}, el('label', {}, 'Bot name ', name), ' ', el('small', {}, 'the same name again submits a new version of your bot')),
  el('p', {}, el('label', {}, 'Source ', file)),
  el('p', { class: 'hint' }, 'One source file, or an archive (.tar, .tar.gz, .zip) with a main file bot.<ext> or main.<ext>, or a koth.json naming the language and main file. Languages: ',
    runnable.map((l, i) => [i ? ', ' : '', el('span', { title: l.runs_with || '' }, `${l.display} (.${l.extensions.join(', .')})`)]), '.'),
  unavailable.length ? el('details', { id: 'unavailable-languages', class: 'hint' },
    el('summary', {}, `Not available on this server: ${unavailable.map(l => l.display).join(', ')}`),
    el('ul', {}, unavailable.map(l => el('li', {}, el('strong', {}, l.display), ': ', l.unavailable)))) : '',
  el('p', {}, el('button', { type: 'submit', id: 'submit-button' }, 'Submit')));
  setMain(el('h1', {}, 'Submit a bot'), form, progress);
}

/** Follow a submission: the compile, then its first matches. */
async function follow(r, box) {
  const head = el('p', {}, `Version ${r.number} of `, el('a', { href: '/bots/' + r.bot, id: 'bot-link' }, 'your bot'), ` submitted (${r.language}, ${r.main}).`);
  const status = el('p', { id: 'compile-status' }, 'Compiling…');
  const log = el('div');
  const first = el('div', { id: 'first-matches' });
  box.replaceChildren(head, status, log, first);
  let v, saidValidating = false;
  for (let i = 0; i < 600; i++) {
    const bot = await api('/api/bots/' + r.bot);
    v = bot.versions.find(x => x.id === r.version);
    if (v && v.status === 'pending') status.textContent = v.job === 'running' ? 'Compiling…' : 'Queued, waiting for a runner…';
    if (v && v.status === 'validating' && !saidValidating) {
      status.replaceChildren('Compiled. Playing its ',
        v.validation_match ? el('a', { href: '/matches/' + v.validation_match, id: 'validation-link' }, 'validation game') : 'validation game',
        ' (a short match against copies of itself) before it joins the ladder…');
      saidValidating = true;
    }
    if (v && v.status !== 'pending' && v.status !== 'validating') break;
    await sleep(1000);
  }
  if (!v || v.status === 'pending' || v.status === 'validating') {
    status.textContent = `Still ${v ? v.status : 'pending'}: waiting for a runner; this page will not update further.`;
    return;
  }
  const l = await api(`/api/versions/${r.version}/log`);
  if (v.status === 'failed') {
    status.replaceChildren(el('span', { class: 'status-failed' }, 'The compile failed:'));
    log.replaceChildren(el('pre', { class: 'log', id: 'compile-output' }, l.log || '(no output)'));
    return;
  }
  if (v.status === 'refused') {
    status.replaceChildren(el('span', { class: 'status-refused' }, 'Refused by its validation game:'),
      ...(l.validation_match ? [' ', el('a', { href: '/matches/' + l.validation_match }, 'watch it')] : []));
    log.replaceChildren(el('pre', { class: 'log', id: 'validation-output' }, l.validation || '(no reason recorded)'));
    return;
  }
  status.replaceChildren(el('span', { class: 'status-ready' }, 'Compiled and validated.'), ' Waiting for its first matches…');
  log.replaceChildren(
    l.log ? el('details', {}, el('summary', {}, 'compiler output'), el('pre', { class: 'log' }, l.log)) : '',
    l.validation ? el('p', { id: 'validation-summary' }, l.validation) : '');
  for (let i = 0; i < 300; i++) {
    const ms = (await api(`/api/bots/${r.bot}/matches`)).filter(m => m.state !== 'queued');
    if (ms.length) first.replaceChildren(el('h3', {}, 'First matches'), matchTable(ms.slice(-5).reverse(), r.bot));
    if (ms.length >= 3) break;
    await sleep(2000);
  }
}

// ---- your account: bots and tokens ---------------------------------------

async function mePage() {
  const who = await me();
  if (!who) {
    setMain(el('h1', {}, 'Your account'), el('p', {}, el('a', { href: '/#account-box' }, 'Sign up or sign in'), ' first.'));
    return;
  }
  const [bots, tokens] = await Promise.all([api('/api/me/bots'), api('/api/me/tokens')]);
  const botRows = bots.map(b => [
    el('a', { href: '/bots/' + b.id }, b.name), el('a', { href: '/ladders/' + b.ladder }, b.ladder_name), b.game, b.language ?? '–',
    b.current_version ?? '–',
    b.latest_version === null ? '–' : [`v${b.latest_version} `, el('span', { class: 'status-' + b.latest_status }, b.latest_status)],
    b.disabled_reason ? el('span', { class: 'error' }, 'disabled: ' + b.disabled_reason)
      : b.current_version === null ? 'not playing: no version has compiled' : 'playing']);
  const out = el('div', { id: 'token-result' });
  const tokenList = el('div', { id: 'tokens' });
  const drawTokens = list => tokenList.replaceChildren(table(['name', 'made', 'last used', 'expires', ''], list.map(t => [
    t.name, when(t.created_at), when(t.last_used_at), t.expires_at ? when(t.expires_at) : 'never',
    t.current ? el('em', {}, 'this browser\'s') : el('button', { class: 'revoke', 'data-token': t.id, onclick: async () => {
      try { await api('/api/me/tokens/' + t.id, { method: 'DELETE' }); drawTokens(await api('/api/me/tokens')); }
      catch (e) { out.replaceChildren(errorBox(e)); }
    } }, 'Revoke')]), { id: 'token-table' }));
  drawTokens(tokens);
  const newName = el('input', { id: 'token-name', required: true, placeholder: 'e.g. laptop CLI' });
  const form = el('form', { id: 'new-token-form', onsubmit: async ev => {
    ev.preventDefault();
    try {
      const t = await api('/api/me/tokens', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ name: newName.value }) });
      out.replaceChildren(el('p', {}, 'New token ', el('strong', {}, t.name), ' (shown once; for ', el('code', {}, 'koth login'), '):'), el('pre', { id: 'made-token' }, t.token));
      drawTokens(await api('/api/me/tokens'));
    } catch (e) { out.replaceChildren(errorBox(e)); }
  } }, el('label', {}, 'New token named ', newName), ' ', el('button', { type: 'submit' }, 'Make it'));
  setMain(el('h1', {}, 'Your account ', el('small', {}, who.name, who.is_host ? ' · host' : '')),
    el('h2', {}, 'Your bots'),
    bots.length ? table(['bot', 'ladder', 'game', 'language', 'playing version', 'newest version', 'state'], botRows, { id: 'my-bots' })
      : el('p', { id: 'my-bots' }, 'No bots yet: ', el('a', { href: '/submit' }, 'submit one'), '.'),
    el('h2', {}, 'API tokens'),
    el('p', { class: 'hint' }, 'Each program you sign in with (this browser, ', el('code', {}, 'koth login'), ') has its own token; revoke one you no longer use or that may have leaked. It stops working at once.'),
    tokenList, form, out);
}

// ---- a replay from the reader's machine -----------------------------------

/** Open a replay file (dropped on the page or chosen): the server draws it,
 * keeps nothing, and the match viewer shows it as `koth replay view` does. */
async function replayPage() {
  const status = el('p', { id: 'replay-status' }, 'Drop a replay file here, or choose one.');
  const input = el('input', { type: 'file', id: 'replay-file', accept: '.json,application/json' });
  const zone = el('div', { id: 'drop-zone', class: 'drop-zone' }, status, input);
  const open = async file => {
    status.textContent = `Drawing ${file.name}…`;
    try {
      const text = await file.text();
      const drawn = await api('/api/replays/frames', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: text });
      DROPPED = { '/api/matches/0': drawn.info, '/api/matches/0/replay': JSON.parse(text), '/api/matches/0/frames': drawn.frames };
      LOCAL = true;
      await matchPage(0);
    } catch (e) { status.replaceChildren(el('span', { class: 'error' }, `${file.name}: ${e.message}`)); }
  };
  input.addEventListener('change', () => input.files[0] && open(input.files[0]));
  zone.addEventListener('dragover', ev => { ev.preventDefault(); zone.classList.add('over'); });
  zone.addEventListener('dragleave', () => zone.classList.remove('over'));
  zone.addEventListener('drop', ev => { ev.preventDefault(); zone.classList.remove('over'); if (ev.dataTransfer.files[0]) open(ev.dataTransfer.files[0]); });
  setMain(el('h1', {}, 'Open a replay'),
    el('p', {}, 'A replay from your machine (', el('code', {}, 'koth match --replay FILE'), ' or ', el('code', {}, 'koth replay download'),
      '), shown in the viewer the match pages use. It is drawn by this server and not kept.'), zone);
}

// ---- the audit trail (hosts) ---------------------------------------------

/** Hosts: what koth and its hosts did, newest first (GET /api/audit), with
 * filters in the page's query (?ladder=3&bot=7&action=bot_disabled) and a
 * button for older entries. Each entry's words (`what`) are the server's. */
async function auditPage() {
  const who = await me();
  if (!who || !who.is_host) {
    setMain(el('h1', {}, 'Audit trail'), el('p', { class: 'error', id: 'audit-refused' }, 'Only hosts read the audit trail: sign in with a host\'s token.'));
    return;
  }
  const params = new URLSearchParams(location.search);
  const [ladders, actions] = await Promise.all([api('/api/ladders'), api('/api/openapi.json')
    .then(doc => doc.components.schemas.AuditAction.enum)]);
  const pick = (name, options) => {
    const s = el('select', { name, id: 'audit-' + name }, el('option', { value: '' }, 'all'),
      options.map(([v, label]) => el('option', { value: v, selected: params.get(name) === String(v) }, label)));
    return el('label', {}, name, ' ', s);
  };
  const bot = el('input', { name: 'bot', id: 'audit-bot', size: 6, value: params.get('bot') || '', placeholder: 'bot id' });
  const filters = el('form', { id: 'audit-filters', method: 'get', action: '/audit' },
    pick('ladder', ladders.map(l => [l.id, l.name])), ' ', pick('action', actions.map(a => [a, a.replaceAll('_', ' ')])), ' ',
    el('label', {}, 'bot ', bot), ' ', el('button', { type: 'submit' }, 'Show'));
  const body = el('tbody', {});
  const more = el('button', { id: 'audit-older', hidden: true }, 'Older entries');
  const out = el('div', {});
  const query = new URLSearchParams();
  for (const k of ['ladder', 'bot', 'action']) if (params.get(k)) query.set(k, params.get(k));
  const load = async before => {
    if (before) query.set('before', before);
    try {
      const page = await api('/api/audit?' + query.toString());
      for (const e of page.entries) {
        const about = [e.ladder && el('a', { href: '/ladders/' + e.ladder }, 'ladder ' + e.ladder), e.bot && botLink(e.bot),
          e.match && el('a', { href: '/matches/' + e.match }, 'match ' + e.match)].filter(Boolean);
        body.append(el('tr', { class: 'audit-entry', 'data-action': e.action }, el('td', {}, e.id), el('td', {}, when(e.at)),
          el('td', {}, e.actor_name), el('td', {}, e.what), el('td', {}, about.flatMap((a, i) => i ? [' ', a] : [a])),
          el('td', { class: 'why' }, e.why)));
      }
      more.hidden = !page.next_before;
      more.onclick = () => load(page.next_before);
      if (!body.children.length) out.replaceChildren(el('p', { id: 'audit-empty' }, 'Nothing recorded yet.'));
    } catch (e) { out.replaceChildren(errorBox(e)); }
  };
  setMain(el('h1', {}, 'Audit trail'),
    el('p', { class: 'hint' }, 'Every match\'s and compile\'s outcome, validation verdict, automatic disable and host action, newest first. Also ',
      el('code', {}, 'koth audit'), ' and ', el('code', {}, 'GET /api/audit'), '.'),
    filters, el('table', { id: 'audit' }, el('thead', {}, el('tr', {}, ['#', 'when', 'who', 'what', 'about', 'why'].map(h => el('th', {}, h)))), body),
    more, out);
  await load(null);
}

// ---- start ---------------------------------------------------------------

async function start() {
  header();
  const page = document.body.dataset.page;
  const id = Number(document.body.dataset.id);
  const pages = { home: homePage, ladder: ladderPage, bot: botPage, match: matchPage, submit: submitPage, me: mePage, replay: replayPage, game: gamePage, audit: auditPage };
  if (!pages[page]) return;
  try {
    await pages[page](id);
  } catch (e) {
    setMain(el('h1', {}, e.status === 404 ? 'Not found' : 'Something went wrong'), errorBox(e),
      el('p', {}, LOCAL ? el('a', { href: '/matches/0' }, 'Back to the replay') : el('a', { href: '/' }, 'Back to the ladders')));
  }
}

start();
