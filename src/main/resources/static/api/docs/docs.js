// The API reference: the contract (GET /api/v1/openapi.json, which takes a token) rendered by Redoc. The token is the
// console's own (sessionStorage, this tab only), or asked for here.
(function () {
  'use strict';
  const KEY = 'lockwatch.token';
  const SPEC = '/api/v1/openapi.json';
  const $ = (id) => document.getElementById(id);

  function ask(message) {
    $('login').hidden = false;
    $('status').textContent = message || '';
  }

  async function show(token) {
    const r = await fetch(SPEC, { headers: { Authorization: 'Bearer ' + token, Accept: 'application/json' } });
    if (r.status === 401) {
      sessionStorage.removeItem(KEY);
      ask('The token was refused: enter another.');
      return;
    }
    if (!r.ok) {
      ask('The contract could not be read (' + r.status + '): try again.');
      return;
    }
    const spec = await r.json();
    $('login').hidden = true;
    // the spec as an object: Redoc would fetch a URL without the token
    Redoc.init(spec, { hideDownloadButton: false }, $('reference'));
  }

  $('login-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const token = $('token').value;
    $('token').value = '';
    sessionStorage.setItem(KEY, token);
    show(token).catch((err) => ask(err.message));
  });

  const token = sessionStorage.getItem(KEY);
  if (token) show(token).catch((err) => ask(err.message));
  else ask();
})();
