// The lockwatch console: the REST API (/api/v1) with the operator's token, kept for this browser tab only. What is
// on the screen is read again every 2 s, so a door that opens shows without a reload. With a client's key (its own,
// or the session a portal link opens: #portal=lwp_… in the address) it is that client's portal instead.
'use strict';
(function () {
  const API = '/api/v1';
  const REFRESH_MS = 2000;
  const $ = (id) => document.getElementById(id);
  let view = 'overview';
  let sensorCursor = null;   // the cursor of the page shown (null: the first)
  let nextCursor = null;
  let timer = null;
  let sensorShown = null;    // the sensor of the sensor page
  let spanHours = 24;
  let me = null;             // who the token is (GET /me): an operator, or a client

  function token() { return sessionStorage.getItem('lockwatch.token'); }

  function say(text, isError) {
    $('status').textContent = text || '';
    $('status').className = isError ? 'error' : '';
  }

  async function api(method, path, body, type) {
    const headers = { Authorization: 'Bearer ' + token() };
    if (body !== undefined) headers['Content-Type'] = type || 'application/json';
    const r = await fetch(API + path, { method, headers,
      body: body === undefined ? undefined : (type ? body : JSON.stringify(body)) });
    if (r.status === 401) { logout('The token was refused: log in again.'); throw new Error('unauthorized'); }
    const text = await r.text();
    const json = text && (r.headers.get('Content-Type') || '').includes('json') ? JSON.parse(text) : text;
    if (!r.ok) {
      const detail = json && json.detail ? json.detail : r.status + '';
      throw new Error(r.status === 403 && !detail.startsWith('signed in as') ? 'This token may only read: ' + detail : detail);
    }
    return json;
  }

  function cell(row, text, className) {
    const td = document.createElement('td');
    td.textContent = text === null || text === undefined ? '—' : String(text);
    if (className) td.className = className;
    row.appendChild(td);
    return td;
  }

  function button(label, onClick) {
    const b = document.createElement('button');
    b.type = 'button';
    b.textContent = label;
    b.addEventListener('click', onClick);
    return b;
  }

  function when(iso) { return iso ? new Date(iso).toLocaleString() : null; }

  function link(label, onClick) {
    const b = button(label, onClick);
    b.className = 'link';
    return b;
  }

  function doorText(state) { return state === 0 ? 'open' : state === 1 ? 'closed' : null; }

  /** Draws a table's body anew: one row per item, filled by draw(row, item). */
  function rows(tableId, items, draw) {
    $(tableId).tBodies[0].replaceChildren(...items.map((item) => {
      const tr = document.createElement('tr');
      draw(tr, item);
      return tr;
    }));
  }

  // --- views

  // --- rates and latency: the service's own Prometheus counters, read with the overview, kept for 10 minutes

  const WINDOW_MS = 10 * 60 * 1000;
  const samples = [];   // {at, received, buckets: Map(le -> count)}
  const points = [];    // {at, rate, p50, p99}

  function metric(text, name) {
    let sum = 0, found = false;
    for (const line of text.split('\n')) {
      if (line.startsWith(name + '{') || line.startsWith(name + ' ')) {
        sum += Number(line.slice(line.lastIndexOf(' ') + 1));
        found = true;
      }
    }
    return found ? sum : null;
  }

  function buckets(text, name) {
    const out = new Map();
    for (const line of text.split('\n')) {
      if (!line.startsWith(name + '_bucket{')) continue;
      const le = /le="([^"]+)"/.exec(line);
      if (!le) continue;
      const bound = le[1] === '+Inf' ? Infinity : Number(le[1]);
      out.set(bound, (out.get(bound) || 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
    }
    return out;
  }

  /** The q-quantile of what was added to a cumulative histogram between two samples; null without any. */
  function quantile(before, now, q) {
    const bounds = [...now.keys()].sort((a, b) => a - b);
    const total = (now.get(Infinity) || 0) - ((before && before.get(Infinity)) || 0);
    if (total <= 0) return null;
    for (const b of bounds) {
      if ((now.get(b) || 0) - ((before && before.get(b)) || 0) >= q * total) return b;
    }
    return null;
  }

  async function rates() {
    const r = await fetch('/actuator/prometheus');
    if (!r.ok) return;
    const text = await r.text();
    const at = Date.now();
    const received = metric(text, 'lockwatch_readings_received_total');
    const latency = buckets(text, 'lockwatch_notification_latency_seconds');
    samples.push({ at, received, latency });
    while (samples.length && samples[0].at < at - WINDOW_MS - 60000) samples.shift();
    if (samples.length < 2) return;
    const prev = samples[samples.length - 2];
    // latency over the last 30 s, so that a quiet moment does not blank the line
    const base = samples.find((s) => s.at >= at - 30000) || prev;
    points.push({ at, rate: Math.max(0, (received - prev.received) / ((at - prev.at) / 1000)),
      p50: quantile(base.latency, latency, 0.5), p99: quantile(base.latency, latency, 0.99) });
    while (points.length && points[0].at < at - WINDOW_MS) points.shift();
    const last = points[points.length - 1];
    $('rate-now').textContent = last.rate.toFixed(0) + '/s';
    $('p50-now').textContent = last.p50 === null ? '–' : seconds(last.p50);
    $('p99-now').textContent = last.p99 === null ? '–' : seconds(last.p99);
    chart('rate-chart', [points.map((p) => [p.at, p.rate])], ['#1f3b57']);
    chart('latency-chart', [points.map((p) => [p.at, p.p50]), points.map((p) => [p.at, p.p99])], ['#1f3b57', '#d9534f']);
  }

  function seconds(s) { return s === Infinity ? '> max' : s < 1 ? Math.round(s * 1000) + ' ms' : s.toFixed(1) + ' s'; }

  /** Lines over the last 10 minutes, each scaled to the largest value shown. */
  function chart(id, series, colours) {
    const svg = $(id), end = Date.now(), start = end - WINDOW_MS;
    const values = series.flat().map((p) => p[1]).filter((v) => v !== null && isFinite(v));
    const top = Math.max(1e-9, ...values) * 1.1;
    svg.replaceChildren(...series.map((points, i) => {
      const line = document.createElementNS('http://www.w3.org/2000/svg', 'polyline');
      line.setAttribute('points', points.filter((p) => p[1] !== null && isFinite(p[1]))
        .map((p) => `${((p[0] - start) / WINDOW_MS * 600).toFixed(1)},${(120 - p[1] / top * 115).toFixed(1)}`).join(' '));
      line.setAttribute('fill', 'none');
      line.setAttribute('stroke', colours[i]);
      line.setAttribute('stroke-width', '2');
      line.setAttribute('vector-effect', 'non-scaling-stroke');
      return line;
    }));
  }

  async function overview() {
    const o = await api('GET', '/overview');
    $('ov-online').textContent = o.sensors.online;
    $('ov-lost').textContent = o.sensors.lost;
    $('ov-unknown').textContent = o.sensors.unknown;
    $('ov-open').textContent = o.sensors.doors_open;
    $('ov-alarms').textContent = o.alarms_active;
    $('ov-pending').textContent = o.notifications.pending;
    $('ov-retrying').textContent = o.notifications.retrying;
    $('ov-dead').textContent = o.notifications.dead;
    $('overview-at').textContent = 'at ' + new Date(o.at).toLocaleTimeString();
    $('overview-kept').textContent = `History is kept ${o.kept.history_days} days; delivered, dead and superseded ` +
      `notifications ${o.kept.notifications_days} days after they finished.`;
  }

  async function sensors() {
    const q = new URLSearchParams({ limit: '50' });
    const prefix = $('sensor-id').value.trim();
    if (prefix) q.set('q', prefix);
    const connectivity = $('sensor-connectivity').value;
    if (connectivity) q.set('connectivity', connectivity);
    const door = $('sensor-state').value;
    if (door) q.set('state', door);
    const battery = $('sensor-battery').value.trim();
    if (battery) q.set('battery_at_most', battery);
    if (sensorCursor) q.set('cursor', sensorCursor);
    const page = await api('GET', '/sensors?' + q);
    nextCursor = page.next_cursor || null;
    rows('sensor-table', page.items, (tr, s) => {
      cell(tr, '').replaceChildren(link(s.id, () => { sensorShown = s.id; $('credential-detail').textContent = ''; show('sensor'); }));
      cell(tr, s.address, 'wrap');
      cell(tr, doorText(s.state), s.state === 0 ? 'open' : '');
      cell(tr, s.connectivity, s.connectivity === 'lost' ? 'lost' : '');
      cell(tr, s.health && s.health.battery != null ? s.health.battery + ' %' : '–');
      cell(tr, when(s.last_seen_at));
    });
    $('sensors-next').disabled = !nextCursor;
  }

  async function clients() {
    const page = await api('GET', '/clients?limit=200');
    rows('client-table', page.items, (tr, c) => {
      cell(tr, c.name);
      cell(tr, c.url, 'wrap');
      cell(tr, c.delivery_mode);
      cell(tr, c.event_types ? c.event_types.join(', ') : 'all', 'wrap');
      cell(tr, c.max_events_per_request > 1 ? 'up to ' + c.max_events_per_request + ' events, an array' : '1 event');
      cell(tr, !c.enabled ? 'paused' : c.failing_since ? 'failing since ' + when(c.failing_since) : 'active');
      const action = cell(tr, '');
      action.className = 'actions';
      action.replaceChildren(
        button(c.enabled ? 'Pause ' + c.name : 'Resume ' + c.name, () =>
          act(() => api('PUT', '/clients/' + c.id, { enabled: !c.enabled }), (c.enabled ? 'Paused ' : 'Resumed ') + c.name)),
        button('Statistics of ' + c.name, () => detail(async () => {
          const s = await api('GET', '/clients/' + c.id + '/delivery-stats');
          const w = (x) => `${x.delivered} delivered, ${x.failed} failed, ${x.dead} dead, ` +
            `latency p50 ${x.latency_p50_ms ?? '–'} ms, p99 ${x.latency_p99_ms ?? '–'} ms`;
          return `${c.name}: circuit ${s.circuit}, ${s.in_flight} of ${s.concurrency_limit} in flight${s.enabled ? '' : ', paused (' + (s.paused_reason || 'by an operator') + ')'}` +
            `\nlast hour: ${w(s.last_hour)}\nlast day: ${w(s.last_day)}` +
            (s.last_error ? `\nlast error ${when(s.last_error.at)}: ${s.last_error.error}` : '');
        })),
        button('Test ' + c.name, () => detail(async () => {
          const r = await api('POST', '/clients/' + c.id + '/test');
          return `${c.name} answered a test event: ${r.delivered ? 'delivered' : 'not delivered'}` +
            ` (${r.status_code ?? 'no answer'}, ${r.duration_ms} ms)${r.error ? ': ' + r.error : ''}`;
        })),
        button('Rotate the secret of ' + c.name, () => detail(async () => {
          if (!window.confirm('A new signing secret for ' + c.name + '? The old one signs too for a grace period.')) return '';
          const r = await api('POST', '/clients/' + c.id + '/secret');
          return `${c.name}'s new signing secret, shown this once:\n${r.webhook_secret}`;
        })),
        button('Redeliver the dead of ' + c.name, () => detail(async () => {
          const r = await api('POST', '/clients/' + c.id + '/notifications/redeliver');
          return `${c.name}: ${r.redelivered ?? 0} dead notifications due again`;
        })),
        button('Replay to ' + c.name, () => detail(async () => {
          const chosen = $('replay-since').value;
          const since = chosen ? new Date(chosen) : new Date(Date.now() - 3600 * 1000);
          const r = await api('POST', '/clients/' + c.id + '/notifications/replay', { since: since.toISOString() });
          return `${c.name}: ${r.replayed ?? 0} notifications since ${since.toLocaleString()} due again`;
        })));
    });
  }

  async function deliveries() {
    const status = $('delivery-status').value;
    const page = await api('GET', '/notifications?limit=100' + (status ? '&status=' + status : ''));
    rows('dead-table', page.items, (tr, n) => {
      cell(tr, n.sensor_id);
      cell(tr, n.client_id);
      cell(tr, n.type);
      cell(tr, n.last_error, 'wrap');
      cell(tr, n.status);
      const action = cell(tr, '');
      action.className = 'actions';
      const attempts = button('Attempts', async () => {
        try {
          const d = await api('GET', '/notifications/' + n.id);
          $('delivery-detail').textContent = `${n.type} of ${n.sensor_id} to ${n.client_id}: ${d.status}\n` +
            (d.attempts_made.length ? d.attempts_made.map((a) => `  #${a.attempt} ${when(a.attempted_at)}: ` +
              `${a.status_code ?? 'no answer'} in ${a.duration_ms} ms${a.error ? ', ' + a.error : ''}`).join('\n')
              : '  no attempt yet');
        } catch (e) { say(e.message, true); }
      });
      action.replaceChildren(attempts);
      if (n.status === 'dead') {
        action.appendChild(button('Redeliver', () =>
          act(() => api('POST', '/notifications/' + n.id + '/redeliver'), 'Redelivering ' + n.id)));
      }
    });
  }

  async function sensor() {
    const id = sensorShown;
    const from = new Date(Date.now() - spanHours * 3600 * 1000);
    const [s, events, linked, deliveries, credentials] = await Promise.all([
      api('GET', '/sensors/' + encodeURIComponent(id)),
      api('GET', '/sensors/' + encodeURIComponent(id) + '/events?limit=1000&from=' + encodeURIComponent(from.toISOString())),
      api('GET', '/sensors/' + encodeURIComponent(id) + '/clients'),
      api('GET', '/notifications?limit=20&sensor_id=' + encodeURIComponent(id)),
      api('GET', '/sensors/' + encodeURIComponent(id) + '/credentials')]);
    $('sensor-name').textContent = s.id;
    $('sensor-summary').textContent = `${s.address} · door ${doorText(s.state) || 'not reported yet'} · ` +
      `${s.connectivity} · last seen ${when(s.last_seen_at) || 'never'}`;
    // its device: the network it speaks through, and what it last said of its battery, cover and radio
    const h = s.health || {};
    $('sensor-device').textContent = [s.profile ? `${s.profile} device ${s.device_id}` : null,
      h.battery != null ? `battery ${h.battery} % (${when(h.battery_at)})` : null,
      h.tamper != null ? (h.tamper ? 'cover open (tampered)' : 'cover closed') : null,
      h.rssi != null ? `signal ${h.rssi} dBm${h.snr != null ? ' / ' + h.snr + ' dB' : ''}` : null]
      .filter((x) => x !== null).join(' · ') || 'no device health reported yet';
    timeline(events.items, from, s.state);
    $('sensor-clients').replaceChildren(...linked.items.map((c) => {
      const li = document.createElement('li');
      li.textContent = `${c.name} (${c.url || 'pulls its feed'})${c.enabled ? '' : ' · paused'}`;
      return li;
    }));
    rows('credential-table', credentials.items, (tr, c) => {
      cell(tr, c.login);
      cell(tr, c.status);
      cell(tr, when(c.created_at));
      cell(tr, c.revoked_at ? 'revoked ' + when(c.revoked_at) : when(c.expires_at) || 'until revoked');
      const action = cell(tr, '');
      if (c.status === 'active' || c.status === 'expiring') {
        action.replaceChildren(button('Revoke', () => {
          if (!window.confirm('Revoke this credential of ' + id + '? A device using it is refused from now on.')) return;
          act(() => api('DELETE', '/sensors/' + encodeURIComponent(id) + '/credentials/' + c.id), 'Revoked a credential of ' + id);
        }));
      }
    });
    rows('event-table', events.items.slice(0, 20), (tr, e) => {
      cell(tr, when(e.occurred_at));
      cell(tr, e.type);
      cell(tr, doorText(e.state), e.state === 0 ? 'open' : '');
      cell(tr, e.sequence);
    });
    const names = new Map(linked.items.map((c) => [c.id, c.name]));
    rows('sensor-delivery-table', deliveries.items, (tr, n) => {
      cell(tr, names.get(n.client_id) || n.client_id);
      cell(tr, n.type);
      cell(tr, n.status);
      cell(tr, n.attempts);
      cell(tr, n.last_error || n.last_status, 'wrap');
    });
  }

  /** The door's state over the span as a strip: red open, green closed, grey not known. */
  function timeline(events, from, current) {
    const svg = $('timeline');
    const start = from.getTime(), end = Date.now(), width = 1000;
    const changes = events.filter((e) => e.type === 'sensor.state_changed')
      .map((e) => ({ at: Date.parse(e.occurred_at), state: e.state, before: e.previous_state }))
      .sort((a, b) => a.at - b.at);
    let state = changes.length ? changes[0].before : current;
    let at = start;
    const parts = [];
    for (const c of changes.concat([{ at: end, state: null }])) {
      const x0 = (Math.max(at, start) - start) / (end - start) * width;
      const x1 = (Math.min(c.at, end) - start) / (end - start) * width;
      // an opening of seconds in a day is the one that matters: never thinner than 3 of the 1000 units
      if (x1 > x0 || (state === 0 && c.at >= start)) {
        const w = state === 0 ? Math.max(3, x1 - x0) : x1 - x0;
        parts.push({ x: Math.min(x0, width - w), w, state });
      }
      state = c.state;
      at = c.at;
    }
    parts.sort((a, b) => (a.state === 0) - (b.state === 0));
    svg.replaceChildren(...parts.map((p) => {
      const r = document.createElementNS('http://www.w3.org/2000/svg', 'rect');
      r.setAttribute('x', p.x); r.setAttribute('y', 0); r.setAttribute('width', p.w); r.setAttribute('height', 60);
      r.setAttribute('fill', p.state === 0 ? '#d9534f' : p.state === 1 ? '#5cb85c' : '#c8ccd2');
      return r;
    }));
    const opened = changes.filter((c) => c.state === 0).length;
    $('timeline-caption').textContent = `Last ${spanHours === 24 ? '24 hours' : '7 days'}: opened ${opened} ` +
      `time${opened === 1 ? '' : 's'}, ${changes.length} change${changes.length === 1 ? '' : 's'} (red open, green closed, grey unknown).`;
  }

  // what an alarm is about, in words
  function alarmKind(a) {
    if (a.type === 'battery_low') return `battery low (${a.battery} %)`;
    if (a.type === 'tampered') return 'tampered';
    return 'door left open';
  }

  async function alarms() {
    await maintenance();
    const page = await api('GET', '/alarms?active=true&limit=200');
    rows('alarm-table', page.items, (tr, a) => {
      cell(tr, a.sensor_id);
      cell(tr, alarmKind(a));
      cell(tr, a.severity, 'severity-' + a.severity);
      cell(tr, when(a.opened_at));
      cell(tr, when(a.raised_at));
      // each step of its chains with its time: sent, due, or stopped by the acknowledgement or the closing; a
      // link's chain is named by its client's id
      cell(tr, (a.escalation || []).length === 0 ? null : a.escalation.map((e) =>
        `${e.chain_client_id ? 'link ' + e.chain_client_id.slice(0, 8) + ' ' : ''}${e.step}: ${e.state === 'sent' ? 'sent ' + when(e.sent_at)
          : e.state === 'stopped' ? 'stopped' : 'due ' + when(e.due_at)}`).join('; '));
      cell(tr, a.acknowledged_at ? `${a.acknowledged_by} ${when(a.acknowledged_at)}` : null);
      const action = cell(tr, '');
      if (!a.acknowledged_at) {
        action.replaceChildren(button('Acknowledge', () =>
          act(() => api('POST', '/alarms/' + a.id + '/acknowledge', { by: 'console', comment: 'acknowledged in the console' }),
            'Acknowledged the alarm of ' + a.sensor_id)));
      }
    });
  }

  /** The windows not over yet: ended early while open, cancelled before they start. */
  async function maintenance() {
    const list = await api('GET', '/maintenance?limit=100');
    rows('maintenance-table', list.items, (tr, w) => {
      cell(tr, w.reason, 'wrap');
      cell(tr, w.address_prefix ? `addresses starting “${w.address_prefix}”` : `${w.sensor_ids.length} sensors`, 'wrap');
      cell(tr, w.state);
      cell(tr, when(w.starts_at));
      cell(tr, when(w.ends_at));
      cell(tr, String(w.held));
      const action = cell(tr, '');
      if (w.state === 'open') {
        action.replaceChildren(button('End now', () =>
          act(() => api('POST', '/maintenance/' + w.id + '/end'), 'Ended: what is still true is sent')));
      } else if (w.state === 'scheduled') {
        action.replaceChildren(button('Cancel', () =>
          act(() => api('DELETE', '/maintenance/' + w.id), 'Cancelled')));
      }
    });
  }

  function planMaintenance(event) {
    event.preventDefault();
    const ends = new Date(Date.now() + Number($('maintenance-hours').value) * 3600_000).toISOString();
    act(() => api('POST', '/maintenance', { reason: $('maintenance-reason').value,
      address_prefix: $('maintenance-prefix').value, ends_at: ends }), 'Maintenance window planned');
  }

  /** An action whose answer is shown under the clients' table. */
  async function detail(call) {
    try {
      const text = await call();
      if (text) $('client-detail').textContent = text;
    } catch (e) { say(e.message, true); }
  }

  async function act(call, done) {
    try { await call(); say(done); await refresh(); }
    catch (e) { say(e.message, true); }
  }

  /** What an import did, in words. */
  function outcome(o) {
    return `sensors ${o.sensors.created} created, ${o.sensors.updated} changed, ${o.sensors.unchanged} unchanged; ` +
      `clients ${o.clients.created} created, ${o.clients.updated} changed; links ${o.links.added} added, ${o.links.removed} removed` +
      // imports recorded before the file named gateways and credentials have no counts of them
      (o.gateways ? `; gateways ${o.gateways.created} created, sensors ${o.gateways.sensors_added} joined, ` +
        `${o.gateways.sensors_removed} left` : '') +
      (o.credentials ? `; credentials ${o.credentials.created} created, ${o.credentials.revoked} revoked` : '');
  }

  /** The latest imports, a large one followed while a job applies it. */
  async function imports() {
    const list = await api('GET', '/imports');
    rows('import-table', list, (tr, i) => {
      cell(tr, when(i.created_at));
      cell(tr, String(i.rows));
      cell(tr, i.state, 'import-' + i.state);
      cell(tr, i.outcome ? outcome(i.outcome) : (i.error || i.step));
      cell(tr, when(i.finished_at));
    });
  }

  // --- the audit log

  function auditQuery() {
    const q = new URLSearchParams();
    for (const [name, id] of [['actor', 'audit-actor'], ['resource', 'audit-resource'], ['outcome', 'audit-outcome']]) {
      const v = $(id).value.trim();
      if (v) q.set(name, v);
    }
    return q;
  }

  async function audit() {
    const signedIn = await api('GET', '/sessions');
    rows('session-table', signedIn.items, (tr, si) => {
      cell(tr, si.name);
      cell(tr, when(si.signed_in_at));
      cell(tr, when(si.expires_at));
      cell(tr, '').replaceChildren(button('Sign ' + si.name + ' out', () =>
        act(() => api('POST', '/sessions/' + si.id + '/end'), si.name + ' is signed out')));
    });
    const q = auditQuery();
    q.set('limit', '200');
    const page = await api('GET', '/audit?' + q);
    rows('audit-table', page.items, (tr, e) => {
      cell(tr, when(e.at));
      cell(tr, e.actor);
      cell(tr, e.operation);
      cell(tr, e.resource, 'wrap');
      cell(tr, e.status ? `${e.outcome} (${e.status})` : e.outcome, 'audit-' + e.outcome);
      cell(tr, e.address);
      cell(tr, e.details === undefined ? '' : JSON.stringify(e.details), 'wrap');
    });
  }

  async function exportAudit() {
    const q = auditQuery();
    q.set('format', 'csv');
    await downloadCsv('/audit?' + q, 'lockwatch-audit.csv');
  }

  // --- the client portal: the client's own doors, deliveries and alarms, and its endpoint

  async function portal() {
    const id = encodeURIComponent(me.client_id);
    const [client, stats, doors, alarmPage, deliveries] = await Promise.all([
      api('GET', '/clients/' + id), api('GET', '/clients/' + id + '/delivery-stats'),
      api('GET', '/clients/' + id + '/sensors?limit=200'), api('GET', '/alarms?active=true&limit=200'),
      api('GET', '/notifications?limit=50')]);
    $('portal-name').textContent = client.name;
    $('portal-endpoint').textContent = (client.url ? `Posted to ${client.url}` : 'You read your feed (nothing is posted)') +
      ` · ${client.enabled ? 'delivering' : 'paused' + (client.paused_reason ? ': ' + client.paused_reason : '')}` +
      ` · last day: ${stats.last_day.delivered} delivered, ${stats.last_day.failed} failed attempts, ${stats.last_day.dead} dead` +
      ` · ${me.role === 'client-admin' ? 'you may act' : 'read only'}`;
    $('portal-pause').hidden = !client.enabled || me.role !== 'client-admin';
    $('portal-resume').hidden = client.enabled || me.role !== 'client-admin';
    $('portal-rotate').hidden = $('portal-test').hidden = me.role !== 'client-admin' || !client.url;
    rows('portal-door-table', doors.items, (tr, d) => {
      cell(tr, d.id);
      cell(tr, d.address, 'wrap');
      cell(tr, doorText(d.state), d.state === 0 ? 'open' : '');
      cell(tr, d.connectivity);
      cell(tr, when(d.last_seen_at));
    });
    rows('portal-alarm-table', alarmPage.items, (tr, a) => {
      cell(tr, a.sensor_id);
      cell(tr, alarmKind(a));
      cell(tr, a.severity, 'severity-' + a.severity);
      cell(tr, when(a.raised_at));
      cell(tr, a.acknowledged_at ? `${a.acknowledged_by} ${when(a.acknowledged_at)}` : null);
      const action = cell(tr, '');
      if (!a.acknowledged_at && me.role === 'client-admin') {
        action.replaceChildren(button('Acknowledge', () =>
          act(() => api('POST', '/alarms/' + a.id + '/acknowledge', { by: client.name, comment: 'acknowledged in the portal' }),
            'Acknowledged the alarm of ' + a.sensor_id)));
      }
    });
    rows('portal-delivery-table', deliveries.items, (tr, n) => {
      cell(tr, when(n.created_at));
      cell(tr, n.sensor_id);
      cell(tr, n.type);
      cell(tr, n.status);
      cell(tr, n.attempts);
      cell(tr, n.last_status ? n.last_status : n.last_error, 'wrap');
    });
  }

  async function setEnabled(enabled) {
    await act(() => api('PUT', '/clients/' + encodeURIComponent(me.client_id), { enabled }),
      enabled ? 'Deliveries resumed' : 'Deliveries paused');
  }

  const VIEWS = { overview, sensors, sensor, clients, deliveries, alarms, import: imports, audit, portal };

  async function refresh() {
    // sampled whatever the view, so that the overview's charts have the minutes before it was opened
    if (view !== 'portal') {
      try { await rates(); } catch (e) { /* the charts wait for the next sample */ }
    }
    try { await VIEWS[view](); }
    catch (e) { if (e.message !== 'unauthorized') say(e.message, true); }
  }

  function show(name) {
    view = name;
    for (const section of document.querySelectorAll('.view')) section.hidden = section.id !== name;
    for (const b of document.querySelectorAll('nav button[data-view]')) {
      if (b.dataset.view === name) b.setAttribute('aria-current', 'page'); else b.removeAttribute('aria-current');
    }
    say('');
    refresh();
  }

  async function start() {
    me = await api('GET', '/me');
    const client = me.kind === 'client';
    // a client sees its portal, and nothing of the operator's sections
    for (const b of document.querySelectorAll('nav button[data-view]')) b.hidden = client;
    if (client) view = 'portal';
    $('login').hidden = true;
    $('nav').hidden = false;
    show(view);
    clearInterval(timer);
    timer = setInterval(refresh, REFRESH_MS);
  }

  function logout(message) {
    sessionStorage.removeItem('lockwatch.token');
    const endSession = sessionStorage.getItem('lockwatch.end-session');
    const clientId = sessionStorage.getItem('lockwatch.client-id');
    sessionStorage.removeItem('lockwatch.end-session');
    sessionStorage.removeItem('lockwatch.client-id');
    if (!message && endSession) {
      // signed in at the identity provider: signing out there too (OpenID Connect RP-initiated logout, naming the
      // client rather than giving the ID token), and back to this page
      const out = new URL(endSession);
      if (clientId) out.searchParams.set('client_id', clientId);
      out.searchParams.set('post_logout_redirect_uri', location.origin + '/console/');
      location.assign(out.toString());
      return;
    }
    clearInterval(timer);
    for (const section of document.querySelectorAll('.view')) section.hidden = true;
    $('nav').hidden = true;
    $('login').hidden = false;
    say(message || '', Boolean(message));
  }

  // --- import and export

  function importFile(event) {
    event.preventDefault();
    const file = $('import-file').files[0];
    if (!file) return;
    const type = file.name.toLowerCase().endsWith('.json') ? 'application/json' : 'text/csv';
    const xhr = new XMLHttpRequest();
    const progress = $('import-progress');
    progress.hidden = false;
    progress.value = 0;
    $('import-result').textContent = '';
    xhr.upload.addEventListener('progress', (e) => { if (e.lengthComputable) progress.value = 100 * e.loaded / e.total; });
    xhr.addEventListener('load', () => {
      progress.value = 100;
      let answer;
      try { answer = JSON.parse(xhr.responseText); } catch (e) { answer = { detail: xhr.responseText }; }
      const created = (answer.new_clients || []).map((c) => `  ${c.name}: ${c.webhook_secret}`).join('\n');
      const made = (answer.new_credentials || []).map((c) => `  ${c.login}: ${c.secret}`).join('\n');
      const secrets = (created ? `\nNew clients' signing secrets (shown this once):\n${created}` : '') +
        (made ? `\nNew device credentials (shown this once):\n${made}` : '');
      if (xhr.status === 200) {
        $('import-result').textContent = `Imported ${answer.rows} rows: ${outcome(answer)}.` + secrets;
        say('Imported');
        refresh();
      } else if (xhr.status === 202) {
        // a large file: checked, its clients created; its sensors and links are applied by a job, in the table below
        $('import-result').textContent = `Accepted ${answer.rows} rows; they are being applied (see Latest imports).` + secrets;
        say('Accepted');
        refresh();
      } else {
        $('import-result').textContent = (answer.detail || xhr.status) + (answer.errors ? '\n' + answer.errors.join('\n') : '');
        say('Nothing was imported', true);
      }
    });
    xhr.addEventListener('error', () => say('The import could not be sent', true));
    xhr.open('POST', API + '/import');
    xhr.setRequestHeader('Authorization', 'Bearer ' + token());
    xhr.setRequestHeader('Content-Type', type);
    xhr.send(file);
  }

  async function exportFile() {
    await downloadCsv('/export?format=csv', 'lockwatch-registry.csv');
  }

  /** A CSV the API answers, saved by the browser as a file of that name. */
  async function downloadCsv(path, name) {
    try {
      const csv = await api('GET', path);
      const link = document.createElement('a');
      link.href = URL.createObjectURL(new Blob([csv], { type: 'text/csv' }));
      link.download = name;
      link.click();
      URL.revokeObjectURL(link.href);
    } catch (e) { say(e.message, true); }
  }

  // --- wiring

  $('login-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    sessionStorage.setItem('lockwatch.token', $('token').value);
    $('token').value = '';
    try { await start(); }
    catch (e) { if (e.message !== 'unauthorized') say(e.message, true); }
  });
  $('portal-pause').addEventListener('click', () => setEnabled(false));
  $('portal-resume').addEventListener('click', () => setEnabled(true));
  $('portal-rotate').addEventListener('click', async () => {
    try {
      const c = await api('POST', '/clients/' + encodeURIComponent(me.client_id) + '/secret');
      $('portal-detail').textContent = `Your new signing secret, shown this once (the old one also signs for a while):\n${c.webhook_secret}`;
      say('Secret rotated');
    } catch (e) { say(e.message, true); }
  });
  $('portal-test').addEventListener('click', async () => {
    try {
      const r = await api('POST', '/clients/' + encodeURIComponent(me.client_id) + '/test');
      $('portal-detail').textContent = `Test event: ${r.delivered ? 'delivered' : 'not delivered'} (${r.status_code || r.error || ''})`;
    } catch (e) { say(e.message, true); }
  });
  $('logout').addEventListener('click', () => logout());
  $('audit-filter').addEventListener('submit', (event) => { event.preventDefault(); refresh(); });
  $('audit-export').addEventListener('click', exportAudit);
  for (const b of document.querySelectorAll('nav button[data-view]')) b.addEventListener('click', () => show(b.dataset.view));
  $('delivery-status').addEventListener('change', () => refresh());
  $('sensor-filter').addEventListener('submit', (event) => { event.preventDefault(); sensorCursor = null; refresh(); });
  $('sensors-first').addEventListener('click', () => { sensorCursor = null; refresh(); });
  $('sensors-next').addEventListener('click', () => { if (nextCursor) { sensorCursor = nextCursor; refresh(); } });
  for (const b of document.querySelectorAll('button[data-span]')) {
    b.addEventListener('click', () => { spanHours = Number(b.dataset.span); refresh(); });
  }
  $('credential-new').addEventListener('click', async () => {
    try {
      const c = await api('POST', '/sensors/' + encodeURIComponent(sensorShown) + '/credentials');
      $('credential-detail').textContent = `Log in as ${c.login} with this secret, shown this once:\n${c.secret}`;
      await refresh();
    } catch (e) { say(e.message, true); }
  });
  $('import-form').addEventListener('submit', importFile);
  $('maintenance-form').addEventListener('submit', planMaintenance);
  $('export').addEventListener('click', exportFile);
  /** A portal link opened: exchanged once for a session of its client's, and taken out of the address at once. */
  async function openPortalLink(link) {
    history.replaceState(null, '', location.pathname);
    const r = await fetch(API + '/portal/sessions', { method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ link }) });
    if (!r.ok) {
      logout('This portal link has expired or was used already: ask for a new one.');
      return;
    }
    sessionStorage.setItem('lockwatch.token', (await r.json()).token);
    await start();
  }

  // where people sign in at the identity provider, the console offers it
  fetch('/console/sso').then((r) => r.ok ? r.json() : null).then((sso) => {
    if (sso) { $('sso-sign-in').href = sso.sign_in; $('sso').hidden = false; }
  }).catch(() => { /* no provider: tokens only */ });

  const portalLink = /^#portal=(lwp_[A-Za-z0-9_-]+)$/.exec(location.hash);
  if (portalLink) openPortalLink(portalLink[1]).catch((e) => say(e.message, true));
  else if (token()) start().catch((e) => { if (e.message !== 'unauthorized') say(e.message, true); });
})();
