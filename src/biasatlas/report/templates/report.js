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
    // a point of a figure that names its answers (customdata: a JSON filter) narrows the probe's answers to it
    if (div.dataset.drillProbe) div.on("plotly_click", (event) => drillToPoint(div.dataset.drillProbe, event));
  });
}

function drillToPoint(probe, event) {
  const point = event && event.points && event.points[0];
  if (!point || typeof point.customdata !== "string" || !answerTables[probe]) return;
  let filters;
  try {
    filters = JSON.parse(point.customdata);
  } catch (error) {
    return;
  }
  filterAnswers(probe, filters);
  const box = document.getElementById("answers-" + probe);
  if (box) box.scrollIntoView();
}

// a column of numbers (or estimates such as "12.5 [3.1, 40.2] (8)", or "–") is right-aligned, text left
const NUMBER = /^\s*([−+-]?\d|–\s*$|$)/;
function alignNumbers(table) {
  const rows = table.tBodies.length ? Array.from(table.tBodies[0].rows) : [];
  const width = rows.length ? rows[0].cells.length : 0;
  for (let i = 0; i < width; i++) {
    const cells = rows.map((r) => r.cells[i]).filter(Boolean);
    if (!cells.some((c) => c.textContent.trim() && c.textContent.trim() !== "–")) continue;
    if (!cells.every((c) => NUMBER.test(c.textContent))) continue;
    cells.forEach((c) => c.classList.add("num"));
    const heads = table.tHead ? table.tHead.rows : [];
    const last = heads.length ? heads[heads.length - 1].cells[i] : null;
    if (last) last.classList.add("num");
  }
}

// a wide table gets a second scrollbar above it, kept in step with the one below; it follows the table's
// width as pages, filters and window sizes change, and hides while the table fits
function topScrollbars() {
  document.querySelectorAll("table.data, table.answers").forEach((table) => {
    // DataTables puts the table in a cell of its layout that scrolls sideways: the bar goes above that cell
    const box = table.closest(".dt-layout-cell") || table.parentElement;
    const bar = document.createElement("div");
    bar.className = "topscroll";
    const inner = document.createElement("div");
    bar.appendChild(inner);
    box.parentElement.insertBefore(bar, box);
    const fit = () => {
      inner.style.width = box.scrollWidth + "px";
      bar.style.display = box.scrollWidth > box.clientWidth + 1 ? "" : "none";
    };
    bar.addEventListener("scroll", () => { box.scrollLeft = bar.scrollLeft; });
    box.addEventListener("scroll", () => { bar.scrollLeft = box.scrollLeft; });
    if (typeof ResizeObserver !== "undefined") new ResizeObserver(fit).observe(table);
    window.addEventListener("resize", fit);
    fit();
  });
}

function initTables(DataTable) {
  document.querySelectorAll("table.data").forEach((table) => {
    alignNumbers(table);
    const rows = table.tBodies.length ? table.tBodies[0].rows.length : 0;
    new DataTable(table, {
      paging: rows > 25, pageLength: 25, searching: rows > 8, info: rows > 25, order: [], autoWidth: false,
    });
  });
  document.querySelectorAll("table.answers").forEach((table) => {
    const block = read(table.dataset.rows);
    // prompts and answers get room to wrap; the other columns stay narrow
    const columns = block.columns.map((title, i) => ({
      title, data: i, render: DataTable.render.text(),
      className: LONG_COLUMNS.includes(title) ? "long" : "",
    }));
    const dt = new DataTable(table, { data: block.rows, columns, deferRender: true, pageLength: 10, order: [],
      autoWidth: false });
    const entry = { dt, columns: block.columns, inputs: [], exact: {}, probe: table.dataset.probe };
    answerTables[table.dataset.probe] = entry;
    addColumnFilters(entry, table);
    dt.on("draw", () => showActiveFilter(entry));
    showActiveFilter(entry);
  });
}

const LONG_COLUMNS = ["Prompt", "Answer"];

// one search box per column, in a header row of its own: a filter searches its column only
function addColumnFilters(entry, table) {
  const row = document.createElement("tr");
  row.className = "column-filters";
  entry.columns.forEach((name, i) => {
    const cell = document.createElement("th");
    const input = document.createElement("input");
    input.type = "search";
    input.placeholder = "filter " + name;
    input.setAttribute("aria-label", "filter the column " + name);
    input.dataset.column = name;
    input.addEventListener("click", (event) => event.stopPropagation());  // no sorting by a click on the box
    input.addEventListener("keydown", (event) => event.stopPropagation());
    input.addEventListener("input", () => {
      delete entry.exact[i];
      entry.dt.column(i).search(input.value);
      entry.dt.draw();
    });
    cell.appendChild(input);
    row.appendChild(cell);
    entry.inputs.push(input);
  });
  table.tHead.appendChild(row);
}

// what filters the table now, in words, with a button that clears it
function showActiveFilter(entry) {
  const box = document.getElementById("answers-" + entry.probe);
  if (!box) return;
  const status = box.querySelector(".active-filter");
  const parts = [];
  entry.columns.forEach((name, i) => {
    const value = entry.inputs[i] ? entry.inputs[i].value : "";
    if (value) parts.push(name + (entry.exact[i] ? " = " : " contains ") + "\u201c" + value + "\u201d");
  });
  const global = entry.dt.search();
  if (global) parts.push("any column contains \u201c" + global + "\u201d");
  status.querySelector(".what").textContent = parts.length ? "Filtered: " + parts.join(", ") : "No filter: every answer";
  status.classList.toggle("on", parts.length > 0);
  status.querySelector("button").disabled = parts.length === 0;
}

const escapeRegex = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

function filterAnswers(probe, filters) {
  const entry = answerTables[probe];
  if (!entry) return;
  entry.dt.search("");
  entry.exact = {};
  entry.columns.forEach((_, i) => {
    entry.dt.column(i).search("");
    if (entry.inputs[i]) entry.inputs[i].value = "";
  });
  for (const [name, value] of Object.entries(filters)) {
    const i = entry.columns.indexOf(name);
    if (i >= 0 && value) {
      entry.dt.column(i).search("^" + escapeRegex(value) + "$", true, false);
      entry.exact[i] = true;
      if (entry.inputs[i]) entry.inputs[i].value = value;
    }
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
  topScrollbars();
  document.body.dataset.ready = "1";
});
