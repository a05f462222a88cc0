// Click a header to sort; type in a box above a sortable table to filter its rows.
document.querySelectorAll("table.sortable").forEach(function (table) {
  var box = document.createElement("input"); box.placeholder = "filter rows"; box.className = "filter";
  table.parentNode.insertBefore(box, table);
  box.addEventListener("input", function () {
    var q = box.value.toLowerCase();
    table.querySelectorAll("tbody tr").forEach(function (tr) {
      tr.style.display = tr.textContent.toLowerCase().indexOf(q) >= 0 ? "" : "none"; });
  });
  table.querySelectorAll("th").forEach(function (th, col) {
    th.addEventListener("click", function () {
      var body = table.tBodies[0], rows = Array.from(body.rows), asc = th.dataset.asc !== "1";
      rows.sort(function (a, b) {
        var x = a.cells[col].textContent, y = b.cells[col].textContent;
        var nx = parseFloat(x), ny = parseFloat(y);
        var c = (!isNaN(nx) && !isNaN(ny)) ? nx - ny : x.localeCompare(y);
        return asc ? c : -c; });
      rows.forEach(function (r) { body.appendChild(r); }); th.dataset.asc = asc ? "1" : "0";
    });
  });
});
