// The dashboard: renders what the launcher streams (server-sent events) and posts the actions.
// Plain DOM, no framework; every value is set with textContent, never parsed as HTML.

const state = {
  /** Launcher clock minus this browser's clock, so lease countdowns use the launcher's time. */
  clockOffset: 0,
  replicas: [],
  locks: [],
  timeline: [],
  /** The hold timeline's lanes by key, as the launcher derived them. */
  holdLanes: new Map(),
  results: [],
  running: { burst: false, jobs: false, exports: false },
  queueEnabled: false,
};

const $ = (selector) => document.querySelector(selector);
const now = () => Date.now() + state.clockOffset;
const TIMELINE_PER_REPLICA = 40;

function element(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (name === 'className') node.className = value;
    else node.setAttribute(name, value);
  }
  for (const child of children) node.append(child);
  return node;
}

function clock(at) {
  const date = new Date(at);
  const pad = (n, width = 2) => String(n).padStart(width, '0');
  return `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`;
}

function seconds(ms) {
  return `${(ms / 1000).toFixed(1)} s`;
}

// ---- replicas ------------------------------------------------------------------------------

function replicaStatus(replica) {
  if (replica.status === 'killed' && replica.restartAt) {
    return `killed, restarts in ${Math.max(0, Math.ceil((replica.restartAt - now()) / 1000))} s`;
  }
  return replica.status === 'up' ? `up, pid ${replica.pid}` : replica.status;
}

function renderReplicas() {
  const list = $('#replicas');
  // Keep keyboard focus on the same button across re-renders.
  const focused = document.activeElement?.getAttribute('data-kill');
  list.replaceChildren(
    ...state.replicas.map((replica) => {
      const up = replica.status === 'up';
      const button = element(
        'button',
        { type: 'button', className: 'danger', 'data-kill': replica.name },
        `Kill ${replica.name}`,
      );
      button.disabled = !up;
      button.addEventListener('click', () =>
        post(
          `/api/replicas/${encodeURIComponent(replica.name)}/kill`,
          `Killing ${replica.name}…`,
          `${replica.name} was killed (SIGKILL): it released nothing, so its locks end when their leases run out.`,
        ),
      );
      return element(
        'li',
        { 'data-replica': replica.name },
        element(
          'span',
          {},
          element('strong', {}, replica.name),
          ' ',
          element(
            'span',
            { className: up ? 'status-up' : 'status-down', 'data-status': replica.status },
            replicaStatus(replica),
          ),
        ),
        button,
      );
    }),
  );
  if (focused) list.querySelector(`[data-kill="${focused}"]`)?.focus();
}

/** Only the restart countdowns change between events; the buttons stay where they are. */
function tickReplicaStatuses() {
  for (const replica of state.replicas) {
    const status = $(`[data-replica="${replica.name}"] [data-status]`);
    if (status) status.textContent = replicaStatus(replica);
  }
}

function replicaIsUp(name) {
  return state.replicas.some((r) => r.name === name && r.status === 'up');
}

// ---- locks ---------------------------------------------------------------------------------

function leaseText(lock) {
  if (lock.state === 'lost') return 'lost by its holder';
  if (!lock.holder) return 'free';
  if (lock.expiresAt === null) return 'never expires';
  const left = lock.expiresAt - now();
  if (left > 0) return `${seconds(left)} left`;
  const gone = replicaIsUp(lock.holder) ? '' : ` (${lock.holder} is down)`;
  return `expired ${seconds(-left)} ago${gone}`;
}

/** A lock with a limit: every holder with its own fencing token and lease, and how full it is. */
function holdersCell(lock) {
  if (lock.holders.length === 0) return element('td', { 'data-col': 'holder' }, '—');
  const lease = (holder) => leaseText({ state: 'held', holder: holder.replica, expiresAt: holder.expiresAt });
  return element(
    'td',
    { 'data-col': 'holder' },
    element('span', { className: 'places' }, `${lock.holders.length} of at most ${lock.limit}`),
    element(
      'ul',
      { className: 'holders' },
      ...lock.holders.map((holder) =>
        element(
          'li',
          { 'data-holder': holder.replica, 'data-holder-token': holder.fencingToken ?? '' },
          `${holder.replica} · token ${holder.fencingToken ?? '?'} · ${lease(holder)}`,
        ),
      ),
    ),
  );
}

function renderLocks() {
  const body = $('#locks tbody');
  $('#locks-empty').hidden = state.locks.length > 0;
  body.replaceChildren(
    ...state.locks.map((lock) => {
      const expired = lock.holder && lock.expiresAt !== null && lock.expiresAt <= now();
      const waiters = Object.entries(lock.waiters)
        .map(([replica, count]) => `${replica} ×${count}`)
        .join(', ');
      const limited = lock.limit > 1;
      return element(
        'tr',
        {
          'data-key': lock.key,
          'data-holder': lock.holder ?? '',
          'data-token': lock.fencingToken ?? '',
          'data-expires-at': lock.expiresAt ?? '',
          'data-limit': lock.limit,
          'data-holder-count': lock.holders.length,
          className: expired ? 'expired' : '',
        },
        element('td', { className: 'key' }, lock.key, limited ? ` (limit ${lock.limit})` : ''),
        limited ? holdersCell(lock) : element('td', { 'data-col': 'holder' }, lock.holder ?? '—'),
        element('td', { 'data-col': 'token' }, lock.fencingToken === null ? '—' : String(lock.fencingToken)),
        element('td', { 'data-col': 'lease' }, limited ? placesText(lock) : leaseText(lock)),
        element('td', { 'data-col': 'waiters' }, waiters || '—'),
      );
    }),
  );
}

function placesText(lock) {
  if (lock.holders.length === 0) return lock.state === 'lost' ? 'lost by its holder' : 'free';
  const free = Math.max(0, lock.limit - lock.holders.length);
  return free === 0 ? 'every place taken' : `${free} place${free === 1 ? '' : 's'} free`;
}

// ---- timeline ------------------------------------------------------------------------------

function describeEvent(entry) {
  const token = entry.fencingToken === undefined ? '' : ` · token ${entry.fencingToken}`;
  const heldBy = entry.holder ? ` (held by ${entry.holder})` : '';
  switch (entry.type) {
    case 'acquired':
      return `acquired ${entry.key}${token}`;
    case 'released':
      return `released ${entry.key}${token}`;
    case 'waiting':
      return `waiting for ${entry.key}${heldBy}`;
    case 'contended':
      // 'busy': tryAcquire found it held; 'timeout': waitMs ran out (0 for a skipped cron run).
      return `did not get ${entry.key}${heldBy}: ${entry.reason}`;
    case 'lost':
      return `LOST ${entry.key}${token}: ${entry.reason ?? ''}`;
    default:
      return `${entry.type} ${entry.key}`;
  }
}

function renderTimeline() {
  const names = [
    ...new Set([...state.replicas.map((r) => r.name), ...state.timeline.map((e) => e.replica)]),
  ].sort();
  const container = $('#timeline');
  container.replaceChildren(
    ...names.map((name) => {
      const entries = state.timeline
        .filter((e) => e.replica === name)
        .slice(-TIMELINE_PER_REPLICA)
        .reverse();
      const headingId = `timeline-${name}`;
      return element(
        'section',
        { 'aria-labelledby': headingId, 'data-timeline': name },
        element('h3', { id: headingId }, name),
        element(
          'ol',
          {},
          ...entries.map((entry) =>
            element(
              'li',
              { className: `ev-${entry.type}`, 'data-type': entry.type, 'data-key': entry.key },
              element('time', { datetime: new Date(entry.at).toISOString() }, clock(entry.at)),
              describeEvent(entry),
            ),
          ),
        ),
      );
    }),
  );
}

// ---- hold timeline -------------------------------------------------------------------------
// The launcher works out the holds, waits, hand-overs and takeovers; this only lays them out.

const HOLD_WINDOW_MS = 60_000;
const HOLD_ROW_PX = 22;
const WAIT_ROW_PX = 7;
/** Rows per lane at most; more overlapping bars share the last row. */
const MAX_ROWS = 4;
/** Narrower bars would vanish: a 40 ms charge is under a pixel at this scale. */
const MIN_BAR_PERCENT = 0.25;

/** Where a hold's bar ends now: its end, or where its lease ran out unrenewed, or now. */
function holdEnd(hold, at) {
  if (hold.end !== null) return Math.min(hold.end, at);
  if (hold.leaseEnd !== null && hold.leaseEnd < at) return hold.leaseEnd;
  return at;
}

function gapText(ms) {
  return ms < 1000 ? `${Math.max(0, Math.round(ms))} ms` : seconds(ms);
}

function describeHold(hold, at) {
  const who = `${hold.replica} · token ${hold.fencingToken} · ${hold.key}`;
  const since = clock(hold.start);
  let what;
  if (hold.ending === 'released') {
    what = `held ${since} to ${clock(hold.end)} (${seconds(hold.end - hold.start)}), released`;
  } else if (hold.ending === 'lost') {
    what = `held ${since} to ${clock(hold.end)}, then lost it: ${hold.lostReason ?? 'no reason given'}`;
  } else if (hold.ending === 'expired') {
    what =
      hold.end > at
        ? `held since ${since}, never released: its holder is gone, the lease runs out at ${clock(hold.end)}`
        : `held ${since} to ${clock(hold.end)}, never released: its lease ran out`;
  } else if (hold.leaseEnd !== null && hold.leaseEnd < at) {
    what = `held since ${since}, not renewed: its lease ended at ${clock(hold.leaseEnd)}`;
  } else {
    what = `held since ${since} (${seconds(at - hold.start)} so far)`;
  }
  const began = hold.began;
  if (!began) return `${who}: ${what}`;
  const from = `${began.from.replica} (token ${began.from.fencingToken})`;
  const how =
    began.kind === 'handover'
      ? `hand-over from ${from}, ${gapText(began.gapMs)} after its release`
      : `takeover from ${from}, ${began.from.ending === 'lost' ? 'which had lost the lock' : 'which never released it'}`;
  return `${who}: ${how}; ${what}`;
}

function describeWait(wait, at) {
  const held = wait.heldBy ? ` (held by ${wait.heldBy})` : '';
  const from = clock(wait.start);
  switch (wait.outcome) {
    case 'acquired':
      return `${wait.replica} waited ${seconds(wait.end - wait.start)} for ${wait.key} from ${from}${held}, then got it with token ${wait.fencingToken}`;
    case 'busy':
    case 'timeout':
    case 'aborted':
      return wait.end === wait.start
        ? `${wait.replica} was turned away from ${wait.key} at ${from}${held}: ${wait.outcome}`
        : `${wait.replica} waited ${seconds(wait.end - wait.start)} for ${wait.key} from ${from}${held}, then gave up: ${wait.outcome}`;
    case 'gone':
      return `${wait.replica} waited for ${wait.key} from ${from}${held} until the replica went away`;
    default:
      return `${wait.replica} has been waiting for ${wait.key} since ${from}${held} (${seconds(at - wait.start)})`;
  }
}

/** Greedy rows: each item goes to the first row free by its start; returns a row per item. */
function packRows(items, startOf, endOf) {
  const rowEnds = [];
  return items.map((item) => {
    let row = rowEnds.findIndex((end) => end <= startOf(item));
    if (row === -1) row = Math.min(rowEnds.length, MAX_ROWS - 1);
    rowEnds[row] = Math.max(rowEnds[row] ?? 0, endOf(item));
    return row;
  });
}

/** `replica-2` → `who-2`: one colour per replica. */
const whoClass = (replica) => `who-${/(\d+)$/.exec(replica)?.[1] ?? 0}`;

function renderLane(lane, index, from, at) {
  const percent = (t) => ((Math.min(Math.max(t, from), at) - from) / HOLD_WINDOW_MS) * 100;
  const place = (start, end, top) => {
    const left = percent(start);
    const width = Math.max(percent(end) - left, MIN_BAR_PERCENT);
    return `left:${left.toFixed(3)}%;width:${width.toFixed(3)}%;top:${top}px`;
  };
  const holds = lane.holds.filter((hold) => holdEnd(hold, at) >= from);
  const waits = lane.waits.filter((wait) => (wait.end ?? at) >= from);
  const holdRows = packRows(
    holds,
    (h) => h.start,
    (h) => holdEnd(h, at),
  );
  const waitRows = packRows(
    waits,
    (w) => w.start,
    (w) => w.end ?? at,
  );
  const holdHeight = (Math.max(0, ...holdRows) + 1) * HOLD_ROW_PX;
  const height = holdHeight + (waits.length ? (Math.max(...waitRows) + 1) * (WAIT_ROW_PX + 2) + 2 : 0);

  const bars = holds.map((hold, i) => {
    const text = describeHold(hold, at);
    const wide = holdEnd(hold, at) - Math.max(hold.start, from) >= HOLD_WINDOW_MS / 15;
    return element(
      'li',
      {
        className: `hold ${whoClass(hold.replica)} ending-${hold.ending}${hold.began ? ` began-${hold.began.kind}` : ''}`,
        style: place(hold.start, holdEnd(hold, at), holdRows[i] * HOLD_ROW_PX),
        'data-key': hold.key,
        'data-replica': hold.replica,
        'data-token': String(hold.fencingToken),
        'data-ending': hold.ending,
        'data-began': hold.began?.kind ?? '',
        'aria-label': text,
        title: text,
      },
      wide ? `${hold.replica} · ${hold.fencingToken}` : '',
    );
  });
  // Hand-overs and takeovers get a mark across the lane where the new hold began.
  const marks = holds
    .filter((hold) => hold.began && hold.start >= from)
    .map((hold) =>
      element('span', {
        className: `mark ${hold.began.kind}`,
        style: `left:${percent(hold.start).toFixed(3)}%;height:${holdHeight}px`,
        'data-mark': hold.began.kind,
        title: `${hold.began.kind === 'handover' ? 'hand-over' : 'takeover'}: ${hold.began.from.replica} → ${hold.replica}`,
      }),
    );
  const waitBars = waits.map((wait, i) => {
    const text = describeWait(wait, at);
    const point = wait.end !== null && wait.end === wait.start;
    return element('li', {
      className: `wait ${whoClass(wait.replica)} outcome-${wait.outcome}${point ? ' turned-away' : ''}`,
      style: place(wait.start, wait.end ?? at, holdHeight + 2 + waitRows[i] * (WAIT_ROW_PX + 2)),
      'data-key': wait.key,
      'data-replica': wait.replica,
      'data-outcome': wait.outcome,
      'aria-label': text,
      title: text,
    });
  });
  const headingId = `lane-${index}`;
  return element(
    'section',
    { className: 'lane', 'data-lane': lane.key, 'aria-labelledby': headingId },
    element(
      'h3',
      { id: headingId, className: 'lane-key' },
      lane.key,
      lane.limit > 1 ? ` (limit ${lane.limit})` : '',
    ),
    element(
      'div',
      { className: 'lane-track', style: `height:${Math.max(height, HOLD_ROW_PX)}px` },
      element('ol', { className: 'holds', 'aria-label': `Holds of ${lane.key}, oldest first` }, ...bars),
      element('ol', { className: 'waits', 'aria-label': `Callers waiting for ${lane.key}` }, ...waitBars),
      element('div', { className: 'marks', 'aria-hidden': 'true' }, ...marks),
    ),
  );
}

function renderHoldTimeline() {
  const at = now();
  const from = at - HOLD_WINDOW_MS;
  const lanes = [...state.holdLanes.values()].sort((a, b) => a.key.localeCompare(b.key));
  $('#holds-empty').hidden = lanes.length > 0;
  const ticks = [60, 45, 30, 15, 0].map((ago) =>
    element(
      'span',
      {
        className: 'tick',
        style: `left:${(((HOLD_WINDOW_MS - ago * 1000) / HOLD_WINDOW_MS) * 100).toFixed(1)}%`,
      },
      ago === 0 ? 'now' : `${ago} s ago`,
    ),
  );
  $('#hold-timeline').replaceChildren(
    element(
      'div',
      { className: 'lane axis', 'aria-hidden': 'true' },
      element('span'),
      element('div', { className: 'lane-track' }, ...ticks),
    ),
    ...lanes.map((lane, index) => renderLane(lane, index, from, at)),
  );
}

/** The launcher sends the lanes that changed, and every key it still keeps. */
function applyLanes({ lanes, keys }) {
  for (const lane of lanes) state.holdLanes.set(lane.key, lane);
  const kept = new Set(keys);
  for (const key of state.holdLanes.keys()) if (!kept.has(key)) state.holdLanes.delete(key);
}

// ---- checks --------------------------------------------------------------------------------

function summarise(result) {
  if (result.kind === 'burst') {
    const verdict = result.passed ? 'Passed' : 'FAILED';
    const overlap = result.passed
      ? `no two holders overlapped (${result.workEntries} charges checked on ${result.invoices.join(' and ')})`
      : `${result.overlaps} overlaps: ${result.overlapDetails.join('; ')}`;
    return {
      verdict: `Burst #${result.number}: ${verdict}`,
      detail:
        `${overlap}; the ledger rejected ${result.staleRejected} stale writes ` +
        `(${result.lateWrites} writes arrived late, ${result.lateAccepted} of them still current). ` +
        `Answers: ${result.accepted} charged, ${result.timedOut} timed out waiting for the ledger, ${result.failed} failed. ` +
        `Highest tokens: ${Object.entries(result.highestTokens)
          .map(([id, token]) => `${id} ${token}`)
          .join(', ')}.`,
    };
  }
  if (result.kind === 'exports') {
    const verdict = result.passed ? 'Passed' : 'FAILED';
    const within =
      result.overlaps === 0
        ? `at most ${result.limit} exports of customer ${result.customer} ran at once (peak ${result.peak}, ${result.workEntries} exports checked)`
        : `${result.overlaps} times more than ${result.limit} ran at once: ${result.overlapDetails.join('; ')}`;
    return {
      verdict: `Exports #${result.number}: ${verdict}`,
      detail:
        `${within}; ${result.completed} of ${result.exports} completed, ${result.failed} failed. ` +
        `Fencing tokens: ${result.fencingTokens.join(', ')}.`,
    };
  }
  const verdict = result.passed ? 'Passed' : 'FAILED';
  const overlap = result.passed
    ? `no two jobs of one customer overlapped (${result.workEntries} runs checked)`
    : `${result.overlaps} overlaps: ${result.overlapDetails.join('; ')}`;
  return {
    verdict: `Jobs #${result.number}: ${verdict}`,
    detail:
      `${overlap}; ${result.completed} of ${result.jobs} completed, ${result.failed} failed; ` +
      `${result.redelays} times a job found its customer locked and went back to the delayed set.`,
  };
}

function renderResults() {
  const list = $('#results');
  list.replaceChildren(
    ...state.results
      .slice()
      .reverse()
      .map((result) => {
        const { verdict, detail } = summarise(result);
        return element(
          'li',
          {
            className: result.passed ? 'passed' : 'failed',
            'data-kind': result.kind,
            'data-number': String(result.number),
            'data-passed': String(result.passed),
            'data-stale-rejected': String(result.staleRejected ?? ''),
            'data-overlaps': String(result.overlaps),
            'data-peak': String(result.peak ?? ''),
          },
          element('span', { className: 'verdict' }, verdict),
          ': ',
          detail,
        );
      }),
  );
}

function renderButtons() {
  $('#burst').disabled = state.running.burst;
  $('#burst').textContent = state.running.burst ? 'Burst running…' : 'Fire 20 parallel charges';
  const jobs = $('#jobs');
  jobs.disabled = state.running.jobs || !state.queueEnabled;
  jobs.textContent = !state.queueEnabled
    ? 'Queue off (no Redis)'
    : state.running.jobs
      ? 'Jobs running…'
      : 'Enqueue 30 jobs over 3 customers';
  $('#exports').disabled = state.running.exports;
  $('#exports').textContent = state.running.exports
    ? 'Exports running…'
    : 'Start 8 exports for customer acme';
}

function announce(text) {
  $('#action-status').textContent = text;
}

// ---- actions -------------------------------------------------------------------------------

async function post(path, pending, done) {
  announce(pending);
  try {
    const response = await fetch(path, { method: 'POST' });
    if (response.ok && done) announce(done);
    if (!response.ok) {
      const body = await response.json().catch(() => ({}));
      announce(body.error ?? `The launcher answered ${response.status}.`);
    }
  } catch {
    announce('The launcher did not answer; is it still running?');
  }
}

$('#burst').addEventListener('click', () => post('/api/burst', 'Burst started: 20 charges in flight…'));
$('#jobs').addEventListener('click', () =>
  post('/api/jobs', 'Enqueued 30 jobs; waiting for them to finish…'),
);
$('#exports').addEventListener('click', () =>
  post('/api/exports', 'Started 8 exports of customer acme; at most 2 run at once…'),
);

// ---- the event stream ----------------------------------------------------------------------

function syncClock(serverNow) {
  if (typeof serverNow === 'number') state.clockOffset = serverNow - Date.now();
}

const source = new EventSource('/events');
const listen = (type, handler) =>
  source.addEventListener(type, (message) => handler(JSON.parse(message.data)));

listen('snapshot', (snapshot) => {
  syncClock(snapshot.serverNow);
  Object.assign(state, {
    replicas: snapshot.replicas,
    locks: snapshot.locks,
    timeline: snapshot.timeline,
    holdLanes: new Map(snapshot.holds.map((lane) => [lane.key, lane])),
    results: snapshot.results,
    running: snapshot.running,
    queueEnabled: snapshot.queueEnabled,
  });
  $('#store').textContent = `Lock store: ${snapshot.store}. Lease: ${seconds(snapshot.leaseMs)}.`;
  const notices = $('#notices');
  notices.hidden = snapshot.notices.length === 0;
  $('#notice-list').replaceChildren(...snapshot.notices.map((text) => element('li', {}, text)));
  $('#connection').textContent = 'Live: connected to the launcher.';
  $('#connection').classList.remove('offline');
  renderReplicas();
  renderLocks();
  renderTimeline();
  renderHoldTimeline();
  renderResults();
  renderButtons();
});

listen('locks', ({ locks, serverNow }) => {
  syncClock(serverNow);
  state.locks = locks;
  renderLocks();
});

let timelineQueued = false;
listen('timeline', (entry) => {
  state.timeline.push(entry);
  if (state.timeline.length > 600) state.timeline.splice(0, state.timeline.length - 600);
  // Bursts bring dozens of events at once: draw once per frame.
  if (timelineQueued) return;
  timelineQueued = true;
  requestAnimationFrame(() => {
    timelineQueued = false;
    renderTimeline();
  });
});

let holdsQueued = false;
listen('holds', (update) => {
  syncClock(update.serverNow);
  applyLanes(update);
  if (holdsQueued) return;
  holdsQueued = true;
  requestAnimationFrame(() => {
    holdsQueued = false;
    renderHoldTimeline();
  });
});

listen('replicas', ({ replicas, serverNow }) => {
  syncClock(serverNow);
  state.replicas = replicas;
  renderReplicas();
  renderTimeline();
});

listen('running', (running) => {
  state.running = running;
  renderButtons();
});

listen('result', (result) => {
  state.results.push(result);
  renderResults();
  // The list shows the result; the visible status would only repeat it. Screen readers hear it
  // from the hidden announcement.
  const { verdict, detail } = summarise(result);
  announce('');
  $('#result-announcement').textContent = `${verdict}: ${detail}`;
});

source.addEventListener('error', () => {
  $('#connection').textContent = 'Disconnected from the launcher; retrying…';
  $('#connection').classList.add('offline');
});

// Lease countdowns and restart timers move on their own.
setInterval(() => {
  renderLocks();
  tickReplicaStatuses();
}, 250);
// So do running holds and waits, and the window slides.
setInterval(renderHoldTimeline, 500);
