//! OpenUI5's OData V4 model (`sap.ui.model.odata.v4.ODataModel`, from npm:
//! `tests/ui5`, pinned) in headless chromium, on the same origin as
//! Gatehouse: a list with `$count`, a filter, a sorter, `$expand` and a
//! second page, and one entity — with the model's default settings (reads
//! bundled into `POST /odata/$batch`) and with batching off (`$direct`).
//! Both must read exactly the rows the data holds. A table grouped by UI5
//! (`$$aggregation` with groups and totals), a tree as UI5's tree table
//! reads it (`$$aggregation` with a hierarchy: the top level, a node
//! expanded and collapsed, a later page of a long level, a filtered tree),
//! and the tree table itself (`sap.ui.table.Table` with its
//! `ODataV4Hierarchy` plugin): what its rows show as a node is clicked
//! open and shut, the table scrolled and the tree filtered.
//!
//! The host is the reference host, in this process, with two public sets
//! over tables of the test's own and OpenUI5's sources served beside them.
//! OpenUI5 (the core, and the table's libraries: sap.ui.table,
//! sap.ui.unified, sap.m, sap.ui.layout) is installed by
//! `npm ci --prefix tests/ui5` (`.ci/run` does it);
//! without it, or without chromium, the test is skipped with a message, and
//! fails when `CI` is set.

mod common;
#[path = "browser/harness.rs"]
#[allow(dead_code)] // the screens' tests use the rest
mod harness;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use common::TestDb;
use gatehouse::db::Db;
use harness::{in_ci, tools, Browser, BrowserOptions, Js};
use rocket::fs::FileServer;
use rocket::response::content::RawHtml;
use serde_json::{json, Value};

/// Rows of `ui5_items`: (id, name, category, price).
fn items() -> Vec<(i64, String, i64, i64)> {
    (1..=25)
        .map(|id| (id, format!("item {id:02}"), id % 3 + 1, (id * 7) % 40))
        .collect()
}

const CATEGORIES: [(i64, &str); 3] = [(1, "tools"), (2, "books"), (3, "games")];

const SETS: &str = r#"
[odata.sets.Items]
table = "ui5_items"
public = true
navigation = { category = { target = "Categories", column = "category_id" } }

[odata.sets.Categories]
table = "ui5_categories"
public = true

[odata.sets.Org]
table = "ui5_org"
public = true
searchable = ["name"]
navigation = { manager = { target = "Org", column = "manager_id" } }
hierarchy = { qualifier = "OrgChart", parent = "manager" }
"#;

/// Rows of `ui5_org`: (id, name, manager). One chief with a long level of
/// 30 reports (ids 2–31), the first three with two reports each, and a
/// second root.
fn org() -> Vec<(i64, String, Option<i64>)> {
    let mut rows = vec![
        (1, "chief".to_owned(), None),
        (100, "other root".to_owned(), None),
    ];
    rows.extend((2..=31).map(|id| (id, format!("report {id:02}"), Some(1))));
    for lead in 2..=4 {
        rows.extend((0..2).map(|n| (40 + lead * 2 + n, format!("member {lead}-{n}"), Some(lead))));
    }
    rows
}

/// The page of a tree as UI5's tree table reads it (`$$aggregation` with a
/// hierarchy): the top level, the chief expanded, a later page of the long
/// level, the chief collapsed again, and a filtered tree (its top level);
/// left in
/// `window.ui5Result`.
const TREE_PAGE: &str = r#"<!doctype html>
<html><head><meta charset="utf-8"><title>OData V4 model, a tree</title>
<script id="sap-ui-bootstrap" src="/resources/sap-ui-core.js"
  data-sap-ui-async="true" data-sap-ui-compat-version="edge"></script>
<script>
sap.ui.require([
  "sap/ui/model/odata/v4/ODataModel", "sap/ui/model/Filter", "sap/ui/model/FilterOperator"
], function (ODataModel, Filter, FilterOperator) {
  var model = new ODataModel({ serviceUrl: "/odata/", operationMode: "Server", autoExpandSelect: true });
  var list = model.bindList("/Org", undefined, [], [], {
    $count: true, $select: "id,name",
    $$aggregation: { hierarchyQualifier: "OrgChart", expandTo: 1 }
  });
  var rows = function (contexts) {
    return contexts.map(function (c) {
      return { id: c.getProperty("id"), name: c.getProperty("name"),
        level: c.getProperty("@$ui5.node.level"), expanded: c.getProperty("@$ui5.node.isExpanded") };
    });
  };
  (async function () {
    var top = rows(await list.requestContexts(0, 10));
    var count = list.getHeaderContext().getProperty("$count");
    var chief = (await list.requestContexts(0, 10))[0];
    await chief.expand();
    var expanded = rows(await list.requestContexts(0, 10));
    var later = rows(await list.requestContexts(25, 10));
    chief.collapse();
    var collapsed = rows(await list.requestContexts(0, 10));
    list.filter(new Filter("name", FilterOperator.EQ, "member 3-1"));
    var filtered = rows(await list.requestContexts(0, 10));
    window.ui5Result = { top: top, count: count, expanded: expanded, later: later,
      collapsed: collapsed, filtered: filtered };
  })().catch(function (e) { window.ui5Result = { error: String(e && e.message || e) }; });
});
</script></head><body></body></html>"#;

/// The page of OpenUI5's tree table itself (`sap.ui.table.Table` with its
/// `ODataV4Hierarchy` plugin, ten rows shown): what its rows show at each
/// step — the top level, the chief expanded by a click on its tree icon, a
/// later page of the long level scrolled to, the chief collapsed by a
/// click, a filtered tree and its lead expanded — left in
/// `window.ui5Result`.
const TREE_TABLE_PAGE: &str = r#"<!doctype html>
<html><head><meta charset="utf-8"><title>OpenUI5's tree table</title>
<script id="sap-ui-bootstrap" src="/resources/sap-ui-core.js"
  data-sap-ui-async="true" data-sap-ui-compat-version="edge" data-sap-ui-libs="sap.ui.table"></script>
<script>
sap.ui.require([
  "sap/ui/model/odata/v4/ODataModel", "sap/ui/table/Table", "sap/ui/table/Column",
  "sap/ui/table/rowmodes/Fixed", "sap/ui/table/plugins/ODataV4Hierarchy",
  "sap/ui/core/Control", "sap/ui/model/Filter", "sap/ui/model/FilterOperator"
], function (ODataModel, Table, Column, Fixed, ODataV4Hierarchy, Control, Filter, FilterOperator) {
  var Cell = Control.extend("gatehouse.Cell", {
    metadata: { properties: { text: "string" } },
    renderer: { apiVersion: 2, render: function (rm, cell) {
      rm.openStart("span", cell).openEnd(); rm.text(cell.getText()); rm.close("span");
    } }
  });
  var model = new ODataModel({ serviceUrl: "/odata/", operationMode: "Server", autoExpandSelect: true });
  var table = new Table({
    rowMode: new Fixed({ rowCount: 10 }),
    dependents: [new ODataV4Hierarchy()],
    columns: [new Column({ label: new Cell({ text: "Name" }), template: new Cell({ text: "{name}" }) })]
  });
  table.setModel(model);
  // What each filled row shows: its text, and the level and expanded
  // state the table gives assistive technology.
  var shown = function () {
    return table.getRows().filter(function (row) { return !row.isEmpty(); }).map(function (row) {
      var dom = row.getDomRef() || document.createElement("tr");
      return { name: dom.textContent.trim(), level: Number(dom.getAttribute("aria-level")),
        expanded: dom.getAttribute("aria-expanded") };
    });
  };
  // A click with the mouse, as the table hears one (its `tap`).
  var click = function (index) {
    var icon = table.getRows()[index].getDomRef().querySelector(".sapUiTableTreeIcon");
    ["mousedown", "mouseup", "click"].forEach(function (type) {
      icon.dispatchEvent(new MouseEvent(type, { bubbles: true, cancelable: true, view: window, button: 0 }));
    });
  };
  // Waits until the rows shown differ from `before` and then hold still
  // for half a second (at most 20 s), and answers them.
  var next = function (before) {
    return new Promise(function (resolve) {
      var last = null, still = 0, started = Date.now();
      var poll = function () {
        var now = JSON.stringify(shown());
        still = now === last ? still + 1 : 0;
        last = now;
        if ((now !== JSON.stringify(before) && still >= 5) || Date.now() - started > 20000) {
          resolve(JSON.parse(now));
        } else {
          setTimeout(poll, 100);
        }
      };
      poll();
    });
  };
  (async function () {
    table.bindRows({ path: "/Org", parameters: { $count: true,
      $$aggregation: { hierarchyQualifier: "OrgChart", expandTo: 1 } } });
    table.placeAt(document.body);
    var top = await next([]);
    click(0);
    var expanded = await next(top);
    table.setFirstVisibleRow(25);
    var later = await next(expanded);
    table.setFirstVisibleRow(0);
    await next(later);
    click(0);
    var collapsed = await next(expanded);
    table.getBinding("rows").filter(new Filter("name", FilterOperator.EQ, "member 3-1"));
    var filtered = await next(collapsed);
    click(0);
    var opened = await next(filtered);
    window.ui5Result = { top: top, expanded: expanded, later: later, collapsed: collapsed,
      filtered: filtered, opened: opened };
  })().catch(function (e) { window.ui5Result = { error: String(e && e.stack || e) }; });
}, function (e) { window.ui5Result = { error: "loading: " + String(e && e.stack || e) }; });
</script></head><body></body></html>"#;

#[rocket::get("/ui5-tree-table")]
fn tree_table_page() -> RawHtml<&'static str> {
    RawHtml(TREE_TABLE_PAGE)
}

#[rocket::get("/ui5-tree")]
fn tree_page() -> RawHtml<&'static str> {
    RawHtml(TREE_PAGE)
}

/// The page that drives the model: reads as `?group=` says, then leaves
/// what it read (or the error) in `window.ui5Result`.
const PAGE: &str = r#"<!doctype html>
<html><head><meta charset="utf-8"><title>OData V4 model</title>
<script>performance.setResourceTimingBufferSize(100000);</script>
<script id="sap-ui-bootstrap" src="/resources/sap-ui-core.js"
  data-sap-ui-async="true" data-sap-ui-compat-version="edge"></script>
<script>
sap.ui.require([
  "sap/ui/model/odata/v4/ODataModel", "sap/ui/model/Filter",
  "sap/ui/model/FilterOperator", "sap/ui/model/Sorter"
], function (ODataModel, Filter, FilterOperator, Sorter) {
  var group = new URLSearchParams(location.search).get("group");
  var settings = { serviceUrl: "/odata/", operationMode: "Server" };
  if (group) { settings.groupId = group; }
  var model = new ODataModel(settings);
  var list = model.bindList("/Items", undefined, [new Sorter("price", true)],
    [new Filter("price", FilterOperator.GT, 20)],
    { $count: true, $select: "id,name,price", $expand: "category($select=name)" });
  var rows = function (contexts) { return contexts.map(function (c) { return c.getObject(); }); };
  (async function () {
    var first = rows(await list.requestContexts(0, 5));
    var second = rows(await list.requestContexts(5, 5));
    var entity = await model.bindContext("/Items(3)", undefined, { $expand: "category" }).requestObject();
    var batches = performance.getEntriesByType("resource")
      .filter(function (e) { return e.name.indexOf("$batch") >= 0; }).length;
    window.ui5Result = {
      count: list.getHeaderContext().getProperty("$count"),
      first: first, second: second, entity: entity, batches: batches
    };
  })().catch(function (e) { window.ui5Result = { error: String(e && e.message || e) }; });
});
</script></head><body></body></html>"#;

#[rocket::get("/ui5-check")]
fn page() -> RawHtml<&'static str> {
    RawHtml(PAGE)
}

/// The page of a table UI5 groups by category, with a sum of prices per
/// group and a grand total (`$$aggregation`, sent as `$apply`): it reads the
/// first level, expands the first category, reads again, and leaves both in
/// `window.ui5Result`.
const AGGREGATION_PAGE: &str = r#"<!doctype html>
<html><head><meta charset="utf-8"><title>OData V4 model, aggregated</title>
<script id="sap-ui-bootstrap" src="/resources/sap-ui-core.js"
  data-sap-ui-async="true" data-sap-ui-compat-version="edge"></script>
<script>
sap.ui.require(["sap/ui/model/odata/v4/ODataModel"], function (ODataModel) {
  var model = new ODataModel({ serviceUrl: "/odata/", operationMode: "Server" });
  var list = model.bindList("/Items", undefined, [], [], {
    $count: true,
    $$aggregation: {
      aggregate: { Total: { name: "price", with: "sum", grandTotal: true, subtotals: true } },
      group: { category_id: {}, name: {} },
      groupLevels: ["category_id"]
    }
  });
  var rows = function (contexts) {
    return contexts.map(function (c) {
      var o = c.getObject();
      return { level: o["@$ui5.node.level"], category_id: o.category_id, name: o.name,
        Total: o.Total };
    });
  };
  (async function () {
    var first = await list.requestContexts(0, 20);
    var level = rows(first);
    var count = list.getHeaderContext().getProperty("$count");
    var group = first.filter(function (c) { return c.getProperty("@$ui5.node.level") === 1; })[0];
    await group.expand();
    var expanded = rows(await list.requestContexts(0, 40));
    window.ui5Result = { level: level, count: count, expanded: expanded };
  })().catch(function (e) { window.ui5Result = { error: String(e && e.message || e) }; });
});
</script></head><body></body></html>"#;

#[rocket::get("/ui5-aggregation")]
fn aggregation_page() -> RawHtml<&'static str> {
    RawHtml(AGGREGATION_PAGE)
}

/// OpenUI5's sources, or `None` (after saying why) when the test is skipped.
fn ui5_sources() -> Option<PathBuf> {
    let dir = std::env::var_os("GATEHOUSE_UI5_DIR").map_or_else(
        || {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("tests/ui5/node_modules/@openui5/sap.ui.core/src")
        },
        PathBuf::from,
    );
    if dir.join("sap-ui-core.js").is_file() {
        return Some(dir);
    }
    let why = format!(
        "OpenUI5 is not installed at {} (run `npm ci --prefix tests/ui5`)",
        dir.display()
    );
    assert!(!in_ci(), "the OpenUI5 test cannot run under CI: {why}");
    eprintln!("skipping the OpenUI5 test: {why}");
    None
}

/// Creates and fills the test's tables.
async fn fill(db: &TestDb) {
    let db: Db = db.connect().await;
    for sql in [
        "CREATE TABLE ui5_categories (id INTEGER PRIMARY KEY, name VARCHAR(40) NOT NULL)",
        "CREATE TABLE ui5_items (id INTEGER PRIMARY KEY, name VARCHAR(40) NOT NULL, \
         category_id INTEGER REFERENCES ui5_categories (id), price INTEGER)",
        "CREATE TABLE ui5_org (id INTEGER PRIMARY KEY, name VARCHAR(40) NOT NULL, manager_id INTEGER)",
    ] {
        db.execute(db.query(sql)).await.expect(sql);
    }
    for (id, name) in CATEGORIES {
        let insert = "INSERT INTO ui5_categories (id, name) VALUES ($1, $2)";
        db.execute(db.query(insert).bind(id).bind(name))
            .await
            .expect("category");
    }
    for (id, name, category, price) in items() {
        let insert = "INSERT INTO ui5_items (id, name, category_id, price) VALUES ($1, $2, $3, $4)";
        db.execute(
            db.query(insert)
                .bind(id)
                .bind(name)
                .bind(category)
                .bind(price),
        )
        .await
        .expect("item");
    }
    for (id, name, manager) in org() {
        let insert = "INSERT INTO ui5_org (id, name, manager_id) VALUES ($1, $2, $3)";
        db.execute(db.query(insert).bind(id).bind(name).bind(manager))
            .await
            .expect("org member");
    }
    db.close().await;
}

/// The libraries OpenUI5's tree table needs beside the core, each from its
/// npm package.
const TABLE_LIBRARIES: [&str; 4] = ["sap.ui.table", "sap.ui.unified", "sap.m", "sap.ui.layout"];

/// The reference host with the test's sets, OpenUI5 under `/resources` and
/// the page, listening on a free port; answers its base URL.
async fn serve(db: &TestDb, ui5: PathBuf) -> (String, rocket::Shutdown) {
    let (figment, base) = common::served_figment(&db.url, SETS);
    // The core's sources, then the tree table's libraries beside them (a
    // file one folder lacks is looked for in the next).
    let libraries = ui5.join("../..");
    let mut rocket = gatehouse_host::rocket(figment).mount("/resources", FileServer::from(&ui5));
    for (rank, library) in (11..).zip(TABLE_LIBRARIES) {
        let sources = FileServer::from(libraries.join(library).join("src")).rank(rank);
        rocket = rocket.mount("/resources", sources);
    }
    let rocket = rocket
        .mount(
            "/",
            rocket::routes![page, aggregation_page, tree_page, tree_table_page],
        )
        .ignite()
        .await
        .expect("the host ignites");
    let shutdown = common::launch(rocket, &base, "/odata/").await;
    (base, shutdown)
}

/// A browser on the reference host over the test's filled tables, and the
/// host's shutdown handle; `None` when the test is skipped.
async fn open() -> Option<(TestDb, Browser, rocket::Shutdown)> {
    let (Some(tools), Some(ui5)) = (tools(), ui5_sources()) else {
        return None;
    };
    let db = TestDb::new().await;
    fill(&db).await;
    let (base, shutdown) = serve(&db, ui5).await;
    let browser = Browser::open_at(&tools, &base, BrowserOptions::new(Js::On)).await;
    Some((db, browser, shutdown))
}

/// What the page should read: the count, the two pages' ids and the
/// category names of the first page.
fn expected() -> (usize, Vec<i64>, Vec<i64>) {
    let mut matching: Vec<_> = items().into_iter().filter(|i| i.3 > 20).collect();
    // Price descending, then the key in the same direction (Gatehouse's
    // stable order).
    matching.sort_by_key(|i| std::cmp::Reverse((i.3, i.0)));
    let ids: Vec<i64> = matching.iter().map(|i| i.0).collect();
    (matching.len(), ids[..5].to_vec(), ids[5..10].to_vec())
}

/// Opens the page with `group` (none: the model's default) and waits for
/// what it read.
async fn read_with(browser: &Browser, group: Option<&str>) -> Value {
    let query = group.map_or(String::new(), |g| format!("?group={g}"));
    read_page(browser, &format!("/ui5-check{query}")).await
}

/// Opens `page` and waits for what it read.
async fn read_page(browser: &Browser, page: &str) -> Value {
    browser.goto(page).await;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let result = browser
            .eval("return window.ui5Result || null;", vec![])
            .await;
        if !result.is_null() {
            return result;
        }
        assert!(
            Instant::now() < deadline,
            "the OData V4 model read nothing in 60 s"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn ids(rows: &Value) -> Vec<i64> {
    rows.as_array()
        .expect("rows")
        .iter()
        .map(|row| match &row["id"] {
            Value::String(s) => s.parse().expect("an id"),
            other => other.as_i64().expect("an id"),
        })
        .collect()
}

#[tokio::test]
async fn the_odata_v4_model_reads_with_and_without_batching() {
    let Some((_db, browser, shutdown)) = open().await else {
        return;
    };
    let (count, first, second) = expected();
    for group in [None, Some("$direct")] {
        let read = read_with(&browser, group).await;
        assert!(read.get("error").is_none(), "{group:?}: {read}");
        let counted = match &read["count"] {
            Value::String(s) => s.parse().expect("a count"),
            other => other.as_u64().expect("a count") as usize,
        };
        assert_eq!(counted, count, "{group:?}: {read}");
        assert_eq!(ids(&read["first"]), first, "{group:?}: {read}");
        assert_eq!(ids(&read["second"]), second, "{group:?}: {read}");
        for row in read["first"].as_array().expect("rows") {
            let id = ids(&json!([row]))[0];
            let category = CATEGORIES[usize::try_from(id % 3).expect("small")].1;
            assert_eq!(row["category"]["name"], json!(category), "{group:?}: {row}");
        }
        assert_eq!(
            read["entity"]["name"],
            json!("item 03"),
            "{group:?}: {read}"
        );
        assert_eq!(
            read["entity"]["category"]["name"],
            json!("tools"),
            "{group:?}"
        );
        let batches = read["batches"].as_u64().expect("a number");
        match group {
            None => assert!(batches > 0, "the default settings sent no $batch: {read}"),
            Some(_) => assert_eq!(batches, 0, "$direct sent a $batch: {read}"),
        }
    }
    drop(browser);
    shutdown.notify();
}

fn number(v: &Value) -> f64 {
    match v {
        Value::String(s) => s.parse().expect("a number"),
        other => other.as_f64().expect("a number"),
    }
}

#[tokio::test]
async fn a_table_grouped_by_ui5_shows_the_groups_sums_and_grand_total() {
    let Some((_db, browser, shutdown)) = open().await else {
        return;
    };
    let read = read_page(&browser, "/ui5-aggregation").await;
    assert!(read.get("error").is_none(), "{read}");
    let items = items();
    let total: i64 = items.iter().map(|i| i.3).sum();
    let level = read["level"].as_array().expect("rows");
    // The grand total first, then one row per category in order.
    assert_eq!(level.len(), 1 + CATEGORIES.len(), "{read}");
    assert_eq!(level[0]["level"], json!(0), "{read}");
    assert_eq!(number(&level[0]["Total"]), total as f64, "{read}");
    for (row, (category, _)) in level[1..].iter().zip(CATEGORIES) {
        let sum: i64 = items.iter().filter(|i| i.2 == category).map(|i| i.3).sum();
        assert_eq!(row["level"], json!(1), "{row}");
        assert_eq!(number(&row["category_id"]), category as f64, "{row}");
        assert_eq!(number(&row["Total"]), sum as f64, "{row}");
    }
    // $count is the number of leaves: distinct (category, name).
    assert_eq!(number(&read["count"]), items.len() as f64, "{read}");
    // The first category expanded: its items, by name, under it.
    let expanded = read["expanded"].as_array().expect("rows");
    let mut members: Vec<&(i64, String, i64, i64)> =
        items.iter().filter(|i| i.2 == CATEGORIES[0].0).collect();
    members.sort_by(|a, b| a.1.cmp(&b.1));
    assert_eq!(expanded.len(), level.len() + members.len(), "{read}");
    for (row, item) in expanded[2..].iter().zip(&members) {
        assert_eq!(row["level"], json!(2), "{row}");
        assert_eq!(row["name"], json!(item.1), "{row}");
        assert_eq!(number(&row["Total"]), item.3 as f64, "{row}");
    }
    assert_eq!(expanded[2 + members.len()]["level"], json!(1), "{read}");
    drop(browser);
    shutdown.notify();
}

/// `(id, level, expanded)` of each row read.
fn tree_rows(rows: &Value) -> Vec<(i64, i64, Value)> {
    rows.as_array()
        .expect("rows")
        .iter()
        .map(|r| {
            let id = match &r["id"] {
                Value::String(s) => s.parse().expect("an id"),
                other => other.as_i64().expect("an id"),
            };
            (
                id,
                r["level"].as_i64().expect("a level"),
                r["expanded"].clone(),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_tree_read_as_ui5s_tree_table_reads_it_expands_collapses_pages_and_filters() {
    let Some((_db, browser, shutdown)) = open().await else {
        return;
    };
    let read = read_page(&browser, "/ui5-tree").await;
    assert!(read.get("error").is_none(), "{read}");
    // The top level: both roots, the chief collapsed, the other a leaf.
    let top = vec![(1, 1, json!(false)), (100, 1, Value::Null)];
    assert_eq!(tree_rows(&read["top"]), top, "{read}");
    assert_eq!(number(&read["count"]), org().len() as f64, "{read}");
    // The chief expanded: its 30 reports under it, in key order.
    let expanded = tree_rows(&read["expanded"]);
    assert_eq!(expanded[0], (1, 1, json!(true)), "{read}");
    let reports: Vec<i64> = expanded[1..].iter().map(|r| r.0).collect();
    assert_eq!(reports, (2..=10).collect::<Vec<_>>(), "{read}");
    assert_eq!(
        expanded[1],
        (2, 2, json!(false)),
        "a lead with reports, collapsed: {read}"
    );
    assert_eq!(expanded[9], (10, 2, Value::Null), "a leaf: {read}");
    // Paging down the long level: rows 25 on (reports 26–31), then the
    // other root.
    let later = tree_rows(&read["later"]);
    let ids: Vec<i64> = later.iter().map(|r| r.0).collect();
    assert_eq!(ids, vec![26, 27, 28, 29, 30, 31, 100], "{read}");
    // Collapsed again: the top level.
    assert_eq!(tree_rows(&read["collapsed"]), top, "{read}");
    // Filtered: the top of the tree that leads to the match.
    assert_eq!(
        tree_rows(&read["filtered"]),
        vec![(1, 1, json!(false))],
        "{read}"
    );
    drop(browser);
    shutdown.notify();
}

/// `(name, level, expanded)` of each row a tree table shows.
fn table_rows(rows: &Value) -> Vec<(String, i64, Value)> {
    rows.as_array()
        .expect("rows")
        .iter()
        .map(|r| {
            let name = r["name"].as_str().expect("a name").to_owned();
            (
                name,
                r["level"].as_i64().expect("a level"),
                r["expanded"].clone(),
            )
        })
        .collect()
}

#[tokio::test]
async fn openui5s_tree_table_shows_expands_scrolls_collapses_and_filters_the_tree() {
    let Some((_db, browser, shutdown)) = open().await else {
        return;
    };
    let read = read_page(&browser, "/ui5-tree-table").await;
    assert!(read.get("error").is_none(), "{read}");
    let row = |name: &str, level, expanded: Value| (name.to_owned(), level, expanded);
    let (closed, open, leaf) = (json!("false"), json!("true"), Value::Null);
    // The top level: both roots, the chief collapsed, the other a leaf.
    let top = vec![
        row("chief", 1, closed.clone()),
        row("other root", 1, leaf.clone()),
    ];
    assert_eq!(table_rows(&read["top"]), top, "{read}");
    // A click on the chief's tree icon: its reports under it, in key order.
    let mut expanded = vec![row("chief", 1, open.clone())];
    expanded.extend((2..=4).map(|n| row(&format!("report {n:02}"), 2, closed.clone())));
    expanded.extend((5..=10).map(|n| row(&format!("report {n:02}"), 2, leaf.clone())));
    assert_eq!(table_rows(&read["expanded"]), expanded, "{read}");
    // Scrolled down the long level as far as it goes (row 25 asked, the
    // last ten of 32 rows shown): reports 23–31, then the other root.
    let mut later: Vec<_> = (23..=31)
        .map(|n| row(&format!("report {n:02}"), 2, leaf.clone()))
        .collect();
    later.push(row("other root", 1, leaf.clone()));
    assert_eq!(table_rows(&read["later"]), later, "{read}");
    // A second click collapses the chief: the top level again.
    assert_eq!(table_rows(&read["collapsed"]), top, "{read}");
    // Filtered: the tree that leads to the match, and its path opened.
    assert_eq!(
        table_rows(&read["filtered"]),
        vec![row("chief", 1, closed.clone())],
        "{read}"
    );
    assert_eq!(
        table_rows(&read["opened"]),
        vec![
            row("chief", 1, open.clone()),
            row("report 03", 2, closed.clone())
        ],
        "{read}"
    );
    drop(browser);
    shutdown.notify();
}
