// The page the identity provider's answer leads to: the access token it gave, handed to the console's page in this
// tab (sessionStorage, as a token typed in), with what signing out at the provider needs; then the console.
(function () {
  'use strict';
  const meta = (name) => (document.querySelector(`meta[name="${name}"]`) || {}).content || '';
  sessionStorage.setItem('lockwatch.token', meta('lockwatch-token'));
  sessionStorage.setItem('lockwatch.client-id', meta('lockwatch-client-id'));
  sessionStorage.setItem('lockwatch.end-session', meta('lockwatch-end-session'));
  location.replace('/console/');
})();
