// The lockwatch console: the REST API (/api/v1) with the operator's token, kept for this browser tab only. What is
// on the screen is read again every 2 s, so a door that opens shows without a reload.
'use strict';
(function () {
  const API = '/api/v1';
  const REFRESH_MS = 2000;
  const $ = (id) => document.getElementById(id);
  let view = 'overview';
  let sensorCursor = null;   // the cursor of the page shown (null: the first)
  let nextCursor = null;
  let timer = null;

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
      throw new Error(r.status === 403 ? 'This token may only read: ' + detail : detail);
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

  // --- views

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
  }

  async function sensors() {
    const id = $('sensor-id').value.trim();
    let items;
    if (id) {
      try { items = [await api('GET', '/sensors/' + encodeURIComponent(id))]; }
      catch (e) { items = []; say(e.message, true); }
      nextCursor = null;
    } else {
      const q = new URLSearchParams({ limit: '50' });
      const connectivity = $('sensor-connectivity').value;
      if (connectivity) q.set('connectivity', connectivity);
      if (sensorCursor) q.set('cursor', sensorCursor);
      const page = await api('GET', '/sensors?' + q);
      items = page.items;
      nextCursor = page.next_cursor || null;
    }
    const body = $('sensor-table').tBodies[0];
    body.replaceChildren();
    for (const s of items) {
      const tr = document.createElement('tr');
      tr.dataset.sensor = s.id;
      cell(tr, s.id);
      cell(tr, s.address, 'wrap');
      cell(tr, s.state === 0 ? 'open' : s.state === 1 ? 'closed' : null, s.state === 0 ? 'open' : '');
      cell(tr, s.connectivity, s.connectivity === 'lost' ? 'lost' : '');
      cell(tr, when(s.last_seen_at));
      body.appendChild(tr);
    }
    $('sensors-next').disabled = !nextCursor;
  }

  async function clients() {
    const page = await api('GET', '/clients?limit=200');
    const body = $('client-table').tBodies[0];
    body.replaceChildren();
    for (const c of page.items) {
      const tr = document.createElement('tr');
      tr.dataset.client = c.id;
      cell(tr, c.name);
      cell(tr, c.url, 'wrap');
      cell(tr, c.delivery_mode);
      cell(tr, c.enabled ? 'active' : 'paused');
      const action = cell(tr, '');
      action.replaceChildren(button(c.enabled ? 'Pause ' + c.name : 'Resume ' + c.name, () =>
        act(() => api('PUT', '/clients/' + c.id, { enabled: !c.enabled }),
          (c.enabled ? 'Paused ' : 'Resumed ') + c.name)));
      body.appendChild(tr);
    }
  }

  async function deliveries() {
    const page = await api('GET', '/notifications?status=dead&limit=100');
    const body = $('dead-table').tBodies[0];
    body.replaceChildren();
    for (const n of page.items) {
      const tr = document.createElement('tr');
      tr.dataset.notification = n.id;
      cell(tr, n.sensor_id);
      cell(tr, n.client_id);
      cell(tr, n.type);
      cell(tr, n.last_error, 'wrap');
      const action = cell(tr, '');
      action.replaceChildren(button('Redeliver', () =>
        act(() => api('POST', '/notifications/' + n.id + '/redeliver'), 'Redelivering ' + n.id)));
      body.appendChild(tr);
    }
  }

  async function act(call, done) {
    try { await call(); say(done); await refresh(); }
    catch (e) { say(e.message, true); }
  }

  const VIEWS = { overview, sensors, clients, deliveries, import: async () => {} };

  async function refresh() {
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

  function start() {
    $('login').hidden = true;
    $('nav').hidden = false;
    show(view);
    clearInterval(timer);
    timer = setInterval(refresh, REFRESH_MS);
  }

  function logout(message) {
    sessionStorage.removeItem('lockwatch.token');
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
      if (xhr.status === 200) {
        const created = answer.new_clients.map((c) => `  ${c.name}: ${c.webhook_secret}`).join('\n');
        $('import-result').textContent =
          `Imported ${answer.rows} rows: sensors ${answer.sensors.created} created, ${answer.sensors.updated} changed, ` +
          `${answer.sensors.unchanged} unchanged; clients ${answer.clients.created} created, ${answer.clients.updated} changed; ` +
          `links ${answer.links.added} added, ${answer.links.removed} removed.` +
          (created ? `\nNew clients' signing secrets (shown this once):\n${created}` : '');
        say('Imported');
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
    try {
      const csv = await api('GET', '/export?format=csv');
      const link = document.createElement('a');
      link.href = URL.createObjectURL(new Blob([csv], { type: 'text/csv' }));
      link.download = 'lockwatch-registry.csv';
      link.click();
      URL.revokeObjectURL(link.href);
    } catch (e) { say(e.message, true); }
  }

  // --- wiring

  $('login-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    sessionStorage.setItem('lockwatch.token', $('token').value);
    $('token').value = '';
    try { await api('GET', '/overview'); start(); }
    catch (e) { if (e.message !== 'unauthorized') say(e.message, true); }
  });
  $('logout').addEventListener('click', () => logout());
  for (const b of document.querySelectorAll('nav button[data-view]')) b.addEventListener('click', () => show(b.dataset.view));
  $('sensor-filter').addEventListener('submit', (event) => { event.preventDefault(); sensorCursor = null; refresh(); });
  $('sensors-first').addEventListener('click', () => { sensorCursor = null; refresh(); });
  $('sensors-next').addEventListener('click', () => { if (nextCursor) { sensorCursor = nextCursor; refresh(); } });
  $('import-form').addEventListener('submit', importFile);
  $('export').addEventListener('click', exportFile);
  if (token()) start();
})();
