// Xamt report: sorting and filtering of the findings table. No dependencies, no network.
// The filter state lives in the URL fragment (#class=nan&library=torch&sort=hits:desc), so a
// filtered view can be bookmarked or shared, and the state survives the "back" button.
(function () {
  "use strict";
  var table = document.getElementById("findings-table");
  var form = document.getElementById("filters");
  if (!table || !form) { return; }
  var tbody = table.tBodies[0];
  var rows = Array.prototype.slice.call(tbody.rows);
  var headers = Array.prototype.slice.call(table.tHead.rows[0].cells);
  var controls = Array.prototype.slice.call(form.querySelectorAll("[data-filter]"));
  var shown = document.getElementById("shown-count");
  var sortState = null; // {column: index, dir: "asc"|"desc"}

  function cellValue(row, index, numeric) {
    var cell = row.cells[index];
    var raw = cell.hasAttribute("data-value") ? cell.getAttribute("data-value") : cell.textContent.trim();
    return numeric ? parseFloat(raw) : raw.toLowerCase();
  }

  function applyFilters() {
    var wanted = {};
    controls.forEach(function (c) { wanted[c.getAttribute("data-filter")] = c.value.trim(); });
    var text = (wanted.text || "").toLowerCase();
    var count = 0;
    rows.forEach(function (row) {
      var ok = ["class", "library", "group", "status"].every(function (key) {
        return !wanted[key] || row.getAttribute("data-" + key) === wanted[key];
      });
      if (ok && text) { ok = row.textContent.toLowerCase().indexOf(text) !== -1; }
      row.hidden = !ok;
      if (ok) { count += 1; }
    });
    shown.textContent = String(count);
    table.setAttribute("data-shown", String(count));
  }

  function applySort() {
    headers.forEach(function (h) { h.removeAttribute("aria-sort"); });
    if (!sortState) { return; }
    var header = headers[sortState.column];
    var numeric = header.getAttribute("data-sort") === "num";
    var sign = sortState.dir === "desc" ? -1 : 1;
    var sorted = rows.slice().sort(function (a, b) {
      var x = cellValue(a, sortState.column, numeric), y = cellValue(b, sortState.column, numeric);
      return (x < y ? -1 : x > y ? 1 : 0) * sign;
    });
    sorted.forEach(function (row) { tbody.appendChild(row); });
    header.setAttribute("aria-sort", sortState.dir === "desc" ? "descending" : "ascending");
  }

  function headerName(index) { return headers[index].textContent.trim().replace(/\s+/g, "-"); }

  function writeHash() {
    var parts = [];
    controls.forEach(function (c) {
      if (c.value) { parts.push(c.getAttribute("data-filter") + "=" + encodeURIComponent(c.value)); }
    });
    if (sortState) { parts.push("sort=" + encodeURIComponent(headerName(sortState.column)) + ":" + sortState.dir); }
    var hash = parts.length ? "#" + parts.join("&") : "#findings";
    if (window.location.hash !== hash) { history.replaceState(null, "", hash); }
  }

  function readHash() {
    var params = {};
    window.location.hash.replace(/^#/, "").split("&").forEach(function (kv) {
      var i = kv.indexOf("=");
      if (i > 0) { params[kv.slice(0, i)] = decodeURIComponent(kv.slice(i + 1)); }
    });
    controls.forEach(function (c) {
      var v = params[c.getAttribute("data-filter")];
      if (v !== undefined) { c.value = v; }
    });
    if (params.sort) {
      var spec = params.sort.split(":");
      headers.forEach(function (h, i) {
        if (headerName(i) === spec[0]) { sortState = {column: i, dir: spec[1] === "desc" ? "desc" : "asc"}; }
      });
    }
  }

  headers.forEach(function (h, i) {
    h.title = "sort by " + h.textContent.trim();
    h.addEventListener("click", function () {
      var dir = sortState && sortState.column === i && sortState.dir === "asc" ? "desc" : "asc";
      sortState = {column: i, dir: dir};
      applySort();
      writeHash();
    });
  });
  controls.forEach(function (c) {
    c.addEventListener(c.tagName === "SELECT" ? "change" : "input", function () { applyFilters(); writeHash(); });
  });

  readHash();
  applySort();
  applyFilters();
  table.setAttribute("data-ready", "true");
})();
