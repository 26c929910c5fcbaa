//! The raw-SQL limit of the OData benchmark (`bench/odata.sh`): the exact SQL
//! Gatehouse generates for the four reference queries, executed on the same
//! SQLite file through the same read threads (`Db::connect`, then its plain
//! SQLite connections on their threads, as the OData service reads) by 16
//! concurrent tasks on 2 runtime threads, with no HTTP and no JSON. Every row
//! is stepped through and each column read; encoding it is not part of the
//! limit.
//!
//! With `--json`, each page is also written as the response body's JSON by
//! Gatehouse's own row encoder ([`Layout`]), still without HTTP: the most an
//! HTTP server could answer with that encoder on these cores.
//!
//! `cargo run --release --example odata_raw -- <items.db> [seconds=10] [page_size=1000] [only=q1,q3] [--json]`
//!
//! Prints the SQL and binds of each query (only that when `seconds` is 0),
//! then one line per query:
//! `<name> qps=<queries per second> rows=<rows read per page query> count=<count or ->`
//! (rows read include the probe row beyond the page when more rows remain).
//! For `$count=true` one query is the count and the page together, as one
//! request does.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use gatehouse::db::{bind_numbered, Db, Dialect, ReadError};
use gatehouse::odata::{
    count_query, page_query, parse_query, selected_properties, EdmType, EntitySet, Layout, Model,
    Page, PagePlan, Property, Sql,
};

/// The four reference queries of the peer's `scripts/bench.sh`, as sent in
/// the URL (`/Items?<query>`).
const QUERIES: [(&str, &str); 4] = [
    ("q1-default-page", ""),
    (
        "q2-filter-orderby-top200",
        "$filter=category%20eq%20'cat3'%20and%20price%20gt%2050&$orderby=price%20desc&$top=200",
    ),
    ("q3-count-top50", "$count=true&$top=50"),
    ("q4-skip90000-top100", "$skip=90000&$top=100"),
];

const TASKS: usize = 16;
const THREADS: usize = 2;

/// The `Items` set as `bench/odata.sh` declares it in configuration.
fn model() -> Model {
    Model::new().set(
        EntitySet::new("Items", "items", "ID")
            .property(Property::new("ID", EdmType::Int32).not_null())
            .property(Property::new("name", EdmType::String))
            .property(Property::new("category", EdmType::String))
            .property(Property::new("price", EdmType::Decimal))
            .property(Property::new("quantity", EdmType::Int32))
            .property(Property::new("created", EdmType::DateTimeOffset))
            .property(Property::new("active", EdmType::Boolean))
            .searchable(&["name"])
            .public(true),
    )
}

/// One request's statements: the count (when `$count=true`) and the page.
struct Plan {
    name: &'static str,
    count: Option<Sql>,
    page: Sql,
    /// Rows the page delivers; the statement asks for one more.
    size: u64,
    /// With `--json`: how each row is written into a body.
    json: Option<Layout>,
}

/// Runs one request: the count, then the page, every column of every row
/// read. Answers the rows read (the page, plus 1 when the probe row came)
/// and the count.
fn run_once(conn: &rusqlite::Connection, plan: &Plan) -> Result<(u64, Option<i64>), ReadError> {
    let mut total = None;
    if let Some(count) = &plan.count {
        let mut stmt = conn.prepare_cached(&count.text)?;
        bind_numbered(&mut stmt, &count.binds)?;
        let mut rows = stmt.raw_query();
        if let Some(row) = rows.next()? {
            total = Some(row.get::<_, i64>(0)?);
        }
    }
    let mut stmt = conn.prepare_cached(&plan.page.text)?;
    bind_numbered(&mut stmt, &plan.page.binds)?;
    let columns = stmt.column_count();
    let mut rows = stmt.raw_query();
    let mut n = 0u64;
    // As the service sizes a page's body.
    let mut body = Vec::with_capacity(256 + 64 * plan.size.min(1000) as usize);
    while let Some(row) = rows.next()? {
        // The probe row beyond the page only tells that more rows remain.
        if n == plan.size {
            n += 1;
            break;
        }
        match &plan.json {
            Some(layout) => {
                if n > 0 {
                    body.push(b',');
                }
                layout
                    .write_open(&mut body, row)
                    .map_err(|e| ReadError::Pool(e.message))?;
                body.push(b'}');
            }
            None => {
                for i in 0..columns {
                    std::hint::black_box(row.get_ref(i)?);
                }
            }
        }
        n += 1;
    }
    std::hint::black_box(body);
    Ok((n, total))
}

async fn run_on(db: &Db, plan: Arc<Plan>) -> Result<(u64, Option<i64>), ReadError> {
    let reader = db
        .sqlite_reader()
        .ok_or_else(|| ReadError::Pool("not a SQLite file".into()))?;
    reader.read(move |conn| run_once(conn, &plan)).await
}

async fn measure(db: &Db, plan: Arc<Plan>, seconds: f64) -> Result<f64, ReadError> {
    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let tasks: Vec<_> = (0..TASKS)
        .map(|_| {
            let (db, plan, stop, done) = (db.clone(), plan.clone(), stop.clone(), done.clone());
            tokio::spawn(async move {
                while !stop.load(Ordering::Relaxed) {
                    run_on(&db, plan.clone()).await?;
                    done.fetch_add(1, Ordering::Relaxed);
                }
                Ok::<(), ReadError>(())
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_secs_f64(seconds)).await;
    stop.store(true, Ordering::Relaxed);
    let counted = done.load(Ordering::Relaxed);
    let elapsed = started.elapsed().as_secs_f64();
    for t in tasks {
        t.await.expect("task panicked")?;
    }
    Ok(counted as f64 / elapsed)
}

fn main() {
    let (flags, args): (Vec<String>, Vec<String>) =
        std::env::args().skip(1).partition(|a| a.starts_with("--"));
    let json = flags.iter().any(|f| f == "--json");
    let Some(path) = args.first() else {
        eprintln!(
            "usage: odata_raw <items.db> [seconds=10] [page_size=1000] [only=q1,q3] [--json]"
        );
        std::process::exit(2);
    };
    let seconds: f64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(10.0);
    let page_size: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1000);
    let only: Option<Vec<String>> = args
        .get(3)
        .map(|s| s.split(',').map(str::to_owned).collect());

    let model = model();
    let set = &model.sets[0];
    let plans: Vec<Arc<Plan>> = QUERIES
        .iter()
        .filter(|(name, _)| {
            only.as_ref()
                .is_none_or(|o| o.iter().any(|x| name.starts_with(x.as_str())))
        })
        .map(|(name, qs)| {
            let query = parse_query(qs).expect("reference query parses");
            let plan = PagePlan::new(&query, page_size);
            let page = Page {
                offset: plan.offset,
                size: plan.rows,
            };
            let size = page.size;
            let page = page_query(&model, set, &query, page, Dialect::Sqlite).expect("page SQL");
            let count = query
                .count
                .then(|| count_query(&model, set, &query, Dialect::Sqlite).expect("count SQL"));
            let layout = json.then(|| {
                Layout::new(
                    selected_properties(set, query.select.as_ref()),
                    &set.key,
                    Vec::new(),
                    None,
                )
            });
            Arc::new(Plan {
                name,
                count,
                page,
                size,
                json: layout,
            })
        })
        .collect();

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(THREADS)
        .enable_all()
        .build()
        .expect("runtime");
    // The URL form and mode Gatehouse is configured with.
    let url = format!("sqlite://{path}?mode=rwc");
    let result: Result<(), String> = runtime.block_on(async {
        let db = Db::connect(&url).await.map_err(|e| e.to_string())?;
        let work = if json { "SQL and JSON" } else { "SQL" };
        println!("# {path}: {work}, {TASKS} tasks on {THREADS} threads, {seconds} s per query, page size {page_size}");
        for plan in &plans {
            if let Some(count) = &plan.count {
                println!("# {} count: {}  binds {:?}", plan.name, count.text, count.binds);
            }
            println!("# {} page:  {}  binds {:?}", plan.name, plan.page.text, plan.page.binds);
        }
        if seconds <= 0.0 {
            return Ok(());
        }
        for plan in &plans {
            let failed = |e: ReadError| e.to_string();
            let (rows, total) = run_on(&db, plan.clone()).await.map_err(failed)?;
            // A short warm-up so the page cache and statement caches are hot.
            measure(&db, plan.clone(), seconds.min(1.0))
                .await
                .map_err(failed)?;
            let qps = measure(&db, plan.clone(), seconds).await.map_err(failed)?;
            println!(
                "{} qps={qps:.1} rows={rows} count={}",
                plan.name,
                total.map_or("-".to_owned(), |t| t.to_string())
            );
        }
        Ok(())
    });
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}
