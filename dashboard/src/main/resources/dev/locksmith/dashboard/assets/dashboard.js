// locksmith dashboard: refreshes the live part of the page (#live) by fetching the same URL with
// X-Locksmith-Fragment: 1; the server renders (and escapes) everything. No library, no build.
(function () {
  'use strict';
  var live = document.getElementById('live');
  var status = document.getElementById('status');
  var pause = document.getElementById('pause');
  var every = Number(document.body.getAttribute('data-refresh') || '0');
  if (!live || !every) {
    return;
  }
  var paused = false;
  var timer = null;
  function schedule() {
    timer = window.setTimeout(refresh, every);
  }
  function refresh() {
    if (paused || document.hidden) {
      schedule();
      return;
    }
    fetch(window.location.href, { headers: { 'X-Locksmith-Fragment': '1' }, credentials: 'same-origin', cache: 'no-store' })
      .then(function (response) {
        if (!response.ok) {
          throw new Error('HTTP ' + response.status);
        }
        return response.text();
      })
      .then(function (html) {
        live.innerHTML = html;
        var n = Number(document.body.getAttribute('data-refreshed') || '0') + 1;
        document.body.setAttribute('data-refreshed', String(n));
        if (status) {
          status.textContent = 'live: updated ' + new Date().toLocaleTimeString();
        }
      })
      .catch(function (e) {
        if (status) {
          status.textContent = 'live: refresh failed (' + e.message + '), retrying';
        }
      })
      .then(schedule);
  }
  if (pause) {
    pause.addEventListener('click', function () {
      paused = !paused;
      pause.textContent = paused ? 'resume' : 'pause';
    });
  }
  schedule();
})();
