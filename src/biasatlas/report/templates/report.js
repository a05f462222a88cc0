// The report's own code. Tables become DataTables (sort, filter, pages), plot specs become Plotly
// figures, and a click on an overview cell or a probe table's cell filters that probe's answers table to it.
const read = (id) => JSON.parse(document.getElementById(id).textContent);
const answerTables = {};

async function loadDataTables() {
  const binary = atob(document.getElementById("datatables-bundle").textContent.trim());
  const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
  const url = URL.createObjectURL(new Blob([bytes], { type: "text/javascript" }));
  try {
    return (await import(url)).default;
  } finally {
    URL.revokeObjectURL(url);
  }
}

function drawPlots() {
  if (typeof Plotly === "undefined") return;
  document.querySelectorAll("div.plot").forEach((div) => {
    const figure = read(div.dataset.figure);
    Plotly.newPlot(div, figure.data, figure.layout, { displaylogo: false, responsive: true });
  });
}

function initTables(DataTable) {
  document.querySelectorAll("table.data").forEach((table) => {
    const rows = table.tBodies.length ? table.tBodies[0].rows.length : 0;
    new DataTable(table, {
      paging: rows > 25, pageLength: 25, searching: rows > 8, info: rows > 25, order: [], autoWidth: false,
    });
  });
  document.querySelectorAll("table.answers").forEach((table) => {
    const block = read(table.dataset.rows);
    const columns = block.columns.map((title, i) => ({ title, data: i, render: DataTable.render.text() }));
    const dt = new DataTable(table, { data: block.rows, columns, deferRender: true, pageLength: 10, order: [] });
    answerTables[table.dataset.probe] = { dt, columns: block.columns };
  });
}

const escapeRegex = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

function filterAnswers(probe, filters) {
  const entry = answerTables[probe];
  if (!entry) return;
  entry.dt.search("");
  entry.columns.forEach((_, i) => entry.dt.column(i).search(""));
  for (const [name, value] of Object.entries(filters)) {
    const i = entry.columns.indexOf(name);
    if (i >= 0 && value) entry.dt.column(i).search("^" + escapeRegex(value) + "$", true, false);
  }
  entry.dt.draw();
}

function wireDrillDown() {
  document.querySelectorAll("td.drill").forEach((cell) => {
    cell.addEventListener("click", () => {
      filterAnswers(cell.dataset.probe, { Model: cell.dataset.model, Language: cell.dataset.language });
      const box = document.getElementById("answers-" + cell.dataset.probe);
      if (box) box.scrollIntoView();
    });
  });
  // a table of a probe section: a cell filters by its row's design values and, under a model, that model
  document.querySelectorAll("div.table[data-drill]").forEach((box) => {
    const spec = JSON.parse(box.dataset.drill);
    box.addEventListener("click", (event) => {
      const cell = event.target.closest("tbody td");
      if (!cell || !box.contains(cell)) return;
      const row = cell.parentElement;
      const filters = {};
      for (const [i, name] of Object.entries(spec.keys)) {
        const text = row.cells[Number(i)] ? row.cells[Number(i)].textContent : "";
        if (text && text !== "–") filters[name] = text;
      }
      const model = spec.models[String(cell.cellIndex)];
      if (model) filters.Model = model;
      if (!answerTables[spec.probe]) return;
      filterAnswers(spec.probe, filters);
      const target = document.getElementById("answers-" + spec.probe);
      if (target) target.scrollIntoView();
    });
  });
  document.querySelectorAll("button.reset").forEach((button) => {
    button.addEventListener("click", () => filterAnswers(button.dataset.probe, {}));
  });
}

drawPlots();
loadDataTables().then((DataTable) => {
  initTables(DataTable);
  wireDrillDown();
  document.body.dataset.ready = "1";
});
